//! The stencil kernels run on the CPU (`gpu_kernels::device::emulation`) with the launch the
//! library plans, and compared bit for bit with the CPU reference: their arithmetic, indexing
//! and barriers checked without a GPU (speed, and races between threads, only the GPU tests
//! and compute-sanitizer see). Barrier-free kernels run thread by thread (`emulation::run`),
//! the others a block's threads at once (`emulation::run_blocks`).

use cudarc::driver::LaunchConfig;
use gpu_kernels::device::emulation;
use gpu_kernels::device::tensor::TensorMap;
use gpu_kernels::stencil::star::StarCoeffs;
use gpu_kernels::stencil::tiles::{
    COARSENED_IN_TILE_DIM, HALO_BY_TENSOR_COPY, HALO_IN_SHARED, HaloRing, REGISTER_TILED_IN_TILE_DIM,
    RUN_PLANES, SHAPE_PREFETCH, SHARED_TILED_IN_TILE_DIM, StreamingKernel, StreamingShape, TemporalShape,
    TunedCard, star_tiled_in_tile_dim,
};
use gpu_kernels::stencil::{
    Coeffs, Grid3, Walk, stencil_basic, stencil_box_streaming, stencil_coarsened, stencil_register_tiled,
    stencil_shared_tiled, stencil_star_rows_streaming, stencil_star_shared_streaming,
    stencil_star_shared_tiled, stencil_star_streaming, stencil_star_tensor_streaming, stencil_streaming,
    stencil_temporal,
};
use host::stencil::{
    StencilShape, StencilVariant, high_order, reference_box_step, reference_star_step, reference_steps,
    streaming, temporal,
};
use host::{Element, Precision, random};
use ndarray::Array3;

/// Grids of the GPU tests' `every_shape_kernel`, nz × ny × nx: rows of 19, 11 and 70 leave the
/// last threads of a column past the end; x extents that no vector and one that only 1 divides.
const GRIDS: [(usize, usize, usize); 3] = [(40, 19, 21), (16, 11, 12), (300, 70, 23)];

/// Resident blocks assumed by the launches (an H200's 132 SMs, two blocks each).
const RESIDENT: usize = 264;

/// The kernels' grid of `input`.
fn grid_of<T>(input: &Array3<T>) -> Grid3 {
    let (nz, ny, nx) = input.dim();
    Grid3 { nx: nx as u32, ny: ny as u32, nz: nz as u32 }
}

/// Runs `body(input, output, grid)` as the launch of `launch` on `input`, thread by thread, and
/// returns the output (poisoned with NaN first, so that a point no thread writes shows).
fn run_launch<T: Element>(
    input: &Array3<T>,
    launch: StreamingShape,
    body: impl Fn(*const T, *mut T, Grid3),
) -> Array3<T> {
    let grid = grid_of(input);
    let config = streaming::launch_config(launch, grid, RESIDENT).unwrap();
    let mut output = Array3::from_elem(input.dim(), T::from_f64(f64::NAN));
    let (input, output_ptr) = (input.as_ptr(), output.as_mut_ptr());
    emulation::run(config.grid_dim, config.block_dim, || body(input, output_ptr, grid));
    output
}

/// As [`run_launch`], for a kernel with barriers launched as `config` (its shared memory
/// included): a block's threads at once.
fn run_blocks<T: Element>(
    input: &Array3<T>,
    config: LaunchConfig,
    body: impl Fn(*const T, *mut T, Grid3),
) -> Array3<T> {
    let grid = grid_of(input);
    let mut output = Array3::from_elem(input.dim(), T::from_f64(f64::NAN));
    let (input, output_ptr) = (input.as_ptr(), output.as_mut_ptr());
    emulation::run_blocks(config.grid_dim, config.block_dim, config.shared_mem_bytes as usize, || {
        body(input, output_ptr, grid)
    });
    output
}

/// Whether `out` is `expected` bit for bit (a NaN left by an unwritten point differs from
/// every number).
fn same_bits<T: Element>(out: &Array3<T>, expected: &Array3<T>) -> bool {
    out.iter().zip(expected).all(|(a, b)| a.to_f64().to_bits() == b.to_f64().to_bits())
}

