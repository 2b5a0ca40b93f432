//! The merge kernels on a GPU against the CPU reference, bit for bit. Every run's output is
//! poisoned first (all bytes 0xFF: -1, u32::MAX or NaN, which no generated key equals), so an
//! unwritten key fails the comparison.
//!
//! Run with `cargo test --release -p host --test merge_gpu -- --include-ignored` on a machine
//! with a CUDA GPU (55 s on an H200 in release mode, much of it host-side generation and checks;
//! the merge past 2^32 keys needs about 35 GB of device memory and as much host memory; the
//! coarsening sweep, added since, runs 15 more entry points on i32 and f64 keys; merge path,
//! added since, runs with every variant and alone at its tile edges and over its sweep).

mod common;

use common::gpu;
use cudarc::driver::LaunchConfig;
use gpu_kernels::merge::tiles::{self, PathShape, TILE_SIZE};
use host::merge::{
    self, Distribution, HostKey, MergeProblem, MergeVariant, check_sorted, first_difference, merge_reference,
    path,
};
use host::{Error, Gpu};
use ndarray::parallel::prelude::*;
use ndarray::{Array1, s};

/// Fails, naming `what` and the first wrong key, unless `out` is `expected` bit for bit.
fn assert_merged<K: HostKey>(out: &[K], expected: &[K], what: &str) {
    if let Some(i) = first_difference(out, expected) {
        panic!(
            "{what}: {} keys, first difference at {i}: got {:?}, expected {:?}",
            expected.len(),
            out.get(i),
            expected.get(i)
        );
    }
}

/// Runs every variant on `problem` and compares its output with `expected` bit for bit.
fn check_variants<K: HostKey>(problem: &mut MergeProblem<'_, K>, expected: &[K], what: &str) {
    for variant in MergeVariant::ALL {
        let ms = problem.run(variant).unwrap_or_else(|e| panic!("{what}, {variant} {}: {e}", K::NAME));
        assert!(ms.is_finite() && ms >= 0.0, "{what}, {variant}: {ms} ms");
        assert_merged(&problem.output().unwrap(), expected, &format!("{what}, {variant} {}", K::NAME));
    }
}

/// Every variant on inputs of `distribution` at sizes `m`, `n`; with `swap`, A and B trade
/// places (so `Disjoint` puts all of A above B).
fn check_merge<K: HostKey>(gpu: &Gpu, distribution: Distribution, m: usize, n: usize, swap: bool) {
    let (a, b) = if swap {
        let (a, b) = distribution.generate::<K>(n, m, 0x5eed).unwrap();
        (b, a)
    } else {
        distribution.generate::<K>(m, n, 0x5eed).unwrap()
    };
    let expected = merge_reference(&a, &b);
    let mut problem = MergeProblem::new(gpu, &a, &b).unwrap();
    let order = if swap { "A above B" } else { "" };
    check_variants(&mut problem, &expected, &format!("{distribution} {order} m = {m}, n = {n}"));
}

