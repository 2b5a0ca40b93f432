//! The PTX entry points: one `extern "ptx-kernel"` function per kernel and key type, named
//! `merge_<variant>_<type>`, each a thin call of the generic kernel. Every entry point takes
//! `(a, m, b, n, c)` with 64-bit sizes.

/// Stamps out `#[no_mangle]` kernels `$name(a, m, b, n, c)` for the GPU.
macro_rules! merge_entry_points {
    ($($name:ident => $kernel:ident::<$t:ty>;)*) => {$(
        #[cfg(target_arch = "nvptx64")]
        #[unsafe(no_mangle)]
        pub unsafe extern "ptx-kernel" fn $name(a: *const $t, m: u64, b: *const $t, n: u64, c: *mut $t) {
            // SAFETY: the host launcher passes device buffers of `m`, `n` and `m + n` keys
            // (inputs checked sorted and NaN-free), and sizes blocks, grid and shared memory
            // from the constants in `tiles`.
            unsafe { super::$kernel::<$t>(a, m as usize, b, n as usize, c) }
        }
    )*};
}

merge_entry_points! {
    merge_basic_i32 => merge_basic::<i32>;
    merge_basic_u32 => merge_basic::<u32>;
    merge_basic_i64 => merge_basic::<i64>;
    merge_basic_f32 => merge_basic::<f32>;
    merge_basic_f64 => merge_basic::<f64>;
    merge_tiled_i32 => merge_tiled::<i32>;
    merge_tiled_u32 => merge_tiled::<u32>;
    merge_tiled_i64 => merge_tiled::<i64>;
    merge_tiled_f32 => merge_tiled::<f32>;
    merge_tiled_f64 => merge_tiled::<f64>;
    merge_circular_i32 => merge_circular::<i32>;
    merge_circular_u32 => merge_circular::<u32>;
    merge_circular_i64 => merge_circular::<i64>;
    merge_circular_f32 => merge_circular::<f32>;
    merge_circular_f64 => merge_circular::<f64>;
}
