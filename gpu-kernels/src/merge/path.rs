//! Beyond the book: merge path (Green, McColl & Bader, "GPU Merge Path", 2012; Odeh et al.,
//! "Merge Path", 2012), the design of the fastest GPU merges. The book's co-rank (12.4) does
//! all the searching; what changes is who searches where, and how often each key moves.
//!
//! * A small **partition kernel** ([`merge_path_partition`]) co-ranks the start of every tile
//!   of `BLOCK × ITEMS` outputs once, in global memory, and writes the 64-bit results to a
//!   `splits` array: one thread per tile, `⌈(m + n) / tile⌉ + 1` searches in all. Each search
//!   finds the co-rank's bits from the highest ([`co_rank_shared_probes`]), so A's probes at its
//!   first levels are the same few keys for every tile and the caches serve them; only the deep
//!   levels and B's probes reach DRAM. On an H200 (2^27 + 2^27 `i32`, `ncu`) that took the
//!   partition from 131 MB of DRAM reads and 62 µs (the book's bisection) to 84 MB and 43 µs:
//!   nearly every probe is a DRAM access of its own, and their count sets the time. From
//!   [`PARTITION_TWO_LEVEL_MIN_TILES`] tiles on it runs in two levels: one thread in
//!   [`PARTITION_GROUP`] searches the whole merge, the others only between two of those co-ranks
//!   ([`merge_path_partition`]), half the DRAM reads for more dependent ones. From
//!   [`PARTITION_MIN_SAMPLED_RUN`](super::tiles::PARTITION_MIN_SAMPLED_RUN) keys a run, the
//!   searches start on samples of both runs that a small kernel copies first
//!   ([`merge_path_samples`](super::merge_path_samples)): their first levels hit in L2; where
//!   the samples show one run's keys to be ties there, the rest of the search probes the other
//!   run alone, at positions that every tile inside the same ties shares
//!   ([`co_rank_across_ties`]). Where a
//!   run is too short for samples (lopsided merges) and the merge has
//!   [`PARTITION_MIN_INTERPOLATED`](super::tiles::PARTITION_MIN_INTERPOLATED) keys or more, the
//!   searches over the whole merge go by interpolation
//!   ([`co_rank_interpolated`](super::co_rank_interpolated)): about 6 dependent probes instead of
//!   20 on smooth keys (on an H200, `f64` 2^27 + 2^20, `ncu`: the partition 22.6 µs by bisection,
//!   14.3 by interpolation in the same call, 12.7 with the Illinois rule in another). On Hopper
//!   the host launches the merge kernel to overlap the partition's end (programmatic dependent
//!   launch): the partition lets it start at once, and its blocks wait for the partition's
//!   writes (`device::grid_dependency`) before they read their splits ([`block_tile`]), all
//!   but the first [`PATH_LEAD_TILES`], which co-rank their own tile meanwhile, a warp per
//!   bound ([`lead_tile`]), and merge while the partition ends.
//! * The **merge kernel** ([`merge_path`]) gives each block exactly one tile: no loop of tiles,
//!   no keys loaded and thrown away. The block loads its tile's keys of A and of B into shared
//!   memory, each thread co-ranks its own `ITEMS` outputs there and
//!   [`merge`](PathTile::merge_thread)s them serially (one shared load per key, no branch)
//!   straight into a second shared buffer, the merged tile, which the block
//!   [`store`](PathTile::store)s coalesced, 16 bytes per thread and store (on Hopper, a full
//!   tile in one bulk copy: [`store_bulk`](PathTile::store_bulk)). Two barriers per tile, each
//!   key read once from DRAM and written once.
//! * The **load** has two forms. Hopper (the sm_90 build of the PTX) uses its copy engine:
//!   one thread starts a bulk copy (`cp.async.bulk`) of each run's 16-byte-aligned middle,
//!   the few keys before and after it are copied by other threads, and the block waits on a
//!   transaction barrier ([`load_bulk`](PathTile::load_bulk)). Each run then sits in shared
//!   memory at the same offset from a 32-byte sector as in global memory
//!   ([`bulk`](PathTile::bulk)): with only 16 bytes in common, every other run's copy read
//!   about one sector in eight twice (on an H200, `ncu`, few-unique keys, whose runs start
//!   anywhere: 12 % more L2 reads, and a merge kernel 5.5 % slower than on all-equal keys,
//!   whose runs start on sectors). Older GPUs [`gather`](PathTile::gather) the keys through
//!   registers, consecutive threads reading consecutive keys, A's from position 0 and B's
//!   after A's end marks.
//! * **End marks**: the greatest key after each run ([`mark_run_ends`](PathTile::mark_run_ends)),
//!   so the serial merge checks neither run's end (11 SASS instructions per output on Hopper).
//!
//! What limits it is the SMs' instruction issue and latency, not DRAM: the first version held
//! a thread's gathered and merged keys in registers (72 of them for 4-byte keys, 127 for
//! 8-byte ones: 3 and 2 blocks of 256 per SM) and was ALU-bound at 37.5 % occupancy; staging
//! the merged keys in shared memory took that to 48 and 72, and the bulk load takes the
//! gather's loads, address selects and stores off every thread. Positions and co-ranks inside a
//! tile are 32-bit, and every tile but the last is **full**, a case (the const generic `FULL`,
//! the same for the whole block) that needs no clamp and no guard: the runs are followed by
//! their end marks in shared memory, so the serial merge reads past a run only marks.
//!
//! An odd `ITEMS` keeps the merged-tile writes (`merged[tid * ITEMS + k]`) free of bank
//! conflicts. `BLOCK` and `ITEMS` are const generics, chosen by a measured sweep (see
//! [`tiles::PATH_4_BYTE`](super::tiles::PATH_4_BYTE)). Stable like every merge here: on equal
//! keys, A's comes first, in the co-ranks and in the serial merge.
//!
//! The block's work is written as phases between barriers ([`PathTile`]'s methods); the
//! kernel runs them on each thread with `sync_threads` between, and the host tests run them
//! for every thread of a block in turn.

