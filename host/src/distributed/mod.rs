//! Past one GPU (issue 13): the grid split along z into one slab per GPU ([`slab`]), each slab
//! with halo planes, and the halo planes exchanged over NCCL every few steps, so that the
//! result over any number of GPUs is bitwise equal to the single-GPU run.
//!
//! With halos of `H` planes, the exchange happens every `H` steps ([`DEFAULT_HALO`]).
//!
//! Two ways to launch ([`SlabRun`]): one process drives every GPU of the node
//! ([`SlabRun::new`]: NCCL's communicators for all of them made at once), or one process per
//! GPU ([`SlabRun::for_rank`], with the rank, world size and local GPU that `torchrun` or an
//! MPI launcher sets, [`Ranks::from_env`], and NCCL's unique id passed through a file,
//! [`shared_id`]), the shape that also runs across nodes. Either way each exchange's sends and
//! receives go out as one NCCL group. NCCL is loaded at run time, like the driver; without it
//! both fail with [`Error::NoNccl`] and everything single-GPU still works.
//!
//! With the streaming kernel the exchange overlaps the update ([`SlabRun::set_overlap`], on by
//! default): a step after which halos are exchanged first computes the planes each GPU sends
//! ([`Slab::edges`]), on a second stream of higher priority that then runs the exchange, while
//! the first stream computes the other owned planes ([`Slab::inner`]); the next step waits for
//! both. The book's kernels, which update the whole grid, exchange after the step.

pub mod slab;

use std::ops::Range;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use cudarc::driver::{CudaSlice, CudaStream};
use cudarc::nccl::{Comm, Id, NcclType, group_end, group_start};
use gpu_kernels::stencil::Coeffs;
use ndarray::{Array3, ArrayView3, Axis, s};

pub use slab::{Slab, split_z};

use crate::error::CudaContext as _;
use crate::stats::median_after_warm_up;
use crate::stencil::{StencilProblem, StencilVariant, StepLaunch, grid_of};
use crate::{Element, Error, Gpu, Result};

/// Fails with [`Error::NoNccl`] when `libnccl` cannot be loaded.
pub fn check_nccl() -> Result<()> {
    // SAFETY: only probes whether the shared library can be loaded.
    if unsafe { cudarc::nccl::sys::is_culib_present() } { Ok(()) } else { Err(Error::NoNccl) }
}

/// The seven-point star's radius: its neighbours along z are one plane away.
const SEVEN_POINT_RADIUS: usize = 1;

/// The slabs of `input` over `parts` GPUs with halos of `halo` planes, and the points of one plane.
fn split<T: Element>(input: ArrayView3<T>, parts: usize, halo: usize) -> Result<(Vec<Slab>, usize)> {
    let (nz, ny, nx) = input.dim();
    grid_of(nz, ny, nx)?;
    Ok((split_z(nz, parts, halo, SEVEN_POINT_RADIUS)?, nx * ny))
}

/// Where this process stands among the processes of a run, one per GPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ranks {
    /// This process's rank, `0..world_size`: which slab it computes.
    pub rank: usize,
    pub world_size: usize,
    /// Which GPU of its node it drives.
    pub local_rank: usize,
}

impl Ranks {
    /// From `RANK`, `WORLD_SIZE` and `LOCAL_RANK` (as `torchrun` sets them; `LOCAL_RANK`
    /// defaults to `RANK`), read through `var`; a missing or bad one is named in the error.
    pub fn from_vars(var: impl Fn(&str) -> Option<String>) -> Result<Self> {
        let read = |name: &str| -> Result<Option<usize>> {
            var(name)
                .map(|text| {
                    text.trim().parse::<usize>().map_err(|_| {
                        Error::BadArgument(format!("{name}={text:?} is not a non-negative whole number"))
                    })
                })
                .transpose()
        };
        let missing = |name: &str| {
            Error::BadArgument(format!(
                "{name} is not set: one process per GPU reads RANK, WORLD_SIZE and LOCAL_RANK, as torchrun and MPI launchers set them"
            ))
        };
        let rank = read("RANK")?.ok_or_else(|| missing("RANK"))?;
        let world_size = read("WORLD_SIZE")?.ok_or_else(|| missing("WORLD_SIZE"))?;
        let local_rank = read("LOCAL_RANK")?.unwrap_or(rank);
        if rank >= world_size {
            return Err(Error::BadArgument(format!("RANK={rank} is not below WORLD_SIZE={world_size}")));
        }
        Ok(Self { rank, world_size, local_rank })
    }

