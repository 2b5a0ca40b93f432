//! Merge by key on the GPU (thrust's `merge_by_key`): sorted keys, each with a value that
//! travels with it, merged stably (on equal keys, A's key and its value first) by merge path's
//! kernels (`gpu_kernels::merge::merge_path_by_key`): the keys-only partition, then one block
//! per tile that merges the keys in shared memory and moves each value once, from its input to
//! its output slot.
//!
//! Values are any plain-old-data type of 4, 8 or 16 bytes ([`MergeValue`]); the kernels move
//! their bytes and never read them, so `f32` NaNs and padding-free records travel bit for bit.
//!
//! ```no_run
//! use host::{Gpu, merge::{self, Record8}};
//! let gpu = Gpu::new(0)?;
//! let (keys, values) = merge::merge_by_key(&gpu, &[1, 3], &[10u32, 30], &[2, 3], &[20, 31])?;
//! assert_eq!((keys, values), (vec![1, 2, 3, 3], vec![10, 20, 30, 31]));
//! // Records: any `#[repr(C)]` struct that derives `bytemuck::Pod`, of 8 or 16 bytes.
//! let a = [Record8 { index: 7, weight: 0.5 }];
//! let (_, records) = merge::merge_by_key(&gpu, &[1.0f64], &a, &[], &[])?;
//! assert_eq!(records, a);
//! # Ok::<(), host::Error>(())
//! ```

use std::marker::PhantomData;

use bytemuck::{Pod, Zeroable};
use cudarc::driver::CudaSlice;
use gpu_kernels::merge::tiles::PathShape;
use gpu_kernels::merge::{Ascending, KeyOrder, splits_len};
use gpu_kernels::merge::{
    BY_KEY_SHAPES_F32, BY_KEY_SHAPES_F64, BY_KEY_SHAPES_I32, BY_KEY_SHAPES_I64, BY_KEY_SHAPES_U32,
};
use ndarray::{Array1, ArrayView1};
use rayon::prelude::*;

use super::problem::PathPartition;
use super::{HostKey, MergeProblem, path};
use crate::error::CudaContext as _;
use crate::gpu::{KernelArgs, LaunchAttributes};
use crate::preflight::{self, MergeNeed};
use crate::{Error, Gpu, Result};

/// A value that travels with its key: any plain-old-data type ([`bytemuck::Pod`]: no padding,
/// no pointers, every bit pattern valid) of 4, 8 or 16 bytes ([`VALUE_BYTES`]): `u32`, `f32`,
/// `u64`, `f64`, `[u32; 4]`, or a `#[repr(C)]` struct deriving `Pod` and `Zeroable`, like
/// [`Record8`] and [`Record16`]. Other sizes are refused with [`Error::BadArgument`].
pub trait MergeValue: Pod + Send + Sync {}

impl<T: Pod + Send + Sync> MergeValue for T {}

/// The value sizes the merge-by-key kernels are built for, in bytes.
pub const VALUE_BYTES: [usize; 3] = [4, 8, 16];

/// An example record of 8 bytes: an index and a weight.
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
#[repr(C)]
pub struct Record8 {
    pub index: u32,
    pub weight: f32,
}

/// An example record of 16 bytes: an identifier and a measurement.
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
#[repr(C)]
pub struct Record16 {
    pub id: u64,
    pub value: f64,
}

/// A value type with a generator: the value that generated inputs (the CLI's, the tests', the
/// benchmarks') give key `index` of A (`from_b` false) or of B, so that an output value shows
/// where it came from. The integers and the records are distinct for every key of inputs below
/// 2^31 keys each; the floats are the integers' bits (NaN patterns included: values travel as
/// bits).
pub trait SourceValue: MergeValue + std::fmt::Debug {
    fn of_source(from_b: bool, index: usize) -> Self;
}

impl SourceValue for u32 {
    fn of_source(from_b: bool, index: usize) -> Self {
        (u32::from(from_b) << 31) | index as u32
    }
}