use core::hint::select_unpredictable;

use super::interpolation::{co_rank_interpolated, interpolates};
use super::keys::{KeyReader, KeyWriter, MergeKey, SharedKeys};
use super::order::KeyOrder;
use super::samples::{PartitionSamples, co_rank_bounds_from_samples, partition_samples};
use super::sequential::{co_rank_between, co_rank_bounds_between, co_rank_in, co_rank_shared_probes};
use super::ties::co_rank_across_ties;
use super::tiles::{
    PARTITION_GROUP, PARTITION_TWO_LEVEL_MIN_TILES, PATH_LEAD_TILES, PathShape, SECTOR_BYTES, a_end_marks,
    keys_per_16_bytes, keys_per_sector,
};
use super::warp_co_rank::co_rank_by_warp;
use crate::device::SharedArray;
use crate::device::bulk::{self, Barrier};
use crate::device::grid_dependency;
use crate::device::store_global_16;
use crate::device::thread::*;
use crate::device::warp;

/// The outputs one block merges, and the keys of A and B they take: outputs
/// `[c_start, c_start + c_len)` are the stable merge of A's `[a_start, a_start + a_len)` and
/// B's `[b_start, b_start + b_len)`, so `a_len + b_len = c_len`. In shared memory A's keys
/// start at position `a_at` and B's at `b_at`, each followed by its end marks (see
/// [`PathShape::input_keys`]); positions inside a tile are 32-bit.
///
/// The phases take `FULL`: whether the tile has `BLOCK × ITEMS` outputs (every tile but the
/// last). A full tile needs no clamps or guards; a partial one clamps every shared read into
/// the input buffer and drops every write past the tile.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PathTile {
    pub a_start: usize,
    pub b_start: usize,
    pub c_start: usize,
    pub a_len: u32,
    pub b_len: u32,
    pub c_len: u32,
    pub a_at: u32,
    pub b_at: u32,
}

impl PathTile {
    /// Tile `tile` of a merge of `total` outputs in tiles of `shape`, from the co-ranks of its
    /// first output (`a_curr`) and of the next tile's first (`a_next`), as the partition kernel
    /// wrote them; in shared memory A's keys from position 0, B's after A's end marks
    /// ([`gather`](Self::gather)'s layout; [`bulk`](Self::bulk) moves them).
    #[inline(always)]
    pub fn new(tile: usize, shape: PathShape, total: usize, a_curr: usize, a_next: usize) -> Self {
        let c_start = (tile * shape.tile_size()).min(total);
        let c_end = (c_start + shape.tile_size()).min(total);
        let (a_len, c_len) = ((a_next - a_curr) as u32, (c_end - c_start) as u32);
        Self {
            a_start: a_curr,
            b_start: c_start - a_curr,
            c_start,
            a_len,
            b_len: c_len - a_len,
            c_len,
            a_at: 0,
            b_at: a_len + a_end_marks(shape.items) as u32,
        }
    }

    /// The layout of [`load_bulk`](Self::load_bulk) for keys of `K` at `a` and `b`: each run
    /// at the same offset from a 32-byte sector ([`SECTOR_BYTES`]) in shared memory as in
    /// global memory (a bulk copy moves aligned 16-byte units, and reads whole sectors only
    /// when both ends agree on the sector too), A's from position `a_at` (less than a sector's
    /// keys), B's from the first sector after A's run and its end marks, plus its own offset.
    #[inline(always)]
    pub fn bulk<K>(self, shape: PathShape, a: *const K, b: *const K) -> Self {
        let per_sector = keys_per_sector(size_of::<K>()) as u32;
        let offset = |run: *const K| (run.addr() % SECTOR_BYTES / size_of::<K>()) as u32;
        let a_at = offset(a.wrapping_add(self.a_start));
        let a_marks_end = a_at + self.a_len + a_end_marks(shape.items) as u32;
        let b_at = a_marks_end.next_multiple_of(per_sector) + offset(b.wrapping_add(self.b_start));
        Self { a_at, b_at, ..self }
    }

    /// Tile position `x`, clamped to the tile's last key unless the tile is full.
    #[inline(always)]
    fn last_in_tile<const FULL: bool>(&self, x: u32) -> u32 {
        if FULL { x } else { x.min(self.c_len - 1) }
    }

    /// Shared position `x`, clamped into the input buffer (of `input_keys` keys) unless the
    /// tile is full: a partial tile's threads past its end merge garbage, which is dropped.
    #[inline(always)]
    fn clamp<const FULL: bool>(x: u32, input_keys: u32) -> u32 {
        if FULL { x } else { x.min(input_keys - 1) }
    }

