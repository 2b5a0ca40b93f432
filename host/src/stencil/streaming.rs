//! Launching the streaming kernel: its entry points (one per [`StreamingKernel`]: vector width,
//! rows per thread, planes held ahead, planes prefetched), the vector width fitted to the grid's
//! rows, and the blocks of each launch with the [`Window`] it writes, all from
//! [`StreamingShape`]s.

use std::fmt;
use std::ops::Range;

use cudarc::driver::LaunchConfig;
use gpu_kernels::device::warp::LANES;
use gpu_kernels::stencil::tiles::{
    IN_WAVES, KEPT_L2_PERCENT_F32, KEPT_L2_PERCENT_F64, MAX_CLUSTER, NO_CLUSTER, STREAMING_ALONG_Y_F32,
    STREAMING_ALONG_Y_F64, STREAMING_F32, STREAMING_F32_H100, STREAMING_F64, STREAMING_F64_H100,
    STREAMING_MIN_BLOCKS_PER_SM, STREAMING_SWEEP_F32, STREAMING_SWEEP_F64, StreamAxis, StreamingKernel,
    StreamingShape, TunedCard,
};
use gpu_kernels::stencil::{Grid3, STREAMING_KERNELS_F32, STREAMING_KERNELS_F64, Window};

use super::variant::MAX_GRID_YZ;
use crate::gpu::MAX_BLOCK_THREADS;
use crate::{Error, Precision, Result};

/// The default shape for elements of type `precision` (the H200's table, the sweep's first; every
/// card's default has its kernel: [`default_shape_on`]).
pub fn default_shape(precision: Precision) -> StreamingShape {
    precision.pick(STREAMING_F32, STREAMING_F64)
}

/// The default shape for elements of type `precision` from `card`'s table (`tiles.rs`): the
/// H100's walks runs of [`SHORT_RUN_PLANES`](gpu_kernels::stencil::tiles::SHORT_RUN_PLANES) where
/// the H200's walks one wave.
pub fn default_shape_on(precision: Precision, card: TunedCard) -> StreamingShape {
    match card {
        TunedCard::H200 => default_shape(precision),
        TunedCard::H100 => precision.pick(STREAMING_F32_H100, STREAMING_F64_H100),
    }
}

/// The shape along y for elements of type `precision`, for grids whose x–y plane does not fit
/// in one wave of the default.
pub fn along_y_shape(precision: Precision) -> StreamingShape {
    precision.pick(STREAMING_ALONG_Y_F32, STREAMING_ALONG_Y_F64)
}

/// [`along_y_shape`] where `card`'s table walks along y: none on the H100, whose runs along z
/// beat one wave along y.
pub fn along_y_shape_on(precision: Precision, card: TunedCard) -> Option<StreamingShape> {
    (card == TunedCard::H200).then(|| along_y_shape(precision))
}

/// The benchmarks' sweep of shapes for `precision`, the default first.
pub fn sweep(precision: Precision) -> &'static [StreamingShape] {
    precision.pick(&STREAMING_SWEEP_F32, &STREAMING_SWEEP_F64)
}

/// Every streaming entry point built for `precision`.
pub fn kernels(precision: Precision) -> &'static [StreamingKernel] {
    precision.pick(STREAMING_KERNELS_F32, STREAMING_KERNELS_F64)
}

/// `shape` fitted to the grid's rows: when its vector width does not divide `nx`, the widest
/// narrower one that does, in the same kernel if that is built, else in the default kernel
/// (whose narrower widths down to one point per load are all built): rows of odd length take
/// one point per load.
pub fn fit(shape: StreamingShape, grid: Grid3, precision: Precision) -> StreamingShape {
    let divides = |vector: usize| (grid.nx as usize).is_multiple_of(vector);
    if divides(shape.kernel.vector) {
        return shape;
    }
    for kernel in [shape.kernel, default_shape(precision).kernel] {
        let mut vector = kernel.vector.min(shape.kernel.vector);
        while vector > 1 {
            vector /= 2;
            let narrower = StreamingKernel { vector, ..kernel };
            if divides(vector) && kernels(precision).contains(&narrower) {
                return StreamingShape { kernel: narrower, ..shape };
            }
        }
    }
    StreamingShape { kernel: StreamingKernel { vector: 1, ..default_shape(precision).kernel }, ..shape }
}

/// `shape` with its block made narrower and taller, the same threads, while half its width still
/// spans the grid's rows (down to a warp): threads past the end of a row do nothing, and on
/// narrow grids a wide block would leave most of its threads so. E.g. the `f32` default's 128×4
/// threads of 4 points on 128-point rows become 32×16 (at 128³ on an H200, 126.8 % of the copy
/// instead of 98.2 %, `tune_streaming`).
pub fn narrow(shape: StreamingShape, grid: Grid3, precision: Precision) -> StreamingShape {
    let vector = fit(shape, grid, precision).kernel.vector as u64;
    let [mut bx, mut by] = shape.block;
    while bx / 2 >= LANES && bx.is_multiple_of(2) && u64::from(bx / 2) * vector >= u64::from(grid.nx) {
        (bx, by) = (bx / 2, by.saturating_mul(2));
    }
    StreamingShape { block: [bx, by], ..shape }
}

