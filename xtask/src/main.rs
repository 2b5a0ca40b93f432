//! `cargo xtask build-ptx [--arch sm_XY] [--ptxas-arch sm_XY]`: builds the kernels to PTX
//! through the same code path as the host's build script, then assembles the PTX with
//! `ptxas -v` (from `PTXAS`, or `ptxas` on `PATH`) and prints, per entry point, registers,
//! shared memory, stack frame and spills. Without `ptxas` it says so and still succeeds.
//!
//! `cargo xtask bench-report [--criterion-dir DIR] [--out FILE] [--commit REV] [--peers FILE]
//! [--merge-peers FILE] [--scaling FILE]`: writes `docs/benchmarks.md` and SVG charts in
//! `docs/benchmarks/` from criterion's saved results, the peers' (`benches/peers/stencil_peers.py`,
//! `benches/peers/merge_peers.py`) and the several-GPU runs' (`stencil --gpus … --json`) (see
//! `bench_report/` and `scaling_report.rs`).

mod bench_report;
mod scaling_report;

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(name = "cargo xtask", about = "Project chores for the PMPP stencil and merge kernels")]
struct Cli {
    #[command(subcommand)]
    task: Task,
}

#[derive(Subcommand)]
enum Task {
    /// Build the kernels' PTX and report each entry point's resources from `ptxas -v`.
    BuildPtx {
        /// PTX target architecture (default: $GPU_KERNELS_ARCH, else sm_70, which loads on every GPU from Volta up).
        #[arg(long)]
        arch: Option<String>,
        /// GPU that `ptxas` assembles the PTX for (CUDA 13's ptxas no longer targets sm_70).
        #[arg(long, default_value = "sm_90")]
        ptxas_arch: String,
    },
    /// Write docs/benchmarks.md and SVG charts in docs/benchmarks/ from criterion's saved results.
    BenchReport {
        /// Criterion's output directory (default: $CRITERION_HOME, else $CARGO_TARGET_DIR/criterion, else target/criterion).
        #[arg(long)]
        criterion_dir: Option<PathBuf>,
        /// The page to write; charts go in the folder of the same name beside it (default: docs/benchmarks.md).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Commit to stamp (default: `git rev-parse --short HEAD`).
        #[arg(long)]
        commit: Option<String>,
        /// Peers' results from benches/peers/stencil_peers.py, added to the stencil_variants tables
        /// (default: <criterion dir>/stencil_peers.json, if it exists).
        #[arg(long)]
        peers: Option<PathBuf>,
        /// Peers' results from benches/peers/merge_peers.py (thrust::merge, cub::DeviceMerge), added
        /// to the merge_variants tables (default: <criterion dir>/merge_peers.json, if it exists).
        #[arg(long)]
        merge_peers: Option<PathBuf>,
        /// Several-GPU runs (`stencil --gpus … --json` reports gathered into one JSON array), as a
        /// table and charts of their own (default: <criterion dir>/stencil_scaling.json, if it exists).
        #[arg(long)]
        scaling: Option<PathBuf>,
    },
}

/// One entry point's resources as `ptxas -v` reports them.
#[derive(Debug, Default, PartialEq)]
struct Resources {
    entry: String,
    registers: u32,
    static_shared_bytes: u32,
    stack_bytes: u32,
    spill_stores: u32,
    spill_loads: u32,
}

/// Parses `ptxas -v` output into one record per entry function, in order.
fn parse_ptxas(report: &str) -> Vec<Resources> {
    let number_before = |line: &str, unit: &str| -> Option<u32> {
        let at = line.find(unit)?;
        line[..at].split_whitespace().last()?.parse().ok()
    };
    let mut entries: Vec<Resources> = Vec::new();
    // The function the last "Function properties for" line named: ptxas also reports the
    // functions an entry calls (e.g. `panic_fmt`), whose stack frames are not the entry's.
    let mut properties_of = String::new();
    for line in report.lines() {
        if let Some(rest) = line.split("Compiling entry function '").nth(1) {
            let entry = rest.split('\'').next().unwrap_or(rest).to_owned();
            entries.push(Resources { entry, ..Default::default() });
        } else if let Some(name) = line.split("Function properties for ").nth(1) {
            properties_of = name.trim().to_owned();
        } else if let Some(current) = entries.last_mut() {
            if line.contains("bytes stack frame") {
                if properties_of != current.entry {
                    continue;
                }
                current.stack_bytes = number_before(line, "bytes stack frame").unwrap_or(0);
                current.spill_stores = number_before(line, "bytes spill stores").unwrap_or(0);
                current.spill_loads = number_before(line, "bytes spill loads").unwrap_or(0);
            } else if line.contains("Used") && line.contains("registers") {
                current.registers = number_before(line, "registers").unwrap_or(0);
                current.static_shared_bytes = number_before(line, "bytes smem").unwrap_or(0);
            }
        }
    }
    entries
}

/// `PTXAS`, else `ptxas` on `PATH`.
fn find_ptxas() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("PTXAS") {
        return Some(PathBuf::from(path));
    }
    std::env::split_paths(&std::env::var_os("PATH")?).map(|dir| dir.join("ptxas")).find(|p| p.is_file())
}

