//! The barrier-free kernels run on the CPU (`gpu_kernels::device::emulation`), thread by thread
//! with the launch the library plans, and compared bit for bit with the CPU reference: their
//! arithmetic and indexing checked without a GPU (speed, and races between threads, only the
//! GPU tests see).

use gpu_kernels::device::emulation;
use gpu_kernels::stencil::star::StarCoeffs;
use gpu_kernels::stencil::tiles::{StreamingKernel, StreamingShape};
use gpu_kernels::stencil::{
    Grid3, stencil_box_streaming, stencil_star_rows_streaming, stencil_star_streaming,
};
use host::stencil::{StencilShape, high_order, reference_box_step, reference_star_step, streaming};
use host::{Element, random};
use ndarray::Array3;

/// Grids of the GPU tests' `every_shape_kernel`, nz × ny × nx: rows of 19, 11 and 70 leave the
/// last threads of a column past the end; x extents that no vector and one that only 1 divides.
const GRIDS: [(usize, usize, usize); 3] = [(40, 19, 21), (16, 11, 12), (300, 70, 23)];

/// Resident blocks assumed by the launches (an H200's 132 SMs, two blocks each).
const RESIDENT: usize = 264;

/// Runs `body(input, output, grid)` as the launch of `launch` on `input` and returns the output
/// (poisoned with NaN first, so that a point no thread writes shows).
fn run_launch<T: Element>(
    input: &Array3<T>,
    launch: StreamingShape,
    body: impl Fn(*const T, *mut T, Grid3),
) -> Array3<T> {
    let (nz, ny, nx) = input.dim();
    let grid = Grid3 { nx: nx as u32, ny: ny as u32, nz: nz as u32 };
    let config = streaming::launch_config(launch, grid, RESIDENT).unwrap();
    let mut output = Array3::from_elem(input.dim(), T::from_f64(f64::NAN));
    let (input, output_ptr) = (input.as_ptr(), output.as_mut_ptr());
    emulation::run(config.grid_dim, config.block_dim, || body(input, output_ptr, grid));
    output
}

/// Whether `out` is `expected` bit for bit (a NaN left by an unwritten point differs from
/// every number).
fn same_bits<T: Element>(out: &Array3<T>, expected: &Array3<T>) -> bool {
    out.iter().zip(expected).all(|(a, b)| a.to_f64().to_bits() == b.to_f64().to_bits())
}

/// `launch` for `shape` fitted to `grid` in `T`, as `StencilProblem` plans it.
fn planned<T: Element>(shape: StencilShape, launch: StreamingShape, grid: Grid3) -> StreamingShape {
    high_order::shape_launch(shape, launch, grid, T::PRECISION, 132).unwrap().1
}

/// The star of order `R` launched as `launch(shape)` (fitted to each grid) equals the reference
/// on every grid, with the standard Laplacian's weights and with others; `kernel` is the
/// function of the fitted launch's const generics.
fn star_matches<T: Element, const R: usize>(
    launch: impl Fn(StencilShape) -> StreamingShape,
    kernel: impl Fn(StreamingShape) -> fn(*const T, *mut T, Grid3, StarCoeffs<T, R>),
) {
    let shape = high_order::star_shape(R).unwrap();
    for (nz, ny, nx) in GRIDS {
        let input = random::random_grid::<T>((nz, ny, nx), 7).unwrap();
        let grid = Grid3 { nx: nx as u32, ny: ny as u32, nz: nz as u32 };
        let launch = planned::<T>(shape, launch(shape), grid);
        for values in
            [shape.default_coeffs(), (0..shape.coefficient_count()).map(|i| 0.1 + i as f64 / 7.0).collect()]
        {
            let coeffs = high_order::star_coeffs::<T, R>(&values);
            let body = kernel(launch);
            let out = run_launch(&input, launch, |i, o, g| body(i, o, g, coeffs));
            let expected = reference_star_step(input.view(), coeffs);
            assert!(same_bits(&out, &expected), "{shape} {} on {nz}x{ny}x{nx} ({launch:?})", T::PRECISION);
        }
    }
}

/// The library's default launch of `shape` in `T`.
fn default_of<T: Element>(shape: StencilShape) -> StreamingShape {
    high_order::default_launch(shape, T::PRECISION).unwrap()
}

/// The default in two rows a thread (`star_rows_streaming.rs`), in blocks of 32 × 4.
fn two_rows_of<T: Element>(shape: StencilShape) -> StreamingShape {
    let default = default_of::<T>(shape);
    StreamingShape {
        kernel: StreamingKernel { rows: 2, ahead: 0, ..default.kernel },
        block: [32, 4],
        ..default
    }
}

#[test]
fn the_star25_default_kernels_equal_the_reference() {
    star_matches::<f64, 4>(default_of::<f64>, |launch| match (launch.kernel.vector, launch.kernel.ahead) {
        (2, 1) => |i, o, g, c| unsafe { stencil_star_streaming::<f64, 4, 2, 9, true>(i, o, g, c) },
        (1, 1) => |i, o, g, c| unsafe { stencil_star_streaming::<f64, 4, 1, 9, true>(i, o, g, c) },
        other => panic!("no emulated star25 f64 kernel {other:?}"),
    });
    star_matches::<f32, 4>(default_of::<f32>, |launch| match (launch.kernel.vector, launch.kernel.ahead) {
        (4, 1) => |i, o, g, c| unsafe { stencil_star_streaming::<f32, 4, 4, 9, true>(i, o, g, c) },
        (2, 1) => |i, o, g, c| unsafe { stencil_star_streaming::<f32, 4, 2, 9, true>(i, o, g, c) },
        (1, 1) => |i, o, g, c| unsafe { stencil_star_streaming::<f32, 4, 1, 9, true>(i, o, g, c) },
        other => panic!("no emulated star25 f32 kernel {other:?}"),
    });
}

