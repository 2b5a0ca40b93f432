//! A merge on the GPU: A and B uploaded once, an output buffer, and timed launches of any
//! variant at any coarsening factor (the book's) or shape (merge path) it is built with, or of
//! any kernel with the book's signature (for benchmarks and the CLI).

use cudarc::driver::{CudaFunction, CudaSlice, CudaStream, LaunchConfig, PushKernelArg};
use gpu_kernels::merge::tiles::PathShape;
use gpu_kernels::merge::{Ascending, KeyOrder, partition_samples, splits_len};

use super::validate::check_sorted_in;
use super::{HostKey, MergePlan, MergeVariant, path};
use crate::error::CudaContext as _;
use crate::gpu::{KernelArgs, LaunchAttributes};
use crate::preflight::{self, MergeNeed};
use crate::{Error, Gpu, Result};

/// The arguments every merge kernel starts with: `(a, m, b, n, c)`.
type LaunchArgs<'p, K> = (&'p CudaSlice<K>, &'p u64, &'p CudaSlice<K>, &'p u64, &'p mut CudaSlice<K>);

/// Device buffers for one merge: the inputs A (`m` keys) and B (`n` keys), checked sorted and
/// NaN-free, and the output C (`m + n` keys).
pub struct MergeProblem<'g, K: HostKey> {
    gpu: &'g Gpu,
    m: usize,
    n: usize,
    // Device buffers hold at least one key (CUDA allocates no empty buffers); only the first
    // `m`, `n` and `m + n` are used.
    a: CudaSlice<K>,
    b: CudaSlice<K>,
    c: CudaSlice<K>,
    /// Merge path's co-ranks of every tile start, grown to the largest tile count run so far.
    splits: Option<CudaSlice<u64>>,
    /// The key order A and B are sorted in (`KeyOrder::NAME`: `asc`, `desc`, `upper16`).
    order: &'static str,
    /// Whether `c` holds the result of a completed run.
    has_output: bool,
}

impl<'g, K: HostKey> MergeProblem<'g, K> {
    /// Checks that `a` and `b` are sorted ascending and NaN-free (one `O(m + n)` pass on the
    /// host, in parallel; see [`check_sorted`](super::check_sorted)), uploads them and allocates the output.
    ///
    /// Fails with [`Error::Unsorted`] or [`Error::NanKey`] naming the array and the first bad
    /// index, or, before allocating anything, with [`Error::OutOfMemory`] when the GPU's free
    /// memory cannot hold `2 (m + n)` keys (and merge path's partition array); the message
    /// names the largest `m + n` that would fit.
    pub fn new(gpu: &'g Gpu, a: &[K], b: &[K]) -> Result<Self> {
        Self::with_need::<Ascending>(gpu, a, b, MergeNeed::of::<K>(a.len(), b.len()))
    }

    /// As [`new`](Self::new), for inputs sorted in the key order `O` (e.g.
    /// [`Descending`](gpu_kernels::merge::Descending)): only merge path runs them, and only
    /// where it is built for `O` ([`path::ordered_key_types`]).
    pub fn new_in<O: KeyOrder<K>>(gpu: &'g Gpu, a: &[K], b: &[K]) -> Result<Self> {
        Self::with_need::<O>(gpu, a, b, MergeNeed::of::<K>(a.len(), b.len()))
    }

    /// As [`new_in`](Self::new_in), refusing before it allocates anything a merge whose `need`
    /// (the keys', and any values' that travel with them) does not fit in the GPU's free memory.
    pub(super) fn with_need<O: KeyOrder<K>>(gpu: &'g Gpu, a: &[K], b: &[K], need: MergeNeed) -> Result<Self> {
        check_sorted_in::<K, O>("A", a)?;
        check_sorted_in::<K, O>("B", b)?;
        let (m, n) = (a.len(), b.len());
        need.check_device(preflight::device_free(gpu)?)?;
        let total = m.checked_add(n).ok_or_else(|| Error::BadShape(format!("{m} + {n} keys overflow")))?;
        let upload = |keys: &[K]| if keys.is_empty() { gpu.alloc(1) } else { gpu.upload(keys) };
        let (a, b) = (upload(a)?, upload(b)?);
        let c = gpu.alloc(total.max(1))?;
        Ok(Self { gpu, m, n, a, b, c, splits: None, order: O::NAME, has_output: false })
    }