    /// Phase 1 on Hopper: the tile's keys land in shared memory (`keys`, the input buffer) at
    /// the [`bulk`](Self::bulk) layout, without passing through registers. Thread 0
    /// announces the bytes to come on `barrier` and starts one bulk copy per run,
    /// of its whole 16-byte units; threads `0 .. 4V` copy the fewer than `V` keys before and
    /// after each run's units (A's head, A's tail, B's head, B's tail, `V` threads each). The
    /// block then passes a barrier (for the initialisation and the copied keys) and waits on
    /// `barrier`'s phase 0 (for the bulk copies).
    ///
    /// # Safety
    /// `self` has the bulk layout for `a` and `b`, which hold the tile's keys; `keys` is the
    /// block's input buffer in shared memory, of [`PathShape::input_keys`] keys and 16-byte
    /// aligned, which no thread reads until the phase of `barrier` this starts completes;
    /// `barrier` is initialised, and visible as such to thread 0; the block has `BLOCK`
    /// threads.
    #[inline(always)]
    pub unsafe fn load_bulk<K: MergeKey, const BLOCK: usize>(
        &self,
        tid: u32,
        a: *const K,
        b: *const K,
        keys: *mut K,
        barrier: Barrier,
    ) {
        let per_16 = keys_per_16_bytes(size_of::<K>());
        // Each run: where it starts in global and shared memory, its keys before the first
        // 16-byte boundary, in whole 16-byte units, and after them.
        let split = |src: *const K, len: u32, at: u32| {
            let len = len as usize;
            let head = ((per_16 - at as usize % per_16) % per_16).min(len);
            let units = (len - head) / per_16 * per_16;
            (src, keys.wrapping_add(at as usize), head, units, len - head - units)
        };
        let a_run = split(a.wrapping_add(self.a_start), self.a_len, self.a_at);
        let b_run = split(b.wrapping_add(self.b_start), self.b_len, self.b_at);
        // SAFETY: per the caller, every address below is inside a run and its place in the
        // buffer; the bulk copies' ends are 16-byte aligned in both memories (same offsets).
        unsafe {
            if tid == 0 {
                barrier.arrive_expecting(((a_run.3 + b_run.3) * size_of::<K>()) as u32);
                // (Two calls, not a loop over both runs: a loop over a local array may stay a
                // loop, the array in local memory.)
                let copy_units = |(src, dst, head, units, _): (*const K, *mut K, usize, usize, usize)| {
                    if units > 0 {
                        barrier.copy(dst.add(head), src.add(head), (units * size_of::<K>()) as u32);
                    }
                };
                copy_units(a_run);
                copy_units(b_run);
            }
            // One pass when the block has `4V` threads or more (every shape the GPU runs).
            for t in (tid as usize..4 * per_16).step_by(BLOCK) {
                // (Chosen, not indexed: an indexed local array would live in local memory.)
                let (src, dst, head, units, tail) = if t < 2 * per_16 { a_run } else { b_run };
                let e = t % per_16;
                let key = if (t / per_16) % 2 == 0 {
                    (e < head).then_some(e)
                } else {
                    (e < tail).then_some(head + units + e)
                };
                if let Some(x) = key {
                    *dst.add(x) = *src.add(x);
                }
            }
        }
    }

