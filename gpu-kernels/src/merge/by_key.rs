//! Beyond the book: merge by key (thrust's `merge_by_key`) on merge path. The keys merge exactly
//! as in [`merge_path`](super::merge_path), with the same partition, the same tile load into
//! shared memory and the same serial merge; each key's value, which no comparison reads, moves
//! once, from its input straight to its output slot:
//!
//! * the serial merge ([`PathTile::walk`]) records, for each output, where its key sits in
//!   shared memory (its **source**, a 32-bit position: A's run lies below `b_at`, B's from it)
//!   instead of the key itself, in the buffer where the keys-only kernel stages the merged tile.
//!   It checks A's end explicitly (one compare per output): past A's run lie end marks, which
//!   stand in for B's greatest keys when only keys move, but have no values;
//! * the store phase ([`PathTile::store_by_key`]) reads each output's source, its key from
//!   shared memory and its value from global memory (A's or B's values, at the key's index),
//!   issuing every value load before the first value store (values of up to 8 bytes), and
//!   stores keys and values coalesced.
//!
//! Values are opaque bits of 4, 8 or 16 bytes (`u32`, `u64`, [`Bytes16`]): any plain type of one
//! of those sizes travels, the host's `#[repr(C)]` records included. Stable like the keys-only
//! merge: on equal keys, A's key and its value come first.

use super::keys::{KeyReader, KeyWriter, MergeKey, SharedKeys};
use super::order::KeyOrder;
use super::path::{PathTile, block_tile, load_tile, release_tile_memory, tile_memory};
use super::tiles::PathShape;
use crate::device::thread::*;
use crate::device::{store_global_16, store_vector};

/// A 16-byte value, moved as one unit (16-byte aligned, as every element of a device buffer of
/// 16-byte elements is).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(C, align(16))]
pub struct Bytes16(pub [u32; 4]);

/// Bytes of values a thread holds in registers between their loads and their stores, in a full
/// tile by key (32 registers): all of a thread's values for 4-byte values with 4-byte keys and
/// 8-byte values with 8-byte keys at the default shapes (6 vectors of 16 bytes), so that their
/// loads are all in flight at once; wider values go in groups.
const VALUES_IN_FLIGHT_BYTES: usize = 128;

/// Vectors of `V` values of `P` in one group: [`VALUES_IN_FLIGHT_BYTES`] of them, at least one
/// and at most [`MAX_VECTORS`]; one for values wider than 8 bytes, stored as soon as they are
/// loaded (held, arrays of them are copied through local memory).
const fn vectors_per_group<P, const V: usize>() -> usize {
    let vectors = VALUES_IN_FLIGHT_BYTES / (V * size_of::<P>());
    if vectors == 0 || size_of::<P>() > 8 {
        1
    } else if vectors > MAX_VECTORS {
        MAX_VECTORS
    } else {
        vectors
    }
}

/// The most vectors in a group (4-byte values, four to a vector).
const MAX_VECTORS: usize = VALUES_IN_FLIGHT_BYTES / 16;

impl PathTile {
    /// Phase 2 by key: the serial merge of thread `tid`'s outputs ([`walk`](Self::walk),
    /// checking A's end), writing each output's source, the shared position of its key, to
    /// position `tid * ITEMS + k` of `sources`.
    ///
    /// # Safety
    /// As [`walk`](Self::walk); `sources` has room for the tile, and no other thread accesses
    /// this thread's positions of it.
    #[inline(always)]
    pub unsafe fn merge_thread_sources<
        K: MergeKey,
        O: KeyOrder<K>,
        S: KeyReader<K>,
        W: KeyWriter<u32>,
        const BLOCK: usize,
        const ITEMS: usize,
        const FULL: bool,
    >(
        &self,
        tid: u32,
        tile: S,
        sources: W,
    ) {
        // SAFETY: per the caller; `walk` emits only this thread's positions of the tile.
        unsafe {
            self.walk::<K, O, S, BLOCK, ITEMS, FULL, true>(tid, tile, |c, _, key_at| {
                sources.store(c as usize, key_at)
            })
        }
    }

