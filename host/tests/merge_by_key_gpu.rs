//! Merge by key on a GPU against the CPU reference (`merge::family_reference`), keys and values
//! bit for bit. Every run's output keys and values are poisoned first (all bytes 0xFF), so
//! anything unwritten fails the comparison; generated values name their source
//! ([`SourceValue`]), so a value that lands next to the wrong key does too.
//!
//! Run with `cargo test --release -p host --test merge_by_key_gpu -- --include-ignored` on a
//! machine with a CUDA GPU (the merge past 2^32 keys needs about 70 GB of device memory and 40 GB
//! of host memory, and is skipped where the GPU has less free).

mod common;

use common::gpu;
use gpu_kernels::merge::tiles::PathShape;
use host::merge::by_key::shapes;
use host::merge::family_reference::merge_by_key_reference;
use host::merge::{
    self, Distribution, HostKey, MergeByKeyProblem, Record8, Record16, SourceValue, first_difference,
    first_value_difference, path, source_values,
};
use host::{Error, Gpu};
use ndarray::parallel::prelude::*;
use ndarray::{Array1, s};

/// Runs `shape` on `problem` and fails, naming `what` and the first wrong key or value, unless
/// the output is `expected` bit for bit.
fn check_run<K: HostKey, V: SourceValue>(
    problem: &mut MergeByKeyProblem<'_, K, V>,
    shape: PathShape,
    expected: &(Vec<K>, Vec<V>),
    what: &str,
) {
    let what = format!("{what}, {} keys, {}, {}", K::NAME, std::any::type_name::<V>(), path::Describe(shape));
    let ms = problem.run_path(shape).unwrap_or_else(|e| panic!("{what}: {e}"));
    assert!(ms.is_finite() && ms >= 0.0, "{what}: {ms} ms");
    let (keys, values) = problem.output().unwrap();
    if let Some(i) = first_difference(&keys, &expected.0) {
        panic!("{what}: first wrong key at {i}: got {:?}, expected {:?}", keys.get(i), expected.0.get(i));
    }
    if let Some(i) = first_value_difference(&values, &expected.1) {
        panic!("{what}: first wrong value at {i}: got {:?}, expected {:?}", values.get(i), expected.1.get(i));
    }
}

/// Keys of `distribution` at sizes `m`, `n` (with `swap`, A and B trade places), their
/// generated values, and the reference merge by key.
#[allow(clippy::type_complexity)]
fn inputs<K: HostKey, V: SourceValue>(
    distribution: Distribution,
    m: usize,
    n: usize,
    swap: bool,
) -> ((Vec<K>, Vec<V>), (Vec<K>, Vec<V>), (Vec<K>, Vec<V>)) {
    let (a, b) = if swap {
        let (a, b) = distribution.generate::<K>(n, m, 0xb1e).unwrap();
        (b, a)
    } else {
        distribution.generate::<K>(m, n, 0xb1e).unwrap()
    };
    let (a_values, b_values) = (source_values::<V>(false, m), source_values::<V>(true, n));
    let expected = merge_by_key_reference(&a, &a_values, &b, &b_values);
    ((a, a_values), (b, b_values), expected)
}

/// The default shape for `K` with values `V` over `sizes`², every distribution and A above B.
fn check_sizes<K: HostKey, V: SourceValue>(gpu: &Gpu, sizes: &[usize]) {
    let shape = path::default_shape(K::NAME);
    for &m in sizes {
        for &n in sizes {
            for (distribution, swap) in
                Distribution::ALL.map(|d| (d, false)).into_iter().chain([(Distribution::Disjoint, true)])
            {
                let ((a, a_values), (b, b_values), expected) = inputs::<K, V>(distribution, m, n, swap);
                let mut problem = MergeByKeyProblem::new(gpu, &a, &a_values, &b, &b_values).unwrap();
                let order = if swap { " A above B" } else { "" };
                check_run(&mut problem, shape, &expected, &format!("{distribution}{order} m = {m}, n = {n}"));
            }
        }
    }
}

