//! Set operations on sorted multisets (issue 12), the pure logic of the kernels in `set_path.rs`:
//! the operations, the serial walk of C++'s `std::set_*` algorithms over any key memory, a
//! thread's walk in fixed steps and its record ([`WalkMasks`]), and the **balanced split** that
//! lets independent pieces of the inputs be walked separately (by blocks and by threads) with
//! exactly the walk over the whole.
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

use core::hint::select_unpredictable;

use super::keys::{KeyReader, MergeKey};
use super::order::KeyOrder;
use super::sequential::{RankIndex, co_rank_in};

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

/// What a thread's walk did, a bit per step: which steps keep their element, and which consume
/// a key of A or of B (a pair of equivalent keys consumes one of each, and keeps A's). Three
/// words say where every kept element is ([`for_each_kept`](Self::for_each_kept)), so a thread
/// holds neither its kept keys nor their positions until the block knows where they go.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WalkMasks {
    pub kept: u32,
    pub took_a: u32,
    pub took_b: u32,
}

impl WalkMasks {
    /// How many elements the walk keeps.
    #[inline(always)]
    pub fn count(self) -> u32 {
        self.kept.count_ones()
    }

    /// The walk with one more step: each word shifts down and takes the step's bit on top, so
    /// that a step's bits join their words at once. (Set by position instead, the bits are
    /// free to be gathered late, and the compiler keeps each step's bits in registers of their
    /// own until then.)
    #[inline(always)]
    fn then(self, keep: bool, took_a: bool, took_b: bool) -> Self {
        let on_top = |word: u32, bit: bool| word >> 1 | u32::from(bit) << 31;
        Self {
            kept: on_top(self.kept, keep),
            took_a: on_top(self.took_a, took_a),
            took_b: on_top(self.took_b, took_b),
        }
    }

    /// After `STEPS` steps of [`then`](Self::then): step `k`'s bits at bit `k`.
    #[inline(always)]
    fn settle<const STEPS: usize>(self) -> Self {
        let down = |word: u32| word >> (32 - STEPS);
        Self { kept: down(self.kept), took_a: down(self.took_a), took_b: down(self.took_b) }
    }

    /// Replays a walk of `STEPS` steps that started at A's index `i` and B's `j`: calls
    /// `emit(q, from_b, index)` for its `q`-th kept element, A's `index` unless `from_b`.
    #[inline(always)]
    pub fn for_each_kept<const STEPS: usize>(
        self,
        (mut i, mut j): (u32, u32),
        mut emit: impl FnMut(u32, bool, u32),
    ) {
        let mut q = 0;
        for k in 0..STEPS {
            let from_a = self.took_a >> k & 1;
            if self.kept >> k & 1 != 0 {
                emit(q, from_a == 0, if from_a != 0 { i } else { j });
                q += 1;
            }
            i += from_a;
            j += self.took_b >> k & 1;
        }
    }
}

/// One thread's piece of the walk, A's keys `i..i_end` and B's `j..j_end`, in exactly `STEPS`
/// steps without a branch on the keys: each step consumes A's key alone, B's alone or a pair,
/// and keeps its element or not; steps after the piece is used up do nothing. A piece between
/// balanced splits `ITEMS` diagonals apart takes at most `ITEMS + 1` steps (each step consumes
/// one key, or a pair). Returns what each step did.
///
/// The keys at `i_end` and `j_end` are read (and not used) once a run is used up: the kernel's
/// tiles have end marks there.
///
/// # Safety
/// `a` holds keys `i..=i_end` and `b` holds `j..=j_end`, sorted in `O`, with `i <= i_end` and
/// `j <= j_end`; no other thread writes them.
#[inline(always)]
pub unsafe fn set_walk_steps<K, O, A, B, I, const STEPS: usize>(
    operation: SetOperation,
    a: A,
    (mut i, i_end): (I, I),
    b: B,
    (mut j, j_end): (I, I),
) -> WalkMasks
where
    K: MergeKey,
    O: KeyOrder<K>,
    A: KeyReader<K>,
    B: KeyReader<K>,
    I: RankIndex,
{
    const { assert!(STEPS <= 32, "a walk has a bit per step") };
    let mut walk = WalkMasks::default();
    for _ in 0..STEPS {
        // SAFETY: i <= i_end and j <= j_end throughout (each grows only while below its end).
        let (a_key, b_key) = unsafe { (a.load(i.to_usize()), b.load(j.to_usize())) };
        let (a_live, b_live) = (i < i_end, j < j_end);
        let (a_first, b_first) = (O::before(a_key, b_key), O::before(b_key, a_key));
        // A's key alone, B's alone, or a pair of equivalent keys (consumed together).
        let take_a = a_live & (!b_live | a_first);
        let take_b = b_live & (!a_live | b_first);
        let pair = a_live & b_live & !a_first & !b_first;
        let keep = (take_a & operation.keeps_unmatched_a())
            | (take_b & operation.keeps_unmatched_b())
            | (pair & operation.keeps_pairs());
        walk = walk.then(keep, take_a | pair, take_b | pair);
        i = select_unpredictable(take_a | pair, i + I::ONE, i);
        j = select_unpredictable(take_b | pair, j + I::ONE, j);
    }
    walk.settle::<STEPS>()
}

