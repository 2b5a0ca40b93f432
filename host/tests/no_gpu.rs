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

/// Option values a user might type, good and bad: empty, zero, negative, huge, past `u32`
/// and `u64`, not numbers.
const VALUES: [&str; 16] = [
    "",
    "0",
    "1",
    "3",
    "-1",
    "8",
    "2^27",
    "2^64",
    "4294967297",
    "18446744073709551616",
    "x",
    "3x3x3",
    "99999999999x3x3",
    "1,2,3",
    "nan",
    "256x4294967296",
];

/// Options of `stencil` and `merge`, each followed by one of [`VALUES`] or a choice of its own
/// (`--device` is left out: every run below is sent to GPU 4096, which no machine has).
const STENCIL_OPTIONS: [&str; 17] = [
    "--grid",
    "--dtype",
    "--variant",
    "--steps",
    "--fuse",
    "--shape",
    "--coeffs",
    "--kept-l2",
    "--cluster",
    "--repeat",
    "--seed",
    "--halo",
    "--ptx",
    "--input",
    "--json",
    "--no-verify",
    "--no-overlap",
];
const MERGE_OPTIONS: [&str; 15] = [
    "--m",
    "--n",
    "--dtype",
    "--variant",
    "--values",
    "--order",
    "--set",
    "--path-shape",
    "--dist",
    "--repeat",
    "--seed",
    "--ptx",
    "--input-a",
    "--json",
    "--no-verify",
];

/// A command line of up to six options from `options`, each with a value from [`VALUES`]
/// (flags take theirs as a stray argument, which clap refuses).
fn command_line(
    options: &'static [&'static str],
) -> impl proptest::strategy::Strategy<Value = Vec<&'static str>> {
    use proptest::prelude::*;
    prop::collection::vec(
        (prop::sample::select(options), prop::sample::select(&VALUES[..]), any::<bool>()),
        0..6,
    )
    .prop_map(|pairs| {
        pairs
            .into_iter()
            .flat_map(|(option, value, with)| [option].into_iter().chain(with.then_some(value)))
            .collect()
    })
}

/// Runs `name` with `args` on GPU 4096: it exits 0 (`--help`) or 2 (clap's usage error, a
/// refused value, no such GPU), never by a panic.
fn never_panics(name: &str, built: &str, args: &[&str]) -> Result<(), proptest::test_runner::TestCaseError> {
    let output = Command::new(binary(name, built)).args(args).args(["--device", "4096"]).output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    proptest::prop_assert!(!stderr.contains("panicked"), "{name} {args:?}: {stderr}");
    proptest::prop_assert!(
        matches!(output.status.code(), Some(0 | 2)),
        "{name} {args:?}: {:?} {stderr}",
        output.status
    );
    Ok(())
}

proptest::proptest! {
    #![proptest_config(proptest::test_runner::Config::with_cases(200))]

    #[test]
    fn no_stencil_command_line_panics(args in command_line(&STENCIL_OPTIONS)) {
        never_panics("stencil", env!("CARGO_BIN_EXE_stencil"), &args)?;
    }

    #[test]
    fn no_merge_command_line_panics(args in command_line(&MERGE_OPTIONS)) {
        never_panics("merge", env!("CARGO_BIN_EXE_merge"), &args)?;
    }
}