/// The names of the streaming kernels built for `precision`, as [`Describe::kernel`] writes them
/// (`v4 r1 a0 p1`).
pub fn kernel_names(precision: Precision) -> Vec<String> {
    kernels(precision).iter().map(|&k| Describe(shape_of(k)).kernel()).collect()
}

/// The entry point of `shape` for `precision`, if it is built.
pub fn entry_point(shape: StreamingShape, precision: Precision) -> Result<String> {
    let kernel = shape.kernel;
    if !kernels(precision).contains(&kernel) {
        return Err(Error::BadArgument(format!(
            "no streaming kernel {} is built for {precision}; the built ones are {}",
            Describe(shape).kernel(),
            kernel_names(precision).join(", ")
        )));
    }
    let StreamingKernel { vector, rows, ahead, prefetch } = kernel;
    let axis = match shape.axis {
        StreamAxis::Z => "",
        StreamAxis::Y => "y_",
    };
    Ok(format!("stencil7_streaming_{axis}v{vector}_r{rows}_a{ahead}_p{prefetch}_{}", precision.name()))
}

/// `shape` with fewer planes per block (halved, down to one) while the grid gives fewer than
/// [`STREAMING_MIN_BLOCKS_PER_SM`] blocks per SM: on small grids the default's long runs along z
/// would leave most SMs idle. On grids so long along the walk that its runs would outnumber
/// CUDA's limit of blocks along z (`MAX_GRID_YZ`), more planes per block instead, as few as keep
/// within it (runs of 8 planes reach it at 524,281 planes). Shapes launched [`IN_WAVES`] fill the
/// GPU by themselves.
pub fn fill(shape: StreamingShape, grid: Grid3, multiprocessors: u32) -> StreamingShape {
    if shape.planes == IN_WAVES {
        return shape;
    }
    let Across { columns, rows, walk } = across(shape, grid, 0..grid.nz);
    let wanted = u64::from(STREAMING_MIN_BLOCKS_PER_SM) * u64::from(multiprocessors);
    let mut planes = shape.planes;
    while planes > 1
        && u64::from(columns).saturating_mul(u64::from(rows) * u64::from(walk.div_ceil(planes))) < wanted
    {
        planes /= 2;
    }
    StreamingShape { planes: planes.max(walk.div_ceil(MAX_GRID_YZ)), ..shape }
}

/// How the blocks of `shape` lie on the planes `z` of `grid`.
struct Across {
    /// Tiles (one block's patches) along x,
    columns: u32,
    /// and rows of them across the walk (along y, or along z over `z` when walking along y).
    rows: u32,
    /// Planes along the walk (of `z`, or the grid's rows when walking along y).
    walk: u32,
}

fn across(shape: StreamingShape, grid: Grid3, z: Range<u32>) -> Across {
    let (rows, walk) = match shape.axis {
        StreamAxis::Z => (grid.ny, z.len() as u32),
        StreamAxis::Y => (z.len() as u32, grid.ny),
    };
    // At most the extents themselves, whatever the shape (a block of no points counts one).
    let tiles = |points: u32, per_block: u64| u64::from(points).div_ceil(per_block.max(1)) as u32;
    Across {
        columns: tiles(grid.nx, shape.block_points_x()),
        rows: tiles(rows, shape.block_points_y()),
        walk,
    }
}

/// The cluster size a launch of `shape` over the planes `z` of `grid` takes: the largest up to
/// [`StreamingShape::cluster`] that divides its rows of tiles (the launch's `blockIdx.y`), so the
/// grid needs no padding (e.g. 64 rows in clusters of 8, 12 rows in clusters of 6 for a shape's
/// 8, 13 rows plainly).
pub fn cluster_size(shape: StreamingShape, grid: Grid3, z: Range<u32>) -> u32 {
    cluster_dividing(across(shape, grid, z).rows, shape.cluster)
}

/// The largest cluster of at most `most` (and [`MAX_CLUSTER`]) blocks that divides `rows`.
fn cluster_dividing(rows: u32, most: u32) -> u32 {
    (1..=most.clamp(1, MAX_CLUSTER)).rev().find(|size| rows.is_multiple_of(*size)).unwrap_or(1)
}

/// Refuses a cluster of `cluster` blocks: 1 ([`NO_CLUSTER`])
/// to [`MAX_CLUSTER`].
pub fn check_cluster(cluster: u32) -> Result<()> {
    if !(1..=MAX_CLUSTER).contains(&cluster) {
        return Err(Error::BadArgument(format!(
            "a cluster of {cluster} blocks: give 1 (none) to {MAX_CLUSTER}"
        )));
    }
    Ok(())
}

/// One launch of the seven-point streaming kernel: its blocks and the planes they write.
#[derive(Clone, Copy, Debug)]
pub struct StreamingLaunch {
    pub config: LaunchConfig,
    pub window: Window,
    /// Whether the GPU holds all its blocks at once.
    pub one_wave: bool,
    /// Blocks per thread-block cluster along the launch's y ([`cluster_size`]; 1: none).
    pub cluster: u32,
}

