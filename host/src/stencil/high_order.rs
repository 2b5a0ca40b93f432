//! Launching the high-order star kernels (`stencil_star<R>_v<V>_<t>`) and the box kernels
//! (`stencil_box27_v<V>_<t>`): the widest built vector that divides the rows, and the streaming
//! kernel's block shape and runs along z.

use cudarc::driver::LaunchConfig;
use gpu_kernels::stencil::tiles::{StreamingKernel, StreamingShape};
use gpu_kernels::stencil::{BOX_KERNELS_F32, BOX_KERNELS_F64, Grid3, STAR_KERNELS_F32, STAR_KERNELS_F64};

use super::{StencilShape, streaming};
use crate::{Error, Result};

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
    }
}
