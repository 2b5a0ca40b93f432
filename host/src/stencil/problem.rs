//! A stencil problem on the GPU: the input, two buffers that ping-pong over time steps,
//! and timed launches of any variant.

use std::sync::Arc;

use std::ops::Range;

use cudarc::driver::sys::CUdeviceptr;
use cudarc::driver::{CudaFunction, CudaSlice, CudaStream, DevicePtr, LaunchConfig};
use gpu_kernels::KernelParam;
use gpu_kernels::stencil::box27::BoxCoeffs;
use gpu_kernels::stencil::star::StarCoeffs;
use gpu_kernels::stencil::tiles::{NO_CLUSTER, RUN_PLANES, StreamingShape, TemporalShape};
use gpu_kernels::stencil::{Coeffs, Grid3, Walk, Window};
use ndarray::{Array3, ArrayView3};

use super::{StencilShape, StencilVariant, grid_of, streaming, temporal};
use crate::error::CudaContext as _;
use crate::gpu::{ByValue, HOPPER_ARCH, KernelArgs, LaunchAttributes};
use crate::preflight::{self, StencilNeed};
use crate::{Element, Error, Gpu, Result};

/// Device buffers for one grid: the untouched input and two ping-pong buffers.
pub struct StencilProblem<'g, T: Element> {
    gpu: &'g Gpu,
    grid: Grid3,
    coeffs: Coeffs<T>,
    input: CudaSlice<T>,
    buffers: [CudaSlice<T>; 2],
    /// Which of `buffers` holds the result of the last run.
    result: Option<usize>,
    /// The share of L2 (percent) a run of streaming steps keeps for the next step.
    kept_l2_percent: u32,
    /// The cluster size every streaming launch asks for instead of its shape's
    /// ([`set_cluster`](Self::set_cluster)).
    cluster: Option<u32>,
}

impl<'g, T: Element> StencilProblem<'g, T> {
    /// Uploads `input`, of shape `(nz, ny, nx)` with every extent at least 3.
    ///
    /// Fails with [`Error::OutOfMemory`], before allocating anything, when the GPU's free memory
    /// cannot hold the grid three times (input and two ping-pong buffers); the message names
    /// the largest cube that would fit.
    pub fn new(gpu: &'g Gpu, input: ArrayView3<T>, coeffs: Coeffs<T>) -> Result<Self> {
        let (nz, ny, nx) = input.dim();
        let grid = grid_of(nz, ny, nx)?;
        StencilNeed::of::<T>(grid).check_device(preflight::device_free(gpu)?)?;
        let input = input.as_standard_layout();
        let host = input.as_slice().expect("standard layout is contiguous");
        let input = gpu.upload(host)?;
        let buffers = [gpu.alloc(grid.len())?, gpu.alloc(grid.len())?];
        let kept_l2_percent = streaming::kept_l2_percent(T::PRECISION);
        Ok(Self { gpu, grid, coeffs, input, buffers, result: None, kept_l2_percent, cluster: None })
    }

    /// Replaces the seven-point coefficients the next runs use.
    pub fn set_coeffs(&mut self, coeffs: Coeffs<T>) {
        self.coeffs = coeffs;
    }

    /// Sets how much of L2 (percent, 0 to 100) each step of a run of seven-point streaming steps
    /// launched in one wave keeps for the next, which walks back through it (default:
    /// `tiles::KEPT_L2_PERCENT_F64` or `_F32`; 0: every step walks forward, keeping none).
    pub fn set_kept_l2_percent(&mut self, percent: u32) -> Result<()> {
        if percent > 100 {
            return Err(Error::BadArgument(format!(
                "{percent} % of L2 kept for the next step: give 0 to 100"
            )));
        }
        self.kept_l2_percent = percent;
        Ok(())
    }

    /// Launches every streaming kernel (the seven-point one, and the high-order stars' and the
    /// box's) in thread-block clusters of `cluster` blocks, 1 (none) to 8, instead of its launch
    /// shape's [`StreamingShape::cluster`]; `None` goes back to the shapes'. Each launch takes
    /// the largest size up to this one that divides its rows of tiles
    /// ([`streaming::cluster_size`]); on GPUs without clusters (`GpuInfo::clusters`) every launch
    /// is plain. The temporal kernel and the book's launch plainly.
    pub fn set_cluster(&mut self, cluster: Option<u32>) -> Result<()> {
        if let Some(size) = cluster {
            streaming::check_cluster(size)?;
        }
        self.cluster = cluster;
        Ok(())
    }