    /// Phase 1a (before Hopper): thread `tid`'s `ITEMS` keys of the tile, tile positions `tid + k * BLOCK`
    /// (consecutive threads, consecutive keys): A's keys first, then B's. Every load is issued
    /// before any is used; in a partial tile, positions past its end read its last key again,
    /// and [`place`](Self::place) drops them.
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
            let x = self.last_in_tile::<FULL>(tid + (k * BLOCK) as u32);
            *if x < self.a_len { a_base } else { b_base }.wrapping_add(x as usize)
        })
    }

    /// Phase 1b (before Hopper): thread `tid` writes the keys it [`gather`](Self::gather)ed
    /// to the input buffer `tile`, tile position `x` (`tid + k * BLOCK`) at `a_at + x` if it
    /// is A's, else at `b_at + x - a_len`; those inside the tile only (all when it is full).
    ///
    /// # Safety
    /// `tile` is the input buffer for this tile's layout; no other thread accesses these
    /// positions concurrently.
    #[inline(always)]
    pub unsafe fn place<
        K: MergeKey,
        S: KeyWriter<K>,
        const BLOCK: usize,
        const ITEMS: usize,
        const FULL: bool,
    >(
        &self,
        tid: u32,
        keys: [K; ITEMS],
        tile: S,
    ) {
        let b_shift = self.b_at - self.a_len;
        let place = |x: u32| if x < self.a_len { self.a_at + x } else { x + b_shift };
        // SAFETY: per the caller.
        unsafe { self.scatter::<K, _, ITEMS, FULL>(keys, tile, |k| tid + k * BLOCK as u32, place) };
    }

    /// Writes `keys[k]` to `place(x)` of `out`, where `x = position(k)` is a tile position,
    /// for the positions inside the tile only (all of them when it is full).
    ///
    /// # Safety
    /// `out` has room for every place; no other thread accesses these places concurrently;
    /// every position is inside the tile if `FULL`.
    #[inline(always)]
    pub unsafe fn scatter<K: MergeKey, S: KeyWriter<K>, const ITEMS: usize, const FULL: bool>(
        &self,
        keys: [K; ITEMS],
        out: S,
        position: impl Fn(u32) -> u32,
        place: impl Fn(u32) -> u32,
    ) {
        for (k, &key) in keys.iter().enumerate() {
            let x = position(k as u32);
            if FULL || x < self.c_len {
                // SAFETY: x is inside the tile, per the check or the caller, and this thread's.
                unsafe { out.store(place(x) as usize, key) };
            }
        }
    }

    /// Phase 2: thread `tid` co-ranks the start of its `ITEMS` outputs, `tid * ITEMS`, in the
    /// shared tile (32-bit), merges them serially ([`walk`](Self::walk)) and writes each output
    /// straight to position `tid * ITEMS + k` of `merged` (no register holds the thread's
    /// outputs, which keeps the kernel's register count, and so its occupancy, down). In a
    /// partial tile, threads past its end merge whatever their clamped reads find, and their
    /// outputs are dropped.
    ///
    /// # Safety
    /// As [`walk`](Self::walk); `merged` has room for the tile, and no other thread accesses
    /// this thread's positions of it.
    #[inline(always)]
    pub unsafe fn merge_thread<
        K: MergeKey,
        O: KeyOrder<K>,
        S: KeyReader<K>,
        W: KeyWriter<K>,
        const BLOCK: usize,
        const ITEMS: usize,
        const FULL: bool,
    >(
        &self,
        tid: u32,
        tile: S,
        merged: W,
    ) {
        // SAFETY: per the caller; `walk` emits only this thread's positions of the tile.
        unsafe {
            // A's end needs a check only where marks cannot stand in for B's last keys.
            let store = |c: u32, key: K, _| merged.store(c as usize, key);
            if O::LAST_IS_UNIQUE {
                self.walk::<K, O, S, BLOCK, ITEMS, FULL, false>(tid, tile, store)
            } else {
                self.walk::<K, O, S, BLOCK, ITEMS, FULL, true>(tid, tile, store)
            }
        }
    }

    /// The serial merge of thread `tid`'s `ITEMS` outputs in the order `O`: co-ranks their
    /// start, `tid * ITEMS`, in the shared tile (32-bit), then takes A's key when it goes no
    /// later than B's (`a_key <= b_key` ascending: stable), then the next key of the run it came
    /// from, and calls `emit(c, key, at)` for each output inside the tile: its tile position `c`,
    /// its key, and the key's position `at` in shared memory (A's run lies below `b_at`, B's from
    /// it). Past a run's last key the walk reads the last keys of the order ([`KeyOrder::LAST`])
    /// that [`mark_run_ends`](Self::mark_run_ends) put there.
    ///
    /// With `CHECK_A_END` it also checks A's end: a used-up A is never taken. Keys alone need no
    /// check when `LAST` is unique (see below), but a merge by key must take B's own keys, whose
    /// values travel with them, and not A's marks; so must an order in which other keys are
    /// equivalent to `LAST`.
    ///
    /// # Safety
    /// The tile's keys are in `tile` at `a_at` and `b_at`, each run's end marks after it,
    /// written before a barrier (and, for a bulk load, its wait); `tile` is the input buffer of
    /// [`PathShape::input_keys`] keys for this shape; `emit` may write position `c` of a
    /// per-tile buffer, which no other thread accesses.
    #[inline(always)]
    pub unsafe fn walk<
        K: MergeKey,
        O: KeyOrder<K>,
        S: KeyReader<K>,
        const BLOCK: usize,
        const ITEMS: usize,
        const FULL: bool,
        const CHECK_A_END: bool,
    >(
        &self,
        tid: u32,
        tile: S,
        mut emit: impl FnMut(u32, K, u32),
    ) {
        let shape = PathShape::new(BLOCK, ITEMS);
        let input_keys = shape.input_keys(size_of::<K>()) as u32;
        let first = tid * ITEMS as u32;
        let diag = first.min(self.c_len);
        // SAFETY: diag <= a_len + b_len; reads stay in the input buffer (clamped, or within a
        // run and its end marks); `emit` gets positions inside the tile.
        unsafe {
            let at = |x: u32| tile.load(Self::clamp::<FULL>(x, input_keys) as usize);
            let (a_run, b_run) = (tile.skip(self.a_at as usize), tile.skip(self.b_at as usize));
            let rank = co_rank_in::<K, O, _, _, _>(diag, a_run, self.a_len, b_run, self.b_len);
            // `i` and `j` are shared positions of A's next key and B's. Each run is followed by
            // the last key of the order (`mark_run_ends`; the greatest, ascending), so neither end
            // needs a check: a used-up B reads as the last key, which every key of A goes no
            // later than; a used-up A reads as the last key, which goes no later than a key of B
            // only when that key is equivalent to it, and when `LAST` is unique that key is
            // `LAST` too, and so is every output left (B is sorted): taking the marks (up to
            // `ITEMS`, all there are) gives the same bits.
            let (mut i, mut j) = (self.a_at + rank, self.b_at + (diag - rank));
            let a_end = self.a_at + self.a_len;
            let (mut a_key, mut b_key) = (at(i), at(j));
            for k in 0..ITEMS as u32 {
                let take_a = (!CHECK_A_END || i < a_end) && O::no_later(a_key, b_key);
                // Selects, not branches, whatever the order's comparison inlines to: lanes of a
                // warp take A and B in any mix.
                let key = select_unpredictable(take_a, a_key, b_key);
                let key_at = select_unpredictable(take_a, i, j);
                let next = key_at + 1;
                let next_key = at(next);
                (a_key, i) =
                    (select_unpredictable(take_a, next_key, a_key), select_unpredictable(take_a, next, i));
                (b_key, j) =
                    (select_unpredictable(take_a, b_key, next_key), select_unpredictable(take_a, j, next));
                if FULL || first + k < self.c_len {
                    emit(first + k, key, key_at);
                }
            }
        }
    }

    /// Phase 1c: the last key of the order ([`KeyOrder::LAST`]: the greatest, ascending) after
    /// each run in shared memory:
    /// [`a_end_marks`]`(ITEMS)` of them after A's (threads `0 ..` that many) and one after B's
    /// (the next thread), where the serial merge reads them once a run is used up.
    ///
    /// # Safety
    /// `tile` is the input buffer, with the runs at `a_at` and `b_at` and room for the marks
    /// between and after them; no other thread accesses those positions before the barrier
    /// that ends the load.
    #[inline(always)]
    pub unsafe fn mark_run_ends<
        K: MergeKey,
        O: KeyOrder<K>,
        S: KeyWriter<K>,
        const BLOCK: usize,
        const ITEMS: usize,
    >(
        &self,
        tid: u32,
        tile: S,
    ) {
        let a_marks = a_end_marks(ITEMS);
        // One pass when the block has more threads than marks (every shape the GPU runs).
        for t in (tid as usize..=a_marks).step_by(BLOCK) {
            let x = if t < a_marks {
                self.a_at as usize + self.a_len as usize + t
            } else {
                (self.b_at + self.b_len) as usize
            };
            // SAFETY: per the caller.
            unsafe { tile.store(x, O::LAST) };
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
            let keys: [K; ITEMS] = core::array::from_fn(|k| {
                tile.load(self.last_in_tile::<false>(tid + (k * BLOCK) as u32) as usize)
            });
            self.scatter::<K, _, ITEMS, false>(keys, c, |k| tid + k * BLOCK as u32, |x| x);
        }
    }

    /// Phase 3 of a full tile on Hopper: thread 0 stores the merged tile to the output in one
    /// bulk copy (`cp.async.bulk`, shared to global) and waits until the copy has read it.
    /// Measured on an H200 (session of 2026-12-01 23:42, three device calls): 0.3–1.3 % faster
    /// than [`store`](Self::store)'s 16-byte stores on every case and key size, though a plain
    /// copy kernel ran slower with bulk stores than with 16-byte ones.
    ///
    /// # Safety
    /// The tile is full; the merged tile is at `merged` in shared memory, 16-byte aligned,
    /// written by every thread, each of which then called
    /// [`bulk::fence_before_bulk_copies`] and passed a block-wide barrier;
    /// `c` has room for the merge's outputs and starts 16-byte aligned, as does every full
    /// tile (`BLOCK × ITEMS` keys are a multiple of 16 bytes).
    #[inline(always)]
    pub unsafe fn store_bulk<K: MergeKey, const BLOCK: usize, const ITEMS: usize>(
        &self,
        tid: u32,
        merged: *const K,
        c: *mut K,
    ) {
        if tid == 0 {
            // SAFETY: per the caller.
            unsafe { bulk::store(c.add(self.c_start), merged, (BLOCK * ITEMS * size_of::<K>()) as u32) };
        }
    }
}

