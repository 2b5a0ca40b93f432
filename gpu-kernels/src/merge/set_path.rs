//! Beyond the book: the set operations of C++'s `std::set_*` (union, intersection, difference,
//! symmetric difference, on sorted multisets; [`SetOperation`]) on merge path's design, in one
//! pass over the inputs. The chapter's notes name them as the co-rank idea again; two things
//! change from the merge:
//!
//! * **Balanced splits** ([`balanced_split`]): merge path's co-rank, moved inside a run of
//!   equal keys so that each pair of copies (one from A, one from B) lands on one side. Both
//!   the partition kernel (one split per tile start, in global memory) and each thread (one per
//!   `ITEMS` diagonals of its tile, in shared memory) split this way, so a thread's piece
//!   walks exactly as its part of the walk over the whole ([`set_walk_steps`]: `ITEMS + 1`
//!   steps, a piece may hold one key more than `ITEMS`).
//! * **Outputs of unknown count.** A block counts its tile's outputs (each thread's walk leaves
//!   three words, a bit per step: [`WalkMasks`]), scans the threads' counts, and learns where
//!   its part of the output starts by [decoupled look-back](super::lookback) on the tiles before
//!   it; meanwhile each thread replays its words to write its kept keys' positions in the tile
//!   (2 bytes each) to their places in the compacted tile, and the block then stores the keys
//!   (and, by key, moves their values) from there, coalesced.
//!
//! Passes and their cost: the partition kernel (`tiles + 1` balanced splits, and it clears the
//! tiles' status words), then this kernel, which reads each input key once and writes each
//! output once, plus one status word per tile (written twice, read by a few successors). A
//! count pass, a scan and a write pass would read the inputs twice; this reads them once.

use super::keys::{KeyReader, KeyWriter, MergeKey, SharedKeys};
use super::lookback::TileStatus;
use super::order::KeyOrder;
use super::path::{PathTile, load_tile, release_tile_memory};
use super::set_ops::{SetOperation, WalkMasks, balanced_split, set_walk_steps};
use super::tiles::{PathShape, SetLayout, a_end_marks};
use crate::device::SharedArray;
use crate::device::bulk::Barrier;
use crate::device::thread::*;
use crate::device::warp::{LANES, from_lanes_below};

/// The entries of the set partition's `splits` for `tiles` tiles: two words (A's index and B's)
/// for each of the `tiles + 1` splits.
pub const fn set_splits_len(tiles: usize) -> usize {
    2 * (tiles + 1)
}

/// The partition's thread `t`: the balanced split of output diagonal `min(t * tile_size, m +
/// n)`, A's index at `splits[2t]` and B's at `splits[2t + 1]`, for `t` in `0..=tiles`; and tile
/// `t`'s status word cleared, for `t < tiles`. Threads past that do nothing.
///
/// # Safety
/// `a` holds `m` keys and `b` holds `n`, sorted in `O`; `splits` has room for
/// [`set_splits_len`]`(tiles)` entries and `status` for `tiles`; `tile_size > 0`.
#[inline(always)]
pub unsafe fn set_partition_thread<K: MergeKey, O: KeyOrder<K>>(
    t: usize,
    (a, m): (*const K, usize),
    (b, n): (*const K, usize),
    tile_size: usize,
    splits: *mut usize,
    status: *mut u64,
) {
    let tiles = (m + n).div_ceil(tile_size);
    if t <= tiles {
        let diag = t.saturating_mul(tile_size).min(m + n);
        // SAFETY: diag <= m + n; t <= tiles is inside `splits`, t < tiles inside `status`.
        unsafe {
            let (i, j) = balanced_split::<K, O, _, _, usize>(diag, a, m, b, n);
            *splits.add(2 * t) = i;
            *splits.add(2 * t + 1) = j;
            if t < tiles {
                *status.add(t) = super::lookback::EMPTY;
            }
        }
    }
}