    /// `shape` with the cluster it launches in here: [`set_cluster`](Self::set_cluster)'s, else
    /// its own, and none on a GPU without clusters.
    fn clustered(&self, shape: StreamingShape) -> Result<StreamingShape> {
        let cluster = self.cluster.unwrap_or(shape.cluster);
        streaming::check_cluster(cluster)?;
        Ok(shape.with_cluster(if self.gpu.info.clusters { cluster } else { NO_CLUSTER }))
    }

    /// The grid's shape.
    pub fn grid(&self) -> Grid3 {
        self.grid
    }

    /// Runs `steps` time steps of `variant` from the input and returns the GPU time of the
    /// steps in milliseconds (CUDA events; the reset of the buffers is not timed). The first
    /// step's output buffer is poisoned with NaN beforehand, so unwritten points show.
    /// The temporal variant fuses steps as [`run_fused`](Self::run_fused) with no `fuse` given.
    pub fn run(&mut self, variant: StencilVariant, steps: usize) -> Result<f64> {
        match variant {
            StencilVariant::Streaming => {
                let launch = self.default_streaming_launch()?;
                self.run_launches(&[(launch, steps)])
            }
            StencilVariant::Temporal => self.run_fused(None, steps),
            _ => self.run_with_tile(variant, variant.default_tile(), steps),
        }
    }

    /// The streaming kernel's default shape for this grid on this GPU's table
    /// ([`GpuInfo::tuned_card`](crate::GpuInfo::tuned_card)): its block narrowed to the rows
    /// ([`streaming::narrow`]), its planes per block filling the GPU ([`streaming::fill`]).
    fn streaming_default(&self) -> StreamingShape {
        let sms = self.gpu.info.multiprocessors.max(1) as u32;
        let default = streaming::default_shape_on(T::PRECISION, self.gpu.info.tuned_card());
        let shape = streaming::narrow(default, self.grid, T::PRECISION);
        streaming::fill(shape, self.grid, sms)
    }

    /// The launch of one step of the whole grid that [`run`](Self::run) makes: the default shape
    /// along z, or, where its blocks do not fit on the GPU at once and those of the shape along y
    /// ([`streaming::along_y_shape`]) do, that one: a walk in one wave is the fastest there is,
    /// and along z such a grid is walked in runs (on an H200, `f64` 256×512×1024: 92.3 % of the
    /// copy along y against 90.4 % along z; docs/stencil-h200.md). A table without a walk along y
    /// (the H100's, whose default walks runs) keeps the shape along z.
    fn default_streaming_launch(&self) -> Result<StepLaunch> {
        Ok(self.default_streaming()?.1)
    }

    /// The shape [`run`](Self::run) launches the streaming kernel with on this grid (see
    /// `default_streaming_launch`), fitted and clustered as it launches.
    pub fn default_streaming_shape(&self) -> Result<StreamingShape> {
        self.planned_streaming_shape(self.default_streaming()?.0)
    }

    /// `shape` as the streaming kernel launches it on this grid: its vector fitted to the rows
    /// ([`streaming::fit`]), in this problem's clusters.
    fn planned_streaming_shape(&self, shape: StreamingShape) -> Result<StreamingShape> {
        self.clustered(streaming::fit(shape, self.grid, T::PRECISION))
    }

    /// The shape `default_streaming_launch` picks, and its launch, each built once.
    fn default_streaming(&self) -> Result<(StreamingShape, StepLaunch)> {
        let along_z = self.streaming_default();
        let (launch_z, one_wave) = self.streaming_launch_waves(along_z, 0..self.grid.nz)?;
        if one_wave {
            return Ok((along_z, launch_z));
        }
        let Some(along_y) = streaming::along_y_shape_on(T::PRECISION, self.gpu.info.tuned_card()) else {
            return Ok((along_z, launch_z));
        };
        let along_y = streaming::narrow(along_y, self.grid, T::PRECISION);
        match self.streaming_launch_waves(along_y, 0..self.grid.nz)? {
            (launch_y, true) => Ok((along_y, launch_y)),
            _ => Ok((along_z, launch_z)),
        }
    }

    /// `steps` time steps with the temporal kernel: passes of `fuse` steps each (default: the
    /// default depth, or fewer for fewer steps, [`temporal::schedule`]), then the remainder as
    /// single steps of the streaming kernel. `fuse = Some(1)` runs single steps only.
    pub fn run_fused(&mut self, fuse: Option<usize>, steps: usize) -> Result<f64> {
        let schedule = temporal::schedule(steps, fuse, T::PRECISION)?;
        self.run_schedule(schedule)
    }

