//! `tune_streaming`: times every launch shape of the streaming stencil kernel on this GPU
//! (every built vector width × rows per thread × planes ahead × planes prefetched, crossed with block shapes and
//! planes per block), prints the fastest against the device-to-device copy, and checks the
//! best few against the CPU reference. Each row says how the shape sits on the GPU: registers per
//! thread (as the driver compiled the kernel), blocks resident at once, and blocks launched (more
//! than resident means several waves). This is how `tiles::STREAMING_F32` and
//! `STREAMING_F64` were chosen; run it to see whether another GPU prefers another shape:
//!
//! ```sh
//! cargo run --release --example tune_streaming -- --grid 512 --dtype all
//! ```
//!
//! With `--steps N` each timed run is a run of `N` steps (as the library runs them: every other
//! step walks back through the planes the step before kept in L2) against `N` copies, reported
//! per step: long enough runs show the sustained pace, which on a GPU held by its power cap can
//! rank the shapes differently from one step. With `--clusters 1,8` each shape is also timed in
//! thread-block clusters of 8 blocks (`StreamingShape::cluster`; Hopper and later).

use std::process::ExitCode;

use clap::{Parser, ValueEnum};
use gpu_kernels::stencil::tiles::{IN_WAVES, MAX_CLUSTER, NO_CLUSTER, StreamAxis, StreamingShape};
use gpu_kernels::stencil::{Coeffs, Grid3};
use host::report::{Table, gpu_line, report_error};
use host::stencil::{StencilProblem, parse_grid, reference_steps, streaming};
use host::verify::compare;
use host::{Element, Error, Gpu, Result, random, stats::median_after_warm_up};

/// Block shapes `[x, y]` (threads) tried with every kernel.
const BLOCKS: [[u32; 2]; 8] = [[32, 4], [32, 8], [32, 16], [32, 32], [64, 4], [64, 8], [128, 2], [128, 4]];

#[derive(Parser)]
#[command(about = "Time every launch shape of the streaming stencil kernel and print the fastest")]
struct Args {
    /// Grid size: N or NZxNYxNX (x fastest).
    #[arg(long, default_value = "512", value_parser = |s: &str| parse_grid(s).map_err(|e| e.to_string()))]
    grid: Grid3,
    /// Element type.
    #[arg(long, value_enum, default_value_t = Dtype::All)]
    dtype: Dtype,
    /// Planes per block tried with every kernel and block shape (comma-separated); `waves`: whole
    /// columns, one wave of blocks per launch (`tiles::IN_WAVES`).
    #[arg(long, value_delimiter = ',', default_value = "2,4,8,16,32,64,128,256,waves", value_parser = parse_planes)]
    planes: Vec<u32>,
    /// Only these kernels (comma-separated, as the table names them, e.g. `v2 r2 a0 p1`);
    /// default: every built one.
    #[arg(long, value_delimiter = ',')]
    kernels: Vec<String>,
    /// Only these blocks of threads (comma-separated `XxY`, e.g. `64x4`); default: eight shapes
    /// from 32×4 to 128×4.
    #[arg(long, value_delimiter = ',', value_parser = parse_block)]
    blocks: Vec<[u32; 2]>,
    /// Axes walked (comma-separated `z`, `y`): along y, blocks tile the x–z cross-section.
    #[arg(long, value_delimiter = ',', default_value = "z,y", value_parser = parse_axis)]
    axes: Vec<StreamAxis>,
    /// Thread-block clusters tried with every shape (comma-separated blocks per cluster, 1: none,
    /// up to 8), consecutive along the launch's rows of tiles; a launch takes the largest size up
    /// to the one asked that divides its rows, and the table names the size it took (each size
    /// timed once; on a GPU without clusters, every launch is plain).
    #[arg(long, value_delimiter = ',', default_value = "1", value_parser = clap::value_parser!(u32).range(i64::from(NO_CLUSTER)..=i64::from(MAX_CLUSTER)))]
    clusters: Vec<u32>,
    /// Timed runs per shape (median reported).
    #[arg(long, default_value_t = 10)]
    repeat: usize,
    /// Time steps per timed run (and copies per timed copy), reported per step. Runs of many
    /// steps show the sustained pace; the shapes run one after another, so the GPU's power and
    /// heat carry over from each to the next.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    steps: u32,
    /// Shapes listed, fastest first.
    #[arg(long, default_value_t = 25)]
    top: usize,
    /// Shapes checked against the CPU reference, fastest first.
    #[arg(long, default_value_t = 3)]
    verify: usize,
}

/// A number of planes per block, or `waves` ([`IN_WAVES`]).
fn parse_planes(text: &str) -> std::result::Result<u32, String> {
    match text {
        "waves" => Ok(IN_WAVES),
        _ => match text.parse::<u32>() {
            Ok(planes) if planes > 0 => Ok(planes),
            _ => Err(format!("{text:?} is neither a number of planes (at least 1) nor `waves`")),
        },
    }
}

/// An axis, `z` or `y`.
fn parse_axis(text: &str) -> std::result::Result<StreamAxis, String> {
    match text {
        "z" => Ok(StreamAxis::Z),
        "y" => Ok(StreamAxis::Y),
        _ => Err(format!("{text:?} is not an axis the kernel walks: z or y")),
    }
}

