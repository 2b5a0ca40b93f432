//! Past one GPU (issue 13): the grid split along z into one slab per GPU ([`slab`]), each slab
//! with halo planes, and the halo planes exchanged over NCCL after every step, so that the
//! result over any number of GPUs is bitwise equal to the single-GPU run.
//!
//! One process drives every GPU here ([`SlabRun`]): NCCL's communicators for all of them are
//! made at once, and each step's sends and receives go out as one NCCL group. NCCL is loaded
//! at run time, like the driver; without it, [`SlabRun::new`] fails with [`Error::NoNccl`]
//! and everything single-GPU still works.

pub mod slab;

use std::ops::Range;
use std::time::Instant;

use cudarc::nccl::{Comm, NcclType, group_end, group_start};
use gpu_kernels::stencil::Coeffs;
use ndarray::{Array3, ArrayView3, Axis, s};

pub use slab::{Slab, split_z};

use crate::stencil::{StencilProblem, StencilVariant, grid_of};
use crate::{Element, Error, Gpu, Result};

/// Fails with [`Error::NoNccl`] when `libnccl` cannot be loaded.
pub fn check_nccl() -> Result<()> {
    // SAFETY: only probes whether the shared library can be loaded.
    if unsafe { cudarc::nccl::sys::is_culib_present() } { Ok(()) } else { Err(Error::NoNccl) }
}

/// An NCCL failure while doing `what`.
fn nccl_error(what: &str) -> impl FnOnce(cudarc::nccl::result::NcclError) -> Error + '_ {
    move |code| Error::Nccl { what: what.into(), code: format!("{code:?}") }
}

/// A seven-point stencil over several GPUs of this process, one z-slab each (halo of one
/// plane), with the halo planes exchanged over NCCL after every step.
pub struct SlabRun<'g, T: Element> {
    slabs: Vec<Slab>,
    problems: Vec<StencilProblem<'g, T>>,
    comms: Vec<Comm>,
    /// Points in one z plane (`nx × ny`).
    plane: usize,
}

impl<'g, T: Element + NcclType> SlabRun<'g, T> {
    /// Splits `input` (shape `(nz, ny, nx)`) over `gpus`, in order, and uploads each slab with
    /// its halo planes.
    pub fn new(gpus: &'g [Gpu], input: ArrayView3<T>, coeffs: Coeffs<T>) -> Result<Self> {
        if gpus.is_empty() {
            return Err(Error::BadArgument("a run over GPUs needs at least one GPU".into()));
        }
        check_nccl()?;
        let (nz, ny, nx) = input.dim();
        grid_of(nz, ny, nx)?;
        let slabs = split_z(nz, gpus.len(), 1)?;
        let problems = slabs
            .iter()
            .zip(gpus)
            .map(|(slab, gpu)| StencilProblem::new(gpu, input.slice(s![slab.local_planes(), .., ..]), coeffs))
            .collect::<Result<Vec<_>>>()?;
        let streams = gpus.iter().map(|gpu| gpu.stream().clone()).collect();
        let comms = Comm::from_devices(streams).map_err(nccl_error("creating the NCCL communicators"))?;
        Ok(Self { slabs, problems, comms, plane: nx * ny })
    }

    /// The slabs, one per GPU.
    pub fn slabs(&self) -> &[Slab] {
        &self.slabs
    }

    /// Runs `steps` time steps of `variant` (one that takes single steps: streaming or the
    /// book's) from the input, the halo planes exchanged after each; returns the wall time of
    /// the steps in milliseconds, from the first launch to every GPU's last.
    pub fn run(&mut self, variant: StencilVariant, steps: usize) -> Result<f64> {
        self.run_with(variant, steps, true)
    }

    /// As [`run`](Self::run); without `exchange` the halo planes are not exchanged (the result
    /// is then wrong), which times the steps alone: the difference is the exchange's exposed
    /// time.
    pub fn run_with(&mut self, variant: StencilVariant, steps: usize, exchange: bool) -> Result<f64> {
        if steps == 0 {
            return Err(Error::BadArgument("the number of time steps must be at least 1".into()));
        }
        let launches = self.problems.iter().map(|p| p.step_launch(variant)).collect::<Result<Vec<_>>>()?;
        for problem in &mut self.problems {
            problem.start_steps()?;
        }
        self.synchronize()?;
        let started = Instant::now();
        for _ in 0..steps {
            for (problem, launch) in self.problems.iter_mut().zip(&launches) {
                problem.step(launch)?;
            }
            if exchange {
                self.exchange_halos()?;
            }
        }
        self.synchronize()?;
        Ok(started.elapsed().as_secs_f64() * 1e3)
    }

