//! Every stencil variant × element type against the CPU reference on the GPU. Ignored
//! without a GPU: run with `cargo test -- --include-ignored` (or `.gpu/run tests`).

mod common;

use common::{gpu, gpu_test_per_dtype};
use gpu_kernels::stencil::Coeffs;
use host::stencil::{self, StencilVariant, reference_steps};
use host::verify::compare;
use host::{Element, Gpu, random};

/// Grids from the issue: tiny, one tile, sizes off the tile multiples, non-cubic, long x.
const SHAPES: [(usize, usize, usize); 6] =
    [(3, 3, 3), (8, 8, 8), (33, 31, 29), (64, 64, 64), (130, 97, 67), (5, 5, 1000)];

/// Random coefficients in [-1, 1), scaled so `Σ|c| ≤ 1` and many steps stay bounded.
fn random_coeffs<T: Element>(seed: u64) -> Coeffs<T> {
    let c = random::random_grid::<f64>((1, 1, 7), seed).unwrap();
    let total: f64 = c.iter().map(|v| v.abs()).sum();
    let c: Vec<T> = c.iter().map(|v| T::from_f64(v / total)).collect();
    Coeffs(c.try_into().unwrap())
}

fn check<T: Element>(
    gpu: &Gpu,
    variant: StencilVariant,
    shape: (usize, usize, usize),
    coeffs: Coeffs<T>,
    steps: usize,
) {
    let seed = random::fresh_seed();
    let input = random::random_grid::<T>(shape, seed).unwrap();
    let out = stencil::run(gpu, variant, input.view(), coeffs, steps).unwrap();
    let reference = reference_steps(input.view(), coeffs, steps);
    let c = compare(out.as_slice().unwrap(), reference.as_slice().unwrap());
    assert!(
        c.ok,
        "{variant} {} on {shape:?}, {steps} step(s), seed {seed}, coeffs {coeffs:?}: {c:?}",
        T::NAME
    );
}

fn every_shape<T: Element>() {
    let gpu = gpu();
    for variant in StencilVariant::ALL {
        for shape in SHAPES {
            check::<T>(&gpu, variant, shape, random_coeffs(random::fresh_seed()), 1);
        }
    }
}

gpu_test_per_dtype!(
    every_shape,
    every_variant_matches_the_reference_on_every_shape_f32,
    every_variant_matches_the_reference_on_every_shape_f64
);

fn ten_steps<T: Element>() {
    let gpu = gpu();
    for variant in StencilVariant::ALL {
        for shape in [(33, 31, 29), (64, 64, 64)] {
            check::<T>(&gpu, variant, shape, random_coeffs(random::fresh_seed()), 10);
        }
    }
}

gpu_test_per_dtype!(
    ten_steps,
    ten_steps_equal_ten_reference_steps_f32,
    ten_steps_equal_ten_reference_steps_f64
);

