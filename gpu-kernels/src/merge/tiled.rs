//! PMPP 12.6 (Figs. 12.11–12.13), the tiled merge kernel. One thread per block co-ranks the
//! block's output range in global memory and shares the result through shared memory. The
//! block then walks its range one tile at a time: it loads the next tile of A and of B
//! (`BLOCK_THREADS * C` keys each, [`TILE_SIZE`] in the main entry points) into shared memory
//! with coalesced loads, every thread co-ranks and merges its coarsened chunk of `C` outputs of
//! the tile there, and the block counts how much of each tile it consumed.
//! Only about half of what is loaded is consumed per tile; the rest is loaded again next time
//! (the circular kernel fixes that).
//!
//! Three places where the book's code needs care, handled here: only keys inside the block's
//! runs are loaded (a partial last tile leaves the rest of the buffer stale); the co-rank of a
//! tile is taken over the keys actually loaded, not over `tile_size` of each; and how much of
//! A a tile consumed is the co-rank of the tile's actual output count.
//!
//! Two changes to the book's code for speed, neither changing what is computed: each thread
//! co-ranks only the start of its chunk and takes its end from its neighbour (through the
//! `splits` array in shared memory), so a tile costs one binary search per thread instead of
//! three; and the merged tile is staged in shared memory (`c_s`) and stored to global memory
//! coalesced, while the next tile loads.
//!
//! The block's work is written as phases between barriers ([`TiledBlock`]'s methods); the
//! kernel runs them on each thread with `sync_threads` between, and the host tests run them
//! for every thread of a block in turn.
//!
//! [`TILE_SIZE`]: super::tiles::TILE_SIZE

use super::keys::{KeyReader, KeyRun, KeyWriter, MergeKey, SharedKeys};
use super::sequential::{co_rank_by, merge_sequential_by};
use super::tiles::{
    BLOCK_THREADS, ELEMENTS_PER_THREAD, SPLITS_OFFSET, a_s_offset, thread_range, tile_size, tiled_block_range,
};
use crate::device::SharedArray;
use crate::device::thread::*;

/// The shared memory of a tiled block: the A and B tiles, the staged outputs, and the
/// per-thread splits of the tile. `S` is [`SharedKeys`] on the GPU and a host pointer in tests.
#[derive(Clone, Copy, Debug)]
pub struct TileBuffers<S, X> {
    /// The tile of A (the book's `A_S`).
    pub a_s: S,
    /// The tile of B (the book's `B_S`).
    pub b_s: S,
    /// The merged tile, waiting to be stored to global memory.
    pub c_s: S,
    /// `BLOCK_THREADS + 1` co-ranks in the tile: where each thread's chunk starts in `a_s`,
    /// and how many keys of `a_s` the tile consumes.
    pub splits: X,
}

impl<K: Copy> TileBuffers<SharedKeys<K>, SharedKeys<u32>> {
    /// The buffers in the launch-sized shared memory, as laid out in
    /// [`tiles`](super::tiles): header (co-ranks, splits), then `a_s`, `b_s`, `c_s` of
    /// `capacity` keys each (the tile size).
    ///
    /// # Safety
    /// The launch provides [`tiled_shared_bytes`](super::tiles::tiled_shared_bytes) of
    /// shared memory for this tile size.
    #[inline(always)]
    pub unsafe fn in_shared_memory(capacity: usize) -> Self {
        // SAFETY: inside the launch's shared memory, per the caller.
        unsafe {
            let a_s = SharedKeys::<K>::at_offset(a_s_offset(size_of::<K>()));
            Self {
                a_s,
                b_s: a_s.skip(capacity),
                c_s: a_s.skip(2 * capacity),
                splits: SharedKeys::at_offset(SPLITS_OFFSET),
            }
        }
    }
}

/// What a block has merged of its range; every thread holds the same copy. `C` is the
/// coarsening factor: outputs per thread per tile.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TiledBlock<const C: usize = ELEMENTS_PER_THREAD> {
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
    /// Outputs of the last tile waiting in `c_s` (they end at `c_completed`).
    c_staged: usize,
}

