//! PMPP Fig. 8.10, thread coarsening in z: a block of `T²` threads covers one x-y input
//! plane and sweeps the tile along z, computing one output plane per step. Only three
//! planes (`in_prev_s`, `in_curr_s`, `in_next_s`) live in shared memory at a time, so
//! `T = 32` fits: 1024 threads, 2.68 OP/B.

use super::tiles::out_tile_dim;
use super::{Coeffs, Grid3, Neighbours};
use crate::Real;
use crate::device::SharedPlane;
use crate::device::thread::*;

/// One time step of the stencil; boundary points copy their input.
///
/// # Safety
/// `input` and `output` hold `grid.len()` elements each and do not overlap; blocks are
/// `IN_TILE_DIM²` threads, one per `(T-2)³` output tile, with `3 · IN_TILE_DIM²` elements
/// of shared memory.
#[inline(always)]
pub unsafe fn stencil_coarsened<T: Real, const IN_TILE_DIM: usize>(
    input: *const T,
    output: *mut T,
    grid: Grid3,
    c: Coeffs<T>,
) {
    let out_tile = out_tile_dim(IN_TILE_DIM) as i32;
    let (ty, tx) = (thread_idx_y() as usize, thread_idx_x() as usize);
    let i_start = block_idx_z() as i32 * out_tile;
    let j = block_idx_y() as i32 * out_tile + ty as i32 - 1;
    let k = block_idx_x() as i32 * out_tile + tx as i32 - 1;
    let i_end = (i_start + out_tile).min(grid.nz as i32);
    let inner = 1..IN_TILE_DIM - 1;
    let computes_output = inner.contains(&ty) && inner.contains(&tx);

    // SAFETY: the launch provides three planes; each thread writes only its own element,
    // and barriers separate the writes of a plane from other threads' reads of it.
    unsafe {
        let mut in_prev_s = SharedPlane::<T, IN_TILE_DIM>::nth(0);
        let mut in_curr_s = SharedPlane::<T, IN_TILE_DIM>::nth(1);
        let mut in_next_s = SharedPlane::<T, IN_TILE_DIM>::nth(2);
        if grid.contains(i_start - 1, j, k) {
            in_prev_s.write(ty, tx, *input.add(grid.index(i_start - 1, j, k)));
        }
        if grid.contains(i_start, j, k) {
            in_curr_s.write(ty, tx, *input.add(grid.index(i_start, j, k)));
        }
        for i in i_start..i_end {
            if grid.contains(i + 1, j, k) {
                in_next_s.write(ty, tx, *input.add(grid.index(i + 1, j, k)));
            }
            sync_threads();
            if computes_output && grid.contains(i, j, k) {
                let value = if grid.is_interior(i, j, k) {
                    c.apply(Neighbours {
                        center: in_curr_s.read(ty, tx),
                        x_minus: in_curr_s.read(ty, tx - 1),
                        x_plus: in_curr_s.read(ty, tx + 1),
                        y_minus: in_curr_s.read(ty - 1, tx),
                        y_plus: in_curr_s.read(ty + 1, tx),
                        z_minus: in_prev_s.read(ty, tx),
                        z_plus: in_next_s.read(ty, tx),
                    })
                } else {
                    in_curr_s.read(ty, tx)
                };
                *output.add(grid.index(i, j, k)) = value;
            }
            // The figure's second barrier. With the roles handed on below it orders nothing
            // that needs it: a plane is written as `next` two planes after other threads last
            // read it as `curr`, with the first barrier in between, and as `prev` only the
            // thread's own element is read. Removing it changes no result under
            // `device::emulation` (host/tests/emulated_kernels.rs); removing the first fails.
            // Kept, as the book has it.
            sync_threads();
            // Step along z. The book copies next → curr → prev element by element; handing
            // the planes' roles on moves no data, and the old prev plane takes the next load.
            (in_prev_s, in_curr_s, in_next_s) = (in_curr_s, in_next_s, in_prev_s);
        }
    }
}
