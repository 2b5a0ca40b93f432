//! The GPU context: one device, one stream, and the kernels' PTX module loaded once.

use std::collections::HashMap;
use std::marker::PhantomData;
use std::sync::{Arc, Mutex};

use cudarc::driver::sys::{self, CUdevice_attribute, CUfunction_attribute};
use cudarc::driver::{
    CudaContext, CudaEvent, CudaFunction, CudaModule, CudaSlice, CudaStream, DevicePtr, DevicePtrMut,
    DeviceRepr, LaunchConfig, SyncOnDrop,
};
use cudarc::nvrtc::Ptx;
use gpu_kernels::KernelParam;
use gpu_kernels::stencil::tiles::TunedCard;

use crate::error::{CudaContext as _, Error, Result};

/// The kernels, compiled from `gpu-kernels` by the build script (nested nvptx64 build) for
/// the portable architecture: every GPU from it up runs them.
pub const PTX: &str = include_str!(env!("GPU_KERNELS_PTX"));
/// The architecture the portable PTX was built for (`GPU_KERNELS_ARCH`, default sm_70).
pub const PTX_ARCH: &str = env!("GPU_KERNELS_ARCH");
/// The same kernels built for Hopper (sm_90, PTX ISA 8.0), where some use its bulk copies
/// (the merge-path kernel's tile load); loaded on GPUs of compute capability 9.0 and up.
pub const PTX_HOPPER: &str = include_str!(env!("GPU_KERNELS_PTX_HOPPER"));
/// The architecture of [`PTX_HOPPER`] (sm_90).
pub const HOPPER_ARCH: &str = env!("GPU_KERNELS_HOPPER_ARCH");

/// CUDA's limit on the threads of one block, the same on every compute capability.
pub const MAX_BLOCK_THREADS: u32 = 1024;

/// Which build of the kernels a [`Gpu`] loads (the command lines' `--ptx`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum PtxChoice {
    /// The Hopper build on GPUs of compute capability 9.0 and up, else the portable one (also
    /// when the driver cannot load the Hopper build's PTX, e.g. one older than CUDA 12.0).
    #[default]
    Auto,
    /// The portable build ([`PTX`], [`PTX_ARCH`]), on any GPU: e.g. to measure what the
    /// Hopper build gains.
    Portable,
    /// The Hopper build ([`PTX_HOPPER`]); an error on GPUs older than compute capability 9.0.
    Hopper,
}

impl PtxChoice {
    /// The PTX text and its architecture for a GPU of compute capability `(major, minor)`.
    pub fn resolve(self, (major, minor): (i32, i32)) -> Result<(&'static str, &'static str)> {
        // sm_XY is compute capability X.Y.
        let hopper_major =
            HOPPER_ARCH.trim_start_matches("sm_").parse::<i32>().map_or(i32::MAX, |xy| xy / 10);
        match self {
            PtxChoice::Portable => Ok((PTX, PTX_ARCH)),
            PtxChoice::Auto if major < hopper_major => Ok((PTX, PTX_ARCH)),
            PtxChoice::Auto => Ok((PTX_HOPPER, HOPPER_ARCH)),
            PtxChoice::Hopper if major < hopper_major => Err(Error::BadArgument(format!(
                "the {HOPPER_ARCH} build of the kernels needs a GPU of compute capability {hopper_major}.0 or later; this one is {major}.{minor} (use the portable build, {PTX_ARCH})"
            ))),
            PtxChoice::Hopper => Ok((PTX_HOPPER, HOPPER_ARCH)),
        }
    }
}

/// What the host reports about the GPU it runs on.
#[derive(Clone, Debug)]
pub struct GpuInfo {
    pub ordinal: usize,
    pub name: String,
    pub compute_capability: (i32, i32),
    pub multiprocessors: i32,
    pub l2_bytes: i32,
    pub total_memory: usize,
    /// CUDA version the driver supports, e.g. `(13, 0)`.
    pub driver_cuda_version: (i32, i32),
    /// The architecture of the kernels' build that was loaded ([`PTX_ARCH`] or
    /// [`HOPPER_ARCH`]).
    pub ptx_arch: &'static str,
    /// Whether launches may group blocks into thread-block clusters
    /// ([`LaunchAttributes::cluster_y`]): compute capability 9.0 and up, with a driver for CUDA
    /// 12.0 or later.
    pub clusters: bool,
}

