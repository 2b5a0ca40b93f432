//! Launching the high-order star kernels (`stencil_star<R>_v<V>_a<A>_<t>`, two rows a thread
//! `stencil_star<R>_v<V>_r2_a<A>_<t>`) and the box kernels
//! (`stencil_box27_v<V>_r<ROWS>_<t>`): each shape's launch shape from `tiles` (vector width, rows
//! per thread, halo loaded a plane ahead or not, block), its vector narrowed to one that divides
//! the rows, and the streaming kernel's runs along z.

use cudarc::driver::LaunchConfig;
use gpu_kernels::stencil::tiles::{
    BOX27_F32, BOX27_F64, BOX27_F64_H100, CLUSTER_SWEEP, HALO_BY_TENSOR_COPY, HALO_IN_SHARED, HaloRing,
    IN_WAVES, NO_CLUSTER, RUN_PLANES, SHAPE_PREFETCH, SHAPE_SWEEP_BLOCKS, SHAPE_SWEEP_PLANES, STAR13_F32,
    STAR13_F64, STAR25_F32, STAR25_F32_H100, STAR25_F64, STAR25_F64_H100, StreamAxis, StreamingKernel,
    StreamingShape, TensorRing, TunedCard, star_tiled_in_tile_dim,
};
use gpu_kernels::stencil::{
    BOX_KERNELS_F32, BOX_KERNELS_F64, Grid3, STAR_KERNELS_F32, STAR_KERNELS_F64, STAR_ROWS_KERNELS_F32,
    STAR_ROWS_KERNELS_F64, STAR_SHARED_KERNELS_F32, STAR_SHARED_KERNELS_F64, STAR_TENSOR_KERNELS_F32,
    STAR_TENSOR_KERNELS_F64,
};

use gpu_kernels::stencil::Coeffs;
use gpu_kernels::stencil::box27::BoxCoeffs;
use gpu_kernels::stencil::star::StarCoeffs;
use ndarray::{Array3, ArrayView3};

use super::variant::MAX_GRID_YZ;
use super::{StencilProblem, StencilShape, StencilVariant, streaming};
use crate::{Element, Error, Precision, Result};

/// The star shape of order `order` (2: star13, 4: star25).
pub fn star_shape(order: usize) -> Result<StencilShape> {
    const STARS: [StencilShape; 2] = [StencilShape::Star13, StencilShape::Star25];
    STARS.into_iter().find(|s| s.radius() == order).ok_or_else(|| {
        let built: Vec<String> = STARS.iter().map(|s| format!("{} ({})", s.radius(), s.name())).collect();
        Error::BadArgument(format!(
            "no star stencil of order {order} is built: orders {}",
            built.join(" and ")
        ))
    })
}

/// Every streaming kernel built for `shape` (a high-order star or the box) in `precision` with
/// its halo in global memory, as `(vector, rows, ahead)`; none for the seven-point star, whose
/// kernels are `streaming`'s. The stars' shared-halo kernels are [`shared_kernels`].
pub fn kernels(shape: StencilShape, precision: Precision) -> Vec<(usize, usize, usize)> {
    match shape {
        StencilShape::Star7 => Vec::new(),
        StencilShape::Box27 => {
            let built = precision.pick(BOX_KERNELS_F32, BOX_KERNELS_F64);
            built.iter().map(|&(v, rows)| (v, rows, 0)).collect()
        }
        StencilShape::Star13 | StencilShape::Star25 => {
            let one_row = precision.pick(STAR_KERNELS_F32, STAR_KERNELS_F64);
            let two_rows = precision.pick(STAR_ROWS_KERNELS_F32, STAR_ROWS_KERNELS_F64);
            let one_row = one_row.iter().filter(|k| k.0 == shape.radius()).map(|&(_, v, a)| (v, 1, a));
            let two_rows = two_rows.iter().filter(|k| k.0 == shape.radius()).map(|&(_, v, a)| (v, 2, a));
            one_row.chain(two_rows).collect()
        }
    }
}

/// The stars' kernels built for `shape` in `precision` with their halo in shared memory
/// ([`HALO_IN_SHARED`]), as `(vector, block)`; none for the other shapes.
pub fn shared_kernels(shape: StencilShape, precision: Precision) -> impl Iterator<Item = (usize, [u32; 2])> {
    let built = precision.pick(STAR_SHARED_KERNELS_F32, STAR_SHARED_KERNELS_F64);
    let star = matches!(shape, StencilShape::Star13 | StencilShape::Star25);
    built
        .iter()
        .filter(move |k| star && k.0 == shape.radius())
        .map(|&(_, v, bx, by)| (v, [bx as u32, by as u32]))
}

/// The stars' kernels built for `shape` in `precision` whose x–y tiles arrive by tensor copies
/// ([`HALO_BY_TENSOR_COPY`]), as `(vector, block, rows)`; none for the other shapes.
pub fn tensor_kernels(
    shape: StencilShape,
    precision: Precision,
) -> impl Iterator<Item = (usize, [u32; 2], usize)> {
    let built = precision.pick(STAR_TENSOR_KERNELS_F32, STAR_TENSOR_KERNELS_F64);
    let star = matches!(shape, StencilShape::Star13 | StencilShape::Star25);
    built
        .iter()
        .filter(move |k| star && k.0 == shape.radius())
        .map(|&(_, v, bx, by, rows)| (v, [bx as u32, by as u32], rows))
}

