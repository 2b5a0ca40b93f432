//! PMPP Fig. 8.6, the basic stencil kernel: one thread per output point in 3D blocks.
//! Every input value is fetched from global memory by up to seven threads, so it leans on
//! the caches: 13 operations per 7·4 bytes requested, 0.46 OP/B in f32.

use super::{Coeffs, Grid3, neighbours_in_global};
use crate::Real;
use crate::device::thread::*;

/// One time step of the stencil; boundary points copy their input.
///
/// # Safety
/// `input` and `output` hold `grid.len()` elements each and do not overlap; the launch
/// covers the grid with [`BASIC_BLOCK`](super::tiles::BASIC_BLOCK)-shaped blocks.
#[inline(always)]
pub unsafe fn stencil_basic<T: Real>(input: *const T, output: *mut T, grid: Grid3, c: Coeffs<T>) {
    let i = (block_idx_z() * block_dim_z() + thread_idx_z()) as i32;
    let j = (block_idx_y() * block_dim_y() + thread_idx_y()) as i32;
    let k = (block_idx_x() * block_dim_x() + thread_idx_x()) as i32;
    if !grid.contains(i, j, k) {
        return;
    }
    let idx = grid.index(i, j, k);
    // SAFETY: (i, j, k) is in the grid; an interior point's neighbours are too.
    unsafe {
        let value = if grid.is_interior(i, j, k) {
            c.apply(neighbours_in_global(input, grid, idx))
        } else {
            *input.add(idx)
        };
        *output.add(idx) = value;
    }
}
