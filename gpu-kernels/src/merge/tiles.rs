//! Block shape, coarsening and tile size of the merge kernels: the one place they are
//! written. The host derives grid, block and shared-memory sizes from these.
//!
//! The kernels are generic over the coarsening factor (a `const C: usize`, output keys per
//! thread per tile); the helpers below take it as an argument, `elements_per_thread`, so the
//! host can plan any factor at run time. The entry points without a factor in their name use
//! [`ELEMENTS_PER_THREAD`]; the benchmarks' coarsening sweep ([`COARSENING_SWEEP`]) has entry
//! points of its own.

/// Threads per block, in all three kernels.
pub const BLOCK_THREADS: usize = 256;

/// PMPP 12.8, thread coarsening: output keys each thread merges between its two co-ranks
/// (per tile in the tiled and circular kernels, in all in the basic one). Each thread's two
/// binary searches are amortised over this many keys. The factor of the main entry points.
pub const ELEMENTS_PER_THREAD: usize = 8;

/// Coarsening factors of the benchmarks' sweep (PMPP 12.8). [`ELEMENTS_PER_THREAD`] is the
/// main entry points; the others have entry points `merge_<variant>_c<factor>_<type>` for
/// i32 and f64 keys, in the basic and tiled kernels, except where the tiled kernel's shared
/// memory would pass [`MAX_SHARED_BYTES`] (16 with 8-byte keys).
pub const COARSENING_SWEEP: [usize; 5] = [1, 2, 4, 8, 16];

/// The book's `tile_size` for a coarsening factor: output keys a block merges per iteration,
/// and the capacity of each of its shared-memory buffers. One tile = one coarsened chunk per
/// thread.
pub const fn tile_size(elements_per_thread: usize) -> usize {
    BLOCK_THREADS * elements_per_thread
}

/// [`tile_size`] of the main entry points: the capacity of each of the two shared-memory
/// buffers (`a_s` for A, `b_s` for B).
pub const TILE_SIZE: usize = tile_size(ELEMENTS_PER_THREAD);

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

/// Shared memory of the tiled and circular kernels for keys of `key_bytes` bytes and
/// `elements_per_thread` outputs per thread per tile: the header, then `a_s`, `b_s` and `c_s`
/// of one [`tile_size`] of keys each (`c_s` stages a tile's outputs so that they are stored to
/// global memory coalesced).
pub const fn tiled_shared_bytes(key_bytes: usize, elements_per_thread: usize) -> usize {
    HEADER_BYTES + 3 * tile_size(elements_per_thread) * key_bytes
}

/// Most dynamic shared memory per block a merge entry point may need: what Volta (sm_70, the
/// oldest architecture the PTX is built for) gives a kernel that opts in past 48 KiB. Every
/// entry point fits, so the PTX runs everywhere it loads.
pub const MAX_SHARED_BYTES: usize = 96 * 1024;

// The splits end inside the header, after the co-ranks.
const _: () = assert!(
    SPLITS_OFFSET * 4 >= CO_RANK_BYTES && SPLITS_OFFSET * 4 + 4 * (BLOCK_THREADS + 1) <= HEADER_BYTES
);

/// Where `a_s` starts, in keys of `key_bytes` bytes from the start of shared memory (right
/// after the header; `b_s` and `c_s` follow, one [`tile_size`] of keys apart). Keys are 4 or 8 bytes,
/// so it is aligned.
pub const fn a_s_offset(key_bytes: usize) -> usize {
    HEADER_BYTES / key_bytes
}

