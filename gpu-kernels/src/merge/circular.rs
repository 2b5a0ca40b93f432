//! PMPP 12.7 (Figs. 12.17–12.20), the circular-buffer merge kernel: the tiled kernel of 12.6,
//! except that `a_s` and `b_s` are circular buffers. The keys a tile did not consume stay
//! where they are; only as many keys as were consumed are loaded behind them. So every key of
//! A and B is read from global memory once, instead of about twice.
//!
//! The wrap-around is hidden in [`co_rank_circular`] and [`merge_sequential_circular`] (and in
//! the [`Circular`] view the loads write through), so the per-thread work reads like the tiled
//! kernel's. Each buffer is described by where its unconsumed keys start (`a_s_start`) and
//! how many it holds (`a_s_len`); a buffer is full except near the end of the block's run,
//! where fewer keys remain than fit. Like the tiled kernel, each thread searches once per
//! tile (its end is its neighbour's start, through `splits`), and the merged tile is staged in
//! `c_s` and stored coalesced while the next tile loads.

use super::circular_buffer::{Circular, co_rank_circular, merge_sequential_circular};
use super::keys::{KeyReader, KeyRun, KeyWriter, MergeKey, SharedKeys};
use super::tiled::{TileBuffers, block_co_ranks, store_staged};
use super::tiles::{BLOCK_THREADS, ELEMENTS_PER_THREAD, thread_range, tile_size, tiled_block_range};
use crate::device::thread::*;

/// What a block has merged of its range and what its buffers hold; every thread holds the
/// same copy. `C` is the coarsening factor: outputs per thread per tile.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CircularBlock<const C: usize = ELEMENTS_PER_THREAD> {
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
    /// Where the unconsumed keys start in `a_s` and `b_s` (the book's `A_S_start`, `B_S_start`).
    a_s_start: usize,
    b_s_start: usize,
    /// How many unconsumed keys `a_s` and `b_s` hold.
    a_s_len: usize,
    b_s_len: usize,
    /// Outputs of the last tile waiting in `c_s` (they end at `c_completed`).
    c_staged: usize,
}

impl<const C: usize> CircularBlock<C> {
    /// Output keys per tile, and the capacity of the circular buffers `a_s` and `b_s` (and of
    /// `c_s`).
    pub const TILE_SIZE: usize = tile_size(C);