/// The tensor copies' ring of `launch` for a star of order `order`, if its tiles arrive by
/// tensor copies.
pub fn tensor_ring(order: usize, launch: StreamingShape) -> Option<TensorRing> {
    let [bx, by] = launch.block;
    (launch.kernel.ahead == HALO_BY_TENSOR_COPY).then_some(TensorRing {
        order,
        vector: launch.kernel.vector,
        block: [bx as usize, by as usize],
        rows: launch.kernel.rows,
    })
}

/// Whether the tensor-copy kernel of `ring` can walk `grid` of `precision`: whole rows of
/// patches, and a grid and box the copy engine takes (`tensor_map::check_box`).
pub fn tensor_fits(ring: TensorRing, grid: Grid3, precision: Precision) -> bool {
    let dims = [grid.nx, grid.ny, grid.nz].map(u64::from);
    (grid.nx as usize).is_multiple_of(ring.vector)
        && crate::tensor_map::check_box(dims, ring.box_dims(), precision.bytes() as u64).is_ok()
}

/// Bytes of dynamic shared memory `launch` of a star of order `order` takes: its ring's, if it
/// has one, else none. For a launch whose kernel is built ([`entry_point`]).
pub fn shared_bytes(order: usize, launch: StreamingShape, precision: Precision) -> usize {
    let bytes = precision.bytes();
    match (halo_ring(order, launch), tensor_ring(order, launch)) {
        (Some(ring), _) => ring.shared_bytes(bytes),
        (_, Some(ring)) => ring.shared_bytes(bytes),
        _ => 0,
    }
}

/// The shared-memory ring of `launch` for a star of order `order`, if its halo is staged there.
pub fn halo_ring(order: usize, launch: StreamingShape) -> Option<HaloRing> {
    let [bx, by] = launch.block;
    (launch.kernel.ahead == HALO_IN_SHARED).then_some(HaloRing {
        order,
        vector: launch.kernel.vector,
        block: [bx as usize, by as usize],
    })
}

/// The launch shape of `shape` (a high-order star or the box) in `precision` from `tiles`, from
/// the table of `card` (the GPU's: [`GpuInfo::tuned_card`](crate::GpuInfo::tuned_card)).
pub fn default_launch(shape: StencilShape, precision: Precision, card: TunedCard) -> Result<StreamingShape> {
    use Precision::{F32, F64};
    use TunedCard::{H100, H200};
    Ok(match (shape, precision, card) {
        (StencilShape::Star7, F32 | F64, _) => {
            return Err(Error::BadArgument("the seven-point star launches as the streaming variant".into()));
        }
        (StencilShape::Star13, F32, _) => STAR13_F32,
        (StencilShape::Star13, F64, _) => STAR13_F64,
        (StencilShape::Star25, F32, H200) => STAR25_F32,
        (StencilShape::Star25, F32, H100) => STAR25_F32_H100,
        (StencilShape::Star25, F64, H200) => STAR25_F64,
        (StencilShape::Star25, F64, H100) => STAR25_F64_H100,
        (StencilShape::Box27, F32, _) => BOX27_F32,
        (StencilShape::Box27, F64, H200) => BOX27_F64,
        (StencilShape::Box27, F64, H100) => BOX27_F64_H100,
    })
}

/// Every high-order shape with every card that has a table ([`StencilShape::HIGH_ORDER`] ×
/// [`TunedCard::ALL`]): between them, their [`sweep`]s name every launch built.
pub fn tables() -> impl Iterator<Item = (StencilShape, TunedCard)> {
    StencilShape::HIGH_ORDER.into_iter().flat_map(|shape| TunedCard::ALL.map(|card| (shape, card)))
}

/// The benchmarks' sweep of `shape` in `precision` on `card`: the default, then every built kernel in every
/// block of [`SHAPE_SWEEP_BLOCKS`] (a shared-halo or tensor-copy kernel in the blocks it is built for), in runs
/// of [`RUN_PLANES`] and in one wave ([`IN_WAVES`]: where the GPU holds a block for every tile),
/// then the default kernel in every such block with the planes per block of [`SHAPE_SWEEP_PLANES`],
/// each launched plainly, then the default in each thread-block cluster size of [`CLUSTER_SWEEP`]
/// and plainly ([`NO_CLUSTER`]), but for its own.
pub fn sweep(shape: StencilShape, precision: Precision, card: TunedCard) -> Result<Vec<StreamingShape>> {
    let default = default_launch(shape, precision, card)?;
    let plain = default.with_cluster(NO_CLUSTER);
    // The shapes' L2 prefetch, but for the tensor-copy kernels, which take none.
    let launch = |vector, rows, ahead, block, planes| StreamingShape {
        kernel: StreamingKernel {
            vector,
            rows,
            ahead,
            prefetch: if ahead == HALO_BY_TENSOR_COPY { 0 } else { SHAPE_PREFETCH },
        },
        block,
        planes,
        ..plain
    };
    let in_runs_and_waves = move |vector, rows, ahead, blocks: Vec<[u32; 2]>| {
        [RUN_PLANES, IN_WAVES].into_iter().flat_map(move |planes| {
            blocks.clone().into_iter().map(move |block| launch(vector, rows, ahead, block, planes))
        })
    };
    let global = kernels(shape, precision)
        .into_iter()
        .flat_map(|(v, rows, a)| in_runs_and_waves(v, rows, a, SHAPE_SWEEP_BLOCKS.to_vec()));
    let shared = shared_kernels(shape, precision)
        .flat_map(|(v, block)| in_runs_and_waves(v, 1, HALO_IN_SHARED, vec![block]));
    let tensor = tensor_kernels(shape, precision)
        .flat_map(|(v, block, rows)| in_runs_and_waves(v, rows, HALO_BY_TENSOR_COPY, vec![block]));
    // The default's planes, in the blocks its kernel is built for.
    let StreamingKernel { vector, rows, .. } = default.kernel;
    let default_blocks: Vec<[u32; 2]> = match default.kernel.ahead {
        HALO_IN_SHARED => shared_kernels(shape, precision).filter(|k| k.0 == vector).map(|k| k.1).collect(),
        HALO_BY_TENSOR_COPY => {
            tensor_kernels(shape, precision).filter(|k| (k.0, k.2) == (vector, rows)).map(|k| k.1).collect()
        }
        _ => SHAPE_SWEEP_BLOCKS.to_vec(),
    };
    let planes = SHAPE_SWEEP_PLANES.into_iter().flat_map(|planes| {
        default_blocks.clone().into_iter().map(move |block| StreamingShape { block, planes, ..plain })
    });
    let clusters = std::iter::once(NO_CLUSTER)
        .chain(CLUSTER_SWEEP)
        .map(|cluster| default.with_cluster(cluster))
        .filter(|s| *s != default);
    let others = global.chain(shared).chain(tensor).chain(planes).filter(|s| *s != plain).chain(clusters);
    Ok(std::iter::once(default).chain(others).collect())
}

