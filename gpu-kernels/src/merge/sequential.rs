//! PMPP 12.3 and 12.4: the sequential merge and the co-rank function, the two pieces every
//! merge kernel is built from. Both are generic over where the keys live (see
//! [`keys`](super::keys)), so the GPU runs them on global and shared memory and the host tests
//! run the very same code on slices.
//!
//! The merge is stable: on equal keys, the element of A comes first. `co_rank` uses the
//! matching tie rule, so that splitting an output at any rank and merging the two parts
//! separately gives exactly the stable merge.

use core::ops::{Add, Sub};

use super::keys::{KeyReader, KeyWriter, MergeKey};
use super::order::{Ascending, KeyOrder};

/// PMPP Fig. 12.2, `merge_sequential`: merges the sorted runs `a` (`m` keys) and `b` (`n`
/// keys) into `c` (`m + n` keys), taking A's key first when two keys are equal.
///
/// # Safety
/// `a` holds `m` keys, `b` holds `n` keys and `c` has room for `m + n`; no other thread
/// writes those keys of `a` and `b`, or accesses those of `c`, concurrently.
#[inline(always)]
pub unsafe fn merge_sequential_by<K, A, B, C>(a: A, m: usize, b: B, n: usize, c: C)
where
    K: MergeKey,
    A: KeyReader<K>,
    B: KeyReader<K>,
    C: KeyWriter<K>,
{
    let (mut i, mut j, mut k) = (0, 0, 0);
    // SAFETY: every index is checked against its run's length right before the access
    // (`i < m`, `j < n`), and `k = i + j < m + n`.
    unsafe {
        while i < m && j < n {
            let (a_i, b_j) = (a.load(i), b.load(j));
            if a_i <= b_j {
                c.store(k, a_i);
                i += 1;
            } else {
                c.store(k, b_j);
                j += 1;
            }
            k += 1;
        }
        while i < m {
            c.store(k, a.load(i));
            i += 1;
            k += 1;
        }
        while j < n {
            c.store(k, b.load(j));
            j += 1;
            k += 1;
        }
    }
}

/// An index the co-rank search counts in: `usize` over whole arrays (which may pass 2^32
/// keys), `u32` inside a tile in shared memory, where 32-bit arithmetic takes half the
/// instructions of 64-bit on the GPU.
pub trait RankIndex: Copy + Ord + Add<Output = Self> + Sub<Output = Self> {
    const ZERO: Self;
    const ONE: Self;
    /// `self / 2`.
    fn half(self) -> Self;
    /// `max(self - other, 0)`.
    fn saturating_sub(self, other: Self) -> Self;
    /// The index as a `usize`, to address keys.
    fn to_usize(self) -> usize;
}

macro_rules! rank_index {
    ($($t:ty),*) => {$(
        impl RankIndex for $t {
            const ZERO: Self = 0;
            const ONE: Self = 1;
            #[inline(always)]
            fn half(self) -> Self {
                self / 2
            }
            #[inline(always)]
            fn saturating_sub(self, other: Self) -> Self {
                <$t>::saturating_sub(self, other)
            }
            #[inline(always)]
            fn to_usize(self) -> usize {
                self as usize
            }
        }
    )*};
}

rank_index!(usize, u32);

/// PMPP Fig. 12.5, `co_rank`: how many of the first `k` keys of the stable merge of `a` (`m`
/// keys) and `b` (`n` keys) come from A. The rest, `j = k - i`, come from B.
///
/// The result `i` is the one index with `A[i-1] <= B[j]` and `B[j-1] < A[i]` (a term whose
/// index is out of range counts as satisfied): on equal keys A's element is first.
///
/// The book moves `i` down and `j` up (or the reverse) by half the remaining interval each
/// step. This is the same binary search written over `i` alone, as a lower bound: `i` lies in
/// `[i_low, i_high] = [max(0, k-n), min(k, m)]`, and the first `i` of that interval for which
/// `A[i] > B[k-1-i]` (B's key precedes A's in the output) is the co-rank. Every step reads one
/// key of each array; the midpoint `i_low + (i_high - i_low) / 2` cannot overflow.
///
/// # Safety
/// `k <= m + n`; `a` holds `m` keys and `b` holds `n`, sorted ascending, and no other thread
/// writes them concurrently.
#[inline(always)]
pub unsafe fn co_rank_by<K, A, B, I>(k: I, a: A, m: I, b: B, n: I) -> I
where
    K: MergeKey,
    A: KeyReader<K>,
    B: KeyReader<K>,
    I: RankIndex,
{
    // SAFETY: per the caller.
    unsafe { co_rank_in::<K, Ascending, A, B, I>(k, a, m, b, n) }
}