impl SourceValue for u64 {
    fn of_source(from_b: bool, index: usize) -> Self {
        (u64::from(from_b) << 63) | index as u64
    }
}

impl SourceValue for f32 {
    fn of_source(from_b: bool, index: usize) -> Self {
        f32::from_bits(u32::of_source(from_b, index))
    }
}

impl SourceValue for f64 {
    fn of_source(from_b: bool, index: usize) -> Self {
        f64::from_bits(u64::of_source(from_b, index))
    }
}

impl SourceValue for Record8 {
    fn of_source(from_b: bool, index: usize) -> Self {
        Self { index: u32::of_source(from_b, index), weight: index as f32 }
    }
}

impl SourceValue for Record16 {
    fn of_source(from_b: bool, index: usize) -> Self {
        Self { id: u64::of_source(from_b, index), value: -(index as f64) }
    }
}

impl SourceValue for [u32; 4] {
    fn of_source(from_b: bool, index: usize) -> Self {
        [u32::of_source(from_b, index), index as u32, 0, u32::MAX]
    }
}

/// The generated values of A (`from_b` false) or B, `len` of them ([`SourceValue`]).
pub fn source_values<V: SourceValue>(from_b: bool, len: usize) -> Vec<V> {
    (0..len).into_par_iter().map(|i| V::of_source(from_b, i)).collect()
}

/// The first index where `out` and `expected` differ in their bytes (a missing value counts as
/// a difference), `None` if they are identical.
pub fn first_value_difference<V: MergeValue>(out: &[V], expected: &[V]) -> Option<usize> {
    let (x, y): (&[u8], &[u8]) = (bytemuck::cast_slice(out), bytemuck::cast_slice(expected));
    let differs =
        x.par_chunks(size_of::<V>()).zip(y.par_chunks(size_of::<V>())).position_first(|(x, y)| x != y);
    differs.or((out.len() != expected.len()).then(|| out.len().min(expected.len())))
}

/// Refuses value types whose size has no kernel.
fn check_value_size<V>() -> Result<()> {
    let bytes = size_of::<V>();
    if VALUE_BYTES.contains(&bytes) {
        return Ok(());
    }
    Err(Error::BadArgument(format!(
        "values of {} ({bytes} bytes) cannot travel with merge keys: the merge-by-key kernels move values of 4, 8 or 16 bytes",
        std::any::type_name::<V>()
    )))
}

/// Refuses value types without kernels, and inputs with other than one value per key: each input
/// as `(name, keys, values)`; `what` names the operation in the message.
pub(super) fn check_values<V>(a: (&str, usize, &[V]), b: (&str, usize, &[V]), what: &str) -> Result<()> {
    check_value_size::<V>()?;
    for (name, keys, values) in [a, b] {
        if keys != values.len() {
            return Err(Error::BadShape(format!(
                "{name} has {keys} keys and {} values: {what} needs one value per key",
                values.len()
            )));
        }
    }
    Ok(())
}

/// `values` on the device, as their bytes (at least one value's: CUDA allocates no empty buffers).
pub(super) fn upload_values<V: MergeValue>(gpu: &Gpu, values: &[V]) -> Result<CudaSlice<u8>> {
    if values.is_empty() { gpu.alloc(size_of::<V>()) } else { gpu.upload(bytemuck::cast_slice(values)) }
}

/// Every merge-by-key shape built for `dtype` (none for an unknown type): the default for its
/// key size, and for `i32` and `f64` the benchmarks' sweep.
pub fn shapes(dtype: &str) -> &'static [PathShape] {
    match dtype {
        "i32" => BY_KEY_SHAPES_I32,
        "u32" => BY_KEY_SHAPES_U32,
        "i64" => BY_KEY_SHAPES_I64,
        "f32" => BY_KEY_SHAPES_F32,
        "f64" => BY_KEY_SHAPES_F64,
        _ => &[],
    }
}

