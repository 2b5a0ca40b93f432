//! Block shape, coarsening and tile size of the merge kernels: the one place they are
//! written. The host derives grid, block and shared-memory sizes from these.

/// Threads per block, in all three kernels.
pub const BLOCK_THREADS: usize = 256;

/// PMPP 12.8, thread coarsening: output keys each thread merges between its two co-ranks
/// (per tile in the tiled and circular kernels, in all in the basic one). Each thread's two
/// binary searches are amortised over this many keys.
pub const ELEMENTS_PER_THREAD: usize = 8;

/// The book's `tile_size`: output keys a block merges per iteration, and the capacity of each
/// of its two shared-memory buffers (`a_s` for A, `b_s` for B). One tile = one coarsened
/// chunk per thread.
pub const TILE_SIZE: usize = BLOCK_THREADS * ELEMENTS_PER_THREAD;

/// Most tiles one block of the tiled and circular kernels merges: its one global co-rank
/// (two binary searches over all of A and B) is amortised over this many tiles, and the
/// circular kernel reuses the unconsumed part of each tile over as many iterations.
pub const TILES_PER_BLOCK: usize = 8;

/// The tiled and circular kernels get at least this many blocks (when there are that many
/// tiles), so that mid-sized merges still fill the GPU; the blocks then merge fewer tiles.
pub const MIN_TILED_BLOCKS: usize = 1024;

/// Bytes at the start of the tiled kernels' shared memory that hold the block's two co-ranks
/// in global memory (64-bit), which thread 0 computes and the block reads after a barrier.
pub const CO_RANK_BYTES: usize = 16;

/// Where the per-thread splits of a tile start, in 32-bit words: `BLOCK_THREADS + 1` co-ranks
/// inside the tile (thread `t`'s chunk starts at A key `splits[t]` of the tile, and the tile
/// consumes `splits[BLOCK_THREADS]` keys of A). Each thread searches once; its neighbour's
/// result is its end.
pub const SPLITS_OFFSET: usize = CO_RANK_BYTES / 4;

/// Bytes before the key buffers: the co-ranks and the splits, rounded up to 16 bytes.
pub const HEADER_BYTES: usize = (CO_RANK_BYTES + 4 * (BLOCK_THREADS + 1)).next_multiple_of(16);

/// Shared memory of the tiled and circular kernels for keys of `key_bytes` bytes: the
/// header, then `a_s`, `b_s` and `c_s` of [`TILE_SIZE`] keys each (`c_s` stages a tile's
/// outputs so that they are stored to global memory coalesced).
pub const fn tiled_shared_bytes(key_bytes: usize) -> usize {
    HEADER_BYTES + 3 * TILE_SIZE * key_bytes
}

// The splits end inside the header, after the co-ranks.
const _: () = assert!(
    SPLITS_OFFSET * 4 >= CO_RANK_BYTES && SPLITS_OFFSET * 4 + 4 * (BLOCK_THREADS + 1) <= HEADER_BYTES
);

/// Where `a_s` starts, in keys of `key_bytes` bytes from the start of shared memory (right
/// after the header; `b_s` and `c_s` follow, [`TILE_SIZE`] keys apart). Keys are 4 or 8 bytes,
/// so it is aligned.
pub const fn a_s_offset(key_bytes: usize) -> usize {
    HEADER_BYTES / key_bytes
}

/// Blocks of the tiled and circular kernels for a merge of `total` output keys: each block
/// merges up to [`TILES_PER_BLOCK`] tiles, but fewer while that would leave fewer than
/// [`MIN_TILED_BLOCKS`] blocks. Zero for an empty merge.
pub const fn tiled_blocks(total: usize) -> usize {
    let tiles = total.div_ceil(TILE_SIZE);
    let tiles_per_block = tiles.div_ceil(MIN_TILED_BLOCKS);
    let tiles_per_block = if tiles_per_block < 1 {
        1
    } else if tiles_per_block > TILES_PER_BLOCK {
        TILES_PER_BLOCK
    } else {
        tiles_per_block
    };
    tiles.div_ceil(tiles_per_block)
}

