//! Set operations on sorted multisets (issue 12), the pieces written so far: the operations, the
//! serial walk of C++'s `std::set_*` algorithms over any key memory, and the **balanced split**
//! that lets independent pieces of the inputs be walked separately (by blocks and by threads)
//! with exactly the walk over the whole. The kernels (count per tile, scan, write) are next.
//!
//! Why merge path's split is not enough: the walk pairs the `r`-th copy of a key in A with its
//! `r`-th copy in B and consumes both together, but the stable merge puts all of A's copies of a
//! key before all of B's, so a merge-path split inside a run of equal keys can leave a pair's A
//! copy on one side and its B copy on the other. A balanced split moves such a split, inside the
//! run, to a state the walk can reach: as many copies of the key from A as from B while both
//! have some (then pairs stay whole), and only then the longer run's excess. Where that needs one
//! more element than the diagonal (an odd count inside the paired part), the split takes it, and
//! the piece after starts one later (the "star" of Baxter's balanced path in ModernGPU, derived
//! here from the walk).

use super::keys::{KeyReader, MergeKey};
use super::order::KeyOrder;
use super::sequential::co_rank_in;

/// A set operation on sorted multisets. For a key found `m` times in A and `n` times in B (its
/// runs), the output holds, as `std::set_*` do:
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SetOperation {
    /// all `m` from A, then the last `max(n − m, 0)` from B;
    Union,
    /// the first `min(m, n)` from A;
    Intersection,
    /// the last `max(m − n, 0)` from A;
    Difference,
    /// the last `m − n` from A if `m > n`, else the last `n − m` from B.
    SymmetricDifference,
}

impl SetOperation {
    /// Every operation.
    pub const ALL: [Self; 4] = [Self::Union, Self::Intersection, Self::Difference, Self::SymmetricDifference];

    /// Whether an element of A whose key B does not match is output.
    const fn keeps_unmatched_a(self) -> bool {
        !matches!(self, Self::Intersection)
    }

    /// Whether an element of B whose key A does not match is output.
    const fn keeps_unmatched_b(self) -> bool {
        matches!(self, Self::Union | Self::SymmetricDifference)
    }

    /// Whether a matched pair (equivalent keys, one from each input) outputs its A element.
    const fn keeps_pairs(self) -> bool {
        matches!(self, Self::Union | Self::Intersection)
    }
}

/// `std::set_*`'s walk over A's keys `0..m` and B's `0..n`, sorted in the order `O`: calls
/// `emit(from_b, index)` for each output element, in output order, and returns how many. On
/// equivalent keys the walk pairs A's and B's copies in order and consumes each pair at once.
///
/// # Safety
/// `a` holds `m` keys and `b` holds `n`, sorted in `O`, and no other thread writes them.
#[inline(always)]
pub unsafe fn set_walk<K, O, A, B>(
    operation: SetOperation,
    a: A,
    m: usize,
    b: B,
    n: usize,
    mut emit: impl FnMut(bool, usize),
) -> usize
where
    K: MergeKey,
    O: KeyOrder<K>,
    A: KeyReader<K>,
    B: KeyReader<K>,
{
    let (mut i, mut j, mut count) = (0, 0, 0);
    let mut out = |from_b: bool, index: usize| {
        emit(from_b, index);
        count += 1;
    };
    // SAFETY: every index is checked against its run's length right before the access.
    unsafe {
        while i < m && j < n {
            let (a_i, b_j) = (a.load(i), b.load(j));
            if O::before(a_i, b_j) {
                if operation.keeps_unmatched_a() {
                    out(false, i);
                }
                i += 1;
            } else if O::before(b_j, a_i) {
                if operation.keeps_unmatched_b() {
                    out(true, j);
                }
                j += 1;
            } else {
                if operation.keeps_pairs() {
                    out(false, i);
                }
                (i, j) = (i + 1, j + 1);
            }
        }
    }
    if operation.keeps_unmatched_a() {
        (i..m).for_each(|i| out(false, i));
    }
    if operation.keeps_unmatched_b() {
        (j..n).for_each(|j| out(true, j));
    }
    count
}

