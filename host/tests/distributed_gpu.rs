//! The stencil over two GPUs of one process (z-slabs, halo planes over NCCL) against the same
//! run on one GPU, bit for bit. Ignored without two GPUs and NCCL: run on the 2-GPU machine
//! with `cargo test -- --include-ignored`.

use gpu_kernels::stencil::Coeffs;
use host::distributed::SlabRun;
use host::stencil::{self, StencilVariant};
use host::{Element, Gpu, random};

fn gpus(count: usize) -> Vec<Gpu> {
    (0..count).map(|i| Gpu::new(i).expect("these tests need two CUDA GPUs")).collect()
}

/// Random coefficients in [-1, 1), scaled so `Σ|c| ≤ 1` and many steps stay bounded.
fn random_coeffs<T: Element>(seed: u64) -> Coeffs<T> {
    let c = random::random_grid::<f64>((1, 1, 7), seed).unwrap();
    let total: f64 = c.iter().map(|v| v.abs()).sum();
    let c: Vec<T> = c.iter().map(|v| T::from_f64(v / total)).collect();
    Coeffs(c.try_into().unwrap())
}

fn bitwise_equal_to_one_gpu<T: Element + cudarc::nccl::NcclType>(
    gpus: &[Gpu],
    variant: StencilVariant,
    shape: (usize, usize, usize),
    (steps, halo): (usize, usize),
    overlap: bool,
) {
    let seed = random::fresh_seed();
    let input = random::random_grid::<T>(shape, seed).unwrap();
    let coeffs = random_coeffs::<T>(seed ^ 0x5eed);
    let single = stencil::run(&gpus[0], variant, input.view(), coeffs, steps).unwrap();
    let mut run = SlabRun::new(gpus, input.view(), coeffs, halo).unwrap();
    run.set_overlap(overlap);
    run.run(variant, steps).unwrap();
    let multi = run.output().unwrap();
    assert_eq!(multi.dim(), single.dim());
    let first =
        multi.iter().zip(single.iter()).position(|(m, s)| m.to_f64().to_bits() != s.to_f64().to_bits());
    assert!(
        first.is_none(),
        "{variant} {} on {shape:?} over {} GPUs, {steps} steps, halo {halo}, overlap {overlap}, seed {seed}: first difference at flat index {first:?}",
        T::NAME,
        gpus.len()
    );
}

#[test]
#[ignore = "needs two CUDA GPUs and NCCL"]
fn two_gpus_equal_one_bit_for_bit() {
    let gpus = gpus(2);
    // nz that does not divide evenly; the thinnest split (slabs of 4 and 3 planes); a long run;
    // halos of 1 to 3 planes (exchanges every 1 to 3 steps; 100 steps are no multiple of 3);
    // the streaming kernel with its exchange overlapped (the default) and after the step.
    for shape in [(1001, 67, 129), (7, 20, 33)] {
        for (variant, overlap) in [
            (StencilVariant::Streaming, true),
            (StencilVariant::Streaming, false),
            (StencilVariant::Basic, true),
        ] {
            for halo in 1..=3 {
                bitwise_equal_to_one_gpu::<f32>(&gpus, variant, shape, (100, halo), overlap);
                bitwise_equal_to_one_gpu::<f64>(&gpus, variant, shape, (100, halo), overlap);
            }
        }
    }
    // The default halo on a grid whose slabs' sent planes do not meet, overlapped.
    let halo = host::distributed::DEFAULT_HALO;
    bitwise_equal_to_one_gpu::<f32>(&gpus, StencilVariant::Streaming, (130, 97, 67), (50, halo), true);
}

#[test]
#[ignore = "needs two CUDA GPUs and NCCL"]
fn two_gpus_refuse_a_grid_too_thin_for_them() {
    let gpus = gpus(2);
    let input = random::random_grid::<f32>((3, 8, 8), 1).unwrap();
    let err = SlabRun::new(&gpus, input.view(), stencil::laplacian(), 1)
        .err()
        .expect("3 planes over 2 GPUs: a slab of 2 planes with its halo");
    assert!(matches!(err, host::Error::BadShape(_)), "{err}");
}

/// One process per GPU, as two threads here (each its own rank, GPU and communicator, NCCL's
/// id through a file): each rank's slab equals its planes of the one-GPU run.
#[test]
#[ignore = "needs two CUDA GPUs and NCCL"]
fn two_gpus_as_ranks_joined_through_an_id_file_equal_one_gpu() {
    use host::distributed::{Ranks, SlabRun, shared_id};
    let shape = (1001, 67, 129);
    let seed = random::fresh_seed();
    let input = random::random_grid::<f64>(shape, seed).unwrap();
    let coeffs = random_coeffs::<f64>(seed ^ 0x5eed);
    // Both GPUs first: with one, rank 0 would wait in NCCL's setup for a rank that never comes.
    let single = stencil::run(&gpus(2)[0], StencilVariant::Streaming, input.view(), coeffs, 100).unwrap();
    let path = std::env::temp_dir().join(format!("nccl-id-{}-{seed}", std::process::id()));
    let _ = std::fs::remove_file(&path);
    std::thread::scope(|scope| {
        let ranks: Vec<_> = (0..2)
            .map(|rank| {
                let (input, single, path) = (&input, &single, &path);
                scope.spawn(move || {
                    let ranks = Ranks { rank, world_size: 2, local_rank: rank };
                    let gpu = Gpu::new(rank).unwrap();
                    let id = shared_id(ranks, path, std::time::Duration::from_secs(60)).unwrap();
                    let halo = host::distributed::DEFAULT_HALO;
                    let mut run = SlabRun::for_rank(&gpu, ranks, id, input.view(), coeffs, halo).unwrap();
                    run.run(StencilVariant::Streaming, 100).unwrap();
                    let ours = run.output().unwrap();
                    let expected = single.slice(ndarray::s![run.planes(), .., ..]);
                    assert_eq!(ours.dim(), expected.dim(), "rank {rank}");
                    assert!(
                        ours.iter().zip(expected.iter()).all(|(m, s)| m.to_bits() == s.to_bits()),
                        "rank {rank}, seed {seed}: its slab differs from the one-GPU run"
                    );
                })
            })
            .collect();
        for rank in ranks {
            rank.join().unwrap();
        }
    });
    let _ = std::fs::remove_file(&path);
}
