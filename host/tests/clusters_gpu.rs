//! The streaming kernels launched in thread-block clusters (`StreamingShape::cluster`,
//! `StencilProblem::set_cluster`): the same blocks as a plain launch, grouped, so every result is
//! bit for bit a plain launch's. Ignored without a GPU: run with `cargo test -- --include-ignored`
//! (or `.gpu/run tests`).

mod common;

use common::{gpu, gpu_test_per_dtype};
use gpu_kernels::stencil::Coeffs;
use gpu_kernels::stencil::tiles::{MAX_CLUSTER, NO_CLUSTER, STREAMING_F32};
use host::stencil::{StencilProblem, StencilShape, StencilVariant, high_order, reference_steps, streaming};
use host::verify::compare;
use host::{Element, Error, random};
use ndarray::Array3;

/// Grids `(nz, ny, nx)` whose rows of tiles the defaults' blocks split into clusters of 8 (256
/// rows) and into none but 1 (97 rows, a prime), with ends of rows and planes in partial tiles.
const GRIDS: [(usize, usize, usize); 2] = [(40, 256, 72), (33, 97, 70)];

const STEPS: usize = 3;

/// Coefficients of `shape` scaled so their absolute values sum to 1 (values stay bounded).
fn bounded_coeffs(shape: StencilShape) -> Vec<f64> {
    let coeffs = shape.default_coeffs();
    let total: f64 = coeffs.iter().map(|c| c.abs()).sum();
    coeffs.iter().map(|c| c / total).collect()
}

/// The seven-point star's [`bounded_coeffs`].
fn seven_point<T: Element>() -> Coeffs<T> {
    let coeffs = bounded_coeffs(StencilShape::Star7);
    Coeffs(std::array::from_fn(|i| T::from_f64(coeffs[i])))
}

/// `STEPS` steps of `shape` at its default launch, in clusters of `cluster` blocks (or the
/// shapes' own with `None`).
fn run<T: Element>(
    problem: &mut StencilProblem<'_, T>,
    shape: StencilShape,
    coeffs: &[f64],
    cluster: Option<u32>,
) -> Array3<T> {
    problem.set_cluster(cluster).unwrap();
    match shape {
        StencilShape::Star7 => problem.run(StencilVariant::Streaming, STEPS).map(drop),
        _ => high_order::run_shape(problem, shape, coeffs, STEPS).map(drop),
    }
    .unwrap_or_else(|e| panic!("{shape} {} in clusters of {cluster:?}: {e}", T::NAME));
    problem.output().unwrap()
}

/// Every shape in clusters of 8: bit for bit the plain launch's result, which matches the CPU
/// reference.
fn every_shape_in_clusters<T: Element>() {
    let gpu = gpu();
    for grid in GRIDS {
        let seed = random::fresh_seed();
        let input = random::random_grid::<T>(grid, seed).unwrap();
        for shape in StencilShape::ALL {
            let coeffs = bounded_coeffs(shape);
            let seven = seven_point::<T>();
            let mut problem = StencilProblem::new(&gpu, input.view(), seven).unwrap();
            let plain = run(&mut problem, shape, &coeffs, Some(NO_CLUSTER));
            let clustered = run(&mut problem, shape, &coeffs, Some(MAX_CLUSTER));
            let name = format!("{shape} {} on {grid:?}, seed {seed}", T::NAME);
            assert!(
                plain.iter().zip(&clustered).all(|(a, b)| a.to_f64().to_bits() == b.to_f64().to_bits()),
                "{name}: clusters of {MAX_CLUSTER} differ from plain launches"
            );
            let expected = match shape {
                StencilShape::Star7 => reference_steps(input.view(), seven, STEPS),
                _ => high_order::reference_shape_steps(input.view(), shape, &coeffs, STEPS).unwrap(),
            };
            let c = compare(clustered.as_slice().unwrap(), expected.as_slice().unwrap());
            assert!(c.ok, "{name}: {c:?}");
        }
    }
}