impl GpuInfo {
    /// The card whose table of launch shapes (`tiles.rs`) this GPU takes, chosen by its name
    /// (see `tuned_card_of`).
    pub fn tuned_card(&self) -> TunedCard {
        tuned_card_of(&self.name)
    }
}

/// The card whose table a GPU named `name` (as the driver names it, e.g. "NVIDIA H100 80GB
/// HBM3") takes: the H100's own for an H100, where one was measured to differ; the H200's for
/// every other GPU.
fn tuned_card_of(name: &str) -> TunedCard {
    if name.contains("H100") { TunedCard::H100 } else { TunedCard::H200 }
}

/// One GPU with the kernels' module loaded, and the stream all work runs on.
///
/// **Threads.** `Gpu` is `Send` and `Sync`: create one and share it by reference
/// (`std::thread::scope`), each thread with its own problems (`StencilProblem`,
/// `MergeProblem`) or calling `stencil::run` / `merge::merge`. All work goes to the one stream
/// in the order threads submit it, so every result is right (tested with 8 threads in
/// `host/tests/soak_gpu.rs`); but a time a `run` reports while other threads submit work
/// includes theirs, so time from one thread.
///
/// **Failures.** After a kernel faults, every later CUDA call of the process fails with
/// [`Error::ContextLost`], on this `Gpu` and on any new one: CUDA cannot recover from a kernel
/// fault inside the process, which must exit to use the GPU again. No call returns a wrong
/// result instead.
pub struct Gpu {
    pub info: GpuInfo,
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    module: Arc<CudaModule>,
    functions: Mutex<HashMap<String, CudaFunction>>,
}

/// GPU `ordinal`'s primary context, without loading any module.
fn open_context(ordinal: usize) -> Result<Arc<CudaContext>> {
    let count = device_count()?;
    if ordinal >= count {
        return Err(Error::NoDevice(format!(
            "GPU {ordinal} was asked for, but the driver sees {count} GPU(s)"
        )));
    }
    CudaContext::new(ordinal).context(|| format!("creating a context on GPU {ordinal}"))
}

/// A kernel's parameters as the driver takes them: 8-byte words (device pointers and 64-bit
/// counts) and values passed by value ([`value`](Self::value)), for a launch with
/// [`LaunchAttributes`] ([`launch`](Self::launch)). It holds cudarc's guards of the buffers (which
/// order them on the stream) until it is dropped, after its launches.
pub struct KernelArgs<'a> {
    stream: &'a CudaStream,
    params: Vec<Param<'a>>,
    _guards: Vec<SyncOnDrop<'a>>,
}

/// One kernel parameter of [`KernelArgs`].
enum Param<'a> {
    /// A device pointer or a 64-bit count.
    Word(u64),
    /// A value the caller holds (a `DeviceRepr`), borrowed for `'a` by
    /// [`value`](KernelArgs::value).
    Value(*const std::ffi::c_void, PhantomData<&'a ()>),
}

/// How a kernel is launched beyond its blocks ([`KernelArgs::launch`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LaunchAttributes {
    /// Allowed to start while the kernel ahead of it on the stream finishes (programmatic
    /// dependent launch, compute capability 9.0 and up, the Hopper build: see
    /// [`Gpu::overlaps_dependent_launches`]), so the kernel must wait
    /// (`gpu_kernels::device::grid_dependency::wait`) before it reads what the kernel ahead
    /// writes.
    pub overlap: bool,
    /// Blocks launched together as one thread-block cluster, consecutive along the grid's y
    /// (`blockIdx.y`), which compute capability 9.0 runs at once on one GPC ([`GpuInfo::clusters`]);
    /// it divides the grid's y. 1: no cluster.
    pub cluster_y: u32,
}

impl LaunchAttributes {
    /// A launch with neither: `cuLaunchKernel`, any driver.
    pub const PLAIN: Self = Self { overlap: false, cluster_y: 1 };