    /// The key order the inputs are sorted in (`KeyOrder::NAME`).
    pub fn order(&self) -> &'static str {
        self.order
    }

    /// Refuses the book's kernels (and any kernel but merge path's) on inputs sorted in another
    /// order than ascending.
    fn check_ascending(&self, what: &str) -> Result<()> {
        if self.order == "asc" {
            return Ok(());
        }
        Err(Error::BadArgument(format!(
            "{what} merges ascending keys only; these are sorted in the order {}: run merge path",
            self.order
        )))
    }

    /// Keys in A.
    pub fn m(&self) -> usize {
        self.m
    }

    /// Keys in B.
    pub fn n(&self) -> usize {
        self.n
    }

    /// Keys in the output, `m + n`.
    pub fn len(&self) -> usize {
        self.m + self.n
    }

    /// Whether both inputs are empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes a merge must move at least: `m + n` keys read and `m + n` written. Divide by a
    /// run's time for its throughput; [`copy_ms`](Self::copy_ms) moves the same bytes.
    pub fn bytes_moved(&self) -> usize {
        2 * self.len() * size_of::<K>()
    }

    /// How `variant` is launched for this problem.
    pub fn plan(&self, variant: MergeVariant) -> Result<MergePlan> {
        match variant {
            MergeVariant::Path => path::plan(self.path_shape(), self.m, self.n, size_of::<K>(), 0),
            _ => variant.plan(self.m, self.n, size_of::<K>()),
        }
    }

    /// The shape [`run`](Self::run) launches merge path with on this problem
    /// ([`path::default_shape_for`]: its key type's default, or the lopsided one).
    pub fn path_shape(&self) -> PathShape {
        path::default_shape_for(K::NAME, self.m, self.n, self.order)
    }

    /// How `variant` built with `factor` outputs per thread is launched for this problem.
    pub fn plan_with_coarsening(&self, variant: MergeVariant, factor: usize) -> Result<MergePlan> {
        variant.plan_with_coarsening(self.m, self.n, size_of::<K>(), factor)
    }

    /// Runs `variant` once and returns its GPU time in milliseconds (CUDA events around the
    /// launch alone). The output is poisoned (all bytes `0xFF`) before, untimed, so a key the
    /// kernel fails to write shows in [`output`](Self::output).
    ///
    /// Merge path runs with its default shape for this problem ([`path_shape`](Self::path_shape)),
    /// and its time includes the partition kernel's.
    pub fn run(&mut self, variant: MergeVariant) -> Result<f64> {
        match variant {
            MergeVariant::Path => self.run_path(self.path_shape()),
            _ => self.run_with_coarsening(variant, variant.default_coarsening()),
        }
    }

    /// Runs merge path built with `shape` (one of [`path::shapes`] for this key type; others
    /// are an [`Error::BadArgument`]): the partition kernel, then the merge kernel, both inside
    /// one timing (CUDA events). The output is poisoned before, untimed, as in [`run`](Self::run).
    pub fn run_path(&mut self, shape: PathShape) -> Result<f64> {
        let merge = self.gpu.function(&path::entry_point_in(shape, K::NAME, self.order)?)?;
        let partition = PathPartition::new(self.gpu, K::NAME, self.order)?;
        let label = format!("merge-path {} {}", K::NAME, path::Describe(shape));
        // The plan checks the shape first; a pipelined one then launches the blocks that fit on
        // the GPU at once (which the occupancy calculator tells once the shared memory is set).
        let plan = path::plan(shape, self.m, self.n, size_of::<K>(), 0)?;
        self.gpu.allow_shared_memory(&merge, plan.shared_mem_bytes, &label)?;
        let plan = if shape.pipelined {
            let resident_blocks =
                self.gpu.resident_blocks(&merge, shape.block_threads as u32, plan.shared_mem_bytes)?;
            path::plan(shape, self.m, self.n, size_of::<K>(), resident_blocks)?
        } else {
            plan
        };
        let Some(config) = plan.launch_config() else {
            // An empty merge launches nothing.
            return self.time_launches(&label, |_, _| Ok(()));
        };
        let tiles = shape.tiles(self.m + self.n);
        let mut splits = self.take_splits(splits_len(tiles))?;
        let tile_size = shape.tile_size() as u64;
        // The merge may start as the partition ends (a pipelined block reads splits as it goes,
        // without the wait).
        let overlap = self.gpu.overlaps_dependent_launches() && !shape.pipelined;
        let timed = self.time_launches(&label, |stream, (a, m, b, n, c)| {
            partition.launch(stream, (a, m, b, n), tile_size, &mut splits, &label)?;
            let words = KernelArgs::new(stream).read(a).count(*m).read(b).count(*n).write(c).read(&splits);
            // SAFETY: `merge_path_[pipelined_]b<B>_i<I>_<t>(a, m, b, n, c, splits)`: the
            // partition above, on the same stream, wrote the splits of this tile size (when
            // overlapping it, the merge's blocks wait for it, `grid_dependency::wait` in
            // `block_tile`, before they read them); blocks of B threads, one per tile (or,
            // pipelined, no more than the tiles), with the shape's shared memory (opted in above
            // past 48 KiB).
            unsafe { words.launch(&merge, config, LaunchAttributes::overlapping(overlap)) }
                .context(|| format!("launching the {label} merge"))
        });
        self.put_splits(splits);
        timed
    }

    /// Merge path's array of co-ranks (and what else a partition writes there: merge path's
    /// samples, `gpu_kernels::merge::splits_len`), with at least `len` 64-bit entries (grown if
    /// an earlier run needed fewer); give it back with [`put_splits`](Self::put_splits) after
    /// the run.
    pub(super) fn take_splits(&mut self, len: usize) -> Result<CudaSlice<u64>> {
        match self.splits.take() {
            Some(splits) if splits.len() >= len => Ok(splits),
            _ => self.gpu.alloc::<u64>(len),
        }
    }

    /// Keeps `splits` for the next run.
    pub(super) fn put_splits(&mut self, splits: CudaSlice<u64>) {
        self.splits = Some(splits);
    }

    /// The GPU this problem's buffers live on.
    pub(super) fn gpu(&self) -> &'g Gpu {
        self.gpu
    }

    /// As [`run`](Self::run), with the entry point built with `factor` outputs per thread (one
    /// of [`MergeVariant::coarsenings`] for this key type; others are an
    /// [`Error::BadArgument`]), launched as [`MergeVariant::plan_with_coarsening`] says.
    pub fn run_with_coarsening(&mut self, variant: MergeVariant, factor: usize) -> Result<f64> {
        self.check_ascending(&format!("the {variant} kernel"))?;
        let entry = variant.entry_point_with_coarsening(K::NAME, factor)?;
        let plan = self.plan_with_coarsening(variant, factor)?;
        let function = self.gpu.function(&entry)?;
        // An empty merge has no blocks: `run_function` launches nothing.
        let config = plan.launch_config().unwrap_or(LaunchConfig {
            grid_dim: (0, 1, 1),
            block_dim: (plan.block_threads as u32, 1, 1),
            shared_mem_bytes: plan.shared_mem_bytes as u32,
        });
        let label = if factor == variant.default_coarsening() {
            format!("{variant} {}", K::NAME)
        } else {
            format!("{variant} {} (C = {factor})", K::NAME)
        };
        self.run_function(&function, config, &label)
    }

    /// As [`run`](Self::run), for any kernel with the merge entry points' signature
    /// `(a, m: u64, b, n: u64, c)` and its launch shape, e.g. a CUDA C++ twin: opts the kernel
    /// in to more than 48 KiB of dynamic shared memory when `config` asks for it, poisons the
    /// output, and times the launch alone with CUDA events. A grid of zero blocks launches
    /// nothing (an empty merge), but is refused for a merge with keys to write. `label` names
    /// the kernel in errors ("the {label} merge").
    pub fn run_function(
        &mut self,
        function: &CudaFunction,
        config: LaunchConfig,
        label: &str,
    ) -> Result<f64> {
        self.check_ascending(&format!("the {label} kernel"))?;
        let (gx, gy, gz) = config.grid_dim;
        let launches = gx > 0 && gy > 0 && gz > 0;
        if !launches && !self.is_empty() {
            return Err(Error::BadArgument(format!(
                "the {label} merge of {} + {} keys cannot run on a grid of {gx}×{gy}×{gz} blocks",
                self.m, self.n
            )));
        }
        self.gpu.allow_shared_memory(function, config.shared_mem_bytes as usize, label)?;
        self.time_launches(label, |stream, (a, m, b, n, c)| {
            if !launches {
                return Ok(());
            }
            let mut launch = stream.launch_builder(function);
            launch.arg(a).arg(m).arg(b).arg(n).arg(c);
            // SAFETY: the entry point takes (a, m, b, n, c) with 64-bit sizes, per the caller;
            // the buffers hold at least m, n and m + n keys, A and B were checked sorted and
            // NaN-free, and the launch shape is the kernel's, per the caller.
            unsafe { launch.launch(config) }.map(drop).context(|| format!("launching the {label} merge"))
        })
    }

    /// Poisons the output, then times `launch` (given the stream and the kernel arguments
    /// `(a, m, b, n, c)`) with CUDA events; on success the output holds its result. Errors
    /// while it runs name the `label`led merge.
    pub(super) fn time_launches(
        &mut self,
        label: &str,
        launch: impl FnOnce(&CudaStream, LaunchArgs<'_, K>) -> Result<()>,
    ) -> Result<f64> {
        self.has_output = false;
        self.gpu.poison(&mut self.c)?;
        let (m, n) = (self.m as u64, self.n as u64);
        let stream = self.gpu.stream();
        let args = (&self.a, &m, &self.b, &n, &mut self.c);
        let ms = self.gpu.timer()?.time(|| launch(stream, args));
        let ms = ms.map_err(|e| e.while_doing(|| format!("running the {label} merge")))?;
        self.has_output = true;
        Ok(ms)
    }

    /// GPU time in milliseconds of device-to-device copies of A and B into the output: the
    /// same bytes read and written as a merge, the ceiling a merge can approach. Leaves no
    /// merge result behind.
    pub fn copy_ms(&mut self) -> Result<f64> {
        self.has_output = false;
        self.gpu.timer()?.time(|| self.enqueue_copy())
    }

    /// Enqueues the device-to-device copies of A and B into the output (see
    /// [`copy_ms`](Self::copy_ms)); leaves no merge result behind.
    pub(super) fn enqueue_copy(&mut self) -> Result<()> {
        self.has_output = false;
        let (m, n) = (self.m, self.n);
        let (a, b, c) = (&self.a, &self.b, &mut self.c);
        let stream = self.gpu.stream();
        if m > 0 {
            stream
                .memcpy_dtod(&a.slice(..m), &mut c.slice_mut(..m))
                .context(|| "copying A on the device".into())?;
        }
        if n > 0 {
            stream
                .memcpy_dtod(&b.slice(..n), &mut c.slice_mut(m..m + n))
                .context(|| "copying B on the device".into())?;
        }
        Ok(())
    }

    /// The first `len` keys of the output of the last run (a set operation's outputs).
    pub(super) fn output_first(&self, len: usize) -> Result<Vec<K>> {
        if !self.has_output {
            return Err(Error::BadArgument(
                "no kernel has run on this problem since it was set up or copied".into(),
            ));
        }
        let len = len.min(self.len());
        preflight::check_download((len * size_of::<K>()) as u128, "the output keys")?;
        let mut keys = vec![K::default(); len];
        if len > 0 {
            self.gpu.download_into(&self.c.slice(..len), &mut keys)?;
        }
        Ok(keys)
    }

    /// The merged keys of the last [`run`](Self::run).
    pub fn output(&self) -> Result<Vec<K>> {
        if !self.has_output {
            return Err(Error::BadArgument(
                "no merge has run on this problem since it was set up or copied".into(),
            ));
        }
        if self.is_empty() {
            return Ok(Vec::new());
        }
        preflight::check_download(MergeNeed::of::<K>(self.m, self.n).host_bytes(1), "the merged keys")?;
        self.gpu.download(&self.c)
    }
}