/// The entry point of `launch` for `shape` in `precision`, if it is built: walking along z, with
/// the L2 prefetch of the shape's kernels.
pub fn entry_point(shape: StencilShape, launch: StreamingShape, precision: Precision) -> Result<String> {
    let StreamingKernel { vector, rows, ahead, prefetch } = launch.kernel;
    if launch.axis != StreamAxis::Z {
        return Err(Error::BadArgument(format!("the {shape} kernels walk along z, not along y")));
    }
    if ahead == HALO_BY_TENSOR_COPY {
        return tensor_entry_point(shape, launch, precision);
    }
    if prefetch != SHAPE_PREFETCH {
        return Err(Error::BadArgument(format!(
            "the {shape} kernels prefetch {SHAPE_PREFETCH} plane(s) into L2, not {prefetch}: give p{SHAPE_PREFETCH}"
        )));
    }
    if ahead != HALO_IN_SHARED && !kernels(shape, precision).contains(&(vector, rows, ahead)) {
        return Err(Error::BadArgument(format!(
            "no {shape} kernel with {vector} points per row and {rows} row{} per thread{} is built for {precision}",
            if rows == 1 { "" } else { "s" },
            match (ahead, rows) {
                (1, 1) => " and its halo loaded a plane ahead",
                (1, _) => " and its y rows loaded a plane ahead",
                _ => "",
            }
        )));
    }
    if ahead == HALO_IN_SHARED {
        let block = launch.block;
        if !shared_kernels(shape, precision).any(|k| k == (vector, block)) {
            return Err(Error::BadArgument(format!(
                "no {shape} kernel with its halo in shared memory is built for {precision} in blocks of {}x{} threads of {vector} points",
                block[0], block[1]
            )));
        }
        return Ok(format!(
            "stencil_star{}_shared_b{}x{}_v{vector}_{}",
            shape.radius(),
            block[0],
            block[1],
            precision.name()
        ));
    }
    let name = precision.name();
    Ok(match shape {
        StencilShape::Box27 => format!("stencil_box27_v{vector}_r{rows}_{name}"),
        _ if rows == 2 => format!("stencil_star{}_v{vector}_r2_a{ahead}_{name}", shape.radius()),
        _ => format!("stencil_star{}_v{vector}_a{ahead}_{name}", shape.radius()),
    })
}

/// The entry point of `launch`, a star's tensor-copy kernel ([`HALO_BY_TENSOR_COPY`]), if it is
/// built: it takes no L2 prefetch.
fn tensor_entry_point(shape: StencilShape, launch: StreamingShape, precision: Precision) -> Result<String> {
    let StreamingKernel { vector, rows, prefetch, .. } = launch.kernel;
    let [bx, by] = launch.block;
    if prefetch != 0 {
        return Err(Error::BadArgument(format!(
            "the {shape} kernel with its tiles brought by tensor copies prefetches no planes into L2 (its copies run ahead): give p0, not p{prefetch}"
        )));
    }
    if !tensor_kernels(shape, precision).any(|k| k == (vector, launch.block, rows)) {
        let built: Vec<String> = tensor_kernels(shape, precision)
            .map(|(v, [x, y], r)| format!("{x}x{y} v{v} r{r} a{HALO_BY_TENSOR_COPY} p0"))
            .collect();
        return Err(Error::BadArgument(format!(
            "no {shape} kernel with its tiles brought by tensor copies is built for {precision} in blocks of {bx}x{by} threads of {rows} row(s) of {vector} points; built: {}",
            if built.is_empty() { "none".to_owned() } else { built.join(", ") }
        )));
    }
    Ok(format!("stencil_star{}_tensor_b{bx}x{by}_v{vector}_r{rows}_{}", shape.radius(), precision.name()))
}