    /// [`PLAIN`](Self::PLAIN), allowed to overlap the kernel ahead if `overlap`.
    pub const fn overlapping(overlap: bool) -> Self {
        Self { overlap, ..Self::PLAIN }
    }
}

impl<'a> KernelArgs<'a> {
    /// No parameters yet, for launches on `stream`.
    pub fn new(stream: &'a CudaStream) -> Self {
        Self { stream, params: Vec::new(), _guards: Vec::new() }
    }

    /// Then a buffer the kernel reads.
    pub fn read<T>(mut self, buffer: &'a CudaSlice<T>) -> Self {
        let (pointer, guard) = buffer.device_ptr(self.stream);
        self.params.push(Param::Word(pointer));
        self._guards.push(guard);
        self
    }

    /// Then a buffer the kernel writes.
    pub fn write<T>(mut self, buffer: &'a mut CudaSlice<T>) -> Self {
        let (pointer, guard) = buffer.device_ptr_mut(self.stream);
        self.params.push(Param::Word(pointer));
        self._guards.push(guard);
        self
    }

    /// Then a 64-bit count.
    pub fn count(mut self, count: u64) -> Self {
        self.params.push(Param::Word(count));
        self
    }

    /// Then a value passed by value, e.g. `&ByValue(grid)`.
    pub fn value<T: DeviceRepr>(mut self, value: &'a T) -> Self {
        self.params.push(Param::Value((value as *const T).cast(), PhantomData));
        self
    }

    /// Launches `function` with these parameters, `config` and `attributes`.
    ///
    /// # Safety
    /// As a kernel launch: the parameters are the kernel's in order; the buffers hold what the
    /// kernel reads and have room for what it writes; a cluster divides the grid's y.
    pub unsafe fn launch(
        &self,
        function: &CudaFunction,
        config: LaunchConfig,
        attributes: LaunchAttributes,
    ) -> std::result::Result<(), cudarc::driver::DriverError> {
        let mut params = param_pointers(&self.params);
        let (function, stream) = (function.cu_function(), self.stream.cu_stream());
        self.stream.context().bind_to_thread()?;
        if attributes == LaunchAttributes::PLAIN {
            // The plain launch (any driver: `cuLaunchKernelEx` needs CUDA 11.8).
            // SAFETY: per the caller; the parameters live through the call, which copies them.
            return unsafe {
                let LaunchConfig { grid_dim: (gx, gy, gz), block_dim: (bx, by, bz), shared_mem_bytes } =
                    config;
                sys::cuLaunchKernel(
                    function,
                    gx,
                    gy,
                    gz,
                    bx,
                    by,
                    bz,
                    shared_mem_bytes,
                    stream,
                    params.as_mut_ptr(),
                    std::ptr::null_mut(),
                )
            }
            .result();
        }
        let mut attrs = launch_attributes(attributes);
        let launch = driver_config(config, stream, &mut attrs);
        // SAFETY: per the caller; the configuration, its attributes and the parameters live
        // through the call, which copies them.
        unsafe { sys::cuLaunchKernelEx(&launch, function, params.as_mut_ptr(), std::ptr::null_mut()) }
            .result()
    }
}

