//! `stencil`: runs PMPP chapter 8's seven-point stencil kernels (written in Rust, compiled
//! to PTX) on the GPU, checks each against the CPU reference, and reports time per step,
//! throughput and the fraction of the device-to-device copy ceiling it reaches.

use std::process::ExitCode;

use clap::{Parser, ValueEnum};
use gpu_kernels::stencil::{Coeffs, Grid3};
use host::report::{Table, gpu_line, parse_list, report_error, thousands};
use host::stencil::{StencilProblem, StencilVariant, parse_grid, reference_steps};
use host::verify::{Comparison, compare};
use host::{Element, Gpu, Result, random, stats::median_after_warm_up};
use serde_json::json;

#[derive(Parser, Debug)]
#[command(
    name = "stencil",
    version,
    about = "Run the four PMPP chapter-8 stencil kernels on the GPU, verify them, and compare their speed with the memory-bandwidth ceiling",
    long_about = "Run the four PMPP chapter-8 seven-point stencil kernels (basic, shared-tiled, coarsened, register-tiled; \
written in Rust, compiled to PTX) on the GPU. Each is checked against a CPU reference and timed with CUDA events \
(median of --repeat runs after one warm-up). The ceiling is a device-to-device copy of the same bytes (each point \
read once and written once), timed the same way.\n\nExit status: 0 all OK, 1 a variant FAILED its check, 2 an error \
(bad arguments, no GPU, out of memory)."
)]
struct Args {
    /// Grid size: N for an N×N×N cube, or NZxNYxNX (x fastest in memory); every extent ≥ 3.
    #[arg(long, default_value = "512", value_parser = |s: &str| parse_grid(s).map_err(|e| e.to_string()))]
    grid: Grid3,
    /// Element type.
    #[arg(long, value_enum, default_value_t = DtypeArg::All)]
    dtype: DtypeArg,
    /// Kernel: all, basic, shared-tiled, coarsened or register-tiled.
    #[arg(long, default_value = "all", value_parser = parse_variants)]
    variant: Variants,
    /// Time steps per run (two buffers ping-pong; boundaries keep their input values).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    steps: u32,
    /// Coefficients c0..c6 (centre, x-, x+, y-, y+, z-, z+); default the Laplacian.
    #[arg(long, default_value = "-6,1,1,1,1,1,1", value_parser = parse_coeffs)]
    coeffs: Coefficients,
    /// Timed runs per variant; the median is reported.
    #[arg(long, default_value_t = 20, value_parser = clap::value_parser!(u32).range(1..))]
    repeat: u32,
    /// Skip the check against the CPU reference.
    #[arg(long)]
    no_verify: bool,
    /// Print the results as JSON instead of a table.
    #[arg(long)]
    json: bool,
    /// GPU ordinal.
    #[arg(long, default_value_t = 0)]
    device: usize,
    /// Seed of the random input (default: a fresh one, printed).
    #[arg(long)]
    seed: Option<u64>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum DtypeArg {
    F32,
    F64,
    All,
}

#[derive(Clone, Debug)]
struct Variants(Vec<StencilVariant>);

#[derive(Clone, Copy, Debug)]
struct Coefficients([f64; 7]);

fn parse_variants(text: &str) -> std::result::Result<Variants, String> {
    parse_list(text, &StencilVariant::ALL).map(Variants)
}

fn parse_coeffs(text: &str) -> std::result::Result<Coefficients, String> {
    let values: Vec<f64> = text
        .split(',')
        .map(|v| v.trim().parse::<f64>().map_err(|_| format!("`{v}` is not a number")))
        .collect::<Result<_, _>>()?;
    let values: [f64; 7] = values
        .try_into()
        .map_err(|v: Vec<f64>| format!("expected 7 comma-separated coefficients c0..c6, got {}", v.len()))?;
    if let Some(bad) = values.iter().find(|v| !v.is_finite()) {
        return Err(format!("coefficient {bad} is not finite"));
    }
    Ok(Coefficients(values))
}

/// One line of the report.
#[derive(Clone, Copy)]
struct Row {
    variant: StencilVariant,
    dtype: &'static str,
    ms_per_step: f64,
    copy_ms: f64,
    points: usize,
    bytes_per_point: usize,
    check: Option<Comparison>,
}

impl Row {
    fn gpoints_per_s(&self) -> f64 {
        self.points as f64 / self.ms_per_step / 1e6
    }
    fn gb_per_s(&self) -> f64 {
        (self.points * self.bytes_per_point) as f64 / self.ms_per_step / 1e6
    }
    fn ceiling_percent(&self) -> f64 {
        100.0 * self.copy_ms / self.ms_per_step
    }
    fn status(&self) -> &'static str {
        match self.check {
            None => "skipped",
            Some(c) if c.ok => "OK",
            Some(_) => "FAIL",
        }
    }
}