/// The launch a tensor-copy launch falls back to where the tensor copies cannot run (a GPU
/// without them, or a grid they do not take): one row of the same vector a thread, its halo a
/// plane ahead in registers, with the shapes' L2 prefetch, in the same blocks, in runs of
/// [`RUN_PLANES`] planes (the H100's default before the tensor copies,
/// `tiles::STAR25_F64_H100_REGISTERS`).
pub fn without_tensor_copies(launch: StreamingShape) -> StreamingShape {
    let kernel = StreamingKernel { rows: 1, ahead: 1, prefetch: SHAPE_PREFETCH, ..launch.kernel };
    StreamingShape { kernel, planes: RUN_PLANES, ..launch }
}

/// `launch` with its vector narrowed, where it does not divide the rows, to the widest built
/// one that does (the same rows per thread and `ahead`; one point per row is built for each).
///
/// A tensor-copy launch stays one where `tensor_copies` (the Hopper build is loaded) and the
/// grid fits it ([`tensor_fits`]); elsewhere it becomes [`without_tensor_copies`]'s.
pub fn fit(
    shape: StencilShape,
    launch: StreamingShape,
    grid: Grid3,
    precision: Precision,
    tensor_copies: bool,
) -> StreamingShape {
    if let Some(ring) = halo_ring(shape.radius(), launch) {
        // Where the ring's kernel does not fit the grid, the halo a plane ahead in registers.
        if ring.fits(grid, precision.bytes()) {
            return launch;
        }
        let registers = StreamingShape { kernel: StreamingKernel { ahead: 1, ..launch.kernel }, ..launch };
        return fit(shape, registers, grid, precision, tensor_copies);
    }
    if let Some(ring) = tensor_ring(shape.radius(), launch) {
        if tensor_copies && tensor_fits(ring, grid, precision) {
            return launch;
        }
        return fit(shape, without_tensor_copies(launch), grid, precision, tensor_copies);
    }
    let vector = kernels(shape, precision)
        .into_iter()
        .filter(|&(v, rows, a)| {
            (rows, a) == (launch.kernel.rows, launch.kernel.ahead)
                && v <= launch.kernel.vector
                && (grid.nx as usize).is_multiple_of(v)
        })
        .map(|(v, _, _)| v)
        .max()
        .unwrap_or(1);
    launch.with_vector(vector)
}

/// The entry point and launch shape of `launch` for `shape` on `grid`: the vector fitted to the
/// rows ([`fit`], `tensor_copies` saying whether the Hopper build is loaded), fewer planes per
/// block on small grids ([`streaming::fill`]). Its blocks are [`streaming::launch_config`]'s,
/// given how many of them the GPU holds at once.
pub fn shape_launch(
    shape: StencilShape,
    launch: StreamingShape,
    grid: Grid3,
    precision: Precision,
    multiprocessors: u32,
    tensor_copies: bool,
) -> Result<(String, StreamingShape)> {
    let launch = fit(shape, launch, grid, precision, tensor_copies);
    streaming::check(launch, grid)?;
    let launch = streaming::fill(launch, grid, multiprocessors);
    Ok((entry_point(shape, launch, precision)?, launch))
}

/// The order-`R` star's coefficients from `values` laid out as [`StencilShape::coefficient_layout`]
/// says (centre, x for distances `1..=R`, y, z); `values` holds `1 + 3R` numbers.
pub fn star_coeffs<T: Element, const R: usize>(values: &[f64]) -> StarCoeffs<T, R> {
    let axis = |a: usize| core::array::from_fn(|d| T::from_f64(values[1 + a * R + d]));
    StarCoeffs { center: T::from_f64(values[0]), x: axis(0), y: axis(1), z: axis(2) }
}

/// The box stencil's coefficients from `[centre, face, edge, corner]`.
pub fn box_coeffs<T: Element>(values: &[f64]) -> BoxCoeffs<T> {
    let [center, face, edge, corner] = [0, 1, 2, 3].map(|i| T::from_f64(values[i]));
    BoxCoeffs { center, face, edge, corner }
}

/// The variants built for `shape`: the seven-point star has them all; the high-order stars the
/// book's shared-memory tiled form (Fig. 8.8 with a halo of `R`) and the streaming kernel; the
/// box the streaming kernel.
pub fn variants(shape: StencilShape) -> &'static [StencilVariant] {
    match shape {
        StencilShape::Star7 => &StencilVariant::ALL,
        StencilShape::Star13 | StencilShape::Star25 => {
            &[StencilVariant::SharedTiled, StencilVariant::Streaming]
        }
        StencilShape::Box27 => &[StencilVariant::Streaming],
    }
}

/// Entry point, grid, block and shared memory of the tiled order-`order` star on `grid` with
/// elements of `precision`: `T³` threads per block, one block per output tile of edge `T − 2R`.
pub fn star_tiled_launch(order: usize, grid: Grid3, precision: Precision) -> Result<(String, LaunchConfig)> {
    star_shape(order)?;
    let t = star_tiled_in_tile_dim(order) as u32;
    let out = t - 2 * order as u32;
    let grid_dim = (grid.nx.div_ceil(out), grid.ny.div_ceil(out), grid.nz.div_ceil(out));
    if grid_dim.1 > MAX_GRID_YZ || grid_dim.2 > MAX_GRID_YZ {
        return Err(Error::BadShape(format!(
            "the tiled star{} kernel would need {}×{} blocks along y×z, over CUDA's limit of {MAX_GRID_YZ}",
            6 * order + 1,
            grid_dim.1,
            grid_dim.2
        )));
    }
    let shared_mem_bytes = (t * t * t) as usize * precision.bytes();
    let config = LaunchConfig { grid_dim, block_dim: (t, t, t), shared_mem_bytes: shared_mem_bytes as u32 };
    Ok((format!("stencil_star{order}_shared_tiled_{}", precision.name()), config))
}

