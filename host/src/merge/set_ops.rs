//! Set operations on the GPU (thrust's `set_union`, `set_intersection`, `set_difference`,
//! `set_symmetric_difference`), with the multiset semantics of C++'s `std::set_*`: for a key
//! found `m` times in A and `n` times in B, union keeps `max(m, n)` copies, intersection
//! `min(m, n)`, difference `max(m − n, 0)`, symmetric difference `|m − n|`; which copies is
//! [`SetOperation`]'s and [`family_reference::set_sources`](super::family_reference::set_sources)'s
//! definition. Inputs sorted ascending and NaN-free (checked), any of the five key types.
//!
//! Two launches (`gpu_kernels::merge::set_operation`): a partition kernel finds the balanced
//! split of every tile start and clears the tiles' status words; then one block per tile walks
//! its tile, counts its outputs, learns where they start by decoupled look-back on the tiles
//! before it, and writes them. The inputs are read once, the outputs written once; the count
//! of outputs comes back with one 8-byte read (the last tile's status word).
//!
//! ```no_run
//! use host::{Gpu, merge::{self, SetOperation}};
//! let gpu = Gpu::new(0)?;
//! let both = merge::set_operation(&gpu, SetOperation::Intersection, &[1, 2, 2, 5], &[2, 2, 2, 3, 5])?;
//! assert_eq!(both, [2, 2, 5]);
//! # Ok::<(), host::Error>(())
//! ```

use std::marker::PhantomData;

use cudarc::driver::{CudaSlice, LaunchConfig, PushKernelArg};
use gpu_kernels::merge::lookback::inclusive_prefix;
use gpu_kernels::merge::tiles::{MAX_SHARED_BYTES, PathShape, SetLayout, set_shape};
use gpu_kernels::merge::{
    SET_SHAPES_F32, SET_SHAPES_F64, SET_SHAPES_I32, SET_SHAPES_I64, SET_SHAPES_U32, set_splits_len,
};
use ndarray::{Array1, ArrayView1};

use super::by_key::{MergeValue, VALUE_BYTES, check_values, upload_values};
use super::path::{self, Describe};
use super::variant::{MAX_GRID_X, total};
use super::{HostKey, MergeProblem, MergeVariant};
use crate::error::CudaContext as _;
use crate::preflight::MergeNeed;
use crate::{Error, Gpu, Result};

pub use gpu_kernels::merge::SetOperation;

/// The operations' names on the command line and in entry points (`set_<name>_…`).
pub const OPERATIONS: [(SetOperation, &str); 4] = [
    (SetOperation::Union, "union"),
    (SetOperation::Intersection, "intersection"),
    (SetOperation::Difference, "difference"),
    (SetOperation::SymmetricDifference, "symmetric_difference"),
];

/// `operation`'s name (`union`, `intersection`, `difference`, `symmetric_difference`).
pub fn name(operation: SetOperation) -> &'static str {
    OPERATIONS.iter().find(|(op, _)| *op == operation).map_or("union", |&(_, name)| name)
}

/// The most outputs `operation` can have for `m + n` keys: what its output buffer must hold.
pub fn output_bound(operation: SetOperation, m: usize, n: usize) -> usize {
    match operation {
        SetOperation::Union | SetOperation::SymmetricDifference => m + n,
        SetOperation::Intersection => m.min(n),
        SetOperation::Difference => m,
    }
}

/// Every set-operation shape built for `dtype` (none for an unknown type): the default for its
/// key size, and for `i32` and `f64` the benchmarks' sweep.
pub fn shapes(dtype: &str) -> &'static [PathShape] {
    match dtype {
        "i32" => SET_SHAPES_I32,
        "u32" => SET_SHAPES_U32,
        "i64" => SET_SHAPES_I64,
        "f32" => SET_SHAPES_F32,
        "f64" => SET_SHAPES_F64,
        _ => &[],
    }
}

/// The default shape for `K` ([`set_shape`] of its size).
pub fn default_shape<K: HostKey>() -> PathShape {
    set_shape(size_of::<K>())
}