/// `launch` for `shape` fitted to `grid` in `T`, as `StencilProblem` plans it.
fn planned<T: Element>(shape: StencilShape, launch: StreamingShape, grid: Grid3) -> StreamingShape {
    high_order::shape_launch(shape, launch, grid, T::PRECISION, 132, true).unwrap().1
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

/// The library's default launch of `shape` in `T` (the H200's table, every GPU's but the H100's).
fn default_of<T: Element>(shape: StencilShape) -> StreamingShape {
    high_order::default_launch(shape, T::PRECISION, TunedCard::H200).unwrap()
}

/// The default launch of each shape in `T` from `card`'s table.
fn default_on<T: Element>(card: TunedCard) -> impl Fn(StencilShape) -> StreamingShape {
    move |shape| high_order::default_launch(shape, T::PRECISION, card).unwrap()
}

/// The default's vector in two rows a thread (`star_rows_streaming.rs`), in blocks of 32 × 4 and
/// runs of 32 planes, with `AHEAD` for the kernel's `ahead` (0: the y rows loaded in the iteration
/// that uses them, 1: a plane ahead).
fn two_rows_of<T: Element, const AHEAD: usize>(shape: StencilShape) -> StreamingShape {
    let default = default_of::<T>(shape);
    StreamingShape {
        kernel: StreamingKernel { rows: 2, ahead: AHEAD, prefetch: SHAPE_PREFETCH, ..default.kernel },
        block: [32, 4],
        planes: RUN_PLANES,
        ..default
    }
}

/// The two-row star25 `f64` kernel with its y rows a plane ahead for `launch`'s vector (the
/// `f64` default, and one of the forms the y-rows-ahead test checks).
fn star25_f64_two_rows_ahead(launch: StreamingShape) -> fn(*const f64, *mut f64, Grid3, StarCoeffs<f64, 4>) {
    match launch.kernel.vector {
        2 => |i, o, g, c| unsafe { stencil_star_rows_streaming::<f64, 4, 2, 9, true>(i, o, g, c) },
        1 => |i, o, g, c| unsafe { stencil_star_rows_streaming::<f64, 4, 1, 9, true>(i, o, g, c) },
        other => panic!("no emulated two-row star25 f64 kernel with its y rows ahead, {other} points a row"),
    }
}

/// Every card's table: one wave in `f32` on the H200, runs of planes on the H100; the `f64`
/// defaults, whose tiles arrive by tensor copies, as they run where the copies cannot (one row,
/// its halo a plane ahead; the kernel itself: `the_tensor_copy_stars_equal_the_reference`).
#[test]
fn the_star25_default_kernels_equal_the_reference() {
    for card in TunedCard::ALL {
        let registers = |shape| {
            let launch = default_on::<f64>(card)(shape);
            if launch.kernel.ahead == HALO_BY_TENSOR_COPY {
                high_order::without_tensor_copies(launch)
            } else {
                launch
            }
        };
        star_matches::<f64, 4>(registers, |launch| {
            match (launch.kernel.vector, launch.kernel.rows, launch.kernel.ahead) {
                (_, 2, 1) => star25_f64_two_rows_ahead(launch),
                (2, 1, 1) => |i, o, g, c| unsafe { stencil_star_streaming::<f64, 4, 2, 9, true>(i, o, g, c) },
                (1, 1, 1) => |i, o, g, c| unsafe { stencil_star_streaming::<f64, 4, 1, 9, true>(i, o, g, c) },
                other => panic!("no emulated star25 f64 kernel {other:?}"),
            }
        });
        star_matches::<f32, 4>(default_on::<f32>(card), |launch| {
            match (launch.kernel.vector, launch.kernel.rows, launch.kernel.ahead) {
                (4, 1, 1) => |i, o, g, c| unsafe { stencil_star_streaming::<f32, 4, 4, 9, true>(i, o, g, c) },
                (2, 1, 1) => |i, o, g, c| unsafe { stencil_star_streaming::<f32, 4, 2, 9, true>(i, o, g, c) },
                (1, 1, 1) => |i, o, g, c| unsafe { stencil_star_streaming::<f32, 4, 1, 9, true>(i, o, g, c) },
                other => panic!("no emulated star25 f32 kernel {other:?}"),
            }
        });
    }
}

#[test]
fn the_two_row_star_kernels_equal_the_reference() {
    star_matches::<f64, 4>(two_rows_of::<f64, 0>, |launch| match launch.kernel.vector {
        2 => |i, o, g, c| unsafe { stencil_star_rows_streaming::<f64, 4, 2, 9, false>(i, o, g, c) },
        1 => |i, o, g, c| unsafe { stencil_star_rows_streaming::<f64, 4, 1, 9, false>(i, o, g, c) },
        other => panic!("no emulated two-row star25 f64 kernel {other}"),
    });
    star_matches::<f32, 4>(two_rows_of::<f32, 0>, |launch| match launch.kernel.vector {
        4 => |i, o, g, c| unsafe { stencil_star_rows_streaming::<f32, 4, 4, 9, false>(i, o, g, c) },
        2 => |i, o, g, c| unsafe { stencil_star_rows_streaming::<f32, 4, 2, 9, false>(i, o, g, c) },
        1 => |i, o, g, c| unsafe { stencil_star_rows_streaming::<f32, 4, 1, 9, false>(i, o, g, c) },
        other => panic!("no emulated two-row star25 f32 kernel {other}"),
    });
    star_matches::<f64, 2>(two_rows_of::<f64, 0>, |launch| match launch.kernel.vector {
        2 => |i, o, g, c| unsafe { stencil_star_rows_streaming::<f64, 2, 2, 5, false>(i, o, g, c) },
        1 => |i, o, g, c| unsafe { stencil_star_rows_streaming::<f64, 2, 1, 5, false>(i, o, g, c) },
        other => panic!("no emulated two-row star13 f64 kernel {other}"),
    });
    star_matches::<f32, 2>(two_rows_of::<f32, 0>, |launch| match launch.kernel.vector {
        4 => |i, o, g, c| unsafe { stencil_star_rows_streaming::<f32, 2, 4, 5, false>(i, o, g, c) },
        2 => |i, o, g, c| unsafe { stencil_star_rows_streaming::<f32, 2, 2, 5, false>(i, o, g, c) },
        1 => |i, o, g, c| unsafe { stencil_star_rows_streaming::<f32, 2, 1, 5, false>(i, o, g, c) },
        other => panic!("no emulated two-row star13 f32 kernel {other}"),
    });
}

#[test]
fn the_two_row_star25_kernels_with_their_y_rows_ahead_equal_the_reference() {
    star_matches::<f64, 4>(two_rows_of::<f64, 1>, star25_f64_two_rows_ahead);
    star_matches::<f32, 4>(two_rows_of::<f32, 1>, |launch| match launch.kernel.vector {
        4 => |i, o, g, c| unsafe { stencil_star_rows_streaming::<f32, 4, 4, 9, true>(i, o, g, c) },
        1 => |i, o, g, c| unsafe { stencil_star_rows_streaming::<f32, 4, 1, 9, true>(i, o, g, c) },
        other => panic!("no emulated two-row star25 f32 kernel with its y rows ahead, {other} points a row"),
    });
}

#[test]
fn the_star13_default_kernels_equal_the_reference() {
    star_matches::<f64, 2>(default_of::<f64>, |launch| match (launch.kernel.vector, launch.kernel.ahead) {
        (2, 1) => |i, o, g, c| unsafe { stencil_star_streaming::<f64, 2, 2, 5, true>(i, o, g, c) },
        (1, 1) => |i, o, g, c| unsafe { stencil_star_streaming::<f64, 2, 1, 5, true>(i, o, g, c) },
        other => panic!("no emulated star13 f64 kernel {other:?}"),
    });
    star_matches::<f32, 2>(default_of::<f32>, |launch| match (launch.kernel.vector, launch.kernel.ahead) {
        (4, 1) => |i, o, g, c| unsafe { stencil_star_streaming::<f32, 2, 4, 5, true>(i, o, g, c) },
        (2, 1) => |i, o, g, c| unsafe { stencil_star_streaming::<f32, 2, 2, 5, true>(i, o, g, c) },
        (1, 1) => |i, o, g, c| unsafe { stencil_star_streaming::<f32, 2, 1, 5, true>(i, o, g, c) },
        other => panic!("no emulated star13 f32 kernel {other:?}"),
    });
}

#[test]
fn the_box27_f64_default_kernel_equals_the_reference() {
    let grids = GRIDS.into_iter().flat_map(|grid| TunedCard::ALL.map(|card| (grid, card)));
    for ((nz, ny, nx), card) in grids {
        let input = random::random_grid::<f64>((nz, ny, nx), 11).unwrap();
        let grid = Grid3 { nx: nx as u32, ny: ny as u32, nz: nz as u32 };
        let launch = planned::<f64>(StencilShape::Box27, default_on::<f64>(card)(StencilShape::Box27), grid);
        let coeffs = high_order::box_coeffs::<f64>(&StencilShape::Box27.default_coeffs());
        let out = run_launch(&input, launch, |i, o, g| match (launch.kernel.vector, launch.kernel.rows) {
            (2, 2) => unsafe { stencil_box_streaming::<f64, 2, 2, 4>(i, o, g, coeffs) },
            (1, 2) => unsafe { stencil_box_streaming::<f64, 1, 2, 4>(i, o, g, coeffs) },
            other => panic!("no emulated box27 f64 kernel {other:?}"),
        });
        let expected = reference_box_step(input.view(), coeffs);
        assert!(same_bits(&out, &expected), "box27 on {nz}x{ny}x{nx}, {card:?}'s launch");
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

/// Grids for the kernels with barriers, smaller than [`GRIDS`] (each thread of a block is a
/// coroutine): edges that no tile divides, one wider than two tiles of the widest kernel, and
/// one taller than two, so that some block starts at an interior plane.
const BLOCK_GRIDS: [(usize, usize, usize); 3] = [(13, 11, 9), (9, 17, 34), (31, 8, 7)];

/// The seven-point coefficients tried: the Laplacian, and seven distinct others.
fn seven_point_coeffs<T: Element>() -> [Coeffs<T>; 2] {
    [host::stencil::laplacian(), Coeffs(core::array::from_fn(|i| T::from_f64(0.1 + i as f64 / 7.0)))]
}

/// The seven-point `kernel` launched as the library launches `variant` with input tiles of edge
/// `tile` equals `steps` reference steps on every grid of [`BLOCK_GRIDS`].
fn seven_point_matches<T: Element>(
    variant: StencilVariant,
    tile: usize,
    steps: usize,
    config: impl Fn(Grid3) -> LaunchConfig,
    kernel: unsafe fn(*const T, *mut T, Grid3, Coeffs<T>),
) {
    for (nz, ny, nx) in BLOCK_GRIDS {
        let input = random::random_grid::<T>((nz, ny, nx), 3).unwrap();
        let config = config(grid_of(&input));
        for coeffs in seven_point_coeffs::<T>() {
            // SAFETY: the launch is the library's for this kernel, on buffers of the grid's size.
            let out = run_blocks(&input, config, |i, o, g| unsafe { kernel(i, o, g, coeffs) });
            let expected = reference_steps(input.view(), coeffs, steps);
            assert!(same_bits(&out, &expected), "{variant} t{tile} {} on {nz}x{ny}x{nx}", T::PRECISION);
        }
    }
}

/// As [`seven_point_matches`] for one of the book's variants, one step.
fn book_kernel_matches<T: Element>(
    variant: StencilVariant,
    tile: usize,
    kernel: unsafe fn(*const T, *mut T, Grid3, Coeffs<T>),
) {
    let config = |grid| variant.launch_config_with_tile(grid, T::PRECISION, tile).unwrap();
    seven_point_matches(variant, tile, 1, config, kernel);
}

/// Every tile of the book's kernels that is built: Fig. 8.6, 8.8, 8.10 and 8.12.
fn book_kernels_match<T: Element>() {
    use StencilVariant::{Basic, Coarsened, RegisterTiled, SharedTiled};
    book_kernel_matches::<T>(Basic, Basic.default_tile(), stencil_basic::<T>);
    book_kernel_matches::<T>(
        SharedTiled,
        SHARED_TILED_IN_TILE_DIM,
        stencil_shared_tiled::<T, SHARED_TILED_IN_TILE_DIM>,
    );
    book_kernel_matches::<T>(Coarsened, COARSENED_IN_TILE_DIM, stencil_coarsened::<T, COARSENED_IN_TILE_DIM>);
    book_kernel_matches::<T>(Coarsened, 16, stencil_coarsened::<T, 16>);
    book_kernel_matches::<T>(
        RegisterTiled,
        REGISTER_TILED_IN_TILE_DIM,
        stencil_register_tiled::<T, REGISTER_TILED_IN_TILE_DIM>,
    );
    book_kernel_matches::<T>(RegisterTiled, 8, stencil_register_tiled::<T, 8>);
    book_kernel_matches::<T>(RegisterTiled, 16, stencil_register_tiled::<T, 16>);
}

#[test]
fn the_books_kernels_equal_the_reference_f32() {
    book_kernels_match::<f32>();
}

#[test]
fn the_books_kernels_equal_the_reference_f64() {
    book_kernels_match::<f64>();
}

/// The temporal kernel of `shape` (its const generics `K` and `ROWS`) fuses `K` steps into one
/// pass bit for bit.
fn temporal_matches<T: Element, const K: usize, const ROWS: usize>(shape: TemporalShape) {
    assert_eq!((shape.kernel.depth, shape.kernel.rows), (K, ROWS));
    let config = |grid| {
        let runs = temporal::runs(shape, grid, RESIDENT).unwrap();
        temporal::launch_config(shape, grid, T::PRECISION, runs).unwrap()
    };
    seven_point_matches(StencilVariant::Temporal, K, K, config, stencil_temporal::<T, K, ROWS>);
}

#[test]
fn the_temporal_defaults_fuse_their_steps_bitwise() {
    temporal_matches::<f32, 4, 8>(temporal::default_shape(host::Precision::F32));
    temporal_matches::<f64, 4, 4>(temporal::default_shape(host::Precision::F64));
}

/// The seven-point streaming kernel's defaults and the narrower vectors they fall back to, walking
/// forwards and backwards (keeping a run's last planes in L2, which changes no value).
#[test]
fn the_seven_point_streaming_kernels_equal_the_reference() {
    fn each<T: Element>(
        kernel: impl Fn(
            usize,
        )
            -> unsafe fn(*const T, *mut T, Grid3, Coeffs<T>, gpu_kernels::stencil::Window, Walk),
    ) {
        // Every card's default: one wave on the H200's table, runs of planes on the H100's.
        for ((nz, ny, nx), card) in GRIDS.into_iter().flat_map(|g| TunedCard::ALL.map(|card| (g, card))) {
            let input = random::random_grid::<T>((nz, ny, nx), 5).unwrap();
            let grid = grid_of(&input);
            let default = streaming::default_shape_on(T::PRECISION, card);
            let shape = streaming::fit(default, grid, T::PRECISION);
            let launch = streaming::launch(shape, grid, 0..grid.nz, RESIDENT).unwrap();
            let body = kernel(shape.kernel.vector);
            for (coeffs, walk) in
                seven_point_coeffs::<T>().into_iter().zip([Walk::FORWARD, Walk { backwards: 1, keep: 3 }])
            {
                let mut output = Array3::from_elem(input.dim(), T::from_f64(f64::NAN));
                let (i, o) = (input.as_ptr(), output.as_mut_ptr());
                // SAFETY: the library's launch for this kernel, on buffers of the grid's size.
                emulation::run(launch.config.grid_dim, launch.config.block_dim, || unsafe {
                    body(i, o, grid, coeffs, launch.window, walk)
                });
                let expected = reference_steps(input.view(), coeffs, 1);
                assert!(same_bits(&output, &expected), "{card:?}'s {shape:?} {walk:?} on {nz}x{ny}x{nx}");
            }
        }
    }
    each::<f32>(|vector| match vector {
        4 => stencil_streaming::<f32, 4, 1, 0, 1, false>,
        2 => stencil_streaming::<f32, 2, 1, 0, 1, false>,
        1 => stencil_streaming::<f32, 1, 1, 0, 1, false>,
        other => panic!("no emulated streaming f32 kernel v{other}"),
    });
    each::<f64>(|vector| match vector {
        2 => stencil_streaming::<f64, 2, 2, 0, 1, false>,
        1 => stencil_streaming::<f64, 1, 2, 0, 1, false>,
        other => panic!("no emulated streaming f64 kernel v{other}"),
    });
}

/// The book's tiled form of the order-`R` star (Fig. 8.8 with a halo of `R`), the readable
/// baseline, on every grid at least `2R + 1` thick.
fn star_tiled_matches<T: Element, const R: usize, const TILE: usize>() {
    assert_eq!(TILE, star_tiled_in_tile_dim(R));
    let shape = high_order::star_shape(R).unwrap();
    // The first two grids: the order-4 tiles hold 2³ outputs, so the third would take 256 blocks
    // of 1000 threads.
    for &(nz, ny, nx) in &BLOCK_GRIDS[..2] {
        let input = random::random_grid::<T>((nz, ny, nx), 9).unwrap();
        let (_, config) = high_order::star_tiled_launch(R, grid_of(&input), T::PRECISION).unwrap();
        let coeffs = high_order::star_coeffs::<T, R>(&shape.default_coeffs());
        // SAFETY: the library's launch for this kernel, on buffers of the grid's size.
        let out = run_blocks(&input, config, |i, o, g| unsafe {
            stencil_star_shared_tiled::<T, R, TILE>(i, o, g, coeffs)
        });
        assert!(
            same_bits(&out, &reference_star_step(input.view(), coeffs)),
            "{shape} tiled on {nz}x{ny}x{nx}"
        );
    }
}

#[test]
fn the_tiled_stars_equal_the_reference() {
    star_tiled_matches::<f32, 2, 8>();
    star_tiled_matches::<f64, 2, 8>();
    star_tiled_matches::<f32, 4, 10>();
    star_tiled_matches::<f64, 4, 10>();
}

/// The star25 whose halo goes through a ring of shared memory (`star_shared_streaming.rs`) of
/// `V`-wide patches in blocks of 32 × 8, planned as the library plans it on grids it fits.
fn star_shared_matches<T: Element, const V: usize>() {
    let shape = StencilShape::Star25;
    let ring = StreamingShape {
        kernel: StreamingKernel { vector: V, rows: 1, ahead: HALO_IN_SHARED, prefetch: SHAPE_PREFETCH },
        block: [32, 8],
        ..default_of::<T>(shape)
    };
    for (nz, ny, nx) in [(16, 11, 12), (21, 19, 40)] {
        let input = random::random_grid::<T>((nz, ny, nx), 13).unwrap();
        let grid = grid_of(&input);
        let launch = planned::<T>(shape, ring, grid);
        assert_eq!(
            (launch.kernel.ahead, launch.kernel.vector),
            (HALO_IN_SHARED, V),
            "the ring fits {nz}x{ny}x{nx}"
        );
        let halo: HaloRing = high_order::halo_ring(4, launch).unwrap();
        let config = LaunchConfig {
            shared_mem_bytes: halo.shared_bytes(size_of::<T>()) as u32,
            ..streaming::launch_config(launch, grid, RESIDENT).unwrap()
        };
        let coeffs = high_order::star_coeffs::<T, 4>(&shape.default_coeffs());
        let out = run_blocks(&input, config, |i, o, g| {
            const HALO_F32: usize = HaloRing { order: 4, vector: 4, block: [32, 8] }.patches_per_thread();
            const HALO_F64: usize = HaloRing { order: 4, vector: 2, block: [32, 8] }.patches_per_thread();
            // SAFETY: the library's launch and shared memory for this kernel, on buffers of the
            // grid's size.
            unsafe {
                if V == 4 {
                    stencil_star_shared_streaming::<T, 4, V, 9, 32, 8, HALO_F32>(i, o, g, coeffs)
                } else {
                    stencil_star_shared_streaming::<T, 4, V, 9, 32, 8, HALO_F64>(i, o, g, coeffs)
                }
            }
        });
        assert!(
            same_bits(&out, &reference_star_step(input.view(), coeffs)),
            "{shape} ring v{V} on {nz}x{ny}x{nx}"
        );
    }
}

#[test]
fn the_shared_halo_stars_equal_the_reference() {
    star_shared_matches::<f32, 4>();
    star_shared_matches::<f64, 2>();
}

/// The star25 whose tiles arrive by tensor copies (`star_tensor_streaming.rs`, emulated: the
/// copies land at once), in each block and rows a thread it is built for, planned as the library
/// plans it on a GPU with tensor copies: grids whose tiles overhang every face, one of the
/// minimum thickness, and one whose runs along z are several.
fn star_tensor_matches<T: Element, const V: usize>() {
    let shape = StencilShape::Star25;
    // The H100's `f64` default, in each built block and rows, in `T`'s vector.
    let h100 = high_order::default_launch(shape, Precision::F64, TunedCard::H100).unwrap();
    assert_eq!(h100.kernel.ahead, HALO_BY_TENSOR_COPY);
    let built: Vec<_> = high_order::tensor_kernels(shape, T::PRECISION).collect();
    assert!(!built.is_empty(), "no tensor-copy star25 built for {}", T::PRECISION);
    for (vector, block, rows) in built {
        assert_eq!(vector, V);
        let tensor =
            StreamingShape { kernel: StreamingKernel { vector, rows, ..h100.kernel }, block, ..h100 };
        // The kernel of the built block and rows (each listed in `STAR_TENSOR_KERNELS_*`).
        let kernel: unsafe fn(*const T, *mut T, Grid3, StarCoeffs<T, 4>, *const TensorMap) =
            match (block, rows) {
                ([32, 4], 4) => stencil_star_tensor_streaming::<T, 4, V, 9, 32, 4, 4>,
                ([32, 8], 4) => stencil_star_tensor_streaming::<T, 4, V, 9, 32, 8, 4>,
                _ => panic!("the built tensor-copy kernel {block:?} r{rows} has no case here"),
            };
        for (nz, ny, nx) in [(16, 11, 12), (21, 19, 40), (9, 9, 12), (70, 9, 12), (12, 37, 24)] {
            let input = random::random_grid::<T>((nz, ny, nx), 17).unwrap();
            let grid = grid_of(&input);
            let launch = planned::<T>(shape, tensor, grid);
            assert_eq!(
                (launch.kernel.ahead, launch.kernel.vector),
                (HALO_BY_TENSOR_COPY, V),
                "{nz}x{ny}x{nx}"
            );
            let ring = high_order::tensor_ring(4, launch).unwrap();
            let config = LaunchConfig {
                shared_mem_bytes: ring.shared_bytes(size_of::<T>()) as u32,
                ..streaming::launch_config(launch, grid, RESIDENT).unwrap()
            };
            let map = TensorMap::emulated(input.as_ptr(), [nx, ny, nz].map(|n| n as u64), ring.box_dims());
            for values in [
                shape.default_coeffs(),
                (0..shape.coefficient_count()).map(|i| 0.3 - i as f64 / 9.0).collect(),
            ] {
                let coeffs = high_order::star_coeffs::<T, 4>(&values);
                let out = run_blocks(&input, config, |i, o, g| {
                    // SAFETY: the library's launch and shared memory for this kernel, on buffers
                    // of the grid's size, with the emulated map of the input.
                    unsafe { kernel(i, o, g, coeffs, &map) }
                });
                assert!(
                    same_bits(&out, &reference_star_step(input.view(), coeffs)),
                    "{shape} tensor copies v{V} {block:?} r{rows} on {nz}x{ny}x{nx} ({launch:?})"
                );
            }
        }
    }
}

#[test]
fn the_tensor_copy_stars_equal_the_reference() {
    star_tensor_matches::<f32, 4>();
    star_tensor_matches::<f64, 2>();
}
