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

/// Stamps out one streaming entry point `$name` for `$t` and the const generics given.
macro_rules! streaming_entry_point {
    ($name:ident: $t:ident, $v:literal, $rows:literal, $ahead:literal, $prefetch:literal, along_y = $along_y:literal) => {
        #[cfg(target_arch = "nvptx64")]
        #[unsafe(no_mangle)]
        pub unsafe extern "ptx-kernel" fn $name(
            input: *const $t,
            output: *mut $t,
            grid: super::Grid3,
            coeffs: super::Coeffs<$t>,
            window: super::Window,
            walk: super::Walk,
        ) {
            // SAFETY: the host launcher picks this entry point only for grids whose `nx` `V`
            // divides, and covers the window with the shape's blocks (along y: the x–z
            // cross-section).
            unsafe {
                super::stencil_streaming::<$t, $v, $rows, $ahead, $prefetch, $along_y>(
                    input, output, grid, coeffs, window, walk,
                )
            }
        }
    };
}

/// Stamps out the streaming kernel's entry points
/// `stencil7_streaming_v<V>_r<ROWS>_a<AHEAD>_p<PREFETCH>_<t>` (walking along z) and
/// `stencil7_streaming_y_v…` (along y) for each `(V, ROWS, AHEAD, PREFETCH)` listed, and the list
/// itself as `$list` for the host.
macro_rules! streaming_entry_points {
    ($($list:ident: $t:ident => [$(($v:literal, $rows:literal, $ahead:literal, $prefetch:literal)),* $(,)?];)*) => {$(
        #[doc = concat!("Every streaming entry point built for `", stringify!($t), "`.")]
        pub const $list: &[super::tiles::StreamingKernel] = &[$(
            super::tiles::StreamingKernel { vector: $v, rows: $rows, ahead: $ahead, prefetch: $prefetch }
        ),*];
        $(
            streaming_entry_point!(${concat(stencil7_streaming_v, $v, _r, $rows, _a, $ahead, _p, $prefetch, _, $t)}:
                $t, $v, $rows, $ahead, $prefetch, along_y = false);
            streaming_entry_point!(${concat(stencil7_streaming_y_v, $v, _r, $rows, _a, $ahead, _p, $prefetch, _, $t)}:
                $t, $v, $rows, $ahead, $prefetch, along_y = true);
        )*
    )*};
}

// The defaults (`tiles::STREAMING_F32`, `STREAMING_F64`), the narrower vectors they fall back to
// on rows whose length their vector does not divide, and the other kernels of the benchmarks'
// streaming sweep (`tiles::STREAMING_SWEEP_F32`, `STREAMING_SWEEP_F64`).
streaming_entry_points! {
    STREAMING_KERNELS_F32: f32 => [
        (4, 1, 0, 1), (2, 1, 0, 1), (1, 1, 0, 1),
        (4, 1, 0, 0), (4, 1, 0, 2), (8, 1, 0, 1), (4, 2, 0, 1), (4, 1, 1, 1),
    ];
    STREAMING_KERNELS_F64: f64 => [
        (2, 2, 0, 1), (1, 2, 0, 1),
        (2, 2, 0, 0), (2, 2, 0, 2), (4, 2, 0, 1), (2, 1, 0, 1), (2, 2, 1, 1),
    ];
}

/// Stamps out the temporal kernel's entry points `stencil7_temporal_k<K>_r<ROWS>_<t>` for each
/// `(K, ROWS)` listed, and the list itself as `$list` for the host.
macro_rules! temporal_entry_points {
    ($($list:ident: $t:ident => [$(($k:literal, $rows:literal)),* $(,)?];)*) => {$(
        #[doc = concat!("Every temporal entry point built for `", stringify!($t), "`.")]
        pub const $list: &[super::tiles::TemporalKernel] = &[$(
            super::tiles::TemporalKernel { depth: $k, rows: $rows }
        ),*];
        $(
            #[cfg(target_arch = "nvptx64")]
            #[unsafe(no_mangle)]
            pub unsafe extern "ptx-kernel" fn ${concat(stencil7_temporal_k, $k, _r, $rows, _, $t)}(
                input: *const $t,
                output: *mut $t,
                grid: super::Grid3,
                coeffs: super::Coeffs<$t>,
            ) {
                // SAFETY: the host launcher sizes blocks, tiles and shared memory for this
                // depth and row count (`host::stencil::temporal`).
                unsafe { super::stencil_temporal::<$t, $k, $rows>(input, output, grid, coeffs) }
            }
        )*
    )*};
}

