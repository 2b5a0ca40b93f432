//! How failures reach the user on a GPU: a kernel that traps, and requests too large for the
//! GPU, refused before anything is allocated. Run on a machine with a CUDA GPU, each test in
//! its own process (after the trap, CUDA refuses all work in the process):
//! `cargo test --release -p host --test failures_gpu -- --include-ignored --exact <test name>`.

use cudarc::driver::LaunchConfig;
use gpu_kernels::testing::TRAP_ENTRY_POINT;
use host::merge::{self, MergeProblem, MergeVariant};
use host::stencil::{self, StencilProblem, StencilVariant};
use host::{Error, Gpu};
use ndarray::{Array3, ShapeBuilder};

fn gpu() -> Gpu {
    Gpu::new(0).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_trapping_kernel_is_reported_and_later_calls_fail_too() {
    let gpu = gpu();
    assert_eq!(merge::merge(&gpu, MergeVariant::default(), &[1, 3], &[2]).unwrap(), [1, 2, 3]);
    let trap = gpu.function(TRAP_ENTRY_POINT).unwrap();
    let config = LaunchConfig { grid_dim: (1, 1, 1), block_dim: (32, 1, 1), shared_mem_bytes: 0 };
    // Launched as a merge kernel would be (it ignores the arguments), so the error names it.
    let mut problem = MergeProblem::new(&gpu, &[1, 3], &[2]).unwrap();
    let err = problem.run_function(&trap, config, TRAP_ENTRY_POINT).unwrap_err();
    println!("after the trap: {err}");
    assert!(matches!(err, Error::ContextLost { .. }), "{err}");
    assert!(err.to_string().contains("running the test_only_trap merge"), "{err}");
    assert!(err.to_string().contains("exit and start again"), "{err}");
    // No result comes out of the failed run.
    assert!(problem.output().is_err());
    // Every later call on this Gpu fails the same way instead of returning a wrong result.
    let later = merge::merge(&gpu, MergeVariant::default(), &[1, 3], &[2]).unwrap_err();
    assert!(matches!(later, Error::ContextLost { .. }), "{later}");
    let grid = Array3::<f32>::zeros((4, 4, 4));
    let later =
        stencil::run(&gpu, StencilVariant::Streaming, grid.view(), stencil::laplacian(), 1).unwrap_err();
    assert!(matches!(later, Error::ContextLost { .. }), "{later}");
    // CUDA cannot recover inside the process: a new Gpu says so too, rather than run.
    drop((trap, problem));
    drop(gpu);
    let err = Gpu::new(0).err().expect("a new Gpu in the process of a kernel fault");
    assert!(matches!(err, Error::ContextLost { .. }), "{err}");
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn requests_larger_than_the_gpu_are_refused_before_allocating() {
    let gpu = gpu();
    let (free_before, total) = gpu.memory().unwrap();
    // A grid just over the free memory: three copies of it do not fit. Its elements are never
    // touched (a view of one zero repeated by a stride of 0).
    let side = ((free_before / 3 / 4) as f64).cbrt() as usize + 8;
    let zero = [0.0f32];
    let huge = ndarray::ArrayView3::from_shape((side, side, side).strides((0, 0, 0)), &zero).unwrap();
    let err = StencilProblem::new(&gpu, huge, stencil::laplacian()).err().unwrap();
    println!("{err}");
    assert!(matches!(err, Error::OutOfMemory(_)), "{err}");
    assert!(err.to_string().contains("the largest cube that fits is"), "{err}");
    // Nothing was allocated for the refused grid.
    let (free_after, _) = gpu.memory().unwrap();
    assert!(free_after.abs_diff(free_before) < 1 << 20, "{free_before} → {free_after} of {total}");
    // The cube the message names fits (checked by the preflight arithmetic alone: allocating it
    // here would take most of the GPU).
    let message = err.to_string();
    let largest: u64 = message.rsplit(' ').next().unwrap().trim_end_matches('³').parse().unwrap();
    let need =
        host::preflight::StencilNeed { shape: (largest, largest, largest), element_bytes: 4, dtype: "f32" };
    need.check_device(free_after as u64).unwrap();
}
