//! The page's header: the GPU, driver, PTX target and date of the run, and the commit.

use std::fmt::Write as _;
use std::path::Path;
use std::process::Command;

use super::read_json;

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
    /// Where the peer rows come from ([`super::peers::Peers`]), when there are any.
    pub peers: Option<String>,
    /// Where the merge peer rows come from ([`super::peers::MergePeers`]), when there are any.
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

pub(super) fn git_commit(workspace: &Path) -> String {
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
