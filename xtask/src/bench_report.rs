//! `cargo xtask bench-report`: turns criterion's saved results into `docs/benchmarks.md` and SVG
//! charts in `docs/benchmarks/`.
//!
//! Benchmarks are found by walking the criterion directory for `new/benchmark.json` (criterion's
//! latest run of each benchmark; baselines live in sibling folders and are ignored), each read with
//! its `new/estimates.json`. Directory names are never parsed: criterion mangles `/`, `^` and other
//! characters in them, so the ids come from `benchmark.json` itself.
//!
//! Naming convention (see [`Role`] and [`Suite`]): `group_id` is `<suite>/<case>` (everything after
//! the first `/` is the case), `function_id` is `copy` (the device-to-device copy ceiling),
//! `rust/<kernel>` or `cuda/<kernel>`, `value_str` is the swept parameter (empty for variant groups)
//! and the throughput is `Elements` (grid points or keys).
//!
//! Peer rows (`torch.compile`, `jax.jit`, ...) come from `stencil_peers.json`, written by
//! `benches/peers/stencil_peers.py` in the same device session (see [`Peers`]); they join the
//! `stencil_variants/<nz>x<ny>x<nx>-<dtype>` group of the same grid and element type. Merge peer
//! rows (`thrust::merge`, `cub::DeviceMerge`) come from `merge_peers.json`, written by
//! `benches/peers/merge_peers.py` (see [`MergePeers`]); they join the
//! `merge_variants/<case>-<dtype>` group of the same sizes, distribution and key type.

use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use plotters::prelude::*;

use crate::scaling_report::{SCALING_COMMANDS, SCALING_FILE};
use plotters::style::text_anchor::{HPos, Pos, VPos};
use serde::Deserialize;

/// What produces the results this report reads.
const BENCH_COMMANDS: &str =
    "`cargo bench --bench stencil_variants` and `cargo bench --bench merge_variants`";

/// Kernel names in the order the book introduces them; unknown kernels sort after, by name.
const KERNEL_ORDER: [&str; 8] =
    ["basic", "shared-tiled", "coarsened", "register-tiled", "streaming", "tiled", "circular", "merge-path"];

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

/// `new/benchmark.json`, as criterion 0.8 writes it (`report::BenchmarkId`).
#[derive(Deserialize)]
struct BenchmarkJson {
    group_id: String,
    function_id: Option<String>,
    value_str: Option<String>,
    /// `{"Elements": n}`, `{"Bytes": n}`, `{"ElementsAndBytes": {"elements": n, "bytes": b}}`, ... or null.
    throughput: Option<serde_json::Value>,
}

/// The part of `new/estimates.json` (criterion 0.8's `estimate::Estimates`) the report uses; times in ns.
#[derive(Deserialize)]
struct EstimatesJson {
    median: EstimateJson,
}

#[derive(Deserialize)]
struct EstimateJson {
    point_estimate: f64,
}

/// One benchmark's latest result.
#[derive(Debug, Clone, PartialEq)]
pub struct Bench {
    pub group_id: String,
    /// `function_id`, empty when criterion has none.
    pub function: String,
    /// `value_str`, `None` when absent or empty.
    pub value: Option<String>,
    /// Elements per iteration, from an `Elements` (or `ElementsAndBytes`) throughput.
    pub elements: Option<u64>,
    /// Median time per iteration, ns.
    pub median_ns: f64,
}

impl Bench {
    /// Giga-elements per second at the median time.
    pub fn rate(&self) -> Option<f64> {
        self.elements.map(|n| n as f64 / self.median_ns)
    }

    fn role(&self) -> Role<'_> {
        Role::of(&self.function)
    }

    /// The member's name: its function, or its parameter when it has no function.
    fn name(&self) -> &str {
        if self.function.is_empty() { self.value.as_deref().unwrap_or("") } else { &self.function }
    }
}

/// `stencil_peers.json`, as `benches/peers/stencil_peers.py` writes it (fields the report does not
/// use are ignored).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct Peers {
    pub gpu: Option<String>,
    pub torch: Option<String>,
    pub jax: Option<String>,
    pub date: Option<String>,
    pub rows: Vec<PeerRow>,
}

/// One peer on one grid and element type.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct PeerRow {
    /// `torch.compile`, `jax.jit`, `ours/streaming`, ...
    pub peer: String,
    /// `[nz, ny, nx]`.
    pub grid: [u64; 3],
    /// `f32` or `f64`.
    pub dtype: String,
    /// The stencil shape (`star7` when absent, as in reports before shapes).
    #[serde(default)]
    pub stencil: Option<String>,
    /// Median time of one step; `None` when the peer was skipped.
    pub ms_per_step: Option<f64>,
    /// The copy timed in the peer's own process over the peer's time, in percent.
    pub percent_of_copy: Option<f64>,
    /// `OK`, `FAIL` or `skipped: <reason>`.
    pub check: String,
}

impl PeerRow {
    /// The `stencil_variants` group of the same grid and element type, or for a shape other than
    /// the 7-point star the `stencil_shapes` one.
    pub fn group_id(&self) -> String {
        let [nz, ny, nx] = self.grid;
        let suite = match self.stencil.as_deref() {
            None | Some("star7") => "stencil_variants",
            Some(_) => "stencil_shapes",
        };
        format!("{suite}/{nz}x{ny}x{nx}-{}", self.dtype)
    }

    /// The row as the group's table and chart show it.
    pub fn to_peer(&self) -> Peer {
        let [nz, ny, nx] = self.grid;
        Peer {
            peer: self.peer.clone(),
            median_ns: ms_to_ns(self.ms_per_step),
            elements: nz * ny * nx,
            percent_of_copy: self.percent_of_copy,
            check: self.check.clone(),
            script: PEERS_SCRIPT,
        }
    }
}

/// A median in ms as ns, when it is a positive number.
fn ms_to_ns(ms: Option<f64>) -> Option<f64> {
    ms.filter(|ms| ms.is_finite() && *ms > 0.0).map(|ms| ms * 1e6)
}

/// A peer's row as a group's table and chart show it: a row of `stencil_peers.json`
/// ([`PeerRow`]) or of `merge_peers.json` ([`MergePeerRow`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Peer {
    /// `torch.compile`, `thrust::merge`, `ours/streaming`, ...
    pub peer: String,
    /// Median time in ns; `None` when the peer was skipped.
    pub median_ns: Option<f64>,
    /// Elements per run: grid points (stencil) or keys m + n (merge).
    pub elements: u64,
    /// The copy timed in the peer's own process over the peer's time, in percent.
    pub percent_of_copy: Option<f64>,
    /// `OK`, `FAIL`, `FAIL: <why>` or `skipped: <reason>`.
    pub check: String,
    /// The script that measured it.
    pub script: &'static str,
}

impl Peer {
    fn ok(&self) -> bool {
        self.check == "OK"
    }

    /// Elements per ns (billions per second).
    fn rate(&self) -> Option<f64> {
        self.median_ns.map(|ns| self.elements as f64 / ns)
    }

    /// The table's name of the row: `peer/<name>`, marked when its result is not valid.
    fn label(&self) -> String {
        let mark = if self.ok() {
            ""
        } else if self.check.starts_with("skipped") {
            " (skipped)"
        } else {
            " (check FAIL)"
        };
        format!("`peer/{}`{mark}", self.peer)
    }
}

impl Peers {
    /// Where the peers' numbers come from, for the page's header.
    fn describe(&self) -> String {
        let or_unknown = |v: &Option<String>| v.clone().unwrap_or_else(|| "unknown".into());
        format!(
            "`benches/peers/stencil_peers.py` on {}, {}: torch {}, JAX {}",
            or_unknown(&self.gpu),
            or_unknown(&self.date),
            or_unknown(&self.torch),
            self.jax.as_deref().unwrap_or("not installed")
        )
    }
}

/// `merge_peers.json`, as `benches/peers/merge_peers.py` writes it (fields the report does not
/// use are ignored).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct MergePeers {
    pub gpu: Option<String>,
    /// `nvcc --version`'s release, e.g. `13.0 (V13.0.88)`.
    pub nvcc: Option<String>,
    /// The CCCL (thrust, CUB) version the program was compiled with.
    pub cccl: Option<String>,
    pub date: Option<String>,
    pub rows: Vec<MergePeerRow>,
}

/// One merge (a peer, or one of our variants as `ours/<variant>`) on one case and key type.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct MergePeerRow {
    /// `thrust::merge`, `cub::DeviceMerge`, `ours/merge-path`, ...
    pub peer: String,
    /// Keys in A and in B.
    pub m: u64,
    pub n: u64,
    /// `uniform`, `few-unique` or `all-equal`.
    pub dist: String,
    /// `i32`, `u32`, `i64`, `f32` or `f64`.
    pub dtype: String,
    /// The values of a merge by key (`u32` or `u64`, `merge_peers.py --values`); `None` for keys
    /// alone.
    #[serde(default)]
    pub values: Option<String>,
    /// The set operation (`union`, `intersection`, `difference`, `symmetric-difference`,
    /// `merge_peers.py --set`); `None` for a merge.
    #[serde(default)]
    pub set: Option<String>,
    /// Median time of one merge; `None` when the peer was skipped.
    pub ms: Option<f64>,
    /// The copy timed in the peer's own process over the peer's time, in percent.
    pub percent_of_copy: Option<f64>,
    /// `OK`, `FAIL`, `FAIL: <why>` or `skipped: <reason>`.
    pub check: String,
}

/// `2^K` for a power of two, else the decimal number: how merge cases name their sizes.
pub fn count_label(count: u64) -> String {
    if count.is_power_of_two() { format!("2^{}", count.trailing_zeros()) } else { count.to_string() }
}

impl MergePeerRow {
    /// The `merge_variants` group of the same case and key type: `merge_variants/2^A+2^B-<dtype>`,
    /// with `-<dist>` before the key type unless the keys are uniform; for a merge by key the
    /// `merge_by_key` group, `merge_by_key/2^A+2^B-<dtype>+<values>`; for a set operation the
    /// `merge_set` group, `merge_set/2^A+2^B-<dtype>-<operation>` (`symmetric_difference` with an
    /// underscore, as the benchmark names it).
    pub fn group_id(&self) -> String {
        let dist = if self.dist == "uniform" { String::new() } else { format!("-{}", self.dist) };
        let case = format!("{}+{}{dist}-{}", count_label(self.m), count_label(self.n), self.dtype);
        match (&self.set, &self.values) {
            (Some(operation), _) => format!("{MERGE_SET_SUITE}/{case}-{}", operation.replace('-', "_")),
            (None, Some(values)) => format!("{MERGE_BY_KEY_SUITE}/{case}+{values}"),
            (None, None) => format!("merge_variants/{case}"),
        }
    }

    /// Whether the row is one of our kernels (`ours/<variant>`), which the group has from criterion.
    pub fn is_ours(&self) -> bool {
        self.peer.starts_with("ours/")
    }

    /// The row as the group's table and chart show it.
    pub fn to_peer(&self) -> Peer {
        Peer {
            peer: self.peer.clone(),
            median_ns: ms_to_ns(self.ms),
            elements: self.m + self.n,
            percent_of_copy: self.percent_of_copy,
            check: self.check.clone(),
            script: MERGE_PEERS_SCRIPT,
        }
    }
}

impl MergePeers {
    /// Where the merge peers' numbers come from, for the page's header.
    fn describe(&self) -> String {
        let or_unknown = |v: &Option<String>| v.clone().unwrap_or_else(|| "unknown".into());
        format!(
            "`{MERGE_PEERS_SCRIPT}` on {}, {}: nvcc {}, CCCL {}",
            or_unknown(&self.gpu),
            or_unknown(&self.date),
            or_unknown(&self.nvcc),
            or_unknown(&self.cccl)
        )
    }
}

