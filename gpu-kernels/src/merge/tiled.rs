//! PMPP 12.6 (Figs. 12.11–12.13), the tiled merge kernel. One thread per block co-ranks the
//! block's output range in global memory and shares the result through shared memory. The
//! block then walks its range one tile at a time: it loads the next [`TILE_SIZE`] keys of A
//! and of B into shared memory with coalesced loads, every thread co-ranks and merges its
//! coarsened chunk of the tile there, and the block counts how much of each tile it consumed.
//! Only about half of what is loaded is consumed per tile; the rest is loaded again next time
//! (the circular kernel fixes that).
//!
//! Three places where the book's code needs care, handled here: only keys inside the block's
//! runs are loaded (a partial last tile leaves the rest of the buffer stale); the co-rank of a
//! tile is taken over the keys actually loaded, not over `tile_size` of each; and how much of
//! A a tile consumed is the co-rank of the tile's actual output count.
//!
//! The block's work is written as phases between barriers ([`TiledBlock`]'s methods); the
//! kernel runs them on each thread with `sync_threads` between, and the host tests run them
//! for every thread of a block in turn.

use super::keys::{KeyReader, KeyRun, KeyWriter, MergeKey, SharedKeys};
use super::sequential::{co_rank_by, merge_sequential_by};
use super::tiles::{BLOCK_THREADS, TILE_SIZE, a_s_offset, thread_range, tiled_block_range};
use crate::device::SharedArray;
use crate::device::thread::*;

/// What a block has merged of its range; every thread holds the same copy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TiledBlock {
    /// Where the block's runs start in A, B and C (the book's `A_curr`, `B_curr`, `C_curr`).
    a_curr: usize,
    b_curr: usize,
    c_curr: usize,
    /// Lengths of the block's runs.
    a_length: usize,
    b_length: usize,
    c_length: usize,
    /// Keys of the runs merged by the tiles so far.
    a_consumed: usize,
    b_consumed: usize,
    c_completed: usize,
}

impl TiledBlock {
    /// The block that writes outputs `[c_curr, c_next)`, which take A's keys
    /// `[a_curr, a_next)` (the co-ranks of `c_curr` and `c_next`) and B's the rest.
    #[inline(always)]
    pub fn new(c_curr: usize, c_next: usize, a_curr: usize, a_next: usize) -> Self {
        let b_curr = c_curr - a_curr;
        let b_next = c_next - a_next;
        Self {
            a_curr,
            b_curr,
            c_curr,
            a_length: a_next - a_curr,
            b_length: b_next - b_curr,
            c_length: c_next - c_curr,
            a_consumed: 0,
            b_consumed: 0,
            c_completed: 0,
        }
    }

    /// Tiles in the block's range (the book's `total_iteration`); the same for every thread.
    #[inline(always)]
    pub fn total_iterations(&self) -> usize {
        self.c_length.div_ceil(TILE_SIZE)
    }

    /// Keys of A in this tile's buffer: the next `TILE_SIZE`, or fewer at the end of the run.
    #[inline(always)]
    fn a_tile(&self) -> usize {
        TILE_SIZE.min(self.a_length - self.a_consumed)
    }

    /// Keys of B in this tile's buffer.
    #[inline(always)]
    fn b_tile(&self) -> usize {
        TILE_SIZE.min(self.b_length - self.b_consumed)
    }

    /// Outputs of this tile: `TILE_SIZE`, or fewer for the last tile.
    #[inline(always)]
    fn c_tile(&self) -> usize {
        TILE_SIZE.min(self.c_length - self.c_completed)
    }

    /// Phase 1: thread `tid`'s share of loading the tile's keys into `a_s` and `b_s`.
    /// Consecutive threads load consecutive keys (coalesced); keys past the block's runs are
    /// not loaded.
    ///
    /// # Safety
    /// `a` and `b` hold the keys of the block's runs; `a_s` and `b_s` hold `TILE_SIZE` keys
    /// each, and no other thread reads them until a barrier.
    #[inline(always)]
    pub unsafe fn load_tiles<K: MergeKey, W: KeyWriter<K>>(
        &self,
        tid: usize,
        a: *const K,
        b: *const K,
        a_s: W,
        b_s: W,
    ) {
        let (a_tile, b_tile) = (self.a_tile(), self.b_tile());
        // SAFETY: `i < a_tile` keys past A's first unconsumed key stay inside the block's run
        // of A and inside `a_s`; the same for B.
        unsafe {
            let a_next = a.skip(self.a_curr + self.a_consumed);
            let b_next = b.skip(self.b_curr + self.b_consumed);
            let mut i = tid;
            while i < a_tile {
                a_s.store(i, a_next.load(i));
                i += BLOCK_THREADS;
            }
            let mut i = tid;
            while i < b_tile {
                b_s.store(i, b_next.load(i));
                i += BLOCK_THREADS;
            }
        }
    }