/// The launch of one time step of `shape` over the planes `z` of `grid` (`0..nz` for all of
/// them), on a GPU that holds `resident` blocks of the shape at once (the occupancy
/// calculator's): blocks cover the plane's tiles, and `⌈planes of z / planes⌉` blocks share each
/// column of tiles along z. [`IN_WAVES`]: if the tiles are at most `resident`, `resident / tiles`
/// runs per column (at least one), so the launch is one wave; else runs of
/// [`StreamingKernel::run_planes`] (longer for tiles by tensor copies).
/// Along y ([`StreamAxis::Y`]) the same with the roles of y and z swapped: blocks cover the x
/// extent and the planes `z`, and share the grid's rows. In clusters of [`cluster_size`] blocks
/// (`resident` then counts blocks in whole clusters).
pub fn launch(shape: StreamingShape, grid: Grid3, z: Range<u32>, resident: usize) -> Result<StreamingLaunch> {
    check(shape, grid)?;
    if z.is_empty() || z.end > grid.nz {
        return Err(Error::BadArgument(format!(
            "planes {z:?} are not a non-empty range of the grid's {} planes",
            grid.nz
        )));
    }
    let Across { columns, rows, walk: planes } = across(shape, grid, z.clone());
    let tiles = columns.saturating_mul(rows);
    let resident = u32::try_from(resident).unwrap_or(u32::MAX);
    let runs = match shape.planes {
        IN_WAVES if tiles <= resident => (resident / tiles).clamp(1, planes),
        IN_WAVES => planes.div_ceil(shape.kernel.run_planes()),
        per_block => planes.div_ceil(per_block),
    };
    let grid_dim = (columns, rows, runs);
    if grid_dim.1 > MAX_GRID_YZ || grid_dim.2 > MAX_GRID_YZ {
        return Err(Error::BadShape(format!(
            "the streaming kernel would need {}×{} blocks along y×z for a {}×{}×{} grid, over CUDA's limit of {MAX_GRID_YZ}",
            grid_dim.1, grid_dim.2, grid.nz, grid.ny, grid.nx
        )));
    }
    let [bx, by] = shape.block;
    let blocks = u64::from(columns) * u64::from(rows) * u64::from(runs);
    Ok(StreamingLaunch {
        config: LaunchConfig { grid_dim, block_dim: (bx, by, 1), shared_mem_bytes: 0 },
        window: Window { z_begin: z.start, z_end: z.end },
        one_wave: blocks <= u64::from(resident),
        cluster: cluster_dividing(rows, shape.cluster),
    })
}

/// The share of L2 (percent) that a run of steps in `precision` keeps for the next step by
/// default ([`KEPT_L2_PERCENT_F64`], [`KEPT_L2_PERCENT_F32`]).
pub fn kept_l2_percent(precision: Precision) -> u32 {
    precision.pick(KEPT_L2_PERCENT_F32, KEPT_L2_PERCENT_F64)
}

/// The planes each run of `launch` (of `shape` on `grid`, elements of `element_bytes`) stores to
/// stay in L2 for the next step, which walks back through them
/// ([`Walk`](gpu_kernels::stencil::Walk)): as many as `kept_bytes` of L2 hold, with every
/// run of the launch storing one plane of its column of tiles at a time. None if the launch is
/// more than one wave: its last blocks hold only part of the grid, which the next step's first
/// blocks do not read.
pub fn kept_planes(
    launch: &StreamingLaunch,
    shape: StreamingShape,
    grid: Grid3,
    element_bytes: usize,
    kept_bytes: usize,
) -> u32 {
    if !launch.one_wave {
        return 0;
    }
    let Window { z_begin, z_end } = launch.window;
    let Across { walk, .. } = across(shape, grid, z_begin..z_end);
    let window_points = grid.nx as usize * grid.ny as usize * (z_end - z_begin) as usize;
    let stored_per_plane =
        window_points / walk.max(1) as usize * launch.config.grid_dim.2 as usize * element_bytes;
    let planes = kept_bytes / stored_per_plane.max(1);
    u32::try_from(planes).unwrap_or(u32::MAX)
}

/// Refuses a shape that cannot launch on `grid`: its blocks must hold 1 to
/// [`MAX_BLOCK_THREADS`] threads of at least one row each, its vector divide the rows, and its
/// cluster be 1 to [`MAX_CLUSTER`] blocks. Whether its kernel is built is
/// [`entry_point`]'s to say.
pub fn check(shape: StreamingShape, grid: Grid3) -> Result<()> {
    check_cluster(shape.cluster)?;
    if shape.kernel.rows == 0 {
        return Err(Error::BadArgument(format!("{}: a thread needs at least one row", Describe(shape))));
    }
    let [bx, by] = shape.block;
    if bx == 0 || by == 0 || u64::from(bx) * u64::from(by) > u64::from(MAX_BLOCK_THREADS) {
        return Err(Error::BadArgument(format!(
            "streaming block {bx}×{by}: a block needs 1 to {MAX_BLOCK_THREADS} threads"
        )));
    }
    if !(grid.nx as usize).is_multiple_of(shape.kernel.vector) {
        return Err(Error::BadArgument(format!(
            "a vector of {} points does not divide rows of {} points",
            shape.kernel.vector, grid.nx
        )));
    }
    Ok(())
}

