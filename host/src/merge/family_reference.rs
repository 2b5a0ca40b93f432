//! CPU references of the merge family (issue 12): merge by key, and the set operations with the
//! multiset semantics of C++'s `std::set_*` algorithms. Every output element is named by its
//! [`Source`] (which input, which index), so the by-key versions are defined by the same walk.
//! Written out plainly, independent of any kernel's code; keys are compared as the merge kernels
//! compare them (equal means neither is less, so `-0.0` and `+0.0` are equal).

use gpu_kernels::merge::{Ascending, KeyOrder, MergeKey};

/// Where an output element comes from: `A(i)` is `a[i]`, `B(j)` is `b[j]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    A(usize),
    B(usize),
}

pub use gpu_kernels::merge::SetOperation;

/// The sources of the stable merge of sorted `a` and `b` (on equal keys A's first).
pub fn merge_sources<K: MergeKey>(a: &[K], b: &[K]) -> Vec<Source> {
    merge_sources_in::<K, Ascending>(a, b)
}

/// [`merge_sources`] in the key order `O` (on equivalent keys A's first).
pub fn merge_sources_in<K: MergeKey, O: KeyOrder<K>>(a: &[K], b: &[K]) -> Vec<Source> {
    let mut out = Vec::with_capacity(a.len() + b.len());
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        if O::before(b[j], a[i]) {
            out.push(Source::B(j));
            j += 1;
        } else {
            out.push(Source::A(i));
            i += 1;
        }
    }
    out.extend((i..a.len()).map(Source::A));
    out.extend((j..b.len()).map(Source::B));
    out
}

/// The sources of `operation` on sorted `a` and `b`, in output order: one walk over both, as
/// the standard library's algorithms do.
pub fn set_sources<K: MergeKey>(operation: SetOperation, a: &[K], b: &[K]) -> Vec<Source> {
    use SetOperation::*;
    let mut out = Vec::new();
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        if a[i] < b[j] {
            if matches!(operation, Union | Difference | SymmetricDifference) {
                out.push(Source::A(i));
            }
            i += 1;
        } else if b[j] < a[i] {
            if matches!(operation, Union | SymmetricDifference) {
                out.push(Source::B(j));
            }
            j += 1;
        } else {
            // A pair of equal keys: union and intersection keep A's, the differences neither.
            if matches!(operation, Union | Intersection) {
                out.push(Source::A(i));
            }
            i += 1;
            j += 1;
        }
    }
    if matches!(operation, Union | Difference | SymmetricDifference) {
        out.extend((i..a.len()).map(Source::A));
    }
    if matches!(operation, Union | SymmetricDifference) {
        out.extend((j..b.len()).map(Source::B));
    }
    out
}

/// The elements `sources` name, from `a` and `b` (keys, or values that travel with them).
pub fn gather<T: Copy>(sources: &[Source], a: &[T], b: &[T]) -> Vec<T> {
    sources
        .iter()
        .map(|&s| match s {
            Source::A(i) => a[i],
            Source::B(j) => b[j],
        })
        .collect()
}

/// The stable merge of `(a_keys, a_values)` and `(b_keys, b_values)` by key: the merged keys and
/// the values that travel with them.
pub fn merge_by_key_reference<K: MergeKey, V: Copy>(
    a_keys: &[K],
    a_values: &[V],
    b_keys: &[K],
    b_values: &[V],
) -> (Vec<K>, Vec<V>) {
    merge_by_key_reference_in::<K, Ascending, V>(a_keys, a_values, b_keys, b_values)
}