    /// The block that writes outputs `[c_curr, c_next)`, which take A's keys
    /// `[a_curr, a_next)` (the co-ranks of `c_curr` and `c_next`) and B's the rest; both
    /// buffers start empty.
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
            a_s_start: 0,
            b_s_start: 0,
            a_s_len: 0,
            b_s_len: 0,
            c_staged: 0,
        }
    }

    /// Tiles in the block's range (the book's `total_iteration`); the same for every thread.
    #[inline(always)]
    pub fn total_iterations(&self) -> usize {
        self.c_length.div_ceil(Self::TILE_SIZE)
    }

    /// Outputs of this tile: `TILE_SIZE`, or fewer for the last tile.
    #[inline(always)]
    fn c_tile(&self) -> usize {
        Self::TILE_SIZE.min(self.c_length - self.c_completed)
    }

    /// Phase 1: thread `tid`'s share of storing the last tile's outputs from `c_s`, and of
    /// refilling the buffers: behind the unconsumed keys, as many new keys as there is room
    /// for (what the last tile consumed, or everything at the start), but none past the
    /// block's runs. Coalesced: consecutive threads move consecutive keys. Afterwards each
    /// buffer holds `min(TILE_SIZE, keys left in its run)`.
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
        let a_loaded = self.a_consumed + self.a_s_len;
        let b_loaded = self.b_consumed + self.b_s_len;
        let a_new = (Self::TILE_SIZE - self.a_s_len).min(self.a_length - a_loaded);
        let b_new = (Self::TILE_SIZE - self.b_s_len).min(self.b_length - b_loaded);
        // SAFETY: the new keys follow the loaded ones inside the block's runs, and go to the
        // free part of each buffer (`a_s_len + a_new <= TILE_SIZE`), which `Circular` wraps.
        unsafe {
            self.store_tile(tid, c, s);
            let a_src = a.skip(self.a_curr + a_loaded);
            let b_src = b.skip(self.b_curr + b_loaded);
            let a_dst = Circular::new(s.a_s, self.a_s_start, Self::TILE_SIZE).skip(self.a_s_len);
            let b_dst = Circular::new(s.b_s, self.b_s_start, Self::TILE_SIZE).skip(self.b_s_len);
            let mut i = tid;
            while i < a_new {
                a_dst.store(i, a_src.load(i));
                i += BLOCK_THREADS;
            }
            let mut i = tid;
            while i < b_new {
                b_dst.store(i, b_src.load(i));
                i += BLOCK_THREADS;
            }
        }
        self.a_s_len += a_new;
        self.b_s_len += b_new;
    }

    /// Phase 2: thread `tid` co-ranks the start of its chunk of the tile's outputs in the
    /// circular buffers and publishes it in `splits[tid]`; the last thread also co-ranks the
    /// end of the tile, `splits[BLOCK_THREADS]`.
    ///
    /// # Safety
    /// The buffers have been refilled by all threads (phase 1, then a barrier).
    #[inline(always)]
    pub unsafe fn split_tile<K, S, X>(&self, tid: usize, s: TileBuffers<S, X>)
    where
        K: MergeKey,
        S: KeyReader<K>,
        X: KeyWriter<u32>,
    {
        let (m, n) = (self.a_s_len, self.b_s_len);
        let (a_s_start, b_s_start) = (self.a_s_start, self.b_s_start);
        let c_tile = self.c_tile();
        let (c_curr, _) = thread_range(tid, c_tile, C);
        // SAFETY: c_curr <= c_tile <= a_s_len + b_s_len (each buffer holds
        // min(TILE_SIZE, keys left), and c_tile <= min(TILE_SIZE, keys left in both)), so the
        // searches stay in the buffered keys.
        unsafe {
            let a_curr = co_rank_circular(c_curr, s.a_s, m, s.b_s, n, a_s_start, b_s_start, Self::TILE_SIZE);
            s.splits.store(tid, a_curr as u32);
            if tid == BLOCK_THREADS - 1 {
                let a_tile =
                    co_rank_circular(c_tile, s.a_s, m, s.b_s, n, a_s_start, b_s_start, Self::TILE_SIZE);
                s.splits.store(BLOCK_THREADS, a_tile as u32);
            }
        }
    }

    /// Phase 3: thread `tid` merges its chunk, from `splits[tid]` to `splits[tid + 1]` of the
    /// A buffer (and the matching keys of B), into `c_s`, the tiled kernel's code through the
    /// circular helper; then every thread drops the keys the tile merged from the front of
    /// each buffer. As in the tiled kernel, the co-rank of the tile's outputs over the
    /// buffered keys is the co-rank over the rest of the runs.
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
        // SAFETY: the splits are co-ranks of c_curr <= c_next <= c_tile in the buffered keys,
        // so the merged slices lie in them; threads write disjoint parts of `c_s`.
        let a_s_consumed = unsafe {
            let a_curr = s.splits.load(tid) as usize;
            let a_next = s.splits.load(tid + 1) as usize;
            let b_curr = c_curr - a_curr;
            let b_next = c_next - a_next;
            let (a_s_curr, b_s_curr) =
                (Self::wrap(self.a_s_start + a_curr), Self::wrap(self.b_s_start + b_curr));
            let c_out = s.c_s.skip(c_curr);
            merge_sequential_circular(
                s.a_s,
                a_next - a_curr,
                s.b_s,
                b_next - b_curr,
                c_out,
                a_s_curr,
                b_s_curr,
                Self::TILE_SIZE,
            );
            s.splits.load(BLOCK_THREADS) as usize
        };
        let b_s_consumed = c_tile - a_s_consumed;
        self.a_s_start = Self::wrap(self.a_s_start + a_s_consumed);
        self.b_s_start = Self::wrap(self.b_s_start + b_s_consumed);
        self.a_s_len -= a_s_consumed;
        self.b_s_len -= b_s_consumed;
        self.a_consumed += a_s_consumed;
        self.b_consumed += b_s_consumed;
        self.c_completed += c_tile;
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

    /// `position mod TILE_SIZE` for `position < 2 · TILE_SIZE`.
    #[inline(always)]
    fn wrap(position: usize) -> usize {
        if position >= Self::TILE_SIZE { position - Self::TILE_SIZE } else { position }
    }
}

/// Merges `a` (`m` keys) and `b` (`n` keys) into `c`, stable (A first on ties), `C` outputs
/// per thread per tile.
///
/// # Safety
/// As [`merge_tiled`](super::merge_tiled) with the same `C`: the same launch shape and shared
/// memory.
#[inline(always)]
pub unsafe fn merge_circular<K: MergeKey, const C: usize>(
    a: *const K,
    m: usize,
    b: *const K,
    n: usize,
    c: *mut K,
) {
    let tid = thread_idx_x() as usize;
    let (c_curr, c_next) = tiled_block_range(m + n, grid_dim_x() as usize, block_idx_x() as usize, C);
    // SAFETY: the launch provides the header and the buffers; between barriers every thread
    // writes only its own keys of the buffers (in their free parts), and the other threads
    // only read them after the next barrier (see the phases).
    unsafe {
        let buffers = TileBuffers::<SharedKeys<K>, SharedKeys<u32>>::in_shared_memory(tile_size(C));
        let (a_curr, a_next) = block_co_ranks(tid, a, m, b, n, c_curr, c_next);
        let mut block = CircularBlock::<C>::new(c_curr, c_next, a_curr, a_next);
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