/// [`co_rank_by`] in the key order `O` ([`KeyOrder`]): A's key goes first unless B's goes
/// strictly before it.
///
/// # Safety
/// As [`co_rank_by`], with `a` and `b` sorted in the order `O`.
#[inline(always)]
pub unsafe fn co_rank_in<K, O, A, B, I>(k: I, a: A, m: I, b: B, n: I) -> I
where
    K: MergeKey,
    O: KeyOrder<K>,
    A: KeyReader<K>,
    B: KeyReader<K>,
    I: RankIndex,
{
    let mut i_low = k.saturating_sub(n);
    let mut i_high = k.min(m);
    while i_low < i_high {
        let i = i_low + (i_high - i_low).half();
        // i_low <= i < i_high <= min(k, m), so i < m and k - 1 - i >= 0; and i >= i_low >=
        // k - n gives j = k - 1 - i <= n - 1.
        let j = k - I::ONE - i;
        // SAFETY: i < m and j < n, shown above.
        if O::after(unsafe { a.load(i.to_usize()) }, unsafe { b.load(j.to_usize()) }) {
            i_high = i;
        } else {
            i_low = i + I::ONE;
        }
    }
    i_low
}

/// [`co_rank_in`] for a search in global memory whose probes of A many searches share: the
/// co-rank's bits from the highest down, as `i = i + 2^bit` whenever the co-rank is at least that
/// (`A[i + 2^bit - 1]` goes no later than `B[k - i - 2^bit]`). A's probes then fall on
/// positions `c·2^bit - 1` whatever `k` is, so the searches of every tile of a merge read the same
/// few keys of A at their first levels (one line, then two, ...), which L1 and L2 serve after the
/// first search, and DRAM serves only their deep levels and B's probes. Probes outside `[max(0,
/// k - n), min(k, m)]` are answered without a load.
///
/// # Safety
/// As [`co_rank_in`].
#[inline(always)]
pub unsafe fn co_rank_shared_probes<K, O, A, B>(k: usize, a: A, m: usize, b: B, n: usize) -> usize
where
    K: MergeKey,
    O: KeyOrder<K>,
    A: KeyReader<K>,
    B: KeyReader<K>,
{
    // The co-rank is at most `min(k, m)`, so its bits above that bound's highest are zero.
    // SAFETY: per the caller, the co-rank is in [max(0, k - n), min(k, m)].
    unsafe { climb_to_co_rank::<K, O, A, B>(k, a, b, 0, (k.saturating_sub(n), k.min(m))) }
}

/// [`co_rank_in`] when the co-rank is known to lie in `[i_low, i_high]`, an interval inside
/// `[max(0, k - n), min(k, m)]` (from the co-ranks of two ranks either side of `k`: the co-rank
/// grows with the rank). The bits of the co-rank's distance from `i_low`, from the highest, as
/// in [`co_rank_shared_probes`]: `⌊log2(i_high - i_low)⌋ + 1` probes, none when the interval is
/// one index. (Measured on an H200 against probes at `co_rank_shared_probes`'s aligned
/// positions, which neighbouring searches would share: those were 1–4 % slower on the whole
/// merge, docs/merge-h200.md.)
///
/// # Safety
/// As [`co_rank_in`], and the co-rank of `k` is in `[i_low, i_high]`, with `i_high <= m` and
/// `k - i_low <= n`.
#[inline(always)]
pub unsafe fn co_rank_between<K, O, A, B>(k: usize, a: A, b: B, i_low: usize, i_high: usize) -> usize
where
    K: MergeKey,
    O: KeyOrder<K>,
    A: KeyReader<K>,
    B: KeyReader<K>,
{
    // SAFETY: per the caller.
    unsafe { climb_to_co_rank::<K, O, A, B>(k, a, b, i_low, (i_low, i_high)) }
}

/// Bounds `[i_low, i_high]` on the co-rank of `k` (for [`co_rank_between`]) from `low`, the
/// co-rank of `low_k`, and `high`, that of `high_k`, two ranks either side (`low_k <= k <=
/// high_k`). Both co-ranks grow with the rank, A's (`low <= i <= high`) and B's (`low_k - low
/// <= k - i <= high_k - high`), so the interval is no wider than the narrower of the two runs'
/// spans between the ranks: on a lopsided merge, the short run's few keys rather than about
/// `high_k - low_k` of the long one. (It is the co-rank's own bounds, `[max(0, k - n), min(k,
/// m)]`, in the merge of the two runs' spans.)
#[inline(always)]
pub fn co_rank_bounds_between(
    (low_k, low): (usize, usize),
    (high_k, high): (usize, usize),
    k: usize,
) -> (usize, usize) {
    (low.max(k.saturating_sub(high_k - high)), high.min(k - (low_k - low)))
}

