//! Criterion benchmarks of the merge kernels (Rust, compiled to PTX): the book's three against
//! their CUDA C++ twins, and merge path beyond the book, with the device-to-device copy of the
//! same bytes, at 2^20 + 2^20, 2^27 + 2^27 and 2^27 + 2^20 keys (uniform) and 2^27 + 2^27 with
//! few unique and all-equal keys; merge path's launch-shape sweep (threads per block × outputs
//! per thread); and the book's coarsening sweep (keys per thread), which shows the cost of a
//! binary search per few keys; merge by key (i32 keys with u32 values, f64 with u64) at 2^27 +
//! 2^27 uniform and few-unique keys, at every shape built, against a copy of the keys and the
//! values; the set operations (i32 and f64 keys, the same cases) at every shape built, against the
//! copy of A and B. Each sample is one launch (merge path: its partition and merge)
//! timed with CUDA events; inputs are fresh random sorted keys. `thrust::merge` runs as a peer
//! in `benches/peers/merge_peers.py`. Without a GPU: one line, exit 0.
//!
//! The merge path sweep, merge by key and the set operations build their inputs (and CPU results)
//! when their first benchmark runs, so a run filtered to other groups skips them, e.g. `cargo bench
//! --bench merge_variants -- '^merge_(variants|path)/'`; the book's groups and the coarsening sweep
//! build theirs up front, since which twins they time depends on a run of each.

use std::process::exit;

use benches::{Twins, criterion, from_ms, merge_twin_source, open_gpu, write_gpu_info};
use criterion::{BenchmarkId, Criterion, Throughput};
use cudarc::driver::{CudaFunction, LaunchConfig};
use host::merge::family_reference::{gather, merge_by_key_reference, set_sources};
use host::merge::set_ops::{self, OPERATIONS};
use host::merge::{
    Distribution, HostKey, MergeByKeyProblem, MergeProblem, MergeVariant, SetProblem, SourceValue, by_key,
    first_difference, first_value_difference, path, source_values,
};
use host::{Gpu, Result, random};

const BENCH: &str = "merge_variants";

/// `(case, distribution, m, n)`: the case is `2^A+2^B`, then `-<distribution>` unless uniform
/// (the peers script names its rows the same way).
const CASES: [(&str, Distribution, usize, usize); 5] = [
    ("2^20+2^20", Distribution::Uniform, 1 << 20, 1 << 20),
    ("2^27+2^27", Distribution::Uniform, 1 << 27, 1 << 27),
    ("2^27+2^20", Distribution::Uniform, 1 << 27, 1 << 20),
    ("2^27+2^27-few-unique", Distribution::FewUnique, 1 << 27, 1 << 27),
    ("2^27+2^27-all-equal", Distribution::AllEqual, 1 << 27, 1 << 27),
];

/// Merge by key runs on these cases (see [`CASES`]).
const BY_KEY_CASES: [(&str, Distribution, usize, usize); 2] = [CASES[1], CASES[3]];

/// Merge path's shape sweep runs on this case.
const PATH_SWEEP_CASE: (&str, usize, usize) = ("2^27+2^27", 1 << 27, 1 << 27);

/// The coarsening sweep runs on this case.
const SWEEP_CASE: (&str, usize, usize) = ("2^24", 1 << 23, 1 << 23);

fn or_exit<V>(result: Result<V>) -> V {
    result.unwrap_or_else(|e| {
        eprintln!("{BENCH}: error: {e}");
        exit(1)
    })
}

fn problem<K: HostKey>(gpu: &Gpu, distribution: Distribution, m: usize, n: usize) -> MergeProblem<'_, K> {
    let (a, b) = or_exit(distribution.generate::<K>(m, n, random::fresh_seed()));
    or_exit(MergeProblem::new(gpu, &a, &b))
}

/// `iters` launches, each timed alone (the output is poisoned before each, untimed).
fn total_ms(iters: u64, mut run: impl FnMut() -> Result<f64>) -> f64 {
    (0..iters.max(1)).map(|_| or_exit(run())).sum()
}