    /// [`from_vars`](Self::from_vars) on this process's environment.
    pub fn from_env() -> Result<Self> {
        Self::from_vars(|name| std::env::var(name).ok())
    }
}

/// NCCL's unique id of a run, the same on every rank: rank 0 makes it and writes it to `path`
/// (whole, by a rename), the others wait up to `wait` for the file and read it. The file must
/// be on storage every rank sees, and not left from an earlier run.
pub fn shared_id(ranks: Ranks, path: &Path, wait: Duration) -> Result<Id> {
    check_nccl()?;
    let io = |what: String| move |e: std::io::Error| Error::BadArgument(format!("{what}: {e}"));
    if ranks.rank == 0 {
        let id = Id::new().map_err(nccl_error("making NCCL's unique id"))?;
        let bytes: Vec<u8> = id.internal().iter().map(|&c| c as u8).collect();
        let partial = path.with_extension("partial");
        std::fs::write(&partial, &bytes)
            .map_err(io(format!("writing NCCL's id to {}", partial.display())))?;
        std::fs::rename(&partial, path).map_err(io(format!("moving NCCL's id to {}", path.display())))?;
        return Ok(id);
    }
    let started = Instant::now();
    loop {
        match std::fs::read(path) {
            Ok(bytes) if bytes.len() == 128 => {
                let internal = core::array::from_fn(|i| bytes[i] as core::ffi::c_char);
                return Ok(Id::uninit(internal));
            }
            Ok(bytes) => {
                return Err(Error::BadArgument(format!(
                    "{} holds {} bytes, not NCCL's 128-byte id",
                    path.display(),
                    bytes.len()
                )));
            }
            Err(_) if started.elapsed() < wait => std::thread::sleep(Duration::from_millis(20)),
            Err(e) => {
                return Err(Error::BadArgument(format!(
                    "rank {} waited {:?} for rank 0 to write NCCL's id to {}: {e}",
                    ranks.rank,
                    wait,
                    path.display()
                )));
            }
        }
    }
}

/// An NCCL failure while doing `what`.
fn nccl_error(what: &str) -> impl FnOnce(cudarc::nccl::result::NcclError) -> Error + '_ {
    move |code| Error::Nccl { what: what.into(), code: format!("{code:?}") }
}

/// A seven-point stencil over GPUs, one z-slab each with `halo` halo planes on each inner side,
/// the halos exchanged over NCCL every `halo` steps. This process drives the slabs of `parts`: all of them,
/// or its own rank's.
pub struct SlabRun<'g, T: Element> {
    slabs: Vec<Slab>,
    parts: Vec<Part<'g, T>>,
    /// Points in one z plane (`nx × ny`).
    plane: usize,
    /// Halo planes on each inner side of a slab, and steps between exchanges.
    halo: usize,
    /// Whether the streaming kernel's exchanges overlap the update of the inner planes.
    overlap: bool,
}

/// The default depth of the halos and steps between exchanges: after an exchange, the `d`-th
/// halo plane from the outside stays exact for `d − 1` steps (the kernel leaves the outermost as
/// it was, and each step the error moves one plane in), so with halos of `H` planes exchanged
/// every `H` steps every owned plane stays exact (bitwise as on one GPU). The exchange costs mostly
/// latency (four planes take little longer than one), so `H` = 4 exchanges a quarter as often
/// for a few redundant planes a step per slab. Chosen by a sweep of 1, 2 and 4 on two H200s
/// (1024×512×512, 100 steps, docs/stencil-h200.md): 0.2922, 0.2868 and 0.2847 ms per step in
/// f32, 0.5629, 0.5573 and 0.5562 in f64.
pub const DEFAULT_HALO: usize = 4;

/// One slab driven by this process: its rank, problem, communicator, and the second stream
/// (of its GPU) on which the communicator runs.
struct Part<'g, T: Element> {
    rank: usize,
    problem: StencilProblem<'g, T>,
    comm: Comm,
    side: Arc<CudaStream>,
}

