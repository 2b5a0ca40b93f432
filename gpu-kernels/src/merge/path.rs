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
//!   shared load per key, no branch), and the block stages the merged tile in the same buffer
//!   and [`store`](PathTile::store)s it coalesced, 16 bytes per thread and store. Three
//!   barriers per tile, each key read once from DRAM and written once.
//!
//! What limits it is the SMs' integer pipe, not DRAM (`ncu`: ALU 83 % busy, DRAM 39 % in the
//! first version), so the per-key instructions are what is tuned: positions and co-ranks inside
//! a tile are 32-bit, and every tile but the last is **full**, a case (the const generic
//! `FULL`, the same for the whole block) that needs no clamp and no guard: a shared buffer one
//! key longer than the tile lets the serial merge read one past its runs unchecked.
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
use crate::device::store_global_16;
use crate::device::thread::*;

/// The outputs one block merges, and the keys of A and B they take: outputs
/// `[c_start, c_start + c_len)` are the stable merge of A's `[a_start, a_start + a_len)` and
/// B's `[b_start, b_start + b_len)`, so `a_len + b_len = c_len`. In shared memory the tile's
/// keys of A come first, then those of B. Positions inside a tile are 32-bit.
///
/// The phases take `FULL`: whether the tile has `BLOCK × ITEMS` outputs (every tile but the
/// last). A full tile needs no clamps or guards; a partial one clamps every read into the tile
/// and drops every write past it.
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

    /// Position `x` of the tile, clamped to its last key unless the tile is full.
    #[inline(always)]
    fn clamp<const FULL: bool>(&self, x: u32) -> u32 {
        if FULL { x } else { x.min(self.c_len - 1) }
    }

    /// Phase 1a: thread `tid`'s `ITEMS` keys of the tile, tile positions `tid + k * BLOCK`
    /// (consecutive threads, consecutive keys): A's keys first, then B's. Every load is issued
    /// before any is used; in a partial tile, positions past its end read its last key again,
    /// and [`scatter`](Self::scatter) drops them.
    ///
    /// # Safety
    /// `a` and `b` hold the tile's keys; the tile is not empty, and full if `FULL`.
    #[inline(always)]
    pub unsafe fn gather<K: MergeKey, const BLOCK: usize, const ITEMS: usize, const FULL: bool>(
        &self,
        tid: u32,
        a: *const K,
        b: *const K,
    ) -> [K; ITEMS] {
        // Tile position x is A's key `a_start + x` below `a_len`, else B's `b_start + x - a_len`:
        // one base pointer per run, chosen per key.
        let a_base = a.wrapping_add(self.a_start);
        let b_base = b.wrapping_add(self.b_start).wrapping_sub(self.a_len as usize);
        if FULL {
            // Position `tid + k * BLOCK` is a constant offset from this thread's first in
            // either run: two base addresses for all `ITEMS` loads.
            let (a_tid, b_tid) = (a_base.wrapping_add(tid as usize), b_base.wrapping_add(tid as usize));
            // SAFETY: every position is inside the full tile, whose keys lie in A and B.
            return core::array::from_fn(|k| unsafe {
                if tid + ((k * BLOCK) as u32) < self.a_len {
                    *a_tid.wrapping_add(k * BLOCK)
                } else {
                    *b_tid.wrapping_add(k * BLOCK)
                }
            });
        }
        // SAFETY: positions are clamped into the tile, whose keys lie in A and B.
        core::array::from_fn(|k| unsafe {
            let x = self.clamp::<FULL>(tid + (k * BLOCK) as u32);
            *if x < self.a_len { a_base } else { b_base }.wrapping_add(x as usize)
        })
    }

    /// Phase 1b: thread `tid` writes the keys it gathered (or merged) to tile positions
    /// `position(k)` of `tile`, those inside the tile only (all of them when it is full).
    ///
    /// # Safety
    /// `tile` has room for the tile's keys; no other thread accesses these positions
    /// concurrently; every position is inside the tile if `FULL`.
    #[inline(always)]
    pub unsafe fn scatter<K: MergeKey, S: KeyWriter<K>, const ITEMS: usize, const FULL: bool>(
        &self,
        keys: [K; ITEMS],
        tile: S,
        position: impl Fn(u32) -> u32,
    ) {
        for (k, &key) in keys.iter().enumerate() {
            let x = position(k as u32);
            if FULL || x < self.c_len {
                // SAFETY: x is inside the tile, per the check or the caller, and this thread's.
                unsafe { tile.store(x as usize, key) };
            }
        }
    }

    /// Phase 2: thread `tid` co-ranks the start of its `ITEMS` outputs, `tid * ITEMS`, in the
    /// shared tile (32-bit), and merges them serially into registers: A's key when
    /// `a_key <= b_key` (stable), then the next key of the run it came from. In a full tile the
    /// next key may be the one past a run (B's first, or the spare key after the tile), never
    /// used; in a partial tile reads are clamped, and outputs past its end are garbage that
    /// [`scatter`](Self::scatter) drops.
    ///
    /// # Safety
    /// The tile's keys are in `tile` (A's, then B's), written by every thread before a barrier;
    /// `tile` has room for one key past the tile.
    #[inline(always)]
    pub unsafe fn merge_thread<K: MergeKey, S: KeyReader<K>, const ITEMS: usize, const FULL: bool>(
        &self,
        tid: u32,
        tile: S,
    ) -> [K; ITEMS] {
        let (a_len, b_len) = (self.a_len, self.b_len);
        let diag = (tid * ITEMS as u32).min(self.c_len);
        // SAFETY: B's keys start `a_len` into the tile; diag <= a_len + b_len; reads stay in
        // the tile and the spare key after it (see above).
        unsafe {
            let at = |x: u32| tile.load(self.clamp::<FULL>(x) as usize);
            // `i` and `j` are tile positions: A's next key, and B's (which starts at `a_len`, so
            // B is used up when `j` reaches `c_len`).
            let mut i = co_rank_by(diag, tile, a_len, tile.skip(a_len as usize), b_len);
            let mut j = a_len + (diag - i);
            let (mut a_key, mut b_key) = (at(i), at(j));
            core::array::from_fn(|_| {
                let take_a = j >= self.c_len || (i < a_len && a_key <= b_key);
                let key = if take_a { a_key } else { b_key };
                let next = if take_a { i } else { j } + 1;
                let next_key = at(next);
                if take_a {
                    (a_key, i) = (next_key, next);
                } else {
                    (b_key, j) = (next_key, next);
                }
                key
            })
        }
    }

    /// Phase 3: thread `tid` stores its share of the merged tile to the output, consecutive
    /// threads taking consecutive keys. A full tile goes in vectors of `V` keys (16 bytes),
    /// vector `tid + k * BLOCK` of the tile; a partial one key by key, position
    /// `tid + k * BLOCK`.
    ///
    /// # Safety
    /// The merged tile is in `tile`, staged by every thread before a barrier; `c` has room for
    /// the merge's outputs and starts aligned to `V` keys; so does every full tile (`BLOCK ×
    /// ITEMS` is a multiple of `V`).
    #[inline(always)]
    pub unsafe fn store<
        K: MergeKey,
        S: KeyReader<K>,
        const BLOCK: usize,
        const ITEMS: usize,
        const V: usize,
        const FULL: bool,
    >(
        &self,
        tid: u32,
        tile: S,
        c: *mut K,
    ) {
        let c = c.wrapping_add(self.c_start);
        if FULL {
            let vectors = (BLOCK * ITEMS / V) as u32;
            for k in 0..ITEMS.div_ceil(V) {
                let v = tid + (k * BLOCK) as u32;
                if v < vectors {
                    let at = v as usize * V;
                    // SAFETY: vector v holds keys `at .. at + V` of the tile, inside it, and
                    // aligned as the tile and `c` are.
                    unsafe { store_global_16(c.add(at), tile.load_vector::<V>(at)) };
                }
            }
            return;
        }
        // SAFETY: reads are clamped into the tile; writes are inside it, per the check. All of
        // a thread's reads come before its writes.
        unsafe {
            let keys: [K; ITEMS] =
                core::array::from_fn(|k| tile.load(self.clamp::<false>(tid + (k * BLOCK) as u32) as usize));
            self.scatter::<K, _, ITEMS, false>(keys, c, |k| tid + k * BLOCK as u32);
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
/// between the co-ranks `splits[tile]` and `splits[tile + 1]`; full tiles are stored in
/// vectors of `V` keys (16 bytes).
///
/// # Safety
/// As [`merge_path_partition`], whose `splits` (for this tile size) this launch reads; `c`
/// has room for `m + n` keys, overlaps neither input and is 16-byte aligned; `BLOCK × ITEMS` is
/// a multiple of `V`; the launch has `BLOCK` threads per block, one block per tile, and
/// `BLOCK × ITEMS + 1` keys of dynamic shared memory ([`PathShape::shared_bytes`]).
///
/// [`PathShape::shared_bytes`]: super::tiles::PathShape::shared_bytes
#[inline(always)]
pub unsafe fn merge_path<K: MergeKey, const BLOCK: usize, const ITEMS: usize, const V: usize>(
    a: *const K,
    m: usize,
    b: *const K,
    n: usize,
    c: *mut K,
    splits: *const usize,
) {
    let tile_index = block_idx_x() as usize;
    // SAFETY: the partition wrote `splits[tile]` and `splits[tile + 1]` for every launched tile.
    let tile = unsafe {
        PathTile::new(tile_index, BLOCK * ITEMS, m + n, *splits.add(tile_index), *splits.add(tile_index + 1))
    };
    // The same branch for the whole block: every tile but the last is full.
    // SAFETY: per the caller.
    unsafe {
        if tile.c_len as usize == BLOCK * ITEMS {
            merge_tile::<K, BLOCK, ITEMS, V, true>(tile, a, b, c);
        } else {
            merge_tile::<K, BLOCK, ITEMS, V, false>(tile, a, b, c);
        }
    }
}

/// One block's tile, phase by phase; `FULL` when it has `BLOCK × ITEMS` outputs.
///
/// # Safety
/// As [`merge_path`]; `tile` is this block's.
#[inline(always)]
unsafe fn merge_tile<
    K: MergeKey,
    const BLOCK: usize,
    const ITEMS: usize,
    const V: usize,
    const FULL: bool,
>(
    tile: PathTile,
    a: *const K,
    b: *const K,
    c: *mut K,
) {
    let tid = thread_idx_x();
    // SAFETY: the shared buffer holds a tile and a spare key; barriers separate the phases
    // that share it.
    unsafe {
        let shared = SharedKeys::<K>::at_offset(0);
        let gathered = tile.gather::<K, BLOCK, ITEMS, FULL>(tid, a, b);
        tile.scatter::<K, _, ITEMS, FULL>(gathered, shared, |k| tid + k * BLOCK as u32);
        sync_threads();
        let merged = tile.merge_thread::<K, _, ITEMS, FULL>(tid, shared);
        sync_threads();
        tile.scatter::<K, _, ITEMS, FULL>(merged, shared, |k| tid * ITEMS as u32 + k);
        sync_threads();
        tile.store::<K, _, BLOCK, ITEMS, V, FULL>(tid, shared, c);
    }
}