    /// As [`run_fused`](Self::run_fused), with the temporal kernel of `shape`: `steps / K`
    /// passes, then `steps mod K` single steps.
    pub fn run_temporal(&mut self, shape: TemporalShape, steps: usize) -> Result<f64> {
        let depth = shape.kernel.depth.max(1);
        self.run_schedule(temporal::Schedule {
            shape: Some(shape),
            passes: steps / depth,
            single_steps: steps % depth,
        })
    }

    fn run_schedule(&mut self, schedule: temporal::Schedule) -> Result<f64> {
        let mut launches = Vec::new();
        if let Some(shape) = schedule.shape.filter(|_| schedule.passes > 0) {
            let function = self.gpu.function(&temporal::entry_point(shape, T::PRECISION)?)?;
            let shared = temporal::shared_bytes(shape, T::PRECISION)?;
            self.gpu.allow_shared_memory(&function, shared, "temporal stencil")?;
            let threads = shape.warps * gpu_kernels::device::warp::LANES;
            let most = function
                .max_threads_per_block()
                .context(|| "reading the temporal kernel's largest block".into())?;
            if threads as i32 > most {
                return Err(Error::BadArgument(format!(
                    "a temporal block of {threads} threads is over the {most} this kernel's registers allow ({})",
                    temporal::Describe(shape)
                )));
            }
            let resident = self.gpu.resident_blocks(&function, threads, shared)?;
            let runs = temporal::runs(shape, self.grid, resident)?;
            let config = temporal::launch_config(shape, self.grid, T::PRECISION, runs)?;
            let label = format!("temporal {} ({})", T::PRECISION, temporal::Describe(shape));
            launches.push((StepLaunch::one(function, config, label), schedule.passes));
        }
        if schedule.single_steps > 0 {
            launches.push((self.default_streaming_launch()?, schedule.single_steps));
        }
        self.run_launches(&launches)
    }

    /// As [`run`](Self::run), for the streaming kernel launched with `shape` (its vector
    /// width narrowed to one that divides the rows, see [`streaming::fit`]). [`run`](Self::run)
    /// launches the default shape, with fewer planes per block on small grids ([`streaming::fill`]).
    pub fn run_streaming(&mut self, shape: StreamingShape, steps: usize) -> Result<f64> {
        let launch = self.streaming_launch(shape, 0..self.grid.nz)?;
        self.run_launches(&[(launch, steps)])
    }

    /// How the streaming kernel of `shape` sits on this GPU for one step of the whole grid: its
    /// registers per thread, the blocks the GPU holds at once, and the blocks launched (more
    /// than resident: several waves).
    pub fn streaming_occupancy(&self, shape: StreamingShape) -> Result<StreamingOccupancy> {
        let launch = self.streaming_launch(shape, 0..self.grid.nz)?;
        let KernelLaunch { function, config, cluster, .. } = &launch.launches[0];
        let (bx, by, _) = config.block_dim;
        let registers = function.num_regs().context(|| "reading the streaming kernel's registers".into())?;
        let (gx, gy, gz) = config.grid_dim;
        Ok(StreamingOccupancy {
            registers,
            resident: self.gpu.resident_blocks_in_clusters(function, bx * by, 0, *cluster)?,
            blocks: u64::from(gx) * u64::from(gy) * u64::from(gz),
            cluster: *cluster,
        })
    }

    /// The launch of the streaming kernel of `shape`, fitted to the grid, that updates the
    /// planes `z` ([`streaming::launch`], with the GPU's resident blocks of the kernel).
    fn streaming_launch(&self, shape: StreamingShape, z: Range<u32>) -> Result<StepLaunch> {
        Ok(self.streaming_launch_waves(shape, z)?.0)
    }

