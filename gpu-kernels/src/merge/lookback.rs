//! Decoupled look-back (Merrill & Garland, "Single-pass Parallel Prefix Scan with Decoupled
//! Look-back", NVIDIA, 2016): how a block whose output size is known only once it has done its
//! work learns, in the same kernel, where in the output its part starts, the sum of the
//! sizes of every tile before its own.
//!
//! Each tile has one 64-bit status word in global memory: empty, then its **aggregate** (its
//! own count), then its **inclusive prefix** (the counts of every tile up to and including it).
//! A block publishes its aggregate as soon as it has counted, then one warp looks back over its
//! predecessors' words, a window of [`WINDOW`] at a time, nearest first: it waits until none is
//! empty up to the nearest inclusive prefix, adds up the aggregates up to it (and that prefix),
//! and stops there, or moves a window further back if the window holds none.
//!
//! The window is wide because of how fast the inclusive prefixes can advance: a tile whose
//! nearest inclusive predecessor is `d` tiles back needs `d / WINDOW` round trips to L2 before it
//! can publish its own, so tiles that finish counting faster than one window per round trip
//! would wait longer and longer. Measured on an H200 (docs/merge-h200.md), the set kernels ran
//! at the same speed with 32 words per round (one a lane) as with 128: they were not limited
//! there; the wider window costs three more loads a lane and keeps that limit far away. The block then publishes its own inclusive
//! prefix. A tile thus waits only for its predecessors to have *counted*, not for them to have
//! finished looking back, and each word is written twice and read by a few successors.
//!
//! The flag and the value share one word, written and read as single relaxed atomic accesses
//! ([`store_relaxed_u64`], [`load_relaxed_u64`]), so a reader sees a flag with its own value,
//! never a torn pair, and needs no fence: the word is the only thing published. Tiles wait only
//! on tiles with smaller indices, which CUDA starts first (as CUB's single-pass scans assume).

use crate::device::warp::{LANES, ballot, from_lane_xor};
use crate::device::{load_relaxed_u64, sleep_ns, store_relaxed_u64};

/// The bit where a status word's flag starts; the value has the bits below.
const FLAG_SHIFT: u32 = 62;
/// The value bits of a status word.
const VALUE: u64 = (1 << FLAG_SHIFT) - 1;
/// A tile that has not counted yet (every word, as the partition kernel clears them).
pub const EMPTY: u64 = 0;
/// The flag of a tile's own count.
const AGGREGATE: u64 = 1 << FLAG_SHIFT;
/// The flag of the count of every tile up to and including this one.
const INCLUSIVE: u64 = 2 << FLAG_SHIFT;

/// The total of tiles `0..=t` that tile `t`'s status `word` holds once its block has finished;
/// `None` while it has not (the host reads the total of a pass from the last tile's word).
pub const fn inclusive_prefix(word: u64) -> Option<u64> {
    if word & !VALUE == INCLUSIVE { Some(word & VALUE) } else { None }
}

/// The status words of a pass's tiles, one per tile, in global memory.
#[derive(Clone, Copy)]
pub struct TileStatus {
    words: *mut u64,
}

impl TileStatus {
    /// The words at `words`.
    ///
    /// # Safety
    /// `words` points to one 8-byte-aligned word per tile of the pass, in global memory, all
    /// [`EMPTY`] before the pass starts (written by an earlier kernel).
    #[inline(always)]
    pub unsafe fn at(words: *mut u64) -> Self {
        Self { words }
    }

    /// Tile `tile` has counted `count` outputs. Tile 0 has no predecessor, so its count is its
    /// inclusive prefix, published at once.
    ///
    /// # Safety
    /// `tile` is this block's; one thread calls it once.
    #[inline(always)]
    pub unsafe fn publish_count(self, tile: usize, count: u64) {
        let flag = if tile == 0 { INCLUSIVE } else { AGGREGATE };
        // SAFETY: per `at` and the caller.
        unsafe { store_relaxed_u64(self.words.add(tile), flag | count) }
    }