/// Reads a JSON file that may be absent: `Ok(None)` when there is no such file, `Err` when it
/// cannot be parsed.
fn read_optional_json<T: serde::de::DeserializeOwned>(path: &Path) -> Result<Option<T>, String> {
    if !path.exists() {
        return Ok(None);
    }
    read_json(path).map(Some)
}

/// Reads the peers' JSON: `Ok(None)` when there is no such file, `Err` when it cannot be parsed.
pub fn read_peers(path: &Path) -> Result<Option<Peers>, String> {
    read_optional_json(path)
}

/// Reads the merge peers' JSON: `Ok(None)` when there is no such file, `Err` when it cannot be
/// parsed.
pub fn read_merge_peers(path: &Path) -> Result<Option<MergePeers>, String> {
    read_optional_json(path)
}

/// The results of a peers file, or none, with a warning, when the file is malformed.
fn or_warn<T: Default>(read: Result<Option<T>, String>) -> T {
    read.unwrap_or_else(|e| {
        eprintln!("xtask: warning: no peer rows: {e}");
        None
    })
    .unwrap_or_default()
}

/// The peers' results for the report: none, with a warning, when the file is malformed.
fn peers_or_warn(path: &Path) -> Peers {
    or_warn(read_peers(path))
}

/// The merge peers' results for the report: none, with a warning, when the file is malformed.
fn merge_peers_or_warn(path: &Path) -> MergePeers {
    or_warn(read_merge_peers(path))
}

/// Notes the group ids of peer rows that match no group.
fn note_unmatched(groups: &[Group], ids: impl Iterator<Item = String>) {
    let mut unmatched: Vec<String> = ids.filter(|id| !groups.iter().any(|g| g.id == *id)).collect();
    unmatched.sort_by(|a, b| natural_cmp(a, b));
    unmatched.dedup();
    for id in unmatched {
        eprintln!("xtask: note: peer rows for {id} match no benchmark group; left out");
    }
}

/// Gives each `stencil_variants` group the peer rows of its grid and element type; notes rows
/// that match no group.
pub fn attach_peers(groups: &mut [Group], rows: &[PeerRow]) {
    for group in
        groups.iter_mut().filter(|g| g.suite == Suite::StencilVariants || g.id.starts_with("stencil_shapes/"))
    {
        group.peers = rows.iter().filter(|r| r.group_id() == group.id).map(PeerRow::to_peer).collect();
    }
    note_unmatched(groups, rows.iter().map(PeerRow::group_id));
}

/// Gives each `merge_variants` (and `merge_by_key`) group the merge peers' rows of its case and
/// key type (and values), after its own; rows of our kernels (`ours/...`) are left out, since the group measures them itself.
/// Notes rows that match no group.
pub fn attach_merge_peers(groups: &mut [Group], rows: &[MergePeerRow]) {
    let peers: Vec<&MergePeerRow> = rows.iter().filter(|r| !r.is_ours()).collect();
    let takes_peers = |g: &Group| {
        g.suite == Suite::MergeVariants
            || g.suite_name == MERGE_BY_KEY_SUITE
            || g.suite_name == MERGE_SET_SUITE
    };
    for group in groups.iter_mut().filter(|g| takes_peers(g)) {
        group.peers.extend(peers.iter().filter(|r| r.group_id() == group.id).map(|r| r.to_peer()));
    }
    note_unmatched(groups, peers.iter().map(|r| r.group_id()));
}

/// What a member of a group measures, from its `function_id`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role<'a> {
    /// `copy`: a device-to-device copy of the same bytes, the ceiling.
    Copy,
    /// `rust/<kernel>`.
    Rust(&'a str),
    /// `cuda/<kernel>`: the CUDA C++ twin of the Rust kernel of the same name.
    Cuda(&'a str),
    Other,
}

impl<'a> Role<'a> {
    pub fn of(function: &'a str) -> Self {
        if function == "copy" {
            return Role::Copy;
        }
        match function.split_once('/') {
            Some(("rust", kernel)) if !kernel.is_empty() => Role::Rust(kernel),
            Some(("cuda", kernel)) if !kernel.is_empty() => Role::Cuda(kernel),
            _ => Role::Other,
        }
    }
}

/// The benchmark suites the report knows; the suite is the part of `group_id` before the first `/`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Suite {
    StencilVariants,
    StencilTiling,
    StencilStreaming,
    StencilTemporal,
    MergeVariants,
    MergeCoarsening,
    Other,
}

impl Suite {
    fn of(name: &str) -> Self {
        match name {
            "stencil_variants" => Suite::StencilVariants,
            "stencil_tiling" => Suite::StencilTiling,
            "stencil_streaming" => Suite::StencilStreaming,
            "stencil_temporal" => Suite::StencilTemporal,
            "merge_variants" => Suite::MergeVariants,
            "merge_coarsening" => Suite::MergeCoarsening,
            _ => Suite::Other,
        }
    }

    /// Unit of `Elements` per second, in billions.
    fn rate_unit(self, suite_name: &str) -> &'static str {
        match self {
            Suite::StencilVariants
            | Suite::StencilTiling
            | Suite::StencilStreaming
            | Suite::StencilTemporal => "Gpoints/s",
            Suite::MergeVariants | Suite::MergeCoarsening => "Gkeys/s",
            Suite::Other if suite_name.starts_with("stencil") => "Gpoints/s",
            Suite::Other if suite_name.starts_with("merge") => "Gkeys/s",
            Suite::Other => "Gelem/s",
        }
    }

    /// Heading of the parameter column and the x axis of sweep charts.
    fn parameter(self) -> (&'static str, &'static str) {
        match self {
            Suite::StencilTiling => ("tile", "tile edge T"),
            Suite::StencilTemporal => ("K", "time steps per pass K"),
            Suite::MergeCoarsening => ("elements/thread", "elements per thread"),
            _ => ("parameter", "parameter"),
        }
    }

    fn blurb(self) -> Option<&'static str> {
        match self {
            Suite::StencilVariants => Some(
                "One time step of the 7-point stencil by each kernel: the book's (PMPP Figs. 8.6, 8.8, 8.10, 8.12) in Rust and in CUDA C++, and the streaming kernel beyond the book (Rust only).",
            ),
            Suite::StencilTiling => Some("Stencil throughput against the tile edge T."),
            Suite::StencilStreaming => Some(
                "Launch shapes of the streaming kernel: block (threads x×y), points per thread along x (v), rows per thread (r), planes ahead in registers (a), planes prefetched into L2 (p), planes per block (z, or `waves`), blocks per thread-block cluster (c, none if absent), and `along y` for shapes walking along y. The library's default is marked `(default)`.",
            ),
            Suite::StencilTemporal => Some(
                "64 time steps, as 64 copies of the grid (the single-step ceiling), 64 single steps of the streaming kernel (K = 1), and the temporal kernel fusing K steps per pass, for each tile shape: rows per thread (r) and warps per block (w). Throughput counts point updates, so Gpoints/s and % of copy are per step and may pass the copy.",
            ),
            Suite::MergeVariants => Some(
                "The merge kernels of PMPP chapter 12 (basic, tiled, circular), in Rust and in CUDA C++, and merge path beyond the book (Rust).",
            ),
            Suite::MergeCoarsening => {
                Some("Merge throughput against the number of output elements per thread.")
            }
            Suite::Other => None,
        }
    }
}

/// The benchmarks of one criterion group.
#[derive(Debug, Clone)]
pub struct Group {
    pub id: String,
    pub suite: Suite,
    suite_name: String,
    /// Members in report order: copy first, then kernels in the book's order, Rust before CUDA,
    /// parameters ascending.
    pub members: Vec<Bench>,
    /// Peer rows of the same grid and element type (`stencil_variants` groups), or of the same
    /// case and key type (`merge_variants` groups), in file order.
    pub peers: Vec<Peer>,
}

impl Group {
    fn has_values(&self) -> bool {
        self.members.iter().any(|m| m.value.is_some())
    }

    fn rate_unit(&self) -> &'static str {
        self.suite.rate_unit(&self.suite_name)
    }

    /// The copy that bounds `member`: the copy with the same parameter, else the one without, else
    /// the only one.
    pub fn ceiling_for(&self, member: &Bench) -> Option<&Bench> {
        let copies: Vec<&Bench> = self.members.iter().filter(|m| m.role() == Role::Copy).collect();
        copies
            .iter()
            .find(|c| c.value == member.value)
            .or_else(|| copies.iter().find(|c| c.value.is_none()))
            .or_else(|| if copies.len() == 1 { copies.first() } else { None })
            .copied()
    }

    /// Copy median over member median, in percent.
    pub fn percent_of_copy(&self, member: &Bench) -> Option<f64> {
        self.ceiling_for(member).map(|copy| copy.median_ns / member.median_ns * 100.0)
    }

    /// For a `rust/<kernel>` member: the `cuda/<kernel>` median over the Rust median (> 1: Rust faster).
    pub fn rust_over_cuda(&self, member: &Bench) -> Option<f64> {
        let Role::Rust(kernel) = member.role() else { return None };
        self.members
            .iter()
            .find(|m| m.role() == Role::Cuda(kernel) && m.value == member.value)
            .map(|cuda| cuda.median_ns / member.median_ns)
    }

    /// The copy's throughput counted in the group's elements (what a kernel at 100 % of the copy
    /// would reach), for the copy without a parameter.
    fn ceiling_rate(&self) -> Option<f64> {
        let copy = self.members.iter().find(|m| m.role() == Role::Copy && m.value.is_none())?;
        let elements = copy.elements.or_else(|| self.members.iter().find_map(|m| m.elements))?;
        Some(elements as f64 / copy.median_ns)
    }

    /// File name of the group's chart: the id with characters other than `[A-Za-z0-9._-]` made `_`.
    fn chart_stem(&self) -> String {
        self.id
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() || "._-".contains(c) { c } else { '_' })
            .collect()
    }
}

/// Finds every `new/benchmark.json` under `dir` and reads it with its `new/estimates.json`.
/// Unreadable results are skipped with a warning.
pub fn discover(dir: &Path) -> Result<Vec<Bench>, String> {
    if !dir.is_dir() {
        return Err(format!(
            "no criterion results: {} is not a directory; run {BENCH_COMMANDS} on a GPU machine first, or pass --criterion-dir",
            dir.display()
        ));
    }
    let mut files = Vec::new();
    find_benchmark_files(dir, &mut files);
    files.sort();
    let mut benches = Vec::new();
    for file in &files {
        match read_bench(file) {
            Ok(bench) => benches.push(bench),
            Err(e) => eprintln!("xtask: warning: skipping {}: {e}", file.display()),
        }
    }
    if benches.is_empty() {
        return Err(format!(
            "no benchmarks found in {} (no */new/benchmark.json); run {BENCH_COMMANDS} on a GPU machine first",
            dir.display()
        ));
    }
    Ok(benches)
}

fn find_benchmark_files(dir: &Path, found: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let Ok(kind) = entry.file_type() else { continue };
        let path = entry.path();
        if kind.is_dir() {
            find_benchmark_files(&path, found);
        } else if entry.file_name() == "benchmark.json" && dir.file_name().is_some_and(|d| d == "new") {
            found.push(path);
        }
    }
}

fn read_json<T: serde::de::DeserializeOwned>(path: &Path) -> Result<T, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("reading {}: {e}", path.display()))?;
    serde_json::from_str(&text).map_err(|e| format!("parsing {}: {e}", path.display()))
}

fn read_bench(benchmark_json: &Path) -> Result<Bench, String> {
    let id: BenchmarkJson = read_json(benchmark_json)?;
    let estimates: EstimatesJson = read_json(&benchmark_json.with_file_name("estimates.json"))?;
    let median_ns = estimates.median.point_estimate;
    if !(median_ns.is_finite() && median_ns > 0.0) {
        return Err(format!("median time {median_ns} ns is not a positive number"));
    }
    let elements = id.throughput.as_ref().and_then(|t| {
        t.get("Elements")
            .and_then(|n| n.as_u64())
            .or_else(|| t.get("ElementsAndBytes")?.get("elements")?.as_u64())
    });
    Ok(Bench {
        group_id: id.group_id,
        function: id.function_id.unwrap_or_default(),
        value: id.value_str.filter(|v| !v.is_empty()),
        elements,
        median_ns,
    })
}