/// The first index in `lo..hi` of `run` whose key is not before `x` (`after == false`) or is
/// after `x` (`after == true`): the start or the end of `x`'s run, searched in `lo..hi`.
///
/// # Safety
/// `run` holds at least `hi` keys, sorted in `O`; `lo <= hi`.
#[inline(always)]
unsafe fn bound<K: MergeKey, O: KeyOrder<K>, R: KeyReader<K>>(
    run: R,
    lo: usize,
    hi: usize,
    x: K,
    after: bool,
) -> usize {
    let (mut lo, mut hi) = (lo, hi);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        // SAFETY: lo <= mid < hi, inside the run.
        let key = unsafe { run.load(mid) };
        let past = if after { O::before(x, key) } else { !O::before(key, x) };
        if past {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    lo
}

/// The balanced split at output diagonal `diag` of A (`m` keys) and B (`n` keys), sorted in `O`:
/// `(i, j)`, the walk's state after A's first `i` keys and B's first `j`, with `i + j` equal to
/// `diag` or, where the paired part of a run needs it, `diag + 1`. Splitting the inputs at the
/// balanced splits of increasing diagonals (the last at `(m, n)`) gives pieces whose walks,
/// concatenated, are the walk over the whole; and the splits never decrease.
///
/// It starts from merge path's co-rank; if that split falls inside a run of equivalent keys
/// (`t` of the run's elements before it), it moves within the run to as many of its A copies as
/// B copies, `⌈t / 2⌉` each, while both runs have them (the pairs the walk consumes together),
/// and past that to the shorter run's whole and the longer one's excess.
///
/// # Safety
/// `diag <= m + n`; `a` holds `m` keys and `b` holds `n`, sorted in `O`, and no other thread
/// writes them.
#[inline(always)]
pub unsafe fn balanced_split<K, O, A, B>(diag: usize, a: A, m: usize, b: B, n: usize) -> (usize, usize)
where
    K: MergeKey,
    O: KeyOrder<K>,
    A: KeyReader<K>,
    B: KeyReader<K>,
{
    // SAFETY: every index below is checked against its run's length, or bounded by a search
    // inside it; per the caller for the rest.
    unsafe {
        let i = co_rank_in::<K, O, _, _, usize>(diag, a, m, b, n);
        let j = diag - i;
        // The key after the split, in the merge's order: A's next unless B's goes before it.
        let x = match (i < m, j < n) {
            (true, true) if O::before(b.load(j), a.load(i)) => b.load(j),
            (true, _) => a.load(i),
            (false, true) => b.load(j),
            (false, false) => return (i, j),
        };
        // The run of `x` in each input: A's copies before B's in the merge, so a split inside A's
        // copies has none of B's before it.
        let (a_start, b_start) = (bound::<K, O, _>(a, 0, i, x, false), bound::<K, O, _>(b, 0, j, x, false));
        let (a_end, b_end) = (bound::<K, O, _>(a, i, m, x, true), bound::<K, O, _>(b, j, n, x, true));
        let (copies_a, copies_b) = (a_end - a_start, b_end - b_start);
        let before = (i - a_start) + (j - b_start);
        let pairs = copies_a.min(copies_b);
        let (p, q) = if before <= 2 * pairs {
            (before.div_ceil(2), before.div_ceil(2))
        } else if copies_a > copies_b {
            (before - copies_b, copies_b)
        } else {
            (copies_a, before - copies_a)
        };
        (a_start + p, b_start + q)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::merge::Ascending;
    use proptest::prelude::*;

    /// The walk's outputs over `a` and `b` as `(from_b, index)`.
    fn walk(operation: SetOperation, a: &[i32], b: &[i32]) -> Vec<(bool, usize)> {
        let mut out = Vec::new();
        // SAFETY: slices of their lengths.
        let count = unsafe {
            set_walk::<_, Ascending, _, _>(
                operation,
                a.as_ptr(),
                a.len(),
                b.as_ptr(),
                b.len(),
                |from_b, index| out.push((from_b, index)),
            )
        };
        assert_eq!(count, out.len());
        out
    }

    #[test]
    fn the_walk_follows_the_standard_librarys_examples() {
        // cppreference's std::set_* examples, multisets included.
        let (a, b) = ([1, 2, 3, 4, 5, 5, 5], [3, 4, 5, 6, 7]);
        let keys = |op| -> Vec<i32> {
            walk(op, &a, &b).into_iter().map(|(from_b, i)| if from_b { b[i] } else { a[i] }).collect()
        };
        assert_eq!(keys(SetOperation::Union), [1, 2, 3, 4, 5, 5, 5, 6, 7]);
        assert_eq!(keys(SetOperation::Intersection), [3, 4, 5]);
        assert_eq!(keys(SetOperation::Difference), [1, 2, 5, 5]);
        assert_eq!(keys(SetOperation::SymmetricDifference), [1, 2, 5, 5, 6, 7]);
        assert_eq!(walk(SetOperation::Union, &[5], &[5, 5, 5]), [(false, 0), (true, 1), (true, 2)]);
    }

    /// The balanced splits of `a` and `b` at diagonals `0, piece, 2 piece, …`, and `(m, n)` last.
    fn splits(a: &[i32], b: &[i32], piece: usize) -> Vec<(usize, usize)> {
        let total = a.len() + b.len();
        let mut out: Vec<(usize, usize)> = (0..total)
            .step_by(piece)
            // SAFETY: diag < m + n; slices of their lengths.
            .map(|diag| unsafe {
                balanced_split::<_, Ascending, _, _>(diag, a.as_ptr(), a.len(), b.as_ptr(), b.len())
            })
            .collect();
        out.push((a.len(), b.len()));
        out
    }

    fn sorted(max_len: usize) -> impl Strategy<Value = Vec<i32>> {
        (1i32..6, proptest::collection::vec(0i32..1000, 0..max_len)).prop_map(|(range, mut v)| {
            v.iter_mut().for_each(|k| *k %= range);
            v.sort_unstable();
            v
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        /// The walks of the pieces between balanced splits, concatenated, are the walk over
        /// the whole, for every operation and piece size; the splits never decrease, and each
        /// is its diagonal or one past it.
        #[test]
        fn pieces_between_balanced_splits_walk_as_the_whole(a in sorted(60), b in sorted(60), piece in 1usize..9) {
            let splits = splits(&a, &b, piece);
            for (s, w) in splits.windows(2).enumerate() {
                let ((i0, j0), (i1, j1)) = (w[0], w[1]);
                prop_assert!(i0 <= i1 && j0 <= j1, "splits {:?} then {:?}", w[0], w[1]);
                if s + 1 < splits.len() - 1 {
                    let diag = (s + 1) * piece;
                    prop_assert!(i1 + j1 == diag || i1 + j1 == diag + 1, "split {:?} at diagonal {}", w[1], diag);
                }
            }
            for op in SetOperation::ALL {
                let whole = walk(op, &a, &b);
                let mut pieces = Vec::new();
                for w in splits.windows(2) {
                    let ((i0, j0), (i1, j1)) = (w[0], w[1]);
                    let part = walk(op, &a[i0..i1], &b[j0..j1]);
                    pieces.extend(part.into_iter().map(|(from_b, k)| (from_b, k + if from_b { j0 } else { i0 })));
                }
                prop_assert_eq!(&pieces, &whole, "{:?}, pieces of {}", op, piece);
            }
        }
    }
}
