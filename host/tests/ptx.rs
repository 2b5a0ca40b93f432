//! Both embedded builds of the PTX (portable and Hopper) hold every entry point the host
//! launches.

use host::Precision;
use host::merge::MergeVariant;
use host::stencil::StencilVariant;

/// The entry points of the portable build, after checking that the Hopper build declares the
/// same ones: what holds for the first then holds for both.
fn entries() -> Vec<&'static str> {
    let portable = ptx_build::entry_points(host::gpu::PTX);
    assert_eq!(
        ptx_build::entry_points(host::gpu::PTX_HOPPER),
        portable,
        "the two builds' entry points differ"
    );
    portable
}

#[test]
fn ptx_contains_all_eight_stencil_entry_points() {
    let entries = entries();
    for variant in StencilVariant::ALL {
        for precision in Precision::ALL {
            let name = variant.entry_point(precision);
            assert!(entries.contains(&name.as_str()), "{name} missing from {entries:?}");
        }
    }
}

#[test]
fn ptx_contains_every_tile_of_the_tiling_sweep() {
    let entries = entries();
    for variant in StencilVariant::ALL {
        for &tile in variant.tiles() {
            for precision in Precision::ALL {
                let name = variant.entry_point_with_tile(precision, tile).unwrap();
                assert!(entries.contains(&name.as_str()), "{name} missing from {entries:?}");
            }
        }
    }
}

#[test]
fn ptx_contains_every_merge_entry_point_of_the_coarsening_sweep() {
    let entries = entries();
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
    // Merge path: a sample kernel and a partition per key type, the sweep's 15 one-tile and 5
    // pipelined shapes for i32 and the 13 and 4 of them that fit in shared memory with f64, the
    // default for the other three, and for i64 the lopsided merges' shape (128x19) too.
    // Merge by key: 3 shapes for i32 and f64, the default for the other three, each with values
    // of 4, 8 and 16 bytes.
    let by_key = launched.iter().filter(|l| l.starts_with("merge_path_by_key_")).count();
    assert_eq!(by_key, (3 + 3 + 3) * 3);
    // Descending for the five key types and upper16 for u32: a partition, a merge and three
    // merges by key each.
    let ordered =
        launched.iter().filter(|l| l.starts_with("merge_path_desc_") || l.starts_with("merge_path_upper16_"));
    assert_eq!(ordered.count(), (5 + 1) * (1 + 1 + 3));
    let ascending = launched.iter().filter(|l| l.starts_with("merge_path_")).count() - by_key - 6 * 5;
    assert_eq!(ascending, 5 + 5 + 20 + 17 + 3 + 1);
    assert_eq!(launched.iter().filter(|l| l.starts_with("merge_path_pipelined_")).count(), 5 + 4);
    assert_eq!(launched.iter().filter(|l| l.starts_with("merge_")).count(), 15 + 15 + 51 + by_key + 6 * 5);
}

#[test]
fn ptx_contains_every_merge_path_shape() {
    let entries = entries();
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
    let entries = entries();
    assert!(entries.contains(&gpu_kernels::testing::TRAP_ENTRY_POINT), "{entries:?}");
}

#[test]
fn ptx_targets_the_architecture_it_was_built_for() {
    for (ptx, arch) in
        [(host::gpu::PTX, host::gpu::PTX_ARCH), (host::gpu::PTX_HOPPER, host::gpu::HOPPER_ARCH)]
    {
        let target = format!(".target {arch}");
        assert!(ptx.lines().any(|l| l.trim() == target), "no `{target}` line");
        assert!(!ptx.contains(".local"), "a kernel of the {arch} build spills to local memory");
    }
}

#[test]
fn only_the_hopper_build_uses_bulk_copies() {
    // PTX ISA 8.0 for `cp.async.bulk`; the portable build must load on older drivers and GPUs.
    assert!(host::gpu::PTX_HOPPER.lines().any(|l| l.trim() == ".version 8.0"));
    assert!(host::gpu::PTX_HOPPER.contains("cp.async.bulk.shared::cluster.global"));
    assert!(!host::gpu::PTX.contains("cp.async.bulk"), "the portable build has a Hopper instruction");
    assert!(!host::gpu::PTX.contains("mbarrier"), "the portable build has a Hopper instruction");
}

/// The entry point `name`'s body in `ptx`.
fn entry_body<'p>(ptx: &'p str, name: &str) -> &'p str {
    let start = ptx.find(&format!(".entry {name}(")).unwrap_or_else(|| panic!("no entry point {name}"));
    let rest = &ptx[start..];
    &rest[..rest.find("\n}").unwrap_or(rest.len())]
}

#[test]
fn only_the_hopper_build_gives_the_streaming_kernels_l2_eviction_priorities() {
    // `createpolicy` and `.L2::cache_hint` need sm_80; the portable build targets sm_70.
    for name in [
        "stencil7_streaming_v4_r1_a0_p1_f32",
        "stencil7_streaming_v2_r2_a0_p1_f64",
        "stencil_box27_v4_r1_f32",
    ] {
        let hopper = entry_body(host::gpu::PTX_HOPPER, name);
        for priority in ["evict_last", "evict_normal", "evict_first"] {
            assert!(
                hopper.contains(&format!("createpolicy.fractional.L2::{priority}")),
                "{name}: {priority}"
            );
        }
        assert!(
            hopper.contains("ld.global.L2::cache_hint") && hopper.contains("st.global.L2::cache_hint"),
            "{name}"
        );
        assert!(
            !entry_body(host::gpu::PTX, name).contains("cache_hint"),
            "{name}: the portable build has a hint"
        );
    }
    assert!(!host::gpu::PTX.contains("createpolicy"), "the portable build has an sm_80 instruction");
}