/// Merge path's partition for one key type and order: the sample kernel (any order) and the
/// partition kernel, and whether the partition may overlap the sample kernel's end.
pub(super) struct PathPartition {
    samples: CudaFunction,
    partition: CudaFunction,
    overlap: bool,
}

impl PathPartition {
    /// The partition of `dtype` keys sorted in `order` on `gpu`.
    pub(super) fn new(gpu: &Gpu, dtype: &str, order: &str) -> Result<Self> {
        Ok(Self {
            samples: gpu.function(&path::samples_entry_point(dtype))?,
            partition: gpu.function(&path::partition_entry_point_in(dtype, order))?,
            overlap: gpu.overlaps_dependent_launches(),
        })
    }

    /// Launches the partition on `stream` for tiles of `tile_size` outputs: the co-ranks of
    /// every tile start of A (`m` keys) and B (`n` keys) into `splits`, after the sample kernel
    /// on merges large enough for samples (`gpu_kernels::merge::partition_samples`). `label`
    /// names the merge in errors.
    pub(super) fn launch<K: HostKey>(
        &self,
        stream: &CudaStream,
        (a, m, b, n): (&CudaSlice<K>, &u64, &CudaSlice<K>, &u64),
        tile_size: u64,
        splits: &mut CudaSlice<u64>,
        label: &str,
    ) -> Result<()> {
        let tiles = (*m + *n).div_ceil(tile_size) as usize;
        let sampled = partition_samples(*m as usize, *n as usize);
        let words =
            KernelArgs::new(stream).read(a).count(*m).read(b).count(*n).count(tile_size).write(splits);
        if sampled {
            // SAFETY: `merge_path_samples_<t>(a, m, b, n, tile_size, splits)`: A and B hold m
            // and n keys; `splits` holds `splits_len(tiles)` entries; `samples_config` has
            // `PARTITION_SAMPLES` threads or more.
            unsafe { words.launch(&self.samples, path::samples_config(), LaunchAttributes::PLAIN) }
                .context(|| format!("launching the {label} partition's samples"))?;
        }
        // SAFETY: `merge_path_partition_<t>(a, m, b, n, tile_size, splits)`: A and B hold m and
        // n sorted, NaN-free keys (checked when the problem was set up); `splits` holds
        // `splits_len(tiles)` entries; the launch has tiles + 1 threads or more; where the merge
        // is sampled, the sample kernel above, on the same stream, writes the samples into
        // `splits` (when overlapping it, the partition's threads wait for it,
        // `grid_dependency::wait`, before they read them).
        unsafe {
            words.launch(
                &self.partition,
                path::partition_config(tiles),
                LaunchAttributes::overlapping(sampled && self.overlap),
            )
        }
        .context(|| format!("launching the {label} partition"))
    }
}
