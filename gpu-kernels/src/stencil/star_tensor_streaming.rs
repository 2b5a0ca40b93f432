//! Beyond the book: the order-`R` star on the streaming design with its x–y tiles brought by
//! Hopper's tensor copies (TMA, `cp.async.bulk.tensor`; the design is Micikevicius 2009's, the
//! copies are what CUTLASS's pipelines use). As in `star_streaming.rs`, each thread walks a run
//! of z planes with its z neighbours in a register queue of `2R + 1` planes; here it owns `ROWS`
//! rows of `V` points each, and the block's tiles of the planes come into a ring of
//! [`TensorRing::TILES`] tiles of shared memory, each brought whole (the block's patch and its
//! halo, zeros past the grid's faces) by one tensor copy that thread 0 starts, counted by the
//! tile's transaction barrier.
//!
//! Plane `j` of the block's walk (the run and the `R` planes on each side): every thread waits
//! for tile `j` to land, takes its own rows of it into the queue, and, once the queue holds the
//! `R` planes after the centre (`j ≥ 2R`), computes the plane of tile `j − R` from the queue (z
//! and its own rows) and that tile (the patches beside and the rows above and below, one 16-byte
//! shared load each). Then the block passes one barrier, after which no thread reads
//! tile `j − R` any more, and thread 0 refills it with plane `j − R + TILES`. The loads in flight
//! wait in shared memory, not in registers: on an H100 the CUDA prototype of this kernel ran at 8
//! warps an SM where the register kernels run out of latency hiding (docs/stencil-h200.md).
//!
//! Measured at 512³ in `f64` (docs/stencil-h200.md, 2026-12-07), the default on both cards
//! since: on an H200 with 32×4 threads of four rows in one wave 78.0–78.5 % of the copy, 16.8 %
//! less time than the two-row kernel of `star_rows_streaming.rs`; on an H100 with 32×8 threads
//! (taller tiles, fewer halo reads) in runs of 128 planes 91.5–92.2 %, 5.8 % less than 32×4 in
//! runs of 32, which had taken 7.8–7.9 % less than the one-row kernel of `star_streaming.rs`. In
//! `f32` it is slower than the default on both (8 warps an SM leave the schedulers idle).
//!
//! Results are bitwise those of the CPU reference: the same formula (`StarCoeffs::apply`).

use super::Grid3;
use super::star::StarCoeffs;
use super::star_streaming::{patch_point, patch_x_interior};
use super::tiles::TensorRing;
use crate::Real;
use crate::device::bulk::Barrier;
use crate::device::tensor::TensorMap;
use crate::device::thread::*;
use crate::device::{SharedArray, store_vector, warp};

/// One time step of the order-`R` star; points within `R` of a face copy their input.
///
/// # Safety
/// `_input` (read through `map`) and `output` hold `grid.len()` elements each, start 16-byte aligned and do not
/// overlap; `map` points to the tensor map of `input` (`host::tensor_map::encode`) with the
/// ring's [`TensorRing::box_dims`]; `V` divides `grid.nx`; the launch has blocks of `BX × BY`
/// threads covering the x–y plane with patches of `ROWS` rows of `V` points, `gridDim.z` blocks
/// sharing the planes along z, and [`TensorRing::shared_bytes`] of shared memory; on the GPU it
/// runs the Hopper build (elsewhere the copy traps).
#[inline(always)]
pub unsafe fn stencil_star_tensor_streaming<
    T: Real,
    const R: usize,
    const V: usize,
    const QUEUE: usize,
    const BX: usize,
    const BY: usize,
    const ROWS: usize,