/// Compares strings with runs of digits compared as numbers (`2^24` before `2^28`, `T=8` before `T=16`).
fn natural_cmp(a: &str, b: &str) -> Ordering {
    fn chunks(s: &str) -> Vec<(bool, &str)> {
        let mut out = Vec::new();
        let mut start = 0;
        let bytes = s.as_bytes();
        for i in 1..=bytes.len() {
            if i == bytes.len() || bytes[i].is_ascii_digit() != bytes[start].is_ascii_digit() {
                out.push((bytes[start].is_ascii_digit(), &s[start..i]));
                start = i;
            }
        }
        out
    }
    let (ca, cb) = (chunks(a), chunks(b));
    for ((da, sa), (db, sb)) in ca.iter().zip(&cb) {
        let ord = if *da && *db {
            let (ta, tb) = (sa.trim_start_matches('0'), sb.trim_start_matches('0'));
            ta.len().cmp(&tb.len()).then_with(|| ta.cmp(tb))
        } else {
            sa.cmp(sb)
        };
        if ord != Ordering::Equal {
            return ord;
        }
    }
    ca.len().cmp(&cb.len()).then_with(|| a.cmp(b))
}

fn kernel_rank(kernel: &str) -> usize {
    KERNEL_ORDER.iter().position(|k| *k == kernel).unwrap_or(KERNEL_ORDER.len())
}

fn member_cmp(a: &Bench, b: &Bench) -> Ordering {
    fn key(m: &Bench) -> (u8, usize, &str, u8) {
        match m.role() {
            Role::Copy => (0, 0, "", 0),
            Role::Rust(k) => (1, kernel_rank(k), k, 0),
            Role::Cuda(k) => (1, kernel_rank(k), k, 1),
            Role::Other => (2, 0, m.name(), 0),
        }
    }
    let value = |m: &Bench| m.value.clone().unwrap_or_default();
    key(a).cmp(&key(b)).then_with(|| natural_cmp(&value(a), &value(b)))
}

/// Groups benchmarks by `group_id`: suites in the order stencil_variants, stencil_tiling,
/// merge_variants, merge_coarsening, others; cases in natural order.
pub fn group(benches: Vec<Bench>) -> Vec<Group> {
    let mut by_id: BTreeMap<String, Vec<Bench>> = BTreeMap::new();
    for bench in benches {
        by_id.entry(bench.group_id.clone()).or_default().push(bench);
    }
    let mut groups: Vec<Group> = by_id
        .into_iter()
        .map(|(id, mut members)| {
            members.sort_by(member_cmp);
            let suite_name = id.split_once('/').map_or(id.as_str(), |(suite, _)| suite).to_owned();
            Group { suite: Suite::of(&suite_name), suite_name, id, members, peers: Vec::new() }
        })
        .collect();
    groups.sort_by(|a, b| {
        a.suite
            .cmp(&b.suite)
            .then_with(|| a.suite_name.cmp(&b.suite_name))
            .then_with(|| natural_cmp(&a.id, &b.id))
    });
    groups
}

/// What the header says about the run.
#[derive(Debug, Clone, PartialEq)]
pub struct Stamp {
    pub gpu: String,
    pub driver_cuda_version: String,
    pub ptx_arch: String,
    pub date: String,
    pub commit: String,
    /// Fields of `gpu-info.json` beyond those above, as `name: value`.
    pub extra: Vec<(String, String)>,
    /// Where the peer rows come from ([`Peers::describe`]), when there are any.
    pub peers: Option<String>,
    /// Where the merge peer rows come from ([`MergePeers::describe`]), when there are any.
    pub merge_peers: Option<String>,
}

/// Shows a JSON value: strings bare, arrays of numbers dotted (`[9, 0]` as `9.0`), the rest as JSON.
fn show_json(value: &serde_json::Value) -> String {
    match value {
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Array(items) if !items.is_empty() && items.iter().all(|i| i.is_u64()) => {
            items.iter().map(|i| i.to_string()).collect::<Vec<_>>().join(".")
        }
        other => other.to_string(),
    }
}

impl Stamp {
    /// Reads `gpu-info.json` (a missing or unreadable file leaves "unknown"); the date falls back to
    /// `today`.
    pub fn read(gpu_info: &Path, commit: String, today: String) -> Stamp {
        let info: serde_json::Map<String, serde_json::Value> = if gpu_info.is_file() {
            match read_json(gpu_info) {
                Ok(map) => map,
                Err(e) => {
                    eprintln!("xtask: warning: ignoring {e}");
                    Default::default()
                }
            }
        } else {
            eprintln!(
                "xtask: warning: {} not found: GPU, driver and PTX target are unknown",
                gpu_info.display()
            );
            Default::default()
        };
        let field = |name: &str| info.get(name).filter(|v| !v.is_null()).map(show_json);
        let mut gpu = field("gpu").unwrap_or_else(|| "unknown".into());
        if let Some(cc) = field("compute_capability") {
            let _ = write!(gpu, " (compute capability {cc})");
        }
        let date = match field("date") {
            Some(date) => date,
            None => format!("{today} (report date: gpu-info.json has none)"),
        };
        let known = ["gpu", "compute_capability", "driver_cuda_version", "ptx_arch", "date"];
        Stamp {
            gpu,
            driver_cuda_version: field("driver_cuda_version").unwrap_or_else(|| "unknown".into()),
            ptx_arch: field("ptx_arch").unwrap_or_else(|| "unknown".into()),
            date,
            commit,
            extra: info
                .iter()
                .filter(|(k, _)| !known.contains(&k.as_str()))
                .map(|(k, v)| (k.clone(), show_json(v)))
                .collect(),
            peers: None,
            merge_peers: None,
        }
    }
}

fn git_commit(workspace: &Path) -> String {
    Command::new("git")
        .arg("-C")
        .arg(workspace)
        .args(["rev-parse", "--short", "HEAD"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "unknown".into())
}

/// Hand-written commentary: the sections of the commentary file headed `## <group_id>`, keyed by
/// group id, in file order. `## ` lines inside fenced code blocks do not start sections; text
/// before the first heading is ignored.
pub fn parse_commentary(text: &str) -> Vec<(String, String)> {
    let mut sections: Vec<(String, Vec<&str>)> = Vec::new();
    let mut in_fence = false;
    for line in text.lines() {
        let trimmed = line.trim_start();
        if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
            in_fence = !in_fence;
        }
        if !in_fence && let Some(heading) = line.strip_prefix("## ") {
            sections.push((heading.trim().to_owned(), Vec::new()));
        } else if let Some((_, body)) = sections.last_mut() {
            body.push(line);
        }
    }
    sections
        .into_iter()
        .map(|(id, body)| (id, body.join("\n").trim_matches('\n').trim_end().to_owned()))
        .collect()
}

fn format_sig(v: f64) -> String {
    if v >= 100.0 {
        format!("{v:.1}")
    } else if v >= 10.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    }
}

/// A time in ns with a sensible unit: `850.0 ns`, `603.5 µs`, `1.437 ms`.
pub fn format_time(ns: f64) -> String {
    let (value, unit) = if ns < 1e3 {
        (ns, "ns")
    } else if ns < 1e6 {
        (ns / 1e3, "µs")
    } else if ns < 1e9 {
        (ns / 1e6, "ms")
    } else {
        (ns / 1e9, "s")
    };
    format!("{} {unit}", format_sig(value))
}

/// The group's Markdown table.
pub fn table(group: &Group) -> String {
    let with_values = group.has_values();
    let (parameter, _) = group.suite.parameter();
    let mut out = String::new();
    let _ = write!(out, "| member |");
    if with_values {
        let _ = write!(out, " {parameter} |");
    }
    let _ = writeln!(out, " median | {} | % of copy | Rust/C++ |", group.rate_unit());
    let _ = writeln!(out, "|---|{}--:|--:|--:|--:|", if with_values { "--:|" } else { "" });
    let or_dash = |v: Option<String>| v.unwrap_or_else(|| "-".into());
    for m in &group.members {
        let _ = write!(out, "| `{}` |", m.name());
        if with_values {
            let _ = write!(
                out,
                " {} |",
                if m.function.is_empty() { "-" } else { m.value.as_deref().unwrap_or("-") }
            );
        }
        let _ = writeln!(
            out,
            " {} | {} | {} | {} |",
            format_time(m.median_ns),
            or_dash(m.rate().map(format_sig)),
            or_dash(group.percent_of_copy(m).map(|p| format!("{p:.1}"))),
            or_dash(group.rust_over_cuda(m).map(|r| format!("{r:.2}"))),
        );
    }
    for p in &group.peers {
        let _ = write!(out, "| {} |", p.label());
        if with_values {
            let _ = write!(out, " - |");
        }
        let _ = writeln!(
            out,
            " {} | {} | {} | - |",
            or_dash(p.median_ns.map(format_time)),
            or_dash(p.rate().map(format_sig)),
            or_dash(p.percent_of_copy.map(|p| format!("{p:.1}"))),
        );
    }
    out
}

/// The note under a table with peer rows, naming the scripts that measured them.
fn peers_note(peers: &[Peer]) -> String {
    let mut scripts: Vec<&str> = peers.iter().map(|p| p.script).collect();
    scripts.sort_unstable();
    scripts.dedup();
    let scripts: Vec<String> = scripts.iter().map(|s| format!("`{s}`")).collect();
    format!(
        "Peer rows (`peer/...`) come from {} run in the same device session; their % of copy is against \
         the copy timed in their own process. A peer marked (check FAIL) computed a wrong result; one marked \
         (skipped) did not run (the JSON says why).",
        scripts.join(" and ")
    )
}

const RUST_COLOR: RGBColor = RGBColor(206, 92, 38);
const CUDA_COLOR: RGBColor = RGBColor(118, 185, 0);
const OTHER_COLOR: RGBColor = RGBColor(127, 127, 127);
const PEER_COLOR: RGBColor = RGBColor(175, 175, 175);
const CEILING_COLOR: RGBColor = RGBColor(200, 0, 0);
/// Line colors per kernel in sweep charts (no red: that is the ceiling's).
const KERNEL_COLORS: [RGBColor; 8] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
];
const BAR_CHART_SIZE: (u32, u32) = (900, 500);
/// Least width per category of a bar chart, in pixels.
const BAR_CATEGORY_WIDTH: u32 = 150;
const SWEEP_CHART_SIZE: (u32, u32) = (900, 600);

/// Top of the y axis: leaves room above the highest value for a legend of `entries` lines in a
/// chart `height` pixels tall (the legend sits in the upper right corner, over the plot).
fn y_top(highest: f64, entries: usize, height: u32) -> f64 {
    let plot_height = f64::from(height) - 120.0;
    let legend = (entries as f64 * 20.0 + 40.0) / plot_height;
    let top = highest / (1.0 - legend.min(0.6)).min(1.0 / 1.15);
    if top > 0.0 { top } else { 1.0 }
}

/// Y axis labels with as many decimals as the axis's range needs.
fn y_label(top: f64) -> impl Fn(&f64) -> String {
    let decimals = if top >= 20.0 {
        0
    } else if top >= 2.0 {
        1
    } else {
        2
    };
    move |y: &f64| format!("{y:.decimals$}")
}
/// Chart x coordinates are integers, `X_UNIT` per category or parameter value: plotters' f64 axes
/// take no custom key points.
const X_UNIT: i32 = 1000;

fn chart_err<E: std::fmt::Display>(e: E) -> String {
    format!("drawing a chart: {e}")
}

#[derive(Clone, Copy, PartialEq)]
enum Side {
    Rust,
    Cuda,
    Other,
    Peer,
}

