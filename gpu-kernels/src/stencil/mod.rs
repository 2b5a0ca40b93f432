//! The 3D seven-point stencil (PMPP chapter 8): the point formula and grid indexing shared
//! by the host and the GPU, the tile constants, and one file per kernel.
//!
//! ```text
//! out[z][y][x] = c0·in[z][y][x] + c1·in[z][y][x-1] + c2·in[z][y][x+1] + c3·in[z][y-1][x]
//!              + c4·in[z][y+1][x] + c5·in[z-1][y][x] + c6·in[z+1][y][x]
//! ```
//! on interior points; boundary points keep their input value, so time steps can
//! ping-pong two buffers.
//!
//! Coordinates follow the book: `i` is the plane (z), `j` the row (y), `k` the column (x),
//! x fastest in memory. They are `i32` because tiles start one point before the grid (`-1`);
//! linear indices are `usize` (64-bit on both targets), so grids past 2^31 points index right.

/// The main loop of a kernel whose z queue is a ring of registers: runs `$plane!(p)` for each
/// plane `$i` up to `$end`, cycling through the phases `p` listed that are below `$len` (the
/// queue's length; the others compile to nothing). Each phase is its own copy of the body, so
/// the slot indices `(p + q) % $len` in it are constants and the queue advances by renaming
/// registers, never by moving them. The body must not change `$i`.
macro_rules! ring_loop {
    ($plane:ident, $i:ident, $end:expr, $len:expr; $($phase:literal)*) => {
        while $i < $end {
            $(
                if $phase < $len {
                    if $i == $end {
                        break;
                    }
                    $plane!($phase);
                    $i += 1;
                }
            )*
        }
    };
}

/// The main loop of a kernel whose z queue is longer than the copies of the body it can afford:
/// runs `$plane!(p)` for each plane `$i` up to `$end`, cycling through the phases `p` listed that
/// are below `$shift`, and after each cycle shifts `$queue` (of `$len` planes) by `$shift` planes
/// with register moves: `$len − $shift` planes moved per `$shift` planes, instead of `$len − 1`
/// per plane for one copy. In phase `p` the queue is a ring as in [`ring_loop`]. The body must
/// not change `$i`.
macro_rules! shift_loop {
    ($plane:ident, $i:ident, $end:expr, $queue:ident, $len:expr, $shift:expr; $($phase:literal)*) => {
        while $i < $end {
            $(
                if $phase < $shift && ($phase == 0 || $i < $end) {
                    $plane!($phase);
                    $i += 1;
                }
            )*
            $queue = core::array::from_fn(|q| $queue[(q + $shift) % $len]);
        }
    };
}

mod basic;
pub mod box27;
mod box_streaming;
mod coarsened;
mod entry;
mod register_tiled;
mod shared_tiled;
pub mod star;
mod star_rows_streaming;
mod star_shared_streaming;
mod star_shared_tiled;
mod star_streaming;
mod star_tensor_streaming;
mod streaming;
mod temporal;
pub mod tiles;

pub use basic::stencil_basic;
pub use box_streaming::stencil_box_streaming;
pub use coarsened::stencil_coarsened;
pub use entry::{
    BOX_KERNELS_F32, BOX_KERNELS_F64, STAR_KERNELS_F32, STAR_KERNELS_F64, STAR_ROWS_KERNELS_F32,
    STAR_ROWS_KERNELS_F64, STAR_SHARED_KERNELS_F32, STAR_SHARED_KERNELS_F64, STAR_TENSOR_KERNELS_F32,
    STAR_TENSOR_KERNELS_F64, STREAMING_KERNELS_F32, STREAMING_KERNELS_F64, TEMPORAL_KERNELS_F32,
    TEMPORAL_KERNELS_F64,
};
pub use register_tiled::stencil_register_tiled;
pub use shared_tiled::stencil_shared_tiled;
pub use star_rows_streaming::stencil_star_rows_streaming;
pub use star_shared_streaming::stencil_star_shared_streaming;
pub use star_shared_tiled::stencil_star_shared_tiled;
pub use star_streaming::stencil_star_streaming;
pub use star_tensor_streaming::stencil_star_tensor_streaming;
pub use streaming::{Walk, Window, stencil_streaming};
pub use temporal::{stencil_temporal, temporal_out_tile, temporal_shared_elements};

