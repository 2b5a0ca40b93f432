//! Beyond the book: the co-rank found by interpolation search (Peterson 1957; Perl, Itai & Avni,
//! "Interpolation search — a log log N search", 1978), kept safe by bisection. The book's co-rank
//! halves its interval at every probe: about 20 dependent loads for a run of 2^20 keys, each a
//! DRAM access on a large merge, and on an H200 the partition of a large merge is bound by
//! those loads (docs/merge-h200.md). The co-rank of `k` is where `h(x) = A[x - 1] - B[k - x]`
//! turns from `<= 0` to `> 0`, and `h` grows with `x`; where the keys are spread smoothly,
//! probing where a straight line through what is known of `h` crosses zero lands a few keys
//! from the co-rank, and on uniform keys the search ends in about 5 probes instead of 20 to 27.
//!
//! Interpolation only chooses where to probe; each probe decides the interval exactly as a
//! bisection step does (`O::after`), so the result is the co-rank whatever the keys. Once
//! probes have fallen on both sides, regula falsi's weakness (one end stays put while the
//! other creeps up on the co-rank) is met by the Illinois rule (Dowell & Jarratt, 1971): the
//! stale end's `h` is halved each time the same end moves again. Three rules bound the cost
//! where the keys are not smooth: a probe halves the interval whenever the interval has not
//! halved in [`NEWTON_PATIENCE`] probes ([`BRACKETED_PATIENCE`] once bracketed); after
//! [`interpolated_probes`] probes, two thirds of bisection's, every probe bisects; and the
//! first probe that meets equivalent keys, whose positions say nothing, hands the rest to the
//! bisection of `climb_to_co_rank`, whose probes many searches share.

use super::keys::{KeyReader, MergeKey};
use super::order::KeyOrder;
use super::sequential::highest_bit;
use super::tiles::PARTITION_MIN_INTERPOLATED;

/// The probes a search of an interval `width` wide may guess before bisection takes over for
/// good: two thirds of the bits of `width`, bisection's probes, so that a search never takes
/// much more than 5/3 of them. On the CPU (`merge::tests`, 2^18 + 2^18 keys cubed, every 1000th
/// rank) it took the slowest search from 36 probes to 27 (bisection: 18), and no search of
/// uniform keys reached it (`f64` 2^27 + 2^20 and 2^24 + 2^24, every tile start: the same
/// probes with and without it).
#[inline(always)]
pub const fn interpolated_probes(width: usize) -> usize {
    (usize::BITS - width.leading_zeros()) as usize * 2 / 3
}

/// Probes without the interval halving after which a search not yet bracketed (the probes all
/// on one side of the co-rank, each guessed by Newton's step) bisects.
pub const NEWTON_PATIENCE: usize = 2;

/// Probes without the interval halving after which a bracketed search (regula falsi with the
/// Illinois rule) bisects. On the CPU, the same code counting probes, at every tile start of
/// `f64` 2^27 + 2^20 uniform keys (48 000 searches): 2 probes without the Illinois rule (before)
/// took at most 18 probes, a warp's slowest lane 10.1 on average; 4 took 13 and 8.4, 6 took 12
/// and 8.1, 8 took 11 and 8.0, 12 the same as 8 (2^24 + 2^24: 14 and 8.9 against 9 and 7.4).
/// The partition ends with its slowest search, so 8.
pub const BRACKETED_PATIENCE: usize = 8;

/// How far a run's positions climb per key, first to last ([`KeyOrder::position`]); the runs'
/// two together are how fast `h` grows per step of the co-rank, if the keys were spread evenly.
///
/// # Safety
/// `run` holds `len >= 1` keys.
#[inline(always)]
unsafe fn climb_per_key<K: MergeKey, O: KeyOrder<K>, R: KeyReader<K>>(run: R, len: usize) -> f64 {
    // SAFETY: 0 and len - 1 are in the run.
    let (first, last) = unsafe { (run.load(0), run.load(len - 1)) };
    (O::position(last) - O::position(first)) / (len - 1).max(1) as f64
}

/// The probe `guess` rounded into `[low + 1, high]` (a guess that is no number, say from
/// infinite keys, is the interval's [aligned split](aligned_split)).
#[inline(always)]
fn probe_at(guess: f64, low: usize, high: usize) -> usize {
    if guess.is_finite() { ((guess + 0.5) as usize).clamp(low + 1, high) } else { aligned_split(low, high) }
}

/// The bisection probe of `[low, high]`, `low < high`, that `climb_to_co_rank` would make: the
/// position in `(low, high]` with the most trailing zero bits (their common high bits, then the
/// highest bit in which they differ, which `high` has). Many searches make the same such probes,
/// which the caches then serve.
#[inline(always)]
fn aligned_split(low: usize, high: usize) -> usize {
    high & !(highest_bit(low ^ high) - 1)
}

