//! How failures reach the user on a GPU: a kernel that traps, and requests too large for the
//! GPU, refused before anything is allocated. Run on a machine with a CUDA GPU:
//! `cargo test --release -p host --test failures_gpu -- --include-ignored`. After a trap CUDA
//! refuses all work in the process, so the trap test runs its GPU work in a child process (this
//! test binary again, running only that test), and the other tests keep a working GPU.

mod common;

use common::gpu;
use std::process::Command;

use cudarc::driver::LaunchConfig;
use gpu_kernels::testing::TRAP_ENTRY_POINT;
use host::merge::{self, MergeProblem, MergeVariant};
use host::stencil::{self, StencilProblem, StencilVariant};
use host::{Error, Gpu, Precision};
use ndarray::{Array3, ShapeBuilder};

/// Set in the child process that runs the trap.
const TRAP_CHILD: &str = "FAILURES_GPU_TRAP_CHILD";

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_trapping_kernel_is_reported_and_later_calls_fail_too() {
    if std::env::var_os(TRAP_CHILD).is_some() {
        trap_and_check_later_calls();
        return;
    }
    let this_test = "a_trapping_kernel_is_reported_and_later_calls_fail_too";
    let exe = std::env::current_exe().expect("the test binary's path");
    let child = Command::new(exe)
        .args(["--include-ignored", "--exact", this_test, "--nocapture", "--test-threads=1"])
        .env(TRAP_CHILD, "1")
        .output()
        .expect("running the trap in a child process");
    let stdout = String::from_utf8_lossy(&child.stdout);
    let stderr = String::from_utf8_lossy(&child.stderr);
    assert!(child.status.success(), "the child process failed ({}):\n{stdout}\n{stderr}", child.status);
    assert!(stdout.contains("after the trap: "), "the child did not reach the trap:\n{stdout}");
    assert!(stdout.contains("1 passed"), "the child ran no test:\n{stdout}");
    println!("{}", stdout.lines().find(|l| l.contains("after the trap: ")).unwrap_or_default());
}

/// The trap and what follows it, in a process of its own.
fn trap_and_check_later_calls() {
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
    let need = host::preflight::StencilNeed { shape: (largest, largest, largest), precision: Precision::F32 };
    need.check_device(free_after as u64).unwrap();
}
