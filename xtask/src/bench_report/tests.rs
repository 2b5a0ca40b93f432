//! Tests of the whole report, on criterion trees written as criterion 0.8 writes them and on
//! `xtask/testdata`.

use std::cmp::Ordering;
use std::path::{Path, PathBuf};

use super::chart::*;
use super::groups::*;
use super::page::*;
use super::peers::*;
use super::results::*;
use super::stamp::*;
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

fn write_bench(root: &Path, group: &str, function: &str, value: Option<&str>, elements: u64, median_ns: f64) {
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
    let copy = benches.iter().find(|b| b.group_id == "stencil_variants/8x8x8-f32" && b.function == "copy");
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
        tiling.starts_with("| member | tile | median | Gpoints/s | % of copy | Rust/C++ |\n|---|--:|--:|")
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
    let expected =
        PeerRow { percent_of_copy: Some(50.0), ..peer("torch.compile", [8, 8, 8], "f32", Some(0.008), "OK") };
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
    for text in ["{not json", r#"{"rows": [{"peer": "torch.compile", "grid": [64, 64], "dtype": "f32"}]}"#] {
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
    assert!(md.find("`peer/torch.compile`").unwrap() < note && note < md.find("## stencil_tiling/").unwrap());
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
    let mut row = merge_peer("thrust::set_union", (1 << 27, 1 << 27), "few-unique", "i32", Some(1.0), "OK");
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
    assert_eq!((first.median_ns, first.elements, first.script), (Some(4000.0), 1 << 21, MERGE_PEERS_SCRIPT));
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
    let note = md.find("come from `benches/peers/merge_peers.py` run in the same device session").unwrap();
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