    /// As [`streaming_launch`](Self::streaming_launch), and whether the GPU holds all its blocks
    /// at once.
    fn streaming_launch_waves(&self, shape: StreamingShape, z: Range<u32>) -> Result<(StepLaunch, bool)> {
        let shape = self.planned_streaming_shape(shape)?;
        streaming::check(shape, self.grid)?;
        let function = self.gpu.function(&streaming::entry_point(shape, T::PRECISION)?)?;
        let most = function
            .max_threads_per_block()
            .context(|| "reading the streaming kernel's largest block".into())?;
        let [bx, by] = shape.block;
        if (bx * by) as i32 > most {
            return Err(Error::BadArgument(format!(
                "a streaming block of {bx}×{by} threads is over the {most} this kernel's registers allow ({})",
                streaming::Describe(shape)
            )));
        }
        let cluster = streaming::cluster_size(shape, self.grid, z.clone());
        let resident = self.gpu.resident_blocks_in_clusters(&function, bx * by, 0, cluster)?;
        let launch = streaming::launch(shape, self.grid, z, resident)?;
        let l2_bytes = usize::try_from(self.gpu.info.l2_bytes).unwrap_or(0);
        let kept_bytes = l2_bytes.saturating_mul(self.kept_l2_percent as usize) / 100;
        let keep = streaming::kept_planes(&launch, shape, self.grid, size_of::<T>(), kept_bytes);
        let streaming::StreamingLaunch { config, window, one_wave, cluster } = launch;
        let label =
            format!("streaming {} ({})", T::PRECISION, streaming::Describe(shape.with_cluster(cluster)));
        Ok((
            StepLaunch {
                launches: vec![KernelLaunch {
                    function,
                    config,
                    window: Some(window),
                    keep,
                    cluster,
                    tensor_maps: None,
                }],
                label,
            },
            one_wave,
        ))
    }

    /// As [`run`](Self::run), with the entry point of input-tile edge `tile` (one of
    /// [`StencilVariant::tiles`]).
    pub fn run_with_tile(&mut self, variant: StencilVariant, tile: usize, steps: usize) -> Result<f64> {
        let launch = self.tile_launch(variant, tile)?;
        self.run_launches(&[(launch, steps)])
    }

    /// The entry point of `variant` with input-tile edge `tile`, its launch shape and label.
    fn tile_launch(&self, variant: StencilVariant, tile: usize) -> Result<StepLaunch> {
        let function = self.gpu.function(&variant.entry_point_with_tile(T::PRECISION, tile)?)?;
        let config = variant.launch_config_with_tile(self.grid, T::PRECISION, tile)?;
        Ok(StepLaunch::one(function, config, format!("{variant} {} (T = {tile})", T::PRECISION)))
    }

    /// As [`run`](Self::run), for any kernel with the stencil entry points' signature
    /// `(input, output, Grid3, Coeffs<T>)` and its launch shape, e.g. a CUDA C++ twin.
    /// `label` names the kernel in errors.
    pub fn run_function(
        &mut self,
        function: &CudaFunction,
        config: LaunchConfig,
        label: &str,
        steps: usize,
    ) -> Result<f64> {
        self.run_launches(&[(StepLaunch::one(function.clone(), config, label.to_owned()), steps)])
    }

    /// Runs each `(pass, count)` `count` times in turn, ping-ponging the two buffers from the
    /// input; a pass is one or more time steps.
    fn run_launches(&mut self, passes: &[(StepLaunch, usize)]) -> Result<f64> {
        let coeffs = self.coeffs;
        self.run_launches_with(passes, coeffs)
    }

    /// As `run_launches`, for kernels whose coefficients are `coeffs` (e.g. a high-order star's).
    fn run_launches_with<C: KernelParam>(
        &mut self,
        passes: &[(StepLaunch, usize)],
        coeffs: C,
    ) -> Result<f64> {
        let total: usize = passes.iter().map(|p| p.1).sum();
        if total == 0 {
            return Err(Error::BadArgument("the number of time steps must be at least 1".into()));
        }
        for (pass, _) in passes {
            pass.check_blocks(self.gpu)?;
        }
        let [ping, pong] = &mut self.buffers;
        self.gpu.copy(&self.input, ping)?;
        self.gpu.poison(pong)?;
        self.result = None;
        let (grid, coeffs) = (ByValue(self.grid), ByValue(coeffs));
        let stream = self.gpu.stream();
        let each_pass = passes.iter().flat_map(|(pass, count)| std::iter::repeat_n(pass, *count));
        let labels: Vec<&str> = passes.iter().map(|p| p.0.label.as_str()).collect();
        let ms = self.gpu.timer()?.time(|| {
            for (index, pass) in each_pass.enumerate() {
                let (src, dst) = if index % 2 == 0 { (&*ping, &mut *pong) } else { (&*pong, &mut *ping) };
                launch_pass(stream, pass, (src, dst), &grid, &coeffs, Some(index % 2 == 1))?;
            }
            Ok(())
        });
        let ms = ms.map_err(|e| e.while_doing(|| format!("running the {} kernel", labels.join(" and "))))?;
        self.result = Some(total % 2);
        Ok(ms)
    }

