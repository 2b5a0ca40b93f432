//! The one PTX build path: compiles `gpu-kernels` for `nvptx64-nvidia-cuda` with a nested
//! `cargo rustc` and returns the PTX file. The host's build script calls [`PtxBuild::run`]
//! (so `cargo run` / `cargo test` need no extra step) and `cargo xtask build-ptx` calls the
//! same function before its `ptxas` report. After the build, `run` writes the register caps of
//! [`REGISTER_CAPS`] into the PTX (Rust has no attribute for them).
//!
//! The nested cargo runs in its own target directory (the outer build holds the lock on
//! the normal one), with the outer build's `CARGO_*`, `RUSTC*` and `RUSTFLAGS` variables
//! removed, and `-Ctarget-cpu` (with a higher LLVM unroll threshold) passed through
//! `CARGO_ENCODED_RUSTFLAGS`.

use std::fmt;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The LLVM target the kernels are compiled for.
pub const TARGET: &str = "nvptx64-nvidia-cuda";
/// Environment variable that picks the PTX target architecture, e.g. `sm_90`.
pub const ARCH_ENV: &str = "GPU_KERNELS_ARCH";
/// Default architecture: PTX for `sm_70` is JIT-compiled by the driver on every GPU from
/// Volta (sm_70) up.
pub const DEFAULT_ARCH: &str = "sm_70";
/// The second build, for Hopper and later (sm_90, PTX ISA 8.0): kernels that use Hopper's
/// instructions (bulk copies, transaction barriers) select them with
/// `cfg(target_feature = "sm_90")`. The host embeds both builds and loads this one on GPUs
/// of compute capability 9.0 and up.
pub const HOPPER_ARCH: &str = "sm_90";
/// The PTX ISA version Hopper's bulk copies need (`cp.async.bulk`: 8.0), as an LLVM feature.
pub const HOPPER_PTX_FEATURE: &str = "+ptx80";
/// The crate that holds the kernels.
pub const KERNEL_CRATE: &str = "gpu-kernels";

/// LLVM's loop-unroll threshold for the kernels (its own default is 150, or 300 at `-O3`).
pub const UNROLL_THRESHOLD: u32 = 1000;

/// What went wrong while building the PTX.
#[derive(Debug)]
pub enum Error {
    /// The architecture is not of the form `sm_XY`.
    BadArch(String),
    /// The nested cargo could not be started.
    Spawn(String, std::io::Error),
    /// The nested cargo failed; its standard error follows.
    Cargo(String),
    /// Cargo succeeded but the PTX file is missing.
    Missing(PathBuf),
    /// The PTX file could not be read, or written back with its register caps.
    Patch(PathBuf, std::io::Error),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::BadArch(arch) => write!(
                f,
                "PTX architecture `{arch}` is not of the form sm_XY (e.g. sm_70, sm_90); set {ARCH_ENV} or --arch accordingly"
            ),
            Error::Spawn(cargo, e) => {
                write!(f, "could not run `{cargo}` for the nvptx64 build: {e}")
            }
            Error::Cargo(stderr) => write!(
                f,
                "the nvptx64 build of {KERNEL_CRATE} failed (it needs the pinned nightly with rust-src and llvm-bitcode-linker, see rust-toolchain.toml):\n{stderr}"
            ),
            Error::Missing(path) => {
                write!(f, "the nvptx64 build succeeded but {} is missing", path.display())
            }
            Error::Patch(path, e) => {
                write!(f, "could not write the register caps into the PTX {}: {e}", path.display())
            }
        }
    }
}

impl std::error::Error for Error {}

/// One PTX build: which workspace, where to build, for which architecture.
#[derive(Clone, Debug)]
pub struct PtxBuild {
    /// The workspace root (holds `Cargo.toml` and `gpu-kernels/`).
    pub workspace_root: PathBuf,
    /// The nested build's own target directory; one subdirectory per architecture.
    pub target_dir: PathBuf,
    /// PTX target architecture, `sm_XY`.
    pub arch: String,
}

impl PtxBuild {
    /// A build for `arch`, or for [`ARCH_ENV`] / [`DEFAULT_ARCH`] when `arch` is `None`,
    /// in `<target_dir>/nvptx/<arch>`.
    pub fn new(workspace_root: &Path, target_dir: &Path, arch: Option<&str>) -> Result<Self, Error> {
        let arch = match arch {
            Some(arch) => arch.to_owned(),
            None => std::env::var(ARCH_ENV).unwrap_or_else(|_| DEFAULT_ARCH.to_owned()),
        };
        validate_arch(&arch)?;
        Ok(Self {
            workspace_root: workspace_root.to_owned(),
            target_dir: target_dir.join("nvptx").join(&arch),
            arch,
        })
    }

    /// Whether the architecture is sm_90 or later (built with PTX ISA 8.0).
    pub fn is_hopper_or_later(&self) -> bool {
        arch_number(&self.arch) >= arch_number(HOPPER_ARCH)
    }