impl<const C: usize> TiledBlock<C> {
    /// Output keys per tile, and the capacity of `a_s`, `b_s` and `c_s`.
    pub const TILE_SIZE: usize = tile_size(C);

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
            c_staged: 0,
        }
    }

    /// Tiles in the block's range (the book's `total_iteration`); the same for every thread.
    #[inline(always)]
    pub fn total_iterations(&self) -> usize {
        self.c_length.div_ceil(Self::TILE_SIZE)
    }

    /// Keys of A in this tile's buffer: the next `TILE_SIZE`, or fewer at the end of the run.
    #[inline(always)]
    fn a_tile(&self) -> usize {
        Self::TILE_SIZE.min(self.a_length - self.a_consumed)
    }

    /// Keys of B in this tile's buffer.
    #[inline(always)]
    fn b_tile(&self) -> usize {
        Self::TILE_SIZE.min(self.b_length - self.b_consumed)
    }

    /// Outputs of this tile: `TILE_SIZE`, or fewer for the last tile.
    #[inline(always)]
    fn c_tile(&self) -> usize {
        Self::TILE_SIZE.min(self.c_length - self.c_completed)
    }

    /// Phase 1: thread `tid`'s share of storing the last tile's outputs from `c_s` and of
    /// loading this tile's keys into `a_s` and `b_s`. Consecutive threads move consecutive
    /// keys (coalesced); keys past the block's runs are not loaded.
    ///
    /// # Safety
    /// `a`, `b` and `c` hold the block's runs; the buffers are as in [`TileBuffers`]; a
    /// barrier separates this phase from the others.
    #[inline(always)]
    pub unsafe fn load_tiles<K, S, X>(
        &mut self,
        tid: usize,
        a: *const K,
        b: *const K,
        c: *mut K,
        s: TileBuffers<S, X>,
    ) where
        K: MergeKey,
        S: KeyReader<K> + KeyWriter<K>,
        X: Copy,
    {
        let (a_tile, b_tile) = (self.a_tile(), self.b_tile());
        // SAFETY: `i < a_tile` keys past A's first unconsumed key stay inside the block's run
        // of A and inside `a_s`; the same for B; the staged outputs are the last tile's.
        unsafe {
            self.store_tile(tid, c, s);
            let a_next = a.skip(self.a_curr + self.a_consumed);
            let b_next = b.skip(self.b_curr + self.b_consumed);
            let mut i = tid;
            while i < a_tile {
                s.a_s.store(i, a_next.load(i));
                i += BLOCK_THREADS;
            }
            let mut i = tid;
            while i < b_tile {
                s.b_s.store(i, b_next.load(i));
                i += BLOCK_THREADS;
            }
        }
    }

    /// Phase 2: thread `tid` co-ranks the start of its chunk of the tile's outputs in shared
    /// memory and publishes it in `splits[tid]`; the last thread also co-ranks the end of the
    /// tile, `splits[BLOCK_THREADS]`.
    ///
    /// # Safety
    /// The tile has been loaded by all threads (phase 1, then a barrier).
    #[inline(always)]
    pub unsafe fn split_tile<K, S, X>(&self, tid: usize, s: TileBuffers<S, X>)
    where
        K: MergeKey,
        S: KeyReader<K>,
        X: KeyWriter<u32>,
    {
        let (a_tile, b_tile) = (self.a_tile(), self.b_tile());
        let c_tile = self.c_tile();
        let (c_curr, _) = thread_range(tid, c_tile, C);
        // SAFETY: c_curr <= c_tile <= a_tile + b_tile (a tile's outputs never need more keys
        // than were loaded, see `merge_tile`), so the searches stay in the loaded keys.
        unsafe {
            s.splits.store(tid, co_rank_by(c_curr, s.a_s, a_tile, s.b_s, b_tile) as u32);
            if tid == BLOCK_THREADS - 1 {
                s.splits.store(BLOCK_THREADS, co_rank_by(c_tile, s.a_s, a_tile, s.b_s, b_tile) as u32);
            }
        }
    }

    /// Phase 3: thread `tid` merges its chunk, from `splits[tid]` to `splits[tid + 1]` in
    /// `a_s` (and the matching keys of `b_s`), into `c_s`; then every thread moves past the
    /// tile. How many keys came from A is the co-rank of the tile's outputs over the loaded
    /// keys, which equals the co-rank over the rest of the runs: a tile of at most
    /// `TILE_SIZE` outputs takes at most `TILE_SIZE` keys of either array, and `a_tile` is
    /// `TILE_SIZE` unless the run of A ends first (and likewise for B).
    ///
    /// # Safety
    /// The splits have been published by all threads (phase 2, then a barrier).
    #[inline(always)]
    pub unsafe fn merge_tile<K, S, X>(&mut self, tid: usize, s: TileBuffers<S, X>)
    where
        K: MergeKey,
        S: KeyReader<K> + KeyWriter<K>,
        X: KeyReader<u32>,
    {
        let c_tile = self.c_tile();
        let (c_curr, c_next) = thread_range(tid, c_tile, C);
        // SAFETY: the splits are co-ranks of c_curr <= c_next <= c_tile in the loaded keys, so
        // the merged slices lie in them; threads write disjoint parts of `c_s`.
        unsafe {
            let a_curr = s.splits.load(tid) as usize;
            let a_next = s.splits.load(tid + 1) as usize;
            let b_curr = c_curr - a_curr;
            let b_next = c_next - a_next;
            merge_sequential_by(
                s.a_s.skip(a_curr),
                a_next - a_curr,
                s.b_s.skip(b_curr),
                b_next - b_curr,
                s.c_s.skip(c_curr),
            );
            self.a_consumed += s.splits.load(BLOCK_THREADS) as usize;
        }
        self.c_completed += c_tile;
        self.b_consumed = self.c_completed - self.a_consumed;
        self.c_staged = c_tile;
    }

    /// Thread `tid`'s share of storing the staged outputs of the last tile from `c_s` to
    /// global memory, coalesced. Part of [`load_tiles`](Self::load_tiles); on its own after
    /// the last tile.
    ///
    /// # Safety
    /// `c` holds the block's outputs; a barrier follows the last [`merge_tile`](Self::merge_tile).
    #[inline(always)]
    pub unsafe fn store_tile<K: MergeKey, S: KeyReader<K>, X: Copy>(
        &mut self,
        tid: usize,
        c: *mut K,
        s: TileBuffers<S, X>,
    ) {
        // SAFETY: the staged outputs are the `c_staged` keys that end at `c_completed`.
        unsafe { store_staged(tid, c.add(self.c_curr + self.c_completed - self.c_staged), self.c_staged, s) };
        self.c_staged = 0;
    }
}