/// [`merge_by_key_reference`] in the key order `O`.
pub fn merge_by_key_reference_in<K: MergeKey, O: KeyOrder<K>, V: Copy>(
    a_keys: &[K],
    a_values: &[V],
    b_keys: &[K],
    b_values: &[V],
) -> (Vec<K>, Vec<V>) {
    let sources = merge_sources_in::<K, O>(a_keys, b_keys);
    (gather(&sources, a_keys, b_keys), gather(&sources, a_values, b_values))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn the_standard_librarys_examples() {
        // cppreference's std::set_* examples, multisets included.
        let (a, b) = ([1, 2, 3, 4, 5, 5, 5], [3, 4, 5, 6, 7]);
        let keys = |op| gather(&set_sources(op, &a, &b), &a, &b);
        assert_eq!(keys(SetOperation::Union), [1, 2, 3, 4, 5, 5, 5, 6, 7]);
        assert_eq!(keys(SetOperation::Intersection), [3, 4, 5]);
        assert_eq!(keys(SetOperation::Difference), [1, 2, 5, 5]);
        assert_eq!(keys(SetOperation::SymmetricDifference), [1, 2, 5, 5, 6, 7]);
        // Which copies: the last ones of the longer run.
        assert_eq!(set_sources(SetOperation::Difference, &a, &b)[2..], [Source::A(5), Source::A(6)]);
        let (a, b) = ([5], [5, 5, 5]);
        assert_eq!(set_sources(SetOperation::Union, &a, &b), [Source::A(0), Source::B(1), Source::B(2)]);
        assert_eq!(set_sources(SetOperation::SymmetricDifference, &a, &b), [Source::B(1), Source::B(2)]);
        assert!(set_sources(SetOperation::Intersection, &[] as &[i32], &b).is_empty());
    }

    #[test]
    fn values_travel_with_their_keys_and_ties_take_a_first() {
        let (keys, values) =
            merge_by_key_reference(&[1, 3, 3], &['a', 'b', 'c'], &[0, 3, 4], &['x', 'y', 'z']);
        assert_eq!(keys, [0, 1, 3, 3, 3, 4]);
        assert_eq!(values, ['x', 'a', 'b', 'c', 'y', 'z']);
        // -0.0 in A and +0.0 in B are equal keys: A's first.
        let sources = merge_sources(&[-0.0f64], &[0.0]);
        assert_eq!(sources, [Source::A(0), Source::B(0)]);
    }

    fn sorted(max_len: usize) -> impl Strategy<Value = Vec<i32>> {
        proptest::collection::vec(0i32..8, 0..max_len).prop_map(|mut v| {
            v.sort_unstable();
            v
        })
    }

    proptest! {
        /// Per distinct key, the output counts are those of the multiset semantics, the output
        /// is sorted, and every source is an index of the right input holding that key.
        #[test]
        fn counts_follow_the_multiset_semantics(a in sorted(40), b in sorted(40)) {
            for op in SetOperation::ALL {
                let sources = set_sources(op, &a, &b);
                let keys = gather(&sources, &a, &b);
                prop_assert!(keys.windows(2).all(|w| w[0] <= w[1]), "{op:?} sorted");
                for key in 0..8 {
                    let (m, n) = (a.iter().filter(|&&k| k == key).count(), b.iter().filter(|&&k| k == key).count());
                    let expected = match op {
                        SetOperation::Union => m.max(n),
                        SetOperation::Intersection => m.min(n),
                        SetOperation::Difference => m.saturating_sub(n),
                        SetOperation::SymmetricDifference => m.abs_diff(n),
                    };
                    prop_assert_eq!(keys.iter().filter(|&&k| k == key).count(), expected, "{:?} key {}", op, key);
                }
            }
            let merged = gather(&merge_sources(&a, &b), &a, &b);
            prop_assert_eq!(merged, crate::merge::merge_reference(&a, &b));
        }

        /// The kernels' serial walk (`gpu_kernels::merge::set_walk`) names the same sources as
        /// this reference, for every operation.
        #[test]
        fn the_kernels_walk_equals_the_reference(a in sorted(40), b in sorted(40)) {
            for op in SetOperation::ALL {
                let mut walked = Vec::new();
                // SAFETY: slices of their lengths, sorted.
                unsafe {
                    gpu_kernels::merge::set_walk::<_, gpu_kernels::merge::Ascending, _, _>(
                        op, a.as_ptr(), a.len(), b.as_ptr(), b.len(),
                        |from_b, i| walked.push(if from_b { Source::B(i) } else { Source::A(i) }),
                    )
                };
                prop_assert_eq!(walked, set_sources(op, &a, &b), "{:?}", op);
            }
        }
    }
}
