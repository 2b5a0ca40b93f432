//! A stencil problem on the GPU: the input, two buffers that ping-pong over time steps,
//! and timed launches of any variant.

use cudarc::driver::{CudaFunction, CudaSlice, LaunchConfig, PushKernelArg};
use gpu_kernels::stencil::tiles::StreamingShape;
use gpu_kernels::stencil::{Coeffs, Grid3};
use ndarray::{Array3, ArrayView3};

use super::{StencilVariant, grid_of, streaming};
use crate::error::CudaContext as _;
use crate::gpu::ByValue;
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
        Ok(Self { gpu, grid, coeffs, input, buffers, result: None })
    }

    /// The grid's shape.
    pub fn grid(&self) -> Grid3 {
        self.grid
    }

    /// Runs `steps` time steps of `variant` from the input and returns the GPU time of the
    /// steps in milliseconds (CUDA events; the reset of the buffers is not timed). The first
    /// step's output buffer is poisoned with NaN beforehand, so unwritten points show.
    pub fn run(&mut self, variant: StencilVariant, steps: usize) -> Result<f64> {
        match variant {
            StencilVariant::Streaming => {
                let default = streaming::default_shape(T::NAME);
                let sms = self.gpu.info.multiprocessors.max(1) as u32;
                self.run_streaming(streaming::fill(default, self.grid, sms), steps)
            }
            _ => self.run_with_tile(variant, variant.default_tile(), steps),
        }
    }

    /// As [`run`](Self::run), for the streaming kernel launched with `shape` (its vector
    /// width narrowed to one that divides the rows, see [`streaming::fit`]). [`run`](Self::run)
    /// launches the default shape, with fewer planes per block on small grids ([`streaming::fill`]).
    pub fn run_streaming(&mut self, shape: StreamingShape, steps: usize) -> Result<f64> {
        let shape = streaming::fit(shape, self.grid, T::NAME);
        let function = self.gpu.function(&streaming::entry_point(shape, T::NAME)?)?;
        let config = streaming::launch_config(shape, self.grid)?;
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
        let label = format!("streaming {} ({})", T::NAME, streaming::Describe(shape));
        self.run_function(&function, config, &label, steps)
    }

    /// As [`run`](Self::run), with the entry point of input-tile edge `tile` (one of
    /// [`StencilVariant::tiles`]).
    pub fn run_with_tile(&mut self, variant: StencilVariant, tile: usize, steps: usize) -> Result<f64> {
        let function = self.gpu.function(&variant.entry_point_with_tile(T::NAME, tile)?)?;
        let config = variant.launch_config_with_tile(self.grid, size_of::<T>(), tile)?;
        self.run_function(&function, config, &format!("{variant} {} (T = {tile})", T::NAME), steps)
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
        if steps == 0 {
            return Err(Error::BadArgument("the number of time steps must be at least 1".into()));
        }
        let [ping, pong] = &mut self.buffers;
        self.gpu.copy(&self.input, ping)?;
        self.gpu.poison(pong)?;
        self.result = None;
        let (grid, coeffs) = (ByValue(self.grid), ByValue(self.coeffs));
        let stream = self.gpu.stream();
        let ms = self.gpu.timer()?.time(|| {
            for step in 0..steps {
                let (src, dst) = if step % 2 == 0 { (&*ping, &mut *pong) } else { (&*pong, &mut *ping) };
                let mut launch = stream.launch_builder(function);
                launch.arg(src).arg(dst).arg(&grid).arg(&coeffs);
                // SAFETY: the entry point takes (input, output, Grid3, Coeffs<T>); both
                // buffers hold `grid.len()` elements; `config` comes from the same constants
                // as the kernel's tile sizes.
                unsafe { launch.launch(config) }.context(|| format!("launching the {label} kernel"))?;
            }
            Ok(())
        });
        let ms = ms.map_err(|e| e.while_doing(|| format!("running the {label} kernel")))?;
        self.result = Some(steps % 2);
        Ok(ms)
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
