//! The PTX entry points: one `extern "ptx-kernel"` function per variant and element type,
//! named `stencil7_<variant>_<f32|f64>`, each a thin call of the generic kernel with the
//! tile constants of [`tiles`](super::tiles).

/// Stamps out `#[no_mangle]` kernels `$name(input, output, grid, coeffs)` for the GPU.
macro_rules! stencil_entry_points {
    ($($name:ident => $kernel:ident::<$t:ty $(, $tile:ident)?>;)*) => {$(
        #[cfg(target_arch = "nvptx64")]
        #[unsafe(no_mangle)]
        pub unsafe extern "ptx-kernel" fn $name(
            input: *const $t,
            output: *mut $t,
            grid: super::Grid3,
            coeffs: super::Coeffs<$t>,
        ) {
            // SAFETY: the host launcher sizes blocks, grid and shared memory from the same
            // constants, and passes device buffers of `grid.len()` elements.
            unsafe { super::$kernel::<$t $(, $tile)?>(input, output, grid, coeffs) }
        }
    )*};
}

#[cfg(target_arch = "nvptx64")]
use super::tiles::{COARSENED_IN_TILE_DIM, REGISTER_TILED_IN_TILE_DIM, SHARED_TILED_IN_TILE_DIM};

stencil_entry_points! {
    stencil7_basic_f32 => stencil_basic::<f32>;
    stencil7_basic_f64 => stencil_basic::<f64>;
    stencil7_shared_tiled_f32 => stencil_shared_tiled::<f32, SHARED_TILED_IN_TILE_DIM>;
    stencil7_shared_tiled_f64 => stencil_shared_tiled::<f64, SHARED_TILED_IN_TILE_DIM>;
    stencil7_coarsened_f32 => stencil_coarsened::<f32, COARSENED_IN_TILE_DIM>;
    stencil7_coarsened_f64 => stencil_coarsened::<f64, COARSENED_IN_TILE_DIM>;
    stencil7_register_tiled_f32 => stencil_register_tiled::<f32, REGISTER_TILED_IN_TILE_DIM>;
    stencil7_register_tiled_f64 => stencil_register_tiled::<f64, REGISTER_TILED_IN_TILE_DIM>;
}