/// Runs every chosen variant for element type `T` and returns the report rows.
fn run_dtype<T: Element>(gpu: &Gpu, args: &Args, seed: u64) -> Result<Vec<Row>> {
    let Grid3 { nx, ny, nz } = args.grid;
    let shape = (nz as usize, ny as usize, nx as usize);
    let input = random::random_grid::<T>(shape, seed)?;
    let coeffs = Coeffs(args.coeffs.0.map(T::from_f64));
    let steps = args.steps as usize;
    let mut problem = StencilProblem::new(gpu, input.view(), coeffs)?;
    let repeat = args.repeat as usize;
    let copy_ms = median_after_warm_up(repeat, || problem.copy_ms(1))?;
    let reference = (!args.no_verify).then(|| reference_steps(input.view(), coeffs, steps));
    let mut rows = Vec::new();
    for &variant in &args.variant.0 {
        let ms = median_after_warm_up(repeat, || problem.run(variant, steps))?;
        let check = match &reference {
            Some(reference) => {
                let out = problem.output()?;
                Some(compare(out.as_slice().expect("contiguous"), reference.as_slice().expect("contiguous")))
            }
            None => None,
        };
        rows.push(Row {
            variant,
            dtype: T::NAME,
            ms_per_step: ms / steps as f64,
            copy_ms,
            points: args.grid.len(),
            bytes_per_point: 2 * size_of::<T>(),
            check,
        });
    }
    Ok(rows)
}

fn run(args: &Args) -> Result<ExitCode> {
    let gpu = Gpu::new(args.device)?;
    let seed = args.seed.unwrap_or_else(random::fresh_seed);
    let mut rows = Vec::new();
    if matches!(args.dtype, DtypeArg::F32 | DtypeArg::All) {
        rows.extend(run_dtype::<f32>(&gpu, args, seed)?);
    }
    if matches!(args.dtype, DtypeArg::F64 | DtypeArg::All) {
        rows.extend(run_dtype::<f64>(&gpu, args, seed)?);
    }
    let Grid3 { nx, ny, nz } = args.grid;
    if args.json {
        let rows: Vec<_> = rows
            .iter()
            .map(|r| {
                json!({
                    "variant": r.variant.name(), "figure": r.variant.figure(), "dtype": r.dtype,
                    "ms_per_step": r.ms_per_step, "gpoints_per_s": r.gpoints_per_s(), "gb_per_s": r.gb_per_s(),
                    "copy_ms": r.copy_ms, "ceiling_percent": r.ceiling_percent(),
                    "max_abs_error": r.check.map(|c| c.max_abs_error), "max_rel_error": r.check.map(|c| c.max_rel_error),
                    "status": r.status(),
                })
            })
            .collect();
        let report = json!({
            "gpu": gpu.info.name, "compute_capability": gpu.info.compute_capability,
            "driver_cuda_version": gpu.info.driver_cuda_version, "ptx_arch": host::gpu::PTX_ARCH,
            "grid": { "nz": nz, "ny": ny, "nx": nx }, "steps": args.steps, "repeat": args.repeat,
            "coeffs": args.coeffs.0, "seed": seed, "rows": rows,
        });
        println!("{}", serde_json::to_string_pretty(&report).expect("JSON of plain values"));
    } else {
        println!("{}", gpu_line(&gpu.info));
        println!(
            "grid {nz}x{ny}x{nx} (nz×ny×nx, {} points), {} step(s), coefficients {:?}, median of {} runs, seed {seed}",
            thousands(args.grid.len()),
            args.steps,
            args.coeffs.0,
            args.repeat
        );
        println!("ceiling: device-to-device copy of the grid (each point read once, written once)\n");
        let mut table = Table::new(vec![
            "variant",
            "figure",
            "dtype",
            "ms/step",
            "Gpoints/s",
            "GB/s",
            "% of copy",
            "max abs err",
            "max rel err",
            "check",
        ]);
        for r in &rows {
            let err =
                |f: fn(&Comparison) -> f64| r.check.as_ref().map_or("-".into(), |c| format!("{:.2e}", f(c)));
            table.push(vec![
                r.variant.name().into(),
                r.variant.figure().into(),
                r.dtype.into(),
                format!("{:.4}", r.ms_per_step),
                format!("{:.1}", r.gpoints_per_s()),
                format!("{:.0}", r.gb_per_s()),
                format!("{:.1}", r.ceiling_percent()),
                err(|c| c.max_abs_error),
                err(|c| c.max_rel_error),
                r.status().into(),
            ]);
        }
        print!("{}", table.render());
        for r in rows.iter().filter(|r| r.variant == rows[0].variant) {
            let copy = Row { ms_per_step: r.copy_ms, ..*r };
            println!(
                "copy ceiling {}: {:.4} ms = {:.0} GB/s = {:.1} Gpoints/s",
                r.dtype,
                r.copy_ms,
                copy.gb_per_s(),
                copy.gpoints_per_s()
            );
        }
    }
    let failed = rows.iter().any(|r| r.status() == "FAIL");
    Ok(if failed { ExitCode::FAILURE } else { ExitCode::SUCCESS })
}