/// Blocks of the tiled and circular kernels for a merge of `total` output keys with
/// `elements_per_thread` outputs per thread per tile: each block merges up to
/// [`TILES_PER_BLOCK`] tiles, but fewer while that would leave fewer than
/// [`MIN_TILED_BLOCKS`] blocks. Zero for an empty merge.
pub const fn tiled_blocks(total: usize, elements_per_thread: usize) -> usize {
    let tiles = total.div_ceil(tile_size(elements_per_thread));
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
/// tile (of `elements_per_thread` outputs per thread) can be partial.
#[inline(always)]
pub const fn tiled_block_outputs(total: usize, blocks: usize, elements_per_thread: usize) -> usize {
    let tile_size = tile_size(elements_per_thread);
    total.div_ceil(blocks).div_ceil(tile_size) * tile_size
}

/// The book's `C_curr` and `C_next` of block `block` of `blocks`: consecutive ranges of
/// [`tiled_block_outputs`] keys, clipped to the output.
#[inline(always)]
pub fn tiled_block_range(
    total: usize,
    blocks: usize,
    block: usize,
    elements_per_thread: usize,
) -> (usize, usize) {
    let per_block = tiled_block_outputs(total, blocks, elements_per_thread);
    let c_curr = (block * per_block).min(total);
    (c_curr, (c_curr + per_block).min(total))
}

/// The outputs `[c_curr, c_next)` thread `tid` merges of a tile of `c_tile` keys: the
/// coarsened chunk `elements_per_thread` keys long, clipped to the tile.
#[inline(always)]
pub fn thread_range(tid: usize, c_tile: usize, elements_per_thread: usize) -> (usize, usize) {
    let c_curr = (tid * elements_per_thread).min(c_tile);
    (c_curr, (c_curr + elements_per_thread).min(c_tile))
}

/// Keys of `key_bytes` bytes in 16 bytes (one for keys of 16 bytes or more): a vector load
/// or store, and a bulk copy's unit.
pub const fn keys_per_16_bytes(key_bytes: usize) -> usize {
    keys_in(16, key_bytes)
}

/// Keys of `key_bytes` bytes in `bytes` bytes, at least one.
const fn keys_in(bytes: usize, key_bytes: usize) -> usize {
    if key_bytes < bytes { bytes / key_bytes } else { 1 }
}

/// The bytes of a DRAM sector (the unit L2 reads from DRAM and serves): a merge-path block's bulk
/// load puts each run in shared memory at its global offset from a multiple of this, so its
/// copy moves whole sectors.
pub const SECTOR_BYTES: usize = 32;

/// Keys of `key_bytes` bytes to a [`SECTOR_BYTES`] sector (one for keys of a sector or more).
pub const fn keys_per_sector(key_bytes: usize) -> usize {
    keys_in(SECTOR_BYTES, key_bytes)
}

/// The greatest keys a merge-path block writes after A's run in shared memory, for threads of
/// `items` outputs each: one per output and one more, so that a thread whose outputs run past
/// A's last key reads only marks there (see `PathTile::merge_thread`).
pub const fn a_end_marks(items: usize) -> usize {
    items + 1
}

/// A launch shape of the merge-path kernel (beyond the book, `merge/path.rs`): threads per
/// block and outputs per thread; a tile is `block_threads × items` outputs. Unless `pipelined`,
/// each block merges exactly one tile; a pipelined block (`merge/pipelined.rs`) merges every
/// `grid`-th tile from its own, with the next tile's load in flight while it merges one, in
/// two input buffers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PathShape {
    pub block_threads: usize,
    pub items: usize,
    pub pipelined: bool,
}

impl PathShape {
    /// A one-tile-per-block shape.
    pub const fn new(block_threads: usize, items: usize) -> Self {
        Self { block_threads, items, pipelined: false }
    }

    /// The same tile, merged by pipelined blocks.
    pub const fn pipelined(self) -> Self {
        Self { pipelined: true, ..self }
    }

    /// Input buffers per block: two when pipelined (one being merged, one being loaded).
    pub const fn input_buffers(self) -> usize {
        if self.pipelined { 2 } else { 1 }
    }

    /// Where input buffer `buffer` starts in shared memory, in keys of `key_bytes` bytes:
    /// every buffer is [`input_keys`](Self::input_keys) long, rounded up to a sector.
    pub const fn input_offset(self, buffer: usize, key_bytes: usize) -> usize {
        buffer * self.input_keys(key_bytes).next_multiple_of(keys_per_sector(key_bytes))
    }

    /// Outputs per tile, and keys of shared memory per block.
    pub const fn tile_size(self) -> usize {
        self.block_threads * self.items
    }

    /// Keys of the input buffer, the first part of a block's shared memory: the tile's keys
    /// of A and B, each run wherever its load puts it (A's from position 0 and B's after A's
    /// end marks for the gather; each at its global offset from a sector for the bulk load,
    /// `S` keys to a sector, [`keys_per_sector`]), the [`a_end_marks`] greatest keys after A's
    /// run, and one after B's. B's mark is at most at `tile + marks + 3S - 2`.
    pub const fn input_keys(self, key_bytes: usize) -> usize {
        self.tile_size() + a_end_marks(self.items) + 4 * keys_per_sector(key_bytes)
    }