/// `steps` time steps of `shape` with `coeffs` (its [`coefficient_count`](StencilShape::coefficient_count)
/// numbers) on `problem`'s input; GPU time in milliseconds. The seven-point star runs the
/// streaming kernel with `coeffs` as its seven coefficients, the others their own kernels.
pub fn run_shape<T: Element>(
    problem: &mut StencilProblem<'_, T>,
    shape: StencilShape,
    coeffs: &[f64],
    steps: usize,
) -> Result<f64> {
    run_shape_variant(problem, shape, StencilVariant::Streaming, coeffs, steps)
}

/// As [`run_shape`], with one of the shape's [`variants`].
pub fn run_shape_variant<T: Element>(
    problem: &mut StencilProblem<'_, T>,
    shape: StencilShape,
    variant: StencilVariant,
    coeffs: &[f64],
    steps: usize,
) -> Result<f64> {
    shape.check_coeffs(coeffs)?;
    if !variants(shape).contains(&variant) {
        return Err(Error::BadArgument(format!(
            "the {shape} stencil is built as {}, not {variant}",
            variants(shape).iter().map(|v| v.name()).collect::<Vec<_>>().join(" and ")
        )));
    }
    let tiled = variant == StencilVariant::SharedTiled;
    match shape {
        StencilShape::Star7 => {
            problem.set_coeffs(Coeffs(core::array::from_fn(|i| T::from_f64(coeffs[i]))));
            problem.run(variant, steps)
        }
        StencilShape::Star13 if tiled => problem.run_star_tiled(star_coeffs::<T, 2>(coeffs), steps),
        StencilShape::Star25 if tiled => problem.run_star_tiled(star_coeffs::<T, 4>(coeffs), steps),
        _ => {
            let launch = default_launch(shape, T::PRECISION, problem.gpu().info.tuned_card())?;
            run_shape_with(problem, shape, coeffs, launch, steps)
        }
    }
}

/// As [`run_shape`] for a high-order star or the box, with the launch shape `launch` (e.g. one
/// of [`sweep`]'s).
pub fn run_shape_with<T: Element>(
    problem: &mut StencilProblem<'_, T>,
    shape: StencilShape,
    coeffs: &[f64],
    launch: StreamingShape,
    steps: usize,
) -> Result<f64> {
    shape.check_coeffs(coeffs)?;
    match shape {
        StencilShape::Star7 => Err(Error::BadArgument(
            "the seven-point star takes the streaming kernel's shapes: run_shape".into(),
        )),
        StencilShape::Star13 => problem.run_star_with(star_coeffs::<T, 2>(coeffs), launch, steps),
        StencilShape::Star25 => problem.run_star_with(star_coeffs::<T, 4>(coeffs), launch, steps),
        StencilShape::Box27 => problem.run_box_with(box_coeffs(coeffs), launch, steps),
    }
}

/// The CPU reference of [`run_shape`]: `steps` steps of `shape` with `coeffs`.
pub fn reference_shape_steps<T: Element>(
    input: ArrayView3<T>,
    shape: StencilShape,
    coeffs: &[f64],
    steps: usize,
) -> Result<Array3<T>> {
    shape.check_coeffs(coeffs)?;
    let mut grid = input.to_owned();
    for _ in 0..steps {
        grid = match shape {
            StencilShape::Star7 => {
                super::reference_step(grid.view(), Coeffs(core::array::from_fn(|i| T::from_f64(coeffs[i]))))
            }
            StencilShape::Star13 => super::reference_star_step(grid.view(), star_coeffs::<T, 2>(coeffs)),
            StencilShape::Star25 => super::reference_star_step(grid.view(), star_coeffs::<T, 4>(coeffs)),
            StencilShape::Box27 => super::reference_box_step(grid.view(), box_coeffs(coeffs)),
        };
    }
    Ok(grid)
}

#[cfg(test)]
mod tests {
    use super::*;
    use gpu_kernels::stencil::tiles::{STAR25_F64_H100_REGISTERS, STAR25_F64_TWO_ROWS};