/// The merge-by-key kernel of `shape` for `dtype` keys sorted in `order` (`asc`, `desc`,
/// `upper16`; other than ascending, at the default shape only) and values of `value_bytes`.
pub fn entry_point_in(shape: PathShape, dtype: &str, order: &str, value_bytes: usize) -> Result<String> {
    // The shape and the value size must be built, in any order.
    let ascending = entry_point(shape, dtype, value_bytes)?;
    if order == "asc" {
        return Ok(ascending);
    }
    path::check_ordered(shape, dtype, order)?;
    let PathShape { block_threads, items, .. } = shape;
    Ok(format!("merge_path_{order}_by_key_b{block_threads}_i{items}_{dtype}_v{value_bytes}"))
}

/// The merge-by-key kernel of `shape` for `dtype` keys and values of `value_bytes`, if built.
pub fn entry_point(shape: PathShape, dtype: &str, value_bytes: usize) -> Result<String> {
    if !shapes(dtype).contains(&shape) || shape.pipelined || !VALUE_BYTES.contains(&value_bytes) {
        let built: Vec<String> = shapes(dtype).iter().map(|&s| path::Describe(s).to_string()).collect();
        return Err(Error::BadArgument(format!(
            "no merge-by-key kernel {} is built for {dtype} keys with {value_bytes}-byte values; the built ones are {} with values of {VALUE_BYTES:?} bytes",
            path::Describe(shape),
            built.join(", ")
        )));
    }
    let PathShape { block_threads, items, .. } = shape;
    Ok(format!("merge_path_by_key_b{block_threads}_i{items}_{dtype}_v{value_bytes}"))
}

/// Device buffers for one merge by key: A's and B's keys (checked sorted and NaN-free) and
/// values, and the output's. Values live on the device as their bytes.
pub struct MergeByKeyProblem<'g, K: HostKey, V: MergeValue> {
    keys: MergeProblem<'g, K>,
    // Each holds at least one value's bytes (CUDA allocates no empty buffers).
    a_values: CudaSlice<u8>,
    b_values: CudaSlice<u8>,
    c_values: CudaSlice<u8>,
    has_output: bool,
    value_type: PhantomData<V>,
}

impl<'g, K: HostKey, V: MergeValue> MergeByKeyProblem<'g, K, V> {
    /// Checks the inputs (keys sorted ascending, or in `O` for [`new_in`](Self::new_in), and
    /// NaN-free, one value per key, a value size
    /// with kernels), uploads them and allocates the output; refuses, before allocating
    /// anything, a merge whose keys and values do not fit in the GPU's free memory
    /// ([`Error::OutOfMemory`], naming the largest `m + n` that would).
    pub fn new(gpu: &'g Gpu, a_keys: &[K], a_values: &[V], b_keys: &[K], b_values: &[V]) -> Result<Self> {
        Self::new_in::<Ascending>(gpu, a_keys, a_values, b_keys, b_values)
    }

    /// As [`new`](Self::new), for keys sorted in the key order `O` (built for the orders and
    /// key types of [`path::ordered_key_types`], at the default shape).
    pub fn new_in<O: KeyOrder<K>>(
        gpu: &'g Gpu,
        a_keys: &[K],
        a_values: &[V],
        b_keys: &[K],
        b_values: &[V],
    ) -> Result<Self> {
        check_values(("A", a_keys.len(), a_values), ("B", b_keys.len(), b_values), "a merge by key")?;
        let need = MergeNeed::by_key::<K>(a_keys.len(), b_keys.len(), size_of::<V>());
        let keys = MergeProblem::with_need::<O>(gpu, a_keys, b_keys, need)?;
        let (a_values, b_values) = (upload_values(gpu, a_values)?, upload_values(gpu, b_values)?);
        let c_values = gpu.alloc(keys.len().max(1) * size_of::<V>())?;
        Ok(Self { keys, a_values, b_values, c_values, has_output: false, value_type: PhantomData })
    }

