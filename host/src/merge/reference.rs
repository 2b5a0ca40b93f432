//! The CPU reference: the stable merge written out plainly, independent of the kernels' code.

use gpu_kernels::merge::{Ascending, KeyOrder, MergeKey};

/// The stable merge of sorted `a` and `b`: on equal keys, A's come first.
pub fn merge_reference<K: MergeKey>(a: &[K], b: &[K]) -> Vec<K> {
    merge_reference_in::<K, Ascending>(a, b)
}

/// [`merge_reference`] in the key order `O`: B's key goes first only when it is strictly
/// before A's.
pub fn merge_reference_in<K: MergeKey, O: KeyOrder<K>>(a: &[K], b: &[K]) -> Vec<K> {
    let mut out = Vec::with_capacity(a.len() + b.len());
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        if O::before(b[j], a[i]) {
            out.push(b[j]);
            j += 1;
        } else {
            out.push(a[i]);
            i += 1;
        }
    }
    out.extend_from_slice(&a[i..]);
    out.extend_from_slice(&b[j..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use gpu_kernels::testing::Tagged;
    use proptest::prelude::*;

    #[test]
    fn ties_take_a_first() {
        let out = merge_reference(&[-0.0f64, 1.0], &[0.0, 0.0, 1.0]);
        let bits: Vec<u64> = out.iter().map(|x| x.to_bits()).collect();
        assert_eq!(bits, [(-0.0f64).to_bits(), 0, 0, 1.0f64.to_bits(), 1.0f64.to_bits()]);
        assert_eq!(merge_reference::<i32>(&[], &[]), Vec::<i32>::new());
        assert_eq!(merge_reference(&[3], &[]), [3]);
    }

    proptest! {
        #[test]
        fn equals_a_stable_sort_of_a_then_b(
            mut a in proptest::collection::vec(0i32..8, 0..60),
            mut b in proptest::collection::vec(0i32..8, 0..60),
        ) {
            a.sort();
            b.sort();
            let a: Vec<Tagged> = a.iter().enumerate().map(|(i, &key)| Tagged { key: key.into(), tag: i as u64 }).collect();
            let b: Vec<Tagged> = b.iter().enumerate().map(|(j, &key)| Tagged { key: key.into(), tag: 1000 + j as u64 }).collect();
            // A stable sort by key of A followed by B is the stable merge.
            let mut expected = [a.clone(), b.clone()].concat();
            expected.sort_by_key(|t| t.key);
            let tags = |run: &[Tagged]| run.iter().map(|t| (t.key, t.tag)).collect::<Vec<_>>();
            prop_assert_eq!(tags(&merge_reference(&a, &b)), tags(&expected));
        }
    }
}