/// The bars of a bar chart, `(category, side, throughput)`: each member but the copy, then each
/// peer whose check passed.
fn bar_entries(group: &Group) -> Vec<(String, Side, f64)> {
    let members = group.members.iter().filter_map(|m| {
        let (category, side) = match m.role() {
            Role::Copy => return None,
            Role::Rust(k) => (k.to_owned(), Side::Rust),
            Role::Cuda(k) => (k.to_owned(), Side::Cuda),
            Role::Other => (m.name().to_owned(), Side::Other),
        };
        Some((category, side, m.rate()?))
    });
    let peers =
        group.peers.iter().filter(|p| p.ok()).filter_map(|p| Some((p.peer.clone(), Side::Peer, p.rate()?)));
    members.chain(peers).collect()
}

/// Bar chart of each member's throughput, Rust and CUDA C++ side by side per kernel, peers in gray,
/// with the copy ceiling as a horizontal line. `None` when no member has an `Elements` throughput.
fn bar_chart(group: &Group) -> Result<Option<String>, String> {
    let unit = group.rate_unit();
    let mut categories: Vec<String> = Vec::new();
    let mut bars: Vec<(usize, Side, f64)> = Vec::new();
    for (category, side, rate) in bar_entries(group) {
        let index = categories.iter().position(|c| *c == category).unwrap_or_else(|| {
            categories.push(category);
            categories.len() - 1
        });
        bars.push((index, side, rate));
    }
    if bars.is_empty() {
        return Ok(None);
    }
    // Each bar's slot within its category.
    let slots: Vec<(i32, i32)> = bars
        .iter()
        .enumerate()
        .map(|(i, (category, _, _))| {
            let same: Vec<usize> = (0..bars.len()).filter(|j| bars[*j].0 == *category).collect();
            let at = same.iter().position(|j| *j == i).unwrap_or(0) as i32;
            let width = X_UNIT * 4 / 5 / same.len().max(2) as i32;
            let start = *category as i32 * X_UNIT + X_UNIT / 2 - width * same.len() as i32 / 2 + at * width;
            (start, start + width)
        })
        .collect();
    let ceiling = group.ceiling_rate();
    let sides = [Side::Rust, Side::Cuda, Side::Other, Side::Peer]
        .iter()
        .filter(|s| bars.iter().any(|b| b.1 == **s))
        .count();
    let top = y_top(
        bars.iter().map(|b| b.2).chain(ceiling).fold(0.0, f64::max),
        sides + usize::from(ceiling.is_some()),
        BAR_CHART_SIZE.1,
    );
    let y_fmt = y_label(top);
    let n = categories.len() as i32;
    // Wider with many categories, so that names like `torch.compile-max-autotune` do not overlap.
    let size = (BAR_CHART_SIZE.0.max(BAR_CATEGORY_WIDTH * n as u32 + 100), BAR_CHART_SIZE.1);

    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, size).into_drawing_area();
        root.fill(&WHITE).map_err(chart_err)?;
        let centers: Vec<i32> = (0..n).map(|i| i * X_UNIT + X_UNIT / 2).collect();
        let mut chart = ChartBuilder::on(&root)
            .caption(format!("{}: throughput", group.id), ("sans-serif", 22))
            .margin(15)
            .x_label_area_size(45)
            .y_label_area_size(70)
            .build_cartesian_2d((0..n * X_UNIT).with_key_points(centers), 0.0..top)
            .map_err(chart_err)?;
        let label = |x: &i32| categories.get((x / X_UNIT).max(0) as usize).cloned().unwrap_or_default();
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_label_formatter(&label)
            .x_desc("kernel")
            .y_desc(unit)
            .y_label_formatter(&y_fmt)
            .label_style(("sans-serif", 15))
            .light_line_style(TRANSPARENT)
            .draw()
            .map_err(chart_err)?;
        let value_style =
            TextStyle::from(("sans-serif", 13).into_font()).pos(Pos::new(HPos::Center, VPos::Bottom));
        for (side, color, name) in [
            (Side::Rust, RUST_COLOR, "Rust"),
            (Side::Cuda, CUDA_COLOR, "CUDA C++"),
            (Side::Other, OTHER_COLOR, "other"),
            (Side::Peer, PEER_COLOR, "peers"),
        ] {
            let these: Vec<(i32, i32, f64)> = bars
                .iter()
                .zip(&slots)
                .filter(|((_, s, _), _)| *s == side)
                .map(|((_, _, rate), (x0, x1))| (*x0, *x1, *rate))
                .collect();
            if these.is_empty() {
                continue;
            }
            chart
                .draw_series(
                    these
                        .iter()
                        .map(|(x0, x1, rate)| Rectangle::new([(*x0, 0.0), (*x1, *rate)], color.filled())),
                )
                .map_err(chart_err)?
                .label(name)
                .legend(move |(x, y)| Rectangle::new([(x, y - 6), (x + 16, y + 6)], color.filled()));
            chart
                .draw_series(these.iter().map(|(x0, x1, rate)| {
                    Text::new(format_sig(*rate), ((x0 + x1) / 2, *rate), value_style.clone())
                }))
                .map_err(chart_err)?;
        }
        if let Some(c) = ceiling {
            chart
                .draw_series(LineSeries::new([(0, c), (n * X_UNIT, c)], CEILING_COLOR.stroke_width(2)))
                .map_err(chart_err)?
                .label(format!("copy ceiling ({} {unit})", format_sig(c)))
                .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], CEILING_COLOR.stroke_width(2)));
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperRight)
            .label_font(("sans-serif", 15))
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .draw()
            .map_err(chart_err)?;
        root.present().map_err(chart_err)?;
    }
    Ok(Some(svg))
}

/// Line chart of throughput against the group's parameter: one line per function (Rust solid,
/// CUDA C++ dashed, one color per kernel), the copy as a ceiling line (or a line, when it is
/// measured per parameter). `None` when nothing has both a parameter and a throughput.
fn sweep_chart(group: &Group) -> Result<Option<String>, String> {
    let unit = group.rate_unit();
    let (_, x_desc) = group.suite.parameter();
    let mut values: Vec<String> =
        group.members.iter().filter(|m| m.rate().is_some()).filter_map(|m| m.value.clone()).collect();
    values.sort_by(|a, b| natural_cmp(a, b));
    values.dedup();
    if values.is_empty() {
        return Ok(None);
    }
    /// One function's points, (x, throughput), in member order.
    type Line<'a> = (&'a str, Role<'a>, Vec<(i32, f64)>);
    let mut lines: Vec<Line<'_>> = Vec::new();
    for m in &group.members {
        let (Some(value), Some(rate)) = (&m.value, m.rate()) else { continue };
        let x = values.iter().position(|v| v == value).unwrap_or(0) as i32 * X_UNIT;
        match lines.iter_mut().find(|(f, _, _)| *f == m.function) {
            Some((_, _, points)) => points.push((x, rate)),
            None => lines.push((&m.function, m.role(), vec![(x, rate)])),
        }
    }
    let ceiling = group.ceiling_rate();
    let top = y_top(
        lines.iter().flat_map(|(_, _, p)| p.iter().map(|(_, y)| *y)).chain(ceiling).fold(0.0, f64::max),
        lines.len() + usize::from(ceiling.is_some()),
        SWEEP_CHART_SIZE.1,
    );
    let y_fmt = y_label(top);
    let mut kernels: Vec<&str> = Vec::new();

    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, SWEEP_CHART_SIZE).into_drawing_area();
        root.fill(&WHITE).map_err(chart_err)?;
        let n = values.len() as i32;
        let mut chart = ChartBuilder::on(&root)
            .caption(format!("{}: throughput vs {x_desc}", group.id), ("sans-serif", 22))
            .margin(15)
            .x_label_area_size(45)
            .y_label_area_size(70)
            .build_cartesian_2d(
                (-X_UNIT / 2..n * X_UNIT - X_UNIT / 2).with_key_points((0..n).map(|i| i * X_UNIT).collect()),
                0.0..top,
            )
            .map_err(chart_err)?;
        let label = |x: &i32| values.get((x / X_UNIT).max(0) as usize).cloned().unwrap_or_default();
        chart
            .configure_mesh()
            .x_label_formatter(&label)
            .x_desc(x_desc)
            .y_desc(unit)
            .y_label_formatter(&y_fmt)
            .label_style(("sans-serif", 15))
            .light_line_style(TRANSPARENT)
            .draw()
            .map_err(chart_err)?;
        for (function, role, points) in &lines {
            let kernel = match role {
                Role::Rust(k) | Role::Cuda(k) => *k,
                _ => function,
            };
            let color = if *role == Role::Copy {
                CEILING_COLOR
            } else {
                let index = kernels.iter().position(|k| *k == kernel).unwrap_or_else(|| {
                    kernels.push(kernel);
                    kernels.len() - 1
                });
                KERNEL_COLORS[index % KERNEL_COLORS.len()]
            };
            let style = color.stroke_width(2);
            let dashed = matches!(role, Role::Cuda(_));
            let series = if dashed {
                chart.draw_series(DashedLineSeries::new(points.iter().copied(), 8, 5, style))
            } else {
                chart.draw_series(LineSeries::new(points.iter().copied(), style))
            };
            series.map_err(chart_err)?.label(*function).legend(move |(x, y)| {
                if dashed {
                    EmptyElement::at((x, y))
                        + PathElement::new(vec![(0, 0), (6, 0)], style)
                        + PathElement::new(vec![(10, 0), (16, 0)], style)
                } else {
                    EmptyElement::at((x, y))
                        + PathElement::new(vec![(0, 0), (8, 0)], style)
                        + PathElement::new(vec![(8, 0), (16, 0)], style)
                }
            });
            chart
                .draw_series(
                    points.iter().map(|p| {
                        Circle::new(*p, 4, if dashed { color.stroke_width(2) } else { color.filled() })
                    }),
                )
                .map_err(chart_err)?;
        }
        if let Some(c) = ceiling {
            chart
                .draw_series(LineSeries::new(
                    [(-X_UNIT / 2, c), (n * X_UNIT - X_UNIT / 2, c)],
                    CEILING_COLOR.stroke_width(2),
                ))
                .map_err(chart_err)?
                .label(format!("copy ceiling ({} {unit})", format_sig(c)))
                .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], CEILING_COLOR.stroke_width(2)));
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperRight)
            .label_font(("sans-serif", 14))
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .draw()
            .map_err(chart_err)?;
        root.present().map_err(chart_err)?;
    }
    Ok(Some(svg))
}

/// The group's chart: bars for variant suites, lines for parameter sweeps.
fn chart(group: &Group) -> Result<Option<String>, String> {
    match group.suite {
        Suite::StencilVariants | Suite::StencilStreaming | Suite::MergeVariants => bar_chart(group),
        Suite::StencilTiling | Suite::StencilTemporal | Suite::MergeCoarsening => sweep_chart(group),
        Suite::Other if group.has_values() => sweep_chart(group),
        Suite::Other => bar_chart(group),
    }
}

/// The generated page and its charts (file name, SVG text).
pub struct Report {
    pub markdown: String,
    pub charts: Vec<(String, String)>,
}