/// What the driver takes as a kernel's parameters: a pointer to each one's bytes (to the word
/// itself, or to the caller's value), valid while `params` is.
fn param_pointers(params: &[Param<'_>]) -> Vec<*mut std::ffi::c_void> {
    params
        .iter()
        .map(|param| match param {
            Param::Word(word) => (word as *const u64).cast_mut().cast(),
            Param::Value(bytes, _) => bytes.cast_mut(),
        })
        .collect()
}

/// The driver's launch configuration of `config` on `stream` with `attrs`, which it points to.
fn driver_config(
    config: LaunchConfig,
    stream: sys::CUstream,
    attrs: &mut [sys::CUlaunchAttribute],
) -> sys::CUlaunchConfig {
    let LaunchConfig { grid_dim: (gx, gy, gz), block_dim: (bx, by, bz), shared_mem_bytes } = config;
    sys::CUlaunchConfig {
        gridDimX: gx,
        gridDimY: gy,
        gridDimZ: gz,
        blockDimX: bx,
        blockDimY: by,
        blockDimZ: bz,
        sharedMemBytes: shared_mem_bytes,
        hStream: stream,
        attrs: attrs.as_mut_ptr(),
        numAttrs: attrs.len() as u32,
    }
}

/// The driver's launch attributes for `attributes`: programmatic stream serialization if it
/// overlaps, a cluster dimension if it has a cluster.
fn launch_attributes(attributes: LaunchAttributes) -> Vec<sys::CUlaunchAttribute> {
    let mut attrs = Vec::with_capacity(2);
    if attributes.overlap {
        attrs.push(sys::CUlaunchAttribute {
            id: sys::CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION,
            pad: [0; 4],
            value: sys::CUlaunchAttributeValue { programmaticStreamSerializationAllowed: 1 },
        });
    }
    if attributes.cluster_y > 1 {
        attrs.push(cluster_attribute(attributes.cluster_y));
    }
    attrs
}

/// The launch attribute of a cluster of `blocks` along y.
fn cluster_attribute(blocks: u32) -> sys::CUlaunchAttribute {
    sys::CUlaunchAttribute {
        id: sys::CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION,
        pad: [0; 4],
        value: sys::CUlaunchAttributeValue {
            clusterDim: sys::CUlaunchAttributeValue_union__bindgen_ty_1 { x: 1, y: blocks, z: 1 },
        },
    }
}

/// How many GPUs the driver sees; [`Error::NoDriver`] when `libcuda` cannot be loaded.
pub fn device_count() -> Result<usize> {
    // SAFETY: only probes whether the shared library can be loaded.
    if !unsafe { sys::is_culib_present() } {
        return Err(Error::NoDriver);
    }
    let count = CudaContext::device_count().context(|| "initialising the CUDA driver".into())?;
    Ok(count.max(0) as usize)
}

/// Free and total memory of GPU `ordinal`, in bytes, without loading the kernels: what a
/// preflight check ([`preflight`](crate::preflight)) asks before anything else is done.
pub fn device_memory(ordinal: usize) -> Result<(usize, usize)> {
    open_context(ordinal)?.mem_get_info().context(|| format!("reading the free memory of GPU {ordinal}"))
}

impl Gpu {
    /// Opens GPU `ordinal` and loads the kernels' PTX module: the Hopper build on GPUs of
    /// compute capability 9.0 and up, else the portable one ([`PtxChoice::Auto`]).
    ///
    /// Fails with [`Error::NoDriver`] when `libcuda` cannot be loaded, and with
    /// [`Error::NoDevice`] when there is no GPU with that ordinal.
    pub fn new(ordinal: usize) -> Result<Self> {
        Self::with_ptx(ordinal, PtxChoice::Auto)
    }

    /// [`Gpu::new`] with the build of the kernels chosen by `choice`.
    pub fn with_ptx(ordinal: usize, choice: PtxChoice) -> Result<Self> {
        let ctx = open_context(ordinal)?;
        let compute_capability =
            ctx.compute_capability().context(|| "reading the compute capability".into())?;
        let (ptx, mut ptx_arch) = choice.resolve(compute_capability)?;
        // One stream, used in order: cudarc's per-buffer event tracking would only add
        // host work to every launch.
        // SAFETY: all work of this context goes to the one stream below.
        unsafe { ctx.disable_event_tracking() };
        let stream = ctx.default_stream();
        let load = |ptx: &str, arch: &str| {
            ctx.load_module(Ptx::from_src(ptx))
                .map_err(|source| Error::PtxLoad { what: format!("PTX for {arch}"), source })
        };
        let module = match load(ptx, ptx_arch) {
            // A driver too old for the Hopper build's PTX ISA (8.0, CUDA 12.0) can still run
            // the portable build, which is what `Auto` promises.
            Err(_) if choice == PtxChoice::Auto && ptx_arch != PTX_ARCH => {
                ptx_arch = PTX_ARCH;
                load(PTX, PTX_ARCH)?
            }
            loaded => loaded?,
        };
        let attribute = |a| ctx.attribute(a).context(|| format!("reading device attribute {a:?}"));
        let mut driver_version = 0;
        // SAFETY: writes one int.
        unsafe { sys::cuDriverGetVersion(&mut driver_version) }
            .result()
            .context(|| "reading the driver version".into())?;
        let info = GpuInfo {
            ordinal,
            name: ctx.name().context(|| "reading the device name".into())?,
            compute_capability,
            multiprocessors: attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)?,
            l2_bytes: attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE)?,
            total_memory: ctx.total_mem().context(|| "reading the memory size".into())?,
            driver_cuda_version: (driver_version / 1000, driver_version % 1000 / 10),
            ptx_arch,
            clusters: compute_capability.0 >= 9 && driver_version >= 12000,
        };
        Ok(Self { info, ctx, stream, module, functions: Mutex::new(HashMap::new()) })
    }

    /// Whether a kernel that reads what the kernel ahead of it wrote may be launched to overlap
    /// that kernel's end ([`KernelArgs::launch`]): true with the Hopper build of the kernels,
    /// whose readers wait for the kernel ahead (`griddepcontrol.wait`); the portable build has
    /// no such wait.
    pub fn overlaps_dependent_launches(&self) -> bool {
        self.info.ptx_arch == HOPPER_ARCH
    }

    /// The stream all work of this GPU runs on.
    pub fn stream(&self) -> &Arc<CudaStream> {
        &self.stream
    }

    /// A second stream, at the GPU's highest priority (its blocks are scheduled before those of
    /// [`stream`](Self::stream) when both wait), e.g. for a halo exchange that overlaps a kernel.
    /// Work on it is ordered against the first stream only through events
    /// (`CudaStream::join`).
    pub fn side_stream(&self) -> Result<Arc<CudaStream>> {
        self.ctx.bind_to_thread().context(|| "binding the CUDA context to this thread".into())?;
        let (_, greatest) = cudarc::driver::result::stream::get_priority_range()
            .context(|| "reading the stream priorities".into())?;
        self.ctx.new_stream_with_priority(greatest).context(|| "creating a second stream".into())
    }

    /// The kernel entry point `name` of the PTX module (looked up once, then cached).
    pub fn function(&self, name: &str) -> Result<CudaFunction> {
        let mut functions = self.functions.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(f) = functions.get(name) {
            return Ok(f.clone());
        }
        let f = self
            .module
            .load_function(name)
            .map_err(|source| Error::PtxLoad { what: format!("entry point {name}"), source })?;
        functions.insert(name.to_owned(), f.clone());
        Ok(f)
    }

    /// Refuses a launch of `function` (named `label` in errors) in blocks of more threads than
    /// its registers allow, which the driver would only report after the fact as
    /// `CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES`.
    pub fn check_block(&self, function: &CudaFunction, config: &LaunchConfig, label: &str) -> Result<()> {
        let (x, y, z) = config.block_dim;
        let attributes = || format!("reading the {label} kernel's attributes");
        let most = function.max_threads_per_block().context(attributes)?;
        if i64::from(x * y * z) > i64::from(most) {
            let registers = function.num_regs().context(attributes)?;
            return Err(Error::BadShape(format!(
                "the {label} kernel uses {registers} registers per thread, so its blocks hold at most {most} \
                 threads; this launch asks for {x}×{y}×{z} = {} (a smaller block or a narrower vector fits)",
                x * y * z
            )));
        }
        Ok(())
    }

    /// Lets `function` (named `label` in errors) launch with `shared_mem_bytes` of dynamic
    /// shared memory: past 48 KiB, the default, a kernel must opt in to more.
    pub fn allow_shared_memory(
        &self,
        function: &CudaFunction,
        shared_mem_bytes: usize,
        label: &str,
    ) -> Result<()> {
        const DEFAULT_SHARED_BYTES: usize = 48 * 1024;
        if shared_mem_bytes > DEFAULT_SHARED_BYTES {
            // The driver call below needs the context current on this thread.
            self.ctx.bind_to_thread().context(|| "binding the CUDA context to this thread".into())?;
            function
                .set_attribute(
                    CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                    shared_mem_bytes as i32,
                )
                .context(|| format!("allowing the {label} {shared_mem_bytes} bytes of shared memory"))?;
        }
        Ok(())
    }

    /// How many blocks of `function`, of `block_threads` threads and `shared_mem_bytes` of
    /// dynamic shared memory each, run on this GPU at once (the occupancy calculator's blocks
    /// per SM, times the SMs); at least 1.
    pub fn resident_blocks(
        &self,
        function: &CudaFunction,
        block_threads: u32,
        shared_mem_bytes: usize,
    ) -> Result<usize> {
        // The driver call below needs the context current on this thread (any thread may use a Gpu).
        self.ctx.bind_to_thread().context(|| "binding the CUDA context to this thread".into())?;
        let per_sm = function
            .occupancy_max_active_blocks_per_multiprocessor(block_threads, shared_mem_bytes, None)
            .context(|| format!("asking how many blocks of {block_threads} threads fit on an SM"))?;
        Ok((per_sm as usize * self.info.multiprocessors.max(1) as usize).max(1))
    }

    /// As [`resident_blocks`](Self::resident_blocks), for a launch in clusters of `cluster`
    /// blocks along y ([`LaunchAttributes::cluster_y`]): the clusters that run at once
    /// (`cuOccupancyMaxActiveClusters`; a cluster's blocks share one GPC), times their blocks.
    /// `cluster` 1 is [`resident_blocks`](Self::resident_blocks). [`Error::BadShape`] if no
    /// cluster of that size fits on one GPC.
    pub fn resident_blocks_in_clusters(
        &self,
        function: &CudaFunction,
        block_threads: u32,
        shared_mem_bytes: usize,
        cluster: u32,
    ) -> Result<usize> {
        if cluster <= 1 {
            return self.resident_blocks(function, block_threads, shared_mem_bytes);
        }
        self.ctx.bind_to_thread().context(|| "binding the CUDA context to this thread".into())?;
        let mut attribute = [cluster_attribute(cluster)];
        let one_cluster = LaunchConfig {
            grid_dim: (1, cluster, 1),
            block_dim: (block_threads, 1, 1),
            shared_mem_bytes: shared_mem_bytes as u32,
        };
        let config = driver_config(one_cluster, self.stream.cu_stream(), &mut attribute);
        let mut clusters = 0;
        // SAFETY: writes one int; the configuration and its attribute live through the call.
        unsafe { sys::cuOccupancyMaxActiveClusters(&mut clusters, function.cu_function(), &config) }
            .result()
            .context(|| {
                format!("asking how many clusters of {cluster} blocks of {block_threads} threads fit")
            })?;
        if clusters <= 0 {
            return Err(Error::BadShape(format!(
                "no cluster of {cluster} blocks of {block_threads} threads ({shared_mem_bytes} bytes of shared \
                 memory each) fits on one GPC of this GPU; give a smaller cluster"
            )));
        }
        Ok(clusters as usize * cluster as usize)
    }

    /// Loads another PTX module into this GPU's context, e.g. CUDA C++ compiled with NVRTC.
    pub fn load_ptx(&self, ptx: Ptx, what: &str) -> Result<Arc<CudaModule>> {
        self.ctx.load_module(ptx).map_err(|source| Error::PtxLoad { what: what.to_owned(), source })
    }

    /// Free and total device memory in bytes.
    pub fn memory(&self) -> Result<(usize, usize)> {
        self.ctx.mem_get_info().context(|| "reading free device memory".into())
    }

    /// An uninitialised device buffer of `len` elements; fails with a clear
    /// [`Error::OutOfMemory`] when it cannot fit.
    pub fn alloc<T: DeviceRepr>(&self, len: usize) -> Result<CudaSlice<T>> {
        let bytes = len.checked_mul(size_of::<T>()).ok_or_else(|| {
            Error::OutOfMemory(format!(
                "{len} elements of {} bytes overflow the address space",
                size_of::<T>()
            ))
        })?;
        let (free, _) = self.memory()?;
        if bytes > free {
            return Err(Error::OutOfMemory(format!(
                "a buffer of {} needs more than the {} free on {}",
                human_bytes(bytes),
                human_bytes(free),
                self.info.name
            )));
        }
        // SAFETY: callers write the buffer before reading it (or poison it).
        unsafe { self.stream.alloc::<T>(len) }.context(|| format!("allocating {}", human_bytes(bytes)))
    }

    /// Copies `host` to a new device buffer.
    pub fn upload<T: DeviceRepr>(&self, host: &[T]) -> Result<CudaSlice<T>> {
        let mut buffer = self.alloc(host.len())?;
        self.stream
            .memcpy_htod(host, &mut buffer)
            .context(|| format!("copying {} to the GPU", human_bytes(size_of_val(host))))?;
        Ok(buffer)
    }

    /// Copies a device buffer back to the host (waits for the stream).
    pub fn download<T: DeviceRepr + Default + Clone>(&self, buffer: &CudaSlice<T>) -> Result<Vec<T>> {
        self.stream
            .clone_dtoh(buffer)
            .context(|| format!("copying {} from the GPU", human_bytes(buffer.num_bytes())))
    }

    /// Copies `source` (a device buffer or a view of part of one) into `host`, which has room
    /// for it, and waits for the stream.
    pub fn download_into<T: DeviceRepr>(&self, source: &impl DevicePtr<T>, host: &mut [T]) -> Result<()> {
        let bytes = source.num_bytes();
        self.stream
            .memcpy_dtoh(source, host)
            .context(|| format!("copying {} from the GPU", human_bytes(bytes)))?;
        self.synchronize()
    }

    /// Fills every byte of `buffer` with `0xFF` (NaN for floats, `-1`/`MAX` for integers),
    /// so that an element a kernel fails to write shows up in the check.
    pub fn poison<T: DeviceRepr>(&self, buffer: &mut CudaSlice<T>) -> Result<()> {
        let bytes = buffer.num_bytes();
        // The raw call below needs the context current on this thread (any thread may use a Gpu).
        self.ctx.bind_to_thread().context(|| "binding the CUDA context to this thread".into())?;
        let (ptr, _sync) = buffer.device_ptr_mut(&self.stream);
        // SAFETY: `ptr` is valid for `bytes` bytes, and the memset is ordered on our stream.
        unsafe { cudarc::driver::result::memset_d8_async(ptr, 0xFF, bytes, self.stream.cu_stream()) }
            .context(|| "poisoning an output buffer".into())
    }

    /// Copies `src` into `dst` on the device.
    pub fn copy<T: DeviceRepr>(&self, src: &CudaSlice<T>, dst: &mut CudaSlice<T>) -> Result<()> {
        self.stream.memcpy_dtod(src, dst).context(|| "copying on the device".into())
    }

    /// Waits until all work queued on the stream has finished; reports launch failures.
    pub fn synchronize(&self) -> Result<()> {
        self.stream.synchronize().context(|| "waiting for the GPU".into())
    }

    /// A pair of timing events on this GPU's stream.
    pub fn timer(&self) -> Result<Timer<'_>> {
        let event = || {
            self.ctx
                .new_event(Some(sys::CUevent_flags::CU_EVENT_DEFAULT))
                .context(|| "creating a timing event".into())
        };
        Ok(Timer { gpu: self, start: event()?, end: event()? })
    }
}

