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

/// Stamps out the merge-path kernels for each key type, ascending: the sample kernel
/// `merge_path_samples_<t>(a, m, b, n, tile_size, splits)`, the partition
/// `merge_path_partition_<t>(a, m, b, n, tile_size, splits)`, the merge
/// `merge_path_b<BLOCK>_i<ITEMS>_<t>(a, m, b, n, c, splits)` for each `(BLOCK, ITEMS)` listed
/// first, the pipelined merge `merge_path_pipelined_b<BLOCK>_i<ITEMS>_<t>(…)` for each listed
/// after `pipelined`, and all the shapes as `$list` for the host.
macro_rules! path_entry_points {
    ($($list:ident: $t:ident => [$(($block:literal, $items:literal)),* $(,)?]
        pipelined [$(($p_block:literal, $p_items:literal)),* $(,)?];)*) => {$(
        #[doc = concat!("Every merge-path shape built for `", stringify!($t), "` keys.")]
        pub const $list: &[super::tiles::PathShape] = &[
            $(super::tiles::PathShape::new($block, $items),)*
            $(super::tiles::PathShape::new($p_block, $p_items).pipelined(),)*
        ];
        partition_entry_point!(merge_path_samples_, merge_path_samples::<$t>, $t);
        partition_entry_point!(merge_path_partition_, merge_path_partition::<$t, super::Ascending>, $t);
        $(path_merge_entry_point!(merge_path_b, merge_path, super::Ascending, $t, $block, $items);)*
        $(path_merge_entry_point!(
            merge_path_pipelined_b, merge_path_pipelined, super::Ascending, $t, $p_block, $p_items
        );)*
    )*};
}

/// A kernel of merge path's partition, `<prefix><t>(a, m, b, n, tile_size, splits)`, calling
/// `$kernel::<t, …>`: the sample kernel (`merge_path_samples`, the same for every key order: it
/// copies keys, it compares none) or the partition (`merge_path_partition`, in a key order).
macro_rules! partition_entry_point {
    ($prefix:ident, $kernel:ident::<$($generic:ty),*>, $t:ident) => {
        #[cfg(target_arch = "nvptx64")]
        #[unsafe(no_mangle)]
        pub unsafe extern "ptx-kernel" fn ${concat($prefix, $t)}(
            a: *const $t,
            m: u64,
            b: *const $t,
            n: u64,
            tile_size: u64,
            splits: *mut u64,
        ) {
            // SAFETY: the host passes inputs of `m` and `n` keys, sorted in the order and
            // NaN-free, and a `splits` buffer of `splits_len(⌈(m + n) / tile_size⌉)` entries,
            // with `tile_size > 0`; it launches the sample kernel (`PARTITION_SAMPLES` threads)
            // before the partition (a thread per co-rank) where the merge uses samples.
            unsafe { super::$kernel::<$($generic),*>(a, m as usize, b, n as usize, tile_size as usize, splits.cast()) }
        }
    };
}

/// One merge-path merge kernel, `<prefix><BLOCK>_i<ITEMS>_<t>(a, m, b, n, c, splits)`, calling
/// `$kernel::<t, …>` (in the key order `$order` where the kernel takes one) with `V` keys to 16
/// bytes. The host runs the partition of the same order for this tile size first, and launches
/// blocks of `BLOCK` threads (one per tile, or for the pipelined kernel no more than the tiles)
/// with the shape's shared memory.
macro_rules! path_merge_entry_point {
    ($prefix:ident, merge_path_pipelined, $order:ty, $t:ident, $block:literal, $items:literal) => {
        path_merge_entry_point!(@ $prefix, merge_path_pipelined::<$t>, $t, $block, $items);
    };
    ($prefix:ident, $kernel:ident, $order:ty, $t:ident, $block:literal, $items:literal) => {
        path_merge_entry_point!(@ $prefix, $kernel::<$t, $order>, $t, $block, $items);
    };
    (@ $prefix:ident, $kernel:ident::<$($generic:ty),*>, $t:ident, $block:literal, $items:literal) => {
        #[cfg(target_arch = "nvptx64")]
        #[unsafe(no_mangle)]
        pub unsafe extern "ptx-kernel" fn ${concat($prefix, $block, _i, $items, _, $t)}(
            a: *const $t,
            m: u64,
            b: *const $t,
            n: u64,
            c: *mut $t,
            splits: *const u64,
        ) {
            // SAFETY: per the launch described above.
            unsafe {
                super::$kernel::<$($generic,)* $block, $items, { super::tiles::keys_per_16_bytes(size_of::<$t>()) }>(
                    a, m as usize, b, n as usize, c, splits.cast(),
                )
            }
        }
    };
}