#[test]
#[ignore = "needs a CUDA GPU"]
fn laplacian_with_an_odd_number_of_steps() {
    let gpu = gpu();
    for variant in StencilVariant::ALL {
        check::<f64>(&gpu, variant, (130, 97, 67), stencil::laplacian(), 3);
        check::<f32>(&gpu, variant, (35, 34, 33), stencil::laplacian(), 1);
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn gpu_reports_its_name_and_capability() {
    let gpu = gpu();
    assert!(!gpu.info.name.is_empty());
    assert!(gpu.info.compute_capability.0 >= 7, "{:?}", gpu.info.compute_capability);
    assert!(gpu.info.total_memory > 0);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_run_before_output_and_zero_steps_are_errors() {
    let gpu = gpu();
    let input = random::random_grid::<f32>((4, 4, 4), 1).unwrap();
    let mut problem = stencil::StencilProblem::new(&gpu, input.view(), stencil::laplacian()).unwrap();
    assert!(problem.output().unwrap_err().to_string().contains("no stencil has run"));
    assert!(problem.run(StencilVariant::Basic, 0).unwrap_err().to_string().contains("at least 1"));
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn grids_larger_than_device_memory_are_a_clear_error() {
    let gpu = gpu();
    let (free, _) = gpu.memory().unwrap();
    // `free / 4` f64 elements are twice the free memory.
    let err = gpu.alloc::<f64>(free / 4).unwrap_err();
    assert!(matches!(err, host::Error::OutOfMemory(_)), "{err}");
    assert!(err.to_string().contains("free"), "{err}");
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn every_tile_of_the_tiling_sweep_matches_the_reference() {
    let gpu = gpu();
    for variant in StencilVariant::ALL {
        for &tile in variant.tiles() {
            for shape in [(33, 31, 29), (40, 17, 70)] {
                let seed = random::fresh_seed();
                let input = random::random_grid::<f64>(shape, seed).unwrap();
                let coeffs = random_coeffs(seed);
                let mut problem = stencil::StencilProblem::new(&gpu, input.view(), coeffs).unwrap();
                problem.run_with_tile(variant, tile, 2).unwrap();
                let out = problem.output().unwrap();
                let reference = reference_steps(input.view(), coeffs, 2);
                let c = compare(out.as_slice().unwrap(), reference.as_slice().unwrap());
                assert!(c.ok, "{variant} T = {tile} on {shape:?}, seed {seed}: {c:?}");
            }
        }
    }
}

/// Grids for the streaming kernel beyond [`SHAPES`]: odd `nx`, `nx` a multiple of 2 but not
/// of 4 or 8 (narrower vectors), a multiple of 8 with odd `ny`, long z, and long x thin y–z.
const STREAMING_SHAPES: [(usize, usize, usize); 6] =
    [(1000, 5, 5), (9, 7, 35), (6, 10, 42), (17, 19, 516), (7, 9, 1025), (70, 66, 36)];

fn streaming_shapes<T: Element>() {
    let gpu = gpu();
    for shape in STREAMING_SHAPES {
        check::<T>(&gpu, StencilVariant::Streaming, shape, random_coeffs(random::fresh_seed()), 1);
        check::<T>(&gpu, StencilVariant::Streaming, shape, random_coeffs(random::fresh_seed()), 10);
    }
}

gpu_test_per_dtype!(
    streaming_shapes,
    streaming_matches_the_reference_on_odd_and_unaligned_grids_f32,
    streaming_matches_the_reference_on_odd_and_unaligned_grids_f64
);

fn every_streaming_kernel<T: Element>() {
    use gpu_kernels::stencil::tiles::{StreamAxis, StreamingShape};
    use host::stencil::streaming;
    let gpu = gpu();
    // nx = 40 takes every vector width; the blocks and planes leave partial blocks on every
    // axis, and one plane per block has every block start and end at a boundary of the walk.
    // Every kernel walks along z and along y.
    for shape in [(21, 19, 40), (4, 3, 8)] {
        let seed = random::fresh_seed();
        let input = random::random_grid::<T>(shape, seed).unwrap();
        let coeffs = random_coeffs(seed);
        let reference = reference_steps(input.view(), coeffs, 3);
        let mut problem = stencil::StencilProblem::new(&gpu, input.view(), coeffs).unwrap();
        for &kernel in streaming::kernels(T::PRECISION) {
            let waves = gpu_kernels::stencil::tiles::IN_WAVES;
            for (block, planes) in
                [([32, 4], 1), ([8, 2], 5), ([64, 1], 64), ([32, 4], waves), ([8, 2], waves)]
            {
                for axis in [StreamAxis::Z, StreamAxis::Y] {
                    let s = StreamingShape { kernel, block, planes, axis, cluster: 1 };
                    problem.run_streaming(s, 3).unwrap();
                    let out = problem.output().unwrap();
                    let c = compare(out.as_slice().unwrap(), reference.as_slice().unwrap());
                    assert!(c.ok, "{} {} on {shape:?}, seed {seed}: {c:?}", streaming::Describe(s), T::NAME);
                }
            }
        }
    }
}

/// Runs of steps that keep planes in L2, every other step walking back through them: along z
/// (the default shape) and along y, on every grid of both sets, with all of L2 kept (on these
/// grids: every plane), a quarter, and 1 %; 2 and 5 steps end on a step each way.
fn back_and_forth<T: Element>() {
    use host::stencil::streaming;
    let gpu = gpu();
    for shape in SHAPES.into_iter().chain(STREAMING_SHAPES) {
        let seed = random::fresh_seed();
        let input = random::random_grid::<T>(shape, seed).unwrap();
        let coeffs = random_coeffs(seed);
        let mut problem = stencil::StencilProblem::new(&gpu, input.view(), coeffs).unwrap();
        let err = problem.set_kept_l2_percent(101).unwrap_err().to_string();
        assert!(err.contains("give 0 to 100"), "{err}");
        for percent in [100, 25, 1] {
            problem.set_kept_l2_percent(percent).unwrap();
            for steps in [2, 5] {
                let reference = reference_steps(input.view(), coeffs, steps);
                problem.run(StencilVariant::Streaming, steps).unwrap();
                let along_z = problem.output().unwrap();
                problem.run_streaming(streaming::along_y_shape(T::PRECISION), steps).unwrap();
                let along_y = problem.output().unwrap();
                for (axis, out) in [("z", along_z), ("y", along_y)] {
                    let c = compare(out.as_slice().unwrap(), reference.as_slice().unwrap());
                    let what = format!("along {axis}, {percent} % of L2 kept, {steps} steps {}", T::NAME);
                    assert!(c.ok, "{what} on {shape:?}, seed {seed}: {c:?}");
                }
            }
        }
    }
}

gpu_test_per_dtype!(
    back_and_forth,
    steps_walking_back_through_planes_kept_in_l2_match_the_reference_f32,
    steps_walking_back_through_planes_kept_in_l2_match_the_reference_f64
);

/// The shape along y (which `run` picks on grids of large x–y planes) on every grid of the
/// seven-point set and of the streaming set, 1 and 10 steps.
fn along_y_every_grid<T: Element>() {
    use host::stencil::streaming;
    let gpu = gpu();
    for shape in SHAPES.into_iter().chain(STREAMING_SHAPES) {
        let seed = random::fresh_seed();
        let input = random::random_grid::<T>(shape, seed).unwrap();
        let coeffs = random_coeffs(seed);
        let mut problem = stencil::StencilProblem::new(&gpu, input.view(), coeffs).unwrap();
        for steps in [1, 10] {
            let reference = reference_steps(input.view(), coeffs, steps);
            problem.run_streaming(streaming::along_y_shape(T::PRECISION), steps).unwrap();
            let out = problem.output().unwrap();
            let c = compare(out.as_slice().unwrap(), reference.as_slice().unwrap());
            assert!(c.ok, "along y, {steps} steps {} on {shape:?}, seed {seed}: {c:?}", T::NAME);
        }
    }
}

gpu_test_per_dtype!(
    along_y_every_grid,
    streaming_along_y_matches_the_reference_on_every_grid_f32,
    streaming_along_y_matches_the_reference_on_every_grid_f64
);

gpu_test_per_dtype!(
    every_streaming_kernel,
    every_streaming_kernel_matches_the_reference_f32,
    every_streaming_kernel_matches_the_reference_f64
);

/// Steps computed in windows of planes, each launch writing only its own (a distributed run's
/// sent planes first, then the others), equal the reference; the buffer's other planes are
/// poisoned, so a plane no window wrote shows.
fn windows_of_planes<T: Element>() {
    use gpu_kernels::stencil::tiles::{RUN_PLANES, StreamingShape};
    use host::stencil::streaming;
    let gpu = gpu();
    let along_y = StreamingShape { planes: RUN_PLANES, ..streaming::along_y_shape(T::PRECISION) };
    let cases = [
        ((37, 19, 40), vec![vec![0..4, 33..37], vec![4..33]]),
        ((9, 7, 35), vec![vec![3..6], vec![0..1], vec![1..3, 6..9]]),
    ];
    // Along z (the default shape, as a distributed run launches it) and along y.
    for (along, (shape, windows)) in
        [None, Some(along_y)].into_iter().flat_map(|a| cases.clone().map(|w| (a, w)))
    {
        let seed = random::fresh_seed();
        let input = random::random_grid::<T>(shape, seed).unwrap();
        let coeffs = random_coeffs(seed);
        let reference = reference_steps(input.view(), coeffs, 3);
        let mut problem = stencil::StencilProblem::new(&gpu, input.view(), coeffs).unwrap();
        problem.start_steps().unwrap();
        for _ in 0..3 {
            for planes in &windows {
                let launch = match along {
                    None => problem.step_launch_over(planes).unwrap(),
                    Some(shape) => problem.step_launch_over_with(shape, planes).unwrap(),
                };
                problem.step_part(&launch, gpu.stream()).unwrap();
            }
            problem.finish_step().unwrap();
        }
        let out = problem.output().unwrap();
        let c = compare(out.as_slice().unwrap(), reference.as_slice().unwrap());
        assert!(c.ok, "windows {windows:?} {} ({along:?}) on {shape:?}, seed {seed}: {c:?}", T::NAME);
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn steps_in_windows_of_planes_match_the_reference() {
    windows_of_planes::<f32>();
    windows_of_planes::<f64>();
}

/// Grids for the temporal kernel beyond [`SHAPES`] and [`STREAMING_SHAPES`]: the sanitizer
/// grids of its issue, and one taller than a tile is wide.
const TEMPORAL_SHAPES: [(usize, usize, usize); 3] = [(70, 66, 34), (1025, 9, 7), (5, 70, 40)];

/// Every temporal kernel (depth `k`) for 1, k − 1, k and k + 1 steps on every grid: one pass,
/// a pass plus a single step, and runs of single steps only, bit for bit.
fn every_temporal_kernel<T: Element>() {
    use host::stencil::temporal;
    let gpu = gpu();
    let kernels = temporal::sweep(T::PRECISION);
    let most = kernels.iter().map(|s| s.kernel.depth + 1).max().unwrap();
    for shape in SHAPES.into_iter().chain(STREAMING_SHAPES).chain(TEMPORAL_SHAPES) {
        let seed = random::fresh_seed();
        let input = random::random_grid::<T>(shape, seed).unwrap();
        let coeffs = random_coeffs(seed);
        let mut references = vec![input.clone()];
        for _ in 0..most {
            references.push(stencil::reference_step(references.last().unwrap().view(), coeffs));
        }
        let mut problem = stencil::StencilProblem::new(&gpu, input.view(), coeffs).unwrap();
        for &s in kernels {
            let k = s.kernel.depth;
            for steps in [1, k - 1, k, k + 1] {
                problem.run_temporal(s, steps).unwrap();
                let out = problem.output().unwrap();
                let c = compare(out.as_slice().unwrap(), references[steps].as_slice().unwrap());
                assert!(
                    c.ok,
                    "temporal {} {} on {shape:?}, {steps} step(s), seed {seed}: {c:?}",
                    temporal::Describe(s),
                    T::NAME
                );
            }
        }
    }
}

gpu_test_per_dtype!(
    every_temporal_kernel,
    every_temporal_kernel_matches_single_steps_f32,
    every_temporal_kernel_matches_single_steps_f64
);

/// 64 steps of the library's default schedule, and forced depths with a remainder.
fn temporal_many_steps<T: Element>() {
    let gpu = gpu();
    for shape in [(33, 31, 29), (64, 64, 64), (34, 66, 70)] {
        check::<T>(&gpu, StencilVariant::Temporal, shape, random_coeffs(random::fresh_seed()), 64);
    }
    let seed = random::fresh_seed();
    let input = random::random_grid::<T>((40, 50, 60), seed).unwrap();
    let coeffs = random_coeffs(seed);
    let reference = reference_steps(input.view(), coeffs, 11);
    let mut problem = stencil::StencilProblem::new(&gpu, input.view(), coeffs).unwrap();
    for depth in host::stencil::temporal::depths(T::PRECISION).into_iter().chain([1]) {
        problem.run_fused(Some(depth), 11).unwrap();
        let c = compare(problem.output().unwrap().as_slice().unwrap(), reference.as_slice().unwrap());
        assert!(c.ok, "--fuse {depth}, 11 steps, {}, seed {seed}: {c:?}", T::NAME);
    }
    assert!(problem.run_fused(Some(5), 11).unwrap_err().to_string().contains("fusion depths"));
}

gpu_test_per_dtype!(
    temporal_many_steps,
    temporal_runs_of_64_steps_and_forced_depths_f32,
    temporal_runs_of_64_steps_and_forced_depths_f64
);

/// Random star coefficients of order `R`, scaled so `Σ|c|·2 ≤ 1` (values stay bounded).
fn random_star<T: Element, const R: usize>(seed: u64) -> gpu_kernels::stencil::star::StarCoeffs<T, R> {
    let c = random::random_grid::<f64>((1, 1, 1 + 3 * R), seed).unwrap();
    let total: f64 = 2.0 * c.iter().map(|v| v.abs()).sum::<f64>();
    let c: Vec<T> = c.iter().map(|v| T::from_f64(v / total)).collect();
    let axis = |a: usize| core::array::from_fn(|d| c[1 + a * R + d]);
    gpu_kernels::stencil::star::StarCoeffs { center: c[0], x: axis(0), y: axis(1), z: axis(2) }
}

/// The order-`R` star, streaming and shared-tiled, against the CPU reference on every grid of
/// the 7-point tests that is at least `2R + 1` thick, 1 and 3 steps; thinner grids are refused
/// with `BadShape`.
fn star<T: Element, const R: usize>()
where
    gpu_kernels::stencil::star::StarCoeffs<T, R>: gpu_kernels::KernelParam,
{
    let gpu = gpu();
    for shape in SHAPES.into_iter().chain(STREAMING_SHAPES).chain(TEMPORAL_SHAPES) {
        let seed = random::fresh_seed();
        let input = random::random_grid::<T>(shape, seed).unwrap();
        let coeffs = random_star::<T, R>(seed);
        let mut problem = stencil::StencilProblem::new(&gpu, input.view(), random_coeffs(seed)).unwrap();
        let (nz, ny, nx) = shape;
        if nz.min(ny).min(nx) < 2 * R + 1 {
            let err = problem.run_star(coeffs, 1).unwrap_err();
            assert!(matches!(err, host::Error::BadShape(_)), "{shape:?}: {err}");
            continue;
        }
        for steps in [1, 3] {
            let mut expected = input.clone();
            for _ in 0..steps {
                expected = stencil::reference_star_step(expected.view(), coeffs);
            }
            for tiled in [false, true] {
                if tiled {
                    problem.run_star_tiled(coeffs, steps).unwrap();
                } else {
                    problem.run_star(coeffs, steps).unwrap();
                }
                let out = problem.output().unwrap();
                let c = compare(out.as_slice().unwrap(), expected.as_slice().unwrap());
                assert!(
                    c.ok,
                    "star of order {R} (tiled: {tiled}), {} on {shape:?}, {steps} step(s), seed {seed}: {c:?}",
                    T::NAME
                );
            }
        }
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn high_order_stars_match_the_reference_f32() {
    star::<f32, 2>();
    star::<f32, 4>();
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn high_order_stars_match_the_reference_f64() {
    star::<f64, 2>();
    star::<f64, 4>();
}

/// The box stencil against the CPU reference on every grid of the 7-point tests, 1 and 3 steps,
/// with random coefficients scaled so `27·max|c| ≤ 1`.
fn box27<T: Element>() {
    let gpu = gpu();
    for shape in SHAPES.into_iter().chain(STREAMING_SHAPES).chain(TEMPORAL_SHAPES) {
        let seed = random::fresh_seed();
        let input = random::random_grid::<T>(shape, seed).unwrap();
        let c = random::random_grid::<f64>((1, 1, 4), seed).unwrap();
        let c: Vec<T> = c.iter().map(|v| T::from_f64(v / 27.0)).collect();
        let coeffs =
            gpu_kernels::stencil::box27::BoxCoeffs { center: c[0], face: c[1], edge: c[2], corner: c[3] };
        let mut problem = stencil::StencilProblem::new(&gpu, input.view(), random_coeffs(seed)).unwrap();
        for steps in [1, 3] {
            let mut expected = input.clone();
            for _ in 0..steps {
                expected = stencil::reference_box_step(expected.view(), coeffs);
            }
            problem.run_box(coeffs, steps).unwrap();
            let out = problem.output().unwrap();
            let c = compare(out.as_slice().unwrap(), expected.as_slice().unwrap());
            assert!(c.ok, "box27 {} on {shape:?}, {steps} step(s), seed {seed}: {c:?}", T::NAME);
        }
    }
}

gpu_test_per_dtype!(
    box27,
    the_box_stencil_matches_the_reference_f32,
    the_box_stencil_matches_the_reference_f64
);

/// Every launch shape of the high-order stars' and the box's sweep (every built kernel, each
/// in every sweep block), 3 steps on a grid whose rows every vector width divides and on one
/// thinner than a block, against the CPU reference: so whichever the sweep picks as a default
/// has been checked. Launches whose blocks need more registers than an SM has are refused
/// with `BadShape`, which this test accepts.
fn every_shape_kernel<T: Element>() {
    use host::stencil::{StencilShape, high_order};
    let gpu = gpu();
    for shape in StencilShape::HIGH_ORDER {
        let coeffs = shape.default_coeffs();
        let coeffs: Vec<f64> =
            coeffs.iter().map(|c| c / coeffs.iter().map(|c| c.abs()).sum::<f64>()).collect();
        // The last grid takes several blocks of the widest kernels along x and y, the last ones partly.
        for grid in [(21, 19, 40), (9, 11, 16), (23, 70, 300)] {
            let seed = random::fresh_seed();
            let input = random::random_grid::<T>(grid, seed).unwrap();
            let expected = high_order::reference_shape_steps(input.view(), shape, &coeffs, 3).unwrap();
            let mut problem = stencil::StencilProblem::new(&gpu, input.view(), random_coeffs(seed)).unwrap();
            for launch in high_order::sweep(shape, T::PRECISION, gpu.info.tuned_card()).unwrap() {
                let name =
                    format!("{shape} {} {} on {grid:?}", stencil::streaming::Describe(launch), T::NAME);
                match high_order::run_shape_with(&mut problem, shape, &coeffs, launch, 3) {
                    Err(host::Error::BadShape(_)) => continue,
                    result => result.unwrap_or_else(|e| panic!("{name}: {e}")),
                };
                let out = problem.output().unwrap();
                let c = compare(out.as_slice().unwrap(), expected.as_slice().unwrap());
                assert!(c.ok, "{name}, seed {seed}: {c:?}");
            }
        }
    }
}

gpu_test_per_dtype!(
    every_shape_kernel,
    every_shape_kernel_matches_the_reference_f32,
    every_shape_kernel_matches_the_reference_f64
);

#[test]
#[ignore = "needs a CUDA GPU"]
fn the_planned_shapes_are_the_tables_fitted_to_the_grid_and_clustered() {
    use host::stencil::{StencilShape, high_order, streaming};
    let gpu = gpu();
    let card = gpu.info.tuned_card();
    // 70 points a row: no 4-point patch divides it, 2 does.
    let input = random::random_grid::<f32>((34, 66, 70), 7).unwrap();
    let mut problem = stencil::StencilProblem::new(&gpu, input.view(), stencil::laplacian()).unwrap();
    let table = high_order::default_launch(StencilShape::Star25, f32::PRECISION, card).unwrap();
    assert_eq!(table.kernel.vector, 4);
    let planned = problem.planned_shape(StencilShape::Star25, table).unwrap();
    assert_eq!(planned.kernel.vector, 2, "{planned:?}");
    assert_eq!((planned.block, planned.kernel.rows), (table.block, table.kernel.rows));
    let seven = problem.default_streaming_shape().unwrap();
    assert_eq!(seven.kernel.vector, 2, "{seven:?}");
    assert_eq!(seven.kernel, streaming::fit(seven, problem.grid(), f32::PRECISION).kernel);
    // A cluster set on the problem is the cluster they launch in, where the GPU has clusters.
    problem.set_cluster(Some(2)).unwrap();
    let expected = if gpu.info.clusters { 2 } else { 1 };
    assert_eq!(problem.planned_shape(StencilShape::Star25, table).unwrap().cluster, expected);
    assert_eq!(problem.default_streaming_shape().unwrap().cluster, expected);
    // Too thin for the star25 (9 planes at least): refused as its run is.
    let thin = random::random_grid::<f32>((8, 66, 70), 7).unwrap();
    let problem = stencil::StencilProblem::new(&gpu, thin.view(), stencil::laplacian()).unwrap();
    assert!(problem.planned_shape(StencilShape::Star25, table).is_err());
}

/// The star25 with its tiles brought by tensor copies (the H100's `f64` default), 10 steps from
/// NaN-poisoned buffers against 10 reference steps, on grids whose tiles overhang the faces and
/// whose runs along z are several; and planned where the copies cannot run: on rows of no whole
/// 16-byte multiple, and on a GPU without the Hopper build, one row with its halo a plane ahead.
fn tensor_copy_star25<T: Element>() {
    use gpu_kernels::stencil::tiles::{HALO_BY_TENSOR_COPY, StreamingKernel, StreamingShape, TunedCard};
    use host::stencil::{StencilShape, high_order};
    let gpu = gpu();
    let h100 =
        high_order::default_launch(StencilShape::Star25, host::Precision::F64, TunedCard::H100).unwrap();
    let vector = 16 / size_of::<T>();
    let launch = StreamingShape { kernel: StreamingKernel { vector, ..h100.kernel }, ..h100 };
    let coeffs = StencilShape::Star25.default_coeffs();
    let hopper = gpu.info.ptx_arch == host::gpu::HOPPER_ARCH;
    for grid in [(33, 31, 40), (70, 9, 12), (200, 64, 64)] {
        let seed = random::fresh_seed();
        let input = random::random_grid::<T>(grid, seed).unwrap();
        let expected =
            high_order::reference_shape_steps(input.view(), StencilShape::Star25, &coeffs, 10).unwrap();
        let mut problem = stencil::StencilProblem::new(&gpu, input.view(), random_coeffs(seed)).unwrap();
        let planned = problem.planned_shape(StencilShape::Star25, launch).unwrap();
        assert_eq!(planned.kernel.ahead == HALO_BY_TENSOR_COPY, hopper, "{grid:?}: {planned:?}");
        high_order::run_shape_with(&mut problem, StencilShape::Star25, &coeffs, launch, 10).unwrap();
        let out = problem.output().unwrap();
        let c = compare(out.as_slice().unwrap(), expected.as_slice().unwrap());
        assert!(c.ok && c.max_abs_error == 0.0, "tensor copies, {} on {grid:?}, seed {seed}: {c:?}", T::NAME);
    }
    // Rows of 18 points: in `f64` 144 bytes, a whole multiple of 16; in `f32` 72, not.
    let input = random::random_grid::<T>((12, 11, 18), 3).unwrap();
    let problem = stencil::StencilProblem::new(&gpu, input.view(), random_coeffs(3)).unwrap();
    let planned = problem.planned_shape(StencilShape::Star25, launch).unwrap();
    let whole_rows = (18 * size_of::<T>()).is_multiple_of(16);
    assert_eq!(planned.kernel.ahead == HALO_BY_TENSOR_COPY, hopper && whole_rows, "{planned:?}");
}

gpu_test_per_dtype!(
    tensor_copy_star25,
    the_tensor_copy_star25_equals_ten_reference_steps_f32,
    the_tensor_copy_star25_equals_ten_reference_steps_f64
);