>(
    _input: *const T,
    output: *mut T,
    grid: Grid3,
    c: StarCoeffs<T, R>,
    map: *const TensorMap,
) {
    const { assert!(QUEUE == 2 * R + 1, "the z queue holds the plane and R on each side") };
    const {
        // A tile refilled after plane `j`'s barrier is read first in plane `j + TILES − R`, after
        // at least one more barrier: the CPU emulation, whose copies land at once and whose
        // waits do nothing, relies on that barrier to order the refill before the reads.
        assert!(TensorRing::TILES >= R + 2, "the ring holds the centre's tile, the R after it and one more");
        assert!(V * size_of::<T>() == 16, "a patch is one 16-byte vector");
    };
    const TILES: usize = TensorRing::TILES;
    // The ring's sizes, in elements but for the barriers' offset (in words) and a box's bytes,
    // as constants (the portable build would otherwise compute them at run time, through local
    // memory).
    let (side, row_len, tile_stride, barriers_at, box_bytes) = const {
        let ring = TensorRing { order: R, vector: V, block: [BX, BY], rows: ROWS };
        let bytes = size_of::<T>();
        (
            ring.side(),
            ring.row_len(),
            ring.tile_stride(bytes),
            ring.barriers_offset(bytes) / 8,
            ring.box_bytes(bytes) as u32,
        )
    };
    let Grid3 { nx, ny, nz } = grid;
    let (tx, ty) = (thread_idx_x() as usize, thread_idx_y() as usize);
    let first_thread = tx == 0 && ty == 0;
    let (k0, j0) = (block_idx_x() as usize * BX * V, block_idx_y() as usize * BY * ROWS);
    let planes = nz.div_ceil(grid_dim_z());
    let i_start = block_idx_z() * planes;
    if i_start >= nz {
        // The whole block: `gridDim.z` runs may be more than the planes fill.
        return;
    }
    let i_end = (i_start + planes).min(nz);
    // The walk: tile `j` holds plane `i_start − R + j`, for the run and `R` planes each side.
    let walk = (i_end - i_start) as usize + 2 * R;

    // SAFETY: the launch provides the ring and its barriers (`TensorRing::shared_bytes`).
    let tile = |t: usize| unsafe { SharedArray::<T>::at_offset(t * tile_stride) };
    let barrier =
        |t: usize| unsafe { Barrier::at(SharedArray::<u64>::at_offset(barriers_at + t).as_mut_ptr()) };
    let (box_x, box_y) = (k0 as i32 - side as i32, j0 as i32 - R as i32);
    // SAFETY (copies): thread 0 alone arrives on a tile's barrier and starts its copy, only
    // into a tile no thread reads until the copy's phase completes.
    let fetch = |j: usize| unsafe {
        let slot = j % TILES;
        barrier(slot).arrive_expecting(box_bytes);
        let plane = i_start as i32 - R as i32 + j as i32;
        barrier(slot).copy_box(tile(slot).as_mut_ptr(), map, [box_x, box_y, plane]);
    };
    if first_thread {
        // SAFETY: no thread uses the barriers before the block-wide barrier below.
        (0..TILES).for_each(|t| unsafe { barrier(t).init() });
        (0..TILES.min(walk)).for_each(fetch);
    }
    // The compiler may issue the initialisation once for warp 0 on its uniform datapath; the
    // warp's lanes agree on it before the block's barrier (as `merge::path::load_tile`).
    warp::sync();
    sync_threads();

    // Where the thread's patches lie in a tile: row `R + ty · ROWS + r`, column `side + tx · V`.
    let own = (R + ty * ROWS) * row_len + side + tx * V;
    let (k, j) = (k0 + tx * V, j0 + ty * ROWS);
    let interior = |v: usize, n: u32| v >= R && v + R < n as usize;
    let x_interior = patch_x_interior::<R, V>(k, nx as usize);
    let row_stride = grid.row_stride();

    // The queue along z, oldest plane first: `queue[q][r]` is row `r` of plane `i − R + q`.
    let mut queue = [[[T::default(); V]; ROWS]; QUEUE];
    for step in 0..walk {
        let slot = step % TILES;
        // SAFETY: thread 0 started this tile's copy (before the loop, or after the barrier of
        // step `step − TILES + R`), and this is the tile's phase `step / TILES`.
        unsafe { barrier(slot).wait((step / TILES) as u32 & 1) };
        let entering: [[T; V]; ROWS] =
            // SAFETY: the thread's rows lie in the tile, whose copy has landed.
            core::array::from_fn(|r| unsafe { tile(slot).read_vector(own + r * row_len) });
        queue = core::array::from_fn(|q| if q + 1 < QUEUE { queue[q + 1] } else { entering });
        if step >= 2 * R {
            let i = i_start as usize + step - 2 * R;
            let centre_tile = tile((step - R) % TILES);
            // SAFETY: the neighbours lie in the tile (a halo of `side` columns and `R` rows),
            // whose copy this thread waited for `R` steps ago.
            let read = |row: isize, column: isize| unsafe {
                centre_tile.read_vector::<V>(own.wrapping_add_signed(row * row_len as isize + column))
            };
            let sides = side / V;
            let z_interior = interior(i, nz);
            for r in 0..ROWS {
                let at_row = |d: isize| {
                    let row = r as isize + d;
                    if (0..ROWS as isize).contains(&row) { queue[R][row as usize] } else { read(row, 0) }
                };
                let left =
                    core::array::from_fn(|n| read(r as isize, -(((n.min(sides - 1) + 1) * V) as isize)));
                let right = core::array::from_fn(|n| read(r as isize, ((n.min(sides - 1) + 1) * V) as isize));
                let above = core::array::from_fn(|d| at_row(-(d as isize) - 1));
                let below = core::array::from_fn(|d| at_row(d as isize + 1));
                let column: [[T; V]; QUEUE] = core::array::from_fn(|q| queue[q][r]);
                let centre = column[R];
                let y_interior = interior(j + r, ny);
                let out: [T; V] = core::array::from_fn(|e| {
                    let value = patch_point(c, centre, [left, right, above, below], &column, |q| q, e);
                    if z_interior && y_interior && x_interior(e) { value } else { centre[e] }
                });
                if k < nx as usize && j + r < ny as usize {
                    // SAFETY: the patch lies in the grid (`V` divides `nx`).
                    unsafe { store_vector(output.add((i * ny as usize + j + r) * row_stride + k), out) };
                }
            }
        }
        if step >= R {
            // Tile `step − R` has been read by every thread once all pass this barrier.
            sync_threads();
            if first_thread && step - R + TILES < walk {
                fetch(step - R + TILES);
            }
        }
    }
}