use crate::Real;

/// The shape of a grid, `nz × ny × nx` points, x fastest. Passed to kernels by value.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Grid3 {
    pub nx: u32,
    pub ny: u32,
    pub nz: u32,
}

impl Grid3 {
    /// Number of points, `nx · ny · nz`, in 64 bits.
    #[inline(always)]
    pub fn len(self) -> usize {
        self.nx as usize * self.ny as usize * self.nz as usize
    }

    /// Whether the grid has no points.
    #[inline(always)]
    pub fn is_empty(self) -> bool {
        self.len() == 0
    }

    /// Distance in elements between neighbours along y.
    #[inline(always)]
    pub fn row_stride(self) -> usize {
        self.nx as usize
    }

    /// Distance in elements between neighbours along z.
    #[inline(always)]
    pub fn plane_stride(self) -> usize {
        self.nx as usize * self.ny as usize
    }

    /// Linear index of point `(i, j, k)` = (z, y, x); the point must be in the grid.
    #[inline(always)]
    pub fn index(self, i: i32, j: i32, k: i32) -> usize {
        (i as usize * self.ny as usize + j as usize) * self.nx as usize + k as usize
    }

    /// Whether `(i, j, k)` lies in the grid.
    #[inline(always)]
    pub fn contains(self, i: i32, j: i32, k: i32) -> bool {
        (i as u32) < self.nz && (j as u32) < self.ny && (k as u32) < self.nx
    }

    /// Whether `(i, j, k)` is an interior point: all six neighbours lie in the grid.
    #[inline(always)]
    pub fn is_interior(self, i: i32, j: i32, k: i32) -> bool {
        i >= 1
            && j >= 1
            && k >= 1
            && (i as u32) < self.nz - 1
            && (j as u32) < self.ny - 1
            && (k as u32) < self.nx - 1
    }
}

/// The seven values one output point depends on.
#[derive(Clone, Copy, Debug)]
pub struct Neighbours<T> {
    pub center: T,
    pub x_minus: T,
    pub x_plus: T,
    pub y_minus: T,
    pub y_plus: T,
    pub z_minus: T,
    pub z_plus: T,
}

/// The coefficients `c0..c6`, in the order of [`Neighbours`]' fields. Passed by value.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Coeffs<T>(pub [T; 7]);

impl<T: Real> Coeffs<T> {
    /// The stencil formula for one interior point, evaluated left to right: the centre's
    /// product, then each neighbour added by a fused multiply-add (`c·v + sum`, rounded once),
    /// 7 floating-point instructions where separate products and sums take 13. The CPU
    /// reference calls the same function, so results agree bit for bit.
    #[inline(always)]
    pub fn apply(self, n: Neighbours<T>) -> T {
        let [c0, c1, c2, c3, c4, c5, c6] = self.0;
        let sum = c0 * n.center;
        let sum = c1.mul_add(n.x_minus, sum);
        let sum = c2.mul_add(n.x_plus, sum);
        let sum = c3.mul_add(n.y_minus, sum);
        let sum = c4.mul_add(n.y_plus, sum);
        let sum = c5.mul_add(n.z_minus, sum);
        c6.mul_add(n.z_plus, sum)
    }
}

/// The neighbourhood of interior point `idx` read straight from global memory.
///
/// # Safety
/// `idx` is the linear index of an interior point of `grid`, and `input` holds the grid.
#[inline(always)]
pub unsafe fn neighbours_in_global<T: Real>(input: *const T, grid: Grid3, idx: usize) -> Neighbours<T> {
    let (row, plane) = (grid.row_stride(), grid.plane_stride());
    // SAFETY: every neighbour of an interior point lies in the grid.
    unsafe {
        Neighbours {
            center: *input.add(idx),
            x_minus: *input.add(idx - 1),
            x_plus: *input.add(idx + 1),
            y_minus: *input.add(idx - row),
            y_plus: *input.add(idx + row),
            z_minus: *input.add(idx - plane),
            z_plus: *input.add(idx + plane),
        }
    }
}