    /// Starts time steps taken one at a time ([`step`](Self::step)), e.g. with halo planes
    /// exchanged between them: the input in the first buffer, the other poisoned with NaN.
    pub fn start_steps(&mut self) -> Result<()> {
        let [ping, pong] = &mut self.buffers;
        self.gpu.copy(&self.input, ping)?;
        self.gpu.poison(pong)?;
        self.result = Some(0);
        Ok(())
    }

    /// The launch of one time step of `variant` on this grid, for [`step`](Self::step): the
    /// streaming kernel at its default shape, or the book's at their default tiles. The
    /// temporal variant, whose passes are several steps, is refused.
    pub fn step_launch(&self, variant: StencilVariant) -> Result<StepLaunch> {
        let launch = match variant {
            StencilVariant::Temporal => {
                return Err(Error::BadArgument(
                    "the temporal variant fuses several steps per pass; take single steps with streaming or one of the book's variants".into(),
                ));
            }
            StencilVariant::Streaming => self.default_streaming_launch()?,
            _ => self.tile_launch(variant, variant.default_tile())?,
        };
        launch.check_blocks(self.gpu)?;
        Ok(launch)
    }

    /// The launches of the streaming kernel, at its default kernel and block with runs of
    /// [`RUN_PLANES`] planes per block, that update only the planes in `windows` of a time step
    /// (for [`step_part`](Self::step_part)); the rest of the output buffer is left as it is. E.g.
    /// a distributed run's planes sent to the neighbours, computed first, then the others while
    /// the exchange runs: in runs rather than [`IN_WAVES`](gpu_kernels::stencil::tiles::IN_WAVES),
    /// so that blocks finish all along and the exchange's kernels find room on the SMs.
    pub fn step_launch_over(&self, windows: &[Range<usize>]) -> Result<StepLaunch> {
        self.step_launch_over_with(StreamingShape { planes: RUN_PLANES, ..self.streaming_default() }, windows)
    }

    /// As [`step_launch_over`](Self::step_launch_over), with the streaming kernel of `shape`
    /// (walking along y, its blocks cover the windows' planes).
    pub fn step_launch_over_with(
        &self,
        shape: StreamingShape,
        windows: &[Range<usize>],
    ) -> Result<StepLaunch> {
        let mut parts = Vec::with_capacity(windows.len());
        for z in windows {
            let planes = u32::try_from(z.start).ok().zip(u32::try_from(z.end).ok());
            let (start, end) =
                planes.ok_or_else(|| Error::BadArgument(format!("planes {z:?} are past the grid")))?;
            parts.push(self.streaming_launch(shape, start..end)?);
        }
        let label = parts.first().map(|p| p.label.clone()).unwrap_or_default();
        let launch = StepLaunch { launches: parts.into_iter().flat_map(|p| p.launches).collect(), label };
        launch.check_blocks(self.gpu)?;
        Ok(launch)
    }

    /// Enqueues one time step with `launch` ([`step_launch`](Self::step_launch)), from the
    /// buffer holding the last result into the other, which then holds it.
    pub fn step(&mut self, launch: &StepLaunch) -> Result<()> {
        self.step_part(launch, self.gpu.stream())?;
        self.finish_step()
    }

    /// Enqueues `launch` on `stream` from the buffer holding the last result into the other,
    /// as part of a time step that [`finish_step`](Self::finish_step) closes: a step may be
    /// enqueued in parts ([`step_launch_over`](Self::step_launch_over)), on several streams.
    pub fn step_part(&mut self, launch: &StepLaunch, stream: &Arc<CudaStream>) -> Result<()> {
        let current = self.stepping()?;
        let [ping, pong] = &mut self.buffers;
        let (src, dst) = if current == 0 { (&*ping, &mut *pong) } else { (&*pong, &mut *ping) };
        let (grid, coeffs) = (ByValue(self.grid), ByValue(self.coeffs));
        launch_pass(stream, launch, (src, dst), &grid, &coeffs, None)
    }

    /// Closes a time step enqueued with [`step_part`](Self::step_part): the buffer it wrote now
    /// holds the last result.
    pub fn finish_step(&mut self) -> Result<()> {
        let current = self.stepping()?;
        self.result = Some(1 - current);
        Ok(())
    }

    /// Which buffer holds the last result of steps taken one at a time; an error before
    /// [`start_steps`](Self::start_steps).
    fn stepping(&self) -> Result<usize> {
        self.result.ok_or_else(|| Error::BadArgument("start_steps must come before step".into()))
    }

    /// The buffer the next time step writes (the one not holding the last result).
    pub fn next_mut(&mut self) -> Result<&mut CudaSlice<T>> {
        let current = self.stepping()?;
        Ok(&mut self.buffers[1 - current])
    }