gpu_test_per_dtype!(
    every_shape_in_clusters,
    every_shape_in_clusters_of_eight_equals_plain_launches_f32,
    every_shape_in_clusters_of_eight_equals_plain_launches_f64
);

/// Every shape of the seven-point kernel's sweep (along z and y, in one wave and in runs), in
/// clusters of 4, against the CPU reference.
fn seven_point_sweep_in_clusters<T: Element>() {
    let gpu = gpu();
    let grid = GRIDS[0];
    let seed = random::fresh_seed();
    let input = random::random_grid::<T>(grid, seed).unwrap();
    let seven = seven_point::<T>();
    let expected = reference_steps(input.view(), seven, STEPS);
    let mut problem = StencilProblem::new(&gpu, input.view(), seven).unwrap();
    for &shape in streaming::sweep(T::PRECISION) {
        let shape = shape.with_cluster(4);
        problem.run_streaming(shape, STEPS).unwrap();
        let out = problem.output().unwrap();
        let c = compare(out.as_slice().unwrap(), expected.as_slice().unwrap());
        assert!(c.ok, "{} {} on {grid:?}, seed {seed}: {c:?}", streaming::Describe(shape), T::NAME);
    }
}

gpu_test_per_dtype!(
    seven_point_sweep_in_clusters,
    the_seven_point_sweep_in_clusters_matches_the_reference_f32,
    the_seven_point_sweep_in_clusters_matches_the_reference_f64
);

#[test]
#[ignore = "needs a CUDA GPU"]
fn resident_blocks_are_counted_in_whole_clusters() {
    let gpu = gpu();
    assert_eq!(gpu.info.clusters, gpu.info.compute_capability.0 >= 9 && gpu.info.driver_cuda_version.0 >= 12);
    // 64 rows of 4: 16 rows of tiles of the f32 default, clusters of 8 where the GPU has them.
    let input = random::random_grid::<f32>((16, 64, 512), random::fresh_seed()).unwrap();
    let problem = StencilProblem::new(&gpu, input.view(), Coeffs([0.1f32; 7])).unwrap();
    let plain = problem.streaming_occupancy(STREAMING_F32).unwrap();
    let clustered = problem.streaming_occupancy(STREAMING_F32.with_cluster(MAX_CLUSTER)).unwrap();
    let expected = if gpu.info.clusters { MAX_CLUSTER } else { NO_CLUSTER };
    assert_eq!((plain.cluster, clustered.cluster), (NO_CLUSTER, expected));
    assert!(clustered.resident <= plain.resident, "{clustered:?} against {plain:?}");
    assert!(clustered.resident > 0 && clustered.resident.is_multiple_of(expected as usize), "{clustered:?}");
    // The default walks in waves: each launch splits its columns to fill the blocks the GPU
    // holds, so fewer resident blocks in clusters (the H200: 240 of 256) mean fewer blocks.
    for occupancy in [plain, clustered] {
        assert!(occupancy.blocks <= occupancy.resident as u64, "one wave: {occupancy:?}");
    }
    assert!(
        clustered.blocks <= plain.blocks && clustered.blocks.is_multiple_of(u64::from(expected)),
        "{clustered:?}"
    );
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn clusters_of_no_block_or_more_than_eight_are_refused() {
    let gpu = gpu();
    let input = random::random_grid::<f64>((9, 9, 9), random::fresh_seed()).unwrap();
    let mut problem = StencilProblem::new(&gpu, input.view(), Coeffs([0.1; 7])).unwrap();
    for bad in [0, MAX_CLUSTER + 1] {
        let err = problem.set_cluster(Some(bad)).unwrap_err();
        assert!(matches!(err, Error::BadArgument(_)), "{bad}: {err}");
        let err = problem.run_streaming(STREAMING_F32.with_cluster(bad), 1).unwrap_err();
        assert!(err.to_string().contains("give 1 (none) to 8"), "{bad}: {err}");
    }
    problem.set_cluster(None).unwrap();
    problem.run(StencilVariant::Streaming, 1).unwrap();
}
