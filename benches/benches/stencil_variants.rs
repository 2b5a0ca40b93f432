//! Criterion benchmarks of the stencil kernels (Rust, compiled to PTX): the book's four against
//! their CUDA C++ twins, and the streaming kernel, beside the device-to-device copy of the same
//! bytes, on several grids; a tiling sweep over the tile edge `T`; and a sweep of the streaming
//! kernel's launch shapes; and runs of 64 time steps by the temporal kernel at every fusion depth
//! built, beside 64 single steps and 64 copies; and one step of each stencil shape (7-, 13- and
//! 25-point stars, 27-point box). Each sample is a run of time steps timed with
//! CUDA events; inputs are fresh random values, never zeros. Without a GPU: one line, exit 0.

use std::process::exit;

use benches::{Twins, criterion, from_ms, open_gpu, stencil_twin_source, write_gpu_info};
use criterion::measurement::WallTime;
use criterion::{BenchmarkGroup, BenchmarkId, Criterion, Throughput};
use cudarc::driver::{CudaFunction, LaunchConfig};
use gpu_kernels::stencil::Coeffs;
use gpu_kernels::stencil::tiles::{TemporalKernel, TemporalShape};
use host::stencil::{StencilProblem, StencilShape, StencilVariant, high_order, streaming, temporal};
use host::verify::compare;
use host::{Element, Gpu, Result, random};

const BENCH: &str = "stencil_variants";

/// Grids `(nz, ny, nx)`: three cubes, the largest several times the L2, and a non-cubic one.
const GRIDS: [(usize, usize, usize); 4] =
    [(128, 128, 128), (256, 256, 256), (512, 512, 512), (256, 512, 1024)];

/// The temporal group's grids, and the time steps of one of its samples.
const TEMPORAL_GRIDS: [(usize, usize, usize); 2] = [(512, 512, 512), (256, 512, 1024)];
const TEMPORAL_STEPS: usize = 64;

/// The tiling sweep runs on this grid.
const SWEEP_GRID: (usize, usize, usize) = (512, 512, 512);

/// One explicit heat-equation step (`u + Δu/10`): values stay bounded over any number of
/// steps, so long timing runs never reach infinities or denormals.
fn heat<T: Element>() -> Coeffs<T> {
    let (centre, neighbour) = (T::from_f64(0.4), T::from_f64(0.1));
    Coeffs([centre, neighbour, neighbour, neighbour, neighbour, neighbour, neighbour])
}

fn or_exit<V>(result: Result<V>) -> V {
    result.unwrap_or_else(|e| {
        eprintln!("{BENCH}: error: {e}");
        exit(1)
    })
}

fn problem<'g, T: Element>(gpu: &'g Gpu, (nz, ny, nx): (usize, usize, usize)) -> StencilProblem<'g, T> {
    let input = or_exit(random::random_grid::<T>((nz, ny, nx), random::fresh_seed()));
    or_exit(StencilProblem::new(gpu, input.view(), heat()))
}

fn case((nz, ny, nx): (usize, usize, usize), dtype: &str) -> String {
    format!("{nz}x{ny}x{nx}-{dtype}")
}

/// The criterion group `suite/<grid>-<dtype>` of one time step per iteration (throughput in points
/// updated), opened with its ceiling: `copy`, a device-to-device copy of `problem`'s grid.
fn one_step_group<'c, T: Element>(
    c: &'c mut Criterion,
    suite: &str,
    grid: (usize, usize, usize),
    problem: &mut StencilProblem<'_, T>,
) -> BenchmarkGroup<'c, WallTime> {
    let mut group = c.benchmark_group(format!("{suite}/{}", case(grid, T::NAME)));
    group.throughput(Throughput::Elements(problem.grid().len() as u64));
    group
        .bench_function("copy", |b| b.iter_custom(|iters| from_ms(or_exit(problem.copy_ms(iters as usize)))));
    group
}

/// The twin of `entry`, if it exists and computes what the Rust kernel computes on this
/// problem (one step, compared with the Rust result).
fn checked_twin<T: Element>(
    twins: Option<&Twins>,
    problem: &mut StencilProblem<'_, T>,
    variant: StencilVariant,
    tile: usize,
) -> Option<(CudaFunction, LaunchConfig)> {
    if !variant.tiles().contains(&tile) {
        return None; // beyond the book (streaming): no tile edges, no twin
    }
    let entry = or_exit(variant.entry_point_with_tile(T::PRECISION, tile));
    let function = twins?.function(&entry)?;
    let config = or_exit(variant.launch_config_with_tile(problem.grid(), T::PRECISION, tile));
    or_exit(problem.run_with_tile(variant, tile, 1));
    let rust = or_exit(problem.output());
    or_exit(problem.run_function(&function, config, &format!("cuda_{entry}"), 1));
    let cuda = or_exit(problem.output());
    let check = compare(cuda.as_slice().expect("contiguous"), rust.as_slice().expect("contiguous"));
    if !check.ok {
        println!("{BENCH}: twin cuda_{entry} differs from the Rust kernel ({check:?}); not timed");
        return None;
    }
    Some((function, config))
}