// The fusion depths and rows per thread of the benchmarks' sweep (`tiles::TEMPORAL_SWEEP_F32`,
// `TEMPORAL_SWEEP_F64`); the defaults are among them.
temporal_entry_points! {
    TEMPORAL_KERNELS_F32: f32 => [(2, 4), (3, 4), (4, 4), (6, 4), (8, 4), (2, 2), (3, 2), (4, 2), (4, 8)];
    TEMPORAL_KERNELS_F64: f64 => [(2, 2), (3, 2), (4, 2), (6, 2), (2, 1), (3, 1), (2, 4), (4, 4)];
}

/// Stamps out the high-order star kernels' entry points `stencil_star<R>_v<V>_a<A>_<t>` (13
/// points for `R` = 2, 25 for `R` = 4; `A` = 1: halo loaded a plane ahead) for each `(R, V, A)`
/// listed, and the list as `$list` for the host.
macro_rules! star_entry_points {
    ($($list:ident: $t:ident => [$(($r:literal, $v:literal, $a:literal)),* $(,)?];)*) => {$(
        #[doc = concat!("Every high-order star entry point built for `", stringify!($t), "`: (order, vector, ahead).")]
        pub const $list: &[(usize, usize, usize)] = &[$(($r, $v, $a)),*];
        $(
            #[cfg(target_arch = "nvptx64")]
            #[unsafe(no_mangle)]
            pub unsafe extern "ptx-kernel" fn ${concat(stencil_star, $r, _v, $v, _a, $a, _, $t)}(
                input: *const $t,
                output: *mut $t,
                grid: super::Grid3,
                coeffs: super::star::StarCoeffs<$t, $r>,
            ) {
                // SAFETY: the host launcher picks this entry point only for grids whose `nx`
                // `V` divides, and covers the grid with `V`-wide patches.
                unsafe {
                    super::stencil_star_streaming::<$t, $r, $v, { 2 * $r + 1 }, { $a == 1 }>(
                        input, output, grid, coeffs,
                    )
                }
            }
        )*
    )*};
}

/// Stamps out the two-rows-a-thread star kernels' entry points `stencil_star<R>_v<V>_r2_a<A>_<t>`
/// (`star_rows_streaming.rs`; `A` = 1: the y arm's rows loaded a plane ahead) for each
/// `(R, V, A)` listed, and the list as `$list` for the host.
macro_rules! star_rows_entry_points {
    ($($list:ident: $t:ident => [$(($r:literal, $v:literal, $a:literal)),* $(,)?];)*) => {$(
        #[doc = concat!("Every two-rows-a-thread star entry point built for `", stringify!($t), "`: (order, vector, ahead).")]
        pub const $list: &[(usize, usize, usize)] = &[$(($r, $v, $a)),*];
        $(
            #[cfg(target_arch = "nvptx64")]
            #[unsafe(no_mangle)]
            pub unsafe extern "ptx-kernel" fn ${concat(stencil_star, $r, _v, $v, _r2_a, $a, _, $t)}(
                input: *const $t,
                output: *mut $t,
                grid: super::Grid3,
                coeffs: super::star::StarCoeffs<$t, $r>,
            ) {
                // SAFETY: as the one-row star kernels'.
                unsafe {
                    super::stencil_star_rows_streaming::<$t, $r, $v, { 2 * $r + 1 }, { $a == 1 }>(
                        input, output, grid, coeffs,
                    )
                }
            }
        )*
    )*};
}

// The 16-byte rows, one narrower vector and one point a row (for rows of any length: the host
// narrows a vector to one that is built with the same rows) of each order, for the
// `stencil_shapes` sweep to time against the one-row kernels; for the star25, the 16-byte rows
// and one point a row with the y rows loaded ahead too.
star_rows_entry_points! {
    STAR_ROWS_KERNELS_F32: f32 => [
        (2, 4, 0), (2, 2, 0), (2, 1, 0), (4, 4, 0), (4, 2, 0), (4, 1, 0), (4, 4, 1), (4, 1, 1),
    ];
    STAR_ROWS_KERNELS_F64: f64 => [(2, 2, 0), (2, 1, 0), (4, 2, 0), (4, 1, 0), (4, 2, 1), (4, 1, 1)];
}

