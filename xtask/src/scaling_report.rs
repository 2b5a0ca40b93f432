//! The several-GPU section of `docs/benchmarks.md`: `stencil --gpus … --json` reports (one per
//! run, gathered into one JSON array, [`SCALING_FILE`]) as a table of every row, the weak- and
//! strong-scaling ratios they imply, and one chart per element type of the time per step split
//! into compute and exposed exchange.

use std::fmt::Write as _;
use std::path::Path;

use plotters::prelude::*;
use serde::Deserialize;

/// The runs' reports, where `cargo xtask bench-report` looks for them in the criterion directory.
pub const SCALING_FILE: &str = "stencil_scaling.json";

/// What produces [`SCALING_FILE`]: the runs, each with `--json`, gathered into one array.
pub const SCALING_COMMANDS: &str = "stencil --gpus N --grid G --steps 100 --repeat 7 --dtype all --json [--no-overlap]  # and one process per GPU: --gpus env";

/// One `stencil --gpus … --json` report.
#[derive(Debug, Deserialize)]
pub struct Run {
    pub gpu: String,
    /// GPUs of the run (the world size with one process per GPU).
    pub gpus: usize,
    /// This process's rank with one process per GPU; absent with one process for all.
    pub rank: Option<usize>,
    pub grid: Grid,
    pub steps: usize,
    pub rows: Vec<Row>,
}

/// A run's grid, `nz × ny × nx`.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
pub struct Grid {
    pub nz: usize,
    pub ny: usize,
    pub nx: usize,
}

/// One element type of a run.
#[derive(Debug, Deserialize)]
pub struct Row {
    pub dtype: String,
    pub halo: usize,
    #[serde(default)]
    pub overlap: bool,
    pub variant: String,
    pub ms_per_step: f64,
    pub compute_ms_per_step: f64,
    pub gpoints_per_s: f64,
    pub status: String,
}

/// Reads `path` (a JSON array of reports, or one report); `None` if it does not exist.
pub fn read(path: &Path) -> Result<Option<Vec<Run>>, String> {
    if !path.exists() {
        return Ok(None);
    }
    let text = std::fs::read_to_string(path).map_err(|e| format!("reading {}: {e}", path.display()))?;
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum OneOrMany {
        Many(Vec<Run>),
        One(Run),
    }
    match serde_json::from_str(&text).map_err(|e| format!("parsing {}: {e}", path.display()))? {
        OneOrMany::Many(runs) => Ok(Some(runs)),
        OneOrMany::One(run) => Ok(Some(vec![run])),
    }
}

impl Run {
    /// How the run was launched: `1 GPU`, `2 GPUs, one process`, `2 GPUs, rank 1 of 2`.
    fn launch(&self) -> String {
        match (self.gpus, self.rank) {
            (1, _) => "1 GPU".into(),
            (n, None) => format!("{n} GPUs, one process"),
            (n, Some(rank)) => format!("{n} GPUs, rank {rank} of {n}"),
        }
    }

    fn grid_name(&self) -> String {
        format!("{}x{}x{}", self.grid.nz, self.grid.ny, self.grid.nx)
    }
}

/// Weak and strong scaling of each multi-GPU run of one process, against the one-GPU runs of the
/// same element type, variant and halo: weak against the grid with `nz / gpus` planes (time per
/// step over time per step: 100 % is perfect), strong against the same grid (the speed-up).
pub fn ratios(runs: &[Run]) -> Vec<String> {
    let mut lines = Vec::new();
    let single = |grid: Grid, row: &Row| {
        runs.iter().filter(|r| r.gpus == 1 && r.grid == grid).find_map(|r| {
            r.rows.iter().find(|s| s.dtype == row.dtype && s.variant == row.variant && s.halo == row.halo)
        })
    };
    for run in runs.iter().filter(|r| r.gpus > 1 && r.rank.is_none()) {
        for row in &run.rows {
            let overlap = if row.overlap { "overlapped" } else { "not overlapped" };
            let what = format!("{} {} {}, {overlap}", run.grid_name(), row.dtype, row.variant);
            let slab = Grid { nz: run.grid.nz / run.gpus, ..run.grid };
            if run.grid.nz.is_multiple_of(run.gpus)
                && let Some(one) = single(slab, row)
            {
                let efficiency = 100.0 * one.ms_per_step / row.ms_per_step;
                lines.push(format!(
                    "weak scaling, {what}: {efficiency:.1} % ({:.4} ms per step on 1 GPU with {}x{}x{}, {:.4} on {})",
                    one.ms_per_step, slab.nz, slab.ny, slab.nx, row.ms_per_step, run.gpus
                ));
            }
            if let Some(one) = single(run.grid, row) {
                lines.push(format!(
                    "strong scaling, {what}: {:.2}× ({:.4} ms per step on 1 GPU, {:.4} on {})",
                    one.ms_per_step / row.ms_per_step,
                    one.ms_per_step,
                    row.ms_per_step,
                    run.gpus
                ));
            }
        }
    }
    lines
}

