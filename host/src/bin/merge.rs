//! `merge`: runs PMPP chapter 12's ordered-merge kernels (basic, tiled, circular buffer; all
//! thread-coarsened; written in Rust, compiled to PTX) on the GPU, checks each against a
//! stable CPU merge, and reports throughput against the device-to-device copy ceiling.

use std::process::ExitCode;

use clap::{Parser, ValueEnum};
use host::merge::{Distribution, HostKey, MergeProblem, MergeVariant, first_difference, merge_reference};
use host::report::{Table, gpu_line, parse_list, report_error, thousands};
use host::{Error, Gpu, Result, random, stats::median_after_warm_up};
use serde_json::json;

#[derive(Parser, Debug)]
#[command(
    name = "merge",
    version,
    about = "Run the PMPP chapter-12 merge kernels on the GPU, verify them, and compare their speed with the memory-bandwidth ceiling",
    long_about = "Run the three PMPP chapter-12 ordered-merge kernels (basic, tiled, circular; thread-coarsened; \
written in Rust, compiled to PTX) on the GPU, merging sorted arrays A (m keys) and B (n keys) into C (m + n keys). \
Each result is compared key by key (bits, so the stable order of equal keys counts) with a stable CPU merge, and \
timed with CUDA events (median of --repeat runs after one warm-up). The ceiling is a device-to-device copy of \
the same bytes (m + n keys read, m + n written).\n\nExit status: 0 all OK, 1 a variant FAILED its check, 2 an error \
(bad arguments, no GPU, out of memory)."
)]
struct Args {
    /// Keys in A: an integer, or 2^K with an optional +N / -N (e.g. 2^27, 2^24+7).
    #[arg(long, default_value = "2^27", value_parser = parse_count)]
    m: usize,
    /// Keys in B, in the same forms as --m.
    #[arg(long, default_value = "2^27", value_parser = parse_count)]
    n: usize,
    /// Key type.
    #[arg(long, value_enum, default_value_t = DtypeArg::All)]
    dtype: DtypeArg,
    /// Kernel: all, basic, tiled or circular (or a comma-separated list).
    #[arg(long, default_value = "all", value_parser = parse_variants)]
    variant: Variants,
    /// Input keys: uniform, few-unique, all-equal, disjoint (all of A below B) or interleaved.
    #[arg(long, default_value = "uniform", value_parser = |s: &str| s.parse::<Distribution>().map_err(|e| e.to_string()))]
    dist: Distribution,
    /// Timed runs per variant; the median is reported.
    #[arg(long, default_value_t = 20, value_parser = clap::value_parser!(u32).range(1..))]
    repeat: u32,
    /// Skip the check against the CPU merge.
    #[arg(long)]
    no_verify: bool,
    /// Print the results as JSON instead of a table.
    #[arg(long)]
    json: bool,
    /// GPU ordinal.
    #[arg(long, default_value_t = 0)]
    device: usize,
    /// Seed of the random inputs (default: a fresh one, printed).
    #[arg(long)]
    seed: Option<u64>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum DtypeArg {
    I32,
    U32,
    I64,
    F32,
    F64,
    All,
}

#[derive(Clone, Debug)]
struct Variants(Vec<MergeVariant>);

fn parse_variants(text: &str) -> std::result::Result<Variants, String> {
    parse_list(text, &MergeVariant::ALL).map(Variants)
}

/// `123`, `2^27`, `2^24+7`, `2^20-1`.
fn parse_count(text: &str) -> std::result::Result<usize, String> {
    let bad =
        || format!("`{text}` is not a count: expected an integer or 2^K[+N|-N], e.g. 1000, 2^27, 2^24+7");
    let text = text.trim().replace('_', "");
    let Some(power) = text.strip_prefix("2^") else { return text.parse().map_err(|_| bad()) };
    let split = power.find(['+', '-']).unwrap_or(power.len());
    let exponent: u32 = power[..split].parse().map_err(|_| bad())?;
    let base = 1usize.checked_shl(exponent).filter(|_| exponent < usize::BITS).ok_or_else(bad)?;
    let offset = &power[split..];
    match offset.chars().next() {
        None => Ok(base),
        Some('+') => base.checked_add(offset[1..].parse().map_err(|_| bad())?).ok_or_else(bad),
        _ => base.checked_sub(offset[1..].parse().map_err(|_| bad())?).ok_or_else(bad),
    }
}

/// One line of the report.
struct Row {
    variant: MergeVariant,
    dtype: &'static str,
    ms: f64,
    copy_ms: f64,
    keys: usize,
    bytes: usize,
    /// `None`: not verified; `Some(None)`: identical; `Some(Some(i))`: first wrong index.
    check: Option<Option<usize>>,
}

impl Row {
    fn status(&self) -> &'static str {
        match self.check {
            None => "skipped",
            Some(None) => "OK",
            Some(Some(_)) => "FAIL",
        }
    }
}