// Orders 2 and 4, with 16-byte rows and the narrower vectors (for rows of other lengths, and
// fewer registers), each with the halo loaded ahead and not.
star_entry_points! {
    STAR_KERNELS_F32: f32 => [
        (2, 8, 0), (2, 8, 1), (2, 4, 0), (2, 4, 1), (2, 2, 0), (2, 2, 1), (2, 1, 0), (2, 1, 1),
        (4, 4, 0), (4, 4, 1), (4, 2, 0), (4, 2, 1), (4, 1, 0), (4, 1, 1),
    ];
    STAR_KERNELS_F64: f64 => [(2, 4, 0), (2, 4, 1), (2, 2, 0), (2, 2, 1), (2, 1, 0), (2, 1, 1), (4, 2, 0), (4, 2, 1), (4, 1, 0), (4, 1, 1)];
}

/// Stamps out the high-order stars' shared-halo streaming kernels
/// `stencil_star<R>_shared_b<BX>x<BY>_v<V>_<t>` for each `(R, V, BX, BY)` listed (the block is a
/// const generic: the ring's offsets are constants), and the list as `$list` for the host.
macro_rules! star_shared_entry_points {
    ($($list:ident: $t:ident => [$(($r:literal, $v:literal, $bx:literal, $by:literal)),* $(,)?];)*) => {$(
        #[doc = concat!("Every shared-halo star entry point built for `", stringify!($t), "`: (order, vector, block x, block y).")]
        pub const $list: &[(usize, usize, usize, usize)] = &[$(($r, $v, $bx, $by)),*];
        $(
            #[cfg(target_arch = "nvptx64")]
            #[unsafe(no_mangle)]
            pub unsafe extern "ptx-kernel" fn ${concat(stencil_star, $r, _shared_b, $bx, x, $by, _v, $v, _, $t)}(
                input: *const $t,
                output: *mut $t,
                grid: super::Grid3,
                coeffs: super::star::StarCoeffs<$t, $r>,
            ) {
                // SAFETY: the host picks this entry point only for grids whose `nx` `V` divides,
                // launches blocks of `BX × BY` threads covering the grid with `V`-wide patches,
                // and gives them the ring's shared memory (`tiles::HaloRing::shared_bytes`).
                unsafe {
                    super::stencil_star_shared_streaming::<
                        $t,
                        $r,
                        $v,
                        { 2 * $r + 1 },
                        $bx,
                        $by,
                        { super::tiles::HaloRing { order: $r, vector: $v, block: [$bx, $by] }.patches_per_thread() },
                    >(input, output, grid, coeffs)
                }
            }
        )*
    )*};
}

// The 25-point star in blocks of 32×8 threads of 16-byte rows: the fastest blocks of the H200
// sweep (32×16, 32×4, 64×4 and 16×16 were slower; docs/stencil-h200.md). Measured, not the default.
star_shared_entry_points! {
    STAR_SHARED_KERNELS_F32: f32 => [(4, 4, 32, 8)];
    STAR_SHARED_KERNELS_F64: f64 => [(4, 2, 32, 8)];
}