/// A block of threads `XxY`.
fn parse_block(text: &str) -> std::result::Result<[u32; 2], String> {
    let parsed = text.split_once('x').and_then(|(x, y)| Some([x.parse().ok()?, y.parse().ok()?]));
    match parsed {
        Some([x, y]) if x > 0 && y > 0 => Ok([x, y]),
        _ => Err(format!("{text:?} is not a block of threads XxY, e.g. 64x4")),
    }
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Dtype {
    F32,
    F64,
    All,
}

fn tune<T: Element>(gpu: &Gpu, args: &Args) -> Result<bool> {
    let Grid3 { nx, ny, nz } = args.grid;
    let input = random::random_grid::<T>((nz as usize, ny as usize, nx as usize), random::fresh_seed())?;
    let coeffs = Coeffs([0.4, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1].map(T::from_f64));
    let mut problem = StencilProblem::new(gpu, input.view(), coeffs)?;
    let steps = args.steps as usize;
    let per_step = |ms: f64| ms / steps as f64;
    let copy_ms = median_after_warm_up(args.repeat, || problem.copy_ms(steps).map(per_step))?;
    let mut timed: Vec<(f64, StreamingShape)> = Vec::new();
    let blocks = if args.blocks.is_empty() { &BLOCKS[..] } else { &args.blocks[..] };
    let names = streaming::kernel_names(T::PRECISION);
    let wanted = |name: &String| args.kernels.is_empty() || args.kernels.iter().any(|k| k.trim() == name);
    let kernels: Vec<_> = streaming::kernels(T::PRECISION)
        .iter()
        .zip(&names)
        .filter(|(_, name)| wanted(name))
        .map(|(&k, _)| k)
        .collect();
    if kernels.is_empty() {
        return Err(Error::BadArgument(format!(
            "none of the kernels {:?} is built for {}; the built ones are {}",
            args.kernels,
            T::NAME,
            names.join(", ")
        )));
    }
    for kernel in kernels {
        for &block in blocks {
            let launches = args.planes.iter().flat_map(|&planes| {
                args.axes.iter().flat_map(move |&axis| args.clusters.iter().map(move |&c| (planes, axis, c)))
            });
            for (planes, axis, cluster) in launches {
                let asked = StreamingShape { kernel, block, planes, axis, cluster };
                if streaming::launch(asked, args.grid, 0..args.grid.nz, usize::MAX).is_err() {
                    continue;
                }
                // Named by the cluster its launch takes (none where the GPU has none), each timed
                // once; shapes whose blocks are over the kernel's register budget are skipped.
                let shape = match problem.streaming_occupancy(asked) {
                    Ok(launched) => asked.with_cluster(launched.cluster),
                    Err(Error::BadArgument(_)) => continue,
                    Err(e) => return Err(e),
                };
                if timed.iter().any(|&(_, s)| s == shape) {
                    continue;
                }
                let ms =
                    median_after_warm_up(args.repeat, || problem.run_streaming(shape, steps).map(per_step))?;
                timed.push((ms, shape));
            }
        }
    }
    timed.sort_by(|a, b| a.0.total_cmp(&b.0));
    let default = problem.default_streaming_shape()?;
    let reference = reference_steps(input.view(), coeffs, 1);
    let mut table = Table::new(vec![
        "rank",
        "dtype",
        "shape",
        "ms",
        "Gpoints/s",
        "% of copy",
        "regs",
        "resident",
        "blocks",
        "check",
    ]);
    let mut all_ok = true;
    for (rank, &(ms, shape)) in timed.iter().enumerate() {
        let listed = rank < args.top || shape == default;
        if !listed {
            continue;
        }
        let check = if rank < args.verify || shape == default {
            problem.run_streaming(shape, 1)?;
            let out = problem.output()?;
            let c = compare(out.as_slice().expect("contiguous"), reference.as_slice().expect("contiguous"));
            all_ok &= c.ok;
            if c.ok { "OK".to_owned() } else { format!("FAIL {c:?}") }
        } else {
            "-".to_owned()
        };
        let marker = if shape == default { " (default)" } else { "" };
        let occupancy = problem.streaming_occupancy(shape)?;
        table.push(vec![
            (rank + 1).to_string(),
            T::NAME.into(),
            format!("{}{marker}", streaming::Describe(shape)),
            format!("{ms:.4}"),
            format!("{:.1}", args.grid.len() as f64 / ms / 1e6),
            format!("{:.1}", 100.0 * copy_ms / ms),
            occupancy.registers.to_string(),
            occupancy.resident.to_string(),
            occupancy.blocks.to_string(),
            check,
        ]);
    }
    println!(
        "{} shapes timed on {nz}x{ny}x{nx} {}, runs of {steps} step(s), ms per step; copy {copy_ms:.4} ms ({:.1} Gpoints/s)",
        timed.len(),
        T::NAME,
        args.grid.len() as f64 / copy_ms / 1e6
    );
    print!("{}", table.render());
    Ok(all_ok)
}

fn main() -> ExitCode {
    let args = Args::parse();
    let run = || -> Result<ExitCode> {
        let gpu = Gpu::new(0)?;
        println!("{}", gpu_line(&gpu.info));
        let mut ok = true;
        if args.dtype != Dtype::F64 {
            ok &= tune::<f32>(&gpu, &args)?;
        }
        if args.dtype != Dtype::F32 {
            ok &= tune::<f64>(&gpu, &args)?;
        }
        Ok(if ok { ExitCode::SUCCESS } else { ExitCode::FAILURE })
    };
    run().unwrap_or_else(|e| report_error("tune_streaming", &e))
}
