//! `cargo xtask bench-report`: turns criterion's saved results into `docs/benchmarks.md` and SVG
//! charts in `docs/benchmarks/`.
//!
//! Benchmarks are found by walking the criterion directory for `new/benchmark.json` (criterion's
//! latest run of each benchmark; baselines live in sibling folders and are ignored), each read with
//! its `new/estimates.json`. Directory names are never parsed: criterion mangles `/`, `^` and other
//! characters in them, so the ids come from `benchmark.json` itself.
//!
//! Naming convention (see [`groups::Role`] and [`groups::Suite`]): `group_id` is
//! `<suite>/<case>` (everything after the first `/` is the case), `function_id` is `copy` (the
//! device-to-device copy ceiling), `rust/<kernel>` or `cuda/<kernel>`, `value_str` is the swept
//! parameter (empty for variant groups) and the throughput is `Elements` (grid points or keys).
//!
//! Peer rows (`torch.compile`, `jax.jit`, ...) come from `stencil_peers.json`, written by
//! `benches/peers/stencil_peers.py` in the same device session (see [`peers::Peers`]); they join
//! the `stencil_variants/<nz>x<ny>x<nx>-<dtype>` group of the same grid and element type. Merge peer
//! rows (`thrust::merge`, `cub::DeviceMerge`) come from `merge_peers.json`, written by
//! `benches/peers/merge_peers.py` (see [`peers::MergePeers`]); they join the
//! `merge_variants/<case>-<dtype>` group of the same sizes, distribution and key type.
//!
//! One concern a file: [`results`] reads criterion's files, [`groups`] gathers and orders them,
//! [`peers`] reads the peers' JSON and gives each group its rows, [`stamp`] is the page's header,
//! [`page`] writes the Markdown (tables and commentary) and [`chart`] the SVG charts; this file
//! ties them together.

mod chart;
mod groups;
mod page;
mod peers;
mod results;
mod stamp;
#[cfg(test)]
mod tests;

use std::path::{Path, PathBuf};

use crate::scaling_report::SCALING_COMMANDS;
use crate::scaling_report::SCALING_FILE;
use groups::group;
use page::{parse_commentary, render};
use peers::{attach_merge_peers, attach_peers, merge_peers_or_warn, peers_or_warn};
use results::discover;
use stamp::{Stamp, git_commit};

/// What produces the results this report reads.
const BENCH_COMMANDS: &str =
    "`cargo bench --bench stencil_variants` and `cargo bench --bench merge_variants`";

/// The peers' results, where `cargo xtask bench-report` looks for them in the criterion directory.
const PEERS_FILE: &str = "stencil_peers.json";

/// What produces the peers' results.
const PEERS_COMMAND: &str = "python3 benches/peers/stencil_peers.py --ours target/release/stencil --out target/criterion/stencil_peers.json";

/// What adds the other stencil shapes' peers to the same file (the `stencil_shapes` groups' rows).
const SHAPE_PEERS_COMMAND: &str = "for s in star13 star25 box27; do python3 benches/peers/stencil_peers.py --ours target/release/stencil --stencil $s --grids 512 --append --out target/criterion/stencil_peers.json; done";

/// The script that writes [`PEERS_FILE`].
const PEERS_SCRIPT: &str = "benches/peers/stencil_peers.py";

/// The merge peers' results, where `cargo xtask bench-report` looks for them in the criterion
/// directory.
const MERGE_PEERS_FILE: &str = "merge_peers.json";

/// What produces the merge peers' results.
const MERGE_PEERS_COMMAND: &str = "python3 benches/peers/merge_peers.py --ours target/release/merge --out target/criterion/merge_peers.json";

/// The script that writes [`MERGE_PEERS_FILE`].
const MERGE_PEERS_SCRIPT: &str = "benches/peers/merge_peers.py";

/// The criterion suite of the merges by key (`benches/benches/merge_variants.rs`), whose groups
/// take the merge peers' rows with values.
const MERGE_BY_KEY_SUITE: &str = "merge_by_key";
/// The criterion groups of the set operations (`merge_set/<case>-<dtype>-<operation>`), which
/// take the merge peers' rows of the same operation.
const MERGE_SET_SUITE: &str = "merge_set";

/// Command-line options of `cargo xtask bench-report`.
pub struct Options {
    pub criterion_dir: Option<PathBuf>,
    pub out: Option<PathBuf>,
    pub commit: Option<String>,
    /// The peers' JSON (default: `<criterion dir>/stencil_peers.json`, if it exists).
    pub peers: Option<PathBuf>,
    /// The merge peers' JSON (default: `<criterion dir>/merge_peers.json`, if it exists).
    pub merge_peers: Option<PathBuf>,
    /// The several-GPU runs' JSON (default: `<criterion dir>/stencil_scaling.json`, if it exists).
    pub scaling: Option<PathBuf>,
}

fn read_json<T: serde::de::DeserializeOwned>(path: &Path) -> Result<T, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("reading {}: {e}", path.display()))?;
    serde_json::from_str(&text).map_err(|e| format!("parsing {}: {e}", path.display()))
}

/// What [`generate`] wrote.
pub struct Written {
    pub groups: usize,
    pub benchmarks: usize,
    pub charts: Vec<PathBuf>,
}