/// The search of [`co_rank_shared_probes`] and [`co_rank_between`]: [`climb`] from `start`,
/// which the co-rank is at least, with the co-rank's test ([`co_rank_reaches`]).
///
/// # Safety
/// As [`co_rank_in`]; the co-rank of `k` is in `[max(start, i_low), i_high]`, with `i_high <=
/// m` and `k - i_low <= n`.
#[inline(always)]
pub(super) unsafe fn climb_to_co_rank<K, O, A, B>(
    k: usize,
    a: A,
    b: B,
    start: usize,
    (i_low, i_high): (usize, usize),
) -> usize
where
    K: MergeKey,
    O: KeyOrder<K>,
    A: KeyReader<K>,
    B: KeyReader<K>,
{
    let step = if i_high == start { 0 } else { highest_bit(i_high - start) };
    // SAFETY: a probe `next` has i_low < next <= i_high, so next - 1 < m and k - next < k -
    // i_low <= n.
    climb(start, step, (i_low, i_high), |next| unsafe { co_rank_reaches::<K, O, A, B>(k, a, b, next) })
}

/// The last `x` of `[low, high]` that `reaches` (which holds up to some point and not after),
/// from `start <= low` by steps `step`, `step / 2`, ... 1 (`start + 2·step > high`): as `x = x +
/// step` whenever `x + step` reaches. A step to `next` is answered without a probe when `next` is
/// at most `low` (yes) or past `high` (no), so `reaches` is called only inside `(low, high]`.
#[inline(always)]
fn climb(
    start: usize,
    mut step: usize,
    (low, high): (usize, usize),
    mut reaches: impl FnMut(usize) -> bool,
) -> usize {
    let mut x = start;
    while step > 0 {
        let next = x + step;
        if next <= low || (next <= high && reaches(next)) {
            x = next;
        }
        step /= 2;
    }
    x
}

/// Whether the co-rank of `k` is at least `x` (`0 < x`, `x <= m`, `k - x < n`): A's key
/// before position `x` goes no later than B's key at `k - x`.
///
/// # Safety
/// `a` and `b` hold at least `x` and `k - x + 1` keys.
#[inline(always)]
pub unsafe fn co_rank_reaches<K: MergeKey, O: KeyOrder<K>, A: KeyReader<K>, B: KeyReader<K>>(
    k: usize,
    a: A,
    b: B,
    x: usize,
) -> bool {
    // SAFETY: per the caller.
    !O::after(unsafe { a.load(x - 1) }, unsafe { b.load(k - x) })
}

/// The highest set bit of `x > 0`, as a number (`2^⌊log2 x⌋`).
#[inline(always)]
pub(super) fn highest_bit(x: usize) -> usize {
    1usize << (usize::BITS - 1 - x.leading_zeros())
}

/// [`co_rank_by`] on slices: how many of the first `k` keys of the stable merge of `a` and
/// `b` come from `a`.
///
/// # Panics
/// When `k > a.len() + b.len()`.
pub fn co_rank<K: MergeKey>(k: usize, a: &[K], b: &[K]) -> usize {
    assert!(k <= a.len() + b.len(), "co_rank: rank {k} is past the {} keys of A and B", a.len() + b.len());
    // SAFETY: the slices hold `len` keys each and `k` is in range (checked above).
    unsafe { co_rank_by(k, a.as_ptr(), a.len(), b.as_ptr(), b.len()) }
}

/// [`merge_sequential_by`] on slices: `c = merge(a, b)`, stable (A first on ties).
///
/// # Panics
/// When `c.len() != a.len() + b.len()`.
pub fn merge_sequential<K: MergeKey>(a: &[K], b: &[K], c: &mut [K]) {
    assert_eq!(
        c.len(),
        a.len() + b.len(),
        "merge_sequential: the output must hold exactly the keys of A and B"
    );
    // SAFETY: the slices hold their lengths in keys, `c` has room for both, and a `&mut`
    // output cannot overlap the inputs.
    unsafe { merge_sequential_by(a.as_ptr(), a.len(), b.as_ptr(), b.len(), c.as_mut_ptr()) }
}