/// The partition kernel: one [`set_partition_thread`] per thread of the grid.
///
/// # Safety
/// As [`set_partition_thread`]; the launch has at least `tiles + 1` threads.
#[inline(always)]
pub unsafe fn set_partition<K: MergeKey, O: KeyOrder<K>>(
    a: *const K,
    m: usize,
    b: *const K,
    n: usize,
    tile_size: usize,
    splits: *mut usize,
    status: *mut u64,
) {
    let t = grid_thread_x();
    // SAFETY: per the caller.
    unsafe { set_partition_thread::<K, O>(t, (a, m), (b, n), tile_size, splits, status) }
}

/// Tile `tile` of a set operation: A's keys between the balanced splits `splits[2 tile]` and
/// `splits[2 tile + 2]`, B's between `splits[2 tile + 1]` and `splits[2 tile + 3]`, laid out in
/// shared memory for threads of `STEPS` keys (A's from 0, B's after A's end marks, as merge
/// path's [`gather`](PathTile::gather) puts them; the bulk load moves them). `c_start` is
/// unused: where the outputs go is known only after the look-back.
///
/// # Safety
/// The partition for this tile size wrote the splits of tiles `tile` and `tile + 1`.
#[inline(always)]
pub unsafe fn set_tile<const STEPS: usize>(tile: usize, splits: *const usize) -> PathTile {
    // SAFETY: per the caller.
    let [a_curr, b_curr, a_next, b_next] = unsafe { splits.add(2 * tile).cast::<[usize; 4]>().read() };
    let (a_len, b_len) = ((a_next - a_curr) as u32, (b_next - b_curr) as u32);
    PathTile {
        a_start: a_curr,
        b_start: b_curr,
        c_start: 0,
        a_len,
        b_len,
        c_len: a_len + b_len,
        a_at: 0,
        b_at: a_len + a_end_marks(STEPS) as u32,
    }
}

/// Phase 2: thread `tid`'s balanced split of the tile in shared memory (`keys`), at diagonal
/// `tid × ITEMS` (or the tile's end), into `split_a[tid]` and `split_b[tid]`; the last thread
/// also writes the tile's end after its own.
///
/// # Safety
/// The tile's keys are in `keys` at its layout, written before a barrier; `split_a` and
/// `split_b` have `BLOCK + 1` entries, and no other thread writes these.
#[inline(always)]
pub unsafe fn split_thread<
    K: MergeKey,
    O: KeyOrder<K>,
    S: KeyReader<K>,
    const BLOCK: usize,
    const ITEMS: usize,
>(
    tile: &PathTile,
    tid: u32,
    keys: S,
    split_a: *mut u32,
    split_b: *mut u32,
) {
    let diag = (tid * ITEMS as u32).min(tile.c_len);
    // SAFETY: per the caller; diag <= a_len + b_len.
    unsafe {
        let (a_run, b_run) = (keys.skip(tile.a_at as usize), keys.skip(tile.b_at as usize));
        let (i, j) = balanced_split::<K, O, _, _, u32>(diag, a_run, tile.a_len, b_run, tile.b_len);
        split_a.store(tid as usize, i);
        split_b.store(tid as usize, j);
        if tid as usize == BLOCK - 1 {
            split_a.store(BLOCK, tile.a_len);
            split_b.store(BLOCK, tile.b_len);
        }
    }
}

/// Phase 3: thread `tid` walks its piece of the tile (from its split to the next thread's) in
/// `STEPS` steps. Returns where the piece starts (A's index and B's, in the tile) and what each
/// step did.
///
/// # Safety
/// As [`split_thread`], whose splits every thread wrote before a barrier; the tile's end marks
/// are in `keys`.
#[inline(always)]
pub unsafe fn walk_thread<K: MergeKey, O: KeyOrder<K>, S: KeyReader<K>, const STEPS: usize>(
    operation: SetOperation,
    tile: &PathTile,
    tid: u32,
    keys: S,
    (split_a, split_b): (*const u32, *const u32),
) -> ((u32, u32), WalkMasks) {
    let t = tid as usize;
    // SAFETY: per the caller: the piece lies in the tile, whose runs are followed by marks.
    unsafe {
        let (a_run, b_run) = (keys.skip(tile.a_at as usize), keys.skip(tile.b_at as usize));
        let a_piece = (split_a.load(t), split_a.load(t + 1));
        let b_piece = (split_b.load(t), split_b.load(t + 1));
        let walk = set_walk_steps::<K, O, _, _, u32, STEPS>(operation, a_run, a_piece, b_run, b_piece);
        ((a_piece.0, b_piece.0), walk)
    }
}