/// The blocks of a launch of `shape` over the whole grid on a GPU that holds `resident` of them
/// at once: blocks of `shape.block` threads cover the x–y plane, each thread a `rows × vector`
/// patch, and `⌈nz / planes⌉` blocks share each column of patches along z (a shape [`IN_WAVES`]:
/// one wave if the GPU holds a block for every tile, else runs of
/// [`StreamingKernel::run_planes`], as [`launch`] says). For the star and box kernels, which
/// take no window and walk along z only.
pub fn launch_config(shape: StreamingShape, grid: Grid3, resident: usize) -> Result<LaunchConfig> {
    if shape.axis != StreamAxis::Z {
        return Err(Error::BadArgument(format!(
            "{}: the high-order star and box kernels walk along z only",
            Describe(shape)
        )));
    }
    Ok(launch(shape, grid, 0..grid.nz, resident)?.config)
}

/// The default shape with `kernel`'s entry point.
pub fn shape_of(kernel: StreamingKernel) -> StreamingShape {
    StreamingShape { kernel, ..STREAMING_F32 }
}

/// `32x8 v4 r1 a0 p0 z8`: block, vector, rows, ahead, prefetch, planes, as the sweep names them,
/// then ` c8` for shapes launched in clusters of 8 blocks and ` along y` for shapes that walk
/// along y. Parsed back by [`FromStr`](std::str::FromStr) (`stencil --launch`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Describe(pub StreamingShape);

impl Describe {
    /// The entry point's part alone: `v4 r1 a0 p0`.
    pub fn kernel(&self) -> String {
        let StreamingKernel { vector, rows, ahead, prefetch } = self.0.kernel;
        format!("v{vector} r{rows} a{ahead} p{prefetch}")
    }
}

impl std::str::FromStr for Describe {
    type Err = Error;

    /// The shape a description names, as [`Display`](fmt::Display) writes it: `32x4 v2 r1 a1 p1
    /// z32` (planes per block), `32x16 v4 r1 a1 p1 waves` (one wave), then optionally ` c2` and
    /// ` along y`. Checks the syntax and the numbers' ranges only; whether such a kernel is built
    /// and fits the grid is the launch's to say.
    fn from_str(text: &str) -> Result<Self> {
        let bad = |why: String| {
            Error::BadArgument(format!(
                "launch `{text}`: {why}; expected `BXxBY vV rR aA pP zN` or `BXxBY vV rR aA pP waves`, \
                 then optionally ` cN` (clusters of N blocks), as stencil_shapes_sweep names them, \
                 e.g. `32x4 v2 r1 a1 p1 z32`"
            ))
        };
        let mut words = text.split_whitespace();
        let mut next = |what: &str| words.next().ok_or_else(|| bad(format!("no {what}")));
        let block = next("block `BXxBY`")?;
        let block = block
            .split_once('x')
            .and_then(|(x, y)| Some([x.parse::<u32>().ok()?, y.parse::<u32>().ok()?]))
            .filter(|b| b.iter().all(|&n| n >= 1))
            .ok_or_else(|| bad(format!("`{block}` is not a block `BXxBY` of two positive numbers")))?;
        let mut number = |prefix: char, what: &str| -> Result<usize> {
            let word = next(&format!("{what} `{prefix}N`"))?;
            word.strip_prefix(prefix)
                .and_then(|n| n.parse().ok())
                .ok_or_else(|| bad(format!("`{word}` is not {what} `{prefix}N`")))
        };
        let kernel = StreamingKernel {
            vector: number('v', "points a thread")?,
            rows: number('r', "rows a thread")?,
            ahead: number('a', "halo staging")?,
            prefetch: number('p', "planes prefetched")?,
        };
        if kernel.vector == 0 || kernel.rows == 0 {
            return Err(bad("points and rows a thread start at 1".into()));
        }
        let planes = match next("planes `zN` or `waves`")? {
            "waves" => IN_WAVES,
            word => word
                .strip_prefix('z')
                .and_then(|n| n.parse::<u32>().ok())
                .filter(|&n| n != IN_WAVES)
                .ok_or_else(|| bad(format!("`{word}` is not planes a block `zN` (N ≥ 1) or `waves`")))?,
        };
        let mut shape = StreamingShape { kernel, block, planes, axis: StreamAxis::Z, cluster: NO_CLUSTER };
        let rest: Vec<&str> = words.collect();
        let along_y = rest.ends_with(&["along", "y"]);
        let clusters = &rest[..rest.len() - if along_y { 2 } else { 0 }];
        if along_y {
            shape.axis = StreamAxis::Y;
        }
        match clusters {
            [] => {}
            [word] => {
                shape.cluster = word
                    .strip_prefix('c')
                    .and_then(|n| n.parse::<u32>().ok())
                    .filter(|n| (NO_CLUSTER..=MAX_CLUSTER).contains(n))
                    .ok_or_else(|| {
                        bad(format!("`{word}` is not a cluster `cN` of 1 to {MAX_CLUSTER} blocks"))
                    })?
            }
            more => return Err(bad(format!("`{}` after the planes", more.join(" ")))),
        }
        Ok(Describe(shape))
    }
}

