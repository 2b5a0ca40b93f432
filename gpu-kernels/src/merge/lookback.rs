//! Decoupled look-back (Merrill & Garland, "Single-pass Parallel Prefix Scan with Decoupled
//! Look-back", NVIDIA, 2016): how a block whose output size is known only once it has done its
//! work learns, in the same kernel, where in the output its part starts, the sum of the
//! sizes of every tile before its own.
//!
//! Each tile has one 64-bit status word in global memory: empty, then its **aggregate** (its
//! own count), then its **inclusive prefix** (the counts of every tile up to and including it).
//! A block publishes its aggregate as soon as it has counted, then one warp looks back over its
//! predecessors' words, 32 at a time, nearest first: it waits until none is empty, adds up the
//! aggregates up to the nearest inclusive prefix (and that prefix), and stops there, or moves
//! 32 tiles further back if the window holds none. The block then publishes its own inclusive
//! prefix. A tile thus waits only for its predecessors to have *counted*, not for them to have
//! finished looking back, and each word is written twice and read by a few successors.
//!
//! The flag and the value share one word, written and read as single relaxed atomic accesses
//! ([`store_relaxed_u64`], [`load_relaxed_u64`]), so a reader sees a flag with its own value,
//! never a torn pair, and needs no fence: the word is the only thing published. Tiles wait only
//! on tiles with smaller indices, which CUDA starts first (as CUB's single-pass scans assume).

use crate::device::warp::{LANES, ballot, from_lane_xor};
use crate::device::{load_relaxed_u64, store_relaxed_u64};

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
    /// lane gets it. Lane `lane` reads the predecessor `lane + 1` tiles back in each window of
    /// 32 (a window running past tile 0 reads an inclusive 0 there).
    ///
    /// # Safety
    /// Every lane of one warp calls it (converged), with its own lane index; `tile` has
    /// published its count, and every tile before it does so without waiting on `tile`.
    #[inline(always)]
    pub unsafe fn look_back(self, tile: usize, lane: u32) -> u64 {
        let mut prefix = 0;
        let mut window_end = tile;
        loop {
            let word = if window_end > lane as usize {
                let at = self.words.wrapping_add(window_end - 1 - lane as usize);
                loop {
                    // SAFETY: a predecessor's word, per `at`.
                    let word = unsafe { load_relaxed_u64(at) };
                    if word != EMPTY {
                        break word;
                    }
                }
            } else {
                INCLUSIVE
            };
            let inclusive = ballot(word & !VALUE == INCLUSIVE);
            // The nearest inclusive prefix ends the sum: lanes past it add nothing.
            let nearest = inclusive.trailing_zeros();
            prefix += warp_sum(if lane <= nearest { word & VALUE } else { 0 });
            if inclusive != 0 {
                return prefix;
            }
            window_end -= LANES as usize;
        }
    }
}

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