    #[test]
    fn vectors_fit_the_rows_and_shapes_have_their_orders() {
        let cube = Grid3 { nx: 512, ny: 512, nz: 512 };
        let wide = StencilShape::Star13;
        let four = StreamingShape {
            kernel: StreamingKernel { vector: 4, ahead: 1, ..STAR13_F32.kernel },
            ..STAR13_F32
        };
        assert_eq!(fit(wide, four, cube, Precision::F32, true).kernel.vector, 4);
        assert_eq!(
            fit(wide, four, Grid3 { nx: 514, ..cube }, Precision::F32, true).kernel,
            StreamingKernel { vector: 2, ..four.kernel }
        );
        assert_eq!(
            fit(StencilShape::Star25, four, Grid3 { nx: 515, ..cube }, Precision::F64, true).kernel.vector,
            1
        );
        let eight = four.with_vector(8);
        assert!(entry_point(wide, eight, Precision::F64).is_err(), "no 8-point f64 kernel");
        assert!(
            entry_point(StencilShape::Star25, eight, Precision::F32).is_err(),
            "no 8-point star25 kernel"
        );
        assert_eq!(star_shape(2).unwrap(), StencilShape::Star13);
        assert_eq!(star_shape(4).unwrap(), StencilShape::Star25);
        let err = star_shape(1).unwrap_err().to_string();
        assert!(err.contains("orders 2 (star13) and 4 (star25)"), "{err}");
        for card in TunedCard::ALL {
            assert!(default_launch(StencilShape::Star7, Precision::F32, card).is_err());
        }
        // The H100's table differs from the H200's in the star25 and the box in `f64` alone: in how
        // the launch is split along z, and in the star25 `f64` in its kernel (tensor copies).
        let differs = |shape, precision| {
            default_launch(shape, precision, TunedCard::H200).unwrap()
                != default_launch(shape, precision, TunedCard::H100).unwrap()
        };
        for shape in StencilShape::HIGH_ORDER {
            for precision in Precision::ALL {
                let expected = matches!(
                    (shape, precision),
                    (StencilShape::Star25, _) | (StencilShape::Box27, Precision::F64)
                );
                assert_eq!(differs(shape, precision), expected, "{shape} {precision}");
            }
        }
        assert_eq!(STAR25_F32_H100.planes, RUN_PLANES);
        assert_eq!(BOX27_F64_H100, StreamingShape { planes: RUN_PLANES, ..BOX27_F64 });
        assert_eq!(
            entry_point(StencilShape::Star25, STAR25_F64_H100, Precision::F64).unwrap(),
            "stencil_star4_tensor_b32x8_v2_r4_f64"
        );
        // Without tensor copies the H100's default runs one row in its blocks of 32×8.
        assert_eq!(
            without_tensor_copies(STAR25_F64_H100),
            StreamingShape { block: [32, 8], ..STAR25_F64_H100_REGISTERS }
        );
        assert_eq!(
            entry_point(StencilShape::Star25, STAR25_F64_H100_REGISTERS, Precision::F64).unwrap(),
            "stencil_star4_v2_a1_f64"
        );
        let (entry, launch) =
            shape_launch(StencilShape::Star25, STAR25_F64, cube, Precision::F64, 132, true).unwrap();
        assert_eq!(entry, "stencil_star4_tensor_b32x4_v2_r4_f64");
        assert_eq!(launch, STAR25_F64);
        let (entry, launch) =
            shape_launch(StencilShape::Star25, STAR25_F64_TWO_ROWS, cube, Precision::F64, 132, true).unwrap();
        assert_eq!(entry, "stencil_star4_v2_r2_a1_f64");
        assert_eq!(launch, STAR25_F64_TWO_ROWS);
        // Without tensor copies, the H200's default runs one row in runs of 32 planes.
        let (entry, launch) =
            shape_launch(StencilShape::Star25, STAR25_F64, cube, Precision::F64, 132, false).unwrap();
        assert_eq!((entry.as_str(), launch), ("stencil_star4_v2_a1_f64", STAR25_F64_H100_REGISTERS));
        let (entry, _) = shape_launch(
            StencilShape::Box27,
            BOX27_F32.with_vector(4),
            Grid3 { nx: 30, ny: 9, nz: 9 },
            Precision::F32,
            132,
            true,
        )
        .unwrap();
        assert_eq!(entry, "stencil_box27_v2_r1_f32");
        // Every form built (rows per thread, `ahead`) has a kernel of one point per row, which
        // `fit` narrows to on rows of any length.
        for shape in StencilShape::HIGH_ORDER {
            for precision in Precision::ALL {
                let built = kernels(shape, precision);
                for &(_, rows, ahead) in &built {
                    assert!(built.contains(&(1, rows, ahead)), "{shape} {precision}: r{rows} a{ahead}");
                }
            }
        }
        // The star25's `f64` default on odd rows: two rows of one point, the y rows still ahead;
        // in `f32`, two rows with the y rows ahead or not, each its own entry point; the star13
        // has no kernel with the y rows ahead, and says so.
        let (entry, _) = shape_launch(
            StencilShape::Star25,
            STAR25_F64_TWO_ROWS,
            Grid3 { nx: 31, ..cube },
            Precision::F64,
            132,
            true,
        )
        .unwrap();
        assert_eq!(entry, "stencil_star4_v1_r2_a1_f64");
        let two_rows = |ahead| StreamingShape {
            kernel: StreamingKernel { rows: 2, ahead, ..STAR25_F32.kernel },
            block: [32, 4],
            ..STAR25_F32
        };
        assert_eq!(
            entry_point(StencilShape::Star25, two_rows(0), Precision::F32).unwrap(),
            "stencil_star4_v4_r2_a0_f32"
        );
        let ahead = two_rows(1);
        // Only what is built: along z, with the shape's L2 prefetch.
        let along_y = StreamingShape { axis: StreamAxis::Y, ..STAR25_F64_TWO_ROWS };
        let err = entry_point(StencilShape::Star25, along_y, Precision::F64).unwrap_err().to_string();
        assert!(err.contains("walk along z, not along y"), "{err}");
        let no_prefetch = StreamingShape {
            kernel: StreamingKernel { prefetch: 0, ..STAR25_F64_TWO_ROWS.kernel },
            ..STAR25_F64_TWO_ROWS
        };
        let err = entry_point(StencilShape::Star25, no_prefetch, Precision::F64).unwrap_err().to_string();
        assert!(err.contains("give p1"), "{err}");
        assert_eq!(
            entry_point(StencilShape::Star25, ahead, Precision::F32).unwrap(),
            "stencil_star4_v4_r2_a1_f32"
        );
        let err = entry_point(StencilShape::Star13, ahead, Precision::F32).unwrap_err().to_string();
        assert!(err.contains("2 rows per thread and its y rows loaded a plane ahead"), "{err}");
        // Two rows per thread, narrowed on odd rows to one point per row, still two rows.
        let two_rows =
            StreamingShape { kernel: StreamingKernel { rows: 2, ..BOX27_F64.kernel }, ..BOX27_F64 };
        let (entry, _) = shape_launch(
            StencilShape::Box27,
            two_rows,
            Grid3 { nx: 31, ny: 9, nz: 9 },
            Precision::F64,
            132,
            true,
        )
        .unwrap();
        assert_eq!(entry, "stencil_box27_v1_r2_f64");
        let err = entry_point(StencilShape::Box27, two_rows.with_vector(8), Precision::F64)
            .unwrap_err()
            .to_string();
        assert!(err.contains("8 points per row and 2 rows per thread"), "{err}");
        for (shape, card) in tables() {
            for precision in Precision::ALL {
                let sweep = sweep(shape, precision, card).unwrap();
                assert_eq!(sweep[0], default_launch(shape, precision, card).unwrap());
                // Each kernel with its halo in global memory in every block, in runs and in one
                // wave; each shared-halo and tensor-copy one in its own block; the default's planes
                // in every block it is built in;
                // all plain; then the default in each other cluster size and plainly.
                let shared = shared_kernels(shape, precision).count();
                let tensor = tensor_kernels(shape, precision).count();
                let global = kernels(shape, precision).len();
                // A default in shared memory is built in one block, one by tensor copies in
                // the blocks listed for its vector and rows.
                let default_blocks = match sweep[0].kernel {
                    k if k.ahead == HALO_IN_SHARED => 1,
                    k if k.ahead == HALO_BY_TENSOR_COPY => tensor_kernels(shape, precision)
                        .filter(|&(v, _, r)| (v, r) == (k.vector, k.rows))
                        .count(),
                    _ => SHAPE_SWEEP_BLOCKS.len(),
                };
                let launches = 2 * global * SHAPE_SWEEP_BLOCKS.len()
                    + SHAPE_SWEEP_PLANES.len() * default_blocks
                    + 2 * shared
                    + 2 * tensor
                    + CLUSTER_SWEEP.len();
                assert_eq!(sweep.len(), launches, "each launch once, the default first");
                let unique: std::collections::HashSet<_> = sweep.iter().collect();
                assert_eq!(unique.len(), sweep.len(), "no launch twice");
                let default = sweep[0];
                let clustered = sweep[1..].iter().filter(|s| s.cluster != NO_CLUSTER);
                assert!(
                    clustered.clone().all(|s| *s == default.with_cluster(s.cluster)),
                    "only the default launches in clusters beyond its own row"
                );
                let sizes: Vec<u32> = clustered.map(|s| s.cluster).collect();
                let expected = CLUSTER_SWEEP.iter().filter(|&&c| c != default.cluster);
                assert_eq!(sizes, expected.copied().collect::<Vec<_>>());
                assert!(
                    !SHAPE_SWEEP_PLANES.iter().any(|p| [RUN_PLANES, IN_WAVES].contains(p)),
                    "the sweep's planes are apart from its runs and waves"
                );
                assert!(
                    [RUN_PLANES, IN_WAVES].contains(&sweep[0].planes)
                        || SHAPE_SWEEP_PLANES.contains(&sweep[0].planes),
                    "the default's planes are among the swept ones"
                );
                for launch in sweep {
                    entry_point(shape, launch, precision).unwrap();
                }
            }
        }
        // The 25-point star's halo in shared memory: built in blocks of 32×8 threads of 16-byte
        // rows; on rows its vector does not divide, or planes of 4 GiB, the halo a plane ahead in
        // registers instead.
        let shared = StreamingShape {
            kernel: StreamingKernel { rows: 1, ahead: HALO_IN_SHARED, ..STAR25_F64_TWO_ROWS.kernel },
            block: [32, 8],
            ..STAR25_F64_TWO_ROWS
        };
        assert_eq!(
            entry_point(StencilShape::Star25, shared, Precision::F64).unwrap(),
            "stencil_star4_shared_b32x8_v2_f64"
        );
        assert_eq!(halo_ring(4, shared).unwrap().shared_bytes(8), 3 * (64 + 8) * (8 + 8) * 8);
        assert_eq!(halo_ring(4, STAR25_F64), None);
        let err =
            entry_point(StencilShape::Star25, StreamingShape { block: [32, 16], ..shared }, Precision::F64)
                .unwrap_err();
        assert!(err.to_string().contains("blocks of 32x16 threads"), "{err}");
        assert!(entry_point(StencilShape::Star13, shared, Precision::F64).is_err(), "no shared-halo star13");
        assert_eq!(fit(StencilShape::Star25, shared, cube, Precision::F64, true), shared);
        let odd = fit(StencilShape::Star25, shared, Grid3 { nx: 515, ..cube }, Precision::F64, true);
        assert_eq!((odd.kernel.ahead, odd.kernel.vector), (1, 1));
        let huge = fit(
            StencilShape::Star25,
            shared,
            Grid3 { nx: 1 << 16, ny: 1 << 13, nz: 9 },
            Precision::F64,
            true,
        );
        assert_eq!((huge.kernel.ahead, huge.kernel.vector), (1, 2));
        // The star25's tiles by tensor copies: built in blocks of 32×4 threads of four rows of
        // 16-byte patches, taking no L2 prefetch; without the Hopper build, or on rows whose
        // bytes are no multiple of 16, one row with its halo a plane ahead in registers.
        let tensor = StreamingShape {
            kernel: StreamingKernel { vector: 2, rows: 4, ahead: HALO_BY_TENSOR_COPY, prefetch: 0 },
            block: [32, 4],
            ..STAR25_F64
        };
        assert_eq!(
            entry_point(StencilShape::Star25, tensor, Precision::F64).unwrap(),
            "stencil_star4_tensor_b32x4_v2_r4_f64"
        );
        let ring = tensor_ring(4, tensor).unwrap();
        assert_eq!(ring.box_dims(), [72, 24, 1]);
        assert_eq!(ring.shared_bytes(8), 7 * 72 * 24 * 8 + 7 * 8);
        assert_eq!(shared_bytes(4, tensor, Precision::F64), ring.shared_bytes(8));
        assert_eq!(shared_bytes(4, STAR25_F64_TWO_ROWS, Precision::F64), 0);
        let with_prefetch =
            StreamingShape { kernel: StreamingKernel { prefetch: 1, ..tensor.kernel }, ..tensor };
        let err = entry_point(StencilShape::Star25, with_prefetch, Precision::F64).unwrap_err().to_string();
        assert!(err.contains("give p0, not p1"), "{err}");
        let err =
            entry_point(StencilShape::Star25, StreamingShape { block: [64, 4], ..tensor }, Precision::F64)
                .unwrap_err()
                .to_string();
        assert!(err.contains("blocks of 64x4 threads") && err.contains("built: 32x4 v2 r4 a3 p0"), "{err}");
        assert!(entry_point(StencilShape::Star13, tensor, Precision::F64).is_err(), "no tensor-copy star13");
        assert_eq!(fit(StencilShape::Star25, tensor, cube, Precision::F64, true), tensor);
        let one_row = without_tensor_copies(tensor);
        assert_eq!(
            (one_row.kernel.rows, one_row.kernel.ahead, one_row.kernel.prefetch),
            (1, 1, SHAPE_PREFETCH)
        );
        assert_eq!(fit(StencilShape::Star25, tensor, cube, Precision::F64, false), one_row);
        let odd = fit(StencilShape::Star25, tensor, Grid3 { nx: 515, ..cube }, Precision::F64, true);
        assert_eq!(odd, one_row.with_vector(1));
        // Rows of 514 f32 points are no multiple of 16 bytes, nor whole 4-point patches.
        let f32_tensor = StreamingShape { kernel: StreamingKernel { vector: 4, ..tensor.kernel }, ..tensor };
        let narrow = fit(StencilShape::Star25, f32_tensor, Grid3 { nx: 514, ..cube }, Precision::F32, true);
        assert_eq!((narrow.kernel.ahead, narrow.kernel.vector), (1, 2));
        let c = star_coeffs::<f64, 2>(&[-7.5, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
        assert_eq!((c.center, c.x, c.y, c.z), (-7.5, [1.0, 2.0], [3.0, 4.0], [5.0, 6.0]));
        let (entry, tiled) =
            star_tiled_launch(4, Grid3 { nx: 512, ny: 512, nz: 512 }, Precision::F32).unwrap();
        assert_eq!(
            (entry.as_str(), tiled.block_dim, tiled.grid_dim),
            ("stencil_star4_shared_tiled_f32", (10, 10, 10), (256, 256, 256))
        );
        assert_eq!(tiled.shared_mem_bytes, 1000 * 4);
        let b = box_coeffs::<f32>(&[1.0, 2.0, 3.0, 4.0]);
        assert_eq!((b.center, b.face, b.edge, b.corner), (1.0, 2.0, 3.0, 4.0));
    }

    #[test]
    fn capped_kernels_fit_their_default_blocks_and_carry_the_cap_in_both_builds() {
        let mut capped = 0;
        for (shape, card) in tables() {
            for precision in Precision::ALL {
                let launch = default_launch(shape, precision, card).unwrap();
                let entry = entry_point(shape, launch, precision).unwrap();
                let Some(&(_, cap)) = ptx_build::REGISTER_CAPS.iter().find(|(name, _)| *name == entry) else {
                    continue;
                };
                capped += 1;
                let threads = launch.block[0] * launch.block[1];
                assert!(
                    cap * threads <= ptx_build::REGISTERS_PER_SM,
                    "{entry}: {cap} registers × {threads} threads"
                );
                for ptx in [crate::gpu::PTX, crate::gpu::PTX_HOPPER] {
                    let header = format!(".visible .entry {entry}(");
                    let after = &ptx[ptx.find(&header).expect("the entry is built")..];
                    let body = after.find("\n{").unwrap();
                    assert!(
                        after[..body].contains(&format!("\n.maxnreg {cap}")),
                        "{entry}: no .maxnreg {cap}"
                    );
                }
            }
        }
        assert!(capped > 0, "no default launch takes a capped kernel");
    }
}