/// The kernel of `operation` at `shape` for `dtype` keys, if built.
pub fn entry_point(operation: SetOperation, shape: PathShape, dtype: &str) -> Result<String> {
    if !shapes(dtype).contains(&shape) {
        let built: Vec<String> = shapes(dtype).iter().map(|&s| Describe(s).to_string()).collect();
        return Err(Error::BadArgument(format!(
            "no set-operation kernel {} is built for {dtype} keys; the built ones are {}",
            Describe(shape),
            built.join(", ")
        )));
    }
    let PathShape { block_threads, items, .. } = shape;
    Ok(format!("set_{}_b{block_threads}_i{items}_{dtype}", name(operation)))
}

/// The partition kernel for `dtype`.
pub fn partition_entry_point(dtype: &str) -> String {
    format!("set_partition_{dtype}")
}

/// How the set kernel of `shape` (keys alone or by key) is launched for `m + n` keys of
/// `key_bytes` bytes: one block per tile of `shape.tile_size()` input keys (a tile may take one
/// key more, see `gpu_kernels::merge::balanced_split`), with its [`SetLayout`]'s shared memory;
/// `None` when both inputs are empty.
pub fn launch_config(shape: PathShape, m: usize, n: usize, key_bytes: usize) -> Result<Option<LaunchConfig>> {
    path::check(shape, key_bytes)?;
    let shared = SetLayout::new(shape, key_bytes).bytes();
    if shared > MAX_SHARED_BYTES {
        return Err(Error::BadArgument(format!(
            "the set-operation shape {} needs {shared} bytes of shared memory per block, over the {MAX_SHARED_BYTES} the kernels may use",
            Describe(shape)
        )));
    }
    let tiles = shape.tiles(total(m, n)?);
    if tiles >= MAX_GRID_X {
        return Err(Error::BadShape(format!(
            "the set operation on {m} + {n} keys would need {tiles} blocks, over CUDA's limit of {MAX_GRID_X}"
        )));
    }
    Ok((tiles > 0).then_some(LaunchConfig {
        grid_dim: (tiles as u32, 1, 1),
        block_dim: (shape.block_threads as u32, 1, 1),
        shared_mem_bytes: shared as u32,
    }))
}

/// A set operation on the GPU: A and B uploaded once (checked sorted and NaN-free), an output
/// buffer of `m + n` keys (enough for every operation), and the partition's splits (in the
/// merge problem's array) and the tiles' status words, kept between runs.
pub struct SetProblem<'g, K: HostKey> {
    keys: MergeProblem<'g, K>,
    status: Option<CudaSlice<u64>>,
    /// Outputs of the last run, once it has completed.
    outputs: Option<usize>,
}

impl<'g, K: HostKey> SetProblem<'g, K> {
    /// Checks that `a` and `b` are sorted ascending and NaN-free, uploads them and allocates the
    /// output; refuses, before allocating anything, inputs whose buffers do not fit in the GPU's
    /// free memory ([`Error::OutOfMemory`], naming the largest `m + n` that would).
    pub fn new(gpu: &'g Gpu, a: &[K], b: &[K]) -> Result<Self> {
        Self::with_need(gpu, a, b, MergeNeed::set_operation::<K>(a.len(), b.len()))
    }

    /// As [`new`](Self::new), refusing a `need` (keys, and values by key) the GPU cannot hold.
    fn with_need(gpu: &'g Gpu, a: &[K], b: &[K], need: MergeNeed) -> Result<Self> {
        let keys = MergeProblem::with_need::<gpu_kernels::merge::Ascending>(gpu, a, b, need)?;
        Ok(Self { keys, status: None, outputs: None })
    }

    /// Keys in A.
    pub fn m(&self) -> usize {
        self.keys.m()
    }

    /// Keys in B.
    pub fn n(&self) -> usize {
        self.keys.n()
    }

    /// Outputs of the last run (`None` before one has completed).
    pub fn outputs(&self) -> Option<usize> {
        self.outputs
    }

    /// Bytes the last run moved at least: `m + n` keys read, its outputs written.
    pub fn bytes_moved(&self) -> Option<usize> {
        self.outputs.map(|outputs| (self.keys.len() + outputs) * size_of::<K>())
    }

