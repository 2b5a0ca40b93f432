//! Input checks and exact output comparison on the host.
//!
//! The kernels assume sorted, NaN-free inputs (co-rank is a binary search); an unsorted input
//! would give a wrong merge without any error, so every host entry point checks both inputs
//! first. The cost is one read of each input, `O(m + n)`, split over the cores with rayon for
//! long inputs: well under the time of copying the input to the GPU.

use gpu_kernels::merge::{Ascending, KeyOrder};
use ndarray::parallel::prelude::*;

use super::HostKey;
use crate::{Error, Result};

/// Keys per parallel work item; inputs up to this long are checked on one core.
const CHUNK: usize = 1 << 16;

/// Checks that merge input `array` (`"A"` or `"B"`, for the message) is sorted ascending and
/// holds no NaN. Fails with [`Error::NanKey`] or [`Error::Unsorted`] at the first bad index.
pub fn check_sorted<K: HostKey>(array: &'static str, keys: &[K]) -> Result<()> {
    check_sorted_in::<K, Ascending>(array, keys)
}

/// [`check_sorted`] in the key order `O`: no key goes before the one before it.
pub fn check_sorted_in<K: HostKey, O: KeyOrder<K>>(array: &'static str, keys: &[K]) -> Result<()> {
    let chunks = keys.len().div_ceil(CHUNK);
    let scan = |chunk: usize| first_bad::<K, O>(keys, chunk * CHUNK, ((chunk + 1) * CHUNK).min(keys.len()));
    let bad = if chunks <= 1 { scan(0) } else { (0..chunks).into_par_iter().find_map_first(scan) };
    match bad {
        None => Ok(()),
        Some(index) if keys[index].is_nan() => Err(Error::NanKey { array, index }),
        Some(index) => Err(Error::Unsorted {
            array,
            index,
            value: keys[index].to_string(),
            previous: keys[index - 1].to_string(),
            order: O::NAME,
        }),
    }
}

/// The first index in `start..end` whose key is NaN or goes before the key before it in `O`.
fn first_bad<K: HostKey, O: KeyOrder<K>>(keys: &[K], start: usize, end: usize) -> Option<usize> {
    (start..end).find(|&i| keys[i].is_nan() || (i > 0 && O::before(keys[i], keys[i - 1])))
}

/// The first index where `out` and `expected` differ in their bits (so `-0.0` differs from
/// `+0.0`, and NaN poison from everything); `Some(shorter length)` when only the lengths
/// differ; `None` when they are identical.
pub fn first_difference<K: HostKey>(out: &[K], expected: &[K]) -> Option<usize> {
    let len = out.len().min(expected.len());
    let differs = |i: usize| out[i].bits() != expected[i].bits();
    let scan = |chunk: usize| (chunk * CHUNK..((chunk + 1) * CHUNK).min(len)).find(|&i| differs(i));
    let chunks = len.div_ceil(CHUNK);
    let first = if chunks <= 1 { scan(0) } else { (0..chunks).into_par_iter().find_map_first(scan) };
    first.or((out.len() != expected.len()).then_some(len))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sorted_inputs_with_duplicates_and_signed_zeros_pass() {
        check_sorted::<i32>("A", &[]).unwrap();
        check_sorted("A", &[1]).unwrap();
        check_sorted("B", &[-3, -3, 0, 0, 7]).unwrap();
        check_sorted("A", &[-1.0f32, -0.0, 0.0, -0.0, 2.5]).unwrap();
        let long: Vec<u32> = (0..5 * CHUNK as u32 + 17).map(|i| i / 3).collect();
        check_sorted("B", &long).unwrap();
    }

    #[test]
    fn the_first_key_out_of_order_is_reported() {
        let err = check_sorted("B", &[1, 2, 2, 1, 0]).unwrap_err();
        assert!(matches!(err, Error::Unsorted { array: "B", index: 3, .. }), "{err:?}");
        assert_eq!(
            err.to_string(),
            "merge input B is not sorted ascending: B[3] = 1 goes before B[3-1] = 2; both inputs must be sorted"
        );
    }

    #[test]
    fn other_orders_are_checked_in_their_own_terms() {
        use gpu_kernels::merge::{ByUpper16, Descending};
        check_sorted_in::<i64, Descending>("A", &[9, 9, 3, -2]).unwrap();
        let err = check_sorted_in::<i64, Descending>("A", &[9, 3, 4]).unwrap_err();
        assert!(matches!(err, Error::Unsorted { array: "A", index: 2, order: "desc", .. }), "{err:?}");
        assert!(
            err.to_string().starts_with("merge input A is not sorted descending: A[2] = 4 goes before"),
            "{err}"
        );
        // Equivalent keys (same upper half) in any order of their lower halves.
        check_sorted_in::<u32, ByUpper16>("B", &[0x1_0005, 0x1_0001, 0x2_0000]).unwrap();
        let err = check_sorted_in::<u32, ByUpper16>("B", &[0x2_0000, 0x1_FFFF]).unwrap_err();
        assert!(err.to_string().contains("is not sorted in the order upper16"), "{err}");
        assert!(matches!(check_sorted_in::<f32, Descending>("A", &[f32::NAN]), Err(Error::NanKey { .. })));
    }

    #[test]
    fn nan_is_refused_with_its_index() {
        let err = check_sorted("A", &[0.5f64, f64::NAN, 1.0]).unwrap_err();
        assert!(matches!(err, Error::NanKey { array: "A", index: 1 }), "{err:?}");
        assert!(err.to_string().contains("A holds NaN at index 1"), "{err}");
        let err = check_sorted("B", &[f32::NAN]).unwrap_err();
        assert!(matches!(err, Error::NanKey { array: "B", index: 0 }), "{err:?}");
    }

    #[test]
    fn long_inputs_report_the_first_bad_index_across_chunks() {
        let mut keys: Vec<i64> = (0..7 * CHUNK as i64).collect();
        keys[6 * CHUNK + 5] = -1;
        keys[3 * CHUNK] = 0; // first: at a chunk boundary
        let err = check_sorted("A", &keys).unwrap_err();
        assert!(matches!(err, Error::Unsorted { index, .. } if index == 3 * CHUNK), "{err:?}");

        let mut floats: Vec<f32> = (0..3 * CHUNK).map(|i| i as f32).collect();
        floats[2 * CHUNK - 1] = f32::NAN;
        let err = check_sorted("B", &floats).unwrap_err();
        assert!(matches!(err, Error::NanKey { index, .. } if index == 2 * CHUNK - 1), "{err:?}");
    }

    #[test]
    fn differences_are_bitwise() {
        assert_eq!(first_difference(&[1, 2, 3], &[1, 2, 3]), None);
        assert_eq!(first_difference(&[1, 2, -1], &[1, 2, 3]), Some(2));
        assert_eq!(first_difference(&[0.0f32, -0.0], &[0.0, 0.0]), Some(1));
        assert_eq!(first_difference(&[1u32], &[1, 2]), Some(1));
        let long: Vec<u32> = (0..3 * CHUNK as u32).collect();
        let mut other = long.clone();
        other[CHUNK + 1] = u32::MAX;
        assert_eq!(first_difference(&other, &long), Some(CHUNK + 1));
    }
}