/// Small and mid sizes, every distribution, both orders of the disjoint inputs.
fn check_type<K: HostKey>(gpu: &Gpu) {
    let small = [0, 1, 2, 1000];
    for m in small {
        for n in small {
            for distribution in Distribution::ALL {
                check_merge::<K>(gpu, distribution, m, n, false);
            }
            check_merge::<K>(gpu, Distribution::Disjoint, m, n, true);
        }
    }
    // PMPP exercise 4's sizes, both ways round.
    for (m, n) in [(1_030_400, 608_000), (608_000, 1_030_400)] {
        for distribution in [Distribution::Uniform, Distribution::FewUnique, Distribution::Disjoint] {
            check_merge::<K>(gpu, distribution, m, n, false);
        }
        check_merge::<K>(gpu, Distribution::AllEqual, m, n, false);
        check_merge::<K>(gpu, Distribution::Disjoint, m, n, true);
    }
    // Past several L2s, uneven, with many tiles per block.
    let big = (1 << 24) + 7;
    check_merge::<K>(gpu, Distribution::Uniform, big, big, false);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn every_variant_and_type_matches_the_reference() {
    let gpu = gpu();
    check_type::<i32>(&gpu);
    check_type::<u32>(&gpu);
    check_type::<i64>(&gpu);
    check_type::<f32>(&gpu);
    check_type::<f64>(&gpu);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn lopsided_and_one_sided_large_merges() {
    let gpu = gpu();
    let big = (1 << 24) + 7;
    for (m, n) in [(big, 0), (0, big), (big, 1000), (3, big), (big, 2 * TILE_SIZE + 1)] {
        check_merge::<i32>(&gpu, Distribution::Uniform, m, n, false);
        check_merge::<i32>(&gpu, Distribution::Disjoint, m, n, true);
    }
    check_merge::<f64>(&gpu, Distribution::FewUnique, big, big / 3, false);
    // Lopsided 8-byte merges: merge path's own shape for them (`tiles::PATH_8_BYTE_LOPSIDED`).
    let lopsided_big = tiles::PATH_LOPSIDED_MIN_KEYS + 7;
    for (m, n) in [(lopsided_big, 1000), (1000, lopsided_big), (lopsided_big, lopsided_big / 64)] {
        assert_eq!(path::default_shape_for("f64", m, n, "asc"), tiles::PATH_8_BYTE_LOPSIDED);
        check_merge::<f64>(&gpu, Distribution::Uniform, m, n, false);
        check_merge::<i64>(&gpu, Distribution::FewUnique, m, n, false);
    }
    check_merge::<i64>(&gpu, Distribution::Interleaved, big, big, false);
    check_merge::<u32>(&gpu, Distribution::AllEqual, big, big, false);
}

/// `-0.0` and `+0.0` compare equal but differ in their bits, so the output shows which came
/// first: a stable merge puts every `-0.0` of A before every `+0.0` of B.
fn check_stability<K: HostKey>(gpu: &Gpu, negative_zero: K, positive_zero: K, minus_one: K, one: K) {
    let sizes = [(1, 1), (7, 9), (1000, 1000), (5000, 3 * TILE_SIZE + 1), (1_030_400, 608_000)];
    for (m, n) in sizes {
        // All zeros: the output is all of A's -0.0, then all of B's +0.0.
        let (a, b) = (vec![negative_zero; m], vec![positive_zero; n]);
        let expected: Vec<K> = a.iter().chain(&b).copied().collect();
        assert!(first_difference(&merge_reference(&a, &b), &expected).is_none());
        let mut problem = MergeProblem::new(gpu, &a, &b).unwrap();
        check_variants(&mut problem, &expected, &format!("signed zeros m = {m}, n = {n}"));

        // Zeros between other keys: -1 … -0.0 … 1 in A, -1 … +0.0 … 1 in B.
        let third = |len: usize, zero: K| {
            let mut keys = vec![minus_one; len / 3];
            keys.resize(len - len / 3, zero);
            keys.resize(len, one);
            keys
        };
        let (a, b) = (third(m, negative_zero), third(n, positive_zero));
        let expected = merge_reference(&a, &b);
        let zeros: Vec<u64> = expected.iter().filter(|k| **k == negative_zero).map(|k| k.bits()).collect();
        let negatives = zeros.iter().take_while(|&&bits| bits == negative_zero.bits()).count();
        assert!(zeros[negatives..].iter().all(|&bits| bits == positive_zero.bits()));
        let mut problem = MergeProblem::new(gpu, &a, &b).unwrap();
        check_variants(&mut problem, &expected, &format!("zeros among keys m = {m}, n = {n}"));
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn equal_keys_keep_a_first_visible_in_signed_zero_bits() {
    let gpu = gpu();
    check_stability::<f32>(&gpu, -0.0, 0.0, -1.0, 1.0);
    check_stability::<f64>(&gpu, -0.0, 0.0, -1.0, 1.0);
}

/// `m = n = 2^31 + 5` i32 keys, `m + n` past 2^32: A holds 0, 0, 0, 0, 2, 2, 2, 2, 4, …, B the
/// odd numbers likewise, so the output is groups of four A keys then four B keys, and key `k`
/// of the output has a closed form; checked in one parallel pass instead of a reference.
#[test]
#[ignore = "needs a CUDA GPU"]
fn merge_past_2_pow_32_keys() {
    let gpu = gpu();
    let len: usize = (1 << 31) + 5;
    let total = 2 * len;
    let needed = 2 * total * size_of::<i32>();
    let (free, _) = gpu.memory().unwrap();
    if free < needed + (1 << 30) {
        eprintln!("skipped: needs {needed} bytes of device memory, {free} free");
        return;
    }
    let mut a = vec![0i32; len];
    a.par_iter_mut().enumerate().for_each(|(i, key)| *key = 2 * (i / 4) as i32);
    let mut b = vec![0i32; len];
    b.par_iter_mut().enumerate().for_each(|(j, key)| *key = 2 * (j / 4) as i32 + 1);
    let expected = |k: usize| -> i32 {
        let group = k / 8;
        let a_in_group = (len - 4 * group).min(4);
        2 * group as i32 + i32::from(k % 8 >= a_in_group)
    };
    assert_eq!((expected(0), expected(3), expected(4), expected(8)), (0, 0, 1, 2));
    assert_eq!((expected(total - 2), expected(total - 1)), (a[len - 1], b[len - 1]));

    let mut problem = MergeProblem::new(&gpu, &a, &b).unwrap();
    drop((a, b));
    for variant in MergeVariant::ALL {
        problem.run(variant).unwrap_or_else(|e| panic!("{variant}: {e}"));
        let out = problem.output().unwrap();
        assert_eq!(out.len(), total);
        let bad = out.par_iter().enumerate().find_first(|&(k, &key)| key != expected(k));
        if let Some((k, &key)) = bad {
            panic!("{variant}: output key {k} of {total} is {key}, expected {}", expected(k));
        }
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn slice_and_ndarray_entry_points() {
    let gpu = gpu();
    for variant in MergeVariant::ALL {
        assert_eq!(merge::merge(&gpu, variant, &[1, 3, 5], &[2, 3, 4]).unwrap(), [1, 2, 3, 3, 4, 5]);
        assert_eq!(merge::merge::<f64>(&gpu, variant, &[], &[]).unwrap(), Vec::<f64>::new());
        // A strided view: every other key of 0..20 is 0, 2, …, 18.
        let a = Array1::from_iter(0..20i64);
        let b = Array1::from_vec(vec![5i64, 6, 7]);
        let c = merge::merge_arrays(&gpu, variant, a.slice(s![..;2]), b.view()).unwrap();
        assert_eq!(c.to_vec(), [0, 2, 4, 5, 6, 6, 7, 8, 10, 12, 14, 16, 18]);
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn bad_inputs_are_refused_before_upload() {
    let gpu = gpu();
    let err = MergeProblem::new(&gpu, &[1u32, 2, 3], &[4, 9, 5]).err().unwrap();
    assert!(matches!(err, Error::Unsorted { array: "B", index: 2, .. }), "{err}");
    let err = merge::merge(&gpu, MergeVariant::Tiled, &[0.0f32, f32::NAN], &[]).unwrap_err();
    assert!(matches!(err, Error::NanKey { array: "A", index: 1 }), "{err}");
    check_sorted("A", &[1.0f64]).unwrap();
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn timings_and_the_copy_ceiling() {
    let gpu = gpu();
    let (a, b) = Distribution::Uniform.generate::<f32>(1 << 22, 1 << 22, 3).unwrap();
    let mut problem = MergeProblem::new(&gpu, &a, &b).unwrap();
    assert_eq!(problem.bytes_moved(), 2 * (1 << 23) * 4);
    let copy_ms = problem.copy_ms().unwrap();
    assert!(copy_ms > 0.0 && copy_ms.is_finite(), "{copy_ms}");
    // The copy leaves A then B in the output, which is not the merge.
    assert!(matches!(problem.output(), Err(Error::BadArgument(_))));
    for variant in MergeVariant::ALL {
        let ms = problem.run(variant).unwrap();
        assert!(ms > 0.0 && ms.is_finite(), "{variant}: {ms}");
    }
    assert!(first_difference(&problem.output().unwrap(), &merge_reference(&a, &b)).is_none());

    let mut empty = MergeProblem::<i32>::new(&gpu, &[], &[]).unwrap();
    for variant in MergeVariant::ALL {
        empty.run(variant).unwrap();
        assert!(empty.output().unwrap().is_empty());
    }
    empty.copy_ms().unwrap();
}

/// Runs every coarsening factor every variant has for `K` (the sweep's entry points for i32
/// and f64, the default alone otherwise) on `problem` against `expected`, bit for bit.
fn check_coarsenings<K: HostKey>(problem: &mut MergeProblem<'_, K>, expected: &[K], what: &str) -> usize {
    let mut runs = 0;
    for variant in MergeVariant::ALL {
        for &factor in variant.coarsenings(K::NAME) {
            let ms = problem
                .run_with_coarsening(variant, factor)
                .unwrap_or_else(|e| panic!("{what}, {variant} {} C = {factor}: {e}", K::NAME));
            assert!(ms.is_finite() && ms >= 0.0, "{what}, {variant} C = {factor}: {ms} ms");
            let label = format!("{what}, {variant} {} C = {factor}", K::NAME);
            assert_merged(&problem.output().unwrap(), expected, &label);
            runs += 1;
        }
    }
    runs
}

/// The coarsening sweep on key type `K`: edge sizes, PMPP exercise 4's, and uneven sizes
/// across many tiles, on inputs with and without ties.
fn check_sweep<K: HostKey>(gpu: &Gpu) {
    let uneven = (1 << 22) + 7;
    let sizes = [
        (0, 0),
        (0, 1),
        (1, 0),
        (1, 1),
        (1000, 1000),
        (1000, 3),
        (1_030_400, 608_000),
        (608_000, 1_030_400),
        (uneven, (1 << 20) + 2 * TILE_SIZE + 1),
    ];
    for (m, n) in sizes {
        for distribution in [Distribution::Uniform, Distribution::FewUnique, Distribution::Disjoint] {
            let (a, b) = distribution.generate::<K>(m, n, 0xc0a2).unwrap();
            let expected = merge_reference(&a, &b);
            let mut problem = MergeProblem::new(gpu, &a, &b).unwrap();
            let runs =
                check_coarsenings(&mut problem, &expected, &format!("{distribution} m = {m}, n = {n}"));
            // Basic: 5 factors; tiled: 5 for i32, 4 for f64; circular: the default.
            assert_eq!(runs, if K::NAME == "i32" { 11 } else { 10 });
        }
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn every_entry_point_of_the_coarsening_sweep_matches_the_reference() {
    let gpu = gpu();
    check_sweep::<i32>(&gpu);
    check_sweep::<f64>(&gpu);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn coarsening_factors_without_an_entry_point_are_refused_and_any_function_runs() {
    let gpu = gpu();
    let (a, b) = Distribution::Uniform.generate::<f64>(5000, 3000, 9).unwrap();
    let expected = merge_reference(&a, &b);
    let mut problem = MergeProblem::new(&gpu, &a, &b).unwrap();
    for (variant, factor) in
        [(MergeVariant::Tiled, 16), (MergeVariant::Basic, 3), (MergeVariant::Circular, 1)]
    {
        let err = problem.run_with_coarsening(variant, factor).unwrap_err();
        assert!(matches!(err, Error::BadArgument(_)), "{variant} C = {factor}: {err}");
    }
    let mut unsigned = MergeProblem::new(&gpu, &[1u32, 4], &[2, 3]).unwrap();
    assert!(matches!(unsigned.run_with_coarsening(MergeVariant::Basic, 1), Err(Error::BadArgument(_))));
    unsigned.run_with_coarsening(MergeVariant::Basic, 8).unwrap();
    assert_eq!(unsigned.output().unwrap(), [1, 2, 3, 4]);

    // `run_function` runs an entry point by hand, with its plan's launch shape.
    let function = gpu.function("merge_tiled_c2_f64").unwrap();
    let plan = problem.plan_with_coarsening(MergeVariant::Tiled, 2).unwrap();
    let ms = problem.run_function(&function, plan.launch_config().unwrap(), "hand-launched tiled").unwrap();
    assert!(ms > 0.0 && ms.is_finite(), "{ms}");
    assert!(first_difference(&problem.output().unwrap(), &expected).is_none());
    // A grid of no blocks cannot merge keys.
    let empty_grid = LaunchConfig { grid_dim: (0, 1, 1), ..plan.launch_config().unwrap() };
    let err = problem.run_function(&function, empty_grid, "hand-launched tiled").unwrap_err();
    assert!(matches!(err, Error::BadArgument(_)), "{err}");
}

/// Merge path with `shape` on `problem` against `expected`, bit for bit.
fn check_path_shape<K: HostKey>(
    problem: &mut MergeProblem<'_, K>,
    shape: PathShape,
    expected: &[K],
    what: &str,
) {
    let describe = path::Describe(shape);
    let ms =
        problem.run_path(shape).unwrap_or_else(|e| panic!("{what}, merge-path {describe} {}: {e}", K::NAME));
    assert!(ms.is_finite() && ms >= 0.0, "{what}, {describe}: {ms} ms");
    let label = format!("{what}, merge-path {describe} {}", K::NAME);
    assert_merged(&problem.output().unwrap(), expected, &label);
}

/// Merge path's default shapes for `K` (for 8-byte keys, the lopsided merges' too) over {0, 1,
/// 2, 1000, tile − 1, tile, tile + 1}² sizes, every distribution, and A above B.
fn check_path_tile_edges<K: HostKey>(gpu: &Gpu) {
    check_path_tile_edges_of::<K>(gpu, path::default_shape(K::NAME));
    if size_of::<K>() == 8 {
        check_path_tile_edges_of::<K>(gpu, tiles::PATH_8_BYTE_LOPSIDED);
    }
}

fn check_path_tile_edges_of<K: HostKey>(gpu: &Gpu, shape: PathShape) {
    let t = shape.tile_size();
    let sizes = [0, 1, 2, 1000, t - 1, t, t + 1];
    for m in sizes {
        for n in sizes {
            for (distribution, swap) in
                Distribution::ALL.map(|d| (d, false)).into_iter().chain([(Distribution::Disjoint, true)])
            {
                let (a, b) = if swap {
                    let (a, b) = distribution.generate::<K>(n, m, 0x9a7).unwrap();
                    (b, a)
                } else {
                    distribution.generate::<K>(m, n, 0x9a7).unwrap()
                };
                let expected = merge_reference(&a, &b);
                let mut problem = MergeProblem::new(gpu, &a, &b).unwrap();
                let order = if swap { " A above B" } else { "" };
                check_path_shape(
                    &mut problem,
                    shape,
                    &expected,
                    &format!("{distribution}{order} m = {m}, n = {n}"),
                );
            }
        }
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn merge_path_at_tile_edges_on_every_key_type_and_distribution() {
    let gpu = gpu();
    check_path_tile_edges::<i32>(&gpu);
    check_path_tile_edges::<u32>(&gpu);
    check_path_tile_edges::<i64>(&gpu);
    check_path_tile_edges::<f32>(&gpu);
    check_path_tile_edges::<f64>(&gpu);
}

/// Merge path's default shape for `K` on inputs ending in runs of the greatest key (`MAX`,
/// or infinity), the value of the end marks its serial merge reads past each run: where a
/// thread's A is used up against B's greatest keys it takes marks instead, which must give the
/// same bits. (Not u32: its greatest key is the all-ones poison.)
fn check_path_greatest_keys<K: HostKey>(gpu: &Gpu) {
    let t = path::default_shape(K::NAME).tile_size();
    for (m, n, a_greatest, b_greatest) in
        [(t, t, 40, 7), (3 * t + 1, 2 * t, 1, 2 * t), (5, 3 * t, 5, 2), (2 * t, 9, 2 * t, 9)]
    {
        let (mut a, mut b) = Distribution::Uniform.generate::<K>(m, n, 0x6a7).unwrap();
        a[m - a_greatest..].fill(K::GREATEST);
        b[n - b_greatest..].fill(K::GREATEST);
        let expected = merge_reference(&a, &b);
        let mut problem = MergeProblem::new(gpu, &a, &b).unwrap();
        let what = format!("m = {m} ({a_greatest} greatest), n = {n} ({b_greatest} greatest)");
        check_path_shape(&mut problem, path::default_shape(K::NAME), &expected, &what);
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn merge_path_with_runs_of_the_greatest_key() {
    let gpu = gpu();
    check_path_greatest_keys::<i32>(&gpu);
    check_path_greatest_keys::<i64>(&gpu);
    check_path_greatest_keys::<f32>(&gpu);
    check_path_greatest_keys::<f64>(&gpu);
}

/// Every built merge-path shape for `K` (the sweep's for i32 and f64) on edge sizes of each
/// shape's tile, ties and disjoint runs, and an uneven merge over many tiles.
fn check_path_sweep<K: HostKey>(gpu: &Gpu) {
    let shapes = path::shapes(K::NAME);
    assert_eq!(shapes, path::sweep(K::NAME));
    let uneven = (1 << 22) + 7;
    let mut sizes = vec![(0, 0), (1, 0), (0, 1), (1000, 3), (uneven, (1 << 20) + 13)];
    sizes.extend(shapes.iter().flat_map(|s| [(s.tile_size() - 1, 1), (s.tile_size(), s.tile_size() + 1)]));
    for (m, n) in sizes {
        for distribution in [Distribution::Uniform, Distribution::FewUnique, Distribution::Disjoint] {
            let (a, b) = distribution.generate::<K>(m, n, 0x5a1).unwrap();
            let expected = merge_reference(&a, &b);
            let mut problem = MergeProblem::new(gpu, &a, &b).unwrap();
            for &shape in shapes {
                check_path_shape(&mut problem, shape, &expected, &format!("{distribution} m = {m}, n = {n}"));
            }
        }
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn every_merge_path_shape_of_the_sweep_matches_the_reference() {
    let gpu = gpu();
    check_path_sweep::<i32>(&gpu);
    check_path_sweep::<f64>(&gpu);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn merge_path_shapes_not_built_are_refused() {
    let gpu = gpu();
    let mut problem = MergeProblem::new(&gpu, &[1u32, 4], &[2, 3]).unwrap();
    for shape in [PathShape::new(128, 7), PathShape::new(2048, 1), PathShape::new(128, 7).pipelined()] {
        let err = problem.run_path(shape).unwrap_err();
        assert!(matches!(err, Error::BadArgument(_)), "{shape:?}: {err}");
    }
    assert!(matches!(problem.output(), Err(Error::BadArgument(_))));
    problem.run_path(path::default_shape("u32")).unwrap();
    assert_eq!(problem.output().unwrap(), [1, 2, 3, 4]);
}
