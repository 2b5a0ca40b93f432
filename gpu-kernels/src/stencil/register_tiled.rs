//! PMPP Fig. 8.12, thread coarsening plus register tiling: as Fig. 8.10, but the z
//! neighbours `in_prev` and `in_next` are used by one thread only, so they live in
//! registers; only the current plane, whose x-y neighbours other threads read, stays in
//! shared memory (`T²` elements instead of `3T²`). Same 2.68 OP/B, cheaper on-chip reuse.

use super::tiles::out_tile_dim;
use super::{Coeffs, Grid3, Neighbours};
use crate::Real;
use crate::device::SharedPlane;
use crate::device::thread::*;

/// One time step of the stencil; boundary points copy their input.
///
/// # Safety
/// `input` and `output` hold `grid.len()` elements each and do not overlap; blocks are
/// `IN_TILE_DIM²` threads, one per `(T-2)³` output tile, with `IN_TILE_DIM²` elements of
/// shared memory.
#[inline(always)]
pub unsafe fn stencil_register_tiled<T: Real, const IN_TILE_DIM: usize>(
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

    // SAFETY: the launch provides one plane; each thread writes only its own element, and
    // barriers separate those writes from other threads' reads of the plane.
    unsafe {
        let in_curr_s = SharedPlane::<T, IN_TILE_DIM>::nth(0);
        // Points outside the grid are never read, so any value will do for them.
        let load = |i: i32, fallback: T| {
            if grid.contains(i, j, k) { *input.add(grid.index(i, j, k)) } else { fallback }
        };
        let mut in_curr = load(i_start, c.0[0]);
        let mut in_prev = load(i_start - 1, in_curr);
        in_curr_s.write(ty, tx, in_curr);
        for i in i_start..i_end {
            let in_next = load(i + 1, in_curr);
            sync_threads();
            if computes_output && grid.contains(i, j, k) {
                let value = if grid.is_interior(i, j, k) {
                    c.apply(Neighbours {
                        center: in_curr,
                        x_minus: in_curr_s.read(ty, tx - 1),
                        x_plus: in_curr_s.read(ty, tx + 1),
                        y_minus: in_curr_s.read(ty - 1, tx),
                        y_plus: in_curr_s.read(ty + 1, tx),
                        z_minus: in_prev,
                        z_plus: in_next,
                    })
                } else {
                    in_curr
                };
                *output.add(grid.index(i, j, k)) = value;
            }
            sync_threads();
            in_prev = in_curr;
            in_curr = in_next;
            in_curr_s.write(ty, tx, in_next);
        }
    }
}
