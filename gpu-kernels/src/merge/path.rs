//! Beyond the book: merge path (Green, McColl & Bader, "GPU Merge Path", 2012; Odeh et al.,
//! "Merge Path", 2012), the design of the fastest GPU merges. The book's co-rank (12.4) does
//! all the searching; what changes is who searches where, and how often each key moves.
//!
//! * A small **partition kernel** ([`merge_path_partition`]) co-ranks the start of every tile
//!   of `BLOCK × ITEMS` outputs once, in global memory, and writes the 64-bit results to a
//!   `splits` array: one thread per tile, `⌈(m + n) / tile⌉ + 1` searches in all.
//! * The **merge kernel** ([`merge_path`]) gives each block exactly one tile: no loop of tiles,
//!   no keys loaded and thrown away. The block [`gather`](PathTile::gather)s its tile's keys of
//!   A, then of B, into one shared buffer (consecutive threads read consecutive keys, every
//!   load issued before the first is used), each thread co-ranks its own `ITEMS` outputs in
//!   shared memory and [`merge`](PathTile::merge_thread)s them serially into registers (one
//!   shared load per key, reads clamped into the tile so that none sits behind a branch), and
//!   the block stages the merged tile in the same buffer and [`store`](PathTile::store)s it
//!   coalesced. Three barriers per tile, each key read once from DRAM and written once.
//!
//! An odd `ITEMS` keeps the staging writes (`tile[tid * ITEMS + k]`) free of bank conflicts.
//! `BLOCK` and `ITEMS` are const generics, chosen by a measured sweep (see
//! [`tiles::PATH_4_BYTE`](super::tiles::PATH_4_BYTE)). Stable like every merge here: on equal
//! keys, A's comes first, in the co-ranks and in the serial merge.
//!
//! The block's work is written as phases between barriers ([`PathTile`]'s methods); the
//! kernel runs them on each thread with `sync_threads` between, and the host tests run them
//! for every thread of a block in turn.

use super::keys::{KeyReader, KeyWriter, MergeKey, SharedKeys};
use super::sequential::co_rank_by;
use crate::device::thread::*;

/// The outputs one block merges, and the keys of A and B they take: outputs
/// `[c_start, c_start + c_len)` are the stable merge of A's `[a_start, a_start + a_len)` and
/// B's `[b_start, b_start + b_len)`, so `a_len + b_len = c_len`. In shared memory the tile's
/// keys of A come first, then those of B. Positions inside a tile are 32-bit (a tile is a
/// few thousand keys), which saves registers and instructions in the per-key loops.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PathTile {
    pub a_start: usize,
    pub b_start: usize,
    pub c_start: usize,
    pub a_len: u32,
    pub b_len: u32,
    pub c_len: u32,
}

impl PathTile {
    /// Tile `tile` of a merge of `total` outputs in tiles of `tile_size`, from the co-ranks
    /// of its first output (`a_curr`) and of the next tile's first (`a_next`), as the
    /// partition kernel wrote them.
    #[inline(always)]
    pub fn new(tile: usize, tile_size: usize, total: usize, a_curr: usize, a_next: usize) -> Self {
        let c_start = (tile * tile_size).min(total);
        let c_end = (c_start + tile_size).min(total);
        let (a_len, c_len) = ((a_next - a_curr) as u32, (c_end - c_start) as u32);
        Self { a_start: a_curr, b_start: c_start - a_curr, c_start, a_len, b_len: c_len - a_len, c_len }
    }