/// Phase 5: thread `tid`'s kept elements, replayed from its walk (which started at `start`):
/// `place(at, position)` gets each one's place in the compacted tile, from `first` on, and its
/// key's position in the tile's shared memory (A's `i` at `a_at + i`, B's `j` at `b_at + j`).
#[inline(always)]
pub fn place_kept<const STEPS: usize>(
    tile: &PathTile,
    start: (u32, u32),
    walk: WalkMasks,
    first: u32,
    mut place: impl FnMut(u32, u32),
) {
    walk.for_each_kept::<STEPS>(start, |q, from_b, index| {
        place(first + q, if from_b { tile.b_at + index } else { tile.a_at + index })
    });
}

/// Phase 6: thread `tid`'s share of the compacted tile's `count` outputs, consecutive threads
/// taking consecutive ones: `store(x)` writes output `x` of the tile.
#[inline(always)]
pub fn store_thread<const BLOCK: usize>(tid: u32, count: u32, mut store: impl FnMut(u32)) {
    for x in (tid..count).step_by(BLOCK) {
        store(x);
    }
}

/// A set-operation block's shared memory ([`SetLayout`]).
#[derive(Clone, Copy)]
struct SetShared<K> {
    keys: SharedKeys<K>,
    positions: SharedArray<u16>,
    bulk_barrier: Barrier,
    split_a: *mut u32,
    split_b: *mut u32,
    totals: SharedArray<u32>,
    prefix: SharedArray<u64>,
}

impl<K: MergeKey> SetShared<K> {
    /// The arrays of `layout`.
    ///
    /// # Safety
    /// The launch has the dynamic shared memory of `layout.bytes()`.
    #[inline(always)]
    unsafe fn at(layout: SetLayout) -> Self {
        // SAFETY: per the caller, every offset is inside the launch's shared memory.
        unsafe {
            let split_a = SharedArray::<u32>::at_offset(layout.splits_offset() / 4).as_mut_ptr();
            Self {
                keys: SharedKeys::at_offset(0),
                positions: SharedArray::at_offset(layout.positions_offset() / 2),
                bulk_barrier: Barrier::at(
                    SharedArray::<u64>::at_offset(layout.barrier_offset() / 8).as_mut_ptr(),
                ),
                split_a,
                split_b: split_a.wrapping_add(layout.shape.block_threads + 1),
                totals: SharedArray::at_offset(layout.totals_offset() / 4),
                prefix: SharedArray::at_offset(layout.prefix_offset() / 8),
            }
        }
    }
}

/// Phase 5b: where the tile's outputs start, the outputs of every tile before it, by warp 0's
/// look-back on the tiles' status words; written to `prefix` for the block (read it after a
/// barrier). The tile's count was published earlier ([`TileStatus::publish_count`]); its
/// inclusive prefix is published here.
///
/// # Safety
/// As [`TileStatus::look_back`]; every thread of the block calls it.
#[inline(always)]
unsafe fn find_prefix(status: TileStatus, tile_index: usize, tile_count: u32, prefix: SharedArray<u64>) {
    let tid = thread_idx_x();
    if tid >= LANES {
        return;
    }
    // SAFETY: per the caller; one warp, converged.
    unsafe {
        let before = if tile_index == 0 { 0 } else { status.look_back(tile_index, tid) };
        if tid == 0 {
            if tile_index > 0 {
                status.publish_inclusive(tile_index, before + u64::from(tile_count));
            }
            prefix.write(0, before);
        }
    }
}