/// The section's Markdown and its charts `(file name, SVG)`, the charts in `charts_dir`.
pub fn render(runs: &[Run], charts_dir: &str) -> Result<(String, Vec<(String, String)>), String> {
    let mut md = String::new();
    let _ = writeln!(md, "## stencil_scaling\n");
    let gpu = runs.first().map_or("-", |r| r.gpu.as_str());
    let _ = writeln!(
        md,
        "The seven-point stencil over several GPUs ({gpu}): the grid split along z, halo planes \
         exchanged over NCCL every `halo` steps, overlapped with the update of the inner planes or \
         after the step. Wall time per step from the first launch to every GPU's last, median of \
         the runs; **compute** is the same run without the exchange, **exposed** the difference. \
         From `{SCALING_FILE}` ({SCALING_COMMANDS}).\n"
    );
    let _ = writeln!(
        md,
        "| launch | grid | steps | dtype | variant | halo | overlap | ms/step | compute | exposed | Gpoints/s | check |"
    );
    let _ = writeln!(md, "|---|---|--:|---|---|--:|---|--:|--:|--:|--:|---|");
    for run in runs {
        for row in &run.rows {
            let _ = writeln!(
                md,
                "| {} | {} | {} | {} | {} | {} | {} | {:.4} | {:.4} | {:.4} | {:.1} | {} |",
                run.launch(),
                run.grid_name(),
                run.steps,
                row.dtype,
                row.variant,
                row.halo,
                match (run.gpus, row.overlap) {
                    (1, _) => "-",
                    (_, true) => "yes",
                    (_, false) => "no",
                },
                row.ms_per_step,
                row.compute_ms_per_step,
                row.ms_per_step - row.compute_ms_per_step,
                row.gpoints_per_s,
                row.status
            );
        }
    }
    let ratios = ratios(runs);
    if !ratios.is_empty() {
        md.push('\n');
        for line in ratios {
            let _ = writeln!(md, "- {line}");
        }
    }
    md.push('\n');
    let mut charts = Vec::new();
    let mut dtypes: Vec<&str> =
        runs.iter().flat_map(|r| r.rows.iter().map(|row| row.dtype.as_str())).collect();
    dtypes.sort_unstable();
    dtypes.dedup();
    for dtype in dtypes {
        let file = format!("stencil_scaling-{dtype}.svg");
        let _ = writeln!(md, "![Time per step over GPUs, {dtype}]({charts_dir}/{file})\n");
        charts.push((file, chart(runs, dtype)?));
    }
    Ok((md, charts))
}

