//! Criterion benchmarks of the three merge kernels (Rust, compiled to PTX) against their
//! CUDA C++ twins and the device-to-device copy of the same bytes, over total sizes 2^20,
//! 2^24 and 2^28 (split evenly, and 75/25), and a coarsening sweep (keys per thread) that
//! shows the cost of a binary search per few keys. Each sample is one launch timed with CUDA
//! events; inputs are fresh uniform random sorted keys. Without a GPU: one line, exit 0.

use std::process::exit;

use benches::{Twins, criterion, from_ms, merge_twin_source, open_gpu, write_gpu_info};
use criterion::{BenchmarkId, Criterion, Throughput};
use cudarc::driver::{CudaFunction, LaunchConfig};
use host::merge::{Distribution, HostKey, MergeProblem, MergeVariant, first_difference};
use host::{Gpu, Result, random};

const BENCH: &str = "merge_variants";

/// `(case, m, n)`: totals 2^20, 2^24 and 2^28 split evenly, and 2^28 split 75/25.
const CASES: [(&str, usize, usize); 4] = [
    ("2^20-even", 1 << 19, 1 << 19),
    ("2^24-even", 1 << 23, 1 << 23),
    ("2^28-even", 1 << 27, 1 << 27),
    ("2^28-75:25", 3 << 26, 1 << 26),
];

/// The coarsening sweep runs on this case.
const SWEEP_CASE: (&str, usize, usize) = ("2^24", 1 << 23, 1 << 23);

fn or_exit<V>(result: Result<V>) -> V {
    result.unwrap_or_else(|e| {
        eprintln!("{BENCH}: error: {e}");
        exit(1)
    })
}

fn problem<K: HostKey>(gpu: &Gpu, m: usize, n: usize) -> MergeProblem<'_, K> {
    let (a, b) = or_exit(Distribution::Uniform.generate::<K>(m, n, random::fresh_seed()));
    or_exit(MergeProblem::new(gpu, &a, &b))
}

/// `iters` launches, each timed alone (the output is poisoned before each, untimed).
fn total_ms(iters: u64, mut run: impl FnMut() -> Result<f64>) -> f64 {
    (0..iters.max(1)).map(|_| or_exit(run())).sum()
}

/// The twin of `variant` at coarsening `factor`, if it exists and merges exactly what the
/// Rust kernel merges on this problem (bits compared).
fn checked_twin<K: HostKey>(
    twins: Option<&Twins>,
    problem: &mut MergeProblem<'_, K>,
    variant: MergeVariant,
    factor: usize,
) -> Option<(CudaFunction, LaunchConfig)> {
    let entry = or_exit(variant.entry_point_with_coarsening(K::NAME, factor));
    let function = twins?.function(&entry)?;
    let plan = or_exit(variant.plan_with_coarsening(problem.m(), problem.n(), size_of::<K>(), factor));
    let config = plan.launch_config()?;
    or_exit(problem.run_with_coarsening(variant, factor));
    let rust = or_exit(problem.output());
    or_exit(problem.run_function(&function, config, &format!("cuda_{entry}")));
    let cuda = or_exit(problem.output());
    if let Some(index) = first_difference(&cuda, &rust) {
        println!("{BENCH}: twin cuda_{entry} differs from the Rust kernel at key {index}; not timed");
        return None;
    }
    Some((function, config))
}

fn variants<K: HostKey>(
    c: &mut Criterion,
    gpu: &Gpu,
    twins: Option<&Twins>,
    (case, m, n): (&str, usize, usize),
) {
    let mut problem = problem::<K>(gpu, m, n);
    let mut group = c.benchmark_group(format!("merge_variants/{case}-{}", K::NAME));
    group.throughput(Throughput::Elements((m + n) as u64));
    group.bench_function("copy", |b| b.iter_custom(|iters| from_ms(total_ms(iters, || problem.copy_ms()))));
    for variant in MergeVariant::ALL {
        group.bench_function(format!("rust/{variant}"), |b| {
            b.iter_custom(|iters| from_ms(total_ms(iters, || problem.run(variant))))
        });
        if let Some((function, config)) =
            checked_twin(twins, &mut problem, variant, variant.default_coarsening())
        {
            group.bench_function(format!("cuda/{variant}"), |b| {
                b.iter_custom(|iters| {
                    from_ms(total_ms(iters, || problem.run_function(&function, config, "twin")))
                })
            });
        }
    }
    group.finish();
}

fn coarsening<K: HostKey>(c: &mut Criterion, gpu: &Gpu, twins: Option<&Twins>) {
    let (case, m, n) = SWEEP_CASE;
    let mut problem = problem::<K>(gpu, m, n);
    let mut group = c.benchmark_group(format!("merge_coarsening/{case}-{}", K::NAME));
    group.throughput(Throughput::Elements((m + n) as u64));
    group.bench_function("copy", |b| b.iter_custom(|iters| from_ms(total_ms(iters, || problem.copy_ms()))));
    for variant in [MergeVariant::Basic, MergeVariant::Tiled] {
        for &factor in variant.coarsenings(K::NAME) {
            let parameter = factor.to_string();
            group.bench_function(BenchmarkId::new(format!("rust/{variant}"), &parameter), |b| {
                b.iter_custom(|iters| {
                    from_ms(total_ms(iters, || problem.run_with_coarsening(variant, factor)))
                })
            });
            if let Some((function, config)) = checked_twin(twins, &mut problem, variant, factor) {
                group.bench_function(BenchmarkId::new(format!("cuda/{variant}"), &parameter), |b| {
                    b.iter_custom(|iters| {
                        from_ms(total_ms(iters, || problem.run_function(&function, config, "twin")))
                    })
                });
            }
        }
    }
    group.finish();
}

fn main() {
    let Some(gpu) = open_gpu(BENCH) else { return };
    write_gpu_info(&gpu);
    let twins = Twins::compile(&gpu, BENCH, &merge_twin_source());
    let mut c = criterion();
    for case in CASES {
        variants::<i32>(&mut c, &gpu, twins.as_ref(), case);
        variants::<f64>(&mut c, &gpu, twins.as_ref(), case);
    }
    coarsening::<i32>(&mut c, &gpu, twins.as_ref());
    coarsening::<f64>(&mut c, &gpu, twins.as_ref());
    c.final_summary();
}
