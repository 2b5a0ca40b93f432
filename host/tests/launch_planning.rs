//! Launch planning never panics: the pure functions that turn a caller's launch shape, grid and
//! sizes into a launch return a launch or an error for any input, never a panic (these tests
//! build with overflow checks, so an arithmetic overflow is a panic here). Grids are those
//! `grid_of` accepts, up to 2^36 points (more than any GPU holds twice); shapes and sizes are
//! anything, from small to the type's largest.

use cudarc::driver::LaunchConfig;
use gpu_kernels::merge::tiles::{MAX_SHARED_BYTES, PathShape};
use gpu_kernels::stencil::Grid3;
use gpu_kernels::stencil::tiles::{
    StreamAxis, StreamingKernel, StreamingShape, TemporalKernel, TemporalShape,
};
use host::Precision;
use host::gpu::MAX_BLOCK_THREADS;
use host::merge::{MergePlan, MergeVariant, path, set_ops};
use host::stencil::{MAX_DIM, MIN_DIM, StencilShape, high_order, streaming, temporal};
use proptest::prelude::*;

/// Most points of a grid drawn here.
const MOST_POINTS: u64 = 1 << 36;

/// A `usize`: small, near a power of two, or any.
fn size() -> impl Strategy<Value = usize> {
    prop_oneof![0usize..=40, (0u32..64).prop_map(|k| 1usize << k), any::<usize>()]
}

/// A `u32`: small, near a power of two, or any.
fn count() -> impl Strategy<Value = u32> {
    prop_oneof![0u32..=40, (0u32..32).prop_map(|k| 1u32 << k), any::<u32>()]
}

/// An extent of at most `most`: small, medium or any.
fn extent(most: u64) -> impl Strategy<Value = u32> {
    let most = most.min(MAX_DIM as u64) as u32;
    prop_oneof![MIN_DIM as u32..=most.min(40), MIN_DIM as u32..=most.min(1100), MIN_DIM as u32..=most]
}

/// A grid of up to [`MOST_POINTS`] points: each extent drawn within what the ones before it
/// leave, in any order.
fn grid() -> impl Strategy<Value = Grid3> {
    let room = |used: u64| MOST_POINTS / used / (MIN_DIM as u64);
    extent(room(MIN_DIM as u64))
        .prop_flat_map(move |a| (Just(a), extent(room(u64::from(a)))))
        .prop_flat_map(|(a, b)| {
            let used = u64::from(a) * u64::from(b);
            (Just(a), Just(b), extent(MOST_POINTS / used), 0..3usize)
        })
        .prop_map(|(a, b, c, turn)| {
            let mut extents = [a, b, c];
            extents.rotate_left(turn);
            let [nx, ny, nz] = extents;
            Grid3 { nx, ny, nz }
        })
}

fn precision() -> impl Strategy<Value = Precision> {
    prop_oneof![Just(Precision::F32), Just(Precision::F64)]
}

fn streaming_shape() -> impl Strategy<Value = StreamingShape> {
    let kernel = (size(), size(), size(), size())
        .prop_map(|(vector, rows, ahead, prefetch)| StreamingKernel { vector, rows, ahead, prefetch });
    let axis = prop_oneof![Just(StreamAxis::Z), Just(StreamAxis::Y)];
    (kernel, count(), count(), count(), axis, count()).prop_map(|(kernel, bx, by, planes, axis, cluster)| {
        StreamingShape { kernel, block: [bx, by], planes, axis, cluster }
    })
}

/// A shape with one of the built streaming kernels, as the library's callers can launch.
fn built_streaming_shape() -> impl Strategy<Value = (StreamingShape, Precision)> {
    (streaming_shape(), precision(), any::<prop::sample::Index>()).prop_map(|(shape, precision, pick)| {
        let built = streaming::kernels(precision);
        (StreamingShape { kernel: built[pick.index(built.len())], ..shape }, precision)
    })
}

/// A launch CUDA takes: 1 to 1024 threads a block (at most 64 along z), 1 to 2^31 − 1 blocks
/// along x and 65 535 along y and z.
fn launchable(config: &LaunchConfig) -> Result<(), TestCaseError> {
    let (gx, gy, gz) = config.grid_dim;
    let (bx, by, bz) = config.block_dim;
    prop_assert!(
        (1..=i32::MAX as u32).contains(&gx) && (1..=65_535).contains(&gy) && (1..=65_535).contains(&gz)
    );
    prop_assert!(bx >= 1 && by >= 1 && (1..=64).contains(&bz));
    prop_assert!(u64::from(bx) * u64::from(by) * u64::from(bz) <= u64::from(MAX_BLOCK_THREADS));
    Ok(())
}