    /// The buffer holding the last result (the input, right after
    /// [`start_steps`](Self::start_steps)), e.g. to exchange halo planes in place.
    pub fn current_mut(&mut self) -> Result<&mut CudaSlice<T>> {
        let current =
            self.result.ok_or_else(|| Error::BadArgument("no stencil has run on this problem yet".into()))?;
        Ok(&mut self.buffers[current])
    }

    /// The GPU this problem lives on.
    pub fn gpu(&self) -> &'g Gpu {
        self.gpu
    }

    /// `steps` time steps of the order-`R` star stencil (`R` = 2: 13 points, 4: 25) with
    /// `coeffs` (the problem's seven-point coefficients are not used), on the streaming design
    /// (`gpu_kernels::stencil::stencil_star_streaming`); GPU time in milliseconds. Points within
    /// `R` of a face keep their input. Grids thinner than `2R + 1` are refused with `BadShape`.
    /// The launch is this GPU's table's (`tiles.rs`, [`GpuInfo::tuned_card`](crate::GpuInfo::tuned_card)).
    pub fn run_star<const R: usize>(&mut self, coeffs: StarCoeffs<T, R>, steps: usize) -> Result<f64>
    where
        StarCoeffs<T, R>: KernelParam,
    {
        let shape = super::high_order::star_shape(R)?;
        let launch = super::high_order::default_launch(shape, T::PRECISION, self.gpu.info.tuned_card())?;
        self.run_star_with(coeffs, launch, steps)
    }

    /// As [`run_star`](Self::run_star), with the launch shape `launch` (e.g. one of the
    /// benchmarks' sweep, `high_order::sweep`).
    pub fn run_star_with<const R: usize>(
        &mut self,
        coeffs: StarCoeffs<T, R>,
        launch: StreamingShape,
        steps: usize,
    ) -> Result<f64>
    where
        StarCoeffs<T, R>: KernelParam,
    {
        let shape = super::high_order::star_shape(R)?;
        let launch = self.shape_launch(shape, launch, steps)?;
        self.run_launches_with(&[launch], coeffs)
    }

    /// The shape [`run_star_with`](Self::run_star_with) and [`run_box_with`](Self::run_box_with)
    /// launch `launch` of `shape` with on this grid: in this problem's clusters
    /// ([`set_cluster`](Self::set_cluster)), its vector fitted to the rows and its planes to the
    /// GPU ([`high_order::shape_launch`](super::high_order::shape_launch)).
    pub fn planned_shape(&self, shape: StencilShape, launch: StreamingShape) -> Result<StreamingShape> {
        Ok(self.planned_shape_launch(shape, launch)?.1)
    }

    /// [`planned_shape`](Self::planned_shape) and its entry point, the grid checked against the
    /// shape's thickness.
    fn planned_shape_launch(
        &self,
        shape: StencilShape,
        launch: StreamingShape,
    ) -> Result<(String, StreamingShape)> {
        shape.check_grid(self.grid)?;
        let sms = self.gpu.info.multiprocessors.max(1) as u32;
        let launch = self.clustered(launch)?;
        let tensor_copies = self.gpu.info.ptx_arch == HOPPER_ARCH;
        super::high_order::shape_launch(shape, launch, self.grid, T::PRECISION, sms, tensor_copies)
    }

    /// The function, launch configuration, label and `steps` of `launch` for `shape` on this
    /// grid, the grid checked against the shape's thickness.
    fn shape_launch(
        &self,
        shape: StencilShape,
        launch: StreamingShape,
        steps: usize,
    ) -> Result<(StepLaunch, usize)> {
        let (entry, launch) = self.planned_shape_launch(shape, launch)?;
        let function = self.gpu.function(&entry)?;
        let [bx, by] = launch.block;
        let cluster = streaming::cluster_size(launch, self.grid, 0..self.grid.nz);
        let label = format!("{shape} {}", T::PRECISION);
        let shared = super::high_order::shared_bytes(shape.radius(), launch, T::PRECISION);
        self.gpu.allow_shared_memory(&function, shared, &label)?;
        let resident = self.gpu.resident_blocks_in_clusters(&function, bx * by, shared, cluster)?;
        let config = LaunchConfig {
            shared_mem_bytes: shared as u32,
            ..streaming::launch_config(launch, self.grid, resident)?
        };
        let mut pass = StepLaunch::one(function, config, label).in_clusters(cluster);
        if let Some(ring) = super::high_order::tensor_ring(shape.radius(), launch) {
            let maps = Arc::new(self.tensor_maps(ring.box_dims())?);
            pass.launches.iter_mut().for_each(|l| l.tensor_maps = Some(maps.clone()));
        }
        Ok((pass, steps))
    }

    /// The tensor maps of the two ping-pong buffers for boxes of `box_dims`, in device memory.
    fn tensor_maps(&self, box_dims: [u32; 3]) -> Result<TensorMaps> {
        let Grid3 { nx, ny, nz } = self.grid;
        let stream = self.gpu.stream();
        let map_of = |buffer: &CudaSlice<T>| -> Result<(CUdeviceptr, CudaSlice<u64>)> {
            let (pointer, _guard) = buffer.device_ptr(stream);
            let map = crate::tensor_map::encode::<T>(pointer, [nx, ny, nz].map(u64::from), box_dims)?;
            Ok((pointer, self.gpu.upload(&map.words)?))
        };
        Ok(TensorMaps { maps: [map_of(&self.buffers[0])?, map_of(&self.buffers[1])?] })
    }

    /// As [`run_star`](Self::run_star), with the book's shared-memory tiled form (Fig. 8.8 with a
    /// halo of `R`), the readable baseline.
    pub fn run_star_tiled<const R: usize>(&mut self, coeffs: StarCoeffs<T, R>, steps: usize) -> Result<f64>
    where
        StarCoeffs<T, R>: KernelParam,
    {
        let shape = super::high_order::star_shape(R)?;
        shape.check_grid(self.grid)?;
        let (entry, config) = super::high_order::star_tiled_launch(R, self.grid, T::PRECISION)?;
        let function = self.gpu.function(&entry)?;
        let label = format!("{shape} shared-tiled {}", T::PRECISION);
        self.run_launches_with(&[(StepLaunch::one(function, config, label), steps)], coeffs)
    }

    /// `steps` time steps of the 27-point box stencil with `coeffs` (by distance class), on the
    /// streaming design (`gpu_kernels::stencil::stencil_box_streaming`); GPU time in
    /// milliseconds. Boundary points keep their input. The launch is this GPU's table's, as
    /// [`run_star`](Self::run_star)'s.
    pub fn run_box(&mut self, coeffs: BoxCoeffs<T>, steps: usize) -> Result<f64> {
        let card = self.gpu.info.tuned_card();
        self.run_box_with(
            coeffs,
            super::high_order::default_launch(StencilShape::Box27, T::PRECISION, card)?,
            steps,
        )
    }

    /// As [`run_box`](Self::run_box), with the launch shape `launch`.
    pub fn run_box_with(
        &mut self,
        coeffs: BoxCoeffs<T>,
        launch: StreamingShape,
        steps: usize,
    ) -> Result<f64> {
        let launch = self.shape_launch(StencilShape::Box27, launch, steps)?;
        self.run_launches_with(&[launch], coeffs)
    }

    /// GPU time in milliseconds of `times` device-to-device copies of the whole grid: each
    /// moves the same bytes as one stencil step (read once, written once), the ceiling a
    /// step can approach.
    pub fn copy_ms(&mut self, times: usize) -> Result<f64> {
        let [ping, _] = &mut self.buffers;
        let ms = self.gpu.timer()?.time(|| (0..times).try_for_each(|_| self.gpu.copy(&self.input, ping)))?;
        self.result = None;
        Ok(ms)
    }

    /// The result of the last [`run`](Self::run), shaped `(nz, ny, nx)`.
    pub fn output(&self) -> Result<Array3<T>> {
        let index =
            self.result.ok_or_else(|| Error::BadArgument("no stencil has run on this problem yet".into()))?;
        preflight::check_download(StencilNeed::of::<T>(self.grid).bytes(1), "the stencil's result")?;
        let host = self.gpu.download(&self.buffers[index])?;
        let Grid3 { nx, ny, nz } = self.grid;
        Ok(Array3::from_shape_vec((nz as usize, ny as usize, nx as usize), host)
            .expect("buffer holds the grid"))
    }
}