/// A step after which halos are exchanged, in two parts: the planes sent ([`Slab::edges`]) on
/// the side stream, the others ([`Slab::inner`], if any) on the GPU's stream meanwhile.
struct SplitStep {
    edges: StepLaunch,
    inner: Option<StepLaunch>,
}

impl<'g, T: Element + NcclType> SlabRun<'g, T> {
    /// Splits `input` (shape `(nz, ny, nx)`) over `gpus`, in order, all driven by this process,
    /// and uploads each slab with `halo` halo planes on each inner side: the halos are exchanged
    /// every `halo` steps ([`DEFAULT_HALO`]: fewer, larger exchanges, for a little redundant
    /// work on the halo planes).
    pub fn new(gpus: &'g [Gpu], input: ArrayView3<T>, coeffs: Coeffs<T>, halo: usize) -> Result<Self> {
        if gpus.is_empty() {
            return Err(Error::BadArgument("a run over GPUs needs at least one GPU".into()));
        }
        check_nccl()?;
        let (slabs, plane) = split(input, gpus.len(), halo)?;
        let problems = slabs
            .iter()
            .zip(gpus)
            .map(|(slab, gpu)| StencilProblem::new(gpu, input.slice(s![slab.local_planes(), .., ..]), coeffs))
            .collect::<Result<Vec<_>>>()?;
        let sides = gpus.iter().map(|gpu| gpu.side_stream()).collect::<Result<Vec<_>>>()?;
        let comms =
            Comm::from_devices(sides.clone()).map_err(nccl_error("creating the NCCL communicators"))?;
        let parts = problems.into_iter().zip(comms).zip(sides).enumerate();
        let parts = parts.map(|(rank, ((problem, comm), side))| Part { rank, problem, comm, side });
        Ok(Self { slabs, parts: parts.collect(), plane, halo, overlap: true })
    }

    /// This process's slab of `input` (the whole grid, the same on every rank) on `gpu`, as
    /// rank `ranks.rank` of `ranks.world_size`, joined to the other ranks through NCCL's unique
    /// `id` (the same on every rank, [`shared_id`]), with `halo` planes of halo as
    /// [`new`](Self::new). Every rank must call this, with the same `halo`.
    pub fn for_rank(
        gpu: &'g Gpu,
        ranks: Ranks,
        id: Id,
        input: ArrayView3<T>,
        coeffs: Coeffs<T>,
        halo: usize,
    ) -> Result<Self> {
        check_nccl()?;
        let (slabs, plane) = split(input, ranks.world_size, halo)?;
        let slab = *slabs.get(ranks.rank).ok_or_else(|| {
            Error::BadArgument(format!(
                "rank {} is not below the world size {}",
                ranks.rank, ranks.world_size
            ))
        })?;
        let problem = StencilProblem::new(gpu, input.slice(s![slab.local_planes(), .., ..]), coeffs)?;
        let side = gpu.side_stream()?;
        let comm = Comm::from_rank(side.clone(), ranks.rank, ranks.world_size, id)
            .map_err(nccl_error("joining the NCCL communicator"))?;
        let part = Part { rank: ranks.rank, problem, comm, side };
        Ok(Self { slabs, parts: vec![part], plane, halo, overlap: true })
    }

    /// The slabs, one per GPU (every rank's).
    pub fn slabs(&self) -> &[Slab] {
        &self.slabs
    }

    /// Whether the streaming kernel's halo exchanges overlap the update of the inner planes
    /// (on by default; off, the exchange follows the step, as with the book's kernels). The
    /// result is the same either way.
    pub fn set_overlap(&mut self, overlap: bool) {
        self.overlap = overlap;
    }

    /// Whether `variant`'s exchanges overlap the update ([`set_overlap`](Self::set_overlap)):
    /// only the streaming kernel updates a range of planes, and one GPU exchanges nothing.
    pub fn overlaps(&self, variant: StencilVariant) -> bool {
        self.overlap && variant == StencilVariant::Streaming && self.slabs.len() > 1
    }

