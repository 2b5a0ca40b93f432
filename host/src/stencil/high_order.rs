//! Launching the high-order star kernels (`stencil_star<R>_v<V>_<t>`) and the box kernels
//! (`stencil_box27_v<V>_<t>`): the widest built vector that divides the rows, and the streaming
//! kernel's block shape and runs along z.

use cudarc::driver::LaunchConfig;
use gpu_kernels::stencil::tiles::{StreamingKernel, StreamingShape, star_tiled_in_tile_dim};
use gpu_kernels::stencil::{BOX_KERNELS_F32, BOX_KERNELS_F64, Grid3, STAR_KERNELS_F32, STAR_KERNELS_F64};

use gpu_kernels::stencil::Coeffs;
use gpu_kernels::stencil::box27::BoxCoeffs;
use gpu_kernels::stencil::star::StarCoeffs;
use ndarray::{Array3, ArrayView3};

use super::variant::MAX_GRID_YZ;
use super::{StencilProblem, StencilShape, StencilVariant, streaming};
use crate::{Element, Error, Result};

/// The star shape of order `order` (2: star13, 4: star25).
pub fn star_shape(order: usize) -> Result<StencilShape> {
    StencilShape::ALL
        .into_iter()
        .find(|s| s.radius() == order && *s != StencilShape::Star7 && *s != StencilShape::Box27)
        .ok_or_else(|| {
            Error::BadArgument(format!(
                "no star stencil of order {order} is built: orders 2 (star13) and 4 (star25)"
            ))
        })
}

/// Every `(order, vector)` built for `dtype`.
pub fn star_kernels(dtype: &str) -> &'static [(usize, usize)] {
    match dtype {
        "f64" => STAR_KERNELS_F64,
        _ => STAR_KERNELS_F32,
    }
}

/// The widest built vector of order `order` that divides `nx`.
pub fn star_vector(order: usize, nx: u32, dtype: &str) -> Result<usize> {
    star_kernels(dtype)
        .iter()
        .filter(|&&(r, v)| r == order && (nx as usize).is_multiple_of(v))
        .map(|&(_, v)| v)
        .max()
        .ok_or_else(|| Error::BadArgument(format!("no star kernel of order {order} is built for {dtype}")))
}

/// Every vector width of the box kernel built for `dtype`.
pub fn box_kernels(dtype: &str) -> &'static [usize] {
    match dtype {
        "f64" => BOX_KERNELS_F64,
        _ => BOX_KERNELS_F32,
    }
}

/// The streaming kernel's default block and planes (fewer planes on small grids,
/// [`streaming::fill`]) for one row of `vector` points per thread.
fn launch(vector: usize, grid: Grid3, dtype: &str, multiprocessors: u32) -> Result<LaunchConfig> {
    let default = streaming::default_shape(dtype);
    let shape =
        StreamingShape { kernel: StreamingKernel { vector, rows: 1, ahead: 0, prefetch: 1 }, ..default };
    streaming::launch_config(streaming::fill(shape, grid, multiprocessors), grid)
}

/// The entry point and launch shape of the order-`order` star on `grid`, with the widest vector
/// that divides the rows.
pub fn star_launch(
    order: usize,
    grid: Grid3,
    dtype: &str,
    multiprocessors: u32,
) -> Result<(String, LaunchConfig)> {
    let vector = star_vector(order, grid.nx, dtype)?;
    Ok((format!("stencil_star{order}_v{vector}_{dtype}"), launch(vector, grid, dtype, multiprocessors)?))
}

/// The entry point and launch shape of the box stencil on `grid`.
pub fn box_launch(grid: Grid3, dtype: &str, multiprocessors: u32) -> Result<(String, LaunchConfig)> {
    let vector = box_kernels(dtype).iter().copied().filter(|&v| (grid.nx as usize).is_multiple_of(v)).max();
    let vector = vector.ok_or_else(|| Error::BadArgument(format!("no box kernel is built for {dtype}")))?;
    Ok((format!("stencil_box27_v{vector}_{dtype}"), launch(vector, grid, dtype, multiprocessors)?))
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

/// Grid, block and shared memory of the tiled order-`order` star on `grid`: `T³` threads per
/// block, one block per output tile of edge `T − 2R`.
pub fn star_tiled_launch(order: usize, grid: Grid3, element_bytes: usize) -> Result<(String, LaunchConfig)> {
    let dtype = if element_bytes == 8 { "f64" } else { "f32" };
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
    let shared_mem_bytes = (t * t * t) as usize * element_bytes;
    let config = LaunchConfig { grid_dim, block_dim: (t, t, t), shared_mem_bytes: shared_mem_bytes as u32 };
    Ok((format!("stencil_star{order}_shared_tiled_{dtype}"), config))
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
        StencilShape::Star13 => problem.run_star(star_coeffs::<T, 2>(coeffs), steps),
        StencilShape::Star25 => problem.run_star(star_coeffs::<T, 4>(coeffs), steps),
        StencilShape::Box27 => problem.run_box(box_coeffs(coeffs), steps),
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

    #[test]
    fn vectors_fit_the_rows_and_shapes_have_their_orders() {
        assert_eq!(star_vector(2, 512, "f32").unwrap(), 4);
        assert_eq!(star_vector(4, 514, "f32").unwrap(), 2);
        assert_eq!(star_vector(4, 515, "f64").unwrap(), 1);
        assert!(star_vector(3, 512, "f32").is_err());
        assert_eq!(star_shape(2).unwrap(), StencilShape::Star13);
        assert_eq!(star_shape(4).unwrap(), StencilShape::Star25);
        assert!(star_shape(1).is_err());
        let (entry, config) = star_launch(4, Grid3 { nx: 512, ny: 512, nz: 512 }, "f64", 132).unwrap();
        assert_eq!(entry, "stencil_star4_v2_f64");
        assert_eq!(config.block_dim, (32, 16, 1));
        let (entry, _) = box_launch(Grid3 { nx: 30, ny: 9, nz: 9 }, "f32", 132).unwrap();
        assert_eq!(entry, "stencil_box27_v2_f32");
        let c = star_coeffs::<f64, 2>(&[-7.5, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
        assert_eq!((c.center, c.x, c.y, c.z), (-7.5, [1.0, 2.0], [3.0, 4.0], [5.0, 6.0]));
        let (entry, tiled) = star_tiled_launch(4, Grid3 { nx: 512, ny: 512, nz: 512 }, 4).unwrap();
        assert_eq!(
            (entry.as_str(), tiled.block_dim, tiled.grid_dim),
            ("stencil_star4_shared_tiled_f32", (10, 10, 10), (256, 256, 256))
        );
        assert_eq!(tiled.shared_mem_bytes, 1000 * 4);
        let b = box_coeffs::<f32>(&[1.0, 2.0, 3.0, 4.0]);
        assert_eq!((b.center, b.face, b.edge, b.corner), (1.0, 2.0, 3.0, 4.0));
    }
}