fn main() -> ExitCode {
    let args = Args::parse();
    run(&args).unwrap_or_else(|e| report_error("stencil", &e))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> std::result::Result<Args, clap::Error> {
        Args::try_parse_from(std::iter::once("stencil").chain(args.iter().copied()))
    }

    #[test]
    fn defaults_are_a_big_laplacian_on_all_variants() {
        let args = parse(&[]).unwrap();
        assert_eq!(args.grid, Grid3 { nx: 512, ny: 512, nz: 512 });
        assert_eq!(args.dtype, DtypeArg::All);
        assert_eq!(args.variant.0, StencilVariant::ALL);
        assert_eq!(args.coeffs.0, [-6.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0]);
        assert_eq!((args.steps, args.repeat, args.no_verify, args.json), (1, 20, false, false));
    }

    #[test]
    fn every_option_parses() {
        let args = parse(&[
            "--grid",
            "5x5x1000",
            "--dtype",
            "f64",
            "--variant",
            "shared-tiled,register-tiled",
            "--steps",
            "10",
            "--coeffs",
            "0.4,0.1,0.1,0.1,0.1,0.1,0.1",
            "--repeat",
            "3",
            "--no-verify",
            "--json",
            "--seed",
            "42",
        ])
        .unwrap();
        assert_eq!(args.grid, Grid3 { nx: 1000, ny: 5, nz: 5 });
        assert_eq!(args.variant.0, [StencilVariant::SharedTiled, StencilVariant::RegisterTiled]);
        assert_eq!(args.coeffs.0[0], 0.4);
        assert_eq!((args.steps, args.repeat, args.seed), (10, 3, Some(42)));
    }

    #[test]
    fn bad_arguments_are_refused_with_a_reason() {
        for (args, reason) in [
            (&["--grid", "2"][..], "between 3 and"),
            (&["--grid", "4x4"][..], "NZxNYxNX"),
            (&["--coeffs", "1,2,3"][..], "expected 7"),
            (&["--coeffs", "1,2,3,4,5,6,x"][..], "not a number"),
            (&["--coeffs", "1,2,3,4,5,6,inf"][..], "not finite"),
            (&["--variant", "tiled"][..], "unknown stencil variant"),
            (&["--steps", "0"][..], "steps"),
            (&["--repeat", "0"][..], "repeat"),
            (&["--dtype", "f16"][..], "f16"),
        ] {
            let err = parse(args).unwrap_err().to_string();
            assert!(err.contains(reason), "{args:?}: {err}");
        }
    }
}