    /// GPU time in milliseconds of device-to-device copies of A and B into the output (`m + n`
    /// keys read and written: the ceiling of a union without common keys). Leaves no result.
    pub fn copy_ms(&mut self) -> Result<f64> {
        self.outputs = None;
        self.keys.copy_ms()
    }

    /// Bytes [`copy_ms`](Self::copy_ms) moves.
    pub fn copy_bytes(&self) -> usize {
        self.keys.bytes_moved()
    }

    /// Runs `operation` with the default shape for the key type; see [`run_shape`](Self::run_shape).
    pub fn run(&mut self, operation: SetOperation) -> Result<f64> {
        self.run_shape(operation, default_shape::<K>())
    }

    /// Runs `operation` built with `shape` (one of [`shapes`] for this key type; others are an
    /// [`Error::BadArgument`]): the partition kernel, then the set kernel, both inside one timing
    /// (CUDA events), then reads the count of outputs (untimed). The output is poisoned before,
    /// untimed, so a key the kernel fails to write shows in [`output`](Self::output).
    pub fn run_shape(&mut self, operation: SetOperation, shape: PathShape) -> Result<f64> {
        self.run_with(operation, shape, None)
    }

    /// [`run_shape`](Self::run_shape), by key when `values` are given: A's, B's and the output's
    /// value buffers, and the values' size (the by-key kernel at the default shape).
    fn run_with(
        &mut self,
        operation: SetOperation,
        shape: PathShape,
        values: Option<ValueBuffers<'_>>,
    ) -> Result<f64> {
        self.outputs = None;
        let gpu = self.keys.gpu();
        let entry = match &values {
            Some(values) => by_key_entry_point(operation, shape, K::NAME, values.bytes)?,
            None => entry_point(operation, shape, K::NAME)?,
        };
        let set = gpu.function(&entry)?;
        let partition = gpu.function(&partition_entry_point(K::NAME))?;
        let by_key =
            values.as_ref().map(|v| format!(" by key ({}-byte values)", v.bytes)).unwrap_or_default();
        let label = format!("set {}{by_key} {} {}", name(operation), K::NAME, Describe(shape));
        let Some(config) = launch_config(shape, self.m(), self.n(), size_of::<K>())? else {
            // Empty inputs launch nothing and have no outputs.
            let ms = self.keys.time_launches(&label, |_, _| Ok(()))?;
            self.outputs = Some(0);
            return Ok(ms);
        };
        gpu.allow_shared_memory(&set, config.shared_mem_bytes as usize, &label)?;
        let tiles = config.grid_dim.0 as usize;
        // Merge path's array, grown.
        let mut splits = self.keys.take_splits(set_splits_len(tiles))?;
        let mut status = take_at_least(gpu, &mut self.status, tiles)?;
        let tile_size = shape.tile_size() as u64;
        let mut values = values;
        if let Some(values) = &mut values {
            gpu.poison(values.c)?;
        }
        let timed = self.keys.time_launches(&label, |stream, (a, m, b, n, c)| {
            let mut launch = stream.launch_builder(&partition);
            launch.arg(a).arg(m).arg(b).arg(n).arg(&tile_size).arg(&mut splits).arg(&mut status);
            // SAFETY: `set_partition_<t>(a, m, b, n, tile_size, splits, status)`: A and B hold m
            // and n sorted, NaN-free keys (checked at set-up); `splits` holds `set_splits_len(tiles)`
            // entries and `status` tiles; tiles + 1 threads or more.
            unsafe { launch.launch(path::partition_config(tiles)) }
                .map(drop)
                .context(|| format!("launching the {label} partition"))?;
            let mut launch = stream.launch_builder(&set);
            match values {
                Some(ValueBuffers { a: a_values, b: b_values, c: c_values, .. }) => {
                    launch.arg(a).arg(a_values).arg(m).arg(b).arg(b_values).arg(n).arg(c).arg(c_values)
                }
                None => launch.arg(a).arg(m).arg(b).arg(n).arg(c),
            };
            launch.arg(&splits).arg(&mut status);
            // SAFETY: `set_<op>[_by_key]_b<B>_i<I>_<t>[_v<bytes>](a, [a_values,] m, b, [b_values,] n,
            // c, [c_values,] splits, status)`: the partition above, on the same stream, wrote the
            // splits of this tile size and cleared the status words; `c` (and `c_values`) hold
            // m + n elements, the most any operation outputs, values of the entry point's size;
            // one block of B threads per tile with its layout's shared memory (opted in above).
            unsafe { launch.launch(config) }.map(drop).context(|| format!("launching the {label} kernel"))
        });
        let last = read_word(gpu, &status, tiles - 1);
        self.keys.put_splits(splits);
        self.status = Some(status);
        let ms = timed?;
        let total = last?;
        let outputs = inclusive_prefix(total).ok_or_else(|| {
            Error::BadArgument(format!(
                "the {label} kernel finished without its last tile's count ({total:#x})"
            ))
        })? as usize;
        if outputs > output_bound(operation, self.m(), self.n()) {
            return Err(Error::BadArgument(format!(
                "the {label} kernel counted {outputs} outputs, more than {} + {} keys can give",
                self.m(),
                self.n()
            )));
        }
        self.outputs = Some(outputs);
        Ok(ms)
    }

