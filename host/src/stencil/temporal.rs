//! Launching the temporal kernel (`K` time steps per pass): its entry points (one per
//! [`TemporalKernel`]: fusion depth, rows per thread), the depth chosen for a number of steps,
//! the overlapping tiles and the runs along z, all from [`TemporalShape`]s.
//!
//! A run of `steps` time steps is `steps / K` fused passes, then `steps mod K` single steps of
//! the streaming kernel ([`Schedule`]).

use std::fmt;

use cudarc::driver::LaunchConfig;
use gpu_kernels::device::warp::LANES;
use gpu_kernels::stencil::tiles::{
    TEMPORAL_F32, TEMPORAL_F64, TEMPORAL_SWEEP_F32, TEMPORAL_SWEEP_F64, TemporalKernel, TemporalShape,
};
use gpu_kernels::stencil::{
    Grid3, TEMPORAL_KERNELS_F32, TEMPORAL_KERNELS_F64, temporal_out_tile, temporal_shared_elements,
};

use super::variant::MAX_GRID_YZ;
use crate::gpu::MAX_BLOCK_THREADS;
use crate::{Error, Precision, Result};

/// The default shape for elements of type `precision`.
pub fn default_shape(precision: Precision) -> TemporalShape {
    precision.pick(TEMPORAL_F32, TEMPORAL_F64)
}

/// Every temporal entry point built for `precision`.
pub fn kernels(precision: Precision) -> &'static [TemporalKernel] {
    precision.pick(TEMPORAL_KERNELS_F32, TEMPORAL_KERNELS_F64)
}

/// The benchmarks' sweep of shapes for `precision` (it holds the default).
pub fn sweep(precision: Precision) -> &'static [TemporalShape] {
    precision.pick(&TEMPORAL_SWEEP_F32, &TEMPORAL_SWEEP_F64)
}

/// The built fusion depths for `precision`, ascending, without repeats.
pub fn depths(precision: Precision) -> Vec<usize> {
    let mut depths: Vec<usize> = kernels(precision).iter().map(|k| k.depth).collect();
    depths.sort_unstable();
    depths.dedup();
    depths
}

/// The entry point of `shape` for `precision`, if it is built.
pub fn entry_point(shape: TemporalShape, precision: Precision) -> Result<String> {
    let TemporalKernel { depth, rows } = shape.kernel;
    if !kernels(precision).contains(&shape.kernel) {
        let built: Vec<String> =
            kernels(precision).iter().map(|k| format!("k{}_r{}", k.depth, k.rows)).collect();
        return Err(Error::BadArgument(format!(
            "no temporal kernel k{depth}_r{rows} is built for {precision}; the built ones are {}",
            built.join(", ")
        )));
    }
    Ok(format!("stencil7_temporal_k{depth}_r{rows}_{}", precision.name()))
}

/// The shape that fuses `depth` steps for `precision`: the default's rows per thread if that
/// kernel is built, else the first built kernel of that depth.
pub fn shape_with_depth(depth: usize, precision: Precision) -> Result<TemporalShape> {
    let default = default_shape(precision);
    let wanted = TemporalKernel { depth, ..default.kernel };
    let kernel = if kernels(precision).contains(&wanted) {
        Some(wanted)
    } else {
        kernels(precision).iter().copied().find(|k| k.depth == depth)
    };
    kernel.map(|kernel| TemporalShape { kernel, ..default }).ok_or_else(|| {
        Error::BadArgument(format!(
            "--fuse {depth}: the temporal kernel is built for {precision} with fusion depths {:?} (or 1: single steps)",
            depths(precision)
        ))
    })
}

/// How a run of `steps` time steps is launched: `passes` fused passes of `shape` (if any),
/// then `single_steps` single steps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Schedule {
    pub shape: Option<TemporalShape>,
    pub passes: usize,
    pub single_steps: usize,
}

impl fmt::Display for Schedule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.shape {
            Some(shape) if self.passes > 0 => {
                write!(f, "{} pass(es) of {} steps ({})", self.passes, shape.kernel.depth, Describe(shape))?;
                if self.single_steps > 0 {
                    write!(f, " + {} single step(s)", self.single_steps)?;
                }
                Ok(())
            }
            _ => write!(f, "{} single step(s), none fused", self.single_steps),
        }
    }
}