fn variants<T: Element>(c: &mut Criterion, gpu: &Gpu, twins: Option<&Twins>, shape: (usize, usize, usize)) {
    let mut problem = problem::<T>(gpu, shape);
    let mut group = one_step_group(c, "stencil_variants", shape, &mut problem);
    for variant in StencilVariant::ALL {
        let steps = |iters: u64| iters.max(1) as usize;
        group.bench_function(format!("rust/{variant}"), |b| {
            b.iter_custom(|iters| from_ms(or_exit(problem.run(variant, steps(iters)))))
        });
        if let Some((function, config)) = checked_twin(twins, &mut problem, variant, variant.default_tile()) {
            group.bench_function(format!("cuda/{variant}"), |b| {
                b.iter_custom(|iters| {
                    from_ms(or_exit(problem.run_function(&function, config, "twin", steps(iters))))
                })
            });
        }
    }
    group.finish();
}

fn tiling<T: Element>(c: &mut Criterion, gpu: &Gpu, twins: Option<&Twins>) {
    let mut problem = problem::<T>(gpu, SWEEP_GRID);
    let mut group = one_step_group(c, "stencil_tiling", SWEEP_GRID, &mut problem);
    for variant in [StencilVariant::Coarsened, StencilVariant::RegisterTiled] {
        for &tile in variant.tiles() {
            let steps = |iters: u64| iters.max(1) as usize;
            let parameter = format!("T={tile}");
            group.bench_function(BenchmarkId::new(format!("rust/{variant}"), &parameter), |b| {
                b.iter_custom(|iters| from_ms(or_exit(problem.run_with_tile(variant, tile, steps(iters)))))
            });
            if let Some((function, config)) = checked_twin(twins, &mut problem, variant, tile) {
                group.bench_function(BenchmarkId::new(format!("cuda/{variant}"), &parameter), |b| {
                    b.iter_custom(|iters| {
                        from_ms(or_exit(problem.run_function(&function, config, "twin", steps(iters))))
                    })
                });
            }
        }
    }
    group.finish();
}

/// The streaming kernel's launch shapes (`tiles::STREAMING_SWEEP_F32`, `_F64`): members
/// `rust/<shape>`, e.g. `rust/32x16 v4 r1 a0 p1 z32 (default)`, beside the copy.
fn streaming_sweep<T: Element>(c: &mut Criterion, gpu: &Gpu) {
    let mut problem = problem::<T>(gpu, SWEEP_GRID);
    let mut group = one_step_group(c, "stencil_streaming", SWEEP_GRID, &mut problem);
    for &shape in streaming::sweep(T::PRECISION) {
        let steps = |iters: u64| iters.max(1) as usize;
        let default = streaming::default_shape_on(T::PRECISION, gpu.info.tuned_card());
        let default = if shape == default { " (default)" } else { "" };
        group.bench_function(format!("rust/{}{default}", streaming::Describe(shape)), |b| {
            b.iter_custom(|iters| from_ms(or_exit(problem.run_streaming(shape, steps(iters)))))
        });
    }
    group.finish();
}

/// 64 steps: as 64 copies (the single-step ceiling), 64 single steps of the streaming kernel,
/// and the temporal kernel at every built depth (passes of `K` steps, the remainder single).
/// Throughput counts point updates, so Gpoints/s are per step.
fn temporal_depths<T: Element>(c: &mut Criterion, gpu: &Gpu, shape: (usize, usize, usize)) {
    let mut problem = problem::<T>(gpu, shape);
    let mut group = c.benchmark_group(format!("stencil_temporal/{}", case(shape, T::NAME)));
    group.throughput(Throughput::Elements((problem.grid().len() * TEMPORAL_STEPS) as u64));
    let steps = |iters: u64| iters.max(1) as usize * TEMPORAL_STEPS;
    group.bench_function("copy", |b| b.iter_custom(|iters| from_ms(or_exit(problem.copy_ms(steps(iters))))));
    // Each line of the report's chart is one tile shape over the depths K (the defaults are
    // `tiles::TEMPORAL_F32` and `TEMPORAL_F64`); the streaming kernel is the point K = 1.
    let single = streaming::default_shape(T::PRECISION);
    group.bench_function(BenchmarkId::new("rust/streaming", 1), |b| {
        b.iter_custom(|iters| from_ms(or_exit(problem.run_streaming(single, steps(iters)))))
    });
    for &shape in temporal::sweep(T::PRECISION) {
        let TemporalShape { kernel: TemporalKernel { depth, rows }, warps } = shape;
        let default = if shape == temporal::default_shape(T::PRECISION) { " (default at K = " } else { "" };
        let default = if default.is_empty() { String::new() } else { format!("{default}{depth})") };
        group.bench_function(
            BenchmarkId::new(format!("rust/temporal r{rows} w{warps}{default}"), depth),
            |b| b.iter_custom(|iters| from_ms(or_exit(problem.run_temporal(shape, steps(iters))))),
        );
    }
    group.finish();
}

