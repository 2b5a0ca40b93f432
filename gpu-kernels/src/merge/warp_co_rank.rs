//! Beyond the book: the co-rank (12.4) found by the 32 lanes of a warp together, 32 probes a
//! round (a k-ary search, as in Kaldewey et al., "Parallel search on video cards", 2009). The
//! book's co-rank halves its interval at each probe: about 20 dependent loads over a run of a
//! million keys. Here every lane probes one position of the interval, the lanes' probes sorted,
//! and a vote ([`warp::ballot`]) counts the lanes whose probe the co-rank reaches: the interval
//! shrinks to the step between two neighbouring probes, a 32nd of it or less, per round of
//! loads in flight together.
//!
//! The first round probes around a guess, the co-rank if both runs spread alike over one
//! range (`k·m / (m + n)`), at distances 0, 1, 3, 7, … up to 2^15 − 1 above and 1, 2, 4, …
//! 2^15 below it: on smooth keys the co-rank lies a few hundred keys from the guess (a random walk's
//! spread), so one round brackets it within an interval of a few hundred, and two more rounds of
//! 32 equal steps end the search. Where the guess is wrong the round still narrows the interval
//! (to one side of the guess), and the equal steps take at most `log32` of what remains.
//!
//! Each probe decides as the book's does (`O::after` on A's key before it and B's key at the
//! matching rank), so the result is the co-rank whatever the keys. The rounds are pure
//! functions of the interval and the vote ([`lane_probe`], [`narrowed`]), shared by the GPU's
//! search ([`co_rank_by_warp`]) and the host tests, which count the lanes one by one.

use super::interpolation::even_spread_co_rank;
use super::keys::{KeyReader, MergeKey};
use super::order::KeyOrder;
use super::sequential::co_rank_reaches;
use crate::device::warp;

/// Lanes of the warp that search together, one probe each per round.
pub const LANES: u32 = warp::LANES;

/// The most a first-round probe lies from the guess: `2^GUESS_REACH`.
pub const GUESS_REACH: u32 = LANES / 2 - 1;

/// Lane `lane`'s probe in a round of the search of a co-rank known to lie in `[low, high]`
/// (`low < high`): a position in `[low + 1, high]` whose answer (is the co-rank at least
/// it?) narrows the interval. Around `guess` in the first round (`guess`, then `guess + 2^e -
/// 1` for lanes above the middle one and `guess - 2^e` below it, clamped), else the interval's
/// 32 equal steps, the last lane's at `high`. Either way the probes grow with the lane.
#[inline(always)]
pub fn lane_probe(lane: u32, (low, high): (usize, usize), guess: Option<usize>) -> usize {
    match guess {
        Some(guess) => {
            let middle = LANES / 2;
            let probe = if lane >= middle {
                guess.saturating_add((1usize << (lane - middle)) - 1)
            } else {
                guess.saturating_sub(1usize << (GUESS_REACH - lane))
            };
            probe.clamp(low + 1, high)
        }
        None => low + ((lane as usize + 1) * (high - low)).div_ceil(LANES as usize),
    }
}

/// The interval `[low, high]` after a round in which the co-rank reached the probes of the
/// first `count` lanes ([`lane_probe`]) and no more: from the last of those probes to just
/// before the next. Always narrower than before.
#[inline(always)]
pub fn narrowed(count: u32, (low, high): (usize, usize), guess: Option<usize>) -> (usize, usize) {
    let new_low = if count == 0 { low } else { lane_probe(count - 1, (low, high), guess) };
    let new_high = if count == LANES { high } else { lane_probe(count, (low, high), guess) - 1 };
    (new_low, new_high)
}

/// The first round's guess of the co-rank of `k` (`even_spread_co_rank`, rounded).
#[inline(always)]
pub fn co_rank_guess(k: usize, m: usize, n: usize) -> usize {
    (even_spread_co_rank(k, m, n) + 0.5) as usize
}

/// The rounds of the search for the co-rank of `k` in runs of `m` and `n` keys, with
/// `count_reached(interval, guess)` the number of lanes whose probe ([`lane_probe`]) the
/// co-rank reaches: the GPU's vote, or the host tests' count. Returns the co-rank and the
/// rounds taken.
#[inline(always)]
pub fn search_rounds(
    k: usize,
    (m, n): (usize, usize),
    mut count_reached: impl FnMut((usize, usize), Option<usize>) -> u32,
) -> (usize, u32) {
    let mut interval = (k.saturating_sub(n), k.min(m));
    let mut guess = Some(co_rank_guess(k, m, n));
    let mut rounds = 0;
    while interval.0 < interval.1 {
        interval = narrowed(count_reached(interval, guess), interval, guess);
        guess = None;
        rounds += 1;
    }
    (interval.0, rounds)
}

/// How many of the first `k` keys of the stable merge of `a` (`m` keys) and `b` (`n`) come
/// from A, as [`co_rank_in`](super::co_rank_in) answers it, found by the calling warp's 32
/// lanes together ([`search_rounds`]); every lane returns it.
///
/// # Safety
/// As [`co_rank_in`](super::co_rank_in); every lane of the warp calls this, converged, with
/// its `lane` and the same other arguments.
#[inline(always)]
pub unsafe fn co_rank_by_warp<K, O, A, B>(lane: u32, k: usize, a: A, m: usize, b: B, n: usize) -> usize
where
    K: MergeKey,
    O: KeyOrder<K>,
    A: KeyReader<K>,
    B: KeyReader<K>,
{
    search_rounds(k, (m, n), |interval, guess| {
        // SAFETY: the probe is in [low + 1, high] inside [max(0, k - n), min(k, m)].
        let reached = unsafe { co_rank_reaches::<K, O, A, B>(k, a, b, lane_probe(lane, interval, guess)) };
        warp::ballot(reached).count_ones()
    })
    .0
}