    /// Tile `tile`'s outputs and those of every tile before it number `prefix`.
    ///
    /// # Safety
    /// As [`publish_count`](Self::publish_count), after it.
    #[inline(always)]
    pub unsafe fn publish_inclusive(self, tile: usize, prefix: u64) {
        // SAFETY: per `at` and the caller.
        unsafe { store_relaxed_u64(self.words.add(tile), INCLUSIVE | prefix) }
    }

    /// The outputs of every tile before `tile`, by one warp looking back over their words; every
    /// lane gets it. Each round reads a window of [`WINDOW`] predecessors, lane `lane` those
    /// `lane + 1`, `lane + 33`, … tiles back (a window running past tile 0 reads an inclusive 0
    /// there), all its loads in flight at once: one round trip to L2 per window. A window that
    /// holds an empty word before its nearest inclusive prefix is read again after a short
    /// sleep (so that waiting warps do not flood L2 with loads).
    ///
    /// # Safety
    /// Every lane of one warp calls it (converged), with its own lane index; `tile` has
    /// published its count, and every tile before it does so without waiting on `tile`.
    #[inline(always)]
    pub unsafe fn look_back(self, tile: usize, lane: u32) -> u64 {
        let mut prefix = 0;
        let mut window_end = tile;
        loop {
            let words: [u64; WORDS_PER_LANE] = core::array::from_fn(|w| {
                let back = 1 + lane as usize + w * LANES as usize;
                // SAFETY: a predecessor's word, per `at`.
                if window_end >= back {
                    unsafe { load_relaxed_u64(self.words.add(window_end - back)) }
                } else {
                    INCLUSIVE
                }
            });
            // The nearest inclusive prefix, as a distance into the window (WINDOW if none).
            let mut nearest = WINDOW as u32;
            for (w, &word) in words.iter().enumerate().rev() {
                let inclusive = ballot(word & !VALUE == INCLUSIVE);
                if inclusive != 0 {
                    nearest = w as u32 * LANES + inclusive.trailing_zeros();
                }
            }
            // Only the words nearer than it count: wait while one of those is empty.
            let distance = |w: usize| w as u32 * LANES + lane;
            let empty = words.iter().enumerate().any(|(w, &word)| word == EMPTY && distance(w) < nearest);
            if ballot(empty) != 0 {
                sleep_ns(LOOK_BACK_SLEEP_NS);
                continue;
            }
            let counted = words.iter().enumerate().filter(|&(w, _)| distance(w) <= nearest);
            prefix += warp_sum(counted.map(|(_, &word)| word & VALUE).sum());
            if nearest < WINDOW as u32 {
                return prefix;
            }
            window_end -= WINDOW;
        }
    }
}

/// Status words each lane reads per round of the look-back.
const WORDS_PER_LANE: usize = 4;
/// Predecessors one round of the look-back reads.
pub const WINDOW: usize = WORDS_PER_LANE * LANES as usize;
/// How long a look-back waits before reading a window with an empty word again.
const LOOK_BACK_SLEEP_NS: u32 = 32;

/// The sum of every lane's `value`, on every lane (a butterfly of shuffles).
#[inline(always)]
fn warp_sum(mut value: u64) -> u64 {
    let mut mask = LANES / 2;
    while mask > 0 {
        value += from_lane_xor(value, mask);
        mask /= 2;
    }
    value
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_status_word_carries_its_flag_and_value_in_one_word() {
        let mut words = [EMPTY; 3];
        // SAFETY: three words, written one at a time.
        let status = unsafe { TileStatus::at(words.as_mut_ptr()) };
        unsafe {
            status.publish_count(0, 7);
            status.publish_count(1, 5);
            status.publish_count(2, VALUE);
        }
        assert_eq!(words.map(inclusive_prefix), [Some(7), None, None]);
        unsafe { status.publish_inclusive(1, 12) };
        assert_eq!(inclusive_prefix(words[1]), Some(12));
        // The largest value keeps its flag.
        assert_eq!(words[2] & !VALUE, AGGREGATE);
        assert_eq!(inclusive_prefix(EMPTY), None);
    }
}