/// Times work on the GPU's stream with CUDA events.
pub struct Timer<'a> {
    gpu: &'a Gpu,
    start: CudaEvent,
    end: CudaEvent,
}

impl Timer<'_> {
    /// Runs `work` (which queues GPU work) between two events and returns the GPU time in
    /// milliseconds, after waiting for it to finish.
    pub fn time(&self, work: impl FnOnce() -> Result<()>) -> Result<f64> {
        self.start.record(&self.gpu.stream).context(|| "recording a timing event".into())?;
        work()?;
        self.end.record(&self.gpu.stream).context(|| "recording a timing event".into())?;
        self.end.synchronize().context(|| "waiting for the timed work".into())?;
        let ms = self.start.elapsed_ms(&self.end).context(|| "reading a timing event".into())?;
        Ok(f64::from(ms))
    }
}

/// A value passed to a kernel by value, e.g. `&ByValue(grid)`.
#[repr(transparent)]
#[derive(Clone, Copy, Debug)]
pub struct ByValue<T>(pub T);

// SAFETY: `KernelParam` types are `#[repr(C)]` plain data with the same layout on both sides.
unsafe impl<T: KernelParam> DeviceRepr for ByValue<T> {}

/// `1.07 GB`-style size, decimal units as bandwidths are quoted.
pub fn human_bytes(bytes: usize) -> String {
    let b = bytes as f64;
    match b {
        b if b >= 1e9 => format!("{:.2} GB", b / 1e9),
        b if b >= 1e6 => format!("{:.2} MB", b / 1e6),
        b if b >= 1e3 => format!("{:.2} kB", b / 1e3),
        _ => format!("{bytes} B"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_h100_takes_its_own_table_and_every_other_gpu_the_h200s() {
        assert_eq!(tuned_card_of("NVIDIA H100 80GB HBM3"), TunedCard::H100);
        assert_eq!(tuned_card_of("NVIDIA H200"), TunedCard::H200);
        assert_eq!(tuned_card_of("NVIDIA A100-SXM4-80GB"), TunedCard::H200, "no table of its own");
    }

    #[test]
    fn each_parameter_is_passed_as_a_pointer_to_its_own_bytes() {
        let grid = ByValue(gpu_kernels::stencil::Grid3 { nx: 7, ny: 5, nz: 3 });
        let params =
            [Param::Word(0xdead_beef), Param::Value((&grid as *const ByValue<_>).cast(), PhantomData)];
        let pointers = param_pointers(&params);
        // SAFETY: the first points to the word in `params`, the second to `grid`, both alive.
        let (word, value) =
            unsafe { (*pointers[0].cast::<u64>(), *pointers[1].cast::<gpu_kernels::stencil::Grid3>()) };
        assert_eq!((word, (value.nx, value.ny, value.nz)), (0xdead_beef, (7, 5, 3)));
        assert_eq!(pointers[1].cast_const(), (&grid as *const ByValue<_>).cast());
    }

    #[test]
    fn plain_launches_take_no_attributes_and_the_others_one_each() {
        assert!(launch_attributes(LaunchAttributes::PLAIN).is_empty());
        let overlap = launch_attributes(LaunchAttributes::overlapping(true));
        assert_eq!(overlap.len(), 1);
        let both = launch_attributes(LaunchAttributes { overlap: true, cluster_y: 8 });
        assert_eq!(both.len(), 2);
        let cluster = &both[1];
        assert_eq!(cluster.id, sys::CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION);
        // SAFETY: the cluster attribute's value is its dimension.
        let dim = unsafe { cluster.value.clusterDim };
        assert_eq!((dim.x, dim.y, dim.z), (1, 8, 1));
    }

    #[test]
    fn the_hopper_build_is_loaded_from_compute_capability_9_0_unless_asked_otherwise() {
        assert_eq!(PtxChoice::Auto.resolve((7, 0)).unwrap(), (PTX, PTX_ARCH));
        assert_eq!(PtxChoice::Auto.resolve((8, 9)).unwrap().1, PTX_ARCH);
        assert_eq!(PtxChoice::Auto.resolve((9, 0)).unwrap(), (PTX_HOPPER, HOPPER_ARCH));
        assert_eq!(PtxChoice::Auto.resolve((10, 0)).unwrap().1, HOPPER_ARCH);
        assert_eq!(PtxChoice::Portable.resolve((9, 0)).unwrap().1, PTX_ARCH);
        assert_eq!(PtxChoice::Hopper.resolve((9, 0)).unwrap().1, HOPPER_ARCH);
        let err = PtxChoice::Hopper.resolve((8, 6)).unwrap_err();
        assert!(matches!(err, Error::BadArgument(_)), "{err}");
        assert!(err.to_string().contains("compute capability 9.0 or later; this one is 8.6"), "{err}");
    }
}