    /// The output keys of the last [`run`](Self::run).
    pub fn output(&self) -> Result<Vec<K>> {
        let Some(outputs) = self.outputs else {
            return Err(Error::BadArgument(
                "no set operation has run on this problem since it was set up or copied".into(),
            ));
        };
        self.keys.output_first(outputs)
    }
}

/// The value buffers of a set operation by key, as their bytes, and the values' size.
struct ValueBuffers<'v> {
    a: &'v CudaSlice<u8>,
    b: &'v CudaSlice<u8>,
    c: &'v mut CudaSlice<u8>,
    bytes: usize,
}

/// The by-key kernel of `operation` at `shape` (the key type's by-key shape,
/// [`set_shape`]: the only one built by key) for `dtype` keys and values of `value_bytes`.
pub fn by_key_entry_point(
    operation: SetOperation,
    shape: PathShape,
    dtype: &str,
    value_bytes: usize,
) -> Result<String> {
    let key_bytes = MergeVariant::KEY_TYPES.iter().find(|(name, _)| *name == dtype).map(|&(_, bytes)| bytes);
    let default = key_bytes.map(set_shape);
    if Some(shape) != default || !VALUE_BYTES.contains(&value_bytes) {
        return Err(Error::BadArgument(format!(
            "no set-operation-by-key kernel {} is built for {dtype} keys with {value_bytes}-byte values; they are built at each key type's default shape ({}) with values of {VALUE_BYTES:?} bytes",
            Describe(shape),
            default.map_or("none".into(), |s| Describe(s).to_string())
        )));
    }
    let PathShape { block_threads, items, .. } = shape;
    Ok(format!("set_{}_by_key_b{block_threads}_i{items}_{dtype}_v{value_bytes}", name(operation)))
}

/// A set operation by key on the GPU (thrust's `set_*_by_key`): sorted keys, each with a value
/// that travels with it; every output key brings the value of the element it is (A's, or B's
/// where the operation outputs B's copy). Values are any [`MergeValue`] of 4, 8 or 16 bytes,
/// moved as bytes.
pub struct SetByKeyProblem<'g, K: HostKey, V: MergeValue> {
    keys: SetProblem<'g, K>,
    // Each holds at least one value's bytes (CUDA allocates no empty buffers).
    a_values: CudaSlice<u8>,
    b_values: CudaSlice<u8>,
    c_values: CudaSlice<u8>,
    value_type: PhantomData<V>,
}