    /// Where the merged tile starts in shared memory, in keys of `key_bytes` bytes: after the
    /// input buffers, 16-byte aligned so that the merged tile can be read in 16-byte vectors.
    pub const fn merged_offset(self, key_bytes: usize) -> usize {
        self.input_offset(self.input_buffers(), key_bytes)
    }

    /// Where the bulk loads' transaction barriers (8 bytes each, one per input buffer) are in
    /// shared memory, in bytes: after the merged tile, 8-byte aligned.
    pub const fn barrier_offset(self, key_bytes: usize) -> usize {
        ((self.merged_offset(key_bytes) + self.tile_size()) * key_bytes).next_multiple_of(8)
    }

    /// Dynamic shared memory per block for keys of `key_bytes` bytes: the input buffers
    /// ([`input_offset`](Self::input_offset)), the merged tile
    /// ([`merged_offset`](Self::merged_offset)) and the barriers
    /// ([`barrier_offset`](Self::barrier_offset)).
    pub const fn shared_bytes(self, key_bytes: usize) -> usize {
        self.barrier_offset(key_bytes) + 8 * self.input_buffers()
    }

    /// Whether a block of this shape fits in [`MAX_SHARED_BYTES`] with keys of `key_bytes`
    /// bytes.
    pub const fn fits(self, key_bytes: usize) -> bool {
        self.shared_bytes(key_bytes) <= MAX_SHARED_BYTES
    }

    /// Steps of a set-operation thread's walk (`merge/set_path.rs`): a piece between balanced
    /// splits `items` diagonals apart has up to `items + 1` keys.
    pub const fn set_steps(self) -> usize {
        self.items + 1
    }

    /// Tiles (blocks) of a merge of `total` outputs; zero for an empty merge.
    pub const fn tiles(self, total: usize) -> usize {
        total.div_ceil(self.tile_size())
    }
}

/// The merge-path shape for 4-byte keys (i32, u32, f32), chosen by the sweep
/// ([`PATH_SWEEP`]) at 2^27 + 2^27 keys on an H200 (Hopper build, docs/merge-h200.md): 256×21
/// (0.587 ms) level with 256×23 (0.591) and ahead of 512×15 (0.594), 256×19 (0.595) and
/// 256×15 (0.605). More outputs per thread amortise each thread's co-rank search, until the
/// two tiles of shared memory per block cut the blocks per SM: 5 at 256×21 (42 KB each), 4
/// at 256×23.
pub const PATH_4_BYTE: PathShape = PathShape::new(256, 21);

/// The merge-path shape for 8-byte keys (i64, f64), chosen by the same sweep: 256×11 (1.154
/// ms) ahead of 256×15 (1.159), 128×19 (1.172) and 256×23 (1.173, 94 KB of shared memory per
/// block: 2 blocks per SM).
pub const PATH_8_BYTE: PathShape = PathShape::new(256, 11);

/// The shared memory of a set-operation block (`merge/set_path.rs`) of `shape`, for keys of
/// `key_bytes` bytes and, `by_key`, their values; offsets in bytes from its start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SetLayout {
    pub shape: PathShape,
    pub key_bytes: usize,
}

impl SetLayout {
    pub const fn new(shape: PathShape, key_bytes: usize) -> Self {
        Self { shape, key_bytes }
    }

    /// The input buffer comes first, laid out as merge path's for threads of
    /// [`set_steps`](PathShape::set_steps) keys (a tile of up to `tile + 1` keys, A's end marks
    /// and B's); the outputs' keys are read from it in the end.
    pub const fn input_bytes(self) -> usize {
        (self.input_keys() * self.key_bytes).next_multiple_of(16)
    }

    const fn input_keys(self) -> usize {
        let walk = PathShape::new(self.shape.block_threads, self.shape.set_steps());
        walk.input_keys(self.key_bytes)
    }

    /// Whether every position in the input buffer fits the positions' `u16`.
    pub const fn positions_fit_u16(self) -> bool {
        self.input_keys() <= u16::MAX as usize + 1
    }

    /// The compacted tile: each output's key's position in the input buffer (`u16`, up to
    /// `tile + 1`).
    pub const fn positions_offset(self) -> usize {
        self.input_bytes()
    }

    /// Each thread's balanced split: `block + 1` of A's indices, then as many of B's (`u32`).
    pub const fn splits_offset(self) -> usize {
        self.positions_offset() + (2 * (self.shape.tile_size() + 1)).next_multiple_of(16)
    }