/// How many of the first `k` keys of the stable merge of `a` (`m` keys) and `b` (`n`) come
/// from A, as [`co_rank_in`](super::co_rank_in) answers it, found by interpolation search
/// ([`co_rank_interpolated_between`]) from a first probe that assumes both runs spread evenly
/// over one range: `k·m / (m + n)`.
///
/// # Safety
/// As [`co_rank_in`](super::co_rank_in): `k <= m + n`, and `a` and `b` hold `m` and `n` keys
/// sorted in the order `O`, which [has positions](KeyOrder::HAS_POSITION).
#[inline(always)]
pub unsafe fn co_rank_interpolated<K, O, A, B>(k: usize, a: A, m: usize, b: B, n: usize) -> usize
where
    K: MergeKey,
    O: KeyOrder<K>,
    A: KeyReader<K>,
    B: KeyReader<K>,
{
    let (low, high) = (k.saturating_sub(n), k.min(m));
    if low == high {
        return low;
    }
    let first = probe_at(even_spread_co_rank(k, m, n), low, high);
    // SAFETY: per the caller; the co-rank is in [max(0, k - n), min(k, m)].
    unsafe { co_rank_interpolated_between::<K, O, A, B>(k, a, b, (m, n), (low, high), first) }
}

/// Where the co-rank of `k` would be if the runs' `m` and `n` keys spread alike over one range:
/// `k·m / (m + n)`, the first probe of the searches over a whole merge (here and
/// [`co_rank_by_warp`](super::co_rank_by_warp)'s).
#[inline(always)]
pub fn even_spread_co_rank(k: usize, m: usize, n: usize) -> f64 {
    k as f64 * (m as f64 / (m + n) as f64)
}

/// The co-rank of `k` in runs `a` and `b` of `m` and `n` keys, known to lie in `[low, high]`
/// (an interval inside `[max(0, k - n), min(k, m)]`), by interpolation search from the probe
/// `first` (in `[low + 1, high]` when `low < high`). Each next probe is where `h` would cross
/// zero: on the line through `h` at both ends of the interval once probes have fallen on both
/// sides (regula falsi), before that on the line through the last probe with the runs' mean
/// climb per key (`climb_per_key`, from their first and last keys).
///
/// # Safety
/// As [`co_rank_in`](super::co_rank_in), with `O` [having positions](KeyOrder::HAS_POSITION);
/// the co-rank of `k` is in `[low, high]`, with `high <= m` and `k - low <= n`.
#[inline(always)]
pub unsafe fn co_rank_interpolated_between<K, O, A, B>(
    k: usize,
    a: A,
    b: B,
    (m, n): (usize, usize),
    (mut low, mut high): (usize, usize),
    first: usize,
) -> usize
where
    K: MergeKey,
    O: KeyOrder<K>,
    A: KeyReader<K>,
    B: KeyReader<K>,
{
    if low == high {
        return low;
    }
    // low < high, so both runs hold a key: A's high-th and B's (k - low)-th.
    // SAFETY: m and n are at least 1, shown above.
    let climb = unsafe { climb_per_key::<K, O, A>(a, m) + climb_per_key::<K, O, B>(b, n) };
    let mut probe = first;
    // `h` at `low` and at `high + 1`, once a probe has fallen there (NaN: not yet).
    let (mut h_low, mut h_high) = (f64::NAN, f64::NAN);
    // The width the interval last halved to, and the probes since.
    let (mut halved_width, mut probes_since) = (high - low, 0);
    // Probes left before bisection takes over for good.
    let mut probes_left = interpolated_probes(high - low);
    // Which end the last probe moved, for the Illinois rule.
    let mut moved_high = None;
    // Whether a probe met equivalent keys, whose positions cannot tell where among them the
    // co-rank lies: bisection from then on. (In this one loop, not a second one after it, so
    // that the lanes of a warp that meet ties at different probes still load together.)
    let mut tied = false;
    loop {
        // low < probe <= high <= m, and k - probe < k - low <= n.
        // SAFETY: probe - 1 < m and k - probe < n, shown above.
        let (key_a, key_b) = unsafe { (a.load(probe - 1), b.load(k - probe)) };
        let h = O::position(key_a) - O::position(key_b);
        let moves_high = O::after(key_a, key_b);
        if moves_high {
            (high, h_high) = (probe - 1, h);
        } else {
            (low, h_low) = (probe, h);
        }
        if moved_high == Some(moves_high) {
            // The same end moved twice: halve the stale end's `h` (a NaN stays NaN).
            if moves_high { h_low *= 0.5 } else { h_high *= 0.5 }
        }
        moved_high = Some(moves_high);
        if low == high {
            return low;
        }
        tied |= !O::before(key_a, key_b) && !O::before(key_b, key_a);
        let width = high - low;
        if 2 * width <= halved_width {
            (halved_width, probes_since) = (width, 0);
        } else {
            probes_since += 1;
        }
        let bracketed = !h_low.is_nan() && !h_high.is_nan();
        let patience = if bracketed { BRACKETED_PATIENCE } else { NEWTON_PATIENCE };
        probes_left = probes_left.saturating_sub(1);
        probe = if tied || probes_since >= patience || probes_left == 0 {
            aligned_split(low, high)
        } else if !bracketed {
            probe_at(probe as f64 - h / climb, low, high)
        } else {
            probe_at(low as f64 + (high + 1 - low) as f64 * (-h_low / (h_high - h_low)), low, high)
        };
    }
}

/// Whether the partition's searches over the whole of a merge of `total` keys, sorted in the
/// order `O`, go by interpolation: where the order [has positions](KeyOrder::HAS_POSITION) and
/// the merge has at least [`PARTITION_MIN_INTERPOLATED`] keys.
#[inline(always)]
pub const fn interpolates<K: MergeKey, O: KeyOrder<K>>(total: usize) -> bool {
    O::HAS_POSITION && total >= PARTITION_MIN_INTERPOLATED
}