/// Tile `blockIdx.x` of a set operation, by this block, up to its store: the tile loaded, each
/// thread's split and walk, the threads' counts scanned (shuffles within warps, then the
/// warps' totals), the tile's count published, each kept key's position in the tile written to
/// its place in the compacted tile, and where the tile's outputs start found by look-back. Then
/// `store(tile, keys, x, position, c_index)` for each of the thread's share of the outputs:
/// output `x` of the tile, whose key is at `position` in `keys`, goes to index `c_index` of the
/// output.
///
/// # Safety
/// As [`set_operation`]; every thread of the block calls it.
#[inline(always)]
unsafe fn set_tile_outputs<
    K: MergeKey,
    O: KeyOrder<K>,
    const BLOCK: usize,
    const ITEMS: usize,
    const STEPS: usize,
>(
    operation: SetOperation,
    (a, b): (*const K, *const K),
    splits: *const usize,
    status: *mut u64,
    mut store: impl FnMut(&PathTile, SharedKeys<K>, u32, usize),
) {
    const { assert!(STEPS == ITEMS + 1 && BLOCK.is_multiple_of(LANES as usize)) };
    let layout = SetLayout::new(PathShape::new(BLOCK, ITEMS), size_of::<K>());
    const {
        let layout = SetLayout::new(PathShape::new(BLOCK, ITEMS), size_of::<K>());
        assert!(layout.positions_fit_u16(), "positions in the tile are u16");
    };
    let (tid, tile_index) = (thread_idx_x(), block_idx_x() as usize);
    let (lane, warp) = (tid % LANES, (tid / LANES) as usize);
    // SAFETY: per the caller; a barrier separates each phase from the one that reads what it
    // wrote.
    unsafe {
        let shared = SetShared::<K>::at(layout);
        let status = TileStatus::at(status);
        let tile = set_tile::<STEPS>(tile_index, splits);
        let tile = load_tile::<K, O, BLOCK, STEPS, false>(tile, tid, a, b, shared.keys, shared.bulk_barrier);
        split_thread::<K, O, _, BLOCK, ITEMS>(&tile, tid, shared.keys, shared.split_a, shared.split_b);
        sync_threads();
        let piece = (shared.split_a.cast_const(), shared.split_b.cast_const());
        let (start, walk) = walk_thread::<K, O, _, STEPS>(operation, &tile, tid, shared.keys, piece);
        let count = walk.count();
        let mut inclusive = count;
        let mut delta = 1;
        while delta < LANES {
            let below = from_lanes_below(inclusive, delta);
            if lane >= delta {
                inclusive += below;
            }
            delta *= 2;
        }
        if lane == LANES - 1 {
            shared.totals.write(warp, inclusive);
        }
        sync_threads();
        release_tile_memory(tid, shared.bulk_barrier);
        let (mut first, mut tile_count) = (inclusive - count, 0);
        for w in 0..BLOCK / LANES as usize {
            let total = shared.totals.read(w);
            if w < warp {
                first += total;
            }
            tile_count += total;
        }
        if tid == 0 {
            status.publish_count(tile_index, u64::from(tile_count));
        }
        place_kept::<STEPS>(&tile, start, walk, first, |at, position| {
            shared.positions.write(at as usize, position as u16)
        });
        find_prefix(status, tile_index, tile_count, shared.prefix);
        sync_threads();
        let c_start = shared.prefix.read(0) as usize;
        store_thread::<BLOCK>(tid, tile_count, |x| {
            let position = u32::from(shared.positions.read(x as usize));
            store(&tile, shared.keys, position, c_start + x as usize)
        });
    }
}

/// The set-operation kernel: block `blockIdx.x` walks tile `blockIdx.x` (between the
/// partition's balanced splits `tile × BLOCK × ITEMS` diagonals apart) and writes its outputs
/// to `c`, after every earlier tile's. `STEPS` is `ITEMS + 1`. A thread's walk leaves three
/// words ([`WalkMasks`]); once the block has scanned the counts, each thread replays them to
/// write its kept keys' positions in the tile (2 bytes each) to their places in the compacted
/// tile, and the block stores the keys from those positions, coalesced. (Holding the kept keys
/// instead costs a register each, or slots in shared memory as large as the tile, and fewer
/// blocks per SM.)
///
/// # Safety
/// As [`set_partition`], whose `splits` and cleared `status` (for this tile size) this launch
/// reads; `c` has room for the operation's outputs (at most `m + n`) and overlaps neither
/// input; the launch has `BLOCK` threads per block, a multiple of 32, one block per tile, and
/// the dynamic shared memory of [`SetLayout::bytes`].
#[inline(always)]
pub unsafe fn set_operation<
    K: MergeKey,
    O: KeyOrder<K>,
    const BLOCK: usize,
    const ITEMS: usize,
    const STEPS: usize,