/// A range of planes, possibly empty or past the grid.
fn planes_of(grid: Grid3) -> impl Strategy<Value = std::ops::Range<u32>> {
    (0..=grid.nz.saturating_add(1), 0..=grid.nz.saturating_add(1)).prop_map(|(a, b)| a..b)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn streaming_launches_plan_or_refuse(
        (grid, z) in grid().prop_flat_map(|g| (Just(g), planes_of(g))),
        shape in streaming_shape(),
        precision in precision(),
        resident in size(),
        multiprocessors in count(),
        kept_bytes in size(),
    ) {
        let _ = streaming::entry_point(shape, precision);
        let fitted = streaming::fit(shape, grid, precision);
        let _ = streaming::narrow(shape, grid, precision);
        let _ = streaming::fill(shape, grid, multiprocessors);
        let _ = streaming::cluster_size(shape, grid, z.clone());
        if let Ok(config) = streaming::launch_config(fitted, grid, resident) {
            launchable(&config)?;
        }
        if let Ok(launch) = streaming::launch(fitted, grid, z, resident) {
            launchable(&launch.config)?;
            for bytes in [4, 8] {
                let _ = streaming::kept_planes(&launch, fitted, grid, bytes, kept_bytes);
            }
        }
    }

    /// As the library launches a caller's shape (`StencilProblem::run_streaming`): fitted to the
    /// rows, its entry point, then its launch.
    #[test]
    fn built_streaming_kernels_plan_or_refuse(
        (grid, z) in grid().prop_flat_map(|g| (Just(g), planes_of(g))),
        (shape, precision) in built_streaming_shape(),
        resident in size(),
        multiprocessors in count(),
    ) {
        let shape = streaming::fill(streaming::narrow(shape, grid, precision), grid, multiprocessors);
        let shape = streaming::fit(shape, grid, precision);
        prop_assert!(streaming::entry_point(shape, precision).is_ok(), "{:?} is built", shape.kernel);
        if let Ok(launch) = streaming::launch(shape, grid, z, resident) {
            launchable(&launch.config)?;
        }
    }

    #[test]
    fn high_order_launches_plan_or_refuse(
        grid in grid(),
        launch in streaming_shape(),
        precision in precision(),
        order in size(),
        resident in size(),
    ) {
        for shape in StencilShape::ALL {
            let _ = high_order::entry_point(shape, launch, precision);
            for tensor_copies in [false, true] {
                let fitted = high_order::fit(shape, launch, grid, precision, tensor_copies);
                if let Ok(config) = streaming::launch_config(fitted, grid, resident) {
                    launchable(&config)?;
                }
            }
            let _ = high_order::halo_ring(shape.radius(), launch);
            let _ = high_order::tensor_ring(shape.radius(), launch);
        }
        if let Ok((_, config)) = high_order::star_tiled_launch(order, grid, precision) {
            launchable(&config)?;
        }
    }

    #[test]
    fn temporal_launches_plan_or_refuse(
        grid in grid(),
        (depth, rows, warps) in (size(), size(), count()),
        precision in precision(),
        (runs, resident, steps) in (count(), size(), size()),
        fuse in prop::option::of(size()),
    ) {
        let shape = TemporalShape { kernel: TemporalKernel { depth, rows }, warps };
        let _ = temporal::entry_point(shape, precision);
        let _ = temporal::shape_with_depth(depth, precision);
        let _ = temporal::runs(shape, grid, resident);
        let _ = temporal::shared_bytes(shape, precision);
        if let Ok(config) = temporal::launch_config(shape, grid, precision, runs) {
            launchable(&config)?;
        }
        let _ = temporal::schedule(steps, fuse, precision);
    }

    #[test]
    fn merge_launches_plan_or_refuse(
        (block_threads, items, pipelined) in (size(), size(), any::<bool>()),
        (m, n, resident) in (size(), size(), size()),
        key_bytes in prop_oneof![Just(4usize), Just(8), size()],
        (outputs_per_thread, threads) in (size(), size()),
    ) {
        let shape = PathShape { block_threads, items, pipelined };
        for dtype in ["i32", "u32", "i64", "f32", "f64"] {
            let _ = path::entry_point(shape, dtype);
            let _ = path::default_shape_for(dtype, m, n, "asc");
        }
        if let Some(config) = path::plan(shape, m, n, key_bytes, resident).ok().and_then(|p| p.launch_config()) {
            launchable(&config)?;
            prop_assert!(config.shared_mem_bytes as usize <= MAX_SHARED_BYTES);
        }
        if let Ok(Some(config)) = set_ops::launch_config(shape, m, n, key_bytes) {
            launchable(&config)?;
            prop_assert!(config.shared_mem_bytes as usize <= MAX_SHARED_BYTES);
        }
        for variant in [MergeVariant::Basic, MergeVariant::Tiled, MergeVariant::Circular, MergeVariant::Path] {
            let _ = MergePlan::new(variant, m, n, outputs_per_thread, threads);
        }
    }
}

/// The grids of the GPU tests and the benchmarks, nz × ny × nx.
const GRIDS: [(u32, u32, u32); 11] = [
    (3, 3, 3),
    (8, 8, 8),
    (29, 31, 33),
    (64, 64, 64),
    (67, 97, 130),
    (1000, 5, 5),
    (40, 19, 21),
    (34, 66, 70),
    (5, 5, 1000),
    (512, 512, 512),
    (256, 512, 1024),
];

/// What the library and the benchmarks launch plans on every grid they run: the checks above
/// refuse none of it.
#[test]
fn every_built_shape_plans_on_the_tested_grids() {
    for (nz, ny, nx) in GRIDS {
        let grid = Grid3 { nx, ny, nz };
        for precision in [Precision::F32, Precision::F64] {
            for &shape in streaming::sweep(precision) {
                let shape = streaming::fit(shape, grid, precision);
                streaming::entry_point(shape, precision).unwrap();
                let launch = streaming::launch(shape, grid, 0..nz, 264).unwrap();
                launchable(&launch.config).unwrap();
            }
            for (stencil, card) in high_order::tables() {
                for launch in high_order::sweep(stencil, precision, card).unwrap() {
                    for tensor_copies in [false, true] {
                        let (_, fitted) =
                            high_order::shape_launch(stencil, launch, grid, precision, 132, tensor_copies)
                                .unwrap();
                        launchable(&streaming::launch_config(fitted, grid, 264).unwrap()).unwrap();
                    }
                }
            }
            for &shape in temporal::sweep(precision) {
                let runs = temporal::runs(shape, grid, 264).unwrap();
                launchable(&temporal::launch_config(shape, grid, precision, runs).unwrap()).unwrap();
            }
        }
    }
}
