//! Beyond the book: the partition's co-rank where one run's keys are all ties. With few
//! distinct keys (16 values, say, each millions of keys long in both runs) most tile starts fall
//! inside a run of equivalent keys, and the co-rank search between the samples' bounds
//! ([`co_rank_bounds_from_samples`](super::co_rank_bounds_from_samples)) spends its
//! `log2(2S)` dependent probes on keys that all compare the same: one run's probes answer
//! nothing, the other's fall at positions no other tile probes, and each is an L2 sector and a
//! DRAM read of its own (on an H200, `ncu`, `i32` 2^27 + 2^27 few-unique: 529 k L2 sectors and
//! 29.0 MB of DRAM reads for the partition, docs/merge-h200.md).
//!
//! Where the samples either side of one run's probes are equivalent, every key between them is
//! (the runs are sorted), and the co-rank is set by the other run alone: by where that key's
//! ties begin there (for A's ties `v`: B's keys before `v`) or end (for B's ties `w`: A's keys
//! no later than `w`), clamped to the bounds. That edge is the same for every tile start inside
//! the ties, and [`climb_aligned`] probes only positions that the answer sets alone, so the
//! searches of all those tiles probe the same keys: the first tile's probes reach DRAM, the
//! others' hit in the caches. The result is the co-rank exactly, whatever the keys.
//!
//! Measured (docs/merge-h200.md, 2026-12-04): the partition above reads 247 KB from DRAM in
//! 29.5 k L2 sectors, yet takes no less time (25 µs under `ncu`): at 0.37 waves it is bound by
//! the latency of its dependent loads, and the test adds one (four samples). The merge as a
//! whole is 1.0 % faster at `i32` 2^27 + 2^27 few-unique (our reading: the partition no longer
//! takes DRAM from the merge's lead blocks running beside it), within 0.3 % on `f64` few-unique,
//! all-equal and uniform keys, and 0.7 % (`f64`) to 1.3 % (`i32`) slower at 2^24 + 2^24
//! few-unique, a partition of 25 blocks, where the extra load shows. The test's divisions by the
//! stride, on that chain, became shifts ([`SampleStride`](super::SampleStride)): the partition
//! there went from 16.7 to 15.3 µs (`i32`; `f64` 19.2 to 17.3), the merge 0.6 % (`i32`) and
//! 0.1 % (`f64`) faster.

use super::keys::{KeyReader, MergeKey};
use super::order::KeyOrder;
use super::samples::PartitionSamples;
use super::sequential::highest_bit;

/// The last `x` of `[low, high]` that `reaches` (which holds at `low` without a probe, then up
/// to some point and not after), by probing the position of `(low, high]` with the most
/// trailing zeros and keeping the half that holds the answer. That position is the answer
/// rounded down to a multiple of `2s`, plus `s`, for some power of two `s`: a probe depends on
/// the answer alone, so searches whose intervals differ but whose answer is the same probe the
/// same keys (those inside their own interval). Every step probes: the highest bit where `low`
/// and `high` differ falls with each, so there are at most `log2(high - low) + 2` steps,
/// however the interval sits against the powers of two.
#[inline(always)]
pub fn climb_aligned(mut low: usize, mut high: usize, mut reaches: impl FnMut(usize) -> bool) -> usize {
    while low < high {
        // `high` with its bits below the highest one that differs from `low` cleared.
        let peak = high & !(highest_bit(low ^ high) - 1);
        if reaches(peak) {
            low = peak;
        } else {
            high = peak - 1;
        }
    }
    low
}

/// The co-rank of `k` when it lies in `[low, high]` (the samples' bounds) and one
/// run's keys that its search would probe (A's `low .. high`, B's `k - high .. k - low`) lie
/// between two equivalent samples of that run; `None` when neither run's do.
///
/// # Safety
/// `samples` are those of `a` (`m` keys) and `b` (`n` keys), sorted in the order `O`; the
/// co-rank of `k` is in `[low, high]`, with `high <= m` and `k - low <= n`.
#[inline(always)]
pub unsafe fn co_rank_across_ties<K, O, A, B, SA, SB>(
    k: usize,
    (low, high): (usize, usize),
    (a, m, b, n): (A, usize, B, usize),
    samples: PartitionSamples<SA, SB>,
) -> Option<usize>
where
    K: MergeKey,
    O: KeyOrder<K>,
    A: KeyReader<K>,
    B: KeyReader<K>,
    SA: KeyReader<K>,
    SB: KeyReader<K>,
{
    if low == high {
        return Some(low);
    }
    let stride = samples.stride;
    // A's sample `c` is key `(c + 1)·S - 1`: the last at or before `low`, the first at or after
    // `high - 1`. B's sample `d` is key `d·S`: the last at or before `k - high`, the first at or
    // after `k - low - 1`.
    let (a_first, a_last) = (stride.div(low + 1).wrapping_sub(1), stride.div_ceil(high) - 1);
    let (b_first, b_last) = (stride.div(k - high), stride.div_ceil(k - low - 1));
    let (a_count, b_count) = stride.counts(m, n);
    let a_sampled = a_first <= a_last && a_last < a_count;
    let b_sampled = b_last < b_count;
    // All four loads before any test, so that they overlap.
    // SAFETY: per the caller; every index read is a copied sample.
    let (a_low, a_high) = if a_sampled {
        unsafe { (samples.a_ends.load(a_first), samples.a_ends.load(a_last)) }
    } else {
        (O::LAST, O::LAST)
    };
    let (b_low, b_high) = if b_sampled {
        unsafe { (samples.b_starts.load(b_first), samples.b_starts.load(b_last)) }
    } else {
        (O::LAST, O::LAST)
    };
    // SAFETY (both climbs): a probe `y` is in `(k - high, k - low]`, so B's key `y - 1` is in
    // `[0, n)`; a probe `x` is in `(low, high]`, so A's key `x - 1` is in `[0, m)`.
    if a_sampled && !O::before(a_low, a_high) {
        // A's probes all read `v = a_low`: the co-rank reaches `x` while B's key at `k - x` is
        // not before `v`, so `k - co-rank` is B's count of keys before `v`, clamped.
        let b_taken = climb_aligned(k - high, k - low, |y| O::before(unsafe { b.load(y - 1) }, a_low));
        return Some(k - b_taken);
    }
    if b_sampled && !O::before(b_low, b_high) {
        // B's probes all read `w = b_low`: the co-rank reaches `x` while A's key at `x - 1`
        // goes no later than `w`, so it is A's count of keys no later than `w`, clamped.
        return Some(climb_aligned(low, high, |x| O::no_later(unsafe { a.load(x - 1) }, b_low)));
    }
    None
}