/// How many tile starts share one first-level search in the partition of a merge of `tiles`
/// tiles: [`PARTITION_GROUP`] from [`PARTITION_TWO_LEVEL_MIN_TILES`] on, else 1 (every thread
/// co-ranks over the whole merge: one level).
#[inline(always)]
pub const fn partition_group(tiles: usize) -> u32 {
    if tiles >= PARTITION_TWO_LEVEL_MIN_TILES { PARTITION_GROUP as u32 } else { 1 }
}

/// Whether partition lane `lane` searches at the first level, over the whole merge: the first
/// lane of each group of `group`, and the warp's last, so that every group's bounds are co-ranked
/// in its own warp.
#[inline(always)]
pub const fn coarse_search(lane: u32, group: u32) -> bool {
    lane.is_multiple_of(group) || lane == warp::LANES - 1
}

/// The lanes whose first-level co-ranks bound lane `lane`'s co-rank: its group's first lane and
/// the next group's (or the warp's last); a lane of the first level bounds its own.
#[inline(always)]
pub const fn group_bound_lanes(lane: u32, group: u32) -> (u32, u32) {
    if coarse_search(lane, group) {
        return (lane, lane);
    }
    let first = lane - lane % group;
    let next = first + group;
    (first, if next < warp::LANES { next } else { warp::LANES - 1 })
}

/// The keys a partition co-ranks in: A's `m` keys and B's `n`.
pub type PartitionInputs<K> = (*const K, usize, *const K, usize);

/// The output that tile `t` of `tile_size` outputs starts at, in a merge of `total` (the end,
/// for the partition's threads past the last tile).
#[inline(always)]
pub(super) fn tile_start(t: usize, tile_size: usize, total: usize) -> usize {
    t.saturating_mul(tile_size).min(total)
}

/// The first level of the partition's thread `t`, in groups of `group` lanes: the co-rank of
/// its tile's start over the whole merge if its lane [searches at the first
/// level](coarse_search), else 0 (unused). With `samples`, bounded by them
/// ([`co_rank_bounds_from_samples`]) and searched between the bounds in the other run alone
/// where one run's keys there are ties ([`co_rank_across_ties`]), else in both (`co_rank_between`);
/// without, by interpolation on merges of [`PARTITION_MIN_INTERPOLATED`]
/// keys or more whose order has positions ([`co_rank_interpolated`]), else the one-level
/// partition's search (`co_rank_shared_probes`).
///
/// [`PARTITION_MIN_INTERPOLATED`]: super::tiles::PARTITION_MIN_INTERPOLATED
///
/// # Safety
/// `a` holds `m` keys and `b` holds `n`, sorted in the order `O`; `samples`, if any, are
/// theirs; `tile_size > 0`.
#[inline(always)]
pub unsafe fn partition_coarse<K: MergeKey, O: KeyOrder<K>, SA: KeyReader<K>, SB: KeyReader<K>>(
    t: usize,
    group: u32,
    (a, m, b, n): PartitionInputs<K>,
    samples: Option<PartitionSamples<SA, SB>>,
    tile_size: usize,
) -> usize {
    if !coarse_search(t as u32 % warp::LANES, group) {
        return 0;
    }
    let k = tile_start(t, tile_size, m + n);
    // SAFETY: per the caller; the tile's start is at most m + n, and the samples' bounds hold
    // its co-rank.
    unsafe {
        match samples {
            Some(samples) => {
                let (low, high) = co_rank_bounds_from_samples::<K, O, _, _>(k, (m, n), samples);
                match co_rank_across_ties::<K, O, _, _, _, _>(k, (low, high), (a, m, b, n), samples) {
                    Some(i) => i,
                    None => co_rank_between::<K, O, _, _>(k, a, b, low, high),
                }
            }
            None if interpolates::<K, O>(m + n) => co_rank_interpolated::<K, O, _, _>(k, a, m, b, n),
            None => co_rank_shared_probes::<K, O, _, _>(k, a, m, b, n),
        }
    }
}