/// Output keys per block of the tiled and circular kernels on a grid of `blocks` blocks: the
/// book's `ceil((m + n) / gridDim.x)`, rounded up to whole tiles so that only a block's last
/// tile can be partial.
#[inline(always)]
pub const fn tiled_block_outputs(total: usize, blocks: usize) -> usize {
    total.div_ceil(blocks).div_ceil(TILE_SIZE) * TILE_SIZE
}

/// The book's `C_curr` and `C_next` of block `block` of `blocks`: consecutive ranges of
/// [`tiled_block_outputs`] keys, clipped to the output.
#[inline(always)]
pub fn tiled_block_range(total: usize, blocks: usize, block: usize) -> (usize, usize) {
    let per_block = tiled_block_outputs(total, blocks);
    let c_curr = (block * per_block).min(total);
    (c_curr, (c_curr + per_block).min(total))
}

/// The outputs `[c_curr, c_next)` thread `tid` merges of a tile of `c_tile` keys: the
/// coarsened chunk [`ELEMENTS_PER_THREAD`] keys long, clipped to the tile.
#[inline(always)]
pub fn thread_range(tid: usize, c_tile: usize) -> (usize, usize) {
    let c_curr = (tid * ELEMENTS_PER_THREAD).min(c_tile);
    (c_curr, (c_curr + ELEMENTS_PER_THREAD).min(c_tile))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tile_is_one_coarsened_chunk_per_thread() {
        assert_eq!(TILE_SIZE, BLOCK_THREADS * ELEMENTS_PER_THREAD);
        assert_eq!(thread_range(0, TILE_SIZE), (0, ELEMENTS_PER_THREAD));
        assert_eq!(thread_range(BLOCK_THREADS - 1, TILE_SIZE), (TILE_SIZE - ELEMENTS_PER_THREAD, TILE_SIZE));
        assert_eq!(
            thread_range(2, 2 * ELEMENTS_PER_THREAD + 3),
            (2 * ELEMENTS_PER_THREAD, 2 * ELEMENTS_PER_THREAD + 3)
        );
        assert_eq!(thread_range(5, 7), (7, 7));
    }

    #[test]
    fn shared_memory_fits_one_block_and_keys_are_aligned() {
        for key_bytes in [4, 8] {
            // Past 48 KiB the host opts in to more dynamic shared memory (Volta and later).
            assert!(tiled_shared_bytes(key_bytes) <= 96 * 1024);
            assert_eq!(a_s_offset(key_bytes) * key_bytes, HEADER_BYTES);
            assert_eq!(HEADER_BYTES % 16, 0);
        }
    }

    #[test]
    fn block_ranges_cover_the_output_once_in_whole_tiles() {
        for total in
            [0, 1, TILE_SIZE - 1, TILE_SIZE, TILE_SIZE + 1, 1_638_400, 10 * TILE_SIZE * 1024 + 5, 1 << 34]
        {
            let blocks = tiled_blocks(total);
            let mut expected_start = 0;
            for block in 0..blocks {
                let (c_curr, c_next) = tiled_block_range(total, blocks, block);
                assert_eq!(c_curr, expected_start, "total {total}, block {block}");
                assert!(c_next - c_curr <= TILES_PER_BLOCK * TILE_SIZE);
                assert!(c_curr < c_next, "total {total}: block {block} of {blocks} has nothing to do");
                if c_next < total {
                    assert_eq!((c_next - c_curr) % TILE_SIZE, 0);
                }
                expected_start = c_next;
            }
            assert_eq!(expected_start, total, "total {total}");
        }
    }

    #[test]
    fn small_merges_get_one_block_per_tile_and_large_ones_several_tiles_per_block() {
        assert_eq!(tiled_blocks(0), 0);
        assert_eq!(tiled_blocks(1), 1);
        assert_eq!(tiled_blocks(100 * TILE_SIZE), 100);
        assert_eq!(tiled_blocks(MIN_TILED_BLOCKS * TILE_SIZE * 2), MIN_TILED_BLOCKS);
        assert_eq!(tiled_blocks((MIN_TILED_BLOCKS + 1) * TILE_SIZE), MIN_TILED_BLOCKS / 2 + 1);
        assert_eq!(tiled_blocks(1 << 28), (1usize << 28).div_ceil(TILE_SIZE * TILES_PER_BLOCK));
    }
}
