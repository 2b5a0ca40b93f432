//! Merge path in other key orders on a GPU: descending (every key type) and the example of a
//! user's order, `ByUpper16` (u32 keys by their upper 16 bits), keys alone and by key, against the
//! CPU references in the same order, bit for bit. Outputs are poisoned before every run.
//!
//! Run with `cargo test --release -p host --test merge_order_gpu -- --include-ignored` on a
//! machine with a CUDA GPU.

mod common;

use common::gpu;
use host::merge::family_reference::merge_by_key_reference_in;
use host::merge::{
    self, ByUpper16, Descending, Distribution, HostKey, KeyOrder, MergeByKeyProblem, MergeProblem,
    MergeVariant, first_difference, first_value_difference, merge_reference_in, path, source_values,
};
use host::{Error, Gpu};

/// Merge path on `a` and `b` (sorted in `O`), keys alone and with u32 values, against the
/// references in `O`, bit for bit.
fn check_in<K: HostKey, O: KeyOrder<K>>(gpu: &Gpu, a: &[K], b: &[K], what: &str) {
    let what = format!("{what}, {} keys in the order {}", K::NAME, O::NAME);
    let expected = merge_reference_in::<K, O>(a, b);
    let mut problem = MergeProblem::new_in::<O>(gpu, a, b).unwrap_or_else(|e| panic!("{what}: {e}"));
    problem.run(MergeVariant::Path).unwrap_or_else(|e| panic!("{what}: {e}"));
    if let Some(i) = first_difference(&problem.output().unwrap(), &expected) {
        panic!("{what}: first wrong key at {i}");
    }
    let (av, bv) = (source_values::<u32>(false, a.len()), source_values::<u32>(true, b.len()));
    let (keys, values) = merge_by_key_reference_in::<K, O, u32>(a, &av, b, &bv);
    let mut problem = MergeByKeyProblem::new_in::<O>(gpu, a, &av, b, &bv).unwrap();
    problem.run().unwrap_or_else(|e| panic!("{what}, by key: {e}"));
    let (out_keys, out_values) = problem.output().unwrap();
    if let Some(i) = first_difference(&out_keys, &keys) {
        panic!("{what}, by key: first wrong key at {i}");
    }
    if let Some(i) = first_value_difference(&out_values, &values) {
        panic!("{what}, by key: first wrong value at {i}");
    }
}

/// Descending merges of `K` over {0, 1, 2, 1000, tile − 1, tile, tile + 1}² sizes and every
/// distribution (generated ascending, then reversed), and with runs of the least key (the
/// descending end mark) at the ends.
fn check_descending<K: HostKey>(gpu: &Gpu) {
    let t = path::default_shape(K::NAME).tile_size();
    let sizes = [0, 1, 2, 1000, t - 1, t, t + 1];
    for m in sizes {
        for n in sizes {
            for distribution in Distribution::ALL {
                let (mut a, mut b) = distribution.generate::<K>(m, n, 0xde5c).unwrap();
                a.reverse();
                b.reverse();
                check_in::<K, Descending>(gpu, &a, &b, &format!("{distribution} m = {m}, n = {n}"));
            }
        }
    }
    for (m, n, a_least, b_least) in [(t, t, 40, 7), (5, 3 * t, 5, 2 * t), (2 * t + 1, 9, 1, 9)] {
        let (mut a, mut b) = Distribution::Uniform.generate::<K>(m, n, 0x1ea5).unwrap();
        a.reverse();
        b.reverse();
        a[m - a_least..].fill(K::LEAST);
        b[n - b_least..].fill(K::LEAST);
        check_in::<K, Descending>(
            gpu,
            &a,
            &b,
            &format!("m = {m} ({a_least} least), n = {n} ({b_least} least)"),
        );
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn descending_merges_of_every_key_type() {
    let gpu = gpu();
    check_descending::<i32>(&gpu);
    check_descending::<u32>(&gpu);
    check_descending::<i64>(&gpu);
    check_descending::<f32>(&gpu);
    check_descending::<f64>(&gpu);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn descending_keeps_a_first_on_signed_zeros() {
    let gpu = gpu();
    for (m, n) in [(1, 1), (5000, 3 * 5376 + 1), (1_030_400, 608_000)] {
        let (a, b) = (vec![0.0f64; m], vec![-0.0f64; n]);
        let out = merge::merge_in::<f64, Descending>(&gpu, &a, &b).unwrap();
        let expected: Vec<f64> = a.iter().chain(&b).copied().collect();
        assert!(first_difference(&out, &expected).is_none(), "m = {m}, n = {n}");
    }
}

/// u32 keys in buckets (the upper halves, ascending) with scrambled lower halves, the last
/// `last` of them in the last bucket, 0xFFFF_xxxx, equivalent to the end mark.
fn buckets(len: usize, last: usize, buckets: u32, salt: u32) -> Vec<u32> {
    (0..len)
        .map(|i| {
            let low = (i as u32).wrapping_mul(0x9E37).wrapping_add(salt) & 0xFFFF;
            let bucket =
                if i + last >= len { 0xFFFF } else { (i as u64 * u64::from(buckets) / len as u64) as u32 };
            (bucket << 16) | low
        })
        .collect()
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_users_order_by_the_upper_16_bits() {
    let gpu = gpu();
    let t = path::default_shape("u32").tile_size();
    for m in [0, 1, 1000, t - 1, t + 1, (1 << 22) + 7] {
        for n in [0, 2, t, 3 * t + 5, 1 << 20] {
            for (bucket_count, last) in [(1, 0), (17, 0), (1000, 3), (3, 200)] {
                let (a, b) =
                    (buckets(m, last.min(m), bucket_count, 1), buckets(n, last.min(n), bucket_count, 2));
                let what = format!("m = {m}, n = {n}, {bucket_count} buckets, {last} last");
                check_in::<u32, ByUpper16>(&gpu, &a, &b, &what);
            }
        }
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn other_orders_refuse_the_books_kernels_and_unsorted_inputs() {
    let gpu = gpu();
    let mut problem = MergeProblem::new_in::<Descending>(&gpu, &[5i32, 3], &[4, 1]).unwrap();
    for variant in MergeVariant::BOOK {
        let err = problem.run(variant).unwrap_err();
        assert!(
            matches!(err, Error::BadArgument(_)) && err.to_string().contains("ascending keys only"),
            "{err}"
        );
    }
    let err = problem.run_path(gpu_kernels::merge::tiles::PathShape::new(256, 15)).unwrap_err();
    assert!(err.to_string().contains("default shape only"), "{err}");
    problem.run(MergeVariant::Path).unwrap();
    assert_eq!(problem.output().unwrap(), [5, 4, 3, 1]);
    let err = MergeProblem::new_in::<Descending>(&gpu, &[1i32, 2], &[]).err().unwrap();
    assert!(matches!(err, Error::Unsorted { array: "A", index: 1, order: "desc", .. }), "{err}");
    let err = merge::merge_by_key_in::<u32, u32, ByUpper16>(&gpu, &[0x2_0000, 0x1_0000], &[0, 1], &[], &[]);
    assert!(err.unwrap_err().to_string().contains("in the order upper16"));
}