/// The second level of the partition's thread `t`: `splits[t]`, the co-rank of output
/// `min(t * tile_size, m + n)`, searched between the first-level co-ranks of its [bound
/// lanes](group_bound_lanes), `bounds` (each the lane's thread and co-rank; its own, twice, if
/// it searched at the first level: no probe), in both runs
/// (`sequential::co_rank_bounds_between`); for `t` in `0..=tiles`, where `tiles = ⌈(m + n) /
/// tile_size⌉` (the kernel's, computed once); threads past that write nothing.
///
/// # Safety
/// As [`partition_coarse`]; `bounds` are the threads of the bound lanes of `t`'s lane, in its
/// warp (threads `t - t % 32 ..` of the same partition), with their first-level co-ranks;
/// `tiles` is `⌈(m + n) / tile_size⌉` and `splits` has room for `tiles + 1` entries.
#[inline(always)]
pub unsafe fn partition_fine<K: MergeKey, O: KeyOrder<K>>(
    t: usize,
    [(low_t, low), (high_t, high)]: [(usize, usize); 2],
    (a, m, b, n): PartitionInputs<K>,
    (tile_size, tiles): (usize, usize),
    splits: *mut usize,
) {
    let start = |t| tile_start(t, tile_size, m + n);
    let k = start(t);
    // The bound lanes' tile starts are either side of `k`.
    let (i_low, i_high) = co_rank_bounds_between((start(low_t), low), (start(high_t), high), k);
    // SAFETY: per the caller, the co-rank of k is in [i_low, i_high].
    let split = unsafe { co_rank_between::<K, O, _, _>(k, a, b, i_low, i_high) };
    if t <= tiles {
        // SAFETY: t <= tiles is inside `splits`.
        unsafe { *splits.add(t) = split };
    }
}

/// The partition kernel, one thread per tile start, in two levels on large merges (Green,
/// McColl & Bader's partition, searched the way the merge-path blocks search their tile: a
/// coarse search bounds the fine ones). Some lanes of each warp co-rank over the whole merge
/// ([`partition_coarse`]); the others take their bounds from two of them by warp shuffles and
/// co-rank between ([`partition_fine`]), in as many probes as the bounds' distance has bits
/// (bounded in both runs: at most about 14 for groups of 4 tiles, none where a group's tiles
/// take one run only) instead of about 28. Fewer probes reach DRAM (on an H200,
/// `ncu`: half the bytes), but the second level's are dependent loads after the first's, so it
/// pays only on merges large enough for DRAM sectors, not latency, to bound the partition
/// ([`PARTITION_TWO_LEVEL_MIN_TILES`]). On merges where [`partition_samples`] holds, the
/// first-level searches start on the samples that [`merge_path_samples`] copied (on an H200,
/// loads from L2 instead of DRAM for all but the last `log2(2S)` levels).
///
/// # Safety
/// As [`partition_fine`]; `splits` has [`splits_len`]`(tiles)` entries, and where
/// [`partition_samples`] holds the sample kernel for the same runs and splits ran before this
/// launch (or, on Hopper, this launch overlaps it: its threads wait); the launch has at least
/// `tiles + 1` threads, in blocks of whole warps.
///
/// [`merge_path_samples`]: super::merge_path_samples
/// [`splits_len`]: super::splits_len
#[inline(always)]
pub unsafe fn merge_path_partition<K: MergeKey, O: KeyOrder<K>>(
    a: *const K,
    m: usize,
    b: *const K,
    n: usize,
    tile_size: usize,
    splits: *mut usize,
) {
    // The merge may start now: its blocks wait for these co-ranks (on Hopper).
    grid_dependency::launch_dependents();
    let t = grid_thread_x();
    let tiles = (m + n).div_ceil(tile_size);
    let group = partition_group(tiles);
    let inputs = (a, m, b, n);
    let samples = partition_samples(m, n).then(|| {
        // The sample kernel may still be running (a launch that overlaps it, on Hopper).
        grid_dependency::wait();
        PartitionSamples::<*mut K, *mut K>::after_splits(splits, tiles, (m, n)).to_read()
    });
    // SAFETY: per the caller; every lane of the warp shuffles (the group is the grid's).
    unsafe {
        let own = partition_coarse::<K, O, _, _>(t, group, inputs, samples, tile_size);
        let bounds = if group == 1 {
            [(t, own); 2]
        } else {
            let lane = t as u32 % warp::LANES;
            let (low_lane, high_lane) = group_bound_lanes(lane, group);
            let thread = |bound_lane| t - lane as usize + bound_lane as usize;
            [low_lane, high_lane].map(|bound_lane| (thread(bound_lane), warp::from_lane(own, bound_lane)))
        };
        partition_fine::<K, O>(t, bounds, inputs, (tile_size, tiles), splits)
    }
}