    /// Keys (and values) in the output, `m + n`.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// Whether both inputs are empty.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// Bytes a merge by key must move at least: `m + n` keys and values read, and as many
    /// written. [`copy_ms`](Self::copy_ms) moves the same bytes.
    pub fn bytes_moved(&self) -> usize {
        2 * self.len() * (size_of::<K>() + size_of::<V>())
    }

    /// Runs the merge by key with the default shape for the key type ([`path::default_shape`])
    /// and returns its GPU time in milliseconds, partition included; see
    /// [`run_path`](Self::run_path).
    pub fn run(&mut self) -> Result<f64> {
        self.run_path(path::default_shape(K::NAME))
    }

    /// Runs merge path by key built with `shape` (one of [`shapes`] for this key type; others
    /// are an [`Error::BadArgument`]): the partition kernel, then the merge kernel, both inside
    /// one timing (CUDA events). Output keys and values are poisoned (all bytes `0xFF`) before,
    /// untimed, so anything the kernel fails to write shows in [`output`](Self::output).
    pub fn run_path(&mut self, shape: PathShape) -> Result<f64> {
        self.has_output = false;
        let gpu = self.keys.gpu();
        let order = self.keys.order();
        let merge = gpu.function(&entry_point_in(shape, K::NAME, order, size_of::<V>())?)?;
        let partition = PathPartition::new(gpu, K::NAME, order)?;
        let label = format!(
            "merge-path by key {} ({}-byte values) {}",
            K::NAME,
            size_of::<V>(),
            path::Describe(shape)
        );
        let plan = path::plan(shape, self.keys.m(), self.keys.n(), size_of::<K>(), 0)?;
        gpu.allow_shared_memory(&merge, plan.shared_mem_bytes, &label)?;
        gpu.poison(&mut self.c_values)?;
        let Some(config) = plan.launch_config() else {
            // An empty merge launches nothing.
            let ms = self.keys.time_launches(&label, |_, _| Ok(()))?;
            self.has_output = true;
            return Ok(ms);
        };
        let tiles = shape.tiles(self.len());
        let mut splits = self.keys.take_splits(splits_len(tiles))?;
        let tile_size = shape.tile_size() as u64;
        // The merge may start as the partition ends (see `MergeProblem::run_path`).
        let overlap = gpu.overlaps_dependent_launches();
        let (a_values, b_values, c_values) = (&self.a_values, &self.b_values, &mut self.c_values);
        let timed = self.keys.time_launches(&label, |stream, (a, m, b, n, c)| {
            partition.launch(stream, (a, m, b, n), tile_size, &mut splits, &label)?;
            let words = KernelArgs::new(stream)
                .read(a)
                .read(a_values)
                .count(*m)
                .read(b)
                .read(b_values)
                .count(*n)
                .write(c)
                .write(c_values)
                .read(&splits);
            // SAFETY: `merge_path_by_key_b<B>_i<I>_<t>_v<bytes>(a, a_values, m, b, b_values, n, c,
            // c_values, splits)`: the value buffers hold m, n and m + n values of `bytes` bytes
            // (the entry point's, `size_of::<V>()`), 256-byte aligned as CUDA allocates; the
            // partition above, on the same stream, wrote the splits of this tile size (when
            // overlapping it, the merge's blocks wait for it, `grid_dependency::wait` in
            // `block_tile`, before they read them); one block of B threads per tile, with the
            // shape's shared memory (opted in above past 48 KiB).
            unsafe { words.launch(&merge, config, LaunchAttributes::overlapping(overlap)) }
                .context(|| format!("launching the {label} merge"))
        });
        self.keys.put_splits(splits);
        let ms = timed?;
        self.has_output = true;
        Ok(ms)
    }

    /// GPU time in milliseconds of device-to-device copies of A's and B's keys and values into
    /// the output's: the bytes a merge by key moves, its ceiling. Leaves no merge result behind.
    pub fn copy_ms(&mut self) -> Result<f64> {
        self.has_output = false;
        let (m, n) = (self.keys.m() * size_of::<V>(), self.keys.n() * size_of::<V>());
        let gpu = self.keys.gpu();
        let (keys, a, b, c) = (&mut self.keys, &self.a_values, &self.b_values, &mut self.c_values);
        gpu.timer()?.time(|| {
            keys.enqueue_copy()?;
            enqueue_value_copies(gpu, (a, m), (b, n), c)
        })
    }