    /// Each warp's count of outputs (`u32`).
    pub const fn totals_offset(self) -> usize {
        self.splits_offset() + 2 * 4 * (self.shape.block_threads + 1)
    }

    /// The outputs of the tiles before this block's (`u64`), from the look-back.
    pub const fn prefix_offset(self) -> usize {
        (self.totals_offset() + 4 * self.shape.block_threads.div_ceil(32)).next_multiple_of(8)
    }

    /// The bulk loads' barrier (`u64`).
    pub const fn barrier_offset(self) -> usize {
        self.prefix_offset() + 8
    }

    /// Dynamic shared memory per block.
    pub const fn bytes(self) -> usize {
        self.barrier_offset() + 8
    }
}

/// The set-operation shape for 4-byte keys (i32, u32, f32) (`merge/set_path.rs`), chosen by the
/// sweep ([`SET_SHAPES_I32`](super::SET_SHAPES_I32)) at 2^27 + 2^27 i32 keys on an H200, the sum
/// of union and intersection on uniform and few-unique keys: 256x31 (3.759 ms) ahead of 256x29
/// (3.878), 128x31 (3.895), 256x25 (4.145), 128x25 (4.281), 256x21 (4.630), 256x15 (5.524) and
/// 512x15 (7.636, 64+ registers: one block per SM). Larger tiles amortise each tile's fixed
/// costs (its splits, scan, look-back and barriers) over more keys; a walk's three words have a
/// bit per step, so 31 outputs (32 steps) is the largest.
pub const SET_4_BYTE: PathShape = PathShape::new(256, 31);

/// The set-operation shape for 8-byte keys (i64, f64), chosen by the same sweep with f64 keys:
/// 128x27 (6.256 ms) ahead of 128x23 (6.387), 256x19 (6.612), 128x19 (6.993), 256x15 (7.083),
/// 128x15 (7.410), 256x11 (8.043) and 64x19 (8.333).
pub const SET_8_BYTE: PathShape = PathShape::new(128, 27);

/// The set-operation shape for keys of `key_bytes` bytes.
pub const fn set_shape(key_bytes: usize) -> PathShape {
    if key_bytes <= 4 { SET_4_BYTE } else { SET_8_BYTE }
}

/// The merge-path shape for keys of `key_bytes` bytes.
pub const fn path_shape(key_bytes: usize) -> PathShape {
    if key_bytes <= 4 { PATH_4_BYTE } else { PATH_8_BYTE }
}

/// The merge-path shape for 8-byte keys on [lopsided] merges: fewer threads, each
/// merging more keys. On such a merge nearly every tile is one long stretch of the long run,
/// each thread's serial merge takes the same side key after key, and what a tile costs beyond
/// its keys' bytes is its threads' co-rank searches, which more outputs per thread amortise.
/// Measured on an H200 (Hopper build, session of 2026-12-03 19:33, `merge --path-shape`, three
/// rounds each, docs/merge-h200.md), `f64`, time with 128×19 over time with 256×11: 2^27 +
/// 2^20 0.995 in each of four calls, 2^27 + 2^21 0.998, 2^26 + 2^16 0.992, 2^27 + 2^20
/// few-unique 0.994, `i64` 2^27 + 2^20 0.997; but 2^27 + 2^22 1.003, 2^27 + 2^24 1.008, 2^27 +
/// 2^27 1.009, and on smaller lopsided merges 2^24 + 2^17 1.002, 2^22 + 2^15 1.001, 2^20 + 2^13
/// 1.19. Other shapes on 2^27 + 2^20: 128×11 1.011, 128×15 1.023, 256×7 1.001, 256×15 1.021,
/// 512×7 1.020. On 4-byte keys no shape beat 256×21 on lopsided merges (`i32` 2^27 + 2^20:
/// 128×15 1.015, 256×23 1.018, 128×19 1.024).
pub const PATH_8_BYTE_LOPSIDED: PathShape = PathShape::new(128, 19);

/// The fewest keys of a merge that [`PATH_8_BYTE_LOPSIDED`] runs: between the lopsided merges
/// where it lost (2^24 + 2^17 and smaller) and won (2^26 + 2^16 and larger).
pub const PATH_LOPSIDED_MIN_KEYS: usize = 1 << 25;

/// How many times the shorter run a merge's longer run must hold, at least, for the merge to be
/// [lopsided]: between the ratios where [`PATH_8_BYTE_LOPSIDED`] lost (32, 2^27 +
/// 2^22) and won (128, 2^27 + 2^20), in the logarithm's middle.
pub const PATH_LOPSIDED_RATIO: usize = 64;