/// Stamps out the high-order stars' tensor-copy streaming kernels
/// `stencil_star<R>_tensor_b<BX>x<BY>_v<V>_r<ROWS>_<t>` for each `(R, V, BX, BY, ROWS)` listed,
/// and the list as `$list` for the host. Their fifth parameter is the input's tensor map.
macro_rules! star_tensor_entry_points {
    ($($list:ident: $t:ident => [$(($r:literal, $v:literal, $bx:literal, $by:literal, $rows:literal)),* $(,)?];)*) => {$(
        #[doc = concat!("Every tensor-copy star entry point built for `", stringify!($t), "`: (order, vector, block x, block y, rows).")]
        pub const $list: &[(usize, usize, usize, usize, usize)] = &[$(($r, $v, $bx, $by, $rows)),*];
        $(
            #[cfg(target_arch = "nvptx64")]
            #[unsafe(no_mangle)]
            pub unsafe extern "ptx-kernel" fn ${concat(stencil_star, $r, _tensor_b, $bx, x, $by, _v, $v, _r, $rows, _, $t)}(
                input: *const $t,
                output: *mut $t,
                grid: super::Grid3,
                coeffs: super::star::StarCoeffs<$t, $r>,
                map: *const crate::device::tensor::TensorMap,
            ) {
                // SAFETY: the host picks this entry point only with the Hopper build loaded, for
                // grids whose `nx` `V` divides, passes the tensor map of `input` with the ring's
                // box, launches blocks of `BX × BY` threads covering the grid with patches of
                // `ROWS` rows, and gives them the ring (`tiles::TensorRing::shared_bytes`).
                unsafe {
                    super::stencil_star_tensor_streaming::<$t, $r, $v, { 2 * $r + 1 }, $bx, $by, $rows>(
                        input, output, grid, coeffs, map,
                    )
                }
            }
        )*
    )*};
}

// The 25-point star in blocks of 32×4 threads of four rows of one 16-byte patch (the CUDA
// prototype's fastest on an H100, the H200's default), and in `f64` of 32×8 (the H100's default:
// tiles of 72×40 for 64×32 points, 17 % fewer reads than 72×24 for 64×16; docs/stencil-h200.md,
// 2026-12-07 19:19). 32×8 in `f32`, and two rows in 32×8, ran slower on an H100.
star_tensor_entry_points! {
    STAR_TENSOR_KERNELS_F32: f32 => [(4, 4, 32, 4, 4)];
    STAR_TENSOR_KERNELS_F64: f64 => [(4, 2, 32, 4, 4), (4, 2, 32, 8, 4)];
}

/// Stamps out the box stencil's entry points `stencil_box27_v<V>_r<ROWS>_<t>` for each
/// `(V, ROWS)` listed (points per row and rows per thread), and the list as `$list` for the host.
macro_rules! box_entry_points {
    ($($list:ident: $t:ident => [$(($v:literal, $rows:literal)),* $(,)?];)*) => {$(
        #[doc = concat!("Every box-stencil kernel built for `", stringify!($t), "`, as (vector, rows).")]
        pub const $list: &[(usize, usize)] = &[$(($v, $rows)),*];
        $(
            #[cfg(target_arch = "nvptx64")]
            #[unsafe(no_mangle)]
            pub unsafe extern "ptx-kernel" fn ${concat(stencil_box27_v, $v, _r, $rows, _, $t)}(
                input: *const $t,
                output: *mut $t,
                grid: super::Grid3,
                coeffs: super::box27::BoxCoeffs<$t>,
            ) {
                // SAFETY: as the star kernels'.
                unsafe {
                    super::stencil_box_streaming::<$t, $v, $rows, { $rows + 2 }>(input, output, grid, coeffs)
                }
            }
        )*
    )*};
}

box_entry_points! {
    BOX_KERNELS_F32: f32 => [(8, 1), (4, 1), (2, 1), (1, 1), (4, 2), (2, 2), (1, 2)];
    BOX_KERNELS_F64: f64 => [(4, 1), (2, 1), (1, 1), (2, 2), (1, 2)];
}

/// The shared-memory tiled baselines of the high-order stars, `stencil_star<R>_shared_tiled_<t>`.
macro_rules! star_tiled_entry_points {
    ($($r:literal: $t:ident;)*) => {$(
        #[cfg(target_arch = "nvptx64")]
        #[unsafe(no_mangle)]
        pub unsafe extern "ptx-kernel" fn ${concat(stencil_star, $r, _shared_tiled_, $t)}(
            input: *const $t,
            output: *mut $t,
            grid: super::Grid3,
            coeffs: super::star::StarCoeffs<$t, $r>,
        ) {
            // SAFETY: the host launches `T³`-thread blocks with `T³` elements of shared memory,
            // `T = tiles::star_tiled_in_tile_dim(R)`.
            unsafe {
                super::stencil_star_shared_tiled::<$t, $r, { super::tiles::star_tiled_in_tile_dim($r) }>(
                    input, output, grid, coeffs,
                )
            }
        }
    )*};
}

star_tiled_entry_points! {
    2: f32;
    2: f64;
    4: f32;
    4: f64;
}