    /// The merged keys and their values, from the last [`run`](Self::run).
    pub fn output(&self) -> Result<(Vec<K>, Vec<V>)> {
        if !self.has_output {
            return Err(Error::BadArgument(
                "no merge by key has run on this problem since it was set up or copied".into(),
            ));
        }
        if self.is_empty() {
            return Ok((Vec::new(), Vec::new()));
        }
        let need = MergeNeed::by_key::<K>(self.keys.m(), self.keys.n(), size_of::<V>());
        preflight::check_download(need.host_bytes(1), "the merged keys and values")?;
        let keys = self.keys.output()?;
        // Straight into the values' own memory: one host copy of them, not two.
        let mut values = vec![V::zeroed(); self.len()];
        let bytes = self.c_values.slice(..self.len() * size_of::<V>());
        self.keys.gpu().download_into(&bytes, bytemuck::cast_slice_mut(&mut values))?;
        Ok((keys, values))
    }
}

/// Enqueues device-to-device copies of the first `m` bytes of `a` and `n` of `b` into `c`, one
/// after the other: the values' part of a copy ceiling.
pub(super) fn enqueue_value_copies(
    gpu: &Gpu,
    (a, m): (&CudaSlice<u8>, usize),
    (b, n): (&CudaSlice<u8>, usize),
    c: &mut CudaSlice<u8>,
) -> Result<()> {
    let stream = gpu.stream();
    if m > 0 {
        stream.memcpy_dtod(&a.slice(..m), &mut c.slice_mut(..m)).context(|| "copying A's values".into())?;
    }
    if n > 0 {
        stream
            .memcpy_dtod(&b.slice(..n), &mut c.slice_mut(m..m + n))
            .context(|| "copying B's values".into())?;
    }
    Ok(())
}

/// Merges sorted `a_keys` and `b_keys` on the GPU, each key's value (`a_values[i]` with
/// `a_keys[i]`, `b_values[j]` with `b_keys[j]`) travelling with it: checks the inputs, uploads
/// them, runs merge path by key once with the default shape for the key type, and downloads
/// the merged keys and values. Stable: on equal keys, A's key and value come first.
pub fn merge_by_key<K: HostKey, V: MergeValue>(
    gpu: &Gpu,
    a_keys: &[K],
    a_values: &[V],
    b_keys: &[K],
    b_values: &[V],
) -> Result<(Vec<K>, Vec<V>)> {
    merge_by_key_in::<K, V, Ascending>(gpu, a_keys, a_values, b_keys, b_values)
}

/// [`merge_by_key`] for keys sorted in the key order `O` (e.g.
/// [`Descending`](gpu_kernels::merge::Descending)).
pub fn merge_by_key_in<K: HostKey, V: MergeValue, O: KeyOrder<K>>(
    gpu: &Gpu,
    a_keys: &[K],
    a_values: &[V],
    b_keys: &[K],
    b_values: &[V],
) -> Result<(Vec<K>, Vec<V>)> {
    let mut problem = MergeByKeyProblem::new_in::<O>(gpu, a_keys, a_values, b_keys, b_values)?;
    problem.run()?;
    problem.output()
}