    /// The directory whose changes require a rebuild.
    pub fn kernel_dir(&self) -> PathBuf {
        self.workspace_root.join(KERNEL_CRATE)
    }

    /// Where the PTX lands.
    pub fn ptx_path(&self) -> PathBuf {
        self.target_dir.join(TARGET).join("release").join("gpu_kernels.ptx")
    }

    /// Runs the nested nvptx64 build and returns the PTX path.
    pub fn run(&self) -> Result<PathBuf, Error> {
        let cargo = cargo_binary();
        let mut command = Command::new(&cargo);
        command
            .current_dir(&self.workspace_root)
            .args(["rustc", "--package", KERNEL_CRATE, "--lib", "--crate-type", "cdylib"])
            .args(["--target", TARGET, "-Zbuild-std=core", "--release", "--locked"])
            .arg("--target-dir")
            .arg(&self.target_dir);
        for (key, _) in std::env::vars_os() {
            let key = key.to_string_lossy();
            if inherited_from_outer_build(&key) {
                command.env_remove(key.as_ref());
            }
        }
        // LLVM's default unroll threshold leaves loops over arrays of more than about 16 keys
        // (the merge-path kernel's per-thread arrays) rolled, and a rolled loop indexes the
        // array, which puts it in local memory. A higher threshold unrolls them into
        // registers; it left every other kernel's PTX as it was when it was added.
        let mut flags =
            format!("-Ctarget-cpu={}\x1f-Cllvm-args=-unroll-threshold={UNROLL_THRESHOLD}", self.arch);
        if self.is_hopper_or_later() {
            flags.push_str(&format!("\x1f-Ctarget-feature={HOPPER_PTX_FEATURE}"));
        }
        command.env("CARGO_ENCODED_RUSTFLAGS", flags);
        let output = command.output().map_err(|e| Error::Spawn(cargo.clone(), e))?;
        if !output.status.success() {
            return Err(Error::Cargo(String::from_utf8_lossy(&output.stderr).into_owned()));
        }
        let ptx = self.ptx_path();
        if !ptx.is_file() {
            return Err(Error::Missing(ptx));
        }
        let text = std::fs::read_to_string(&ptx).map_err(|e| Error::Patch(ptx.clone(), e))?;
        let capped = cap_registers(&text, REGISTER_CAPS);
        if capped != text {
            std::fs::write(&ptx, capped).map_err(|e| Error::Patch(ptx.clone(), e))?;
        }
        Ok(ptx)
    }
}

/// 32-bit registers of one SM on every GPU from Volta (sm_70) to Hopper (sm_90): a block of
/// `t` threads fits an SM at `REGISTERS_PER_SM / t` registers a thread.
pub const REGISTERS_PER_SM: u32 = 65536;

/// Entry points whose registers a thread ptxas must hold to a cap, as (entry point, cap). The
/// cap goes into the PTX as the entry's `.maxnreg` directive, which ptxas and the driver's JIT
/// obey; Rust has no attribute for it.
///
/// The star25's `f32` kernel (`star_streaming.rs`, 16-byte rows, halo a plane ahead) launches in
/// blocks of 32×16 threads, one per SM (`tiles::STAR25_F32`): 128 registers at most, where ptxas
/// 13.5 would take 130 (held to 128 it spills nothing; why it takes more, and what that buys, is
/// at the planes' clamp in `star_streaming.rs`).
pub const REGISTER_CAPS: &[(&str, u32)] = &[("stencil_star4_v4_a1_f32", REGISTERS_PER_SM / 512)];

/// `ptx` with exactly the `.maxnreg` directives of `caps`: one after the parameter list of each
/// entry point in `caps`, none anywhere else. rustc writes none, so any already there is an
/// earlier patch's and goes: patching twice changes nothing, and a cap changed or removed takes
/// effect even when the nested build has nothing to recompile (its PTX is the patched file).
pub fn cap_registers(ptx: &str, caps: &[(&str, u32)]) -> String {
    let mut out = String::with_capacity(ptx.len() + 32 * caps.len());
    let mut pending: Option<u32> = None;
    for line in ptx.lines().filter(|line| !line.trim_start().starts_with(".maxnreg")) {
        out.push_str(line);
        out.push('\n');
        if let Some(name) = entry_name(line) {
            pending = caps.iter().find(|(entry, _)| *entry == name).map(|&(_, cap)| cap);
        } else if let Some(cap) = pending
            && line.starts_with(')')
        {
            pending = None;
            out.push_str(&format!(".maxnreg {cap}\n"));
        }
    }
    out
}

/// `sm_` followed by two or three digits.
pub fn validate_arch(arch: &str) -> Result<(), Error> {
    let digits = arch.strip_prefix("sm_").unwrap_or("");
    let ok = (2..=3).contains(&digits.len()) && digits.bytes().all(|b| b.is_ascii_digit());
    if ok { Ok(()) } else { Err(Error::BadArch(arch.to_owned())) }
}