fn build_ptx(arch: Option<&str>, ptxas_arch: &str) -> Result<(), String> {
    let workspace_root =
        Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("xtask/ sits in the workspace");
    let target_dir = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace_root.join("target"));
    ptx_build::validate_arch(ptxas_arch).map_err(|e| e.to_string())?;
    let build = ptx_build::PtxBuild::new(workspace_root, &target_dir, arch).map_err(|e| e.to_string())?;
    eprintln!("building PTX for {} (nested nvptx64 build in {})", build.arch, build.target_dir.display());
    let ptx_path = build.run().map_err(|e| e.to_string())?;
    let ptx =
        std::fs::read_to_string(&ptx_path).map_err(|e| format!("reading {}: {e}", ptx_path.display()))?;
    let entries = ptx_build::entry_points(&ptx);
    println!("{}: {} entry points, {} bytes", ptx_path.display(), entries.len(), ptx.len());

    let Some(ptxas) = find_ptxas() else {
        println!(
            "ptxas not found (set PTXAS or put CUDA's ptxas on PATH, e.g. from the PyPI package nvidia-cuda-nvcc): no resource report"
        );
        return Ok(());
    };
    let output = Command::new(&ptxas)
        .args(["-v", "--gpu-name", ptxas_arch, "-o", "/dev/null"])
        .arg(&ptx_path)
        .output()
        .map_err(|e| format!("could not run {}: {e}", ptxas.display()))?;
    let report = String::from_utf8_lossy(&output.stderr);
    if !output.status.success() {
        return Err(format!("{} failed to assemble the PTX for {ptxas_arch}:\n{report}", ptxas.display()));
    }
    let resources = parse_ptxas(&report);
    let launched = host::kernels::entry_points();
    println!("assembled for {ptxas_arch} by {}:", ptxas.display());
    println!(
        "{:<32} {:>9} {:>13} {:>13} {:>11} {:>12} {:>11}",
        "entry point", "registers", "static smem", "launch smem", "stack", "spill st", "spill ld"
    );
    for r in &resources {
        let dynamic =
            launched.iter().find(|(name, _)| *name == r.entry).map_or("-".into(), |(_, b)| format!("{b} B"));
        println!(
            "{:<32} {:>9} {:>11} B {:>13} {:>9} B {:>10} B {:>9} B",
            r.entry,
            r.registers,
            r.static_shared_bytes,
            dynamic,
            r.stack_bytes,
            r.spill_stores,
            r.spill_loads
        );
    }
    if resources.len() != entries.len() {
        return Err(format!(
            "ptxas reported {} entry points, the PTX declares {}",
            resources.len(),
            entries.len()
        ));
    }
    if let Some(missing) = launched.iter().find(|(name, _)| !entries.contains(&name.as_str())) {
        return Err(format!("the host launches {}, which the PTX lacks", missing.0));
    }
    Ok(())
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match &cli.task {
        Task::BuildPtx { arch, ptxas_arch } => build_ptx(arch.as_deref(), ptxas_arch),
        Task::BenchReport { criterion_dir, out, commit, peers, merge_peers, scaling } => {
            bench_report::run(&bench_report::Options {
                criterion_dir: criterion_dir.clone(),
                out: out.clone(),
                commit: commit.clone(),
                peers: peers.clone(),
                merge_peers: merge_peers.clone(),
                scaling: scaling.clone(),
            })
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("xtask: error: {e}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ptxas_report_is_parsed_per_entry() {
        let report = "ptxas info    : 0 bytes gmem\n\
ptxas info    : Compiling entry function 'stencil7_basic_f32' for 'sm_90'\n\
ptxas info    : Function properties for stencil7_basic_f32\n\
    8 bytes stack frame, 4 bytes spill stores, 12 bytes spill loads\n\
ptxas info    : Used 21 registers, used 1 barriers, 1024 bytes smem, 388 bytes cmem[0]\n\
ptxas info    : Compiling entry function 'merge_basic_i32' for 'sm_90'\n\
ptxas info    : Function properties for merge_basic_i32\n\
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n\
ptxas info    : Used 17 registers, used 0 barriers\n\
ptxas info    : Function properties for _RNvNtCs0_4core9panicking9panic_fmt\n\
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n\
ptxas info    : Compiling entry function 'stencil_star4_v2_r4_a0_f64' for 'sm_90'\n\
ptxas info    : Function properties for stencil_star4_v2_r4_a0_f64\n\
    1256 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n\
ptxas info    : Used 136 registers, used 0 barriers, 1256 bytes cumulative stack size\n\
ptxas info    : Function properties for _RNvNtCs0_4core9panicking9panic_fmt\n\
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n";
        let parsed = parse_ptxas(report);
        assert_eq!(
            parsed[0],
            Resources {
                entry: "stencil7_basic_f32".into(),
                registers: 21,
                static_shared_bytes: 1024,
                stack_bytes: 8,
                spill_stores: 4,
                spill_loads: 12
            }
        );
        assert_eq!(parsed[1].entry, "merge_basic_i32");
        assert_eq!((parsed[1].registers, parsed[1].static_shared_bytes), (17, 0));
        // A called function's properties, reported after the entry's, are not the entry's.
        assert_eq!(parsed.len(), 3);
        assert_eq!((parsed[2].registers, parsed[2].stack_bytes), (136, 1256));
    }
}
