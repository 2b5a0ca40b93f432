//! PMPP Fig. 8.8 for the high-order stars: the shared-memory tiled kernel with a halo of `R`.
//! A block of `T³` threads loads a `T³` input tile into shared memory and its inner `(T − 2R)³`
//! threads compute the output tile from there. The readable baseline for `star13` (`R` = 2,
//! `T` = 8: 4³ outputs per 512 loads) and `star25` (`R` = 4, `T` = 10: 2³ per 1000), whose halo
//! shows why the streaming kernel (`star_streaming.rs`) keeps z neighbours in registers.

use super::Grid3;
use super::star::{Arm, StarCoeffs};
use crate::Real;
use crate::device::SharedCube;
use crate::device::thread::*;

/// One time step of the order-`R` star; points within `R` of a face copy their input.
///
/// # Safety
/// `input` and `output` hold `grid.len()` elements each and do not overlap; blocks are `T³`
/// threads, one per output tile of edge `T − 2R`, with `T³` elements of shared memory.
#[inline(always)]
pub unsafe fn stencil_star_shared_tiled<T: Real, const R: usize, const IN_TILE_DIM: usize>(
    input: *const T,
    output: *mut T,
    grid: Grid3,
    c: StarCoeffs<T, R>,
) {
    let out_tile = (IN_TILE_DIM - 2 * R) as i32;
    let (tz, ty, tx) = (thread_idx_z() as usize, thread_idx_y() as usize, thread_idx_x() as usize);
    let halo = R as i32;
    let i = block_idx_z() as i32 * out_tile + tz as i32 - halo;
    let j = block_idx_y() as i32 * out_tile + ty as i32 - halo;
    let k = block_idx_x() as i32 * out_tile + tx as i32 - halo;

    // SAFETY: the launch provides the cube; each thread writes only its own element before
    // the barrier, and after it reads neighbours that lie inside the tile.
    unsafe {
        let in_s = SharedCube::<T, IN_TILE_DIM>::new();
        // Threads outside the grid load point 0 (a valid address whose value is never read).
        let idx = if grid.contains(i, j, k) { grid.index(i, j, k) } else { 0 };
        in_s.write(tz, ty, tx, *input.add(idx));
        sync_threads();

        let inner = R..IN_TILE_DIM - R;
        if grid.contains(i, j, k) && inner.contains(&tz) && inner.contains(&ty) && inner.contains(&tx) {
            let interior = |v: i32, n: u32| v >= halo && v + halo < n as i32;
            let centre = in_s.read(tz, ty, tx);
            let value = if interior(i, grid.nz) && interior(j, grid.ny) && interior(k, grid.nx) {
                let arm = |at: &dyn Fn(usize, bool) -> T| Arm {
                    minus: core::array::from_fn(|d| at(d + 1, false)),
                    plus: core::array::from_fn(|d| at(d + 1, true)),
                };
                let step = |v: usize, d: usize, up: bool| if up { v + d } else { v - d };
                c.apply(
                    centre,
                    arm(&|d, up| in_s.read(tz, ty, step(tx, d, up))),
                    arm(&|d, up| in_s.read(tz, step(ty, d, up), tx)),
                    arm(&|d, up| in_s.read(step(tz, d, up), ty, tx)),
                )
            } else {
                centre
            };
            *output.add(grid.index(i, j, k)) = value;
        }
    }
}