    /// The value of the key at shared position `at`: A's value at the key's index in A if `at`
    /// is below `b_at`, else B's.
    ///
    /// # Safety
    /// `at` is the position of one of the tile's keys in the layout of `self`; `a_values` and
    /// `b_values` hold a value for every key of A and of B.
    #[inline(always)]
    unsafe fn value_at<P: Copy>(&self, at: u32, a_values: *const P, b_values: *const P) -> P {
        // A's key at position `at` is A's `a_start + at - a_at`; B's is B's `b_start + at - b_at`.
        let a_base = a_values.wrapping_add(self.a_start).wrapping_sub(self.a_at as usize);
        let b_base = b_values.wrapping_add(self.b_start).wrapping_sub(self.b_at as usize);
        // SAFETY: per the caller, the index lands on the key's value.
        unsafe { *if at < self.b_at { a_base } else { b_base }.wrapping_add(at as usize) }
    }

    /// Phase 3 by key: thread `tid` stores its share of the merged tile, consecutive threads
    /// taking consecutive outputs: for each, its source from `sources`, its key from `tile`,
    /// its value from `a_values` or `b_values`. A full tile goes in vectors of `V` outputs,
    /// vector `tid + k * BLOCK`, keys as 16-byte stores; a partial one output by output,
    /// position `tid + k * BLOCK`. Values of up to 8 bytes are all loaded before the first is
    /// stored (the stores could alias the loads, as far as the compiler knows, so it would not
    /// hoist them), so a thread waits for DRAM once, not once per vector
    /// (`VALUES_IN_FLIGHT_BYTES`, 128); wider ones are stored as loaded.
    ///
    /// # Safety
    /// The sources are in `sources`, written by every thread before a barrier, and name keys in
    /// `tile` in the layout of `self`; `a_values` and `b_values` hold a value for every key of A
    /// and of B; `c` and `c_values` have room for the merge's outputs and start aligned to `V`
    /// keys and `V` values; so does every full tile (`BLOCK × ITEMS` is a multiple of `V`).
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn store_by_key<
        K: MergeKey,
        P: Copy,
        S: KeyReader<K>,
        I: KeyReader<u32>,
        const BLOCK: usize,
        const ITEMS: usize,
        const V: usize,
        const FULL: bool,
    >(
        &self,
        tid: u32,
        tile: S,
        sources: I,
        a_values: *const P,
        b_values: *const P,
        c: *mut K,
        c_values: *mut P,
    ) {
        let (c, c_values) = (c.wrapping_add(self.c_start), c_values.wrapping_add(self.c_start));
        // SAFETY (both forms): sources name the tile's keys, per the caller; reads of a partial
        // tile are clamped into it, writes are inside it.
        unsafe {
            if FULL {
                let vectors = (BLOCK * ITEMS / V) as u32;
                // In groups (one for the key and value types of the targets: see above).
                let per_group = const { vectors_per_group::<P, V>() };
                for group in 0..ITEMS.div_ceil(V).div_ceil(per_group) {
                    let mine = |k: usize| {
                        let k = group * per_group + k;
                        let v = tid + (k * BLOCK) as u32;
                        (k < ITEMS.div_ceil(V) && v < vectors).then_some(v as usize * V)
                    };
                    // Filled where `mine(k)` is `Some`, and read only there.
                    let mut values = [None::<[P; V]>; MAX_VECTORS];
                    #[allow(clippy::needless_range_loop)] // (an iterator would keep them in memory)
                    for k in 0..per_group {
                        if let Some(at) = mine(k) {
                            let key_at: [u32; V] = sources.load_vector::<V>(at);
                            let keys: [K; V] = core::array::from_fn(|e| tile.load(key_at[e] as usize));
                            store_global_16(c.add(at), keys);
                            if per_group == 1 {
                                // Value by value: an array of wide values is copied through
                                // local memory.
                                for e in 0..V {
                                    c_values.add(at + e).write(self.value_at(key_at[e], a_values, b_values));
                                }
                            } else {
                                values[k] = Some(core::array::from_fn(|e| {
                                    self.value_at(key_at[e], a_values, b_values)
                                }));
                            }
                        }
                    }
                    #[allow(clippy::needless_range_loop)]
                    for k in 0..per_group {
                        if let (Some(at), Some(vector)) = (mine(k), values[k]) {
                            store_vector(c_values.add(at), vector);
                        }
                    }
                }
                return;
            }
            for k in 0..ITEMS {
                let x = tid + (k * BLOCK) as u32;
                if x < self.c_len {
                    let key_at = sources.load(x as usize);
                    c.add(x as usize).write(tile.load(key_at as usize));
                    c_values.add(x as usize).write(self.value_at(key_at, a_values, b_values));
                }
            }
        }
    }
}