/// Runs every chosen variant for key type `K` and returns the report rows.
fn run_dtype<K: HostKey>(gpu: &Gpu, args: &Args, seed: u64) -> Result<Vec<Row>> {
    let (a, b) = args.dist.generate::<K>(args.m, args.n, seed)?;
    let mut problem = MergeProblem::new(gpu, &a, &b)?;
    let repeat = args.repeat as usize;
    let copy_ms = median_after_warm_up(repeat, || problem.copy_ms())?;
    let reference = (!args.no_verify).then(|| merge_reference(&a, &b));
    let mut rows = Vec::new();
    for &variant in &args.variant.0 {
        let ms = median_after_warm_up(repeat, || problem.run(variant))?;
        let check = match &reference {
            Some(reference) => Some(first_difference(&problem.output()?, reference)),
            None => None,
        };
        rows.push(Row {
            variant,
            dtype: K::NAME,
            ms,
            copy_ms,
            keys: problem.len(),
            bytes: problem.bytes_moved(),
            check,
        });
    }
    Ok(rows)
}

fn run(args: &Args) -> Result<ExitCode> {
    if args.m.checked_add(args.n).is_none() {
        return Err(Error::BadShape(format!("m + n = {} + {} overflows", args.m, args.n)));
    }
    let gpu = Gpu::new(args.device)?;
    let seed = args.seed.unwrap_or_else(random::fresh_seed);
    let mut rows = Vec::new();
    let all = args.dtype == DtypeArg::All;
    if all || args.dtype == DtypeArg::I32 {
        rows.extend(run_dtype::<i32>(&gpu, args, seed)?);
    }
    if all || args.dtype == DtypeArg::U32 {
        rows.extend(run_dtype::<u32>(&gpu, args, seed)?);
    }
    if all || args.dtype == DtypeArg::I64 {
        rows.extend(run_dtype::<i64>(&gpu, args, seed)?);
    }
    if all || args.dtype == DtypeArg::F32 {
        rows.extend(run_dtype::<f32>(&gpu, args, seed)?);
    }
    if all || args.dtype == DtypeArg::F64 {
        rows.extend(run_dtype::<f64>(&gpu, args, seed)?);
    }
    let gkeys = |r: &Row, ms: f64| r.keys as f64 / ms / 1e6;
    let gbs = |r: &Row, ms: f64| r.bytes as f64 / ms / 1e6;
    if args.json {
        let rows: Vec<_> = rows
            .iter()
            .map(|r| {
                json!({
                    "variant": r.variant.name(), "section": r.variant.section(), "dtype": r.dtype,
                    "ms": r.ms, "gkeys_per_s": gkeys(r, r.ms), "gb_per_s": gbs(r, r.ms),
                    "copy_ms": r.copy_ms, "ceiling_percent": 100.0 * r.copy_ms / r.ms,
                    "first_wrong_index": r.check.flatten(), "status": r.status(),
                })
            })
            .collect();
        let report = json!({
            "gpu": gpu.info.name, "compute_capability": gpu.info.compute_capability,
            "driver_cuda_version": gpu.info.driver_cuda_version, "ptx_arch": host::gpu::PTX_ARCH,
            "m": args.m, "n": args.n, "dist": args.dist.name(), "repeat": args.repeat, "seed": seed, "rows": rows,
        });
        println!("{}", serde_json::to_string_pretty(&report).expect("JSON of plain values"));
    } else {
        println!("{}", gpu_line(&gpu.info));
        println!(
            "merge m = {} + n = {} keys ({} distribution), median of {} runs, seed {seed}",
            thousands(args.m),
            thousands(args.n),
            args.dist.name(),
            args.repeat
        );
        println!("ceiling: device-to-device copy of A and B into C (m + n keys read once, written once)\n");
        let mut table =
            Table::new(vec!["variant", "section", "dtype", "ms", "Gkeys/s", "GB/s", "% of copy", "check"]);
        for r in &rows {
            let status = match r.check {
                Some(Some(index)) => format!("FAIL at {index}"),
                _ => r.status().into(),
            };
            table.push(vec![
                r.variant.name().into(),
                r.variant.section().into(),
                r.dtype.into(),
                format!("{:.4}", r.ms),
                format!("{:.2}", gkeys(r, r.ms)),
                format!("{:.0}", gbs(r, r.ms)),
                format!("{:.1}", 100.0 * r.copy_ms / r.ms),
                status,
            ]);
        }
        print!("{}", table.render());
        for r in rows.iter().filter(|r| r.variant == rows[0].variant) {
            println!(
                "copy ceiling {}: {:.4} ms = {:.0} GB/s = {:.2} Gkeys/s",
                r.dtype,
                r.copy_ms,
                gbs(r, r.copy_ms),
                gkeys(r, r.copy_ms)
            );
        }
    }
    let failed = rows.iter().any(|r| r.status() == "FAIL");
    Ok(if failed { ExitCode::FAILURE } else { ExitCode::SUCCESS })
}