    /// Phase 2: thread `tid` co-ranks its chunk of the tile's outputs in shared memory and
    /// merges it into `c`.
    ///
    /// # Safety
    /// The tile has been loaded by all threads (phase 1, then a barrier); `c` has room for the
    /// block's outputs.
    #[inline(always)]
    pub unsafe fn merge_tile<K: MergeKey, R: KeyReader<K>>(&self, tid: usize, a_s: R, b_s: R, c: *mut K) {
        let (a_tile, b_tile) = (self.a_tile(), self.b_tile());
        let (c_curr, c_next) = thread_range(tid, self.c_tile());
        // SAFETY: c_curr <= c_next <= c_tile <= a_tile + b_tile (a tile's outputs never need
        // more keys than were loaded, see `advance`), so the co-ranks and the merged slices lie
        // in the loaded keys; threads write disjoint parts of the block's outputs.
        unsafe {
            let a_curr = co_rank_by(c_curr, a_s, a_tile, b_s, b_tile);
            let a_next = co_rank_by(c_next, a_s, a_tile, b_s, b_tile);
            let b_curr = c_curr - a_curr;
            let b_next = c_next - a_next;
            let c_out = c.add(self.c_curr + self.c_completed + c_curr);
            merge_sequential_by(a_s.skip(a_curr), a_next - a_curr, b_s.skip(b_curr), b_next - b_curr, c_out);
        }
    }

    /// Phase 3, before the barrier that ends the tile: moves past the keys this tile merged.
    /// How many came from A is the co-rank of the tile's outputs over the loaded keys, which
    /// equals the co-rank over the rest of the runs: a tile of at most `TILE_SIZE` outputs
    /// takes at most `TILE_SIZE` keys of either array, and `a_tile` is `TILE_SIZE` unless the
    /// run of A ends first (and likewise for B).
    ///
    /// # Safety
    /// As [`merge_tile`](Self::merge_tile).
    #[inline(always)]
    pub unsafe fn advance<K: MergeKey, R: KeyReader<K>>(&mut self, a_s: R, b_s: R) {
        let c_tile = self.c_tile();
        // SAFETY: as in `merge_tile`, c_tile <= a_tile + b_tile.
        let a_tile_consumed = unsafe { co_rank_by(c_tile, a_s, self.a_tile(), b_s, self.b_tile()) };
        self.c_completed += c_tile;
        self.a_consumed += a_tile_consumed;
        self.b_consumed = self.c_completed - self.a_consumed;
    }
}

/// Merges `a` (`m` keys) and `b` (`n` keys) into `c`, stable (A first on ties).
///
/// # Safety
/// `a` holds `m` keys and `b` holds `n`, both sorted ascending; `c` has room for `m + n` keys
/// and overlaps neither. Blocks are [`BLOCK_THREADS`] threads along x, with
/// [`tiled_shared_bytes`](super::tiles::tiled_shared_bytes) of shared memory; the grid has
/// [`tiled_blocks`](super::tiles::tiled_blocks)`(m + n)` blocks (any number covers the output,
/// but each block merges at most `TILES_PER_BLOCK` tiles with that many).
#[inline(always)]
pub unsafe fn merge_tiled<K: MergeKey>(a: *const K, m: usize, b: *const K, n: usize, c: *mut K) {
    let tid = thread_idx_x() as usize;
    let (c_curr, c_next) = tiled_block_range(m + n, grid_dim_x() as usize, block_idx_x() as usize);
    // SAFETY: the launch provides the header and both buffers; between barriers every thread
    // writes only its own keys of the buffers, and the merge only reads them (see the phases).
    unsafe {
        let co_ranks = SharedArray::<u64>::at_offset(0);
        let a_s = SharedKeys::<K>::at_offset(a_s_offset(size_of::<K>()));
        let b_s = a_s.skip(TILE_SIZE);
        // One thread co-ranks the block's range in global memory; all read it after the barrier.
        if tid == 0 {
            co_ranks.write(0, co_rank_by(c_curr, a, m, b, n) as u64);
            co_ranks.write(1, co_rank_by(c_next, a, m, b, n) as u64);
        }
        sync_threads();
        let mut block = TiledBlock::new(c_curr, c_next, co_ranks.read(0) as usize, co_ranks.read(1) as usize);
        // The trip count is the same for every thread of the block, so the barriers are too.
        for _ in 0..block.total_iterations() {
            block.load_tiles(tid, a, b, a_s, b_s);
            sync_threads();
            block.merge_tile(tid, a_s, b_s, c);
            block.advance(a_s, b_s);
            sync_threads();
        }
    }
}