/// Whether a merge of runs of `m` and `n` keys is lopsided: the longer at least
/// [`PATH_LOPSIDED_RATIO`] times the shorter (an empty run counts).
pub const fn lopsided(m: usize, n: usize) -> bool {
    let (shorter, longer) = if m < n { (m, n) } else { (n, m) };
    shorter.saturating_mul(PATH_LOPSIDED_RATIO) <= longer
}

/// The merge-path shape for a merge of `m` and `n` keys of `key_bytes` bytes: [`path_shape`],
/// but [`PATH_8_BYTE_LOPSIDED`] for 8-byte keys on [lopsided] merges of
/// [`PATH_LOPSIDED_MIN_KEYS`] keys or more.
pub const fn path_shape_for(key_bytes: usize, m: usize, n: usize) -> PathShape {
    let large = m.saturating_add(n) >= PATH_LOPSIDED_MIN_KEYS;
    if key_bytes > 4 && large && lopsided(m, n) { PATH_8_BYTE_LOPSIDED } else { path_shape(key_bytes) }
}

/// The benchmarks' merge-path sweep (i32 and f64 keys): block sizes × outputs per thread,
/// odd counts (no bank conflicts when a thread stages its outputs at `tid * items`) and one
/// even count to show what the conflicts cost. Those whose shared memory does not
/// [`fit`](PathShape::fits) with 8-byte keys (512 × 15 and 512 × 19) are swept with 4-byte
/// keys only.
pub const PATH_SWEEP: [PathShape; 15] = {
    const fn s(block_threads: usize, items: usize) -> PathShape {
        PathShape::new(block_threads, items)
    }
    [
        s(128, 7),
        s(128, 11),
        s(128, 15),
        s(128, 19),
        s(256, 7),
        s(256, 11),
        s(256, 15),
        s(256, 16),
        s(256, 19),
        s(256, 21),
        s(256, 23),
        s(512, 7),
        s(512, 11),
        s(512, 15),
        s(512, 19),
    ]
};

/// The benchmarks' sweep of pipelined merge-path shapes (i32 and f64 keys; f64 where they
/// fit): three tiles of shared memory per block (two input buffers and the merged tile), so
/// smaller tiles than the one-tile-per-block defaults.
pub const PATH_PIPELINED_SWEEP: [PathShape; 5] = [
    PathShape::new(128, 15).pipelined(),
    PathShape::new(128, 21).pipelined(),
    PathShape::new(256, 11).pipelined(),
    PathShape::new(256, 15).pipelined(),
    PathShape::new(256, 21).pipelined(),
];

/// Threads per block of the merge-path partition kernel (one co-rank per thread).
pub const PARTITION_THREADS: usize = 256;

/// Samples of each run that merge path's sample kernel copies, every `S`-th key (`S` the least
/// power of two that leaves at most this many), for the first levels of the partition's
/// co-rank searches ([`merge_path_samples`](super::merge_path_samples)). Fewer samples make
/// the sample kernel shorter (each sample is a DRAM sector of its own) and leave one more
/// level per halving to the runs. Measured on an H200 (session of 2026-12-02 13:10, against no
/// samples, two rounds): at 2^24 + 2^24 `i32` 2^16 samples 1.2–1.4 % faster, 2^15 2.0–2.8 %,
/// 2^14 2.8–3.3 %; `f64` 0.1–0.4 %, 0.9–1.2 %, 1.3–1.5 %; at 2^27 + 2^27 the three within
/// 0.2 % of each other (`i32` 1.1–1.6 % faster, `f64` 0–0.2 % slower); 2^17 samples lost to
/// 2^16 everywhere. So 2^14.
pub const PARTITION_SAMPLES: usize = 1 << 14;

/// The shortest run for which the partition searches samples first
/// ([`partition_samples`](super::partition_samples)): both runs at least this long. Measured
/// on an H200 with 2^16 samples (session of 2026-12-02 13:10, against none, two rounds): 2^20 +
/// 2^20 16–27 % slower (the sample kernel's few microseconds on a 14–19 µs merge); 2^22 + 2^22
/// `i32` 0.2–2.1 % faster, `f64` 0.3 % faster to 1.3 % slower; from 2^24 a side `i32` 1.1–2 %
/// faster, `f64` within 0.4 % (2^26 + 2^26 few-unique 0.8–0.9 % faster); 2^27 + 2^20, whose
/// searches span only B's 2^20 keys, 0.2–0.3 % slower. With 2^14 samples, the default, 2^24 +
/// 2^24 gains 2.8–3.3 % (`i32`) and 1.3–1.5 % (`f64`). So 2^22.
pub const PARTITION_MIN_SAMPLED_RUN: usize = 1 << 22;