impl<'g, K: HostKey, V: MergeValue> SetByKeyProblem<'g, K, V> {
    /// Checks the inputs (keys sorted ascending and NaN-free, one value per key, a value size
    /// with kernels), uploads them and allocates the outputs; refuses, before allocating
    /// anything, inputs that do not fit in the GPU's free memory ([`Error::OutOfMemory`]).
    pub fn new(gpu: &'g Gpu, a_keys: &[K], a_values: &[V], b_keys: &[K], b_values: &[V]) -> Result<Self> {
        check_values(("A", a_keys.len(), a_values), ("B", b_keys.len(), b_values), "a set operation by key")?;
        let need = MergeNeed {
            value_bytes: size_of::<V>() as u64,
            ..MergeNeed::set_operation::<K>(a_keys.len(), b_keys.len())
        };
        let keys = SetProblem::with_need(gpu, a_keys, b_keys, need)?;
        let (a_values, b_values) = (upload_values(gpu, a_values)?, upload_values(gpu, b_values)?);
        let c_values = gpu.alloc((a_keys.len() + b_keys.len()).max(1) * size_of::<V>())?;
        Ok(Self { keys, a_values, b_values, c_values, value_type: PhantomData })
    }

    /// Outputs of the last run (`None` before one has completed).
    pub fn outputs(&self) -> Option<usize> {
        self.keys.outputs()
    }

    /// GPU time in milliseconds of device-to-device copies of A's and B's keys and values into
    /// the outputs' (the ceiling of a union without common keys). Leaves no result.
    pub fn copy_ms(&mut self) -> Result<f64> {
        self.keys.outputs = None;
        let (m, n) = (self.keys.m() * size_of::<V>(), self.keys.n() * size_of::<V>());
        let gpu = self.keys.keys.gpu();
        let (keys, a, b, c) = (&mut self.keys.keys, &self.a_values, &self.b_values, &mut self.c_values);
        gpu.timer()?.time(|| {
            keys.enqueue_copy()?;
            super::by_key::enqueue_value_copies(gpu, (a, m), (b, n), c)
        })
    }

    /// Runs `operation` by key at the key type's default shape ([`set_shape`]): the
    /// partition and the by-key kernel inside one timing (CUDA events); output keys and values
    /// are poisoned before.
    pub fn run(&mut self, operation: SetOperation) -> Result<f64> {
        let values = ValueBuffers {
            a: &self.a_values,
            b: &self.b_values,
            c: &mut self.c_values,
            bytes: size_of::<V>(),
        };
        self.keys.run_with(operation, set_shape(size_of::<K>()), Some(values))
    }

    /// The output keys and their values, from the last [`run`](Self::run).
    pub fn output(&self) -> Result<(Vec<K>, Vec<V>)> {
        let keys = self.keys.output()?;
        let mut values = vec![V::zeroed(); keys.len()];
        if !keys.is_empty() {
            let bytes = self.c_values.slice(..keys.len() * size_of::<V>());
            self.keys.keys.gpu().download_into(&bytes, bytemuck::cast_slice_mut(&mut values))?;
        }
        Ok((keys, values))
    }
}

/// `operation` by key on sorted `a_keys` and `b_keys` on the GPU, each key's value travelling with
/// it: checks, uploads, runs once at the default shape and downloads the outputs' keys and values.
pub fn set_operation_by_key<K: HostKey, V: MergeValue>(
    gpu: &Gpu,
    operation: SetOperation,
    (a_keys, a_values): (&[K], &[V]),
    (b_keys, b_values): (&[K], &[V]),
) -> Result<(Vec<K>, Vec<V>)> {
    let mut problem = SetByKeyProblem::new(gpu, a_keys, a_values, b_keys, b_values)?;
    problem.run(operation)?;
    problem.output()
}

/// The buffer in `slot` if it holds at least `len` words, else a new one (`slot` is emptied;
/// put the buffer back after the run).
fn take_at_least(gpu: &Gpu, slot: &mut Option<CudaSlice<u64>>, len: usize) -> Result<CudaSlice<u64>> {
    match slot.take() {
        Some(buffer) if buffer.len() >= len => Ok(buffer),
        _ => gpu.alloc::<u64>(len.max(1)),
    }
}

/// Word `index` of `buffer`, after the stream's work.
fn read_word(gpu: &Gpu, buffer: &CudaSlice<u64>, index: usize) -> Result<u64> {
    let mut word = [0u64];
    gpu.download_into(&buffer.slice(index..index + 1), &mut word)?;
    Ok(word[0])
}