/// The number of an `sm_XY` architecture (`sm_90` → 90); 0 if it is not of that form.
pub fn arch_number(arch: &str) -> u32 {
    arch.strip_prefix("sm_").and_then(|digits| digits.parse().ok()).unwrap_or(0)
}

/// The kernel entry points (`.entry` names) declared in a PTX module, in order.
pub fn entry_points(ptx: &str) -> Vec<&str> {
    ptx.lines().filter_map(entry_name).collect()
}

/// The entry point a PTX line declares, if it opens one (`.visible .entry name(`).
fn entry_name(line: &str) -> Option<&str> {
    let rest = line.trim_start().strip_prefix(".visible .entry ")?;
    Some(rest.split(['(', ' ']).next().unwrap_or(rest).trim())
}

/// The cargo that runs this build (the outer cargo sets `CARGO`), else `cargo` on `PATH`.
fn cargo_binary() -> String {
    std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned())
}

/// Variables of the outer cargo invocation that must not leak into the nested one.
fn inherited_from_outer_build(key: &str) -> bool {
    const BUILD_SCRIPT_VARS: [&str; 9] =
        ["TARGET", "HOST", "OUT_DIR", "PROFILE", "OPT_LEVEL", "DEBUG", "NUM_JOBS", "RUSTDOC", "MAKEFLAGS"];
    (key.starts_with("CARGO_") && key != "CARGO_HOME")
        || key == "CARGO"
        || key.starts_with("RUSTC")
        || key == "RUSTFLAGS"
        || key == "RUSTDOCFLAGS"
        || BUILD_SCRIPT_VARS.contains(&key)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arch_must_look_like_sm_xy() {
        for good in ["sm_70", "sm_90", "sm_100", "sm_120"] {
            assert!(validate_arch(good).is_ok(), "{good}");
        }
        for bad in ["", "sm70", "sm_", "sm_9", "compute_90", "sm_90a", "sm_1000", "SM_90"] {
            let err = validate_arch(bad).unwrap_err().to_string();
            assert!(err.contains("sm_XY"), "{bad}: {err}");
        }
    }

    #[test]
    fn hopper_builds_are_told_apart_by_number() {
        assert_eq!((arch_number("sm_70"), arch_number("sm_90"), arch_number("sm_120")), (70, 90, 120));
        let build = |arch| PtxBuild::new(Path::new("/w"), Path::new("/t"), Some(arch)).unwrap();
        assert!(!build("sm_70").is_hopper_or_later() && !build("sm_89").is_hopper_or_later());
        assert!(build("sm_90").is_hopper_or_later() && build("sm_100").is_hopper_or_later());
        assert_eq!(build("sm_90").target_dir, Path::new("/t/nvptx/sm_90"));
    }

    #[test]
    fn entry_points_are_read_from_ptx() {
        let ptx = ".version 7.0\n.visible .entry stencil7_basic_f32(\n\t.param .u64 a\n)\n.func helper(\n.visible .entry merge_basic_i32 (\n";
        assert_eq!(entry_points(ptx), ["stencil7_basic_f32", "merge_basic_i32"]);
    }

    #[test]
    fn register_caps_go_after_the_parameters_of_their_entry_only_once() {
        let ptx = ".visible .entry a(\n\t.param .u64 a_0\n)  // @a\n{\n}\n.visible .entry b(\n)\n{\n}\n";
        let capped = cap_registers(ptx, &[("b", 96)]);
        assert_eq!(
            capped,
            ".visible .entry a(\n\t.param .u64 a_0\n)  // @a\n{\n}\n.visible .entry b(\n)\n.maxnreg 96\n{\n}\n"
        );
        assert_eq!(cap_registers(&capped, &[("b", 96)]), capped);
        assert_eq!(cap_registers(ptx, &[("c", 96)]), ptx);
    }

    #[test]
    fn a_cap_changed_or_removed_replaces_the_earlier_patch() {
        let ptx = ".visible .entry b(\n)\n{\n}\n";
        let capped = cap_registers(ptx, &[("b", 96)]);
        assert_eq!(cap_registers(&capped, &[("b", 64)]), ".visible .entry b(\n)\n.maxnreg 64\n{\n}\n");
        assert_eq!(cap_registers(&capped, &[]), ptx);
    }

    #[test]
    fn outer_build_variables_are_dropped_but_cargo_home_kept() {
        for key in [
            "CARGO",
            "CARGO_TARGET_DIR",
            "CARGO_ENCODED_RUSTFLAGS",
            "RUSTC",
            "RUSTC_WRAPPER",
            "RUSTFLAGS",
            "OUT_DIR",
        ] {
            assert!(inherited_from_outer_build(key), "{key}");
        }
        for key in ["CARGO_HOME", "RUSTUP_TOOLCHAIN", "PATH", "HOME"] {
            assert!(!inherited_from_outer_build(key), "{key}");
        }
    }
}