/// The first index in `lo..hi` of `run` whose key is not before `x` (`after == false`) or is
/// after `x` (`after == true`), by binary search; `hi` if there is none.
///
/// # Safety
/// `run` holds at least `hi` keys, sorted in `O`; `lo <= hi`.
#[inline(always)]
unsafe fn bound<K: MergeKey, O: KeyOrder<K>, R: KeyReader<K>, I: RankIndex>(
    run: R,
    lo: I,
    hi: I,
    x: K,
    after: bool,
) -> I {
    let (mut lo, mut hi) = (lo, hi);
    while lo < hi {
        let mid = lo + (hi - lo).half();
        // SAFETY: lo <= mid < hi, inside the run.
        let key = unsafe { run.load(mid.to_usize()) };
        let past = if after { O::before(x, key) } else { !O::before(key, x) };
        if past {
            hi = mid;
        } else {
            lo = mid + I::ONE;
        }
    }
    lo
}

/// Where the run of keys equivalent to `x` starts in `run[..i]`, whose keys go no later than
/// `x`: galloping down from `i` (probes at `i − 1`, `i − 2`, `i − 4`, …), then a binary search
/// in the last step. Runs of equal keys are short in most inputs, so this costs a probe or two
/// where a search from 0 would cost `log₂ i`.
///
/// # Safety
/// `run` holds at least `i` keys, sorted in `O`.
#[inline(always)]
unsafe fn run_start<K: MergeKey, O: KeyOrder<K>, R: KeyReader<K>, I: RankIndex>(run: R, i: I, x: K) -> I {
    if i == I::ZERO {
        return I::ZERO;
    }
    // SAFETY: 0 < i: both probes are inside the run. The nearest key settles most runs, and the
    // first settles runs that reach the start (few unique keys: one run may span a whole tile);
    // the two loads go out together.
    unsafe {
        let (near, first) = (run.load(i.to_usize() - 1), run.load(0));
        if O::before(near, x) {
            return i;
        }
        if !O::before(first, x) {
            return I::ZERO;
        }
    }
    // Every key in `hi..i` is equivalent to `x`, and the first is not.
    let (mut hi, mut step) = (i - I::ONE, I::ONE + I::ONE);
    while hi > I::ZERO {
        let probe = hi.saturating_sub(step);
        // SAFETY: probe < hi <= i; the search stays in probe + 1 .. hi.
        unsafe {
            if O::before(run.load(probe.to_usize()), x) {
                return bound::<K, O, R, I>(run, probe + I::ONE, hi, x, false);
            }
        }
        (hi, step) = (probe, step + step);
    }
    I::ZERO
}

/// Where the run of keys equivalent to `x` ends in `run[i..len]`, whose keys go no earlier
/// than `x`: galloping up from `i`, as [`run_start`] down.
///
/// # Safety
/// `run` holds at least `len` keys, sorted in `O`; `i <= len`.
#[inline(always)]
unsafe fn run_end<K: MergeKey, O: KeyOrder<K>, R: KeyReader<K>, I: RankIndex>(
    run: R,
    i: I,
    len: I,
    x: K,
) -> I {
    if i == len {
        return len;
    }
    // SAFETY: i < len: both probes are inside the run; as in `run_start`, the nearest key and
    // the last are probed together.
    unsafe {
        let (near, last) = (run.load(i.to_usize()), run.load(len.to_usize() - 1));
        if O::before(x, near) {
            return i;
        }
        if !O::before(x, last) {
            return len;
        }
    }
    // Every key in `i..lo` is equivalent to `x`, and the last is not.
    let (mut lo, mut step) = (i + I::ONE, I::ONE + I::ONE);
    while lo < len {
        let probe = (lo + step - I::ONE).min(len - I::ONE);
        // SAFETY: lo <= probe < len; the search stays in lo .. probe.
        unsafe {
            if O::before(x, run.load(probe.to_usize())) {
                return bound::<K, O, R, I>(run, lo, probe, x, true);
            }
        }
        (lo, step) = (probe + I::ONE, step + step);
    }
    len
}