/// The merge-by-key kernel: block `blockIdx.x` merges tile `blockIdx.x` of `BLOCK × ITEMS`
/// outputs, between the co-ranks `splits[tile]` and `splits[tile + 1]` that the keys-only
/// partition ([`merge_path_partition`](super::merge_path_partition)) wrote; keys and their
/// values (`P`, moved as opaque bits) to `c` and `c_values`. Full tiles store `V` keys (16
/// bytes) and `V` values per vector.
///
/// # Safety
/// As [`merge_path`](super::merge_path); besides, `a_values` and `b_values` hold `m` and `n`
/// values and `c_values` room for `m + n`, not overlapping the inputs, aligned to 16 bytes.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub unsafe fn merge_path_by_key<
    K: MergeKey,
    O: KeyOrder<K>,
    P: Copy,
    const BLOCK: usize,
    const ITEMS: usize,
    const V: usize,
>(
    a: *const K,
    a_values: *const P,
    m: usize,
    b: *const K,
    b_values: *const P,
    n: usize,
    c: *mut K,
    c_values: *mut P,
    splits: *const usize,
) {
    // SAFETY: per the caller; the partition wrote the splits of every launched tile.
    unsafe {
        let tile = block_tile::<BLOCK, ITEMS>(block_idx_x() as usize, m + n, splits);
        let args = (a, a_values, b, b_values, c, c_values);
        if tile.c_len as usize == BLOCK * ITEMS {
            merge_tile_by_key::<K, O, P, BLOCK, ITEMS, V, true>(tile, args);
        } else {
            merge_tile_by_key::<K, O, P, BLOCK, ITEMS, V, false>(tile, args);
        }
    }
}

/// One block's tile by key, phase by phase: load the keys, merge them into sources, store keys
/// and values; `FULL` when it has `BLOCK × ITEMS` outputs.
///
/// # Safety
/// As [`merge_path_by_key`]; `tile` is this block's.
#[inline(always)]
#[allow(clippy::type_complexity)]
unsafe fn merge_tile_by_key<
    K: MergeKey,
    O: KeyOrder<K>,
    P: Copy,
    const BLOCK: usize,
    const ITEMS: usize,
    const V: usize,
    const FULL: bool,
>(
    tile: PathTile,
    (a, a_values, b, b_values, c, c_values): (*const K, *const P, *const K, *const P, *mut K, *mut P),
) {
    let tid = thread_idx_x();
    let shape = PathShape::new(BLOCK, ITEMS);
    // SAFETY: shared memory holds the input buffer, the sources (where the keys-only kernel
    // stages its merged tile: at least 4 bytes per output) and the bulk loads' barrier (per the
    // launch, `PathShape::shared_bytes`); a barrier separates each phase from the one that
    // reads what it wrote.
    unsafe {
        let (keys, bulk_barrier) = tile_memory::<K>(shape);
        let sources = SharedKeys::<u32>::at_offset(shape.merged_offset(size_of::<K>()) * size_of::<K>() / 4);
        let tile = load_tile::<K, O, BLOCK, ITEMS, FULL>(tile, tid, a, b, keys, bulk_barrier);
        tile.merge_thread_sources::<K, O, _, _, BLOCK, ITEMS, FULL>(tid, keys, sources);
        sync_threads();
        release_tile_memory(tid, bulk_barrier);
        tile.store_by_key::<K, P, _, _, BLOCK, ITEMS, V, FULL>(
            tid, keys, sources, a_values, b_values, c, c_values,
        );
    }
}