/// How a streaming launch sits on the GPU ([`StencilProblem::streaming_occupancy`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StreamingOccupancy {
    /// Registers per thread, as the driver compiled the kernel.
    pub registers: i32,
    /// Blocks of the launch's shape the GPU holds at once.
    pub resident: usize,
    /// Blocks launched for one step of the whole grid.
    pub blocks: u64,
    /// Blocks per thread-block cluster (1: none).
    pub cluster: u32,
}

/// One kernel launch of a pass: the function, its blocks, and for the seven-point streaming
/// kernel the [`Window`] it writes (that entry point's fifth parameter) and the planes each of
/// its runs keeps in L2 for the next step ([`streaming::kept_planes`]; 0: none, every step walks
/// forward), and the blocks of its thread-block clusters along y (1: none).
#[derive(Clone)]
struct KernelLaunch {
    function: CudaFunction,
    config: LaunchConfig,
    window: Option<Window>,
    keep: u32,
    cluster: u32,
    /// For a kernel whose tiles arrive by tensor copies, the maps of the buffers it reads (its
    /// fifth parameter: the map of its input).
    tensor_maps: Option<Arc<TensorMaps>>,
}

/// The tensor maps (`tensor_map::encode`) of a problem's two ping-pong buffers, in device
/// memory, each with the device address of the buffer it describes.
struct TensorMaps {
    maps: [(CUdeviceptr, CudaSlice<u64>); 2],
}

