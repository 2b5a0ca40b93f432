//! Launching the streaming kernel: its entry points (one per [`StreamingKernel`]: vector width,
//! rows per thread, planes held ahead, planes prefetched), the vector width fitted to the grid's
//! rows, and the grid of blocks, all from [`StreamingShape`]s.

use std::fmt;

use cudarc::driver::LaunchConfig;
use gpu_kernels::stencil::tiles::{
    STREAMING_F32, STREAMING_F64, STREAMING_MIN_BLOCKS_PER_SM, STREAMING_SWEEP_F32, STREAMING_SWEEP_F64,
    StreamingKernel, StreamingShape,
};
use gpu_kernels::stencil::{Grid3, STREAMING_KERNELS_F32, STREAMING_KERNELS_F64};

use super::variant::MAX_GRID_YZ;
use crate::{Error, Result};

/// The default shape for elements of type `dtype` (`"f32"` or `"f64"`).
pub fn default_shape(dtype: &str) -> StreamingShape {
    match dtype {
        "f64" => STREAMING_F64,
        _ => STREAMING_F32,
    }
}

/// The benchmarks' sweep of shapes for `dtype`, the default first.
pub fn sweep(dtype: &str) -> &'static [StreamingShape] {
    match dtype {
        "f64" => &STREAMING_SWEEP_F64,
        _ => &STREAMING_SWEEP_F32,
    }
}

/// Every streaming entry point built for `dtype`.
pub fn kernels(dtype: &str) -> &'static [StreamingKernel] {
    match dtype {
        "f64" => STREAMING_KERNELS_F64,
        _ => STREAMING_KERNELS_F32,
    }
}

/// `shape` fitted to the grid's rows: when its vector width does not divide `nx`, the widest
/// narrower one that does, in the same kernel if that is built, else in the default kernel
/// (whose narrower widths down to one point per load are all built): rows of odd length take
/// one point per load.
pub fn fit(shape: StreamingShape, grid: Grid3, dtype: &str) -> StreamingShape {
    let divides = |vector: usize| (grid.nx as usize).is_multiple_of(vector);
    if divides(shape.kernel.vector) {
        return shape;
    }
    for kernel in [shape.kernel, default_shape(dtype).kernel] {
        let mut vector = kernel.vector.min(shape.kernel.vector);
        while vector > 1 {
            vector /= 2;
            let narrower = StreamingKernel { vector, ..kernel };
            if divides(vector) && kernels(dtype).contains(&narrower) {
                return StreamingShape { kernel: narrower, ..shape };
            }
        }
    }
    StreamingShape { kernel: StreamingKernel { vector: 1, ..default_shape(dtype).kernel }, ..shape }
}

/// The entry point of `shape` for `dtype`, if it is built.
pub fn entry_point(shape: StreamingShape, dtype: &str) -> Result<String> {
    let kernel = shape.kernel;
    if !kernels(dtype).contains(&kernel) {
        let built: Vec<String> = kernels(dtype).iter().map(|&k| Describe(shape_of(k)).kernel()).collect();
        return Err(Error::BadArgument(format!(
            "no streaming kernel {} is built for {dtype}; the built ones are {}",
            Describe(shape).kernel(),
            built.join(", ")
        )));
    }
    let StreamingKernel { vector, rows, ahead, prefetch } = kernel;
    Ok(format!("stencil7_streaming_v{vector}_r{rows}_a{ahead}_p{prefetch}_{dtype}"))
}

/// `shape` with fewer planes per block (halved, down to one) while the grid gives fewer than
/// [`STREAMING_MIN_BLOCKS_PER_SM`] blocks per SM: on small grids the default's long runs along z
/// would leave most SMs idle.
pub fn fill(shape: StreamingShape, grid: Grid3, multiprocessors: u32) -> StreamingShape {
    let columns = grid.nx.div_ceil(shape.block_points_x()) * grid.ny.div_ceil(shape.block_points_y());
    let wanted = STREAMING_MIN_BLOCKS_PER_SM * multiprocessors;
    let mut planes = shape.planes;
    while planes > 1 && columns * grid.nz.div_ceil(planes) < wanted {
        planes /= 2;
    }
    StreamingShape { planes, ..shape }
}

/// Blocks of `shape.block` threads cover the x–y plane, each thread a `rows × vector` patch;
/// `⌈nz / planes⌉` blocks share each column of patches along z.
pub fn launch_config(shape: StreamingShape, grid: Grid3) -> Result<LaunchConfig> {
    let [bx, by] = shape.block;
    if bx == 0 || by == 0 || bx * by > 1024 || shape.planes == 0 {
        return Err(Error::BadArgument(format!(
            "streaming block {bx}×{by} with {} planes: a block needs 1 to 1024 threads and at least one plane",
            shape.planes
        )));
    }
    if !(grid.nx as usize).is_multiple_of(shape.kernel.vector) {
        return Err(Error::BadArgument(format!(
            "a vector of {} points does not divide rows of {} points",
            shape.kernel.vector, grid.nx
        )));
    }
    let grid_dim = (
        grid.nx.div_ceil(shape.block_points_x()),
        grid.ny.div_ceil(shape.block_points_y()),
        grid.nz.div_ceil(shape.planes),
    );
    if grid_dim.1 > MAX_GRID_YZ || grid_dim.2 > MAX_GRID_YZ {
        return Err(Error::BadShape(format!(
            "the streaming kernel would need {}×{} blocks along y×z for a {}×{}×{} grid, over CUDA's limit of {MAX_GRID_YZ}",
            grid_dim.1, grid_dim.2, grid.nz, grid.ny, grid.nx
        )));
    }
    Ok(LaunchConfig { grid_dim, block_dim: (bx, by, 1), shared_mem_bytes: 0 })
}