    /// Phase 1a: thread `tid`'s `ITEMS` keys of the tile, tile positions `tid + k * BLOCK`
    /// (consecutive threads, consecutive keys): A's keys first, then B's. Every load is issued
    /// before any is used; positions past a partial tile's end read its last key again, and
    /// [`scatter`](Self::scatter) drops them.
    ///
    /// # Safety
    /// `a` and `b` hold the tile's keys; the tile is not empty.
    #[inline(always)]
    pub unsafe fn gather<K: MergeKey, const BLOCK: usize, const ITEMS: usize>(
        &self,
        tid: usize,
        a: *const K,
        b: *const K,
    ) -> [K; ITEMS] {
        // Tile position x is A's key `a_start + x` below `a_len`, else B's `b_start + x - a_len`:
        // one base pointer per run, chosen per key.
        let a_base = a.wrapping_add(self.a_start);
        let b_base = b.wrapping_add(self.b_start).wrapping_sub(self.a_len as usize);
        // SAFETY: positions are clamped into the tile, whose keys lie in A and B.
        core::array::from_fn(|k| unsafe {
            let x = ((tid + k * BLOCK) as u32).min(self.c_len - 1);
            *if x < self.a_len { a_base } else { b_base }.wrapping_add(x as usize)
        })
    }

    /// Phase 1b: thread `tid` writes the keys it gathered (or merged) to tile positions
    /// `position(k)` of `tile`, those inside the tile only.
    ///
    /// # Safety
    /// `tile` has room for the tile's keys; no other thread accesses these positions
    /// concurrently.
    #[inline(always)]
    pub unsafe fn scatter<K: MergeKey, S: KeyWriter<K>, const ITEMS: usize>(
        &self,
        keys: [K; ITEMS],
        tile: S,
        position: impl Fn(usize) -> usize,
    ) {
        for (k, &key) in keys.iter().enumerate() {
            let x = position(k) as u32;
            if x < self.c_len {
                // SAFETY: x is inside the tile, per the check, and this thread's own.
                unsafe { tile.store(x as usize, key) };
            }
        }
    }

    /// Phase 2: thread `tid` co-ranks the start of its `ITEMS` outputs, `tid * ITEMS`, in the
    /// shared tile, and merges them serially into registers: A's key when `a_key <= b_key`
    /// (stable), then the next key of the run it came from. Outputs past a partial tile's end
    /// are garbage that [`scatter`](Self::scatter) drops.
    ///
    /// # Safety
    /// The tile's keys are in `tile` (A's, then B's), written by every thread before a barrier.
    #[inline(always)]
    pub unsafe fn merge_thread<K: MergeKey, S: KeyReader<K>, const ITEMS: usize>(
        &self,
        tid: usize,
        tile: S,
    ) -> [K; ITEMS] {
        let (a_len, b_len) = (self.a_len, self.b_len);
        let last = self.c_len - 1;
        let diag = ((tid * ITEMS) as u32).min(self.c_len);
        // SAFETY: B's keys start `a_len` into the tile; diag <= a_len + b_len; every read is
        // clamped to the tile's last key.
        unsafe {
            let at = |x: u32| tile.load(x.min(last) as usize);
            let b_tile = tile.skip(a_len as usize);
            let mut i = co_rank_by(diag as usize, tile, a_len as usize, b_tile, b_len as usize) as u32;
            let mut j = diag - i;
            let mut a_key = at(i);
            let mut b_key = at(a_len + j);
            core::array::from_fn(|_| {
                let take_a = j >= b_len || (i < a_len && a_key <= b_key);
                let key = if take_a { a_key } else { b_key };
                let next = at(if take_a { i + 1 } else { a_len + j + 1 });
                if take_a {
                    a_key = next;
                    i += 1;
                } else {
                    b_key = next;
                    j += 1;
                }
                key
            })
        }
    }