/// The fewest keys of a merge whose partition, where no samples bound its searches over the
/// whole merge (a run shorter than [`PARTITION_MIN_SAMPLED_RUN`], as in lopsided merges), finds
/// those co-ranks by interpolation ([`co_rank_interpolated`](super::co_rank_interpolated)):
/// about 6 dependent probes instead of 20 on smooth keys. Measured on an H200 (Hopper build,
/// session of 2026-12-03, docs/merge-h200.md, "Interpolation landed"), from 2^24 keys against
/// none: `f64` 2^27 + 2^20 1.9 % faster, `i32` 2^27 + 2^20 1.7 %, `f64` 2^26 + 2^16 1.5 %,
/// `i32` 2^26 + 2^16 few-unique 1.0 % slower (ties hand its searches to bisection after a
/// wasted probe); merges with samples unchanged. At every size, 2^20 + 2^20 few-unique lost
/// 9–12 % in two calls, and uniform 2^20 + 2^20 moved between 11 % faster and 9 % slower from
/// call to call. So only from 2^24 keys, where the searches are long.
pub const PARTITION_MIN_INTERPOLATED: usize = 1 << 24;

/// The first tiles of a merge-path merge, which on Hopper co-rank their own bounds
/// (`path::lead_tile`: a warp's search, about 3 rounds of loads on smooth
/// keys) instead of waiting for the partition that the merge kernel overlaps: the first wave
/// merges while the partition's slowest searches finish. Measured on an H200 (session of
/// 2026-12-03 09:04, docs/merge-h200.md, "The first tiles co-rank themselves"), mean ratio to
/// none over two rounds, two calls: with 512, `f64` 2^27 + 2^20 0.997 and 0.997, `i32` 2^27 +
/// 2^20 0.995 and 0.992, `f64` 2^26 + 2^16 0.990 and 0.991, `i32` 2^27 + 2^27 few-unique 0.998
/// twice, `i32` 2^27 + 2^27 uniform 1.003 and 1.002; 256 gained less (0.997, 0.998, 0.996,
/// 0.999), 1024 and 2048 less too (2048: 1.000 to 1.008), their searches' loads taking DRAM
/// from the partition. So 512, about the merge blocks an H200 holds at once.
pub const PATH_LEAD_TILES: usize = 512;

/// Tile starts per first-level search of the merge-path partition in two levels
/// ([`partition_group`](super::path::partition_group)): one lane in `PARTITION_GROUP` co-ranks
/// over the whole merge, the others only between their group's two first-level co-ranks.
/// Measured on an H200 against groups of 2, 8 and 16 (docs/merge-h200.md, "The partition in two
/// levels"): 4 gave the fastest whole merge on uniform keys, within 0.3 % of 8 on few-unique.
pub const PARTITION_GROUP: usize = 4;