#[test]
fn the_two_row_star_kernels_equal_the_reference() {
    star_matches::<f64, 4>(two_rows_of::<f64>, |launch| match launch.kernel.vector {
        2 => |i, o, g, c| unsafe { stencil_star_rows_streaming::<f64, 4, 2, 9>(i, o, g, c) },
        1 => |i, o, g, c| unsafe { stencil_star_rows_streaming::<f64, 4, 1, 9>(i, o, g, c) },
        other => panic!("no emulated two-row star25 f64 kernel {other}"),
    });
    star_matches::<f32, 4>(two_rows_of::<f32>, |launch| match launch.kernel.vector {
        4 => |i, o, g, c| unsafe { stencil_star_rows_streaming::<f32, 4, 4, 9>(i, o, g, c) },
        2 => |i, o, g, c| unsafe { stencil_star_rows_streaming::<f32, 4, 2, 9>(i, o, g, c) },
        1 => |i, o, g, c| unsafe { stencil_star_rows_streaming::<f32, 4, 1, 9>(i, o, g, c) },
        other => panic!("no emulated two-row star25 f32 kernel {other}"),
    });
    star_matches::<f64, 2>(two_rows_of::<f64>, |launch| match launch.kernel.vector {
        2 => |i, o, g, c| unsafe { stencil_star_rows_streaming::<f64, 2, 2, 5>(i, o, g, c) },
        1 => |i, o, g, c| unsafe { stencil_star_rows_streaming::<f64, 2, 1, 5>(i, o, g, c) },
        other => panic!("no emulated two-row star13 f64 kernel {other}"),
    });
    star_matches::<f32, 2>(two_rows_of::<f32>, |launch| match launch.kernel.vector {
        4 => |i, o, g, c| unsafe { stencil_star_rows_streaming::<f32, 2, 4, 5>(i, o, g, c) },
        2 => |i, o, g, c| unsafe { stencil_star_rows_streaming::<f32, 2, 2, 5>(i, o, g, c) },
        1 => |i, o, g, c| unsafe { stencil_star_rows_streaming::<f32, 2, 1, 5>(i, o, g, c) },
        other => panic!("no emulated two-row star13 f32 kernel {other}"),
    });
}

#[test]
fn the_star13_default_kernels_equal_the_reference() {
    star_matches::<f64, 2>(default_of::<f64>, |launch| match (launch.kernel.vector, launch.kernel.ahead) {
        (2, 1) => |i, o, g, c| unsafe { stencil_star_streaming::<f64, 2, 2, 5, true>(i, o, g, c) },
        (1, 1) => |i, o, g, c| unsafe { stencil_star_streaming::<f64, 2, 1, 5, true>(i, o, g, c) },
        other => panic!("no emulated star13 f64 kernel {other:?}"),
    });
}

#[test]
fn the_box27_f64_default_kernel_equals_the_reference() {
    for (nz, ny, nx) in GRIDS {
        let input = random::random_grid::<f64>((nz, ny, nx), 11).unwrap();
        let grid = Grid3 { nx: nx as u32, ny: ny as u32, nz: nz as u32 };
        let launch = planned::<f64>(StencilShape::Box27, default_of::<f64>(StencilShape::Box27), grid);
        let coeffs = high_order::box_coeffs::<f64>(&StencilShape::Box27.default_coeffs());
        let out = run_launch(&input, launch, |i, o, g| match (launch.kernel.vector, launch.kernel.rows) {
            (2, 2) => unsafe { stencil_box_streaming::<f64, 2, 2, 4>(i, o, g, coeffs) },
            (1, 2) => unsafe { stencil_box_streaming::<f64, 1, 2, 4>(i, o, g, coeffs) },
            other => panic!("no emulated box27 f64 kernel {other:?}"),
        });
        let expected = reference_box_step(input.view(), coeffs);
        assert!(same_bits(&out, &expected), "box27 on {nz}x{ny}x{nx}");
    }
}

/// The emulation itself: outside `run` a special register panics, inside it each thread sees
/// its own indices.
#[test]
fn the_emulation_gives_each_thread_its_indices() {
    use gpu_kernels::device::thread::{block_dim_x, block_idx_x, block_idx_z, thread_idx_x, thread_idx_y};
    assert!(std::panic::catch_unwind(thread_idx_x).is_err());
    let mut seen = Vec::new();
    emulation::run((2, 1, 2), (3, 2, 1), || {
        seen.push((block_idx_z(), block_idx_x(), thread_idx_y(), thread_idx_x(), block_dim_x()))
    });
    assert_eq!(seen.len(), 2 * 2 * 3 * 2);
    assert_eq!(seen[0], (0, 0, 0, 0, 3));
    assert_eq!(seen[1], (0, 0, 0, 1, 3));
    assert_eq!(seen[3], (0, 0, 1, 0, 3));
    assert_eq!(seen[6], (0, 1, 0, 0, 3));
    assert_eq!(*seen.last().unwrap(), (1, 1, 1, 2, 3));
    assert!(!emulation::active());
}