/// A group's inputs, built by `setup` the first time a benchmark of the group runs. Criterion
/// calls a benchmark's closure only when its id passes the command line's filter, so a run
/// filtered to other groups skips this group's setup (at 2^27 + 2^27 keys the CPU merge by key
/// and the set operations' CPU results take minutes).
fn built<T>(inputs: &mut Option<T>, setup: impl FnOnce() -> T) -> &mut T {
    inputs.get_or_insert_with(setup)
}

/// Whether this is the first call of a benchmark's closure (criterion calls it again for the
/// warm-up and each sample), so that a shape is checked once, before its first timing.
fn first_call(called: &mut bool) -> bool {
    !std::mem::replace(called, true)
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
    (case, distribution, m, n): (&str, Distribution, usize, usize),
) {
    let mut problem = problem::<K>(gpu, distribution, m, n);
    let mut group = c.benchmark_group(format!("merge_variants/{case}-{}", K::NAME));
    group.throughput(Throughput::Elements((m + n) as u64));
    group.bench_function("copy", |b| b.iter_custom(|iters| from_ms(total_ms(iters, || problem.copy_ms()))));
    for variant in MergeVariant::ALL {
        group.bench_function(format!("rust/{variant}"), |b| {
            b.iter_custom(|iters| from_ms(total_ms(iters, || problem.run(variant))))
        });
        if !MergeVariant::BOOK.contains(&variant) {
            continue;
        }
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

/// Merge path at every shape of its sweep, each checked against the default shape's output.
/// The inputs are built on first use ([`built`]).
fn path_sweep<K: HostKey>(c: &mut Criterion, gpu: &Gpu) {
    let (case, m, n) = PATH_SWEEP_CASE;
    let setup = || {
        let mut problem = problem::<K>(gpu, Distribution::Uniform, m, n);
        or_exit(problem.run(MergeVariant::Path));
        let expected = or_exit(problem.output());
        (problem, expected)
    };
    let mut inputs = None;
    let mut group = c.benchmark_group(format!("merge_path/{case}-{}", K::NAME));
    group.throughput(Throughput::Elements((m + n) as u64));
    group.bench_function("copy", |b| {
        let (problem, _) = built(&mut inputs, setup);
        b.iter_custom(|iters| from_ms(total_ms(iters, || problem.copy_ms())))
    });
    for shape in path::sweep(K::NAME) {
        let mut checked = false;
        let parameter = path::Describe(shape).to_string();
        group.bench_function(BenchmarkId::new("rust/merge-path", &parameter), |b| {
            let (problem, expected) = built(&mut inputs, setup);
            if first_call(&mut checked) {
                or_exit(problem.run_path(shape));
                if let Some(index) = first_difference(&or_exit(problem.output()), expected) {
                    eprintln!(
                        "{BENCH}: merge-path {parameter} differs from the default shape at key {index}"
                    );
                    exit(1);
                }
            }
            b.iter_custom(|iters| from_ms(total_ms(iters, || problem.run_path(shape))))
        });
    }
    group.finish();
}

/// Merge by key (keys of `K`, values of `V`) with merge path at every shape built for `K`, each
/// checked against the CPU merge by key, and the copy of keys and values. The inputs and the CPU
/// merge are built on first use ([`built`]).
fn by_key<K: HostKey, V: SourceValue>(
    c: &mut Criterion,
    gpu: &Gpu,
    (case, distribution, m, n): (&str, Distribution, usize, usize),
) {
    let setup = || {
        let (a, b) = or_exit(distribution.generate::<K>(m, n, random::fresh_seed()));
        let (a_values, b_values) = (source_values::<V>(false, m), source_values::<V>(true, n));
        let expected = merge_by_key_reference(&a, &a_values, &b, &b_values);
        let problem = or_exit(MergeByKeyProblem::new(gpu, &a, &a_values, &b, &b_values));
        (problem, expected)
    };
    let mut inputs = None;
    let value_name = std::any::type_name::<V>();
    let mut group = c.benchmark_group(format!("merge_by_key/{case}-{}+{value_name}", K::NAME));
    group.throughput(Throughput::Elements((m + n) as u64));
    group.bench_function("copy", |b| {
        let (problem, _) = built(&mut inputs, setup);
        b.iter_custom(|iters| from_ms(total_ms(iters, || problem.copy_ms())))
    });
    for &shape in by_key::shapes(K::NAME) {
        let mut checked = false;
        let parameter = path::Describe(shape).to_string();
        group.bench_function(BenchmarkId::new("rust/merge-path-by-key", &parameter), |b| {
            let (problem, (keys, values)) = built(&mut inputs, setup);
            if first_call(&mut checked) {
                or_exit(problem.run_path(shape));
                let (out_keys, out_values) = or_exit(problem.output());
                let wrong = first_difference(&out_keys, keys).or(first_value_difference(&out_values, values));
                if let Some(index) = wrong {
                    eprintln!("{BENCH}: merge-path by key {parameter} differs from the reference at {index}");
                    exit(1);
                }
            }
            b.iter_custom(|iters| from_ms(total_ms(iters, || problem.run_path(shape))))
        });
    }
    group.finish();
}

/// Every set operation on keys of `K` at every shape built for `K`, each checked against the CPU
/// walk, and the copy of A and B; throughput counts input keys. The inputs are built on first use
/// ([`built`]), and each operation's CPU result on its first benchmark.
fn set_operations<K: HostKey>(
    c: &mut Criterion,
    gpu: &Gpu,
    (case, distribution, m, n): (&str, Distribution, usize, usize),
) {
    let setup = || {
        let (a, b) = or_exit(distribution.generate::<K>(m, n, random::fresh_seed()));
        let problem = or_exit(SetProblem::new(gpu, &a, &b));
        (problem, (a, b))
    };
    let mut inputs = None;
    for (operation, name) in OPERATIONS {
        let mut expected = None;
        let mut group = c.benchmark_group(format!("merge_set/{case}-{}-{name}", K::NAME));
        group.throughput(Throughput::Elements((m + n) as u64));
        group.bench_function("copy", |b| {
            let (problem, _) = built(&mut inputs, setup);
            b.iter_custom(|iters| from_ms(total_ms(iters, || problem.copy_ms())))
        });
        for &shape in set_ops::shapes(K::NAME) {
            let mut checked = false;
            let parameter = path::Describe(shape).to_string();
            group.bench_function(BenchmarkId::new("rust/set-path", &parameter), |bencher| {
                let (problem, (a, b)) = built(&mut inputs, setup);
                if first_call(&mut checked) {
                    let expected =
                        expected.get_or_insert_with(|| gather(&set_sources(operation, a, b), a, b));
                    or_exit(problem.run_shape(operation, shape));
                    if let Some(index) = first_difference(&or_exit(problem.output()), expected) {
                        eprintln!("{BENCH}: set {name} {parameter} differs from the reference at {index}");
                        exit(1);
                    }
                }
                bencher.iter_custom(|iters| from_ms(total_ms(iters, || problem.run_shape(operation, shape))))
            });
        }
        group.finish();
    }
}

fn coarsening<K: HostKey>(c: &mut Criterion, gpu: &Gpu, twins: Option<&Twins>) {
    let (case, m, n) = SWEEP_CASE;
    let mut problem = problem::<K>(gpu, Distribution::Uniform, m, n);
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
    path_sweep::<i32>(&mut c, &gpu);
    path_sweep::<f64>(&mut c, &gpu);
    for case in BY_KEY_CASES {
        by_key::<i32, u32>(&mut c, &gpu, case);
        by_key::<f64, u64>(&mut c, &gpu, case);
    }
    for case in BY_KEY_CASES {
        set_operations::<i32>(&mut c, &gpu, case);
        set_operations::<f64>(&mut c, &gpu, case);
    }
    coarsening::<i32>(&mut c, &gpu, twins.as_ref());
    coarsening::<f64>(&mut c, &gpu, twins.as_ref());
    c.final_summary();
}