/// Coefficients of `shape` that keep values bounded over any number of steps (an explicit
/// diffusion step: the centre keeps 0.4, the neighbours share 0.6), for timing runs.
fn bounded(shape: StencilShape) -> Vec<f64> {
    match shape {
        StencilShape::Star7 => heat::<f64>().0.to_vec(),
        StencilShape::Box27 => vec![1.0 / 27.0; 4],
        StencilShape::Star13 | StencilShape::Star25 => {
            // Each coefficient weighs a pair of points: 6R points share 0.6.
            let pair = 0.6 / (3 * shape.radius()) as f64;
            std::iter::once(0.4).chain(std::iter::repeat_n(pair / 2.0, 3 * shape.radius())).collect()
        }
    }
}

/// One step of each stencil shape (the 7-point, 13- and 25-point stars, the 27-point box) on
/// its streaming kernel, beside the copy: where each sits on the roofline.
fn shapes<T: Element>(c: &mut Criterion, gpu: &Gpu, grid: (usize, usize, usize)) {
    let mut problem = problem::<T>(gpu, grid);
    let mut group = one_step_group(c, "stencil_shapes", grid, &mut problem);
    for shape in StencilShape::ALL {
        let coeffs = bounded(shape);
        let steps = |iters: u64| iters.max(1) as usize;
        group.bench_function(format!("rust/{shape}"), |b| {
            b.iter_custom(|iters| {
                from_ms(or_exit(high_order::run_shape(&mut problem, shape, &coeffs, steps(iters))))
            })
        });
    }
    group.finish();
}

/// The launch shapes of the high-order stars' and the box's streaming kernels (every built
/// vector and halo timing × a few blocks), one step each beside the copy, so the report shows
/// why `tiles::STAR13_F32` and the others were chosen. A shape whose blocks need more registers
/// than an SM has is named and skipped.
fn shapes_sweep<T: Element>(c: &mut Criterion, gpu: &Gpu) {
    let mut problem = problem::<T>(gpu, SWEEP_GRID);
    let mut group = one_step_group(c, "stencil_shapes_sweep", SWEEP_GRID, &mut problem);
    for shape in StencilShape::HIGH_ORDER {
        let coeffs = bounded(shape);
        let sweep = high_order::sweep(shape, T::PRECISION, gpu.info.tuned_card());
        for (i, launch) in or_exit(sweep).into_iter().enumerate() {
            let name =
                format!("{shape}/{}{}", streaming::Describe(launch), if i == 0 { " (default)" } else { "" });
            if let Err(e) = high_order::run_shape_with(&mut problem, shape, &coeffs, launch, 1) {
                eprintln!("stencil_shapes_sweep: {name} skipped: {e}");
                continue;
            }
            group.bench_function(name, |b| {
                b.iter_custom(|iters| {
                    let steps = iters.max(1) as usize;
                    from_ms(or_exit(high_order::run_shape_with(&mut problem, shape, &coeffs, launch, steps)))
                })
            });
        }
    }
    group.finish();
}

fn main() {
    let Some(gpu) = open_gpu(BENCH) else { return };
    write_gpu_info(&gpu);
    let twins = Twins::compile(&gpu, BENCH, &stencil_twin_source());
    let mut c = criterion();
    for shape in GRIDS {
        variants::<f32>(&mut c, &gpu, twins.as_ref(), shape);
        variants::<f64>(&mut c, &gpu, twins.as_ref(), shape);
    }
    tiling::<f32>(&mut c, &gpu, twins.as_ref());
    tiling::<f64>(&mut c, &gpu, twins.as_ref());
    streaming_sweep::<f32>(&mut c, &gpu);
    streaming_sweep::<f64>(&mut c, &gpu);
    for shape in TEMPORAL_GRIDS {
        temporal_depths::<f32>(&mut c, &gpu, shape);
        temporal_depths::<f64>(&mut c, &gpu, shape);
    }
    for grid in TEMPORAL_GRIDS {
        shapes::<f32>(&mut c, &gpu, grid);
        shapes::<f64>(&mut c, &gpu, grid);
    }
    shapes_sweep::<f32>(&mut c, &gpu);
    shapes_sweep::<f64>(&mut c, &gpu);
    c.final_summary();
}