>(
    operation: SetOperation,
    a: *const K,
    b: *const K,
    c: *mut K,
    splits: *const usize,
    status: *mut u64,
) {
    // SAFETY: per the caller; each output index is below the operation's count.
    unsafe {
        set_tile_outputs::<K, O, BLOCK, ITEMS, STEPS>(
            operation,
            (a, b),
            splits,
            status,
            |_, keys, position, at| *c.add(at) = keys.load(position as usize),
        )
    }
}

/// The set-operation kernel by key: as [`set_operation`], and each output key's value (of `P`,
/// read from `a_values` or `b_values` at its key's index) goes to the same index of `c_values`.
///
/// # Safety
/// As [`set_operation`], with value buffers of `m`, `n` and the outputs' count.
#[inline(always)]
pub unsafe fn set_operation_by_key<
    K: MergeKey,
    O: KeyOrder<K>,
    P: Copy,
    const BLOCK: usize,
    const ITEMS: usize,
    const STEPS: usize,
>(
    operation: SetOperation,
    (a, a_values): (*const K, *const P),
    (b, b_values): (*const K, *const P),
    (c, c_values): (*mut K, *mut P),
    splits: *const usize,
    status: *mut u64,
) {
    // SAFETY: per the caller; each output index is below the operation's count, and a key's
    // position in the tile gives its input and index.
    unsafe {
        set_tile_outputs::<K, O, BLOCK, ITEMS, STEPS>(
            operation,
            (a, b),
            splits,
            status,
            |tile, keys, position, at| {
                // The value's address is chosen, not the value: a choice between two 16-byte values
                // would go through local memory.
                let from = if position >= tile.b_at {
                    b_values.wrapping_add(tile.b_start + (position - tile.b_at) as usize)
                } else {
                    a_values.wrapping_add(tile.a_start + (position - tile.a_at) as usize)
                };
                *c.add(at) = keys.load(position as usize);
                *c_values.add(at) = *from;
            },
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::merge::Ascending;
    use crate::merge::set_ops::set_walk;
    use crate::merge::tiles::keys_per_16_bytes;
    use proptest::prelude::*;

    /// The set kernel's blocks in turn on the host, phase by phase, for tiles of `BLOCK × ITEMS`
    /// (`STEPS = ITEMS + 1`): the partition, then each tile's load (A's keys at 0, B's after A's
    /// end marks), splits, walks, the threads' scan (here a running sum, on the GPU shuffles),
    /// compaction into the input buffer and the store after the tiles before it.
    fn simulate<const BLOCK: usize, const ITEMS: usize, const STEPS: usize>(
        operation: SetOperation,
        a: &[i32],
        b: &[i32],
    ) -> Vec<i32> {
        let (m, n) = (a.len(), b.len());
        let tile_size = BLOCK * ITEMS;
        let tiles = (m + n).div_ceil(tile_size);
        let mut splits = vec![usize::MAX; set_splits_len(tiles)];
        let mut status = vec![u64::MAX; tiles];
        // SAFETY (every phase): the buffers have the sizes each phase requires, and the phases of
        // different threads run one after the other, as the barriers order them on the GPU.
        for t in 0..tiles + 2 {
            unsafe {
                set_partition_thread::<i32, Ascending>(
                    t,
                    (a.as_ptr(), m),
                    (b.as_ptr(), n),
                    tile_size,
                    splits.as_mut_ptr(),
                    status.as_mut_ptr(),
                )
            };
        }
        assert!(status.iter().all(|&w| w == crate::merge::lookback::EMPTY), "status cleared");
        let mut c = vec![-1; m + n];
        let mut written = 0;
        let input_keys = PathShape::new(BLOCK, STEPS).input_keys(4) + keys_per_16_bytes(4);
        for tile_index in 0..tiles {
            let tile = unsafe { set_tile::<STEPS>(tile_index, splits.as_ptr()) };
            assert!(tile.c_len as usize <= tile_size + 1, "{tile:?}: at most one key past the tile");
            let mut shared = vec![i32::MIN; input_keys];
            let (a_len, b_len, b_at) = (tile.a_len as usize, tile.b_len as usize, tile.b_at as usize);
            shared[..a_len].copy_from_slice(&a[tile.a_start..][..a_len]);
            shared[a_len..b_at].fill(i32::MAX);
            shared[b_at..][..b_len].copy_from_slice(&b[tile.b_start..][..b_len]);
            shared[b_at + b_len] = i32::MAX;
            let s = shared.as_mut_ptr();
            let (mut split_a, mut split_b) = (vec![u32::MAX; BLOCK + 1], vec![u32::MAX; BLOCK + 1]);
            for tid in 0..BLOCK as u32 {
                unsafe {
                    split_thread::<i32, Ascending, _, BLOCK, ITEMS>(
                        &tile,
                        tid,
                        s,
                        split_a.as_mut_ptr(),
                        split_b.as_mut_ptr(),
                    )
                };
            }
            // --- barrier ---
            let walks: Vec<((u32, u32), WalkMasks)> = (0..BLOCK as u32)
                .map(|tid| unsafe {
                    walk_thread::<i32, Ascending, _, STEPS>(
                        operation,
                        &tile,
                        tid,
                        s,
                        (split_a.as_ptr(), split_b.as_ptr()),
                    )
                })
                .collect();
            // --- barrier (the scan) ---
            let mut positions = vec![u16::MAX; tile_size + 1];
            let mut first = 0;
            for &(start, walk) in &walks {
                place_kept::<STEPS>(&tile, start, walk, first, |at, position| {
                    assert_eq!(positions[at as usize], u16::MAX, "{tile:?}: place {at} written once");
                    positions[at as usize] = position as u16;
                });
                first += walk.count();
            }
            // --- barrier ---
            for tid in 0..BLOCK as u32 {
                store_thread::<BLOCK>(tid, first, |x| {
                    c[written + x as usize] = shared[positions[x as usize] as usize]
                });
            }
            written += first as usize;
        }
        c.truncate(written);
        c
    }

    /// The keys of `std::set_*`'s walk over the whole inputs.
    fn whole(operation: SetOperation, a: &[i32], b: &[i32]) -> Vec<i32> {
        let mut out = Vec::new();
        // SAFETY: slices of their lengths.
        unsafe {
            set_walk::<_, Ascending, _, _>(
                operation,
                a.as_ptr(),
                a.len(),
                b.as_ptr(),
                b.len(),
                |from_b, i| out.push(if from_b { b[i] } else { a[i] }),
            )
        };
        out
    }

    fn sorted(max_len: usize) -> impl Strategy<Value = Vec<i32>> {
        (1i32..40, proptest::collection::vec(0i32..1000, 0..max_len)).prop_map(|(range, mut v)| {
            v.iter_mut().for_each(|k| *k %= range);
            v.sort_unstable();
            v
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        /// Every operation through the kernel's phases, at a few small shapes, gives the walk
        /// over the whole inputs.
        #[test]
        fn the_kernels_phases_give_the_whole_walk(a in sorted(300), b in sorted(300)) {
            for operation in SetOperation::ALL {
                let expected = whole(operation, &a, &b);
                prop_assert_eq!(&simulate::<4, 3, 4>(operation, &a, &b), &expected, "4x3 {:?}", operation);
                prop_assert_eq!(&simulate::<32, 7, 8>(operation, &a, &b), &expected, "32x7 {:?}", operation);
                prop_assert_eq!(&simulate::<8, 1, 2>(operation, &a, &b), &expected, "8x1 {:?}", operation);
            }
        }
    }
}
