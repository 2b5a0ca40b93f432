//! The ordered merge (PMPP chapter 12): the co-rank function and the sequential merge shared
//! by the host and the GPU, the circular-buffer helpers, the tile constants, and one file per
//! kernel.
//!
//! All merges are stable: on equal keys, A's element comes first. Inputs are sorted ascending
//! (merge path also takes other key orders, [`KeyOrder`]) and hold no NaN (the host checks). Sizes and every index are 64-bit (`usize` on both
//! targets), so `m + n` may pass 2^32.
//!
//! * [`merge_basic`] (12.5): every thread co-ranks its coarsened output chunk in global memory.
//! * [`merge_tiled`] (12.6): one co-rank per block in global memory; tiles of A and B in
//!   shared memory, loaded coalesced; per-thread co-ranks in shared memory.
//! * [`merge_circular`] (12.7): the tiled kernel with circular buffers that keep the unconsumed
//!   part of each tile and load only what was consumed.
//!
//! Beyond the book, [`merge_path`] (Green, McColl & Bader 2012) is the kernel to run for speed:
//! a partition kernel co-ranks every tile once, and each block merges exactly one tile;
//! [`merge_path_pipelined`] has each block merge a series of tiles with the next one's load in
//! flight; [`merge_path_by_key`] merges keys with values that travel with them; and
//! [`set_operation`] (with [`set_operation_by_key`]) runs `std::set_*`'s union, intersection,
//! difference and symmetric difference in one pass, on balanced splits and decoupled look-back.
//!
//! The book's three are thread-coarsened (12.8): `C` outputs per thread between its two co-ranks,
//! a const generic of every kernel. The main entry points use [`tiles::ELEMENTS_PER_THREAD`];
//! the benchmarks' sweep ([`tiles::COARSENING_SWEEP`]) has entry points of its own.

mod basic;
mod by_key;
mod circular;
mod circular_buffer;
mod entry;
mod interpolation;
mod keys;
pub mod lookback;
mod order;
mod path;
mod pipelined;
mod samples;
mod sequential;
mod set_ops;
mod set_path;
mod ties;
mod tiled;
pub mod tiles;
mod warp_co_rank;

#[cfg(test)]
mod tests;

pub use basic::{merge_basic, merge_basic_thread};
pub use by_key::{Bytes16, merge_path_by_key};
pub use circular::{CircularBlock, merge_circular};
pub use circular_buffer::{Circular, co_rank_circular, merge_sequential_circular};
pub use entry::{
    BY_KEY_SHAPES_F32, BY_KEY_SHAPES_F64, BY_KEY_SHAPES_I32, BY_KEY_SHAPES_I64, BY_KEY_SHAPES_U32,
    DESCENDING_KEY_TYPES, PATH_SHAPES_F32, PATH_SHAPES_F64, PATH_SHAPES_I32, PATH_SHAPES_I64,
    PATH_SHAPES_U32, SET_SHAPES_F32, SET_SHAPES_F64, SET_SHAPES_I32, SET_SHAPES_I64, SET_SHAPES_U32,
    UPPER16_KEY_TYPES,
};
pub use interpolation::{co_rank_interpolated, co_rank_interpolated_between};
pub use keys::{KeyReader, KeyRun, KeyWriter, MergeKey, SharedKeys};
pub use order::{Ascending, ByUpper16, Descending, KeyOrder};
pub use path::{
    PartitionInputs, PathTile, coarse_search, group_bound_lanes, merge_path, merge_path_partition,
    partition_coarse, partition_fine, partition_group,
};
pub use pipelined::{block_tiles, merge_path_pipelined, pipeline_slot};
pub use samples::{
    PartitionSamples, SampleStride, co_rank_bounds_from_samples, merge_path_samples, partition_samples,
    sample_stride, splits_len,
};
pub use sequential::{
    RankIndex, co_rank, co_rank_by, co_rank_in, co_rank_reaches, merge_sequential, merge_sequential_by,
};
pub use set_ops::{SetOperation, WalkMasks, balanced_split, set_walk, set_walk_steps};
pub use set_path::{
    place_kept, set_operation, set_operation_by_key, set_partition, set_partition_thread, set_splits_len,
    set_tile, split_thread, store_thread, walk_thread,
};
pub use ties::{climb_aligned, co_rank_across_ties};
pub use tiled::{TileBuffers, TiledBlock, merge_tiled};
pub use warp_co_rank::{co_rank_by_warp, co_rank_guess, lane_probe, narrowed, search_rounds};
