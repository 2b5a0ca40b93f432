//! PMPP 12.7's "simplified buffer access model": a circular buffer in shared memory is seen
//! as one continuous run of keys that starts at `start`, and the wrap-around is applied only
//! at the moment a key is read or written. `co_rank_circular` and `merge_sequential_circular`
//! are the book's library functions on top of it: the circular kernel calls them exactly as
//! the tiled kernel calls `co_rank` and `merge_sequential`.

use super::keys::{KeyReader, KeyRun, KeyWriter, MergeKey};
use super::sequential::{co_rank_by, merge_sequential_by};

/// A run of keys inside a circular buffer of `capacity` keys: key `i` of the run is element
/// `(start + i) mod capacity` of the buffer.
#[derive(Clone, Copy, Debug)]
pub struct Circular<S> {
    buffer: S,
    start: usize,
    capacity: usize,
}

impl<S> Circular<S> {
    /// The run starting at element `start` of `buffer`, which holds `capacity` keys. Runs are
    /// at most `capacity` keys long.
    ///
    /// # Panics
    /// In debug builds, when `start >= capacity`.
    #[inline(always)]
    pub fn new(buffer: S, start: usize, capacity: usize) -> Self {
        debug_assert!(start < capacity, "a circular run starts inside its buffer");
        Self { buffer, start, capacity }
    }

    /// Element of the buffer that holds key `i` of the run. One comparison instead of a
    /// modulo: `start < capacity` and `i <= capacity`, so the sum is below `2 · capacity`.
    /// Shared-memory buffers are far smaller than 2^31 keys, so the sum is taken in 32 bits:
    /// half the integer instructions of 64-bit adds and selects on this, the kernel's hottest
    /// index computation.
    #[inline(always)]
    fn position(&self, i: usize) -> usize {
        debug_assert!(self.capacity <= u32::MAX as usize / 2, "a circular buffer fits in shared memory");
        let (start, i, capacity) = (self.start as u32, i as u32, self.capacity as u32);
        let position = start + i;
        (if position >= capacity { position - capacity } else { position }) as usize
    }
}

impl<S: KeyRun> KeyRun for Circular<S> {
    #[inline(always)]
    unsafe fn skip(self, count: usize) -> Self {
        Self { start: self.position(count), ..self }
    }
}

impl<K, S: KeyReader<K>> KeyReader<K> for Circular<S> {
    #[inline(always)]
    unsafe fn load(self, i: usize) -> K {
        // SAFETY: `i` is within the run, which lies in the buffer; `position < capacity`.
        unsafe { self.buffer.load(self.position(i)) }
    }
}

impl<K, S: KeyWriter<K>> KeyWriter<K> for Circular<S> {
    #[inline(always)]
    unsafe fn store(self, i: usize, key: K) {
        // SAFETY: `i` is within the run, which lies in the buffer; `position < capacity`.
        unsafe { self.buffer.store(self.position(i), key) }
    }
}

/// PMPP Fig. 12.19, `co_rank_circular`: [`co_rank_by`] on the runs of `m` and `n` keys that
/// start at `a_s_start` and `b_s_start` of the circular buffers `a_s` and `b_s` of
/// `tile_size` keys each.
///
/// # Safety
/// `k <= m + n`; `m, n <= tile_size`; `a_s_start, b_s_start < tile_size`; both buffers hold
/// `tile_size` keys and the runs are sorted ascending.
#[allow(clippy::too_many_arguments, reason = "the book's signature")]
#[inline(always)]
pub unsafe fn co_rank_circular<K: MergeKey, S: KeyReader<K>>(
    k: usize,
    a_s: S,
    m: usize,
    b_s: S,
    n: usize,
    a_s_start: usize,
    b_s_start: usize,
    tile_size: usize,
) -> usize {
    let a = Circular::new(a_s, a_s_start, tile_size);
    let b = Circular::new(b_s, b_s_start, tile_size);
    // SAFETY: the circular runs hold `m` and `n` keys, per the caller.
    unsafe { co_rank_by(k, a, m, b, n) }
}

/// PMPP Fig. 12.20, `merge_sequential_circular`: [`merge_sequential_by`] of the runs of `m`
/// and `n` keys that start at `a_s_start` and `b_s_start` of the circular buffers `a_s` and
/// `b_s` of `tile_size` keys each, into `c`.
///
/// # Safety
/// As [`co_rank_circular`], and `c` has room for `m + n` keys that no other thread accesses.
#[allow(clippy::too_many_arguments, reason = "the book's signature")]
#[inline(always)]
pub unsafe fn merge_sequential_circular<K: MergeKey, S: KeyReader<K>, C: KeyWriter<K>>(
    a_s: S,
    m: usize,
    b_s: S,
    n: usize,
    c: C,
    a_s_start: usize,
    b_s_start: usize,
    tile_size: usize,
) {
    let a = Circular::new(a_s, a_s_start, tile_size);
    let b = Circular::new(b_s, b_s_start, tile_size);
    // SAFETY: the circular runs hold `m` and `n` keys, per the caller.
    unsafe { merge_sequential_by(a, m, b, n, c) }
}
