//! PMPP Fig. 8.8, the shared-memory tiled kernel: a block of `T³` threads loads a `T³`
//! input tile (halo included) into shared memory, and its inner `(T-2)³` threads compute
//! the output tile from there. With `T = 8` the halo is 58 % of the tile: 1.37 OP/B.

use super::tiles::out_tile_dim;
use super::{Coeffs, Grid3, Neighbours};
use crate::Real;
use crate::device::SharedCube;
use crate::device::thread::*;

/// One time step of the stencil; boundary points copy their input.
///
/// # Safety
/// `input` and `output` hold `grid.len()` elements each and do not overlap; blocks are
/// `IN_TILE_DIM³` threads, one per output tile of edge `IN_TILE_DIM - 2`, with
/// `IN_TILE_DIM³` elements of shared memory.
#[inline(always)]
pub unsafe fn stencil_shared_tiled<T: Real, const IN_TILE_DIM: usize>(
    input: *const T,
    output: *mut T,
    grid: Grid3,
    c: Coeffs<T>,
) {
    let out_tile = out_tile_dim(IN_TILE_DIM) as i32;
    let (tz, ty, tx) = (thread_idx_z() as usize, thread_idx_y() as usize, thread_idx_x() as usize);
    let i = block_idx_z() as i32 * out_tile + tz as i32 - 1;
    let j = block_idx_y() as i32 * out_tile + ty as i32 - 1;
    let k = block_idx_x() as i32 * out_tile + tx as i32 - 1;

    // SAFETY: the launch provides the cube; each thread writes only its own element before
    // the barrier, and after it reads neighbours that lie inside the tile.
    unsafe {
        let in_s = SharedCube::<T, IN_TILE_DIM>::new();
        // Threads whose point lies outside the grid load point 0 instead: a valid address whose
        // value is never read. The load then needs no branch around it (nvcc predicates the
        // book's `if`; LLVM branches, which costs this short kernel a few per cent).
        let idx = if grid.contains(i, j, k) { grid.index(i, j, k) } else { 0 };
        in_s.write(tz, ty, tx, *input.add(idx));
        sync_threads();

        let inner = 1..IN_TILE_DIM - 1;
        if grid.contains(i, j, k) && inner.contains(&tz) && inner.contains(&ty) && inner.contains(&tx) {
            let value = if grid.is_interior(i, j, k) {
                c.apply(Neighbours {
                    center: in_s.read(tz, ty, tx),
                    x_minus: in_s.read(tz, ty, tx - 1),
                    x_plus: in_s.read(tz, ty, tx + 1),
                    y_minus: in_s.read(tz, ty - 1, tx),
                    y_plus: in_s.read(tz, ty + 1, tx),
                    z_minus: in_s.read(tz - 1, ty, tx),
                    z_plus: in_s.read(tz + 1, ty, tx),
                })
            } else {
                in_s.read(tz, ty, tx)
            };
            *output.add(grid.index(i, j, k)) = value;
        }
    }
}
