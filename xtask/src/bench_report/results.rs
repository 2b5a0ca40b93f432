//! Criterion's saved results: each benchmark's `new/benchmark.json` and `new/estimates.json`.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::groups::Role;
use super::{BENCH_COMMANDS, read_json};

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

    pub(super) fn role(&self) -> Role<'_> {
        Role::of(&self.function)
    }

    /// The member's name: its function, or its parameter when it has no function.
    pub(super) fn name(&self) -> &str {
        if self.function.is_empty() { self.value.as_deref().unwrap_or("") } else { &self.function }
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