/// The merge kernel: block `blockIdx.x` merges tile `blockIdx.x` of `BLOCK × ITEMS` outputs,
/// between the co-ranks `splits[tile]` and `splits[tile + 1]`; full tiles are stored in
/// vectors of `V` keys (16 bytes).
///
/// # Safety
/// As [`merge_path_partition`], whose `splits` (for this tile size) this launch reads; `c`
/// has room for `m + n` keys, overlaps neither input and is 16-byte aligned; `BLOCK × ITEMS` is
/// a multiple of `V`; the launch has `BLOCK` threads per block, one block per tile, and the
/// dynamic shared memory of [`PathShape::shared_bytes`].
///
/// [`PathShape::shared_bytes`]: super::tiles::PathShape::shared_bytes
#[inline(always)]
pub unsafe fn merge_path<
    K: MergeKey,
    O: KeyOrder<K>,
    const BLOCK: usize,
    const ITEMS: usize,
    const V: usize,
>(
    a: *const K,
    m: usize,
    b: *const K,
    n: usize,
    c: *mut K,
    splits: *const usize,
) {
    let tile_index = block_idx_x() as usize;
    // SAFETY: per the caller; the partition wrote the splits of every launched tile.
    unsafe {
        // One call of the tile's merge for both branches: its code appears once in the kernel.
        let tile = if leads(tile_index) {
            lead_tile::<K, O, BLOCK, ITEMS>(tile_index, (a, m, b, n))
        } else {
            block_tile::<BLOCK, ITEMS>(tile_index, m + n, splits)
        };
        merge_tile_of::<K, O, BLOCK, ITEMS, V>(tile, a, b, c)
    }
}

/// Whether merge-path block `tile_index` co-ranks its own tile ([`lead_tile`]): where the merge
/// overlaps the partition (the Hopper build, [`grid_dependency::AVAILABLE`]), the first
/// [`PATH_LEAD_TILES`] tiles. A warp's search takes a few rounds of loads, where the wait for
/// the partition takes its slowest search's.
#[inline(always)]
pub const fn leads(tile_index: usize) -> bool {
    grid_dependency::AVAILABLE && tile_index < PATH_LEAD_TILES
}

/// Tile `tile_index` of the merge of `inputs` in tiles of `BLOCK × ITEMS`, co-ranked by this
/// block while the partition runs beside it: warp 0 finds the co-rank of its first output and
/// warp 1 that of the next tile's ([`co_rank_by_warp`]), and they hand them to the block
/// through the first two words of the merged tile, which nothing writes before the load's
/// barrier.
///
/// # Safety
/// As [`merge_path`]; every thread of the block calls this, its shared memory free; `BLOCK >=
/// 64`.
#[inline(always)]
pub(super) unsafe fn lead_tile<K: MergeKey, O: KeyOrder<K>, const BLOCK: usize, const ITEMS: usize>(
    tile_index: usize,
    (a, m, b, n): PartitionInputs<K>,
) -> PathTile {
    let shape = PathShape::new(BLOCK, ITEMS);
    let (warp_index, lane) = (thread_idx_x() / warp::LANES, thread_idx_x() % warp::LANES);
    // SAFETY: per the caller; the merged tile is 16-byte aligned and holds at least two words;
    // the barrier orders the two writes before every read.
    unsafe {
        let bounds =
            SharedArray::<usize>::at_offset(shape.merged_offset(size_of::<K>()) * size_of::<K>() / 8);
        if warp_index < 2 {
            let k = tile_start(tile_index + warp_index as usize, shape.tile_size(), m + n);
            let co_rank = co_rank_by_warp::<K, O, _, _>(lane, k, a, m, b, n);
            if lane == 0 {
                bounds.write(warp_index as usize, co_rank);
            }
        }
        sync_threads();
        PathTile::new(tile_index, shape, m + n, bounds.read(0), bounds.read(1))
    }
}

/// Tile `tile_index` of the merge, by this block: its bounds from `splits`, then
/// [`merge_tile`], full or not.
///
/// # Safety
/// As [`merge_path`], for a tile of the merge; the block's shared memory is free.
#[inline(always)]
pub(super) unsafe fn merge_one_tile<
    K: MergeKey,
    O: KeyOrder<K>,
    const BLOCK: usize,
    const ITEMS: usize,
    const V: usize,
>(
    tile_index: usize,
    a: *const K,
    m: usize,
    b: *const K,
    n: usize,
    c: *mut K,
    splits: *const usize,
) {
    // SAFETY: per the caller.
    unsafe {
        merge_tile_of::<K, O, BLOCK, ITEMS, V>(block_tile::<BLOCK, ITEMS>(tile_index, m + n, splits), a, b, c)
    }
}

/// [`merge_tile`] for `tile`, full or not (the same branch for the whole block: every tile but
/// the last is full).
///
/// # Safety
/// As [`merge_path`]; `tile` is this block's; the block's shared memory is free.
#[inline(always)]
unsafe fn merge_tile_of<
    K: MergeKey,
    O: KeyOrder<K>,
    const BLOCK: usize,
    const ITEMS: usize,
    const V: usize,
>(
    tile: PathTile,
    a: *const K,
    b: *const K,
    c: *mut K,
) {
    // SAFETY: per the caller.
    unsafe {
        if tile.c_len as usize == BLOCK * ITEMS {
            merge_tile::<K, O, BLOCK, ITEMS, V, true>(tile, a, b, c);
        } else {
            merge_tile::<K, O, BLOCK, ITEMS, V, false>(tile, a, b, c);
        }
    }
}