/// The schedule of `steps` steps for `precision`. `fuse` forces the depth (1: single steps
/// only); without it the default shape's depth, or for fewer steps than that the deepest built
/// depth that fits (fewer than the smallest: single steps).
pub fn schedule(steps: usize, fuse: Option<usize>, precision: Precision) -> Result<Schedule> {
    let shape = match fuse {
        Some(0) => return Err(Error::BadArgument("--fuse must be at least 1".into())),
        Some(1) => None,
        Some(depth) => Some(shape_with_depth(depth, precision)?),
        None => {
            let default = default_shape(precision);
            if steps >= default.kernel.depth {
                Some(default)
            } else {
                depths(precision)
                    .into_iter()
                    .rev()
                    .find(|&d| d <= steps)
                    .map(|d| shape_with_depth(d, precision))
                    .transpose()?
            }
        }
    };
    Ok(match shape {
        Some(shape) => {
            let depth = shape.kernel.depth;
            Schedule { shape: Some(shape), passes: steps / depth, single_steps: steps % depth }
        }
        None => Schedule { shape: None, passes: 0, single_steps: steps },
    })
}

/// Blocks along x and y: tiles of 32 × `tile_rows` that step by their output part.
fn columns(shape: TemporalShape, grid: Grid3) -> (u32, u32) {
    let depth = shape.kernel.depth;
    (
        grid.nx.div_ceil(temporal_out_tile(LANES, depth)),
        grid.ny.div_ceil(temporal_out_tile(shape.tile_rows(), depth)),
    )
}

/// Runs along z per column of tiles, for `resident_blocks` blocks on the GPU at once: the
/// count that minimises the modelled time, waves of blocks times the iterations of a block
/// (its planes plus the `3K − 3` that fill and drain its queues).
pub fn runs(shape: TemporalShape, grid: Grid3, resident_blocks: usize) -> Result<u32> {
    check(shape)?;
    let (bx, by) = columns(shape, grid);
    let columns = bx as usize * by as usize;
    let fill = 3 * shape.kernel.depth - 3;
    let cost = |runs: u32| {
        let planes = grid.nz.div_ceil(runs) as usize;
        (columns * runs as usize).div_ceil(resident_blocks.max(1)) * (planes + fill)
    };
    let most = grid.nz.min(MAX_GRID_YZ).min(64);
    Ok((1..=most).min_by_key(|&runs| (cost(runs), runs)).unwrap_or(1))
}

/// Bytes of shared memory per block of `shape` for elements of `precision`.
pub fn shared_bytes(shape: TemporalShape, precision: Precision) -> Result<usize> {
    check(shape)?;
    Ok(temporal_shared_elements(shape.kernel.depth, shape.warps as usize) * precision.bytes())
}

/// Refuses a shape that cannot launch: a block needs 1 to [`MAX_BLOCK_THREADS`]` / 32` warps,
/// and a tile (32 lanes wide, `warps × rows` tall) wider and taller than twice the depth, which
/// is at least 1. Whether its kernel is built is [`entry_point`]'s to say.
pub fn check(shape: TemporalShape) -> Result<()> {
    let TemporalShape { kernel: TemporalKernel { depth, rows }, warps } = shape;
    let max_warps = MAX_BLOCK_THREADS / LANES;
    let tile_rows = u64::from(warps).saturating_mul(rows as u64);
    let twice_depth = (depth as u64).saturating_mul(2);
    if !(1..=max_warps).contains(&warps)
        || depth == 0
        || twice_depth >= u64::from(LANES)
        || twice_depth >= tile_rows
        || tile_rows > u64::from(u32::MAX)
    {
        return Err(Error::BadArgument(format!(
            "temporal shape {}: a block needs 1 to {max_warps} warps and a tile wider and taller than twice the depth (at least 1)",
            Describe(shape)
        )));
    }
    Ok(())
}

/// Blocks of 32 × `warps` threads cover the x–y plane with overlapping tiles; `runs` blocks
/// share each column along z; shared memory for elements of `precision`.
pub fn launch_config(
    shape: TemporalShape,
    grid: Grid3,
    precision: Precision,
    runs: u32,
) -> Result<LaunchConfig> {
    let shared_mem_bytes = shared_bytes(shape, precision)?;
    let (bx, by) = columns(shape, grid);
    let runs = runs.clamp(1, grid.nz);
    if by > MAX_GRID_YZ || runs > MAX_GRID_YZ {
        return Err(Error::BadShape(format!(
            "the temporal kernel would need {by}×{runs} blocks along y×z for a {}×{}×{} grid, over CUDA's limit of {MAX_GRID_YZ}",
            grid.nz, grid.ny, grid.nx
        )));
    }
    Ok(LaunchConfig {
        grid_dim: (bx, by, runs),
        block_dim: (LANES, shape.warps, 1),
        shared_mem_bytes: shared_mem_bytes as u32,
    })
}

/// A shape as the reports write it: `k4 r4 w8` (depth, rows per thread, warps per block).
pub struct Describe(pub TemporalShape);