/// The default shape with `kernel`'s entry point.
pub fn shape_of(kernel: StreamingKernel) -> StreamingShape {
    StreamingShape { kernel, ..STREAMING_F32 }
}

/// `32x8 v4 r1 a0 p0 z8`: block, vector, rows, ahead, prefetch, planes, as the sweep names them.
pub struct Describe(pub StreamingShape);

impl Describe {
    /// The entry point's part alone: `v4 r1 a0 p0`.
    pub fn kernel(&self) -> String {
        let StreamingKernel { vector, rows, ahead, prefetch } = self.0.kernel;
        format!("v{vector} r{rows} a{ahead} p{prefetch}")
    }
}

impl fmt::Display for Describe {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let StreamingShape { block: [bx, by], planes, .. } = self.0;
        write!(f, "{bx}x{by} {} z{planes}", self.kernel())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CUBE_512: Grid3 = Grid3 { nx: 512, ny: 512, nz: 512 };

    fn kernel(vector: usize, rows: usize, ahead: usize, prefetch: usize) -> StreamingKernel {
        StreamingKernel { vector, rows, ahead, prefetch }
    }

    #[test]
    fn defaults_are_built_and_named_after_their_constants() {
        for dtype in ["f32", "f64"] {
            let shape = default_shape(dtype);
            let name = entry_point(shape, dtype).unwrap();
            assert!(name.starts_with("stencil7_streaming_v") && name.ends_with(dtype), "{name}");
        }
        assert_eq!(
            entry_point(shape_of(kernel(4, 1, 0, 0)), "f32").unwrap(),
            "stencil7_streaming_v4_r1_a0_p0_f32"
        );
        let err = entry_point(shape_of(kernel(16, 1, 0, 0)), "f32").unwrap_err().to_string();
        assert!(err.contains("no streaming kernel v16 r1 a0 p0") && err.contains("v4 r1 a0 p0"), "{err}");
    }

    #[test]
    fn every_shape_of_the_sweep_and_its_narrower_vectors_is_built() {
        for dtype in ["f32", "f64"] {
            assert_eq!(sweep(dtype)[0], default_shape(dtype));
            for &shape in sweep(dtype) {
                for nx in [512, 510, 513] {
                    let fitted = fit(shape, Grid3 { nx, ny: 3, nz: 3 }, dtype);
                    assert_eq!(nx as usize % fitted.kernel.vector, 0);
                    assert!(entry_point(fitted, dtype).is_ok(), "{} {dtype} nx = {nx}", Describe(fitted));
                }
            }
        }
    }

    #[test]
    fn the_vector_narrows_until_it_divides_the_rows() {
        let shape = shape_of(kernel(4, 1, 0, 0));
        let fitted = |nx| fit(shape, Grid3 { nx, ny: 5, nz: 5 }, "f32").kernel.vector;
        assert_eq!((fitted(512), fitted(510), fitted(999), fitted(3)), (4, 2, 1, 1));
    }

    #[test]
    fn launch_shape_covers_the_grid() {
        let shape = StreamingShape { kernel: kernel(4, 1, 0, 0), block: [32, 8], planes: 32 };
        let config = launch_config(shape, CUBE_512).unwrap();
        assert_eq!(
            (config.grid_dim, config.block_dim, config.shared_mem_bytes),
            ((4, 64, 16), (32, 8, 1), 0)
        );
        let odd = launch_config(shape.with_vector(1), Grid3 { nx: 33, ny: 31, nz: 29 }).unwrap();
        assert_eq!(odd.grid_dim, (2, 4, 1));
    }

    #[test]
    fn small_grids_get_fewer_planes_per_block() {
        let planes = |n: u32| fill(STREAMING_F32, Grid3 { nx: n, ny: n, nz: n }, 132).planes;
        // 256³: 32 columns of blocks, 16 planes give 512 blocks; 128³: 8 columns, 2 planes.
        assert_eq!((planes(512), planes(256), planes(128), planes(3)), (STREAMING_F32.planes, 16, 2, 1));
    }

    #[test]
    fn bad_shapes_are_refused() {
        let shape = STREAMING_F32;
        let refuse = |s: StreamingShape, g: Grid3| launch_config(s, g).unwrap_err().to_string();
        assert!(refuse(StreamingShape { block: [64, 32], ..shape }, CUBE_512).contains("1 to 1024"));
        assert!(refuse(StreamingShape { planes: 0, ..shape }, CUBE_512).contains("at least one plane"));
        assert!(refuse(shape.with_vector(4), Grid3 { nx: 6, ny: 3, nz: 3 }).contains("does not divide"));
        let tall = Grid3 { nx: 4, ny: 3, nz: 3_000_000 };
        assert!(refuse(StreamingShape { planes: 1, ..shape }, tall).contains("over CUDA's limit"));
    }
}