    /// Each slab's boundary planes to its neighbours' halos, as one NCCL group on each GPU's
    /// stream (after that GPU's step, before its next).
    fn exchange_halos(&mut self) -> Result<()> {
        let plane = self.plane;
        let points = |planes: Range<usize>| planes.start * plane..planes.end * plane;
        group_start().map_err(nccl_error("starting the halo exchange"))?;
        let mut exchange = || -> Result<()> {
            for (rank, ((slab, comm), problem)) in
                self.slabs.iter().zip(&self.comms).zip(&mut self.problems).enumerate()
            {
                let buffer = problem.current_mut()?;
                for (send, receive, peer) in [
                    (slab.send_below(), slab.receive_below(), rank.wrapping_sub(1)),
                    (slab.send_above(), slab.receive_above(), rank + 1),
                ] {
                    if send.is_empty() {
                        continue;
                    }
                    comm.send(&buffer.slice(points(send)), peer as i32)
                        .map_err(nccl_error("sending halo planes"))?;
                    comm.recv(&mut buffer.slice_mut(points(receive)), peer as i32)
                        .map_err(nccl_error("receiving halo planes"))?;
                }
            }
            Ok(())
        };
        let enqueued = exchange();
        // The group ends even after a failed call, so NCCL is not left inside it.
        let ended = group_end().map_err(nccl_error("ending the halo exchange"));
        enqueued?;
        ended.map(|_| ())
    }

    fn synchronize(&self) -> Result<()> {
        self.problems.iter().try_for_each(|p| p.gpu().synchronize())
    }

    /// The result of the last [`run`](Self::run), shaped `(nz, ny, nx)`: each GPU's owned planes.
    pub fn output(&self) -> Result<Array3<T>> {
        let parts = self
            .slabs
            .iter()
            .zip(&self.problems)
            .map(|(slab, problem)| Ok(problem.output()?.slice_move(s![slab.owned_local(), .., ..])))
            .collect::<Result<Vec<_>>>()?;
        let views: Vec<_> = parts.iter().map(|p| p.view()).collect();
        Ok(ndarray::concatenate(Axis(0), &views).expect("slabs share ny and nx"))
    }
}

/// One measured run over GPUs ([`measure`]).
#[derive(Clone, Copy, Debug)]
pub struct ScalingRow {
    pub gpus: usize,
    /// Median wall time per step with the halo exchange.
    pub ms_per_step: f64,
    /// Median wall time per step of the steps alone (no exchange).
    pub compute_ms_per_step: f64,
    /// Whether the result equals the same run on the first GPU bit for bit (`None`: not checked).
    pub bitwise_equal: Option<bool>,
}

/// Times `steps` steps of `variant` over `gpus` (median of `repeat` runs after a warm-up, with
/// and without the exchange) and, if `verify`, compares the result bit for bit with the run on
/// the first GPU alone.
pub fn measure<T: Element + NcclType>(
    gpus: &[Gpu],
    variant: StencilVariant,
    input: ArrayView3<T>,
    coeffs: Coeffs<T>,
    (steps, repeat): (usize, usize),
    verify: bool,
) -> Result<ScalingRow> {
    let mut run = SlabRun::new(gpus, input, coeffs)?;
    let mut median = |exchange: bool| -> Result<f64> {
        run.run_with(variant, steps, exchange)?;
        let mut times =
            (0..repeat.max(1)).map(|_| run.run_with(variant, steps, exchange)).collect::<Result<Vec<_>>>()?;
        times.sort_by(f64::total_cmp);
        Ok(times[times.len() / 2] / steps as f64)
    };
    let compute_ms_per_step = median(false)?;
    let ms_per_step = median(true)?;
    let bitwise_equal = if verify {
        let multi = run.output()?;
        drop(run);
        let single = crate::stencil::run(&gpus[0], variant, input, coeffs, steps)?;
        Some(multi.iter().zip(single.iter()).all(|(m, s)| m.to_f64().to_bits() == s.to_f64().to_bits()))
    } else {
        None
    };
    Ok(ScalingRow { gpus: gpus.len(), ms_per_step, compute_ms_per_step, bitwise_equal })
}
