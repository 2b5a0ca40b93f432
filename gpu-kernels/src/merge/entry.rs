//! The PTX entry points: one `extern "ptx-kernel"` function per kernel and key type, named
//! `merge_<variant>_<type>`, each a thin call of the generic kernel with the coarsening factor
//! [`ELEMENTS_PER_THREAD`]; plus `merge_<variant>_c<factor>_<type>` for the other factors of
//! the benchmarks' coarsening sweep ([`COARSENING_SWEEP`]), in the basic and tiled kernels,
//! for i32 and f64 keys. Every entry point takes `(a, m, b, n, c)` with 64-bit sizes.
//!
//! The tiled kernel with 16 outputs per thread and 8-byte keys has no entry point: its shared
//! memory (`tiled_shared_bytes(8, 16)`, 99,360 bytes) is over [`MAX_SHARED_BYTES`].
//!
//! [`ELEMENTS_PER_THREAD`]: super::tiles::ELEMENTS_PER_THREAD
//! [`COARSENING_SWEEP`]: super::tiles::COARSENING_SWEEP
//! [`MAX_SHARED_BYTES`]: super::tiles::MAX_SHARED_BYTES

/// Stamps out `#[no_mangle]` kernels `$name(a, m, b, n, c)` for the GPU.
macro_rules! merge_entry_points {
    ($($name:ident => $kernel:ident::<$t:ty, $factor:tt>;)*) => {$(
        #[cfg(target_arch = "nvptx64")]
        #[unsafe(no_mangle)]
        pub unsafe extern "ptx-kernel" fn $name(a: *const $t, m: u64, b: *const $t, n: u64, c: *mut $t) {
            // SAFETY: the host launcher passes device buffers of `m`, `n` and `m + n` keys
            // (inputs checked sorted and NaN-free), and sizes blocks, grid and shared memory
            // from the constants in `tiles` and the same coarsening factor.
            unsafe { super::$kernel::<$t, $factor>(a, m as usize, b, n as usize, c) }
        }
    )*};
}

#[cfg(target_arch = "nvptx64")]
use super::tiles::ELEMENTS_PER_THREAD;

merge_entry_points! {
    merge_basic_i32 => merge_basic::<i32, ELEMENTS_PER_THREAD>;
    merge_basic_u32 => merge_basic::<u32, ELEMENTS_PER_THREAD>;
    merge_basic_i64 => merge_basic::<i64, ELEMENTS_PER_THREAD>;
    merge_basic_f32 => merge_basic::<f32, ELEMENTS_PER_THREAD>;
    merge_basic_f64 => merge_basic::<f64, ELEMENTS_PER_THREAD>;
    merge_tiled_i32 => merge_tiled::<i32, ELEMENTS_PER_THREAD>;
    merge_tiled_u32 => merge_tiled::<u32, ELEMENTS_PER_THREAD>;
    merge_tiled_i64 => merge_tiled::<i64, ELEMENTS_PER_THREAD>;
    merge_tiled_f32 => merge_tiled::<f32, ELEMENTS_PER_THREAD>;
    merge_tiled_f64 => merge_tiled::<f64, ELEMENTS_PER_THREAD>;
    merge_circular_i32 => merge_circular::<i32, ELEMENTS_PER_THREAD>;
    merge_circular_u32 => merge_circular::<u32, ELEMENTS_PER_THREAD>;
    merge_circular_i64 => merge_circular::<i64, ELEMENTS_PER_THREAD>;
    merge_circular_f32 => merge_circular::<f32, ELEMENTS_PER_THREAD>;
    merge_circular_f64 => merge_circular::<f64, ELEMENTS_PER_THREAD>;
    // The coarsening sweep's other factors (the host test `ptx` checks every factor the host
    // offers has its entry point).
    merge_basic_c1_i32 => merge_basic::<i32, 1>;
    merge_basic_c2_i32 => merge_basic::<i32, 2>;
    merge_basic_c4_i32 => merge_basic::<i32, 4>;
    merge_basic_c16_i32 => merge_basic::<i32, 16>;
    merge_basic_c1_f64 => merge_basic::<f64, 1>;
    merge_basic_c2_f64 => merge_basic::<f64, 2>;
    merge_basic_c4_f64 => merge_basic::<f64, 4>;
    merge_basic_c16_f64 => merge_basic::<f64, 16>;
    merge_tiled_c1_i32 => merge_tiled::<i32, 1>;
    merge_tiled_c2_i32 => merge_tiled::<i32, 2>;
    merge_tiled_c4_i32 => merge_tiled::<i32, 4>;
    merge_tiled_c16_i32 => merge_tiled::<i32, 16>;
    merge_tiled_c1_f64 => merge_tiled::<f64, 1>;
    merge_tiled_c2_f64 => merge_tiled::<f64, 2>;
    merge_tiled_c4_f64 => merge_tiled::<f64, 4>;
}
