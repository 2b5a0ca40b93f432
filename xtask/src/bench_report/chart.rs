//! The groups' SVG charts (plotters): bars for variant suites, lines for parameter sweeps.

use plotters::coord::combinators::WithKeyPoints;
use plotters::coord::types::{RangedCoordf64, RangedCoordi32};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::groups::{Group, Role, Suite, natural_cmp};
use super::page::format_sig;

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

/// A chart of throughput: integer x ([`X_UNIT`] per category or parameter value), f64 y.
type ThroughputChart<'a, 'b> =
    ChartContext<'a, SVGBackend<'b>, Cartesian2d<WithKeyPoints<RangedCoordi32>, RangedCoordf64>>;

/// The axes and the grid: x labelled with `labels` (one per [`X_UNIT`]) and `x_desc`, vertical
/// grid lines where `x_mesh`; y from 0 to `top` in `unit`.
fn draw_mesh<'a, 'b: 'a>(
    chart: &mut ThroughputChart<'a, 'b>,
    labels: &[String],
    x_desc: &str,
    unit: &str,
    top: f64,
    x_mesh: bool,
) -> Result<(), String> {
    let label = |x: &i32| labels.get((x / X_UNIT).max(0) as usize).cloned().unwrap_or_default();
    let y_fmt = y_label(top);
    let mut mesh = chart.configure_mesh();
    if !x_mesh {
        mesh.disable_x_mesh();
    }
    mesh.x_label_formatter(&label)
        .x_desc(x_desc)
        .y_desc(unit)
        .y_label_formatter(&y_fmt)
        .label_style(("sans-serif", 15))
        .light_line_style(TRANSPARENT)
        .draw()
        .map_err(chart_err)
}

/// The copy ceiling `ceiling` (in `unit`) as a horizontal line from `x.0` to `x.1`, with its
/// legend entry.
fn draw_ceiling(
    chart: &mut ThroughputChart<'_, '_>,
    x: (i32, i32),
    ceiling: f64,
    unit: &str,
) -> Result<(), String> {
    let style = CEILING_COLOR.stroke_width(2);
    chart
        .draw_series(LineSeries::new([(x.0, ceiling), (x.1, ceiling)], style))
        .map_err(chart_err)?
        .label(format!("copy ceiling ({} {unit})", format_sig(ceiling)))
        .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], style));
    Ok(())
}

/// The legend, in the upper right corner over the plot, in `font_size` px.
fn draw_legend<'a, 'b: 'a>(chart: &mut ThroughputChart<'a, 'b>, font_size: u32) -> Result<(), String> {
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .label_font(("sans-serif", font_size))
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()
        .map_err(chart_err)
}

#[derive(Clone, Copy, PartialEq)]
pub(super) enum Side {
    Rust,
    Cuda,
    Other,
    Peer,
}

/// The bars of a bar chart, `(category, side, throughput)`: each member but the copy, then each
/// peer whose check passed.
pub(super) fn bar_entries(group: &Group) -> Vec<(String, Side, f64)> {
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
        draw_mesh(&mut chart, &categories, "kernel", unit, top, false)?;
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
            draw_ceiling(&mut chart, (0, n * X_UNIT), c, unit)?;
        }
        draw_legend(&mut chart, 15)?;
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
        draw_mesh(&mut chart, &values, x_desc, unit, top, true)?;
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
            draw_ceiling(&mut chart, (-X_UNIT / 2, n * X_UNIT - X_UNIT / 2), c, unit)?;
        }
        draw_legend(&mut chart, 14)?;
        root.present().map_err(chart_err)?;
    }
    Ok(Some(svg))
}

/// The group's chart: bars for variant suites, lines for parameter sweeps.
pub(super) fn chart(group: &Group) -> Result<Option<String>, String> {
    match group.suite {
        Suite::StencilVariants | Suite::StencilStreaming | Suite::MergeVariants => bar_chart(group),
        Suite::StencilTiling | Suite::StencilTemporal | Suite::MergeCoarsening => sweep_chart(group),
        Suite::Other if group.has_values() => sweep_chart(group),
        Suite::Other => bar_chart(group),
    }
}