/// Where `generate` reads the peers' and the several-GPU runs' results: each file is optional.
pub struct PeerFiles {
    /// `stencil_peers.json`.
    pub stencil: PathBuf,
    /// `merge_peers.json`.
    pub merge: PathBuf,
    /// `stencil_scaling.json` ([`crate::scaling_report`]).
    pub scaling: PathBuf,
}

/// Reads the results in `criterion_dir` and the peers' in `peer_files` (those that exist) and
/// writes the page `out`, its charts in `<out stem>/` beside it, with the commentary from
/// `<out stem>-commentary.md` beside it.
pub fn generate(
    criterion_dir: &Path,
    peer_files: &PeerFiles,
    out: &Path,
    commit: String,
    today: String,
) -> Result<Written, String> {
    let scaling = crate::scaling_report::read(&peer_files.scaling)?;
    // A page of several-GPU runs alone (e.g. from a machine with several GPUs and no criterion
    // run) is allowed; without them, no criterion results is an error.
    let benches = match discover(criterion_dir) {
        Err(_) if scaling.is_some() => Vec::new(),
        found => found?,
    };
    let count = benches.len();
    let mut groups = group(benches);
    let peers = peers_or_warn(&peer_files.stencil);
    attach_peers(&mut groups, &peers.rows);
    let merge_peers = merge_peers_or_warn(&peer_files.merge);
    attach_merge_peers(&mut groups, &merge_peers.rows);
    let mut stamp = Stamp::read(&criterion_dir.join("gpu-info.json"), commit, today);
    stamp.peers = (!peers.rows.is_empty()).then(|| peers.describe());
    stamp.merge_peers = merge_peers.rows.iter().any(|r| !r.is_ours()).then(|| merge_peers.describe());
    let out_dir = out.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let stem = out.file_stem().and_then(|s| s.to_str()).unwrap_or("benchmarks");
    let commentary_file = format!("{stem}-commentary.md");
    let commentary_path = out_dir.join(&commentary_file);
    let commentary = if commentary_path.is_file() {
        let text = std::fs::read_to_string(&commentary_path)
            .map_err(|e| format!("reading {}: {e}", commentary_path.display()))?;
        parse_commentary(&text)
    } else {
        Vec::new()
    };
    let mut report = render(&groups, &stamp, &commentary, stem, &commentary_file)?;
    if let Some(runs) = scaling {
        let (section, charts) = crate::scaling_report::render(&runs, stem)?;
        report.markdown.push_str("\n\n");
        report.markdown.push_str(section.trim_end());
        report.charts.extend(charts);
    }
    let charts_dir = out_dir.join(stem);
    std::fs::create_dir_all(&charts_dir).map_err(|e| format!("creating {}: {e}", charts_dir.display()))?;
    let mut written = Vec::new();
    for (file, svg) in &report.charts {
        let path = charts_dir.join(file);
        std::fs::write(&path, svg).map_err(|e| format!("writing {}: {e}", path.display()))?;
        written.push(path);
    }
    std::fs::write(out, report.markdown + "\n").map_err(|e| format!("writing {}: {e}", out.display()))?;
    if let Ok(entries) = std::fs::read_dir(&charts_dir) {
        for entry in entries.flatten() {
            let path = entry.path();
            if path.extension().is_some_and(|e| e == "svg") && !written.contains(&path) {
                eprintln!("xtask: note: {} is not from this run (stale chart?)", path.display());
            }
        }
    }
    Ok(Written { groups: groups.len(), benchmarks: count, charts: written })
}

/// `cargo xtask bench-report`.
pub fn run(options: &Options) -> Result<(), String> {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("xtask/ sits in the workspace");
    let criterion_dir = options.criterion_dir.clone().unwrap_or_else(|| {
        std::env::var_os("CRITERION_HOME").map(PathBuf::from).unwrap_or_else(|| {
            std::env::var_os("CARGO_TARGET_DIR")
                .map(PathBuf::from)
                .unwrap_or_else(|| workspace.join("target"))
                .join("criterion")
        })
    });
    let out = options.out.clone().unwrap_or_else(|| workspace.join("docs").join("benchmarks.md"));
    let commit = options.commit.clone().unwrap_or_else(|| git_commit(workspace));
    let peers = options.peers.clone().unwrap_or_else(|| criterion_dir.join(PEERS_FILE));
    if options.peers.is_some() && !peers.exists() {
        eprintln!("xtask: warning: {} not found: no peer rows", peers.display());
    }
    let merge_peers = options.merge_peers.clone().unwrap_or_else(|| criterion_dir.join(MERGE_PEERS_FILE));
    if options.merge_peers.is_some() && !merge_peers.exists() {
        eprintln!("xtask: warning: {} not found: no merge peer rows", merge_peers.display());
    }
    let scaling =
        options.scaling.clone().unwrap_or_else(|| criterion_dir.join(crate::scaling_report::SCALING_FILE));
    if options.scaling.is_some() && !scaling.exists() {
        eprintln!("xtask: warning: {} not found: no several-GPU section", scaling.display());
    }
    let peer_files = PeerFiles { stencil: peers, merge: merge_peers, scaling };
    let written = generate(&criterion_dir, &peer_files, &out, commit, host::report::today_utc())?;
    println!(
        "wrote {} ({} groups, {} benchmarks from {}) and {} charts in {}",
        out.display(),
        written.groups,
        written.benchmarks,
        criterion_dir.display(),
        written.charts.len(),
        written.charts.first().and_then(|p| p.parent()).map_or("-".into(), |p| p.display().to_string())
    );
    Ok(())
}