    /// Phase 3: thread `tid` stores tile positions `tid + k * BLOCK` of the merged tile to the
    /// output (consecutive threads, consecutive keys): all its reads first, then its writes.
    ///
    /// # Safety
    /// The merged tile is in `tile`, staged by every thread before a barrier; `c` has room
    /// for the tile's outputs.
    #[inline(always)]
    pub unsafe fn store<K: MergeKey, S: KeyReader<K>, const BLOCK: usize, const ITEMS: usize>(
        &self,
        tid: usize,
        tile: S,
        c: *mut K,
    ) {
        let last = self.c_len - 1;
        // SAFETY: reads are clamped into the tile; writes are inside it, per the check.
        unsafe {
            let keys: [K; ITEMS] =
                core::array::from_fn(|k| tile.load(((tid + k * BLOCK) as u32).min(last) as usize));
            self.scatter(keys, c.add(self.c_start), |k| tid + k * BLOCK);
        }
    }
}

/// The partition's thread `t`: `splits[t]`, the co-rank of output `min(t * tile_size, m + n)`,
/// for `t` in `0..=tiles`, where `tiles = ⌈(m + n) / tile_size⌉`; threads past that do nothing.
///
/// # Safety
/// `a` holds `m` keys and `b` holds `n`, sorted ascending; `splits` has room for `tiles + 1`
/// entries; `tile_size > 0`.
#[inline(always)]
pub unsafe fn merge_path_partition_thread<K: MergeKey>(
    t: usize,
    a: *const K,
    m: usize,
    b: *const K,
    n: usize,
    tile_size: usize,
    splits: *mut usize,
) {
    if t <= (m + n).div_ceil(tile_size) {
        let k = t.saturating_mul(tile_size).min(m + n);
        // SAFETY: k <= m + n; t <= tiles is inside `splits`.
        unsafe { *splits.add(t) = co_rank_by(k, a, m, b, n) };
    }
}

/// The partition kernel: one [`merge_path_partition_thread`] per thread of the grid.
///
/// # Safety
/// As [`merge_path_partition_thread`]; the launch has at least `tiles + 1` threads.
#[inline(always)]
pub unsafe fn merge_path_partition<K: MergeKey>(
    a: *const K,
    m: usize,
    b: *const K,
    n: usize,
    tile_size: usize,
    splits: *mut usize,
) {
    let t = block_idx_x() as usize * block_dim_x() as usize + thread_idx_x() as usize;
    // SAFETY: per the caller.
    unsafe { merge_path_partition_thread(t, a, m, b, n, tile_size, splits) }
}

/// The merge kernel: block `blockIdx.x` merges tile `blockIdx.x` of `BLOCK × ITEMS` outputs,
/// between the co-ranks `splits[tile]` and `splits[tile + 1]`.
///
/// # Safety
/// As [`merge_path_partition`], whose `splits` (for this tile size) this launch reads; `c`
/// has room for `m + n` keys and overlaps neither input; the launch has `BLOCK` threads per
/// block, one block per tile, and `BLOCK × ITEMS` keys of dynamic shared memory.
#[inline(always)]
pub unsafe fn merge_path<K: MergeKey, const BLOCK: usize, const ITEMS: usize>(
    a: *const K,
    m: usize,
    b: *const K,
    n: usize,
    c: *mut K,
    splits: *const usize,
) {
    let (tid, tile_index) = (thread_idx_x() as usize, block_idx_x() as usize);
    // SAFETY: the partition wrote `splits[tile]` and `splits[tile + 1]` for every launched tile;
    // the shared buffer holds a tile; barriers separate the phases that share it.
    unsafe {
        let (a_curr, a_next) = (*splits.add(tile_index), *splits.add(tile_index + 1));
        let tile = PathTile::new(tile_index, BLOCK * ITEMS, m + n, a_curr, a_next);
        let shared = SharedKeys::<K>::at_offset(0);
        let gathered = tile.gather::<K, BLOCK, ITEMS>(tid, a, b);
        tile.scatter(gathered, shared, |k| tid + k * BLOCK);
        sync_threads();
        let merged = tile.merge_thread::<K, _, ITEMS>(tid, shared);
        sync_threads();
        tile.scatter(merged, shared, |k| tid * ITEMS + k);
        sync_threads();
        tile.store::<K, _, BLOCK, ITEMS>(tid, shared, c);
    }
}
