//! What a user sees without a GPU, or with a wrong one: one clear line, exit status 2.
//! These run everywhere; each asserts the branch that applies to the machine.

use std::path::PathBuf;
use std::process::Command;

/// The `stencil` binary: cargo's, or the bundle's `.gpu/bin/stencil` next to `.gpu/tests/`.
fn binary(name: &str, built: &str) -> PathBuf {
    let built = PathBuf::from(built);
    if built.exists() {
        return built;
    }
    let exe = std::env::current_exe().unwrap();
    exe.parent().unwrap().join("../bin").join(name)
}

fn driver_present() -> bool {
    // SAFETY: only probes whether libcuda can be loaded.
    unsafe { cudarc::driver::sys::is_culib_present() }
}

#[test]
fn opening_a_gpu_gives_a_typed_error_without_a_driver_or_with_a_bad_ordinal() {
    if driver_present() {
        let err = host::Gpu::new(4096).err().expect("no machine has 4097 GPUs");
        assert!(matches!(err, host::Error::NoDevice(_)), "{err}");
    } else {
        let err = host::Gpu::new(0).err().expect("no driver, no GPU");
        assert!(matches!(err, host::Error::NoDriver), "{err}");
        assert!(err.to_string().contains("no CUDA driver found"));
    }
}

/// Runs a binary that must fail before any GPU work: exit status 2, one line on stderr that
/// starts with `<name>: error: ` and says why there is no usable GPU, no panic.
fn assert_no_usable_gpu(name: &str, built: &str, args: &[&str]) {
    let output = Command::new(binary(name, built)).args(args).output().unwrap();
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    let why = if driver_present() { "no CUDA GPU found" } else { "no CUDA driver found" };
    assert!(stderr.starts_with(&format!("{name}: error: {why}")), "{stderr}");
    assert!(!stderr.contains("panicked") && !stderr.contains("backtrace"), "{stderr}");
}

#[test]
fn stencil_prints_one_line_and_exits_2_without_a_usable_gpu() {
    assert_no_usable_gpu("stencil", env!("CARGO_BIN_EXE_stencil"), &["--grid", "8", "--device", "4096"]);
}

#[test]
fn merge_prints_one_line_and_exits_2_without_a_usable_gpu() {
    assert_no_usable_gpu(
        "merge",
        env!("CARGO_BIN_EXE_merge"),
        &["--m", "10", "--n", "10", "--device", "4096"],
    );
}

#[test]
fn stencil_refuses_bad_arguments_before_touching_the_gpu() {
    let output = Command::new(binary("stencil", env!("CARGO_BIN_EXE_stencil")))
        .args(["--grid", "2x8x8"])
        .output()
        .unwrap();
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("between 3 and"), "{stderr}");
}
