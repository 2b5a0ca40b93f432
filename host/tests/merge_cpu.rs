//! The merge's host API without a GPU: the generators, the reference and the shared
//! `merge_sequential`/`co_rank` (the code the kernels run) agree on every key type and
//! distribution; bad inputs are refused with the array and index; the PTX holds every entry
//! point; PMPP exercise 4's launch numbers.

use gpu_kernels::merge::{co_rank, merge_sequential};
use host::Error;
use host::merge::{
    Distribution, HostKey, MergePlan, MergeVariant, check_sorted, first_difference, merge_reference,
};

fn generated_inputs_merge_alike<K: HostKey>() {
    for distribution in Distribution::ALL {
        for (m, n) in [(0, 0), (0, 3), (5, 0), (1, 1), (999, 1000), (4096, 17)] {
            let (a, b) = distribution.generate::<K>(m, n, 11).unwrap();
            let expected = merge_reference(&a, &b);
            let mut c = vec![K::default(); m + n];
            merge_sequential(&a, &b, &mut c);
            assert_eq!(first_difference(&c, &expected), None, "{distribution} {} m {m} n {n}", K::NAME);
            // Splitting the output anywhere at its co-rank and merging the halves is the same.
            let k = (m + n) / 3;
            let i = co_rank(k, &a, &b);
            let mut halves = vec![K::default(); m + n];
            let (first, second) = halves.split_at_mut(k);
            merge_sequential(&a[..i], &b[..k - i], first);
            merge_sequential(&a[i..], &b[k - i..], second);
            assert_eq!(first_difference(&halves, &expected), None, "{distribution} {} split", K::NAME);
        }
    }
}

#[test]
fn every_type_and_distribution_merges_like_the_reference() {
    generated_inputs_merge_alike::<i32>();
    generated_inputs_merge_alike::<u32>();
    generated_inputs_merge_alike::<i64>();
    generated_inputs_merge_alike::<f32>();
    generated_inputs_merge_alike::<f64>();
}

#[test]
fn unsorted_and_nan_inputs_name_the_array_and_index() {
    let err = check_sorted("A", &[3i64, 1]).unwrap_err();
    assert!(matches!(err, Error::Unsorted { array: "A", index: 1, .. }), "{err:?}");
    assert!(err.to_string().starts_with("merge input A is not sorted ascending: A[1] = 1"), "{err}");
    let err = check_sorted("B", &[1.0f32, 2.0, f32::NAN]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "merge input B holds NaN at index 2: NaN keys cannot be ordered, so they cannot be merged"
    );
}

#[test]
fn exercise_4_launch_numbers() {
    let (m, n) = (1_030_400, 608_000);
    let basic = MergePlan::new(MergeVariant::Basic, m, n, 8, 1024).unwrap();
    assert_eq!((basic.threads, basic.blocks, basic.global_searchers), (204_800, 200, 204_800));
    let tiled = MergePlan::new(MergeVariant::Tiled, m, n, 8, 1024).unwrap();
    assert_eq!((tiled.global_searchers, tiled.shared_searchers), (200, 204_800));
}

#[test]
fn the_ptx_holds_every_merge_entry_point() {
    for variant in MergeVariant::ALL {
        for dtype in ["i32", "u32", "i64", "f32", "f64"] {
            let entry = format!(".entry {}(", variant.entry_point(dtype));
            assert!(host::gpu::PTX.contains(&entry), "{entry} is missing from the PTX");
        }
    }
}