impl fmt::Display for Describe {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let TemporalShape { kernel: TemporalKernel { depth, rows }, warps } = self.0;
        write!(f, "k{depth} r{rows} w{warps}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CUBE_512: Grid3 = Grid3 { nx: 512, ny: 512, nz: 512 };

    #[test]
    fn the_defaults_are_built() {
        for precision in Precision::ALL {
            assert!(sweep(precision).contains(&default_shape(precision)), "{precision}");
            for &shape in sweep(precision) {
                assert!(entry_point(shape, precision).is_ok(), "{} {precision}", Describe(shape));
                assert!(launch_config(shape, Grid3 { nx: 3, ny: 3, nz: 3 }, precision, 1).is_ok());
            }
            // Every built kernel is in the sweep.
            for &kernel in kernels(precision) {
                assert!(sweep(precision).iter().any(|s| s.kernel == kernel), "{kernel:?} {precision}");
            }
        }
        let k2_r2 = TemporalShape { kernel: TemporalKernel { depth: 2, rows: 2 }, warps: 8 };
        assert_eq!(entry_point(k2_r2, Precision::F64).unwrap(), "stencil7_temporal_k2_r2_f64");
        let missing = TemporalShape { kernel: TemporalKernel { depth: 5, rows: 3 }, warps: 8 };
        assert!(entry_point(missing, Precision::F32).unwrap_err().to_string().contains("k2_r4"));
    }

    #[test]
    fn schedules_split_steps_into_passes_and_single_steps() {
        let depth = TEMPORAL_F32.kernel.depth;
        let s = schedule(64, None, Precision::F32).unwrap();
        assert_eq!((s.shape, s.passes, s.single_steps), (Some(TEMPORAL_F32), 64 / depth, 64 % depth));
        let s = schedule(depth + 1, None, Precision::F32).unwrap();
        assert_eq!((s.passes, s.single_steps), (1, 1));
        // Fewer steps than the default depth: the deepest built depth that fits.
        let s = schedule(depth - 1, None, Precision::F32).unwrap();
        assert_eq!((s.shape.unwrap().kernel.depth, s.passes, s.single_steps), (depth - 1, 1, 0));
        let s = schedule(1, None, Precision::F32).unwrap();
        assert_eq!((s.shape, s.passes, s.single_steps), (None, 0, 1));
        let s = schedule(10, Some(1), Precision::F64).unwrap();
        assert_eq!((s.shape, s.single_steps), (None, 10));
        let s = schedule(10, Some(3), Precision::F64).unwrap();
        assert_eq!((s.shape.unwrap().kernel.depth, s.passes, s.single_steps), (3, 3, 1));
        assert!(
            schedule(10, Some(5), Precision::F32).unwrap_err().to_string().contains("fusion depths [2, 3, 4")
        );
        assert!(schedule(10, Some(0), Precision::F32).is_err());
    }

    #[test]
    fn tiles_overlap_by_the_depth() {
        let depth_4 = TemporalShape { kernel: TemporalKernel { depth: 4, rows: 4 }, warps: 8 };
        let config = launch_config(depth_4, CUBE_512, Precision::F32, 1).unwrap();
        // 32 lanes and 8 warps × 4 rows, less 4 on each side: 24 × 24 output points per tile.
        assert_eq!(config.grid_dim, (512_u32.div_ceil(24), 512_u32.div_ceil(24), 1));
        assert_eq!(config.block_dim, (32, 8, 1));
        assert_eq!(config.shared_mem_bytes as usize, 3 * 4 * 8 * 2 * 32 * 4);
        let too_deep = TemporalShape { kernel: TemporalKernel { depth: 4, rows: 1 }, warps: 8 };
        assert!(launch_config(too_deep, CUBE_512, Precision::F32, 1).is_err());
        for warps in [0, 33, u32::MAX] {
            let shape = TemporalShape { warps, ..depth_4 };
            let err = launch_config(shape, CUBE_512, Precision::F32, 1).unwrap_err().to_string();
            assert!(err.contains("a block needs 1 to 32 warps"), "{warps}: {err}");
        }
    }

    #[test]
    fn runs_fill_the_gpu_without_short_runs() {
        // 22 × 22 = 484 columns of depth-4 tiles on 264 resident blocks: one run per column is
        // 2 waves of 512 planes; more runs only add fill.
        let depth_4 = TemporalShape { kernel: TemporalKernel { depth: 4, rows: 4 }, warps: 8 };
        assert_eq!(runs(depth_4, CUBE_512, 264).unwrap(), 1);
        // A small grid (4 columns) is split along z until the GPU is busy.
        let small = Grid3 { nx: 40, ny: 40, nz: 512 };
        let r = runs(TEMPORAL_F32, small, 264).unwrap();
        assert!(r >= 32, "{r}");
        // Never more runs than planes.
        assert_eq!(runs(TEMPORAL_F32, Grid3 { nx: 8, ny: 8, nz: 3 }, 264).unwrap(), 3);
    }
}