/// Renders the page. `charts_dir` is the charts' folder relative to the page; `commentary_file` the
/// commentary file's name, for the instructions.
pub fn render(
    groups: &[Group],
    stamp: &Stamp,
    commentary: &[(String, String)],
    charts_dir: &str,
    commentary_file: &str,
) -> Result<Report, String> {
    let mut md = String::new();
    let mut charts: Vec<(String, String)> = Vec::new();
    let _ = writeln!(md, "# Benchmarks\n");
    let _ = writeln!(
        md,
        "<!-- Generated by `cargo xtask bench-report`: edits to this file and to {charts_dir}/ are overwritten. \
         Write commentary in {commentary_file} instead. -->\n"
    );
    let _ = writeln!(md, "- GPU: {}", stamp.gpu);
    let _ = writeln!(md, "- driver CUDA version: {}", stamp.driver_cuda_version);
    let _ = writeln!(md, "- PTX target: {}", stamp.ptx_arch);
    let _ = writeln!(md, "- date: {}", stamp.date);
    let _ = writeln!(md, "- commit: `{}` (when the report was generated)", stamp.commit);
    for (name, value) in &stamp.extra {
        let _ = writeln!(md, "- {name}: `{value}`");
    }
    if let Some(peers) = &stamp.peers {
        let _ = writeln!(md, "- peers: {peers}");
    }
    if let Some(peers) = &stamp.merge_peers {
        let _ = writeln!(md, "- merge peers: {peers}");
    }
    let _ = writeln!(
        md,
        "\nRegenerate on a GPU machine with\n\n\
         ```sh\n\
         cargo bench --bench stencil_variants\n\
         cargo bench --bench merge_variants\n\
         cargo build --release --bin stencil --bin merge\n\
         {PEERS_COMMAND}\n\
         {SHAPE_PEERS_COMMAND}\n\
         {MERGE_PEERS_COMMAND}\n\
         # on a machine with several GPUs, gathered into target/criterion/stencil_scaling.json:\n\
         # {SCALING_COMMANDS}\n\
         cargo xtask bench-report\n\
         ```\n\n\
         `cargo xtask bench-report [--criterion-dir DIR] [--out FILE] [--commit REV] [--peers FILE] \
         [--merge-peers FILE] [--scaling FILE]` reads criterion's latest results (`<criterion dir>/**/new/benchmark.json` and \
         `estimates.json`, by default in `target/criterion`, and `gpu-info.json` there) and the peers' results \
         (`--peers`, by default `<criterion dir>/{PEERS_FILE}`, and `--merge-peers`, by default \
         `<criterion dir>/{MERGE_PEERS_FILE}`) and the several-GPU runs (`--scaling`, by default \
         `<criterion dir>/{SCALING_FILE}`), each if it exists, and rewrites this page and the charts in \
         `{charts_dir}/`. \
         Hand-written commentary lives in `{commentary_file}`: a section headed `## <group id>` (for example \
         `## stencil_variants/512x512x512-f32`) is copied under that group's results each time the page is \
         generated.\n\n\
         Columns: **median** is criterion's median time per iteration; the throughput counts grid points \
         (stencil) or keys m + n (merge) per second, in billions; **% of copy** is the time of a \
         device-to-device copy of the same bytes (the `copy` member, the ceiling) over the member's time; \
         **Rust/C++** is, for a `rust/<kernel>` row, the time of its CUDA C++ twin `cuda/<kernel>` over the \
         Rust time: above 1 the Rust kernel is faster.\n"
    );
    let group_ids: Vec<&str> = groups.iter().map(|g| g.id.as_str()).collect();
    for (heading, _) in commentary {
        if !group_ids.contains(&heading.as_str()) {
            eprintln!(
                "xtask: warning: commentary section `## {heading}` matches no benchmark group; left out"
            );
        }
    }
    let mut stems: Vec<String> = Vec::new();
    for group in groups {
        let _ = writeln!(md, "## {}\n", group.id);
        if let Some(blurb) = group.suite.blurb() {
            let _ = writeln!(md, "{blurb}\n");
        }
        md.push_str(&table(group));
        md.push('\n');
        if !group.peers.is_empty() {
            let _ = writeln!(md, "{}\n", peers_note(&group.peers));
        }
        if let Some(svg) = chart(group)? {
            let mut stem = group.chart_stem();
            while stems.contains(&stem) {
                stem.push('_');
            }
            stems.push(stem.clone());
            let file = format!("{stem}.svg");
            let _ = writeln!(md, "![Throughput of {}]({charts_dir}/{file})\n", group.id);
            charts.push((file, svg));
        } else {
            let _ = writeln!(md, "(No chart: these benchmarks declare no `Elements` throughput.)\n");
        }
        let notes: Vec<&str> =
            commentary.iter().filter(|(id, _)| *id == group.id).map(|(_, body)| body.as_str()).collect();
        if notes.is_empty() || notes.iter().all(|n| n.is_empty()) {
            let _ = writeln!(
                md,
                "<!-- No commentary: add a `## {}` section to {commentary_file}. -->\n",
                group.id
            );
        } else {
            let _ = writeln!(
                md,
                "<!-- Commentary from the `## {}` section of {commentary_file}. -->\n",
                group.id
            );
            for note in notes.iter().filter(|n| !n.is_empty()) {
                let _ = writeln!(md, "{note}\n");
            }
        }
    }
    while md.ends_with("\n\n") {
        md.pop();
    }
    Ok(Report { markdown: md, charts })
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Criterion's `make_filename_safe`, for realistic directory names.
    fn safe(s: &str) -> String {
        s.chars().map(|c| if "?\"/\\*<>:|^".contains(c) { '_' } else { c }).collect()
    }

    /// Writes one benchmark's `benchmark.json` and `estimates.json` in `<...>/<sub>/` as criterion 0.8 does.
    fn write_result(
        root: &Path,
        sub: &str,
        group: &str,
        function: Option<&str>,
        value: Option<&str>,
        elements: Option<u64>,
        median_ns: f64,
    ) {
        let mut dir = root.join(safe(group));
        if let Some(f) = function {
            dir.push(safe(f));
        }
        if let Some(v) = value {
            dir.push(safe(v));
        }
        dir.push(sub);
        std::fs::create_dir_all(&dir).unwrap();
        let full_id = [Some(group), function, value].iter().flatten().copied().collect::<Vec<_>>().join("/");
        let id = serde_json::json!({
            "group_id": group,
            "function_id": function,
            "value_str": value,
            "throughput": elements.map(|n| serde_json::json!({ "Elements": n })),
            "full_id": full_id,
            "directory_name": "ignored",
            "title": full_id,
        });
        let estimate = |v: f64| {
            serde_json::json!({
                "confidence_interval": { "confidence_level": 0.95, "lower_bound": v * 0.99, "upper_bound": v * 1.01 },
                "point_estimate": v,
                "standard_error": v * 0.01,
            })
        };
        let estimates = serde_json::json!({
            "mean": estimate(median_ns * 1.1),
            "median": estimate(median_ns),
            "median_abs_dev": estimate(1.0),
            "slope": null,
            "std_dev": estimate(2.0),
        });
        std::fs::write(dir.join("benchmark.json"), id.to_string()).unwrap();
        std::fs::write(dir.join("estimates.json"), estimates.to_string()).unwrap();
    }

    fn write_bench(
        root: &Path,
        group: &str,
        function: &str,
        value: Option<&str>,
        elements: u64,
        median_ns: f64,
    ) {
        write_result(root, "new", group, Some(function), value, Some(elements), median_ns);
    }

    const STENCIL: &str = "stencil_variants/64x64x64-f32";
    const TILING: &str = "stencil_tiling/64x64x64-f32";
    const MERGE: &str = "merge_variants/2^20-75/25-f64";
    const POINTS: u64 = 64 * 64 * 64;

    /// A small criterion tree: a stencil variant group, a tiling sweep, a merge group without a
    /// copy, and a baseline that must be ignored.
    fn fixture(root: &Path) {
        write_bench(root, STENCIL, "copy", None, POINTS, 1000.0);
        write_bench(root, STENCIL, "rust/basic", None, POINTS, 2000.0);
        write_bench(root, STENCIL, "cuda/basic", None, POINTS, 2500.0);
        write_bench(root, STENCIL, "rust/register-tiled", None, POINTS, 4000.0);
        write_bench(root, STENCIL, "cuda/shared-tiled", None, POINTS, 8000.0);
        write_result(root, "base", STENCIL, Some("rust/basic"), None, Some(POINTS), 99_999.0);
        write_bench(root, TILING, "copy", None, POINTS, 1000.0);
        for (t, ns) in [("T=8", 3000.0), ("T=16", 2000.0), ("T=32", 2500.0)] {
            write_bench(root, TILING, "rust/shared-tiled", Some(t), POINTS, ns);
            write_bench(root, TILING, "cuda/shared-tiled", Some(t), POINTS, ns * 0.9);
        }
        write_bench(root, MERGE, "rust/tiled", None, 1 << 20, 1.5e6);
        write_bench(root, MERGE, "cuda/tiled", None, 1 << 20, 3.0e6);
    }

    /// The peer files bench-report reads by default, in the criterion directory `criterion`.
    fn default_files(criterion: &Path) -> PeerFiles {
        PeerFiles {
            stencil: criterion.join(PEERS_FILE),
            merge: criterion.join(MERGE_PEERS_FILE),
            scaling: criterion.join(crate::scaling_report::SCALING_FILE),
        }
    }

    /// Peer files that do not exist.
    fn no_files() -> PeerFiles {
        let none = PathBuf::from("/nonexistent/none.json");
        PeerFiles { stencil: none.clone(), merge: none.clone(), scaling: none }
    }

    fn groups_of(root: &Path) -> Vec<Group> {
        group(discover(root).unwrap())
    }

    fn find<'a>(group: &'a Group, function: &str, value: Option<&str>) -> &'a Bench {
        group.members.iter().find(|m| m.function == function && m.value.as_deref() == value).unwrap()
    }

    /// `xtask/testdata/<name>`: where cargo built the test, or relative to the checkout when the
    /// test executable was moved to another machine (`.gpu/run tests` runs from the repository root).
    fn testdata(name: &str) -> PathBuf {
        let built = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata").join(name);
        if built.exists() { built } else { Path::new("xtask/testdata").join(name) }
    }

    #[test]
    fn reads_real_criterion_output() {
        // Files written by criterion 0.8.2 itself (xtask/testdata/criterion, from a CPU benchmark).
        let dir = testdata("criterion");
        let benches = discover(&dir).unwrap();
        assert_eq!(benches.len(), 8);
        let rust4 = benches
            .iter()
            .find(|b| b.function == "rust/basic" && b.value.as_deref() == Some("4"))
            .expect("merge_coarsening_2_10-i32/rust_basic/4");
        assert_eq!(rust4.group_id, "merge_coarsening/2^10-i32");
        assert_eq!(rust4.elements, Some(1024));
        assert_eq!(rust4.median_ns, 2.3834425198643965);
        let copy =
            benches.iter().find(|b| b.group_id == "stencil_variants/8x8x8-f32" && b.function == "copy");
        assert_eq!(copy.unwrap().value, None);
        let groups = group(benches);
        assert_eq!(
            groups.iter().map(|g| g.id.as_str()).collect::<Vec<_>>(),
            ["stencil_variants/8x8x8-f32", "merge_coarsening/2^10-i32"]
        );
    }

    #[test]
    fn discovery_finds_only_new_results() {
        let tmp = tempfile::tempdir().unwrap();
        fixture(tmp.path());
        std::fs::create_dir_all(tmp.path().join("report")).unwrap();
        std::fs::write(tmp.path().join("report/index.html"), "<html/>").unwrap();
        let benches = discover(tmp.path()).unwrap();
        assert_eq!(benches.len(), 14);
        let basic: Vec<&Bench> =
            benches.iter().filter(|b| b.group_id == STENCIL && b.function == "rust/basic").collect();
        assert_eq!(basic.len(), 1, "the base/ baseline is ignored");
        assert_eq!(basic[0].median_ns, 2000.0);
        assert_eq!(basic[0].rate(), Some(POINTS as f64 / 2000.0));
    }

    #[test]
    fn the_temporal_group_charts_throughput_against_k() {
        let tmp = tempfile::tempdir().unwrap();
        let id = "stencil_temporal/512x512x512-f32";
        let points = 64 * 512 * 512 * 512;
        write_bench(tmp.path(), id, "copy", None, points, 1.0e6);
        write_bench(tmp.path(), id, "rust/streaming", Some("1"), points, 1.1e6);
        for (k, ns) in [("2", 0.9e6), ("4", 0.7e6)] {
            write_bench(tmp.path(), id, "rust/temporal r4 w8", Some(k), points, ns);
        }
        write_bench(tmp.path(), id, "rust/temporal r8 w8", Some("4"), points, 0.65e6);
        let groups = groups_of(tmp.path());
        let temporal = &groups[0];
        assert_eq!(temporal.suite, Suite::StencilTemporal);
        assert_eq!(temporal.rate_unit(), "Gpoints/s");
        // Per step, a fused run passes the copy.
        let k4 = find(temporal, "rust/temporal r4 w8", Some("4"));
        assert!((temporal.percent_of_copy(k4).unwrap() - 100.0 / 0.7).abs() < 1e-9);
        let svg = chart(temporal).unwrap().expect("a sweep chart");
        assert!(svg.contains("time steps per pass K"), "the x axis names K");
        assert!(svg.contains("rust/temporal r8 w8") && svg.contains("rust/streaming"));
        let table = table(temporal);
        assert!(table.lines().next().unwrap().contains("| K |"), "{table}");
    }

    #[test]
    fn unreadable_results_are_skipped() {
        let tmp = tempfile::tempdir().unwrap();
        write_bench(tmp.path(), STENCIL, "copy", None, POINTS, 1000.0);
        let broken = tmp.path().join("broken/new");
        std::fs::create_dir_all(&broken).unwrap();
        std::fs::write(broken.join("benchmark.json"), "{not json").unwrap();
        let benches = discover(tmp.path()).unwrap();
        assert_eq!(benches.len(), 1);
    }

    #[test]
    fn groups_split_at_the_first_slash_and_sort_by_suite() {
        let tmp = tempfile::tempdir().unwrap();
        fixture(tmp.path());
        write_bench(tmp.path(), "merge_coarsening/2^24-i32", "rust/basic", Some("16"), 1 << 24, 1.0e6);
        write_bench(tmp.path(), "merge_coarsening/2^24-i32", "rust/basic", Some("2"), 1 << 24, 1.0e6);
        write_bench(tmp.path(), "stencil_variants/128x128x128-f64", "copy", None, 1 << 21, 1.0e6);
        let groups = groups_of(tmp.path());
        let ids: Vec<&str> = groups.iter().map(|g| g.id.as_str()).collect();
        assert_eq!(
            ids,
            [
                "stencil_variants/64x64x64-f32",
                "stencil_variants/128x128x128-f64",
                TILING,
                MERGE,
                "merge_coarsening/2^24-i32"
            ]
        );
        let merge = &groups[3];
        assert_eq!((merge.suite, merge.suite_name.as_str()), (Suite::MergeVariants, "merge_variants"));
        let values: Vec<_> = groups[4].members.iter().map(|m| m.value.as_deref().unwrap()).collect();
        assert_eq!(values, ["2", "16"], "parameters sort as numbers");
        let members: Vec<&str> = groups[0].members.iter().map(|m| m.function.as_str()).collect();
        assert_eq!(members, ["copy", "rust/basic", "cuda/basic", "cuda/shared-tiled", "rust/register-tiled"]);
    }

    #[test]
    fn percent_of_copy_and_rust_over_cuda() {
        let tmp = tempfile::tempdir().unwrap();
        fixture(tmp.path());
        let groups = groups_of(tmp.path());
        let stencil = &groups[0];
        let rust = find(stencil, "rust/basic", None);
        assert_eq!(stencil.percent_of_copy(rust), Some(50.0));
        assert_eq!(stencil.rust_over_cuda(rust), Some(1.25), "cuda 2500 ns over rust 2000 ns");
        assert_eq!(stencil.rust_over_cuda(find(stencil, "cuda/basic", None)), None);
        assert_eq!(stencil.rust_over_cuda(find(stencil, "rust/register-tiled", None)), None, "no twin");
        assert_eq!(stencil.percent_of_copy(find(stencil, "copy", None)), Some(100.0));
        // A sweep: the valueless copy bounds every parameter; twins match on the parameter.
        let tiling = &groups[1];
        let t16 = find(tiling, "rust/shared-tiled", Some("T=16"));
        assert_eq!(tiling.percent_of_copy(t16), Some(50.0));
        assert!((tiling.rust_over_cuda(t16).unwrap() - 0.9).abs() < 1e-12);
        // No copy in the group.
        let merge = &groups[2];
        assert_eq!(merge.percent_of_copy(find(merge, "rust/tiled", None)), None);
        assert_eq!(merge.rust_over_cuda(find(merge, "rust/tiled", None)), Some(2.0));
    }

    #[test]
    fn copy_with_the_same_parameter_is_the_ceiling() {
        let tmp = tempfile::tempdir().unwrap();
        let g = "merge_coarsening/2^24-i32";
        write_bench(tmp.path(), g, "copy", Some("1"), 100, 10.0);
        write_bench(tmp.path(), g, "copy", Some("2"), 100, 20.0);
        write_bench(tmp.path(), g, "rust/basic", Some("2"), 100, 40.0);
        let groups = groups_of(tmp.path());
        assert_eq!(groups[0].percent_of_copy(find(&groups[0], "rust/basic", Some("2"))), Some(50.0));
    }

    #[test]
    fn markdown_tables() {
        let tmp = tempfile::tempdir().unwrap();
        fixture(tmp.path());
        let groups = groups_of(tmp.path());
        assert_eq!(
            table(&groups[0]),
            "| member | median | Gpoints/s | % of copy | Rust/C++ |\n\
             |---|--:|--:|--:|--:|\n\
             | `copy` | 1.000 µs | 262.1 | 100.0 | - |\n\
             | `rust/basic` | 2.000 µs | 131.1 | 50.0 | 1.25 |\n\
             | `cuda/basic` | 2.500 µs | 104.9 | 40.0 | - |\n\
             | `cuda/shared-tiled` | 8.000 µs | 32.77 | 12.5 | - |\n\
             | `rust/register-tiled` | 4.000 µs | 65.54 | 25.0 | - |\n"
        );
        let tiling = table(&groups[1]);
        assert!(
            tiling
                .starts_with("| member | tile | median | Gpoints/s | % of copy | Rust/C++ |\n|---|--:|--:|")
        );
        assert!(tiling.contains("| `copy` | - | 1.000 µs |"));
        assert!(tiling.contains("| `rust/shared-tiled` | T=16 | 2.000 µs | 131.1 | 50.0 | 0.90 |"));
        let merge = table(&groups[2]);
        assert!(merge.contains("| member | median | Gkeys/s |"));
        assert!(merge.contains("| `rust/tiled` | 1.500 ms | 0.699 | - | 2.00 |"));
    }

    #[test]
    fn times_get_sensible_units() {
        assert_eq!(format_time(850.0), "850.0 ns");
        assert_eq!(format_time(603_512.0), "603.5 µs");
        assert_eq!(format_time(1_437_000.0), "1.437 ms");
        assert_eq!(format_time(12_345_678.0), "12.35 ms");
        assert_eq!(format_time(2.5e9), "2.500 s");
    }

    #[test]
    fn writes_the_page_and_charts() {
        let tmp = tempfile::tempdir().unwrap();
        let criterion = tmp.path().join("criterion");
        fixture(&criterion);
        std::fs::write(
            criterion.join("gpu-info.json"),
            r#"{"gpu": "NVIDIA H200", "compute_capability": [9, 0], "driver_cuda_version": [13, 0],
                "ptx_arch": "sm_70", "date": "2026-11-29", "bytes_per_element": {"f32": 8}}"#,
        )
        .unwrap();
        let out = tmp.path().join("docs/benchmarks.md");
        std::fs::create_dir_all(out.parent().unwrap()).unwrap();
        let written =
            generate(&criterion, &default_files(&criterion), &out, "abc1234".into(), "2000-01-01".into())
                .unwrap();
        assert_eq!((written.groups, written.benchmarks, written.charts.len()), (3, 14, 3));

        let md = std::fs::read_to_string(&out).unwrap();
        assert!(md.starts_with("# Benchmarks\n"));
        for stamp in [
            "- GPU: NVIDIA H200 (compute capability 9.0)",
            "- driver CUDA version: 13.0",
            "- PTX target: sm_70",
            "- date: 2026-11-29",
            "- commit: `abc1234`",
            "- bytes_per_element: `{\"f32\":8}`",
            "cargo bench --bench stencil_variants",
            "cargo xtask bench-report",
            "benchmarks-commentary.md",
        ] {
            assert!(md.contains(stamp), "missing {stamp:?}");
        }
        assert!(md.contains("## stencil_variants/64x64x64-f32\n"));
        for link in [
            "](benchmarks/stencil_variants_64x64x64-f32.svg)",
            "](benchmarks/stencil_tiling_64x64x64-f32.svg)",
            "](benchmarks/merge_variants_2_20-75_25-f64.svg)",
        ] {
            assert!(md.contains(link), "missing {link:?}");
        }

        let charts = tmp.path().join("docs/benchmarks");
        let bars = std::fs::read_to_string(charts.join("stencil_variants_64x64x64-f32.svg")).unwrap();
        assert!(bars.starts_with("<svg"));
        for label in [
            "stencil_variants/64x64x64-f32: throughput",
            "basic",
            "register-tiled",
            "Rust",
            "CUDA C++",
            "copy ceiling (262.1 Gpoints/s)",
            "Gpoints/s",
            "131.1",
        ] {
            assert!(bars.contains(label), "bar chart lacks {label:?}");
        }
        let sweep = std::fs::read_to_string(charts.join("stencil_tiling_64x64x64-f32.svg")).unwrap();
        for label in
            ["tile edge T", "T=8", "T=16", "T=32", "rust/shared-tiled", "cuda/shared-tiled", "copy ceiling"]
        {
            assert!(sweep.contains(label), "sweep chart lacks {label:?}");
        }
        let merge = std::fs::read_to_string(charts.join("merge_variants_2_20-75_25-f64.svg")).unwrap();
        assert!(merge.contains("Gkeys/s") && !merge.contains("copy ceiling"));
    }

    #[test]
    fn commentary_goes_under_its_group_and_survives_regeneration() {
        let tmp = tempfile::tempdir().unwrap();
        let criterion = tmp.path().join("criterion");
        fixture(&criterion);
        let out = tmp.path().join("benchmarks.md");
        std::fs::write(
            tmp.path().join("benchmarks-commentary.md"),
            "Notes for docs/benchmarks.md.\n\n\
             ## stencil_tiling/64x64x64-f32\n\n\
             T=16 wins: the halo is 2/16 of the tile.\n\n\
             ```text\n## not a section\n```\n\n\
             ## no/such-group\n\nlost\n",
        )
        .unwrap();
        for _ in 0..2 {
            generate(&criterion, &no_files(), &out, "abc1234".into(), "2000-01-01".into()).unwrap();
        }
        let md = std::fs::read_to_string(&out).unwrap();
        let tiling = md.find("## stencil_tiling/64x64x64-f32\n").unwrap();
        let next = md.find("## merge_variants/").unwrap();
        let note = md.find("T=16 wins: the halo is 2/16 of the tile.").unwrap();
        assert!(tiling < note && note < next, "commentary sits in its group's section");
        assert!(md[note..next].contains("```text\n## not a section\n```"));
        assert_eq!(md.matches("T=16 wins").count(), 1);
        assert!(!md.contains("lost"));
        assert!(md.contains("<!-- No commentary: add a `## stencil_variants/64x64x64-f32` section"));
    }

    #[test]
    fn commentary_sections() {
        let sections = parse_commentary("intro\n## a/b\n\nline 1\n\n~~~\n## x\n~~~\n## c/d\n## e/f\ntext\n");
        assert_eq!(
            sections,
            [
                ("a/b".to_owned(), "line 1\n\n~~~\n## x\n~~~".to_owned()),
                ("c/d".to_owned(), String::new()),
                ("e/f".to_owned(), "text".to_owned())
            ]
        );
    }

    #[test]
    fn missing_or_empty_criterion_dir_is_an_error() {
        let tmp = tempfile::tempdir().unwrap();
        let e = discover(&tmp.path().join("criterion")).unwrap_err();
        assert!(e.starts_with("no criterion results: "), "{e}");
        assert!(e.contains("cargo bench --bench stencil_variants") && !e.contains('\n'), "{e}");
        let out = tmp.path().join("benchmarks.md");
        assert!(generate(&tmp.path().join("criterion"), &no_files(), &out, "x".into(), "y".into()).is_err());
        assert!(!out.exists());
        let e = discover(tmp.path()).unwrap_err();
        assert!(e.starts_with("no benchmarks found in "), "{e}");
        assert!(e.contains("cargo bench --bench merge_variants") && !e.contains('\n'), "{e}");
    }

    #[test]
    fn missing_gpu_info_is_unknown() {
        let stamp = Stamp::read(Path::new("/nonexistent/gpu-info.json"), "abc".into(), "2026-01-02".into());
        assert_eq!(stamp.gpu, "unknown");
        assert_eq!(stamp.driver_cuda_version, "unknown");
        assert_eq!(stamp.ptx_arch, "unknown");
        assert!(stamp.date.starts_with("2026-01-02"));
        assert_eq!(stamp.commit, "abc");
        assert!(stamp.extra.is_empty());
    }

    #[test]
    fn dates_and_natural_order() {
        assert_eq!(host::report::today_utc().len(), 10);
        assert_eq!(natural_cmp("T=8", "T=16"), Ordering::Less);
        assert_eq!(natural_cmp("2^24-i32", "2^28-even-i32"), Ordering::Less);
        assert_eq!(natural_cmp("128x128x128-f64", "512x512x512-f32"), Ordering::Less);
        assert_eq!(natural_cmp("b", "a"), Ordering::Greater);
    }

    fn peer(name: &str, grid: [u64; 3], dtype: &str, ms: Option<f64>, check: &str) -> PeerRow {
        PeerRow {
            peer: name.into(),
            grid,
            dtype: dtype.into(),
            stencil: None,
            ms_per_step: ms,
            percent_of_copy: ms.map(|ms| 0.001 / ms * 100.0),
            check: check.into(),
        }
    }

    #[test]
    fn rows_of_other_stencil_shapes_join_the_shapes_group() {
        let star13 = PeerRow {
            stencil: Some("star13".into()),
            ..peer("torch.compile/star13", [8, 8, 8], "f64", None, "OK")
        };
        assert_eq!(star13.group_id(), "stencil_shapes/8x8x8-f64");
        let star7 =
            PeerRow { stencil: Some("star7".into()), ..peer("torch.compile", [8, 8, 8], "f64", None, "OK") };
        assert_eq!(star7.group_id(), "stencil_variants/8x8x8-f64");
    }

    #[test]
    fn peers_json_is_parsed() {
        // As benches/peers/stencil_peers.py writes it (xtask/testdata/stencil_peers.json).
        let peers = read_peers(&testdata("stencil_peers.json")).unwrap().unwrap();
        assert_eq!(peers.gpu.as_deref(), Some("NVIDIA H200"));
        assert_eq!((peers.torch.as_deref(), peers.jax.as_deref()), (Some("2.11.0+cu130"), Some("0.11.0")));
        assert_eq!(peers.rows.len(), 5);
        let expected = PeerRow {
            percent_of_copy: Some(50.0),
            ..peer("torch.compile", [8, 8, 8], "f32", Some(0.008), "OK")
        };
        assert_eq!(peers.rows[0], expected);
        assert_eq!(peers.rows[0].group_id(), "stencil_variants/8x8x8-f32");
        let first = peers.rows[0].to_peer();
        assert_eq!((first.median_ns, first.elements, first.script), (Some(8000.0), 512, PEERS_SCRIPT));
        assert_eq!(first.rate(), Some(512.0 / 8000.0));
        let skipped = peers.rows[1].to_peer();
        assert_eq!((skipped.median_ns, skipped.rate(), skipped.percent_of_copy), (None, None, None));
        assert_eq!(skipped.label(), "`peer/torch.compile-max-autotune` (skipped)");
        assert_eq!(peers.rows[2].to_peer().label(), "`peer/jax.jit` (check FAIL)");
        assert_eq!(peers.rows[3].to_peer().label(), "`peer/ours/streaming`");
        assert!(peers.describe().ends_with("on NVIDIA H200, 2026-05-04: torch 2.11.0+cu130, JAX 0.11.0"));
    }

    #[test]
    fn peer_rows_join_the_group_of_their_grid_and_dtype() {
        let tmp = tempfile::tempdir().unwrap();
        fixture(tmp.path());
        let mut groups = groups_of(tmp.path());
        let rows = [
            peer("torch.compile", [64, 64, 64], "f32", Some(0.004), "OK"),
            peer("jax.jit", [64, 64, 64], "f32", Some(0.002), "FAIL"),
            peer("torch.compile-max-autotune", [64, 64, 64], "f32", None, "skipped: no GPU memory"),
            peer("torch.compile", [64, 64, 64], "f64", Some(0.004), "OK"),
            peer("torch.compile", [512, 512, 512], "f32", Some(0.5), "OK"),
        ];
        attach_peers(&mut groups, &rows);
        let names: Vec<&str> = groups[0].peers.iter().map(|p| p.peer.as_str()).collect();
        assert_eq!(names, ["torch.compile", "jax.jit", "torch.compile-max-autotune"]);
        assert!(groups[1..].iter().all(|g| g.peers.is_empty()), "not the tiling sweep, not merges");
        let md = table(&groups[0]);
        assert!(md.ends_with(
            "| `rust/register-tiled` | 4.000 µs | 65.54 | 25.0 | - |\n\
             | `peer/torch.compile` | 4.000 µs | 65.54 | 25.0 | - |\n\
             | `peer/jax.jit` (check FAIL) | 2.000 µs | 131.1 | 50.0 | - |\n\
             | `peer/torch.compile-max-autotune` (skipped) | - | - | - | - |\n"
        ));
        let bars: Vec<String> = bar_entries(&groups[0]).into_iter().map(|(c, _, _)| c).collect();
        assert!(bars.contains(&"torch.compile".to_owned()));
        assert!(!bars.contains(&"jax.jit".to_owned()), "a failed peer is no bar");
    }

    #[test]
    fn missing_peers_file_gives_no_peer_rows() {
        let tmp = tempfile::tempdir().unwrap();
        assert_eq!(read_peers(&tmp.path().join(PEERS_FILE)), Ok(None));
        assert_eq!(peers_or_warn(&tmp.path().join(PEERS_FILE)), Peers::default());
        let criterion = tmp.path().join("criterion");
        fixture(&criterion);
        let out = tmp.path().join("benchmarks.md");
        generate(&criterion, &default_files(&criterion), &out, "x".into(), "y".into()).unwrap();
        let md = std::fs::read_to_string(&out).unwrap();
        assert!(!md.contains("`peer/") && !md.contains("- peers:") && !md.contains("Peer rows"));
        assert!(md.contains("python3 benches/peers/stencil_peers.py --ours target/release/stencil"));
    }

    #[test]
    fn malformed_peers_file_is_a_warning_not_an_error() {
        let tmp = tempfile::tempdir().unwrap();
        let criterion = tmp.path().join("criterion");
        fixture(&criterion);
        let out = tmp.path().join("benchmarks.md");
        for text in
            ["{not json", r#"{"rows": [{"peer": "torch.compile", "grid": [64, 64], "dtype": "f32"}]}"#]
        {
            std::fs::write(criterion.join(PEERS_FILE), text).unwrap();
            let e = read_peers(&criterion.join(PEERS_FILE)).unwrap_err();
            assert!(e.starts_with("parsing ") && e.contains(PEERS_FILE), "{e}");
            assert_eq!(peers_or_warn(&criterion.join(PEERS_FILE)), Peers::default());
            generate(&criterion, &default_files(&criterion), &out, "x".into(), "y".into()).unwrap();
            assert!(!std::fs::read_to_string(&out).unwrap().contains("`peer/"));
        }
    }

    #[test]
    fn peers_appear_in_the_page_and_chart() {
        let tmp = tempfile::tempdir().unwrap();
        let criterion = tmp.path().join("criterion");
        fixture(&criterion);
        let peers = serde_json::json!({
            "gpu": "NVIDIA H200", "torch": "2.11.0", "jax": null, "date": "2026-05-04",
            "rows": [
                {"peer": "torch.compile", "grid": [64, 64, 64], "dtype": "f32", "ms_per_step": 0.004,
                 "percent_of_copy": 30.0, "check": "OK", "timing": "CUDA events, median of 50"},
                {"peer": "torch.compile-max-autotune", "grid": [64, 64, 64], "dtype": "f32",
                 "ms_per_step": 0.003, "percent_of_copy": 40.0, "check": "OK"},
                {"peer": "jax.jit", "grid": [64, 64, 64], "dtype": "f32", "ms_per_step": 0.005,
                 "percent_of_copy": 20.0, "check": "OK"},
            ]
        });
        let file = tmp.path().join("peers.json");
        std::fs::write(&file, peers.to_string()).unwrap();
        let out = tmp.path().join("benchmarks.md");
        let files = PeerFiles {
            stencil: file,
            merge: tmp.path().join("none.json"),
            scaling: tmp.path().join("none.json"),
        };
        generate(&criterion, &files, &out, "x".into(), "y".into()).unwrap();
        let md = std::fs::read_to_string(&out).unwrap();
        assert!(md.contains("| `peer/torch.compile` | 4.000 µs | 65.54 | 30.0 | - |\n"));
        assert!(md.contains(
            "- peers: `benches/peers/stencil_peers.py` on NVIDIA H200, 2026-05-04: torch 2.11.0, JAX not installed\n"
        ));
        let note = md.find("their % of copy is against the copy timed in their own process").unwrap();
        assert!(
            md.find("`peer/torch.compile`").unwrap() < note && note < md.find("## stencil_tiling/").unwrap()
        );
        assert_eq!(md.matches("Peer rows (`peer/...`)").count(), 1, "only under the group with peers");
        let svg =
            std::fs::read_to_string(tmp.path().join("benchmarks/stencil_variants_64x64x64-f32.svg")).unwrap();
        for label in ["torch.compile", "torch.compile-max-autotune", "peers", "#AFAFAF"] {
            assert!(svg.contains(label), "bar chart lacks {label:?}");
        }
        assert!(svg.starts_with("<svg width=\"1000\""), "six categories widen the chart");
    }

    fn merge_peer(
        name: &str,
        (m, n): (u64, u64),
        dist: &str,
        dtype: &str,
        ms: Option<f64>,
        check: &str,
    ) -> MergePeerRow {
        MergePeerRow {
            peer: name.into(),
            m,
            n,
            dist: dist.into(),
            dtype: dtype.into(),
            values: None,
            set: None,
            ms,
            percent_of_copy: ms.map(|ms| 0.002 / ms * 100.0),
            check: check.into(),
        }
    }

    #[test]
    fn set_rows_join_the_set_groups_of_their_operation() {
        let mut row =
            merge_peer("thrust::set_union", (1 << 27, 1 << 27), "few-unique", "i32", Some(1.0), "OK");
        assert_eq!(row.group_id(), "merge_variants/2^27+2^27-few-unique-i32");
        row.set = Some("symmetric-difference".into());
        assert_eq!(row.group_id(), "merge_set/2^27+2^27-few-unique-i32-symmetric_difference");
        row.set = Some("union".into());
        row.dist = "uniform".into();
        assert_eq!(row.group_id(), "merge_set/2^27+2^27-i32-union");
    }

    const MERGE_EVEN: &str = "merge_variants/2^20+2^20-i32";
    const MERGE_FEW: &str = "merge_variants/2^27+2^27-few-unique-f64";

    /// The fixture, and two merge groups named as merge_variants names them.
    fn merge_fixture(root: &Path) {
        fixture(root);
        write_bench(root, MERGE_EVEN, "copy", None, 1 << 21, 2000.0);
        write_bench(root, MERGE_EVEN, "rust/tiled", None, 1 << 21, 8000.0);
        write_bench(root, MERGE_EVEN, "rust/merge-path", None, 1 << 21, 3000.0);
        write_bench(root, MERGE_FEW, "copy", None, 1 << 28, 1.2e6);
    }

    #[test]
    fn merge_peers_json_is_parsed() {
        // As benches/peers/merge_peers.py writes it (xtask/testdata/merge_peers.json).
        let peers = read_merge_peers(&testdata("merge_peers.json")).unwrap().unwrap();
        assert_eq!(peers.gpu.as_deref(), Some("NVIDIA H200"));
        assert_eq!((peers.nvcc.as_deref(), peers.cccl.as_deref()), (Some("13.0 (V13.0.88)"), Some("3.0.1")));
        assert_eq!(peers.rows.len(), 5);
        assert_eq!(
            peers.rows[0],
            MergePeerRow {
                percent_of_copy: Some(50.0),
                ..merge_peer("thrust::merge", (1 << 20, 1 << 20), "uniform", "i32", Some(0.004), "OK")
            }
        );
        assert_eq!(peers.rows[0].group_id(), MERGE_EVEN);
        let first = peers.rows[0].to_peer();
        assert_eq!(
            (first.median_ns, first.elements, first.script),
            (Some(4000.0), 1 << 21, MERGE_PEERS_SCRIPT)
        );
        assert_eq!(first.rate(), Some((1 << 21) as f64 / 4000.0), "Gkeys/s = (m + n) / time");
        let skipped = peers.rows[1].to_peer();
        assert_eq!((skipped.median_ns, skipped.rate(), skipped.percent_of_copy), (None, None, None));
        assert_eq!(skipped.label(), "`peer/cub::DeviceMerge` (skipped)");
        assert!(peers.rows[2].is_ours() && !peers.rows[0].is_ours());
        assert_eq!(peers.rows[3].group_id(), MERGE_FEW);
        assert_eq!(peers.rows[3].to_peer().label(), "`peer/thrust::merge` (check FAIL)");
        assert_eq!(peers.rows[4].group_id(), "merge_variants/201326592+1000-all-equal-u32");
        assert_eq!(
            peers.describe(),
            "`benches/peers/merge_peers.py` on NVIDIA H200, 2026-11-30: nvcc 13.0 (V13.0.88), CCCL 3.0.1"
        );
    }

    #[test]
    fn merge_group_ids_write_powers_of_two_as_such() {
        assert_eq!(count_label(1 << 27), "2^27");
        assert_eq!(count_label(1), "2^0");
        assert_eq!(count_label(0), "0");
        assert_eq!(count_label(3 << 26), "201326592");
        assert_eq!(count_label((1 << 24) + 7), "16777223");
        let id = |m, n, dist, dtype| merge_peer("thrust::merge", (m, n), dist, dtype, None, "OK").group_id();
        assert_eq!(id(1 << 27, 1 << 27, "uniform", "i32"), "merge_variants/2^27+2^27-i32");
        assert_eq!(id(1 << 27, 1 << 27, "few-unique", "f64"), "merge_variants/2^27+2^27-few-unique-f64");
        assert_eq!(id(1 << 27, 1 << 27, "all-equal", "i64"), "merge_variants/2^27+2^27-all-equal-i64");
        assert_eq!(id(1 << 27, 1 << 20, "uniform", "f32"), "merge_variants/2^27+2^20-f32");
        assert_eq!(id(1000, 0, "uniform", "u32"), "merge_variants/1000+0-u32");
        let by_key = MergePeerRow {
            values: Some("u64".into()),
            ..merge_peer("thrust::merge_by_key", (1 << 27, 1 << 27), "few-unique", "f64", None, "OK")
        };
        assert_eq!(by_key.group_id(), "merge_by_key/2^27+2^27-few-unique-f64+u64");
    }

    #[test]
    fn merge_peer_rows_join_the_group_of_their_case_and_dtype() {
        let tmp = tempfile::tempdir().unwrap();
        merge_fixture(tmp.path());
        const BY_KEY: &str = "merge_by_key/2^20+2^20-i32+u32";
        write_bench(tmp.path(), BY_KEY, "copy", None, 1 << 21, 3000.0);
        let mut groups = groups_of(tmp.path());
        let rows = [
            merge_peer("thrust::merge", (1 << 20, 1 << 20), "uniform", "i32", Some(0.004), "OK"),
            merge_peer("cub::DeviceMerge", (1 << 20, 1 << 20), "uniform", "i32", None, "skipped: no CUB"),
            merge_peer("ours/merge-path", (1 << 20, 1 << 20), "uniform", "i32", Some(0.003), "OK"),
            merge_peer("thrust::merge", (1 << 27, 1 << 27), "few-unique", "f64", Some(2.0), "FAIL"),
            merge_peer("thrust::merge", (1 << 20, 1 << 20), "uniform", "f64", Some(0.004), "OK"),
            merge_peer("thrust::merge", (1 << 20, 1 << 20), "few-unique", "i32", Some(0.004), "OK"),
            // A merge by key of the same case joins its own group, not the keys' one.
            MergePeerRow {
                values: Some("u32".into()),
                ..merge_peer("thrust::merge_by_key", (1 << 20, 1 << 20), "uniform", "i32", Some(0.006), "OK")
            },
        ];
        attach_merge_peers(&mut groups, &rows);
        fn peers_of(groups: &[Group], id: &str) -> Vec<String> {
            groups.iter().find(|g| g.id == id).unwrap().peers.iter().map(|p| p.peer.clone()).collect()
        }
        assert_eq!(
            peers_of(&groups, MERGE_EVEN),
            ["thrust::merge", "cub::DeviceMerge"],
            "ours/ rows are left out"
        );
        assert_eq!(peers_of(&groups, MERGE_FEW), ["thrust::merge"]);
        assert_eq!(peers_of(&groups, BY_KEY), ["thrust::merge_by_key"]);
        let others = groups.iter().filter(|g| ![MERGE_EVEN, MERGE_FEW, BY_KEY].contains(&g.id.as_str()));
        assert!(others.clone().all(|g| g.peers.is_empty()), "not stencils, not other merge cases");
        let even = groups.iter().find(|g| g.id == MERGE_EVEN).unwrap();
        assert!(table(even).ends_with(
            "| `rust/tiled` | 8.000 µs | 262.1 | 25.0 | - |\n\
             | `rust/merge-path` | 3.000 µs | 699.1 | 66.7 | - |\n\
             | `peer/thrust::merge` | 4.000 µs | 524.3 | 50.0 | - |\n\
             | `peer/cub::DeviceMerge` (skipped) | - | - | - | - |\n"
        ));
        assert!(table(even).starts_with("| member | median | Gkeys/s |"));
        let bars: Vec<String> = bar_entries(even).into_iter().map(|(c, _, _)| c).collect();
        assert_eq!(bars, ["tiled", "merge-path", "thrust::merge"], "a skipped peer is no bar");
        let few = groups.iter().find(|g| g.id == MERGE_FEW).unwrap();
        assert!(table(few).ends_with("| `peer/thrust::merge` (check FAIL) | 2.000 ms | 134.2 | 0.1 | - |\n"));
        assert!(bar_entries(few).is_empty(), "a failed peer is no bar");
        // Stencil peers and merge peers side by side: each group keeps its own.
        attach_peers(&mut groups, &[peer("torch.compile", [64, 64, 64], "f32", Some(0.004), "OK")]);
        assert_eq!(peers_of(&groups, STENCIL), ["torch.compile"]);
        assert_eq!(peers_of(&groups, MERGE_EVEN), ["thrust::merge", "cub::DeviceMerge"]);
    }

    #[test]
    fn merge_peers_appear_in_the_page_and_chart() {
        let tmp = tempfile::tempdir().unwrap();
        let criterion = tmp.path().join("criterion");
        merge_fixture(&criterion);
        std::fs::copy(testdata("merge_peers.json"), criterion.join(MERGE_PEERS_FILE)).unwrap();
        let out = tmp.path().join("benchmarks.md");
        generate(&criterion, &default_files(&criterion), &out, "x".into(), "y".into()).unwrap();
        let md = std::fs::read_to_string(&out).unwrap();
        assert!(md.contains(
            "- merge peers: `benches/peers/merge_peers.py` on NVIDIA H200, 2026-11-30: nvcc 13.0 (V13.0.88), CCCL 3.0.1\n"
        ));
        assert!(!md.contains("- peers:"), "no stencil peers file");
        assert!(md.contains(MERGE_PEERS_COMMAND) && md.contains("[--merge-peers FILE]"));
        assert!(md.contains("| `peer/thrust::merge` | 4.000 µs | 524.3 | 50.0 | - |\n"));
        assert!(md.contains("| `peer/cub::DeviceMerge` (skipped) | - | - | - | - |\n"));
        assert!(!md.contains("`peer/ours/"), "our rows come from criterion");
        let section = md.find(&format!("## {MERGE_EVEN}\n")).unwrap();
        let note =
            md.find("come from `benches/peers/merge_peers.py` run in the same device session").unwrap();
        let next = md[section + 1..].find("\n## ").map_or(md.len(), |at| section + 1 + at);
        assert!(section < note && note < next, "the note sits under the merge group");
        assert_eq!(md.matches("Peer rows (`peer/...`)").count(), 2, "under the two groups with peers");
        let svg =
            std::fs::read_to_string(tmp.path().join("benchmarks/merge_variants_2_20_2_20-i32.svg")).unwrap();
        for label in ["thrust::merge", "merge-path", "peers", "#AFAFAF", "Gkeys/s", "copy ceiling"] {
            assert!(svg.contains(label), "bar chart lacks {label:?}");
        }
        assert!(!svg.contains("cub::DeviceMerge"), "skipped: no bar");
    }

    #[test]
    fn missing_or_malformed_merge_peers_file_gives_no_rows() {
        let tmp = tempfile::tempdir().unwrap();
        let criterion = tmp.path().join("criterion");
        merge_fixture(&criterion);
        let file = criterion.join(MERGE_PEERS_FILE);
        assert_eq!(read_merge_peers(&file), Ok(None));
        assert_eq!(merge_peers_or_warn(&file), MergePeers::default());
        let out = tmp.path().join("benchmarks.md");
        for text in [None, Some("{not json"), Some(r#"{"rows": [{"peer": "thrust::merge", "m": 4}]}"#)] {
            if let Some(text) = text {
                std::fs::write(&file, text).unwrap();
                let e = read_merge_peers(&file).unwrap_err();
                assert!(e.starts_with("parsing ") && e.contains(MERGE_PEERS_FILE), "{e}");
                assert_eq!(merge_peers_or_warn(&file), MergePeers::default());
            }
            generate(&criterion, &default_files(&criterion), &out, "x".into(), "y".into()).unwrap();
            let md = std::fs::read_to_string(&out).unwrap();
            assert!(!md.contains("`peer/") && !md.contains("- merge peers:") && !md.contains("Peer rows"));
            assert!(md.contains(MERGE_PEERS_COMMAND));
        }
        // Only our own rows: no peer rows, and no header line for them.
        let ours = serde_json::json!({"gpu": "NVIDIA H200", "rows": [
            {"peer": "ours/merge-path", "m": 1 << 20, "n": 1 << 20, "dist": "uniform", "dtype": "i32",
             "ms": 0.003, "percent_of_copy": 70.0, "check": "OK"}]});
        std::fs::write(&file, ours.to_string()).unwrap();
        generate(&criterion, &default_files(&criterion), &out, "x".into(), "y".into()).unwrap();
        let md = std::fs::read_to_string(&out).unwrap();
        assert!(!md.contains("`peer/") && !md.contains("- merge peers:"));
    }

    #[test]
    fn roles() {
        assert_eq!(Role::of("copy"), Role::Copy);
        assert_eq!(Role::of("rust/register-tiled"), Role::Rust("register-tiled"));
        assert_eq!(Role::of("cuda/circular"), Role::Cuda("circular"));
        assert_eq!(Role::of("rust/"), Role::Other);
        assert_eq!(Role::of("thrust/merge"), Role::Other);
    }
}
