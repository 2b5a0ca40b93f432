//! Beyond the book: merge path with its loads in flight ahead (software pipelining, the
//! producer–consumer shape of Hopper's bulk-copy kernels). The tile algorithm is merge path's
//! ([`PathTile`], `merge/path.rs`); what changes is who waits for DRAM.
//!
//! A one-tile block loads its tile, then merges it, then stores it: while it waits for the load
//! it has nothing to do, and only other blocks on the SM hide the wait. Shared memory (two tiles
//! per block) caps those at 4–5 blocks of 256 threads. A **pipelined** block instead walks the
//! tiles `blockIdx.x, blockIdx.x + gridDim.x, …` (the grid holds as many blocks as fit on the
//! GPU at once) with two input buffers: while it merges tile `t` from one, the bulk copy of its
//! next tile fills the other, so a load is always in flight.
//!
//! Per tile, in buffer `it % 2` (`it` counts the block's tiles), waiting on that buffer's
//! transaction barrier at phase parity `(it / 2) % 2` ([`pipeline_slot`]):
//!
//! 1. thread 0 fences (the buffer for the next tile was read by the merge before last) and
//!    starts the next tile's bulk copies; threads copy its edge keys and write its end marks;
//! 2. every thread waits for this tile's bytes, merges its outputs into the merged tile;
//! 3. barrier; the block stores the merged tile; barrier (before the next merge rewrites it).
//!
//! Before Hopper there are no bulk copies, and a pipelined block merges its tiles one after the
//! other, as the one-tile kernel does each ([`merge_one_tile`]).

use super::keys::{MergeKey, SharedKeys};
use super::order::Ascending;
use super::path::{PathTile, merge_one_tile};
use super::tiles::PathShape;
use crate::device::bulk::{self, Barrier, fence_before_bulk_copies};
use crate::device::thread::*;

/// Which input buffer (0 or 1) a block's tile number `it` (0, 1, … in the order the block
/// merges them) uses, and the phase parity of that buffer's barrier to wait for: each buffer
/// serves every other tile, and its barrier completes one phase per use.
#[inline(always)]
pub fn pipeline_slot(it: usize) -> (usize, u32) {
    (it % 2, ((it / 2) % 2) as u32)
}

/// The tiles block `block` of `grid` merges, in order: every `grid`-th of `tiles` from its own.
pub fn block_tiles(block: usize, grid: usize, tiles: usize) -> impl Iterator<Item = usize> {
    (block..tiles).step_by(grid.max(1))
}

/// The pipelined merge kernel: block `blockIdx.x` merges tiles
/// [`block_tiles`]`(blockIdx.x, gridDim.x, tiles)` of `BLOCK × ITEMS` outputs, between the
/// co-ranks `splits[tile]` and `splits[tile + 1]`; full tiles are stored in vectors of `V` keys.
///
/// # Safety
/// As [`merge_path`](super::merge_path), except that the grid may hold fewer blocks than there
/// are tiles; the dynamic shared memory is [`PathShape::shared_bytes`] of the pipelined shape.
#[inline(always)]
pub unsafe fn merge_path_pipelined<K: MergeKey, const BLOCK: usize, const ITEMS: usize, const V: usize>(
    a: *const K,
    m: usize,
    b: *const K,
    n: usize,
    c: *mut K,
    splits: *const usize,
) {
    let shape = PathShape::new(BLOCK, ITEMS).pipelined();
    let tiles = shape.tiles(m + n);
    let (block, grid) = (block_idx_x() as usize, grid_dim_x() as usize);
    if !bulk::AVAILABLE {
        for tile_index in block_tiles(block, grid, tiles) {
            // SAFETY: per the caller; the barrier frees shared memory for the next tile.
            unsafe { merge_one_tile::<K, Ascending, BLOCK, ITEMS, V>(tile_index, a, m, b, n, c, splits) };
            sync_threads();
        }
        return;
    }
    let tid = thread_idx_x();
    let key_bytes = size_of::<K>();
    // SAFETY: the partition wrote the splits of every tile; shared memory holds the two input
    // buffers, the merged tile and two barriers (per the launch); the steps below are ordered
    // by block barriers and the transaction barriers as the module's comment says.
    unsafe {
        let tile_at = |index: usize| {
            PathTile::new(index, shape, m + n, *splits.add(index), *splits.add(index + 1)).bulk(shape, a, b)
        };
        let input = |buffer: usize| SharedKeys::<K>::at_offset(shape.input_offset(buffer, key_bytes));
        let barrier = |buffer: usize| {
            Barrier::at(
                SharedKeys::<u64>::at_offset(shape.barrier_offset(key_bytes) / 8 + buffer).as_mut_ptr(),
            )
        };
        let merged = SharedKeys::<K>::at_offset(shape.merged_offset(key_bytes));
        // Starts loading `tile` into `buffer`: bulk copies, edge keys, end marks.
        let start_load = |tile: PathTile, buffer: usize| {
            let keys = input(buffer);
            tile.load_bulk::<K, BLOCK>(tid, a, b, keys.as_mut_ptr(), barrier(buffer));
            tile.mark_run_ends::<K, Ascending, _, BLOCK, ITEMS>(tid, keys);
        };
        if block >= tiles {
            return;
        }
        if tid == 0 {
            barrier(0).init();
            barrier(1).init();
        }
        let mut tile = tile_at(block);
        start_load(tile, 0);
        sync_threads();
        let mut tile_indices = block_tiles(block, grid, tiles).skip(1);
        let mut it = 0;
        loop {
            let next = tile_indices.next().map(tile_at);
            let (buffer, parity) = pipeline_slot(it);
            if let Some(next) = next {
                if tid == 0 {
                    fence_before_bulk_copies();
                }
                start_load(next, 1 - buffer);
            }
            barrier(buffer).wait(parity);
            let keys = input(buffer);
            if tile.c_len as usize == BLOCK * ITEMS {
                tile.merge_thread::<K, Ascending, _, _, BLOCK, ITEMS, true>(tid, keys, merged);
                sync_threads();
                tile.store::<K, _, BLOCK, ITEMS, V, true>(tid, merged, c);
            } else {
                tile.merge_thread::<K, Ascending, _, _, BLOCK, ITEMS, false>(tid, keys, merged);
                sync_threads();
                tile.store::<K, _, BLOCK, ITEMS, V, false>(tid, merged, c);
            }
            sync_threads();
            let Some(next) = next else { break };
            (tile, it) = (next, it + 1);
        }
        if tid == 0 {
            barrier(0).invalidate();
            barrier(1).invalidate();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_buffer_serves_every_other_tile_and_its_barrier_flips_each_use() {
        let slots: Vec<_> = (0..6).map(pipeline_slot).collect();
        assert_eq!(slots, [(0, 0), (1, 0), (0, 1), (1, 1), (0, 0), (1, 0)]);
    }

    #[test]
    fn the_blocks_share_the_tiles_out_exactly_once() {
        for (grid, tiles) in [(1, 5), (3, 10), (4, 4), (8, 3), (132, 1000)] {
            let mut seen: Vec<usize> = (0..grid).flat_map(|block| block_tiles(block, grid, tiles)).collect();
            seen.sort();
            assert_eq!(seen, (0..tiles).collect::<Vec<_>>(), "grid {grid}, tiles {tiles}");
        }
        assert_eq!(block_tiles(1, 3, 10).collect::<Vec<_>>(), [1, 4, 7]);
    }
}