/// The balanced split at output diagonal `diag` of A (`m` keys) and B (`n` keys), sorted in `O`:
/// `(i, j)`, the walk's state after A's first `i` keys and B's first `j`, with `i + j` equal to
/// `diag` or, where the paired part of a run needs it, `diag + 1`. Splitting the inputs at the
/// balanced splits of increasing diagonals (the last at `(m, n)`) gives pieces whose walks,
/// concatenated, are the walk over the whole; and the splits never decrease. Indices are `I`:
/// `usize` over whole arrays, `u32` inside a tile.
///
/// It starts from merge path's co-rank; if that split falls inside a run of equivalent keys
/// (`t` of the run's elements before it), it moves within the run to as many of its A copies as
/// B copies, `⌈t / 2⌉` each, while both runs have them (the pairs the walk consumes together),
/// and past that to the shorter run's whole and the longer one's excess. The runs' ends are
/// found by galloping from the split (`run_start`, `run_end`).
///
/// # Safety
/// `diag <= m + n`; `a` holds `m` keys and `b` holds `n`, sorted in `O`, and no other thread
/// writes them.
#[inline(always)]
pub unsafe fn balanced_split<K, O, A, B, I>(diag: I, a: A, m: I, b: B, n: I) -> (I, I)
where
    K: MergeKey,
    O: KeyOrder<K>,
    A: KeyReader<K>,
    B: KeyReader<K>,
    I: RankIndex,
{
    // SAFETY: every index below is checked against its run's length, or bounded by a search
    // inside it; per the caller for the rest.
    unsafe {
        let i = co_rank_in::<K, O, _, _, I>(diag, a, m, b, n);
        let j = diag - i;
        // The key after the split, in the merge's order: A's next unless B's goes before it.
        let x = match (i < m, j < n) {
            (true, true) if O::before(b.load(j.to_usize()), a.load(i.to_usize())) => b.load(j.to_usize()),
            (true, _) => a.load(i.to_usize()),
            (false, true) => b.load(j.to_usize()),
            (false, false) => return (i, j),
        };
        // The run of `x` in each input: A's copies before B's in the merge, so a split inside A's
        // copies has none of B's before it.
        let (a_start, b_start) = (run_start::<K, O, _, I>(a, i, x), run_start::<K, O, _, I>(b, j, x));
        let (a_end, b_end) = (run_end::<K, O, _, I>(a, i, m, x), run_end::<K, O, _, I>(b, j, n, x));
        let (copies_a, copies_b) = (a_end - a_start, b_end - b_start);
        let before = (i - a_start) + (j - b_start);
        let pairs = copies_a.min(copies_b);
        let (p, q) = if before <= pairs + pairs {
            let half = (before + I::ONE).half();
            (half, half)
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
                balanced_split::<_, Ascending, _, _, usize>(diag, a.as_ptr(), a.len(), b.as_ptr(), b.len())
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

    /// The stepped walks of the pieces between balanced splits `piece` diagonals apart (in
    /// `u32` indices), with an end mark after each input, concatenated.
    fn stepped_walk<const STEPS: usize>(
        op: SetOperation,
        a: &[i32],
        b: &[i32],
        piece: usize,
    ) -> Vec<(bool, usize)> {
        let marked = |keys: &[i32]| keys.iter().copied().chain([i32::MAX]).collect::<Vec<_>>();
        let (a_marked, b_marked) = (marked(a), marked(b));
        let (m, n) = (a.len() as u32, b.len() as u32);
        let split = |diag: usize| {
            // SAFETY: diag <= m + n; slices of their lengths.
            unsafe { balanced_split::<_, Ascending, _, _, u32>(diag as u32, a.as_ptr(), m, b.as_ptr(), n) }
        };
        let mut out = Vec::new();
        for start in (0..a.len() + b.len()).step_by(piece) {
            let ((i, j), (i_end, j_end)) = (split(start), split((start + piece).min(a.len() + b.len())));
            // SAFETY: the marked inputs hold keys up to and including each end.
            let walk = unsafe {
                set_walk_steps::<_, Ascending, _, _, u32, STEPS>(
                    op,
                    a_marked.as_ptr(),
                    (i, i_end),
                    b_marked.as_ptr(),
                    (j, j_end),
                )
            };
            assert_eq!(walk.took_a.count_ones(), i_end - i, "every key of A's piece consumed");
            assert_eq!(walk.took_b.count_ones(), j_end - j, "every key of B's piece consumed");
            let mut kept = 0;
            walk.for_each_kept::<STEPS>((i, j), |q, from_b, index| {
                assert_eq!(q, kept, "kept elements in order");
                out.push((from_b, index as usize));
                kept += 1;
            });
            assert_eq!(walk.count(), kept);
        }
        out
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

        /// Pieces of `ITEMS` diagonals walked in `ITEMS + 1` fixed steps (the kernel's threads)
        /// are the whole walk; `u32` splits equal `usize` ones.
        #[test]
        fn stepped_walks_of_pieces_are_the_whole_walk(a in sorted(60), b in sorted(60)) {
            for op in SetOperation::ALL {
                prop_assert_eq!(stepped_walk::<4>(op, &a, &b, 3), walk(op, &a, &b), "{:?}", op);
                prop_assert_eq!(stepped_walk::<8>(op, &a, &b, 7), walk(op, &a, &b), "{:?}", op);
            }
            let wide = splits(&a, &b, 5);
            let (m, n) = (a.len() as u32, b.len() as u32);
            for (s, &(i, j)) in wide.iter().enumerate().take(wide.len() - 1) {
                // SAFETY: diag <= m + n; slices of their lengths.
                let narrow = unsafe {
                    balanced_split::<_, Ascending, _, _, u32>((5 * s) as u32, a.as_ptr(), m, b.as_ptr(), n)
                };
                prop_assert_eq!(narrow, (i as u32, j as u32));
            }
        }
    }
}