/// Stacked bars of one element type's time per step: compute, then the exposed exchange.
fn chart(runs: &[Run], dtype: &str) -> Result<String, String> {
    let bars: Vec<(String, f64, f64)> = runs
        .iter()
        .flat_map(|run| {
            run.rows.iter().filter(|row| row.dtype == dtype).map(move |row| {
                let overlap = if run.gpus > 1 && !row.overlap { ", no overlap" } else { "" };
                let label = format!("{}{overlap} · {}", run.launch(), run.grid_name());
                (label, row.compute_ms_per_step.min(row.ms_per_step), row.ms_per_step)
            })
        })
        .collect();
    let err = |e: &dyn std::fmt::Display| format!("drawing the scaling chart: {e}");
    let top = bars.iter().map(|b| b.2).fold(0.0, f64::max) * 1.2;
    let height = 120 + 45 * bars.len() as u32;
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (900, height)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| err(&e))?;
        let mut chart = ChartBuilder::on(&root)
            .caption(format!("stencil over GPUs, {dtype}: time per step"), ("sans-serif", 22))
            .margin(15)
            .x_label_area_size(40)
            .y_label_area_size(330)
            .build_cartesian_2d(0.0..top.max(1e-6), (0..bars.len() as i32).into_segmented())
            .map_err(|e| err(&e))?;
        let label = |y: &SegmentValue<i32>| match y {
            SegmentValue::CenterOf(i) => bars.get(*i as usize).map_or(String::new(), |b| b.0.clone()),
            _ => String::new(),
        };
        chart
            .configure_mesh()
            .disable_y_mesh()
            .y_label_formatter(&label)
            .x_desc("ms per step")
            .label_style(("sans-serif", 14))
            .draw()
            .map_err(|e| err(&e))?;
        let segment = |i: usize, from: f64, to: f64, color: RGBColor| {
            let i = i as i32;
            Rectangle::new([(from, SegmentValue::Exact(i)), (to, SegmentValue::Exact(i + 1))], color.filled())
        };
        chart
            .draw_series(bars.iter().enumerate().map(|(i, b)| segment(i, 0.0, b.1, RGBColor(206, 92, 38))))
            .map_err(|e| err(&e))?
            .label("compute")
            .legend(|(x, y)| Rectangle::new([(x, y - 6), (x + 16, y + 6)], RGBColor(206, 92, 38).filled()));
        chart
            .draw_series(bars.iter().enumerate().map(|(i, b)| segment(i, b.1, b.2, RGBColor(127, 127, 127))))
            .map_err(|e| err(&e))?
            .label("exposed exchange")
            .legend(|(x, y)| Rectangle::new([(x, y - 6), (x + 16, y + 6)], RGBColor(127, 127, 127).filled()));
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::LowerRight)
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .label_font(("sans-serif", 14))
            .draw()
            .map_err(|e| err(&e))?;
        root.present().map_err(|e| err(&e))?;
    }
    Ok(svg)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(gpus: usize, rank: Option<usize>, nz: usize, overlap: bool, f32_ms: f64) -> serde_json::Value {
        serde_json::json!({
            "gpu": "NVIDIA H200", "gpus": gpus, "rank": rank, "grid": { "nz": nz, "ny": 512, "nx": 512 },
            "steps": 100, "repeat": 7, "seed": 3,
            "rows": [{
                "dtype": "f32", "gpus": gpus, "halo": 4, "overlap": overlap, "variant": "streaming",
                "ms_per_step": f32_ms, "compute_ms_per_step": f32_ms - 0.001,
                "exposed_exchange_ms_per_step": 0.001, "gpoints_per_s": 500.0, "status": "OK"
            }]
        })
    }

    fn runs() -> Vec<Run> {
        let all = serde_json::json!([
            report(1, None, 512, true, 0.27),
            report(1, None, 1024, true, 0.54),
            report(2, None, 1024, true, 0.28),
            report(2, None, 1024, false, 0.29),
            report(2, Some(1), 1024, true, 0.28),
        ]);
        serde_json::from_value(all).unwrap()
    }

    #[test]
    fn weak_and_strong_scaling_pair_each_run_with_one_gpu() {
        let lines = ratios(&runs());
        assert_eq!(lines.len(), 4, "{lines:?}");
        assert!(
            lines[0].starts_with("weak scaling, 1024x512x512 f32 streaming, overlapped: 96.4 %"),
            "{lines:?}"
        );
        assert!(
            lines[1].starts_with("strong scaling, 1024x512x512 f32 streaming, overlapped: 1.93×"),
            "{lines:?}"
        );
        assert!(lines[3].contains("not overlapped: 1.86×"), "{lines:?}");
    }

    #[test]
    fn the_section_has_every_row_and_one_chart_per_element_type() {
        let (md, charts) = render(&runs(), "benchmarks").unwrap();
        assert!(md.starts_with("## stencil_scaling\n"));
        assert_eq!(md.matches("| f32 | streaming |").count(), 5);
        assert!(md.contains("| 2 GPUs, rank 1 of 2 | 1024x512x512 |"));
        assert!(md.contains("| 2 GPUs, one process | 1024x512x512 | 100 | f32 | streaming | 4 | no | 0.2900 | 0.2890 | 0.0010 |"));
        assert!(md.contains("![Time per step over GPUs, f32](benchmarks/stencil_scaling-f32.svg)"));
        assert_eq!(charts.len(), 1);
        assert!(charts[0].1.contains("<svg") && charts[0].1.contains("exposed exchange"));
    }

    #[test]
    fn a_missing_file_is_none_and_one_report_is_a_list_of_one() {
        let dir = std::env::temp_dir().join(format!("scaling-report-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        assert!(read(&dir.join("absent.json")).unwrap().is_none());
        let one = dir.join("one.json");
        std::fs::write(&one, report(1, None, 512, true, 0.27).to_string()).unwrap();
        assert_eq!(read(&one).unwrap().unwrap().len(), 1);
        std::fs::write(&one, "{").unwrap();
        assert!(read(&one).unwrap_err().contains("parsing"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
