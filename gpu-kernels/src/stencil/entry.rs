//! The PTX entry points: one `extern "ptx-kernel"` function per variant and element type,
//! named `stencil7_<variant>_<f32|f64>`, each a thin call of the generic kernel with the
//! tile constants of [`tiles`](super::tiles); plus `stencil7_<variant>_t<T>_<f32|f64>` for
//! the other tile edges of the benchmarks' tiling sweep ([`REGISTER_TILED_SWEEP`],
//! [`COARSENED_SWEEP`]).
//!
//! [`REGISTER_TILED_SWEEP`]: super::tiles::REGISTER_TILED_SWEEP
//! [`COARSENED_SWEEP`]: super::tiles::COARSENED_SWEEP

/// Stamps out `#[no_mangle]` kernels `$name(input, output, grid, coeffs)` for the GPU.
macro_rules! stencil_entry_points {
    ($($name:ident => $kernel:ident::<$t:ty $(, $tile:tt)?>;)*) => {$(
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
    // The tiling sweep's other tile edges (the host test `ptx` checks every edge of the
    // sweep constants has its entry point).
    stencil7_register_tiled_t8_f32 => stencil_register_tiled::<f32, 8>;
    stencil7_register_tiled_t8_f64 => stencil_register_tiled::<f64, 8>;
    stencil7_register_tiled_t16_f32 => stencil_register_tiled::<f32, 16>;
    stencil7_register_tiled_t16_f64 => stencil_register_tiled::<f64, 16>;
    stencil7_coarsened_t16_f32 => stencil_coarsened::<f32, 16>;
    stencil7_coarsened_t16_f64 => stencil_coarsened::<f64, 16>;
}