/// [`merge_by_key`] for `ndarray` vectors (any strides; non-contiguous views are copied first).
pub fn merge_by_key_arrays<K: HostKey, V: MergeValue>(
    gpu: &Gpu,
    a_keys: ArrayView1<K>,
    a_values: ArrayView1<V>,
    b_keys: ArrayView1<K>,
    b_values: ArrayView1<V>,
) -> Result<(Array1<K>, Array1<V>)> {
    let contiguous = |view: &ArrayView1<K>| view.as_standard_layout().to_vec();
    let (a_keys, b_keys) = (contiguous(&a_keys), contiguous(&b_keys));
    let (a_values, b_values) =
        (a_values.as_standard_layout().to_vec(), b_values.as_standard_layout().to_vec());
    let (keys, values) = merge_by_key(gpu, &a_keys, &a_values, &b_keys, &b_values)?;
    Ok((Array1::from_vec(keys), Array1::from_vec(values)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_key_type_has_its_default_shape_with_every_value_size() {
        use crate::merge::MergeVariant;
        for (dtype, _) in MergeVariant::KEY_TYPES {
            for bytes in VALUE_BYTES {
                let name = entry_point(path::default_shape(dtype), dtype, bytes).unwrap();
                assert!(
                    name.starts_with("merge_path_by_key_b256_i")
                        && name.ends_with(&format!("_{dtype}_v{bytes}"))
                );
            }
        }
        assert_eq!(
            entry_point(path::default_shape("f64"), "f64", 8).unwrap(),
            "merge_path_by_key_b256_i11_f64_v8"
        );
        for dtype in MergeVariant::SWEEP_KEY_TYPES {
            assert!(shapes(dtype).len() > 1, "{dtype}: a sweep");
        }
    }

    #[test]
    fn shapes_and_value_sizes_not_built_are_bad_arguments_naming_the_built_ones() {
        let err = entry_point(PathShape::new(64, 3), "u32", 4).unwrap_err();
        assert!(matches!(err, Error::BadArgument(_)));
        assert!(err.to_string().contains("no merge-by-key kernel 64x3 is built for u32 keys"), "{err}");
        assert!(err.to_string().contains("256x21"), "{err}");
        assert!(entry_point(path::default_shape("i32"), "i32", 12).is_err());
        assert!(entry_point(path::default_shape("i32").pipelined(), "i32", 4).is_err());
        assert_eq!(
            entry_point_in(path::default_shape("u32"), "u32", "upper16", 16).unwrap(),
            "merge_path_upper16_by_key_b256_i21_u32_v16"
        );
        assert_eq!(
            entry_point_in(path::default_shape("f64"), "f64", "desc", 8).unwrap(),
            "merge_path_desc_by_key_b256_i11_f64_v8"
        );
        assert!(entry_point_in(path::default_shape("f64"), "f64", "upper16", 8).is_err());
    }

    #[test]
    fn only_values_of_4_8_or_16_bytes_travel() {
        check_value_size::<u32>().unwrap();
        check_value_size::<Record8>().unwrap();
        check_value_size::<Record16>().unwrap();
        check_value_size::<[u32; 4]>().unwrap();
        for err in [check_value_size::<u16>().unwrap_err(), check_value_size::<[u32; 3]>().unwrap_err()] {
            assert!(matches!(err, Error::BadArgument(_)));
            assert!(err.to_string().contains("move values of 4, 8 or 16 bytes"), "{err}");
        }
        assert_eq!((size_of::<Record8>(), size_of::<Record16>()), (8, 16));
    }

    #[test]
    fn generated_values_name_their_source_and_differences_are_bitwise() {
        let a: Vec<u32> = source_values(false, 3);
        let b: Vec<u32> = source_values(true, 2);
        assert_eq!((a, b), (vec![0, 1, 2], vec![1 << 31, (1 << 31) + 1]));
        let (x, y) = (f32::of_source(true, 5), f32::of_source(false, 5));
        assert_ne!(x.to_bits(), y.to_bits());
        // -0.0 and +0.0 are equal floats but different values here; so are NaNs with payloads.
        assert_eq!(first_value_difference(&[1.0f64, -0.0], &[1.0, 0.0]), Some(1));
        assert_eq!(first_value_difference(&[f32::NAN], &[f32::NAN]), None);
        assert_eq!(first_value_difference(&[Record8::default()], &[]), Some(0));
        assert_eq!(first_value_difference::<Record16>(&[], &[]), None);
    }
}