/// Tile `tile_index` of a merge of `total` outputs in tiles of `BLOCK × ITEMS`, between the
/// co-ranks the partition wrote to `splits`.
///
/// # Safety
/// The partition for this tile size wrote `splits[tile_index]` and `splits[tile_index + 1]`.
#[inline(always)]
pub(super) unsafe fn block_tile<const BLOCK: usize, const ITEMS: usize>(
    tile_index: usize,
    total: usize,
    splits: *const usize,
) -> PathTile {
    let shape = PathShape::new(BLOCK, ITEMS);
    // The partition may still be running (a launch that overlaps it, on Hopper).
    grid_dependency::wait();
    // SAFETY: per the caller.
    unsafe { PathTile::new(tile_index, shape, total, *splits.add(tile_index), *splits.add(tile_index + 1)) }
}

/// One block's tile, phase by phase; `FULL` when it has `BLOCK × ITEMS` outputs.
///
/// # Safety
/// As [`merge_path`]; `tile` is this block's.
#[inline(always)]
unsafe fn merge_tile<
    K: MergeKey,
    O: KeyOrder<K>,
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
    let shape = PathShape::new(BLOCK, ITEMS);
    // SAFETY: shared memory holds the input buffer, the merged tile and the bulk loads'
    // barrier (per the launch, `PathShape::shared_bytes`); a barrier separates each phase
    // from the one that reads what it wrote.
    unsafe {
        let (keys, bulk_barrier) = tile_memory::<K>(shape);
        let merged = SharedKeys::<K>::at_offset(shape.merged_offset(size_of::<K>()));
        let tile = load_tile::<K, O, BLOCK, ITEMS, FULL>(tile, tid, a, b, keys, bulk_barrier);
        tile.merge_thread::<K, O, _, _, BLOCK, ITEMS, FULL>(tid, keys, merged);
        // On Hopper a full tile leaves in one bulk copy; its writers order their writes first.
        let bulk_store = FULL && bulk::AVAILABLE;
        if bulk_store {
            bulk::fence_before_bulk_copies();
        }
        sync_threads();
        release_tile_memory(tid, bulk_barrier);
        if bulk_store {
            tile.store_bulk::<K, BLOCK, ITEMS>(tid, merged.as_mut_ptr(), c);
        } else {
            tile.store::<K, _, BLOCK, ITEMS, V, FULL>(tid, merged, c);
        }
    }
}

/// A block's input buffer in shared memory (from its start) and the bulk loads' barrier (at
/// [`PathShape::barrier_offset`]), for keys of `K`.
///
/// # Safety
/// The launch has the dynamic shared memory of [`PathShape::shared_bytes`] for `shape`.
#[inline(always)]
pub(super) unsafe fn tile_memory<K: MergeKey>(shape: PathShape) -> (SharedKeys<K>, Barrier) {
    // SAFETY: per the caller.
    unsafe {
        let barrier_words = SharedKeys::<u64>::at_offset(shape.barrier_offset(size_of::<K>()) / 8);
        (SharedKeys::<K>::at_offset(0), Barrier::at(barrier_words.as_mut_ptr()))
    }
}

/// Phase 1 of a block's tile: its keys in the input buffer `keys`, by bulk copies on Hopper
/// ([`PathTile::load_bulk`]), else gathered through registers ([`PathTile::gather`],
/// [`PathTile::place`]); the end marks after each run; a barrier, and on Hopper the wait for
/// the copies. Returns the tile with the layout its keys have in `keys`.
///
/// # Safety
/// As [`merge_path`]; `tile` is this block's; `keys` and `bulk_barrier` are the block's
/// ([`tile_memory`]), free, and every thread of the block calls this.
#[inline(always)]
pub(super) unsafe fn load_tile<
    K: MergeKey,
    O: KeyOrder<K>,
    const BLOCK: usize,
    const ITEMS: usize,
    const FULL: bool,
>(
    tile: PathTile,
    tid: u32,
    a: *const K,
    b: *const K,
    keys: SharedKeys<K>,
    bulk_barrier: Barrier,
) -> PathTile {
    let shape = PathShape::new(BLOCK, ITEMS);
    // SAFETY: per the caller; the barrier orders the writes before every later read.
    unsafe {
        if bulk::AVAILABLE {
            let tile = tile.bulk(shape, a, b);
            if tid == 0 {
                bulk_barrier.init();
            }
            // The compiler may issue the initialisation once for warp 0 on its uniform datapath;
            // the warp's lanes agree on it before thread 0 arrives (compute-sanitizer's racecheck
            // flags the pair otherwise).
            warp::sync();
            tile.load_bulk::<K, BLOCK>(tid, a, b, keys.as_mut_ptr(), bulk_barrier);
            tile.mark_run_ends::<K, O, _, BLOCK, ITEMS>(tid, keys);
            sync_threads();
            bulk_barrier.wait(0);
            tile
        } else {
            let gathered = tile.gather::<K, BLOCK, ITEMS, FULL>(tid, a, b);
            tile.place::<K, _, BLOCK, ITEMS, FULL>(tid, gathered, keys);
            tile.mark_run_ends::<K, O, _, BLOCK, ITEMS>(tid, keys);
            sync_threads();
            tile
        }
    }
}

/// After the last read of the input buffer (and a barrier): on Hopper, thread 0 invalidates
/// the bulk loads' barrier, so its shared memory may be reused.
///
/// # Safety
/// Every thread of the block has passed a barrier after its last wait on `bulk_barrier`.
#[inline(always)]
pub(super) unsafe fn release_tile_memory(tid: u32, bulk_barrier: Barrier) {
    if bulk::AVAILABLE && tid == 0 {
        // SAFETY: per the caller.
        unsafe { bulk_barrier.invalidate() };
    }
}