impl TensorMaps {
    /// The map of the buffer at `pointer`.
    fn of(&self, pointer: CUdeviceptr) -> Result<&CudaSlice<u64>> {
        let found = self.maps.iter().find(|(at, _)| *at == pointer);
        found.map(|(_, map)| map).ok_or_else(|| {
            Error::BadArgument(
                "a tensor-copy kernel's maps describe its own problem's buffers, and it was given another"
                    .into(),
            )
        })
    }
}

/// The launches of one pass over the grid (one time step, or several fused), in order, and a
/// label for errors ([`StencilProblem::step_launch`]).
#[derive(Clone)]
pub struct StepLaunch {
    launches: Vec<KernelLaunch>,
    label: String,
}

impl StepLaunch {
    /// A pass of one launch of a kernel that takes no window.
    fn one(function: CudaFunction, config: LaunchConfig, label: String) -> Self {
        Self {
            launches: vec![KernelLaunch {
                function,
                config,
                window: None,
                keep: 0,
                cluster: NO_CLUSTER,
                tensor_maps: None,
            }],
            label,
        }
    }

    /// This pass with its launches in clusters of `cluster` blocks along y, which divides their
    /// grids' y.
    fn in_clusters(mut self, cluster: u32) -> Self {
        self.launches.iter_mut().for_each(|launch| launch.cluster = cluster);
        self
    }

    /// Each launch's block fits its kernel ([`Gpu::check_block`]).
    fn check_blocks(&self, gpu: &Gpu) -> Result<()> {
        self.launches.iter().try_for_each(|l| gpu.check_block(&l.function, &l.config, &self.label))
    }
}

/// Enqueues one pass, each of its launches from `src` to `dst`, on `stream`. `walk_back`: for a
/// step of a run of steps, whether it is one that walks back through the planes the step before
/// kept in L2 (every other one); `None` for a step on its own, which walks forward keeping none.
fn launch_pass<T: Element, C: KernelParam>(
    stream: &Arc<CudaStream>,
    pass: &StepLaunch,
    (src, dst): (&CudaSlice<T>, &mut CudaSlice<T>),
    grid: &ByValue<Grid3>,
    coeffs: &ByValue<C>,
    walk_back: Option<bool>,
) -> Result<()> {
    for KernelLaunch { function, config, window, keep, cluster, tensor_maps } in &pass.launches {
        let walk = match walk_back {
            Some(back) if *keep > 0 => Walk { backwards: back.into(), keep: *keep },
            _ => Walk::FORWARD,
        };
        let (window, walk) = (window.map(ByValue), ByValue(walk));
        let mut args = KernelArgs::new(stream).read(src).write(&mut *dst).value(grid).value(coeffs);
        if let Some(window) = &window {
            args = args.value(window).value(&walk);
        }
        if let Some(maps) = tensor_maps {
            let (pointer, _guard) = src.device_ptr(stream);
            args = args.read(maps.of(pointer)?);
        }
        let attributes = LaunchAttributes { cluster_y: *cluster, ..LaunchAttributes::PLAIN };
        // SAFETY: the entry point takes (input, output, Grid3, C), and a Window and a Walk after
        // them exactly when `window` is given (the seven-point streaming kernel's), or the input's
        // tensor map exactly when `tensor_maps` is (the stars' tensor-copy kernels); both buffers
        // hold the grid's elements; `config` comes from the same constants as the kernel's tiles,
        // and a cluster divides its grid's y (`streaming::cluster_size`).
        unsafe { args.launch(function, *config, attributes) }
            .context(|| format!("launching the {} kernel", pass.label))?;
    }
    Ok(())
}