// The defaults (`tiles::PATH_4_BYTE`, `PATH_8_BYTE`, and `PATH_8_BYTE_LOPSIDED` for lopsided
// merges of 8-byte keys) for every key type, and the benchmarks'
// sweeps (`tiles::PATH_SWEEP`, `PATH_PIPELINED_SWEEP`) for i32 and f64 keys (for f64, the
// shapes that fit in shared memory).
path_entry_points! {
    PATH_SHAPES_I32: i32 => [
        (128, 7), (128, 11), (128, 15), (128, 19), (256, 7), (256, 11), (256, 15), (256, 16),
        (256, 19), (256, 21), (256, 23), (512, 7), (512, 11), (512, 15), (512, 19),
    ] pipelined [(128, 15), (128, 21), (256, 11), (256, 15), (256, 21)];
    PATH_SHAPES_U32: u32 => [(256, 21)] pipelined [];
    PATH_SHAPES_F32: f32 => [(256, 21)] pipelined [];
    PATH_SHAPES_I64: i64 => [(256, 11), (128, 19)] pipelined [];
    PATH_SHAPES_F64: f64 => [
        (128, 7), (128, 11), (128, 15), (128, 19), (256, 7), (256, 11), (256, 15), (256, 16),
        (256, 19), (256, 21), (256, 23), (512, 7), (512, 11),
    ] pipelined [(128, 15), (128, 21), (256, 11), (256, 15)];
}

/// Stamps out the merge-by-key kernels for each key type:
/// `merge_path_by_key_b<BLOCK>_i<ITEMS>_<t>_v<bytes>(a, a_values, m, b, b_values, n, c,
/// c_values, splits)` for each `(BLOCK, ITEMS)` listed and values of 4, 8 and 16 bytes (`u32`,
/// `u64`, [`Bytes16`](super::Bytes16): the host moves any plain value type of one of those sizes
/// through them), and the shapes as `$list` for the host. The partition is the keys-only one.
macro_rules! by_key_entry_points {
    ($($list:ident: $t:ident => [$(($block:literal, $items:literal)),* $(,)?];)*) => {$(
        #[doc = concat!("Every merge-by-key shape built for `", stringify!($t), "` keys.")]
        pub const $list: &[super::tiles::PathShape] = &[$(super::tiles::PathShape::new($block, $items),)*];
        $(by_key_entry_point!(merge_path_by_key_b, super::Ascending, $t, $block, $items);)*
    )*};
}

/// The merge-by-key kernels `<prefix><BLOCK>_i<ITEMS>_<t>_v<bytes>(a, a_values, m, b, b_values,
/// n, c, c_values, splits)` in the key order `$order`, for values of 4, 8 and 16 bytes, calling
/// `merge_path_by_key::<t, order, P, BLOCK, ITEMS, V>` with `V` keys to 16 bytes. The host runs
/// the partition of the same order for this tile size first, and launches one block of `BLOCK`
/// threads per tile with the shape's shared memory.
macro_rules! by_key_entry_point {
    ($prefix:ident, $order:ty, $t:ident, $block:literal, $items:literal) => {
        by_key_entry_point!(@ $prefix, $order, $t, $block, $items, 4, u32);
        by_key_entry_point!(@ $prefix, $order, $t, $block, $items, 8, u64);
        by_key_entry_point!(@ $prefix, $order, $t, $block, $items, 16, super::Bytes16);
    };
    (@ $prefix:ident, $order:ty, $t:ident, $block:literal, $items:literal, $bytes:literal, $value:ty) => {
        #[cfg(target_arch = "nvptx64")]
        #[unsafe(no_mangle)]
        pub unsafe extern "ptx-kernel" fn ${concat($prefix, $block, _i, $items, _, $t, _v, $bytes)}(
            a: *const $t,
            a_values: *const $value,
            m: u64,
            b: *const $t,
            b_values: *const $value,
            n: u64,
            c: *mut $t,
            c_values: *mut $value,
            splits: *const u64,
        ) {
            // SAFETY: per the launch described above; the value buffers hold `m`, `n` and
            // `m + n` values of `$bytes` bytes, 16-byte aligned.
            unsafe {
                super::merge_path_by_key::<
                    $t,
                    $order,
                    $value,
                    $block,
                    $items,
                    { super::tiles::keys_per_16_bytes(size_of::<$t>()) },
                >(a, a_values, m as usize, b, b_values, n as usize, c, c_values, splits.cast())
            }
        }
    };
}