/// {0, 1, 2, 1000, tile − 1, tile, tile + 1} for `K`'s default shape.
fn tile_edges<K: HostKey>() -> Vec<usize> {
    let t = path::default_shape(K::NAME).tile_size();
    vec![0, 1, 2, 1000, t - 1, t, t + 1]
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn every_key_type_with_4_and_8_byte_values_at_tile_edges_and_every_distribution() {
    let gpu = gpu();
    check_sizes::<i32, u32>(&gpu, &tile_edges::<i32>());
    check_sizes::<u32, u64>(&gpu, &tile_edges::<u32>());
    check_sizes::<i64, u32>(&gpu, &tile_edges::<i64>());
    check_sizes::<f32, f64>(&gpu, &tile_edges::<f32>());
    check_sizes::<f64, u64>(&gpu, &tile_edges::<f64>());
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn every_value_type_travels_bit_for_bit() {
    let gpu = gpu();
    let few = |t: usize| vec![0, 1, 1000, t - 1, t + 1];
    let (t4, t8) = (path::default_shape("i32").tile_size(), path::default_shape("f64").tile_size());
    check_sizes::<i32, f32>(&gpu, &few(t4));
    check_sizes::<i32, Record8>(&gpu, &few(t4));
    check_sizes::<i32, Record16>(&gpu, &few(t4));
    check_sizes::<u32, [u32; 4]>(&gpu, &few(t4));
    check_sizes::<f64, f32>(&gpu, &few(t8));
    check_sizes::<f64, Record16>(&gpu, &few(t8));
    check_sizes::<i64, Record8>(&gpu, &few(t8));
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn large_and_lopsided_merges_by_key() {
    let gpu = gpu();
    let big = (1 << 24) + 7;
    for (m, n) in [(big, big), (big, 0), (3, big), (big, 1000)] {
        for distribution in [Distribution::Uniform, Distribution::FewUnique, Distribution::AllEqual] {
            let ((a, av), (b, bv), expected) = inputs::<i32, u32>(distribution, m, n, false);
            let mut problem = MergeByKeyProblem::new(&gpu, &a, &av, &b, &bv).unwrap();
            check_run(
                &mut problem,
                path::default_shape("i32"),
                &expected,
                &format!("{distribution} m = {m}, n = {n}"),
            );
            let ((a, av), (b, bv), expected) = inputs::<f64, u64>(distribution, m, n, false);
            let mut problem = MergeByKeyProblem::new(&gpu, &a, &av, &b, &bv).unwrap();
            check_run(
                &mut problem,
                path::default_shape("f64"),
                &expected,
                &format!("{distribution} m = {m}, n = {n}"),
            );
        }
    }
}

/// Equal keys keep A first, keys and values: `-0.0` in A and `+0.0` in B compare equal, and
/// both the keys' bits and the values show the order.
fn check_signed_zeros<K: HostKey>(gpu: &Gpu, negative_zero: K, positive_zero: K) {
    let t = path::default_shape(K::NAME).tile_size();
    for (m, n) in [(1, 1), (7, 9), (5000, 3 * t + 1), (1_030_400, 608_000)] {
        let (a, b) = (vec![negative_zero; m], vec![positive_zero; n]);
        let (av, bv) = (source_values::<u32>(false, m), source_values::<u32>(true, n));
        let expected: (Vec<K>, Vec<u32>) =
            (a.iter().chain(&b).copied().collect(), av.iter().chain(&bv).copied().collect());
        let reference = merge_by_key_reference(&a, &av, &b, &bv);
        assert!(first_difference(&reference.0, &expected.0).is_none() && reference.1 == expected.1);
        let mut problem = MergeByKeyProblem::new(gpu, &a, &av, &b, &bv).unwrap();
        check_run(
            &mut problem,
            path::default_shape(K::NAME),
            &expected,
            &format!("signed zeros m = {m}, n = {n}"),
        );
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn equal_keys_keep_a_first_with_their_values() {
    let gpu = gpu();
    check_signed_zeros::<f32>(&gpu, -0.0, 0.0);
    check_signed_zeros::<f64>(&gpu, -0.0, 0.0);
}

/// Keys ending in runs of the greatest key (`MAX`, infinity): the value of the end marks past
/// each run in shared memory, which the keys-only merge may take in place of B's greatest keys;
/// by key, B's own keys (and values) must be taken.
fn check_greatest_keys<K: HostKey>(gpu: &Gpu) {
    let t = path::default_shape(K::NAME).tile_size();
    for (m, n, a_greatest, b_greatest) in [
        (t, t, 40, 7),
        (3 * t + 1, 2 * t, 1, 2 * t),
        (5, 3 * t, 5, 2),
        (2 * t, 9, 2 * t, 9),
        (40, 3 * t, 3, 3 * t),
    ] {
        let (mut a, mut b) = Distribution::Uniform.generate::<K>(m, n, 0x6a7).unwrap();
        a[m - a_greatest..].fill(K::GREATEST);
        b[n - b_greatest..].fill(K::GREATEST);
        let (av, bv) = (source_values::<u64>(false, m), source_values::<u64>(true, n));
        let expected = merge_by_key_reference(&a, &av, &b, &bv);
        let mut problem = MergeByKeyProblem::new(gpu, &a, &av, &b, &bv).unwrap();
        let what = format!("m = {m} ({a_greatest} greatest), n = {n} ({b_greatest} greatest)");
        check_run(&mut problem, path::default_shape(K::NAME), &expected, &what);
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn values_of_the_greatest_keys_come_from_their_own_run() {
    let gpu = gpu();
    check_greatest_keys::<i32>(&gpu);
    check_greatest_keys::<u32>(&gpu);
    check_greatest_keys::<i64>(&gpu);
    check_greatest_keys::<f32>(&gpu);
    check_greatest_keys::<f64>(&gpu);
}

/// Every merge-by-key shape built for `K` (the sweep's, for i32 and f64) on tile edges, ties
/// and an uneven merge over many tiles.
fn check_sweep<K: HostKey>(gpu: &Gpu) {
    let uneven = (1 << 22) + 7;
    let mut sizes = vec![(0, 0), (1, 0), (0, 1), (1000, 3), (uneven, (1 << 20) + 13)];
    sizes.extend(
        shapes(K::NAME).iter().flat_map(|s| [(s.tile_size() - 1, 1), (s.tile_size(), s.tile_size() + 1)]),
    );
    for (m, n) in sizes {
        for distribution in [Distribution::Uniform, Distribution::FewUnique, Distribution::Disjoint] {
            let ((a, av), (b, bv), expected) = inputs::<K, u32>(distribution, m, n, false);
            let mut problem = MergeByKeyProblem::new(gpu, &a, &av, &b, &bv).unwrap();
            for &shape in shapes(K::NAME) {
                check_run(&mut problem, shape, &expected, &format!("{distribution} m = {m}, n = {n}"));
            }
        }
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn every_merge_by_key_shape_of_the_sweep_matches_the_reference() {
    let gpu = gpu();
    check_sweep::<i32>(&gpu);
    check_sweep::<f64>(&gpu);
}

/// `m = n = 2^31 + 5` i32 keys with u32 values, `m + n` past 2^32: A holds 0, 0, 0, 0, 2, 2, …
/// and B the odd numbers likewise (as in the keys-only test), A's values are their indices and
/// B's their indices' complements; output `k` has a closed form, checked in one parallel pass.
#[test]
#[ignore = "needs a CUDA GPU"]
fn merge_by_key_past_2_pow_32_keys() {
    let gpu = gpu();
    let len: usize = (1 << 31) + 5;
    let total = 2 * len;
    let needed = 2 * total * (size_of::<i32>() + size_of::<u32>());
    let (free, _) = gpu.memory().unwrap();
    if free < needed + (1 << 30) {
        eprintln!("skipped: needs {needed} bytes of device memory, {free} free");
        return;
    }
    let keys =
        |odd: i32| -> Vec<i32> { (0..len).into_par_iter().map(|i| 2 * (i / 4) as i32 + odd).collect() };
    let (a, b) = (keys(0), keys(1));
    let a_values: Vec<u32> = (0..len).into_par_iter().map(|i| i as u32).collect();
    let b_values: Vec<u32> = (0..len).into_par_iter().map(|j| !(j as u32)).collect();
    // Output k: group k / 8 holds A's keys 4g .. then B's 4g .., four each while they last.
    let expected = |k: usize| -> (i32, u32) {
        let group = k / 8;
        let a_in_group = (len - 4 * group).min(4);
        if k % 8 < a_in_group {
            (2 * group as i32, (4 * group + k % 8) as u32)
        } else {
            (2 * group as i32 + 1, !((4 * group + k % 8 - a_in_group) as u32))
        }
    };
    assert_eq!((expected(0), expected(4)), ((0, 0), (1, !0)));
    assert_eq!(expected(total - 1), (b[len - 1], b_values[len - 1]));
    let mut problem = MergeByKeyProblem::new(&gpu, &a, &a_values, &b, &b_values).unwrap();
    drop((a, b, a_values, b_values));
    problem.run().unwrap();
    let (out_keys, out_values) = problem.output().unwrap();
    assert_eq!((out_keys.len(), out_values.len()), (total, total));
    let bad = (0..total).into_par_iter().find_first(|&k| (out_keys[k], out_values[k]) != expected(k));
    if let Some(k) = bad {
        panic!("output {k} of {total} is ({}, {}), expected {:?}", out_keys[k], out_values[k], expected(k));
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn slice_and_ndarray_entry_points() {
    let gpu = gpu();
    let (keys, values) = merge::merge_by_key(
        &gpu,
        &[1, 3, 5],
        &['a' as u32, 'b' as u32, 'c' as u32],
        &[2, 3],
        &['x' as u32, 'y' as u32],
    )
    .unwrap();
    assert_eq!(keys, [1, 2, 3, 3, 5]);
    assert_eq!(values, ['a', 'x', 'b', 'y', 'c'].map(u32::from));
    let empty = merge::merge_by_key::<f64, u64>(&gpu, &[], &[], &[], &[]).unwrap();
    assert_eq!(empty, (vec![], vec![]));
    // Strided views: every other key of 0..20 (0, 2, …, 18) with every other value.
    let a = Array1::from_iter(0..20i64);
    let a_values = Array1::from_iter((0..20).map(|i| Record16 { id: i, value: i as f64 }));
    let b = Array1::from_vec(vec![5i64, 6, 7]);
    let b_values = Array1::from_vec(vec![Record16 { id: 100, value: -1.0 }; 3]);
    let (keys, values) = merge::merge_by_key_arrays(
        &gpu,
        a.slice(s![..;2]),
        a_values.slice(s![..;2]),
        b.view(),
        b_values.view(),
    )
    .unwrap();
    assert_eq!(keys.to_vec(), [0, 2, 4, 5, 6, 6, 7, 8, 10, 12, 14, 16, 18]);
    let ids: Vec<u64> = values.iter().map(|r| r.id).collect();
    assert_eq!(ids, [0, 2, 4, 100, 6, 100, 100, 8, 10, 12, 14, 16, 18]);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn bad_inputs_are_refused_before_upload() {
    let gpu = gpu();
    let err = merge::merge_by_key(&gpu, &[1u32, 2], &[0u32], &[], &[]).unwrap_err();
    assert!(matches!(err, Error::BadShape(_)), "{err}");
    assert!(err.to_string().contains("A has 2 keys and 1 values"), "{err}");
    let err = merge::merge_by_key(&gpu, &[1u32], &[0u64], &[4, 3], &[0, 1]).unwrap_err();
    assert!(matches!(err, Error::Unsorted { array: "B", index: 1, .. }), "{err}");
    let err = merge::merge_by_key(&gpu, &[f32::NAN], &[0u32], &[], &[]).unwrap_err();
    assert!(matches!(err, Error::NanKey { array: "A", index: 0 }), "{err}");
    let err = merge::merge_by_key(&gpu, &[1i32], &[0u16], &[], &[]).unwrap_err();
    assert!(matches!(err, Error::BadArgument(_)), "{err}");
    let mut problem = MergeByKeyProblem::new(&gpu, &[1u32, 4], &[0u32, 1], &[2, 3], &[2, 3]).unwrap();
    assert!(matches!(problem.output(), Err(Error::BadArgument(_))));
    let err = problem.run_path(PathShape::new(128, 7)).unwrap_err();
    assert!(matches!(err, Error::BadArgument(_)), "{err}");
    problem.run().unwrap();
    assert_eq!(problem.output().unwrap(), (vec![1, 2, 3, 4], vec![0, 2, 3, 1]));
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn timings_and_the_copy_ceiling() {
    let gpu = gpu();
    let ((a, av), (b, bv), expected) = inputs::<f32, u64>(Distribution::Uniform, 1 << 22, 1 << 22, false);
    let mut problem = MergeByKeyProblem::new(&gpu, &a, &av, &b, &bv).unwrap();
    assert_eq!(problem.bytes_moved(), 2 * (1 << 23) * 12);
    let copy_ms = problem.copy_ms().unwrap();
    assert!(copy_ms > 0.0 && copy_ms.is_finite(), "{copy_ms}");
    // The copy leaves A then B in the output, which is not the merge.
    assert!(matches!(problem.output(), Err(Error::BadArgument(_))));
    check_run(&mut problem, path::default_shape("f32"), &expected, "uniform 2^22 + 2^22");
    let mut empty = MergeByKeyProblem::<i32, u32>::new(&gpu, &[], &[], &[], &[]).unwrap();
    empty.run().unwrap();
    assert_eq!(empty.output().unwrap(), (vec![], vec![]));
    empty.copy_ms().unwrap();
}
