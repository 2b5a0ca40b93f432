//! The embedded PTX holds every entry point the host launches.

use host::merge::MergeVariant;
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
fn ptx_contains_every_merge_entry_point_of_the_coarsening_sweep() {
    let entries = ptx_build::entry_points(host::gpu::PTX);
    let mut sweep = 0;
    for variant in MergeVariant::BOOK {
        for (dtype, _) in MergeVariant::KEY_TYPES {
            let factors = variant.coarsenings(dtype);
            assert!(factors.contains(&variant.default_coarsening()), "{variant} {dtype}: {factors:?}");
            for &factor in factors {
                let name = variant.entry_point_with_coarsening(dtype, factor).unwrap();
                assert!(entries.contains(&name.as_str()), "{name} missing from {entries:?}");
                sweep += usize::from(factor != variant.default_coarsening());
            }
        }
    }
    // Basic: 4 other factors for i32 and f64; tiled: 4 for i32, 3 for f64 (no 16).
    assert_eq!(sweep, 15);
    // Every merge entry point in the PTX is one the host launches.
    let launched: Vec<String> = host::kernels::entry_points().into_iter().map(|(name, _)| name).collect();
    for entry in entries.iter().filter(|e| e.starts_with("merge_")) {
        assert!(
            launched.iter().any(|l| l == entry),
            "{entry} is in the PTX but not in kernels::entry_points"
        );
    }
    // Merge path: a partition per key type, the sweep's 14 shapes for i32 and f64, the
    // default for the other three.
    assert_eq!(launched.iter().filter(|l| l.starts_with("merge_path_")).count(), 5 + 2 * 14 + 3);
    assert_eq!(launched.iter().filter(|l| l.starts_with("merge_")).count(), 15 + 15 + 36);
}

#[test]
fn ptx_contains_every_merge_path_shape() {
    let entries = ptx_build::entry_points(host::gpu::PTX);
    for (dtype, _) in MergeVariant::KEY_TYPES {
        let partition = host::merge::path::partition_entry_point(dtype);
        assert!(entries.contains(&partition.as_str()), "{partition} missing");
        let shapes = host::merge::path::shapes(dtype);
        assert!(shapes.contains(&host::merge::path::default_shape(dtype)), "{dtype}: {shapes:?}");
        for &shape in shapes {
            let name = host::merge::path::entry_point(shape, dtype).unwrap();
            assert!(entries.contains(&name.as_str()), "{name} missing from {entries:?}");
        }
    }
}

#[test]
fn ptx_contains_the_test_only_trap_kernel() {
    let entries = ptx_build::entry_points(host::gpu::PTX);
    assert!(entries.contains(&gpu_kernels::testing::TRAP_ENTRY_POINT), "{entries:?}");
}

#[test]
fn ptx_targets_the_architecture_it_was_built_for() {
    let target = format!(".target {}", host::gpu::PTX_ARCH);
    assert!(host::gpu::PTX.lines().any(|l| l.trim() == target), "no `{target}` line");
    assert!(!host::gpu::PTX.contains(".local"), "a kernel spills to local memory");
}