fn main() -> ExitCode {
    let args = Args::parse();
    run(&args).unwrap_or_else(|e| report_error("merge", &e))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> std::result::Result<Args, clap::Error> {
        Args::try_parse_from(std::iter::once("merge").chain(args.iter().copied()))
    }

    #[test]
    fn defaults_are_two_large_uniform_arrays_on_every_variant_and_type() {
        let args = parse(&[]).unwrap();
        assert_eq!((args.m, args.n), (1 << 27, 1 << 27));
        assert_eq!(args.dtype, DtypeArg::All);
        assert_eq!(args.variant.0, MergeVariant::ALL);
        assert_eq!(args.dist, Distribution::Uniform);
        assert_eq!((args.repeat, args.no_verify, args.json), (20, false, false));
    }

    #[test]
    fn counts_accept_powers_of_two_with_offsets() {
        assert_eq!(parse_count("1030400"), Ok(1_030_400));
        assert_eq!(parse_count("2^24+7"), Ok((1 << 24) + 7));
        assert_eq!(parse_count("2^20-1"), Ok((1 << 20) - 1));
        assert_eq!(parse_count("0"), Ok(0));
        for bad in ["", "2^", "2^x", "2^64", "2^3-9", "-5", "1e6", "2^4+"] {
            assert!(parse_count(bad).unwrap_err().contains("not a count"), "{bad}");
        }
    }

    #[test]
    fn every_option_parses() {
        let args = parse(&[
            "--m",
            "5000",
            "--n",
            "37",
            "--dtype",
            "f64",
            "--variant",
            "tiled,circular",
            "--dist",
            "all-equal",
            "--repeat",
            "3",
            "--no-verify",
            "--json",
            "--seed",
            "9",
        ])
        .unwrap();
        assert_eq!((args.m, args.n, args.dtype), (5000, 37, DtypeArg::F64));
        assert_eq!(args.variant.0, [MergeVariant::Tiled, MergeVariant::Circular]);
        assert_eq!((args.dist, args.repeat, args.seed), (Distribution::AllEqual, 3, Some(9)));
    }

    #[test]
    fn bad_arguments_are_refused_with_a_reason() {
        for (args, reason) in [
            (&["--m", "lots"][..], "not a count"),
            (&["--variant", "fast"][..], "fast"),
            (&["--dist", "normal"][..], "normal"),
            (&["--dtype", "f16"][..], "f16"),
            (&["--repeat", "0"][..], "repeat"),
        ] {
            let err = parse(args).unwrap_err().to_string();
            assert!(err.contains(reason), "{args:?}: {err}");
        }
    }
}