impl fmt::Display for Describe {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let StreamingShape { block: [bx, by], planes, axis, cluster, .. } = self.0;
        if planes == IN_WAVES {
            write!(f, "{bx}x{by} {} waves", self.kernel())?;
        } else {
            write!(f, "{bx}x{by} {} z{planes}", self.kernel())?;
        }
        if cluster > 1 {
            write!(f, " c{cluster}")?;
        }
        match axis {
            StreamAxis::Z => Ok(()),
            StreamAxis::Y => write!(f, " along y"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gpu_kernels::stencil::tiles::{
        CLUSTER_SWEEP, HALO_BY_TENSOR_COPY, NO_CLUSTER, RUN_PLANES, TENSOR_RUN_PLANES,
    };

    const CUBE_512: Grid3 = Grid3 { nx: 512, ny: 512, nz: 512 };

    fn kernel(vector: usize, rows: usize, ahead: usize, prefetch: usize) -> StreamingKernel {
        StreamingKernel { vector, rows, ahead, prefetch }
    }

    /// A shape walking along z, launched plainly.
    fn along_z(kernel: StreamingKernel, block: [u32; 2], planes: u32) -> StreamingShape {
        StreamingShape { kernel, block, planes, axis: StreamAxis::Z, cluster: NO_CLUSTER }
    }

    #[test]
    fn each_cards_default_is_in_the_sweep_with_the_one_kernel() {
        for precision in Precision::ALL {
            for card in TunedCard::ALL {
                let default = default_shape_on(precision, card);
                assert!(sweep(precision).contains(&default), "{card:?} {precision}");
                assert_eq!(default.kernel, default_shape(precision).kernel, "the kernel is every card's");
            }
            assert_eq!(default_shape_on(precision, TunedCard::H200), default_shape(precision));
            let short = gpu_kernels::stencil::tiles::SHORT_RUN_PLANES;
            assert_eq!(default_shape_on(precision, TunedCard::H100).planes, short);
            assert_eq!(along_y_shape_on(precision, TunedCard::H200), Some(along_y_shape(precision)));
            assert_eq!(along_y_shape_on(precision, TunedCard::H100), None);
        }
    }

    #[test]
    fn defaults_are_built_and_named_after_their_constants() {
        for precision in Precision::ALL {
            let shape = default_shape(precision);
            let name = entry_point(shape, precision).unwrap();
            assert!(name.starts_with("stencil7_streaming_v") && name.ends_with(precision.name()), "{name}");
        }
        assert_eq!(
            entry_point(shape_of(kernel(4, 1, 0, 0)), Precision::F32).unwrap(),
            "stencil7_streaming_v4_r1_a0_p0_f32"
        );
        let err = entry_point(shape_of(kernel(16, 1, 0, 0)), Precision::F32).unwrap_err().to_string();
        assert!(err.contains("no streaming kernel v16 r1 a0 p0") && err.contains("v4 r1 a0 p0"), "{err}");
    }

    #[test]
    fn every_shape_of_the_sweep_and_its_narrower_vectors_is_built() {
        for precision in Precision::ALL {
            assert_eq!(sweep(precision)[0], default_shape(precision));
            for &shape in sweep(precision) {
                for nx in [512, 510, 513] {
                    let fitted = fit(shape, Grid3 { nx, ny: 3, nz: 3 }, precision);
                    assert_eq!(nx as usize % fitted.kernel.vector, 0);
                    assert!(
                        entry_point(fitted, precision).is_ok(),
                        "{} {precision} nx = {nx}",
                        Describe(fitted)
                    );
                }
            }
        }
    }

    #[test]
    fn the_vector_narrows_until_it_divides_the_rows() {
        let shape = shape_of(kernel(4, 1, 0, 0));
        let fitted = |nx| fit(shape, Grid3 { nx, ny: 5, nz: 5 }, Precision::F32).kernel.vector;
        assert_eq!((fitted(512), fitted(510), fitted(999), fitted(3)), (4, 2, 1, 1));
    }

    #[test]
    fn launch_shape_covers_the_grid() {
        let shape = along_z(kernel(4, 1, 0, 0), [32, 8], 32);
        let config = launch_config(shape, CUBE_512, 264).unwrap();
        assert_eq!(
            (config.grid_dim, config.block_dim, config.shared_mem_bytes),
            ((4, 64, 16), (32, 8, 1), 0)
        );
        let odd = launch_config(shape.with_vector(1), Grid3 { nx: 33, ny: 31, nz: 29 }, 264).unwrap();
        assert_eq!(odd.grid_dim, (2, 4, 1));
    }

    #[test]
    fn blocks_narrow_to_the_rows_they_span() {
        let shape = along_z(kernel(4, 1, 0, 1), [128, 4], IN_WAVES);
        let block = |nx: u32| narrow(shape, Grid3 { nx, ny: 64, nz: 64 }, Precision::F32).block;
        assert_eq!(block(512), [128, 4], "512 points take 128 threads of 4");
        assert_eq!(block(300), [128, 4], "64 threads of 4 would not span 300 points");
        assert_eq!(block(256), [64, 8]);
        assert_eq!(block(128), [32, 16]);
        assert_eq!(block(8), [32, 16], "down to a warp");
        // Odd rows take one point per load: 128 threads span only 128 points.
        assert_eq!(block(129), [128, 4]);
        assert_eq!(
            narrow(StreamingShape { block: [96, 4], ..shape }, Grid3 { nx: 8, ny: 8, nz: 8 }, Precision::F32)
                .block,
            [48, 8]
        );
    }

    #[test]
    fn small_grids_get_fewer_planes_per_block() {
        let runs = along_z(kernel(4, 1, 0, 1), [32, 16], 32);
        let planes = |n: u32| fill(runs, Grid3 { nx: n, ny: n, nz: n }, 132).planes;
        // 256³: 32 columns of blocks, 16 planes give 512 blocks; 128³: 8 columns, 2 planes.
        assert_eq!((planes(512), planes(256), planes(128), planes(3)), (32, 16, 2, 1));
        // A shape launched in waves fills the GPU by itself.
        assert_eq!(fill(STREAMING_F32, Grid3 { nx: 128, ny: 128, nz: 128 }, 132), STREAMING_F32);
        // Runs stretched to keep within CUDA's blocks along z: the H100's runs of 8 planes on a
        // column of a million planes take 16 (62,500 runs), and launch.
        let tall = Grid3 { nx: 512, ny: 4, nz: 1_000_000 };
        let stretched = fill(STREAMING_F32_H100, tall, 132);
        assert_eq!(stretched.planes, 16);
        assert_eq!(launch(stretched, tall, 0..tall.nz, 264).unwrap().config.grid_dim.2, 62_500);
        assert!(launch(STREAMING_F32_H100, tall, 0..tall.nz, 264).is_err(), "unstretched: 125,000 runs");
    }

    #[test]
    fn a_run_in_one_wave_keeps_the_planes_its_share_of_l2_holds() {
        // 256×512×1024 f64 along y, one wave of one run per column: each step of the walk stores
        // a 1024 × 256 cross-section, 2 MiB; 25 % of 60 MiB holds 7 of them.
        let grid = Grid3 { nx: 1024, ny: 512, nz: 256 };
        let share = |percent: usize| (60 << 20) * percent / 100;
        let y = launch(STREAMING_ALONG_Y_F64, grid, 0..256, 132).unwrap();
        let kept = |percent| kept_planes(&y, STREAMING_ALONG_Y_F64, grid, 8, share(percent));
        assert_eq!((kept(25), kept(100), kept(0)), (7, 30, 0));
        // Two runs per column store two cross-sections a step: half the planes each.
        let two_runs = launch(STREAMING_ALONG_Y_F64, grid, 0..256, 256).unwrap();
        assert_eq!(two_runs.config.grid_dim.2, 2);
        assert_eq!(kept_planes(&two_runs, STREAMING_ALONG_Y_F64, grid, 8, share(100)), 15);
        // A window's planes: cross-sections of its 12 planes only (1024 × 12 × 8 bytes), 8 tiles
        // with 16 runs each on 132 resident blocks.
        let part = launch(STREAMING_ALONG_Y_F64, grid, 8..20, 132).unwrap();
        assert_eq!(part.config.grid_dim.2, 16);
        assert_eq!(kept_planes(&part, STREAMING_ALONG_Y_F64, grid, 8, share(100)), 40);
        // More than one wave: none (its last blocks hold only part of the grid).
        let z = launch(STREAMING_F64, grid, 0..256, 264).unwrap();
        assert_eq!(kept_planes(&z, STREAMING_F64, grid, 8, share(100)), 0);
        assert_eq!(
            (kept_l2_percent(Precision::F64), kept_l2_percent(Precision::F32)),
            (KEPT_L2_PERCENT_F64, KEPT_L2_PERCENT_F32)
        );
    }

    #[test]
    fn along_y_the_blocks_tile_the_x_z_cross_section() {
        // 256×512×1024 f64: the x–y plane is 512 tiles of the default (runs, 264 resident), the
        // x–z cross-section 128 tiles of the shape along y (one wave of 132).
        let grid = Grid3 { nx: 1024, ny: 512, nz: 256 };
        let z = launch(STREAMING_F64, grid, 0..256, 264).unwrap();
        assert!(!z.one_wave);
        let y = launch(STREAMING_ALONG_Y_F64, grid, 0..256, 132).unwrap();
        assert_eq!((y.config.grid_dim, y.one_wave), ((4, 32, 1), true));
        assert_eq!((y.window.z_begin, y.window.z_end), (0, 256));
        // A window of planes: the blocks cover its planes only, and share the grid's rows.
        let runs = StreamingShape { planes: 32, ..STREAMING_ALONG_Y_F64 };
        let part = launch(runs, grid, 8..20, 132).unwrap();
        assert_eq!((part.config.grid_dim, part.window.z_begin, part.window.z_end), ((4, 2, 16), 8, 20));
        assert_eq!(
            entry_point(STREAMING_ALONG_Y_F64, Precision::F64).unwrap(),
            "stencil7_streaming_y_v2_r2_a0_p1_f64"
        );
        assert!(Describe(STREAMING_ALONG_Y_F64).to_string().ends_with("waves along y"));
        // The high-order kernels walk along z only.
        assert!(
            launch_config(STREAMING_ALONG_Y_F32, grid, 132).unwrap_err().to_string().contains("along z only")
        );
    }

    #[test]
    fn clusters_take_the_largest_size_that_divides_the_rows_of_tiles() {
        // STREAMING_F32 at 512³: 128×4 threads of 4 points, 128 rows of 4 rows of tiles.
        let rows = |ny: u32| Grid3 { nx: 512, ny, nz: 64 };
        let size = |cluster: u32, ny: u32| cluster_size(STREAMING_F32.with_cluster(cluster), rows(ny), 0..64);
        assert_eq!((size(8, 512), size(4, 512), size(1, 512)), (8, 4, 1), "128 rows of tiles");
        assert_eq!(size(8, 48), 6, "12 rows of tiles: 6 divides them");
        assert_eq!(size(8, 52), 1, "13 rows of tiles, a prime over 8: plainly");
        assert_eq!(size(8, 12), 3, "3 rows of tiles");
        // Along y the rows of tiles lie along z, 8 planes each (4 threads of 2 rows): 256 planes
        // are 32 rows of tiles, the window 8..20 two.
        let y = STREAMING_ALONG_Y_F64.with_cluster(8);
        let grid = Grid3 { nx: 1024, ny: 512, nz: 256 };
        assert_eq!((cluster_size(y, grid, 0..256), cluster_size(y, grid, 8..20)), (8, 2));
        // The launch carries its size, and a GPU's resident blocks then count whole clusters.
        let launch = launch(STREAMING_F32.with_cluster(8), rows(48), 0..64, 132).unwrap();
        assert_eq!((launch.cluster, launch.config.grid_dim.1), (6, 12));
        assert_eq!(super::launch(STREAMING_F32, rows(48), 0..64, 132).unwrap().cluster, 1);
    }

    #[test]
    fn clusters_are_named_and_bad_sizes_refused() {
        assert_eq!(Describe(STREAMING_F32.with_cluster(4)).to_string(), "128x4 v4 r1 a0 p1 waves c4");
        assert_eq!(Describe(STREAMING_F32).to_string(), "128x4 v4 r1 a0 p1 waves");
        assert!(Describe(STREAMING_ALONG_Y_F64.with_cluster(8)).to_string().ends_with("waves c8 along y"));
        for bad in [0, MAX_CLUSTER + 1, 16] {
            let err = launch(STREAMING_F32.with_cluster(bad), CUBE_512, 0..512, 132).unwrap_err();
            assert!(matches!(err, Error::BadArgument(_)), "{err}");
            assert!(
                err.to_string().contains(&format!("a cluster of {bad} blocks: give 1 (none) to 8")),
                "{err}"
            );
            assert!(check_cluster(bad).is_err());
        }
        assert!((1..=MAX_CLUSTER).all(|size| check_cluster(size).is_ok()));
        // The sweeps hold each default in every cluster size of CLUSTER_SWEEP, after the rest.
        for precision in Precision::ALL {
            let tail: Vec<u32> =
                sweep(precision).iter().rev().take(CLUSTER_SWEEP.len()).map(|s| s.cluster).collect();
            assert_eq!(tail, CLUSTER_SWEEP.iter().rev().copied().collect::<Vec<_>>());
            assert!(
                sweep(precision)
                    .iter()
                    .rev()
                    .take(CLUSTER_SWEEP.len())
                    .all(|s| s.with_cluster(1) == default_shape(precision))
            );
        }
    }

    #[test]
    fn descriptions_parse_back_to_their_shapes() {
        let clustered = default_shape(Precision::F32).with_cluster(MAX_CLUSTER);
        let along_y = along_y_shape(Precision::F64).with_cluster(2);
        let shapes = [Precision::F32, Precision::F64].into_iter().flat_map(|p| sweep(p).iter().copied());
        for shape in shapes.chain([clustered, along_y, along_y_shape(Precision::F32)]) {
            let text = Describe(shape).to_string();
            assert_eq!(text.parse::<Describe>().unwrap(), Describe(shape), "{text}");
        }
        let waves: Describe = "32x16 v4 r1 a1 p1 waves c1".parse().unwrap();
        assert_eq!((waves.0.block, waves.0.planes, waves.0.cluster), ([32, 16], IN_WAVES, NO_CLUSTER));
        assert_eq!(waves.0.kernel, kernel(4, 1, 1, 1));
    }

    #[test]
    fn bad_descriptions_say_what_is_wrong() {
        for (text, says) in [
            ("", "no block"),
            ("32*4 v2 r1 a1 p1 z32", "`32*4` is not a block"),
            ("0x4 v2 r1 a1 p1 z32", "`0x4` is not a block"),
            ("32x4 v2 r1 a1", "no planes prefetched"),
            ("32x4 2 r1 a1 p1 z32", "`2` is not points a thread"),
            ("32x4 v0 r1 a1 p1 z32", "start at 1"),
            ("32x4 v2 r1 a1 p1 z0", "`z0` is not planes a block"),
            ("32x4 v2 r1 a1 p1 planes", "`planes` is not planes"),
            ("32x4 v2 r1 a1 p1 z32 c9", "`c9` is not a cluster"),
            ("32x4 v2 r1 a1 p1 z32 c2 c2", "`c2 c2` after the planes"),
            ("32x4 v2 r1 a1 p1 z32 along x", "`along x` after the planes"),
        ] {
            let err = text.parse::<Describe>().unwrap_err().to_string();
            assert!(err.contains(says) && err.contains("e.g. `32x4 v2 r1 a1 p1 z32`"), "{text}: {err}");
        }
    }

    #[test]
    fn bad_shapes_are_refused() {
        let shape = STREAMING_F32;
        let refuse = |s: StreamingShape, g: Grid3| launch_config(s, g, 264).unwrap_err().to_string();
        assert!(refuse(StreamingShape { block: [64, 32], ..shape }, CUBE_512).contains("1 to 1024"));
        // Whose thread count overflows u32: refused, not wrapped to an empty block.
        assert!(
            refuse(StreamingShape { block: [1 << 16, 1 << 16], ..shape }, CUBE_512).contains("1 to 1024")
        );
        assert!(refuse(shape.with_vector(4), Grid3 { nx: 6, ny: 3, nz: 3 }).contains("does not divide"));
        let no_rows = StreamingShape { kernel: StreamingKernel { rows: 0, ..shape.kernel }, ..shape };
        assert!(refuse(no_rows, CUBE_512).contains("a thread needs at least one row"));
        let tall = Grid3 { nx: 4, ny: 3, nz: 3_000_000 };
        assert!(refuse(StreamingShape { planes: 1, ..shape }, tall).contains("over CUDA's limit"));
        let err = launch(shape, CUBE_512, 5..5, 264).unwrap_err().to_string();
        assert!(err.contains("not a non-empty range of the grid's 512 planes"), "{err}");
        assert!(launch(shape, CUBE_512, 0..513, 264).is_err());
    }

    #[test]
    fn one_wave_when_the_tiles_fit_else_runs() {
        // 256 × 8-point tiles: 2 columns × 64 rows of tiles on 512 × 512 planes.
        let shape = along_z(kernel(2, 2, 0, 1), [128, 4], IN_WAVES);
        let blocks = |grid: Grid3, z: Range<u32>, resident: usize| {
            let launch = launch(shape, grid, z, resident).unwrap();
            (launch.config.grid_dim, (launch.window.z_begin, launch.window.z_end))
        };
        // 132 resident blocks hold the 128 tiles of 512³: one block walks each whole column.
        assert_eq!(blocks(CUBE_512, 0..512, 132), ((2, 64, 1), (0, 512)));
        // Few tiles: the columns split into runs that fill the resident blocks, at most one per plane.
        let small = Grid3 { nx: 128, ny: 128, nz: 128 };
        assert_eq!(blocks(small, 0..128, 264), ((1, 16, 16), (0, 128)));
        assert_eq!(blocks(small, 60..63, 264), ((1, 16, 3), (60, 63)));
        // 4 × 64 tiles on 1024-point rows outnumber 132 blocks: runs of RUN_PLANES planes.
        let wide = Grid3 { nx: 1024, ny: 512, nz: 256 };
        assert_eq!(blocks(wide, 0..256, 132), ((4, 64, 256 / RUN_PLANES), (0, 256)));
        // Tiles by tensor copies (16 × 32 tiles of 64 × 16 points, more than 264 blocks) walk
        // longer runs there: 2 of 128 planes, not 8 of 32.
        let tensor = StreamingShape { kernel: kernel(2, 4, HALO_BY_TENSOR_COPY, 0), block: [32, 4], ..shape };
        assert_eq!(
            launch(tensor, wide, 0..256, 264).unwrap().config.grid_dim,
            (16, 32, 256 / TENSOR_RUN_PLANES)
        );
        // In one wave where the GPU holds a block for every tile, as the other kernels.
        assert_eq!(launch(tensor, CUBE_512, 0..512, 264).unwrap().config.grid_dim, (8, 32, 1));
        // Planes per block: over the window, whatever the resident blocks.
        let runs = StreamingShape { planes: 32, ..shape };
        assert_eq!(launch(runs, wide, 8..100, 1).unwrap().config.grid_dim, (4, 64, 3));
    }
}