// The defaults (`tiles::PATH_4_BYTE`, `PATH_8_BYTE`) for every key type, and for i32 and f64
// keys two more shapes each: the benchmarks' by-key sweep is every shape built.
by_key_entry_points! {
    BY_KEY_SHAPES_I32: i32 => [(256, 21), (256, 15), (128, 11)];
    BY_KEY_SHAPES_U32: u32 => [(256, 21)];
    BY_KEY_SHAPES_F32: f32 => [(256, 21)];
    BY_KEY_SHAPES_I64: i64 => [(256, 11)];
    BY_KEY_SHAPES_F64: f64 => [(256, 11), (256, 15), (128, 11)];
}

/// Stamps out merge path in another key order (`$order`, named `$name` in the entry points)
/// for each key type at its default shape: the partition `merge_path_<name>_partition_<t>`, the
/// merge `merge_path_<name>_b<BLOCK>_i<ITEMS>_<t>` and the merges by key
/// `merge_path_<name>_by_key_b<BLOCK>_i<ITEMS>_<t>_v<bytes>`, with the arguments of the
/// ascending ones; and the key types as `$list` for the host.
macro_rules! ordered_entry_points {
    ($($list:ident: $order:ty, $name:ident => [$($t:ident: ($block:literal, $items:literal)),* $(,)?];)*) => {$(
        #[doc = concat!("The key types built in the order `", stringify!($name), "`.")]
        pub const $list: &[&str] = &[$(stringify!($t)),*];
        $(
            partition_entry_point!(${concat(merge_path_, $name, _partition_)}, merge_path_partition::<$t, $order>, $t);
            path_merge_entry_point!(${concat(merge_path_, $name, _b)}, merge_path, $order, $t, $block, $items);
            by_key_entry_point!(${concat(merge_path_, $name, _by_key_b)}, $order, $t, $block, $items);
        )*
    )*};
}

// Descending for every key type, and the example of a user's order (`ByUpper16`) for u32 keys,
// at the defaults (`tiles::PATH_4_BYTE`, `PATH_8_BYTE`).
ordered_entry_points! {
    DESCENDING_KEY_TYPES: super::Descending, desc => [
        i32: (256, 21), u32: (256, 21), i64: (256, 11), f32: (256, 21), f64: (256, 11),
    ];
    UPPER16_KEY_TYPES: super::ByUpper16, upper16 => [u32: (256, 21)];
}

/// Stamps out the set operations for each key type, ascending: the partition
/// `set_partition_<t>(a, m, b, n, tile_size, splits, status)` and, for each operation and each
/// listed `(BLOCK, ITEMS)`, the kernel `set_<op>_b<BLOCK>_i<ITEMS>_<t>(a, m, b, n, c, splits,
/// status)`; and the shapes as `$list` for the host. The host runs the partition for the
/// shape's tile size first (it writes `set_splits_len(tiles)` split words and clears `tiles` status words),
/// then one block of `BLOCK` threads per tile with the shape's set-operation shared memory.
macro_rules! set_entry_points {
    ($($list:ident: $t:ident => [$(($block:literal, $items:literal)),* $(,)?];)*) => {$(
        #[doc = concat!("Every set-operation shape built for `", stringify!($t), "` keys.")]
        pub const $list: &[super::tiles::PathShape] = &[$(super::tiles::PathShape::new($block, $items),)*];
        #[cfg(target_arch = "nvptx64")]
        #[unsafe(no_mangle)]
        pub unsafe extern "ptx-kernel" fn ${concat(set_partition_, $t)}(
            a: *const $t,
            m: u64,
            b: *const $t,
            n: u64,
            tile_size: u64,
            splits: *mut u64,
            status: *mut u64,
        ) {
            // SAFETY: the host passes inputs of `m` and `n` keys, sorted ascending and NaN-free,
            // room for the splits and status words above, and `tile_size > 0`.
            unsafe {
                super::set_partition::<$t, super::Ascending>(
                    a, m as usize, b, n as usize, tile_size as usize, splits.cast(), status,
                )
            }
        }
        $(
            set_entry_point!(union, Union, $t, $block, $items);
            set_entry_point!(intersection, Intersection, $t, $block, $items);
            set_entry_point!(difference, Difference, $t, $block, $items);
            set_entry_point!(symmetric_difference, SymmetricDifference, $t, $block, $items);
        )*
    )*};
}