    /// Runs `steps` time steps of `variant` (one that takes single steps: streaming or the
    /// book's) from the input, the halo planes exchanged every `halo` steps; returns the wall time of
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
        let launches =
            self.parts.iter().map(|p| p.problem.step_launch(variant)).collect::<Result<Vec<_>>>()?;
        let split = if exchange && self.overlaps(variant) {
            let split = |part: &Part<'g, T>| -> Result<SplitStep> {
                let slab = self.slabs[part.rank];
                let inner = Some(slab.inner()).filter(|r| !r.is_empty());
                Ok(SplitStep {
                    edges: part.problem.step_launch_over(&slab.edges())?,
                    inner: inner.map(|r| part.problem.step_launch_over(&[r])).transpose()?,
                })
            };
            Some(self.parts.iter().map(split).collect::<Result<Vec<_>>>()?)
        } else {
            None
        };
        for part in &mut self.parts {
            part.problem.start_steps()?;
        }
        self.synchronize()?;
        let started = Instant::now();
        for done in 1..=steps {
            let exchange_now = exchange && done % self.halo == 0 && done < steps;
            match &split {
                Some(split) if exchange_now => self.split_step_and_exchange(split)?,
                _ => {
                    for (part, launch) in self.parts.iter_mut().zip(&launches) {
                        part.problem.step(launch)?;
                    }
                    if exchange_now {
                        self.exchange_after_step()?;
                    }
                }
            }
        }
        self.synchronize()?;
        Ok(started.elapsed().as_secs_f64() * 1e3)
    }

    /// One step whose sent planes go out while the rest is computed: on each GPU the side
    /// stream waits for the last step, computes the edges and exchanges them, while the GPU's
    /// stream computes the inner planes; the GPU's stream then waits for the exchange.
    fn split_step_and_exchange(&mut self, split: &[SplitStep]) -> Result<()> {
        for (part, step) in self.parts.iter_mut().zip(split) {
            let main = part.problem.gpu().stream().clone();
            part.side
                .join(&main)
                .context(|| "ordering the halo planes' update after the last step".into())?;
            part.problem.step_part(&step.edges, &part.side)?;
            if let Some(inner) = &step.inner {
                part.problem.step_part(inner, &main)?;
            }
        }
        self.exchange(StencilProblem::next_mut)?;
        for part in &mut self.parts {
            let main = part.problem.gpu().stream().clone();
            main.join(&part.side).context(|| "ordering the next step after the halo exchange".into())?;
            part.problem.finish_step()?;
        }
        Ok(())
    }

    /// The exchange after a whole step (the book's kernels, or without overlap): the side
    /// streams wait for the step, and the GPUs' streams for the exchange.
    fn exchange_after_step(&mut self) -> Result<()> {
        for part in &self.parts {
            part.side
                .join(part.problem.gpu().stream())
                .context(|| "ordering the halo exchange after the step".into())?;
        }
        self.exchange(StencilProblem::current_mut)?;
        for part in &self.parts {
            let main = part.problem.gpu().stream();
            main.join(&part.side).context(|| "ordering the next step after the halo exchange".into())?;
        }
        Ok(())
    }

    /// Each slab's sent planes of the buffer that `buffer` picks to its neighbours' halos in the
    /// same buffer, as one NCCL group on the side streams.
    fn exchange(
        &mut self,
        buffer: impl for<'p> Fn(&'p mut StencilProblem<'g, T>) -> Result<&'p mut CudaSlice<T>>,
    ) -> Result<()> {
        let plane = self.plane;
        let points = |planes: Range<usize>| planes.start * plane..planes.end * plane;
        group_start().map_err(nccl_error("starting the halo exchange"))?;
        let mut exchange = || -> Result<()> {
            for Part { rank, problem, comm, .. } in &mut self.parts {
                let (rank, slab) = (*rank, self.slabs[*rank]);
                let buffer = buffer(problem)?;
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
        for part in &self.parts {
            part.side.synchronize().context(|| "waiting for the halo exchange".into())?;
            part.problem.gpu().synchronize()?;
        }
        Ok(())
    }

    /// The global planes this process's result covers: the whole grid when it drives every
    /// slab, its rank's owned planes otherwise.
    pub fn planes(&self) -> Range<usize> {
        let (first, last) = (self.parts[0].rank, self.parts[self.parts.len() - 1].rank);
        self.slabs[first].start..self.slabs[last].end
    }

    /// The result of the last [`run`](Self::run) on [`planes`](Self::planes), shaped
    /// `(planes, ny, nx)`: the owned planes of each slab this process drives.
    pub fn output(&self) -> Result<Array3<T>> {
        let parts = self
            .parts
            .iter()
            .map(|part| {
                let slab = self.slabs[part.rank];
                Ok(part.problem.output()?.slice_move(s![slab.owned_local(), .., ..]))
            })
            .collect::<Result<Vec<_>>>()?;
        let views: Vec<_> = parts.iter().map(|p| p.view()).collect();
        Ok(ndarray::concatenate(Axis(0), &views).expect("slabs share ny and nx"))
    }
}

/// One measured run over GPUs ([`measure`]).
#[derive(Clone, Copy, Debug)]
pub struct ScalingRow {
    pub gpus: usize,
    /// Whether the exchange overlapped the update ([`SlabRun::overlaps`]).
    pub overlap: bool,
    /// Median wall time per step with the halo exchange.
    pub ms_per_step: f64,
    /// Median wall time per step of the steps alone (no exchange).
    pub compute_ms_per_step: f64,
    /// Whether the result equals the same run on the first GPU bit for bit (`None`: not checked).
    pub bitwise_equal: Option<bool>,
}

/// Times `steps` steps of `variant` of `run` (median of `repeat` runs after a warm-up, with and
/// without the exchange) and, if `verify`, compares its result bit for bit with the same run of
/// the whole `input` on `reference` alone.
pub fn measure<T: Element + NcclType>(
    run: &mut SlabRun<'_, T>,
    reference: &Gpu,
    variant: StencilVariant,
    (input, coeffs): (ArrayView3<T>, Coeffs<T>),
    (steps, repeat): (usize, usize),
    verify: bool,
) -> Result<ScalingRow> {
    let mut median = |exchange: bool| -> Result<f64> {
        Ok(median_after_warm_up(repeat, || run.run_with(variant, steps, exchange))? / steps as f64)
    };
    let compute_ms_per_step = median(false)?;
    let ms_per_step = median(true)?;
    let bitwise_equal = if verify {
        let ours = run.output()?;
        let single = crate::stencil::run(reference, variant, input, coeffs, steps)?;
        let single = single.slice(s![run.planes(), .., ..]);
        Some(ours.iter().zip(single.iter()).all(|(m, s)| m.to_f64().to_bits() == s.to_f64().to_bits()))
    } else {
        None
    };
    Ok(ScalingRow {
        gpus: run.slabs.len(),
        overlap: run.overlaps(variant),
        ms_per_step,
        compute_ms_per_step,
        bitwise_equal,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |name| pairs.iter().find(|(n, _)| *n == name).map(|(_, v)| v.to_string())
    }

    #[test]
    fn ranks_come_from_the_launchers_variables() {
        let ranks =
            Ranks::from_vars(vars(&[("RANK", "1"), ("WORLD_SIZE", "2"), ("LOCAL_RANK", "0")])).unwrap();
        assert_eq!(ranks, Ranks { rank: 1, world_size: 2, local_rank: 0 });
        let defaulted = Ranks::from_vars(vars(&[("RANK", "3"), ("WORLD_SIZE", "4")])).unwrap();
        assert_eq!(defaulted.local_rank, 3, "LOCAL_RANK defaults to RANK");
        let err = |pairs| Ranks::from_vars(vars(pairs)).unwrap_err().to_string();
        assert!(err(&[("WORLD_SIZE", "2")]).contains("RANK is not set"));
        assert!(err(&[("RANK", "0")]).contains("WORLD_SIZE is not set"));
        assert!(
            err(&[("RANK", "x"), ("WORLD_SIZE", "2")])
                .contains("RANK=\"x\" is not a non-negative whole number")
        );
        assert!(err(&[("RANK", "2"), ("WORLD_SIZE", "2")]).contains("RANK=2 is not below WORLD_SIZE=2"));
    }

    #[test]
    fn missing_nccl_says_how_to_install_it() {
        let message = Error::NoNccl.to_string();
        assert!(message.contains("libnccl.so.2") && message.contains("install NCCL"), "{message}");
        assert!(message.contains("single-GPU runs do not need it"), "{message}");
    }
}