/// Thread `tid`'s share of copying the `count` outputs staged in `c_s` to `c_out`: the block's
/// threads take every `BLOCK_THREADS`-th key, so the stores are coalesced. Shared by the tiled
/// and circular kernels.
///
/// # Safety
/// `c_out` has room for `count` keys, `count` of them are staged, and a barrier separates the
/// staging from this copy.
#[inline(always)]
pub(super) unsafe fn store_staged<K: MergeKey, S: KeyReader<K>, X: Copy>(
    tid: usize,
    c_out: *mut K,
    count: usize,
    s: TileBuffers<S, X>,
) {
    let mut i = tid;
    while i < count {
        // SAFETY: `i < count`, per the caller.
        unsafe { c_out.store(i, s.c_s.load(i)) };
        i += BLOCK_THREADS;
    }
}

/// PMPP 12.6: thread 0 co-ranks the block's output range `[c_curr, c_next)` in global memory
/// and shares the result through the co-rank slots at the start of shared memory; after the
/// barrier every thread returns the block's A range `(a_curr, a_next)`. Shared by the tiled and
/// circular kernels.
///
/// # Safety
/// Called by every thread of the block (it holds a barrier); `a` holds `m` sorted keys, `b`
/// holds `n`, and `c_curr <= c_next <= m + n`; the launch provides the header's co-rank slots.
#[inline(always)]
pub(super) unsafe fn block_co_ranks<K: MergeKey>(
    tid: usize,
    a: *const K,
    m: usize,
    b: *const K,
    n: usize,
    c_curr: usize,
    c_next: usize,
) -> (usize, usize) {
    // SAFETY: per the caller; only thread 0 writes the slots, all read them after the barrier.
    unsafe {
        let co_ranks = SharedArray::<u64>::at_offset(0);
        if tid == 0 {
            co_ranks.write(0, co_rank_by(c_curr, a, m, b, n) as u64);
            co_ranks.write(1, co_rank_by(c_next, a, m, b, n) as u64);
        }
        sync_threads();
        (co_ranks.read(0) as usize, co_ranks.read(1) as usize)
    }
}

/// Merges `a` (`m` keys) and `b` (`n` keys) into `c`, stable (A first on ties), `C` outputs
/// per thread per tile.
///
/// # Safety
/// `a` holds `m` keys and `b` holds `n`, both sorted ascending; `c` has room for `m + n` keys
/// and overlaps neither. Blocks are [`BLOCK_THREADS`] threads along x, with
/// [`tiled_shared_bytes`](super::tiles::tiled_shared_bytes)`(size_of::<K>(), C)` of shared
/// memory; the grid has [`tiled_blocks`](super::tiles::tiled_blocks)`(m + n, C)` blocks (any
/// number covers the output, but each block merges at most `TILES_PER_BLOCK` tiles with that
/// many).
#[inline(always)]
pub unsafe fn merge_tiled<K: MergeKey, const C: usize>(
    a: *const K,
    m: usize,
    b: *const K,
    n: usize,
    c: *mut K,
) {
    let tid = thread_idx_x() as usize;
    let (c_curr, c_next) = tiled_block_range(m + n, grid_dim_x() as usize, block_idx_x() as usize, C);
    // SAFETY: the launch provides the header and the buffers; between barriers every thread
    // writes only its own keys of the buffers, and the other threads only read them after the
    // next barrier (see the phases).
    unsafe {
        let buffers = TileBuffers::<SharedKeys<K>, SharedKeys<u32>>::in_shared_memory(tile_size(C));
        let (a_curr, a_next) = block_co_ranks(tid, a, m, b, n, c_curr, c_next);
        let mut block = TiledBlock::<C>::new(c_curr, c_next, a_curr, a_next);
        // The trip count is the same for every thread of the block, so the barriers are too.
        for _ in 0..block.total_iterations() {
            block.load_tiles(tid, a, b, c, buffers);
            sync_threads();
            block.split_tile(tid, buffers);
            sync_threads();
            block.merge_tile(tid, buffers);
            sync_threads();
        }
        block.store_tile(tid, c, buffers);
    }
}