/// `operation` on sorted `a` and `b` on the GPU: checks the inputs, uploads them, runs the
/// default shape for the key type once and downloads the outputs.
pub fn set_operation<K: HostKey>(gpu: &Gpu, operation: SetOperation, a: &[K], b: &[K]) -> Result<Vec<K>> {
    let mut problem = SetProblem::new(gpu, a, b)?;
    problem.run(operation)?;
    problem.output()
}

/// [`set_operation`] for `ndarray` vectors (any strides; non-contiguous views are copied first).
pub fn set_operation_arrays<K: HostKey>(
    gpu: &Gpu,
    operation: SetOperation,
    a: ArrayView1<K>,
    b: ArrayView1<K>,
) -> Result<Array1<K>> {
    let (a, b) = (a.as_standard_layout().to_vec(), b.as_standard_layout().to_vec());
    set_operation(gpu, operation, &a, &b).map(Array1::from_vec)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_key_type_has_every_operation_at_its_default_shape() {
        use crate::merge::MergeVariant;
        for (dtype, bytes) in MergeVariant::KEY_TYPES {
            for (operation, op_name) in OPERATIONS {
                let entry = entry_point(operation, set_shape(bytes), dtype).unwrap();
                assert!(entry.starts_with(&format!("set_{op_name}_b")) && entry.ends_with(dtype), "{entry}");
            }
        }
        assert_eq!(
            entry_point(SetOperation::SymmetricDifference, set_shape(8), "f64").unwrap(),
            format!("set_symmetric_difference_b{}_i{}_f64", set_shape(8).block_threads, set_shape(8).items)
        );
        assert_eq!(partition_entry_point("u32"), "set_partition_u32");
        assert_eq!(
            by_key_entry_point(SetOperation::Union, set_shape(4), "i32", 16).unwrap(),
            format!("set_union_by_key_b{}_i{}_i32_v16", set_shape(4).block_threads, set_shape(4).items)
        );
        let swept = shapes("i32").iter().find(|&&s| s != set_shape(4)).copied().unwrap();
        assert!(
            by_key_entry_point(SetOperation::Union, swept, "i32", 4).is_err(),
            "by key at the default shape only"
        );
        assert!(by_key_entry_point(SetOperation::Union, set_shape(8), "f64", 12).is_err());
        for dtype in MergeVariant::SWEEP_KEY_TYPES {
            assert!(shapes(dtype).len() > 1, "{dtype}: a sweep");
        }
        let err = entry_point(SetOperation::Union, PathShape::new(64, 3), "i32").unwrap_err();
        assert!(matches!(err, Error::BadArgument(_)));
        assert!(err.to_string().contains("no set-operation kernel 64x3 is built for i32 keys"), "{err}");
    }

    #[test]
    fn launches_have_a_block_per_tile_and_bounds_fit_every_operation() {
        let shape = set_shape(4);
        let config = launch_config(shape, 1 << 27, 1 << 27, 4).unwrap().unwrap();
        assert_eq!(config.grid_dim.0 as usize, (1usize << 28).div_ceil(shape.tile_size()));
        assert_eq!(config.shared_mem_bytes as usize, SetLayout::new(shape, 4).bytes());
        assert!(launch_config(shape, 0, 0, 4).unwrap().is_none());
        assert!(launch_config(shape, usize::MAX, 1, 4).is_err());
        assert!(matches!(launch_config(PathShape::new(1024, 31), 1, 1, 8), Err(Error::BadArgument(_))));
        assert_eq!(output_bound(SetOperation::Union, 3, 5), 8);
        assert_eq!(output_bound(SetOperation::Intersection, 3, 5), 3);
        assert_eq!(output_bound(SetOperation::Difference, 3, 5), 3);
        assert_eq!(output_bound(SetOperation::SymmetricDifference, 3, 5), 8);
        assert_eq!(OPERATIONS.map(|(op, _)| op), SetOperation::ALL);
    }
}
