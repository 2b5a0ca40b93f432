//! One `Gpu` shared by several threads, and many problems created and dropped: results stay
//! right and device memory comes back. Run on a machine with a CUDA GPU:
//! `cargo test --release -p host --test soak_gpu -- --include-ignored`.

mod common;

use common::gpu;
use gpu_kernels::stencil::Coeffs;
use host::merge::{self, Distribution, MergeProblem, MergeVariant, first_difference, merge_reference};
use host::stencil::{self, StencilProblem, StencilVariant, reference_steps};
use host::{Error, Gpu, random};
use ndarray::{Array3, ArrayView3, ShapeBuilder};
use rand::rngs::SmallRng;
use rand::{RngExt, SeedableRng};

/// `Gpu` may be shared by reference between threads.
#[test]
fn gpu_is_send_and_sync() {
    fn shareable<T: Send + Sync>() {}
    shareable::<Gpu>();
}

/// One merge of random sizes (sometimes empty, up to about 4 MB of keys) and variant, checked.
fn random_merge(gpu: &Gpu, rng: &mut SmallRng) {
    let size = |rng: &mut SmallRng| match rng.random_range(0..4) {
        0 => 0,
        1 => rng.random_range(1..100),
        _ => rng.random_range(100..(1 << 19)),
    };
    let (m, n) = (size(rng), size(rng));
    let distribution = Distribution::ALL[rng.random_range(0..Distribution::ALL.len())];
    let variant = MergeVariant::ALL[rng.random_range(0..MergeVariant::ALL.len())];
    let (a, b) = distribution.generate::<i64>(m, n, rng.random()).unwrap();
    let out = merge::merge(gpu, variant, &a, &b).unwrap_or_else(|e| panic!("{variant} {m} + {n}: {e}"));
    assert_eq!(first_difference(&out, &merge_reference(&a, &b)), None, "{variant} {distribution} {m} + {n}");
}

/// One stencil of random shape (3 to 64 points a side), variant and step count, checked exactly.
fn random_stencil(gpu: &Gpu, rng: &mut SmallRng) {
    let side = |rng: &mut SmallRng| rng.random_range(3..=64usize);
    let shape = (side(rng), side(rng), side(rng));
    let variant = StencilVariant::ALL[rng.random_range(0..StencilVariant::ALL.len())];
    let steps = rng.random_range(1..=3);
    let input: Array3<f32> = random::random_grid(shape, rng.random()).unwrap();
    let coeffs = Coeffs([0.4, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1]);
    let out =
        stencil::run(gpu, variant, input.view(), coeffs, steps).unwrap_or_else(|e| panic!("{variant}: {e}"));
    assert_eq!(out, reference_steps(input.view(), coeffs, steps), "{variant} {shape:?} {steps} steps");
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn eight_threads_share_one_gpu() {
    let gpu = gpu();
    std::thread::scope(|scope| {
        for thread in 0..8u64 {
            let gpu = &gpu;
            scope.spawn(move || {
                let mut rng = SmallRng::seed_from_u64(0x50a4 + thread);
                for run in 0..70 {
                    // 50 merges and 20 stencils, interleaved.
                    if run % 7 < 5 { random_merge(gpu, &mut rng) } else { random_stencil(gpu, &mut rng) }
                }
            });
        }
    });
}

/// Device memory in use (total minus free) once the stream has drained.
fn used(gpu: &Gpu) -> usize {
    gpu.synchronize().unwrap();
    let (free, total) = gpu.memory().unwrap();
    total - free
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn five_hundred_problems_and_their_errors_leak_nothing() {
    let gpu = gpu();
    // Load every kernel used below once: module loading and the allocator's first pool are
    // not leaks.
    let mut rng = SmallRng::seed_from_u64(0x1eaf);
    random_merge(&gpu, &mut rng);
    random_stencil(&gpu, &mut rng);
    let before = used(&gpu);
    let (free, _) = gpu.memory().unwrap();
    for i in 0..500usize {
        match i % 5 {
            0 => {
                let (a, b) = Distribution::Uniform.generate::<f32>(i * 997, 3 * i, i as u64).unwrap();
                let mut problem = MergeProblem::new(&gpu, &a, &b).unwrap();
                problem.run(MergeVariant::default()).unwrap();
            }
            1 => {
                let input: Array3<f64> = random::random_grid((5 + i % 40, 7, 9 + i % 30), i as u64).unwrap();
                let mut problem = StencilProblem::new(&gpu, input.view(), stencil::laplacian()).unwrap();
                problem.run(StencilVariant::Streaming, 2).unwrap();
                problem.output().unwrap();
            }
            // Refused part-way: a grid whose three copies pass the free memory (a view of one
            // zero with zero strides, never copied: the preflight refuses it first).
            2 => {
                let side = ((free / 3 / 8) as f64).cbrt() as usize + 8;
                let zero = [0.0f64];
                let huge = ArrayView3::from_shape((side, side, side).strides((0, 0, 0)), &zero).unwrap();
                let err = StencilProblem::new(&gpu, huge, stencil::laplacian()).err().unwrap();
                assert!(matches!(err, Error::OutOfMemory(_)), "{err}");
            }
            // A bad shape.
            3 => {
                let flat = Array3::<f32>::zeros((2, 9, 9));
                let err = StencilProblem::new(&gpu, flat.view(), stencil::laplacian()).err().unwrap();
                assert!(matches!(err, Error::BadShape(_)), "{err}");
            }
            // Unsorted input.
            _ => {
                let err = MergeProblem::new(&gpu, &[3u32, 1, 2], &[5, 6]).err().unwrap();
                assert!(matches!(err, Error::Unsorted { .. }), "{err}");
            }
        }
    }
    let after = used(&gpu);
    let drift = after.abs_diff(before);
    println!("device memory in use: {before} bytes before, {after} after 500 problems ({drift} bytes apart)");
    assert!(drift <= 1 << 20, "device memory in use grew from {before} to {after} bytes");
}