/// The fewest tiles for which the partition runs in two levels: below it, every thread
/// co-ranks over the whole merge (one level). The second level's dependent probes cost every
/// merge latency (on an H200, 2–6 µs from 2^20 to 2^26 keys a side), and its fewer DRAM sectors
/// repay that only past about 50 000 tiles: measured two levels against one (session of
/// 2026-12-02 10:06, two rounds), `f64` 2^27 + 2^27 (95 325 tiles) 1.4–1.6 % faster, `i32`
/// 2^27 + 2^27 (49 932) 0.3–0.5 % faster, `f64` 2^26 + 2^26 (47 662) ±0.4 %, `f64` 2^27 + 2^20
/// (48 035) 1.2 % slower, `i32` 2^27 + 2^24 (26 091) 2 % slower. So 2^16, with a margin for the
/// lopsided merges. With the second level bounded in both runs, 2^15 again (session of
/// 2026-12-02 16:09, two rounds): `i32` 2^27 + 2^27 few-unique 0.7 % faster but uniform 0.6 %
/// slower, `f64` 2^26 + 2^26 0.7 % slower, `f64` 2^27 + 2^20 0.4 % faster: which wins depends on
/// the keys, which the partition does not know beforehand, so 2^16 stays. Measured once more
/// after interpolation and the lead tiles (session of 2026-12-03 11:41, call 2): 2^15 made
/// `f64` 2^27 + 2^20 0.4 % slower, `i32` 2^27 + 2^27 uniform 0.7 % slower and few-unique 0.8 %
/// faster: 2^16 still.
pub const PARTITION_TWO_LEVEL_MIN_TILES: usize = 1 << 16;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lopsided_merges_of_8_byte_keys_take_their_own_shape() {
        let lopsided_shape =
            |key_bytes, m: usize, n: usize| path_shape_for(key_bytes, m, n) == PATH_8_BYTE_LOPSIDED;
        // The measured rows: 2^27 + 2^20 and 2^26 + 2^16 gained; 2^27 + 2^22 and less lopsided
        // merges lost, as did lopsided ones of 2^24 + 2^17 keys and fewer.
        for (m, n) in [(1 << 27, 1 << 20), (1 << 26, 1 << 16), (1 << 20, 1 << 27)] {
            assert!(lopsided_shape(8, m, n), "{m} + {n}");
            assert_eq!(path_shape_for(4, m, n), PATH_4_BYTE, "{m} + {n}");
        }
        // Not lopsided enough, or too small (2^24 + 2^17 and smaller lost).
        for (m, n) in [
            (1 << 27, 1 << 22),
            (1 << 27, 1 << 24),
            (1 << 27, 1 << 27),
            (1 << 22, 1 << 27),
            (1 << 24, 1 << 17),
            (1 << 20, 1 << 13),
            (1000, 0),
        ] {
            assert_eq!(path_shape_for(8, m, n), PATH_8_BYTE, "{m} + {n}");
        }
        assert!(
            lopsided_shape(8, PATH_LOPSIDED_MIN_KEYS, 0) && !lopsided_shape(8, PATH_LOPSIDED_MIN_KEYS - 1, 0)
        );
        // The ratio's edge, an empty run, and runs whose ratio's product would overflow.
        assert!(lopsided(64 * 1000, 1000) && !lopsided(64 * 1000 - 1, 1000));
        assert!(lopsided(0, 0) && lopsided(0, 5) && lopsided(5, 0));
        assert!(!lopsided(usize::MAX / 2, usize::MAX / 3));
    }

    #[test]
    fn merge_path_shapes_fit_in_shared_memory_and_include_the_defaults() {
        for shape in PATH_SWEEP {
            assert!(shape.fits(4), "{shape:?}");
            assert_eq!(
                shape.fits(8),
                !matches!((shape.block_threads, shape.items), (512, 15 | 19)),
                "{shape:?}"
            );
            // Full tiles are stored in 16-byte vectors, so they start 16-byte aligned.
            assert_eq!(shape.tile_size() * 4 % 16, 0, "{shape:?}");
        }
        assert!(PATH_SWEEP.contains(&PATH_4_BYTE) && PATH_SWEEP.contains(&PATH_8_BYTE));
        assert!(PATH_4_BYTE.fits(4) && PATH_8_BYTE.fits(8));
        assert!(PATH_SWEEP.contains(&PATH_8_BYTE_LOPSIDED) && PATH_8_BYTE_LOPSIDED.fits(8));
        // The merged tile starts 16 bytes aligned, after the input buffer; the barrier after it.
        let s256x15 = PathShape::new(256, 15);
        assert_eq!(s256x15.input_keys(4), 3840 + 16 + 32);
        assert_eq!(s256x15.merged_offset(4), 3888);
        assert_eq!(s256x15.barrier_offset(4), (3888 + 3840) * 4);
        assert_eq!(s256x15.shared_bytes(4), (3888 + 3840) * 4 + 8);
        assert_eq!(PathShape::new(256, 11).merged_offset(8), 2816 + 12 + 16);
        let tiny = PathShape::new(4, 3);
        assert_eq!((tiny.merged_offset(16), tiny.shared_bytes(16)), (24, (24 + 12) * 16 + 8));
        // Pipelined: two input buffers, each sector aligned, then the merged tile, two barriers.
        let piped = s256x15.pipelined();
        assert_eq!((piped.input_offset(1, 4), piped.merged_offset(4)), (3888, 2 * 3888));
        assert_eq!(piped.shared_bytes(4), (2 * 3888 + 3840) * 4 + 16);
        for shape in PATH_PIPELINED_SWEEP {
            assert!(shape.pipelined && shape.fits(4), "{shape:?}");
            assert_eq!(shape.fits(8), shape.tile_size() < 256 * 21, "{shape:?}");
        }
        assert_eq!(PATH_4_BYTE.tiles(0), 0);
        assert_eq!(PATH_4_BYTE.tiles(1), 1);
        assert_eq!(PATH_4_BYTE.tiles(PATH_4_BYTE.tile_size() + 1), 2);
    }

    #[test]
    fn a_tile_is_one_coarsened_chunk_per_thread() {
        assert_eq!(TILE_SIZE, BLOCK_THREADS * ELEMENTS_PER_THREAD);
        assert!(COARSENING_SWEEP.contains(&ELEMENTS_PER_THREAD));
        for c in COARSENING_SWEEP {
            let tile = tile_size(c);
            assert_eq!(thread_range(0, tile, c), (0, c));
            assert_eq!(thread_range(BLOCK_THREADS - 1, tile, c), (tile - c, tile));
            assert_eq!(thread_range(2, 2 * c + 3, c), (2 * c, (3 * c).min(2 * c + 3)));
        }
        assert_eq!(thread_range(5, 7, ELEMENTS_PER_THREAD), (7, 7));
        assert_eq!(thread_range(5, 7, 1), (5, 6));
    }

    #[test]
    fn shared_memory_fits_one_block_and_keys_are_aligned() {
        for key_bytes in [4, 8] {
            // Past 48 KiB the host opts in to more dynamic shared memory (Volta and later).
            assert!(tiled_shared_bytes(key_bytes, ELEMENTS_PER_THREAD) <= MAX_SHARED_BYTES);
            assert_eq!(a_s_offset(key_bytes) * key_bytes, HEADER_BYTES);
            assert_eq!(HEADER_BYTES % 16, 0);
        }
        // The sweep fits, except the largest factor with 8-byte keys, which has no entry point.
        for c in COARSENING_SWEEP {
            assert!(tiled_shared_bytes(4, c) <= MAX_SHARED_BYTES, "4-byte keys, C = {c}");
            assert_eq!(tiled_shared_bytes(8, c) <= MAX_SHARED_BYTES, c < 16, "8-byte keys, C = {c}");
        }
    }

    #[test]
    fn block_ranges_cover_the_output_once_in_whole_tiles() {
        for c in COARSENING_SWEEP {
            let tile = tile_size(c);
            for total in [0, 1, tile - 1, tile, tile + 1, 1_638_400, 10 * tile * 1024 + 5, 1 << 34] {
                let blocks = tiled_blocks(total, c);
                let mut expected_start = 0;
                for block in 0..blocks {
                    let (c_curr, c_next) = tiled_block_range(total, blocks, block, c);
                    assert_eq!(c_curr, expected_start, "C = {c}, total {total}, block {block}");
                    assert!(c_next - c_curr <= TILES_PER_BLOCK * tile);
                    assert!(c_curr < c_next, "total {total}: block {block} of {blocks} has nothing to do");
                    if c_next < total {
                        assert_eq!((c_next - c_curr) % tile, 0);
                    }
                    expected_start = c_next;
                }
                assert_eq!(expected_start, total, "C = {c}, total {total}");
            }
        }
    }

    #[test]
    fn small_merges_get_one_block_per_tile_and_large_ones_several_tiles_per_block() {
        let blocks = |total| tiled_blocks(total, ELEMENTS_PER_THREAD);
        assert_eq!(blocks(0), 0);
        assert_eq!(blocks(1), 1);
        assert_eq!(blocks(100 * TILE_SIZE), 100);
        assert_eq!(blocks(MIN_TILED_BLOCKS * TILE_SIZE * 2), MIN_TILED_BLOCKS);
        assert_eq!(blocks((MIN_TILED_BLOCKS + 1) * TILE_SIZE), MIN_TILED_BLOCKS / 2 + 1);
        assert_eq!(blocks(1 << 28), (1usize << 28).div_ceil(TILE_SIZE * TILES_PER_BLOCK));
        // One output per thread: tiles of one key per thread, eight times as many of them.
        assert_eq!(tiled_blocks(1 << 28, 1), (1usize << 28).div_ceil(BLOCK_THREADS * TILES_PER_BLOCK));
        assert_eq!(tiled_blocks(100 * BLOCK_THREADS, 1), 100);
    }
}