/// One set-operation kernel, `set_<op>_b<BLOCK>_i<ITEMS>_<t>(a, m, b, n, c, splits, status)`.
macro_rules! set_entry_point {
    ($name:ident, $operation:ident, $t:ident, $block:literal, $items:literal) => {
        #[cfg(target_arch = "nvptx64")]
        #[unsafe(no_mangle)]
        pub unsafe extern "ptx-kernel" fn ${concat(set_, $name, _b, $block, _i, $items, _, $t)}(
            a: *const $t,
            _m: u64,
            b: *const $t,
            _n: u64,
            c: *mut $t,
            splits: *const u64,
            status: *mut u64,
        ) {
            // SAFETY: per the launch described above; `c` has room for the operation's outputs.
            unsafe {
                super::set_operation::<$t, super::Ascending, $block, $items, { $items + 1 }>(
                    super::SetOperation::$operation, a, b, c, splits.cast(), status,
                )
            }
        }
    };
}

// The defaults (`tiles::SET_4_BYTE`, `SET_8_BYTE`) for every key type, and for i32 and f64 keys
// the benchmarks' sweep.
set_entry_points! {
    SET_SHAPES_I32: i32 => [(256, 31), (256, 15), (256, 21), (256, 25), (256, 29), (128, 25), (128, 31), (512, 15)];
    SET_SHAPES_U32: u32 => [(256, 31)];
    SET_SHAPES_F32: f32 => [(256, 31)];
    SET_SHAPES_I64: i64 => [(128, 27)];
    SET_SHAPES_F64: f64 => [(128, 27), (128, 15), (128, 19), (128, 23), (256, 11), (256, 15), (256, 19), (64, 19)];
}

/// Stamps out the set operations by key for each key type at its default shape: for each
/// operation and values of 4, 8 and 16 bytes (`u32`, `u64`, [`Bytes16`](super::Bytes16)),
/// `set_<op>_by_key_b<BLOCK>_i<ITEMS>_<t>_v<bytes>(a, a_values, m, b, b_values, n, c, c_values,
/// splits, status)`. The partition is the keys-only one; the launch has the by-key layout's
/// shared memory.
macro_rules! set_by_key_entry_points {
    ($($t:ident: ($block:literal, $items:literal)),* $(,)?) => {$(
        set_by_key_entry_point!(union, Union, $t, $block, $items);
        set_by_key_entry_point!(intersection, Intersection, $t, $block, $items);
        set_by_key_entry_point!(difference, Difference, $t, $block, $items);
        set_by_key_entry_point!(symmetric_difference, SymmetricDifference, $t, $block, $items);
    )*};
}

/// One set operation by key for values of 4, 8 and 16 bytes.
macro_rules! set_by_key_entry_point {
    ($name:ident, $operation:ident, $t:ident, $block:literal, $items:literal) => {
        set_by_key_entry_point!(@ $name, $operation, $t, $block, $items, 4, u32);
        set_by_key_entry_point!(@ $name, $operation, $t, $block, $items, 8, u64);
        set_by_key_entry_point!(@ $name, $operation, $t, $block, $items, 16, super::Bytes16);
    };
    (@ $name:ident, $operation:ident, $t:ident, $block:literal, $items:literal, $bytes:literal, $value:ty) => {
        #[cfg(target_arch = "nvptx64")]
        #[unsafe(no_mangle)]
        pub unsafe extern "ptx-kernel" fn ${concat(set_, $name, _by_key_b, $block, _i, $items, _, $t, _v, $bytes)}(
            a: *const $t,
            a_values: *const $value,
            _m: u64,
            b: *const $t,
            b_values: *const $value,
            _n: u64,
            c: *mut $t,
            c_values: *mut $value,
            splits: *const u64,
            status: *mut u64,
        ) {
            // SAFETY: per the launch described above; the value buffers hold `m`, `n` and as
            // many values as `c` has room for keys.
            unsafe {
                super::set_operation_by_key::<$t, super::Ascending, $value, $block, $items, { $items + 1 }>(
                    super::SetOperation::$operation,
                    (a, a_values),
                    (b, b_values),
                    (c, c_values),
                    splits.cast(),
                    status,
                )
            }
        }
    };
}

// Every key type at its default shape (`tiles::set_shape`).
set_by_key_entry_points! { i32: (256, 31), u32: (256, 31), i64: (128, 27), f32: (256, 31), f64: (128, 27) }
