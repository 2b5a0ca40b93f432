//! The peers' results (`stencil_peers.json`, `merge_peers.json`), read and given to the groups
//! of the same grid or case and element type.

use std::path::Path;

use serde::Deserialize;

use super::groups::{Group, Suite, natural_cmp};
use super::{MERGE_BY_KEY_SUITE, MERGE_PEERS_SCRIPT, MERGE_SET_SUITE, PEERS_SCRIPT, read_json};

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
    pub(super) fn ok(&self) -> bool {
        self.check == "OK"
    }

    /// Elements per ns (billions per second).
    pub(super) fn rate(&self) -> Option<f64> {
        self.median_ns.map(|ns| self.elements as f64 / ns)
    }

    /// The table's name of the row: `peer/<name>`, marked when its result is not valid.
    pub(super) fn label(&self) -> String {
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
    pub(super) fn describe(&self) -> String {
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
    pub(super) fn describe(&self) -> String {
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
pub(super) fn peers_or_warn(path: &Path) -> Peers {
    or_warn(read_peers(path))
}

/// The merge peers' results for the report: none, with a warning, when the file is malformed.
pub(super) fn merge_peers_or_warn(path: &Path) -> MergePeers {
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
