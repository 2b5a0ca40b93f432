//! The embedded PTX holds every entry point the host launches.

use host::stencil::StencilVariant;

#[test]
fn ptx_contains_all_eight_stencil_entry_points() {
    let entries = ptx_build::entry_points(host::gpu::PTX);
    for variant in StencilVariant::ALL {
        for dtype in ["f32", "f64"] {
            let name = variant.entry_point(dtype);
            assert!(entries.contains(&name.as_str()), "{name} missing from {entries:?}");
        }
    }
}

#[test]
fn ptx_contains_every_tile_of_the_tiling_sweep() {
    let entries = ptx_build::entry_points(host::gpu::PTX);
    for variant in StencilVariant::ALL {
        for &tile in variant.tiles() {
            for dtype in ["f32", "f64"] {
                let name = variant.entry_point_with_tile(dtype, tile).unwrap();
                assert!(entries.contains(&name.as_str()), "{name} missing from {entries:?}");
            }
        }
    }
}

#[test]
fn ptx_targets_the_architecture_it_was_built_for() {
    let target = format!(".target {}", host::gpu::PTX_ARCH);
    assert!(host::gpu::PTX.lines().any(|l| l.trim() == target), "no `{target}` line");
    assert!(!host::gpu::PTX.contains(".local"), "a kernel spills to local memory");
}
