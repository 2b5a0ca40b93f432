//! The benchmarks gathered into criterion's groups, each group's members in the report's order,
//! and what a member's name says it measures.

use std::cmp::Ordering;
use std::collections::BTreeMap;

use super::peers::Peer;
use super::results::Bench;

/// Kernel names in the order the book introduces them; unknown kernels sort after, by name.
const KERNEL_ORDER: [&str; 8] =
    ["basic", "shared-tiled", "coarsened", "register-tiled", "streaming", "tiled", "circular", "merge-path"];

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
    pub(super) fn rate_unit(self, suite_name: &str) -> &'static str {
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
    pub(super) fn parameter(self) -> (&'static str, &'static str) {
        match self {
            Suite::StencilTiling => ("tile", "tile edge T"),
            Suite::StencilTemporal => ("K", "time steps per pass K"),
            Suite::MergeCoarsening => ("elements/thread", "elements per thread"),
            _ => ("parameter", "parameter"),
        }
    }

    pub(super) fn blurb(self) -> Option<&'static str> {
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
    pub(super) suite_name: String,
    /// Members in report order: copy first, then kernels in the book's order, Rust before CUDA,
    /// parameters ascending.
    pub members: Vec<Bench>,
    /// Peer rows of the same grid and element type (`stencil_variants` groups), or of the same
    /// case and key type (`merge_variants` groups), in file order.
    pub peers: Vec<Peer>,
}

impl Group {
    pub(super) fn has_values(&self) -> bool {
        self.members.iter().any(|m| m.value.is_some())
    }

    pub(super) fn rate_unit(&self) -> &'static str {
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
    pub(super) fn ceiling_rate(&self) -> Option<f64> {
        let copy = self.members.iter().find(|m| m.role() == Role::Copy && m.value.is_none())?;
        let elements = copy.elements.or_else(|| self.members.iter().find_map(|m| m.elements))?;
        Some(elements as f64 / copy.median_ns)
    }

    /// File name of the group's chart: the id with characters other than `[A-Za-z0-9._-]` made `_`.
    pub(super) fn chart_stem(&self) -> String {
        self.id
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() || "._-".contains(c) { c } else { '_' })
            .collect()
    }
}

/// Compares strings with runs of digits compared as numbers (`2^24` before `2^28`, `T=8` before `T=16`).
pub(super) fn natural_cmp(a: &str, b: &str) -> Ordering {
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
