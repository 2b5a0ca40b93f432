//! `stencil`: runs PMPP chapter 8's seven-point stencil kernels and the streaming kernel beyond
//! the book (written in Rust, compiled to PTX) on the GPU, checks each against the CPU
//! reference, and reports time per step, throughput and the fraction of the device-to-device
//! copy ceiling it reaches. The input is
//! random, or a NumPy `.npy` file (`--input`); `--output` saves the result as `.npy`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;
use clap::builder::{PossibleValuesParser, TypedValueParser};
use gpu_kernels::stencil::tiles::{MAX_CLUSTER, NO_CLUSTER, StreamingShape, TunedCard};
use gpu_kernels::stencil::{Coeffs, Grid3};
use host::cli::RunOptions;
use host::distributed::{Ranks, SlabRun, measure, shared_id};
use host::npy::{self, Dims, NpyDtype, NpyInput};
use host::preflight::{self, StencilNeed};
use host::progress::step;
use host::report::{Table, gpu_line, parse_list, report_error, thousands};
use host::stencil::streaming::Describe;
use host::stencil::{
    StencilProblem, StencilShape, StencilVariant, grid_of, high_order, parse_grid, temporal,
};
use host::verify::{Comparison, compare};
use host::{Element, Error, Gpu, Precision, Result, random, stats::median_after_warm_up};
use ndarray::Array3;
use ndarray_npy::WritableElement;
use serde_json::json;

#[derive(Parser, Debug)]
#[command(
    name = "stencil",
    version,
    about = "Run the PMPP chapter-8 stencil kernels and the streaming and temporal kernels on the GPU, verify them, and compare their speed with the memory-bandwidth ceiling",
    long_about = "Run the four PMPP chapter-8 seven-point stencil kernels (basic, shared-tiled, coarsened, register-tiled) \
and two kernels beyond the book: streaming (2.5D, the fastest single step) and temporal (K steps fused into one pass over \
the grid, the fastest for many --steps), all written in Rust and compiled to PTX, on the GPU. Each is checked against a CPU \
reference and timed with CUDA events (median of --repeat runs after one warm-up). The ceiling is a device-to-device copy \
of the same bytes (each point read once and written once), timed the same way; times and % of copy are per time step, so \
a fused kernel can pass 100 %.\n\nExit status: 0 all OK, 1 a variant FAILED its check, 2 an error \
(bad arguments, no GPU, out of memory)."
)]
struct Args {
    /// Grid size: N for an N×N×N cube, or NZxNYxNX (x fastest in memory); every extent ≥ 3.
    #[arg(long, default_value = "512", value_parser = |s: &str| parse_grid(s).map_err(|e| e.to_string()))]
    grid: Grid3,
    /// Element type [default: all; with --input, the file's].
    #[arg(long, value_parser = dtype_parser())]
    dtype: Option<DtypeArg>,
    /// Read the input grid from a NumPy .npy file instead of random values: shape (nz, ny, nx),
    /// C order, float32 or float64. The grid and the dtype come from the file.
    #[arg(long, value_name = "FILE.npy", conflicts_with_all = ["grid", "seed"])]
    input: Option<PathBuf>,
    /// Write the result of the run (after --steps steps) to a NumPy .npy file; needs exactly
    /// one --variant and one dtype.
    #[arg(long, value_name = "FILE.npy")]
    output: Option<PathBuf>,
    /// Kernel: all, basic, shared-tiled, coarsened, register-tiled, streaming (the fastest single
    /// step) or temporal (the fastest for many steps), or a comma-separated list.
    #[arg(long, default_value = "all", value_parser = parse_variants)]
    variant: Variants,
    /// Time steps per run (two buffers ping-pong; boundaries keep their input values). The
    /// default star7 Laplacian can grow values 12× a step: from step 36 (`f32`) or 286 (`f64`)
    /// they may overflow, and a note says so (infinities and NaN do not cost what values do).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    steps: u32,
    /// Time steps per pass of the temporal kernel, K (1: single steps only). Default: the element
    /// type's default depth (4, chosen by measurement), or the deepest built
    /// one that fits in --steps; --steps mod K run as single steps of the streaming kernel.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    fuse: Option<u32>,
    /// Stencil: star7 (the book's 7 points), star13 and star25 (orders 2 and 4: high-order
    /// finite differences) or box27 (the 3×3×3 cube). The high-order stars are built as
    /// shared-tiled (the book's Fig. 8.8 with a halo of R) and streaming, the box as streaming.
    #[arg(long, default_value = "star7", value_parser = parse_shape)]
    shape: StencilShape,
    /// Comma-separated coefficients, as many as the shape takes: star7 c0..c6 (centre, x-, x+, y-,
    /// y+, z-, z+); star13 centre, x1, x2, y1, y2, z1, z2 (one per axis and distance); star25
    /// centre, x1..x4, y1..y4, z1..z4; box27 centre, face, edge, corner. Default: the shape's
    /// Laplacian (star7 -6,1,1,1,1,1,1; the standard central-difference weights of order 2R for
    /// star13 and star25), for box27 the average (each weight 1/27).
    #[arg(long, value_parser = parse_coeffs)]
    coeffs: Option<Coefficients>,
    /// Share of L2 (percent, 0 to 100) that each step of the streaming kernel keeps for the next
    /// when --steps is more than 1: the next step walks back through it, reading it from L2
    /// instead of DRAM (0: every step walks forward). Default: 25 in f64, 0 in f32, chosen by
    /// measurement (tiles::KEPT_L2_PERCENT_F64). Only a launch in one wave keeps planes: the
    /// H100's table walks runs of planes, which keep none.
    #[arg(long, value_name = "PERCENT", value_parser = clap::value_parser!(u32).range(0..=100))]
    kept_l2: Option<u32>,
    /// Launch the streaming kernels (every --shape) in thread-block clusters of N blocks (1: none,
    /// up to 8), consecutive along the launch's rows of tiles, which Hopper runs at once on one
    /// GPC; each launch takes the largest size up to N that divides its rows. Default: each
    /// launch shape's own (tiles.rs: pairs for the star13, 1.5-1.7 % faster than plain on the
    /// H200; none for the other shapes, which ran slower in clusters). GPUs before compute
    /// capability 9.0 launch plainly.
    #[arg(long, value_name = "N", conflicts_with = "gpus", value_parser = clap::value_parser!(u32).range(i64::from(NO_CLUSTER)..=i64::from(MAX_CLUSTER)))]
    cluster: Option<u32>,
    /// With --shape star13|star25|box27: launch their streaming kernel as the benchmarks' sweep
    /// (stencil_shapes_sweep) names a launch, e.g. "32x4 v2 r1 a1 p1 z32": threads per block,
    /// points (v) and rows (r) a thread, how the halo is staged (a: 0 in the iteration that uses
    /// it, 1 a plane ahead, 2 in shared memory, 3 whole tiles by Hopper's tensor copies, e.g.
    /// "32x4 v2 r4 a3 p0 z32"; on a GPU without them, or rows they cannot take, "r1 a1 p1" in
    /// the same blocks runs instead), planes prefetched into L2 (p), planes per block (zN, or
    /// `waves`: one wave), then optionally cN for clusters of N blocks. Default: the
    /// shape's own from the GPU's table (tiles.rs: an H100 takes its own where its best launch
    /// was measured to differ, every other GPU the H200's), printed before the results. Needs
    /// one --dtype (f32 and f64 are built with different kernels); a kernel that is not built is
    /// refused, naming what was asked.
    #[arg(long, value_name = "LAUNCH", conflicts_with = "gpus", value_parser = parse_launch)]
    launch: Option<Describe>,
    #[command(flatten)]
    run: RunOptions,
    /// Run on GPUs 0..N of this process (a number, or `all`): the grid split along z into one
    /// slab per GPU, halo planes exchanged over NCCL every --halo steps (needs libnccl). Times
    /// one --variant (streaming by default, or one of the book's; seven-point star) with and
    /// without the exchange, and checks the result bit for bit against the same run on GPU 0
    /// (unless --no-verify). Prints JSON with --json.
    ///
    /// `env`: one process per GPU, as torchrun or an MPI launcher starts them: this process
    /// computes slab RANK of WORLD_SIZE on GPU LOCAL_RANK (environment variables), joined to the
    /// others through NCCL's id in the --nccl-id file; each rank checks its own slab.
    #[arg(long, value_name = "N|all|env", value_parser = parse_gpus)]
    gpus: Option<GpuCount>,
    /// With --gpus env: the file through which rank 0 passes NCCL's unique id to the other ranks
    /// (on storage they all see; remove it between runs). Default: $STENCIL_NCCL_ID.
    #[arg(long, value_name = "FILE")]
    nccl_id: Option<PathBuf>,
    /// With --gpus: halo planes on each inner side of a slab, and steps between exchanges (a
    /// deeper halo means fewer exchanges for a little redundant work; the result is the same).
    #[arg(long, default_value_t = host::distributed::DEFAULT_HALO as u32, value_parser = clap::value_parser!(u32).range(1..))]
    halo: u32,
    /// With --gpus: exchange the halos after each exchanging step instead of overlapping the
    /// exchange with the update of the inner planes (the streaming kernel overlaps by default;
    /// the book's kernels never do). To measure what the overlap hides.
    #[arg(long)]
    no_overlap: bool,
}

/// `--gpus`: a count, or every GPU the driver sees.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum GpuCount {
    Count(usize),
    All,
    /// One process per GPU: `RANK`, `WORLD_SIZE`, `LOCAL_RANK` from the environment.
    Env,
}

fn parse_gpus(text: &str) -> std::result::Result<GpuCount, String> {
    match text {
        "all" => Ok(GpuCount::All),
        "env" => Ok(GpuCount::Env),
        _ => match text.parse::<usize>() {
            Ok(n) if n >= 1 => Ok(GpuCount::Count(n)),
            _ => Err(format!("expected a number of GPUs (1 or more), `all` or `env`, got `{text}`")),
        },
    }
}

/// `--gpus`: the seven-point star over several GPUs, one JSON object or a line per element type.
fn run_gpus(args: &Args, count: GpuCount) -> Result<ExitCode> {
    let chosen = if args.variant.0 == StencilVariant::ALL {
        &[StencilVariant::Streaming][..]
    } else {
        &args.variant.0
    };
    let variant = match chosen {
        [one] if args.shape == StencilShape::Star7 && *one != StencilVariant::Temporal => *one,
        _ => {
            return Err(Error::BadArgument(
                "--gpus runs the seven-point star with one single-step --variant (e.g. streaming)".into(),
            ));
        }
    };
    if args.input.is_some() || args.output.is_some() {
        return Err(Error::BadArgument(
            "--gpus runs on a random --grid; --input and --output are not supported with it".into(),
        ));
    }
    // This process's GPUs, and its rank among the processes of the run (one process: none).
    let seen = host::gpu::device_count()?;
    let (ordinals, ranks) = match count {
        GpuCount::All => ((0..seen).collect::<Vec<_>>(), None),
        GpuCount::Count(n) if n <= seen => ((0..n).collect(), None),
        GpuCount::Count(n) => {
            return Err(Error::NoDevice(format!(
                "--gpus {n} was asked for, but the driver sees {seen} GPU(s)"
            )));
        }
        GpuCount::Env => {
            let ranks = Ranks::from_env()?;
            (vec![ranks.local_rank], Some(ranks))
        }
    };
    let id = match ranks {
        // NCCL's id makes one communicator: one run, so one element type.
        Some(_) if !matches!(args.dtype, Some(DtypeArg::One(_))) => {
            return Err(Error::BadArgument(
                "--gpus env runs one element type: give --dtype f32 or --dtype f64".into(),
            ));
        }
        Some(ranks) => {
            let from_env = std::env::var_os("STENCIL_NCCL_ID").map(PathBuf::from);
            let path = args.nccl_id.clone().or(from_env).ok_or_else(|| {
                Error::BadArgument("--gpus env needs --nccl-id FILE (or STENCIL_NCCL_ID): where rank 0 leaves NCCL's id for the others".into())
            })?;
            Some(shared_id(ranks, &path, Duration::from_secs(120))?)
        }
        None => None,
    };
    let gpus = ordinals.iter().map(|&i| Gpu::with_ptx(i, args.run.ptx)).collect::<Result<Vec<_>>>()?;
    let seed = args.run.seed.unwrap_or(if ranks.is_some() { 1 } else { random::fresh_seed() });
    let Grid3 { nx, ny, nz } = args.grid;
    let job = Job {
        variant,
        shape: (nz as usize, ny as usize, nx as usize),
        seed,
        values: coefficients(args),
        steps: args.steps as usize,
        repeat: args.run.repeat as usize,
    };
    let mut rows = Vec::new();
    for &precision in args.dtype.unwrap_or(DtypeArg::All).precisions() {
        rows.push(match precision {
            Precision::F32 => run_slabs::<f32>(&gpus, ranks, id, args, &job)?,
            Precision::F64 => run_slabs::<f64>(&gpus, ranks, id, args, &job)?,
        });
    }
    let world = ranks.map_or(gpus.len(), |r| r.world_size);
    let report = json!({
        "gpu": gpus[0].info.name, "gpus": world, "rank": ranks.map(|r| r.rank),
        "grid": { "nz": nz, "ny": ny, "nx": nx }, "steps": job.steps, "repeat": job.repeat, "seed": seed, "rows": rows,
    });
    if args.run.json {
        println!("{}", serde_json::to_string_pretty(&report).expect("JSON of plain values"));
    } else {
        let rank = ranks.map_or(String::new(), |r| format!(", rank {} of {}", r.rank, r.world_size));
        println!(
            "{} × {world}{rank}, grid {nz}x{ny}x{nx} split along z, {} step(s), median of {}, seed {seed}",
            gpus[0].info.name, job.steps, job.repeat
        );
        let mut table = Table::new(vec![
            "dtype",
            "GPUs",
            "variant",
            "overlap",
            "ms/step",
            "compute ms/step",
            "exposed exchange",
            "Gpoints/s",
            "check",
        ]);
        for r in &rows {
            let f = |key: &str, digits: usize| format!("{:.*}", digits, r[key].as_f64().unwrap_or(f64::NAN));
            table.push(vec![
                r["dtype"].as_str().unwrap_or("").into(),
                r["gpus"].to_string(),
                r["variant"].as_str().unwrap_or("").into(),
                if r["overlap"] == true { "yes" } else { "no" }.into(),
                f("ms_per_step", 4),
                f("compute_ms_per_step", 4),
                f("exposed_exchange_ms_per_step", 4),
                f("gpoints_per_s", 1),
                r["status"].as_str().unwrap_or("").into(),
            ]);
        }
        print!("{}", table.render());
    }
    let failed = rows.iter().any(|r| r["status"] == "FAIL");
    Ok(if failed { ExitCode::FAILURE } else { ExitCode::SUCCESS })
}

/// What `--gpus` runs, for each element type.
struct Job {
    variant: StencilVariant,
    shape: (usize, usize, usize),
    seed: u64,
    values: Vec<f64>,
    steps: usize,
    repeat: usize,
}

/// One `--gpus` row: the slab run of `T` over `gpus` (or this rank's slab, with NCCL's `id`),
/// timed and checked against the run on this process's first GPU.
fn run_slabs<T: Element + cudarc::nccl::NcclType>(
    gpus: &[Gpu],
    ranks: Option<Ranks>,
    id: Option<cudarc::nccl::Id>,
    args: &Args,
    job: &Job,
) -> Result<serde_json::Value> {
    let input = step(&format!("generating the {} input", T::NAME), args.run.json, || {
        random::random_grid::<T>(job.shape, job.seed)
    })?;
    let coeffs = seven_point::<T>(&job.values);
    let mut run = match (ranks, id) {
        (Some(ranks), Some(id)) => {
            SlabRun::for_rank(&gpus[0], ranks, id, input.view(), coeffs, args.halo as usize)?
        }
        _ => SlabRun::new(gpus, input.view(), coeffs, args.halo as usize)?,
    };
    run.set_overlap(!args.no_overlap);
    let row = measure(
        &mut run,
        &gpus[0],
        job.variant,
        (input.view(), coeffs),
        (job.steps, job.repeat),
        !args.run.no_verify,
    )?;
    Ok(json!({
        "dtype": T::NAME, "gpus": row.gpus, "halo": args.halo, "overlap": row.overlap, "variant": job.variant.name(),
        "ms_per_step": row.ms_per_step,
        "compute_ms_per_step": row.compute_ms_per_step,
        "exposed_exchange_ms_per_step": row.ms_per_step - row.compute_ms_per_step,
        "gpoints_per_s": input.len() as f64 / row.ms_per_step / 1e6,
        "status": match row.bitwise_equal { Some(true) => "OK", Some(false) => "FAIL", None => "-" },
    }))
}

/// `--dtype`: one element type, or all of them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum DtypeArg {
    One(Precision),
    All,
}

impl DtypeArg {
    fn name(self) -> &'static str {
        match self {
            DtypeArg::One(precision) => precision.name(),
            DtypeArg::All => "all",
        }
    }

    /// The element types it runs, `f32` first.
    fn precisions(self) -> &'static [Precision] {
        match self {
            DtypeArg::One(Precision::F32) => &[Precision::F32],
            DtypeArg::One(Precision::F64) => &[Precision::F64],
            DtypeArg::All => &Precision::ALL,
        }
    }
}

/// `--dtype NAME`: `all`, or an element type by its name ([`Precision::from_name`]).
fn parse_dtype(text: &str) -> std::result::Result<DtypeArg, String> {
    if text == "all" {
        return Ok(DtypeArg::All);
    }
    Precision::from_name(text).map(DtypeArg::One).ok_or_else(|| {
        let names: Vec<&str> = Precision::ALL.iter().map(|p| p.name()).collect();
        format!("unknown element type `{text}`: expected one of {}, all", names.join(", "))
    })
}

/// [`parse_dtype`], with the names `--help` lists as the possible values.
fn dtype_parser() -> impl TypedValueParser<Value = DtypeArg> {
    let names = Precision::ALL.map(Precision::name).into_iter().chain(["all"]);
    PossibleValuesParser::new(names).try_map(|text: String| parse_dtype(&text))
}

#[derive(Clone, Debug)]
struct Variants(Vec<StencilVariant>);

#[derive(Clone, Debug)]
struct Coefficients(Vec<f64>);

fn parse_shape(text: &str) -> std::result::Result<StencilShape, String> {
    text.parse().map_err(|e: host::Error| e.to_string())
}

fn parse_variants(text: &str) -> std::result::Result<Variants, String> {
    parse_list(text, &StencilVariant::ALL).map(Variants)
}

fn parse_coeffs(text: &str) -> std::result::Result<Coefficients, String> {
    let values: Vec<f64> = text
        .split(',')
        .map(|v| v.trim().parse::<f64>().map_err(|_| format!("`{v}` is not a number")))
        .collect::<Result<_, _>>()?;
    if let Some(bad) = values.iter().find(|v| !v.is_finite()) {
        return Err(format!("coefficient {bad} is not finite"));
    }
    Ok(Coefficients(values))
}

/// A grid read from a `.npy` file, in the file's element type.
#[derive(Debug, PartialEq)]
enum NpyGrid {
    F32(Array3<f32>),
    F64(Array3<f64>),
}

impl NpyGrid {
    fn precision(&self) -> Precision {
        match self {
            NpyGrid::F32(_) => Precision::F32,
            NpyGrid::F64(_) => Precision::F64,
        }
    }

    fn grid(&self) -> Grid3 {
        let (nz, ny, nx) = match self {
            NpyGrid::F32(a) => a.dim(),
            NpyGrid::F64(a) => a.dim(),
        };
        Grid3 { nx: nx as u32, ny: ny as u32, nz: nz as u32 }
    }
}

/// Reads a grid of shape `(nz, ny, nx)`, C order, `float32` or `float64` in either byte order,
/// from the `.npy` file at `path` ([`NpyInput`] checks the header first). Every extent must be at
/// least 3.
fn read_grid_npy(path: &Path) -> Result<NpyGrid> {
    let dims = Dims { count: 3, meaning: "(nz, ny, nx)" };
    let file = NpyInput::open("--input", path, &[NpyDtype::F32, NpyDtype::F64], dims)?;
    let &[nz, ny, nx] = file.shape() else { unreachable!("NpyInput::open checked 3 dimensions") };
    grid_of(nz, ny, nx).map_err(|e| match e {
        Error::BadShape(why) => {
            Error::BadShape(format!("--input {} holds {nz}x{ny}x{nx}: {why}", path.display()))
        }
        other => other,
    })?;
    Ok(match file.dtype() {
        NpyDtype::F32 => NpyGrid::F32(file.read_array()?),
        NpyDtype::F64 => NpyGrid::F64(file.read_array()?),
        other => unreachable!("NpyInput::open accepts float32 and float64 only, not {other:?}"),
    })
}

/// The element types to run: `--dtype` (default all), or with `--input` the file's, which
/// `--dtype` may only repeat.
fn chosen_dtype(requested: Option<DtypeArg>, file: Option<Precision>) -> Result<DtypeArg> {
    match (requested, file) {
        (Some(asked), Some(found)) if asked != DtypeArg::One(found) => Err(Error::BadArgument(format!(
            "--dtype {} does not match the --input file, which holds {found}; leave --dtype out",
            asked.name()
        ))),
        (_, Some(found)) => Ok(DtypeArg::One(found)),
        (asked, None) => Ok(asked.unwrap_or(DtypeArg::All)),
    }
}

/// `--output` saves one grid, so it needs exactly one variant and one element type.
fn check_output(args: &Args, dtype: DtypeArg) -> Result<()> {
    if args.output.is_some() && (args.variant.0.len() != 1 || dtype == DtypeArg::All) {
        return Err(Error::BadArgument(format!(
            "--output writes one grid, but this run has {} variant(s) and dtype {}: choose one with --variant NAME and --dtype f32|f64 (or --input)",
            args.variant.0.len(),
            dtype.name()
        )));
    }
    Ok(())
}

/// One line of the report.
#[derive(Clone, Copy)]
struct Row {
    variant: StencilVariant,
    dtype: &'static str,
    ms_per_step: f64,
    copy_ms: f64,
    points: usize,
    bytes_per_point: usize,
    check: Option<Comparison>,
    /// How the steps were launched (the temporal kernel's passes).
    schedule: Option<temporal::Schedule>,
    /// The streaming kernel's launch shape (the streaming variant only).
    launch: Option<StreamingShape>,
}

impl Row {
    fn gpoints_per_s(&self) -> f64 {
        self.points as f64 / self.ms_per_step / 1e6
    }
    fn gb_per_s(&self) -> f64 {
        (self.points * self.bytes_per_point) as f64 / self.ms_per_step / 1e6
    }
    fn ceiling_percent(&self) -> f64 {
        100.0 * self.copy_ms / self.ms_per_step
    }
    fn status(&self) -> &'static str {
        match self.check {
            None => "skipped",
            Some(c) if c.ok => "OK",
            Some(_) => "FAIL",
        }
    }
}

/// The seven-point coefficients among `values` (missing ones zero; other shapes take theirs
/// from `values` themselves).
fn seven_point<T: Element>(values: &[f64]) -> Coeffs<T> {
    Coeffs(core::array::from_fn(|i| T::from_f64(*values.get(i).unwrap_or(&0.0))))
}

/// Runs every chosen variant on `input` and returns the report rows; with `--output`, saves
/// the result of the (one) variant.
fn run_dtype<T: Element + WritableElement>(gpu: &Gpu, args: &Args, input: Array3<T>) -> Result<Vec<Row>> {
    let values = coefficients(args);
    let shape = args.shape;
    let steps = args.steps as usize;
    let start = input.iter().fold(0.0_f64, |most, v| most.max(v.to_f64().abs()));
    if let Some(note) = overflow_note(shape, &values, steps, start, T::PRECISION) {
        eprintln!("stencil: note: {note}");
    }
    let seven = seven_point::<T>(&values);
    let mut problem = StencilProblem::new(gpu, input.view(), seven)?;
    if let Some(percent) = args.kept_l2 {
        problem.set_kept_l2_percent(percent)?;
    }
    problem.set_cluster(args.cluster)?;
    let repeat = args.run.repeat as usize;
    let copy_ms = median_after_warm_up(repeat, || problem.copy_ms(1))?;
    let reference = (!args.run.no_verify)
        .then(|| {
            step("computing the CPU reference", args.run.json, || {
                high_order::reference_shape_steps(input.view(), shape, &values, steps)
            })
        })
        .transpose()?;
    // The streaming launch of a high-order shape, as given or from the table (each row records the
    // shape its kernel ran: the problem's plan of this one, or the seven-point star's default).
    let card = gpu.info.tuned_card();
    let launch = streaming_launch(args, card, T::PRECISION)?;
    let mut rows = Vec::new();
    for &variant in &variants(args)? {
        let fuse = args.fuse.map(|k| k as usize);
        let ms = match variant {
            _ if shape != StencilShape::Star7 => median_after_warm_up(repeat, || match launch {
                Some(launch) if variant == StencilVariant::Streaming => {
                    high_order::run_shape_with(&mut problem, shape, &values, launch, steps)
                }
                _ => high_order::run_shape_variant(&mut problem, shape, variant, &values, steps),
            })?,
            StencilVariant::Temporal => median_after_warm_up(repeat, || problem.run_fused(fuse, steps))?,
            _ => median_after_warm_up(repeat, || problem.run(variant, steps))?,
        };
        let check = match &reference {
            Some(reference) => {
                let out = problem.output()?;
                let (out, reference) =
                    (out.as_slice().expect("contiguous"), reference.as_slice().expect("contiguous"));
                Some(step("checking the result", args.run.json, || compare(out, reference)))
            }
            None => None,
        };
        rows.push(Row {
            variant,
            dtype: T::NAME,
            ms_per_step: ms / steps as f64,
            copy_ms,
            points: input.len(),
            bytes_per_point: 2 * size_of::<T>(),
            check,
            schedule: (variant == StencilVariant::Temporal)
                .then(|| temporal::schedule(steps, fuse, T::PRECISION))
                .transpose()?,
            launch: match variant {
                StencilVariant::Streaming if shape == StencilShape::Star7 => {
                    Some(problem.default_streaming_shape()?)
                }
                StencilVariant::Streaming => launch.map(|l| problem.planned_shape(shape, l)).transpose()?,
                _ => None,
            },
        });
    }
    if let Some(path) = &args.output {
        npy::write_output(path, &problem.output()?)?;
    }
    Ok(rows)
}

/// A note for runs whose values may overflow before their last step (from values within
/// `±start`): the kernels then compute on infinities and NaN, which is not what a run of finite
/// values costs (on an H200, 2000 steps of the default star7 on 256×512×1024 `f64` drew about
/// 590 W against 700 W, the power cap, with bounded coefficients: docs/stencil-h200.md).
fn overflow_note(
    shape: StencilShape,
    values: &[f64],
    steps: usize,
    start: f64,
    precision: Precision,
) -> Option<String> {
    let from = shape.steps_to_overflow(values, start, precision.max_finite())?;
    (from <= steps as u64).then(|| {
        format!(
            "{precision}: these {shape} coefficients can grow values up to {}× a step, so from step {from} of \
             {steps} the values may overflow to infinity, and the rest of the run is timed on infinities and \
             NaN, which draw less power than finite values; to time long runs, coefficients whose magnitudes \
             (each times the points it weighs) sum to at most 1 keep the values bounded, e.g. \
             --coeffs 0.4,0.1,0.1,0.1,0.1,0.1,0.1 for star7",
            shape.growth_bound(values)
        )
    })
}

/// Runs the chosen variants on the `--input` grid, or on random grids of `--grid` for each
/// chosen element type.
fn run_all(gpu: &Gpu, args: &Args, file: Option<NpyGrid>, dtype: DtypeArg, seed: u64) -> Result<Vec<Row>> {
    let mut rows = Vec::new();
    match file {
        Some(NpyGrid::F32(input)) => rows.extend(run_dtype(gpu, args, input)?),
        Some(NpyGrid::F64(input)) => rows.extend(run_dtype(gpu, args, input)?),
        None => {
            for &precision in dtype.precisions() {
                rows.extend(match precision {
                    Precision::F32 => run_generated::<f32>(gpu, args, seed)?,
                    Precision::F64 => run_generated::<f64>(gpu, args, seed)?,
                });
            }
        }
    }
    Ok(rows)
}

/// [`run_dtype`] on a random `--grid` of `T` from `seed`.
fn run_generated<T: Element + WritableElement>(gpu: &Gpu, args: &Args, seed: u64) -> Result<Vec<Row>> {
    let Grid3 { nx, ny, nz } = args.grid;
    let shape = (nz as usize, ny as usize, nx as usize);
    let what = format!("generating the {} input", T::PRECISION);
    let input = step(&what, args.run.json, || random::random_grid::<T>(shape, seed))?;
    run_dtype(gpu, args, input)
}

/// The `--coeffs` given, or the shape's default.
fn coefficients(args: &Args) -> Vec<f64> {
    args.coeffs.clone().map_or_else(|| args.shape.default_coeffs(), |c| c.0)
}

/// The variants to run: the chosen ones among those built for the shape (with the default
/// `--variant all`, all of those), or an error naming what the shape has.
fn variants(args: &Args) -> Result<Vec<StencilVariant>> {
    let built = high_order::variants(args.shape);
    let chosen = &args.variant.0;
    if *chosen == StencilVariant::ALL {
        return Ok(built.to_vec());
    }
    if let Some(missing) = chosen.iter().find(|v| !built.contains(v)) {
        let names: Vec<_> = built.iter().map(|v| v.name()).collect();
        return Err(Error::BadArgument(format!(
            "the {} stencil is built as {}, not {missing}",
            args.shape,
            names.join(" and ")
        )));
    }
    Ok(chosen.clone())
}

/// Refuses bad `--shape` / `--coeffs` / `--variant` combinations and grids too thin for the
/// shape, before anything runs.
fn check_shape(args: &Args, grid: Grid3) -> Result<()> {
    args.shape.check_coeffs(&coefficients(args))?;
    args.shape.check_grid(grid)?;
    variants(args).map(drop)
}

/// `--launch`: a launch shape as the sweep names it ([`Describe`]). Clap's message already says
/// "invalid value … for '--launch'", so a syntax error gives only its reason, not the error
/// type's "bad argument: " prefix.
fn parse_launch(text: &str) -> std::result::Result<Describe, String> {
    text.parse().map_err(|e: Error| match e {
        Error::BadArgument(why) => why,
        other => other.to_string(),
    })
}

/// Refuses, before anything runs, a `--launch` this run cannot take: for the seven-point star,
/// without the streaming variant, for several element types, or one that
/// [`high_order::entry_point`] refuses (not built, along y, another L2 prefetch).
fn check_launch(args: &Args, dtype: DtypeArg) -> Result<()> {
    let Some(Describe(launch)) = args.launch else {
        return Ok(());
    };
    let shape = args.shape;
    let bad = |why: String| Err(Error::BadArgument(format!("--launch {}: {why}", Describe(launch))));
    if shape == StencilShape::Star7 {
        return bad("it sets the launch of --shape star13, star25 or box27; the seven-point star's \
                    are tiles::STREAMING_F32 and _F64 (bench stencil_variants sweeps them)"
            .into());
    }
    if !variants(args)?.contains(&StencilVariant::Streaming) {
        return bad("it sets the streaming kernel's launch: add --variant streaming".into());
    }
    let DtypeArg::One(precision) = dtype else {
        return bad("f32 and f64 are built with different kernels: give --dtype f32 or --dtype f64".into());
    };
    high_order::entry_point(shape, launch, precision).map(drop)
}

/// The launch of the high-order shape's streaming kernel in `precision`: `--launch`, or the
/// default of `card`'s table (`tiles.rs`; the GPU's is [`host::GpuInfo::tuned_card`]); none for
/// the seven-point star or a run without the streaming variant.
fn streaming_launch(args: &Args, card: TunedCard, precision: Precision) -> Result<Option<StreamingShape>> {
    if args.shape == StencilShape::Star7 || !variants(args)?.contains(&StencilVariant::Streaming) {
        return Ok(None);
    }
    match args.launch {
        Some(Describe(launch)) => Ok(Some(launch)),
        None => high_order::default_launch(args.shape, precision, card).map(Some),
    }
}

/// Refuses a `--fuse` depth that no temporal kernel is built with, before anything runs.
fn check_fuse(args: &Args, dtype: DtypeArg) -> Result<()> {
    if !args.variant.0.contains(&StencilVariant::Temporal) {
        return Ok(());
    }
    let fuse = args.fuse.map(|k| k as usize);
    dtype.precisions().iter().try_for_each(|&p| temporal::schedule(args.steps as usize, fuse, p).map(drop))
}

/// Refuses, before the kernels load or anything is allocated, a grid that the GPU or the host
/// cannot hold for every chosen element type (one line, exit status 2).
fn preflight(args: &Args, grid: Grid3, dtype: DtypeArg) -> Result<()> {
    let (free, _) = host::gpu::device_memory(args.run.device)?;
    let available = preflight::host_available();
    let needs = dtype.precisions().iter().map(|&precision| StencilNeed::new(grid, precision));
    for need in needs {
        need.check_device(free as u64)?;
        need.check_host(!args.run.no_verify, available)?;
    }
    Ok(())
}

fn run(args: &Args) -> Result<ExitCode> {
    if let Some(count) = args.gpus {
        return run_gpus(args, count);
    }
    let file = args.input.as_deref().map(read_grid_npy).transpose()?;
    let dtype = chosen_dtype(args.dtype, file.as_ref().map(NpyGrid::precision))?;
    check_output(args, dtype)?;
    let grid = file.as_ref().map_or(args.grid, NpyGrid::grid);
    check_shape(args, grid)?;
    check_fuse(args, dtype)?;
    check_launch(args, dtype)?;
    preflight(args, grid, dtype)?;
    let gpu = Gpu::with_ptx(args.run.device, args.run.ptx)?;
    let seed = args.run.seed.unwrap_or_else(random::fresh_seed);
    let rows = run_all(&gpu, args, file, dtype, seed)?;
    let card = gpu.info.tuned_card();
    // The streaming kernel's launch in each element type, as its row ran it.
    let launches: Vec<(&str, StreamingShape)> =
        rows.iter().filter_map(|r| Some((r.dtype, r.launch?))).collect();
    let Grid3 { nx, ny, nz } = grid;
    if args.run.json {
        let rows: Vec<_> = rows
            .iter()
            .map(|r| {
                json!({
                    "variant": r.variant.name(), "figure": r.variant.figure(), "dtype": r.dtype,
                    "ms_per_step": r.ms_per_step, "gpoints_per_s": r.gpoints_per_s(), "gb_per_s": r.gb_per_s(),
                    "copy_ms": r.copy_ms, "ceiling_percent": r.ceiling_percent(),
                    "max_abs_error": r.check.map(|c| c.max_abs_error), "max_rel_error": r.check.map(|c| c.max_rel_error),
                    "status": r.status(), "schedule": r.schedule.map(|s| s.to_string()),
                })
            })
            .collect();
        let mut report = json!({
            "gpu": gpu.info.name, "compute_capability": gpu.info.compute_capability,
            "driver_cuda_version": gpu.info.driver_cuda_version, "ptx_arch": gpu.info.ptx_arch,
            "grid": { "nz": nz, "ny": ny, "nx": nx }, "steps": args.steps, "repeat": args.run.repeat,
            "shape": args.shape.name(), "coeffs": coefficients(args), "seed": seed, "rows": rows,
        });
        if let Some(path) = &args.input {
            report["seed"] = serde_json::Value::Null;
            report["input"] = json!(path.display().to_string());
        }
        if let Some(path) = &args.output {
            report["output"] = json!(path.display().to_string());
        }
        if let Some(launch) = args.launch {
            report["launch"] = json!(launch.to_string());
        }
        if !launches.is_empty() {
            report["tuned_card"] = json!(format!("{card:?}"));
            let named =
                launches.iter().map(|(dtype, l)| (dtype.to_string(), json!(Describe(*l).to_string())));
            report["launches"] = serde_json::Value::Object(named.collect());
        }
        if let Some(cluster) = args.cluster {
            report["cluster"] = json!(cluster);
            report["clusters_supported"] = json!(gpu.info.clusters);
        }
        println!("{}", serde_json::to_string_pretty(&report).expect("JSON of plain values"));
    } else {
        println!("{}", gpu_line(&gpu.info));
        let source = match &args.input {
            Some(path) => format!("input {}", path.display()),
            None => format!("seed {seed}"),
        };
        println!(
            "grid {nz}x{ny}x{nx} (nz×ny×nx, {} points), {} stencil, {} step(s), coefficients {:?}, median of {} runs, {source}",
            thousands(grid.len()),
            args.shape,
            args.steps,
            coefficients(args),
            args.run.repeat
        );
        match args.launch {
            Some(launch) => {
                println!(
                    "{} streaming kernel launched as `{launch}` (--launch; default: tiles.rs)",
                    args.shape
                )
            }
            None => {
                for (precision, launch) in &launches {
                    let launch = Describe(*launch);
                    println!(
                        "{} streaming kernel, {precision}: `{launch}` (tiles.rs, tuned on the {card:?}; fitted to the grid)",
                        args.shape
                    );
                }
            }
        }
        if let Some(cluster) = args.cluster {
            let plain = if gpu.info.clusters { "" } else { " (this GPU has none: launched plainly)" };
            println!("streaming kernels in thread-block clusters of up to {cluster} blocks{plain}");
        }
        println!("ceiling: device-to-device copy of the grid (each point read once, written once)\n");
        let mut table = Table::new(vec![
            "variant",
            "figure",
            "dtype",
            "ms/step",
            "Gpoints/s",
            "GB/s",
            "% of copy",
            "max abs err",
            "max rel err",
            "check",
        ]);
        for r in &rows {
            let err =
                |f: fn(&Comparison) -> f64| r.check.as_ref().map_or("-".into(), |c| format!("{:.2e}", f(c)));
            table.push(vec![
                r.variant.name().into(),
                r.variant.figure().into(),
                r.dtype.into(),
                format!("{:.4}", r.ms_per_step),
                format!("{:.1}", r.gpoints_per_s()),
                format!("{:.0}", r.gb_per_s()),
                format!("{:.1}", r.ceiling_percent()),
                err(|c| c.max_abs_error),
                err(|c| c.max_rel_error),
                r.status().into(),
            ]);
        }
        print!("{}", table.render());
        for r in rows.iter().filter(|r| r.variant == rows[0].variant) {
            let copy = Row { ms_per_step: r.copy_ms, ..*r };
            println!(
                "copy ceiling {}: {:.4} ms = {:.0} GB/s = {:.1} Gpoints/s",
                r.dtype,
                r.copy_ms,
                copy.gb_per_s(),
                copy.gpoints_per_s()
            );
        }
        for r in &rows {
            if let Some(schedule) = r.schedule {
                println!("temporal {}: {schedule}", r.dtype);
            }
        }
        if let Some(path) = &args.output {
            println!("result of {} {} written to {}", rows[0].variant, rows[0].dtype, path.display());
        }
    }
    let failed = rows.iter().any(|r| r.status() == "FAIL");
    Ok(if failed { ExitCode::FAILURE } else { ExitCode::SUCCESS })
}

fn main() -> ExitCode {
    let args = Args::parse();
    run(&args).unwrap_or_else(|e| report_error("stencil", &e))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> std::result::Result<Args, clap::Error> {
        Args::try_parse_from(std::iter::once("stencil").chain(args.iter().copied()))
    }

    #[test]
    fn long_runs_that_may_overflow_get_a_note() {
        let laplacian = StencilShape::Star7.default_coeffs();
        // Random grids start within ±1, just under 1, where `max / start` once overflowed.
        let note = overflow_note(StencilShape::Star7, &laplacian, 2000, 0.999_999, Precision::F64).unwrap();
        assert!(note.starts_with("f64: these star7 coefficients can grow values up to 12× a step"), "{note}");
        assert!(note.contains("from step 286 of 2000"), "{note}");
        assert_eq!(overflow_note(StencilShape::Star7, &laplacian, 285, 1.0, Precision::F64), None);
        assert!(overflow_note(StencilShape::Star7, &laplacian, 36, 1.0, Precision::F32).is_some());
        let heat = [0.4, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1];
        assert_eq!(overflow_note(StencilShape::Star7, &heat, 1_000_000, 1.0, Precision::F32), None);
        let average = StencilShape::Box27.default_coeffs();
        assert_eq!(overflow_note(StencilShape::Box27, &average, 1_000_000, 1.0, Precision::F32), None);
    }

    #[test]
    fn gpus_take_a_count_or_all() {
        assert_eq!(parse(&[]).unwrap().gpus, None);
        assert_eq!(parse(&["--gpus", "2"]).unwrap().gpus, Some(GpuCount::Count(2)));
        assert_eq!(parse(&["--gpus", "all"]).unwrap().gpus, Some(GpuCount::All));
        assert_eq!(parse(&["--gpus", "env", "--nccl-id", "/tmp/id"]).unwrap().gpus, Some(GpuCount::Env));
        assert_eq!(parse(&[]).unwrap().halo as usize, host::distributed::DEFAULT_HALO);
        assert_eq!(parse(&["--gpus", "2", "--halo", "4"]).unwrap().halo, 4);
        assert!(
            !parse(&["--gpus", "2"]).unwrap().no_overlap
                && parse(&["--gpus", "2", "--no-overlap"]).unwrap().no_overlap
        );
        assert!(parse(&["--gpus", "2", "--halo", "0"]).is_err(), "a halo of at least one plane");
        for bad in ["0", "two", "1.5"] {
            let err = parse(&["--gpus", bad]).unwrap_err().to_string();
            assert!(err.contains("expected a number of GPUs (1 or more), `all` or `env`"), "{bad}: {err}");
        }
    }

    #[test]
    fn defaults_are_a_big_laplacian_on_all_variants() {
        let args = parse(&[]).unwrap();
        assert_eq!(args.grid, Grid3 { nx: 512, ny: 512, nz: 512 });
        assert_eq!(args.dtype, None);
        assert_eq!(chosen_dtype(args.dtype, None).unwrap(), DtypeArg::All);
        assert_eq!((&args.input, &args.output), (&None, &None));
        assert_eq!(args.variant.0, StencilVariant::ALL);
        assert_eq!(coefficients(&args), [-6.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0]);
        assert_eq!(args.shape, StencilShape::Star7);
        assert_eq!((args.steps, args.run.repeat, args.run.no_verify, args.run.json), (1, 20, false, false));
        assert_eq!(args.kept_l2, None, "the element type's default share of L2");
        assert_eq!(parse(&["--kept-l2", "50"]).unwrap().kept_l2, Some(50));
        assert_eq!(args.cluster, None, "each launch shape's own cluster");
    }

    #[test]
    fn clusters_are_one_to_eight_blocks_on_one_gpu() {
        assert_eq!(parse(&["--cluster", "8"]).unwrap().cluster, Some(8));
        assert_eq!(parse(&["--cluster", "1"]).unwrap().cluster, Some(1));
        for bad in ["0", "9", "two"] {
            let err = parse(&["--cluster", bad]).unwrap_err();
            assert_eq!(err.exit_code(), 2, "{bad}: {err}");
            assert!(err.to_string().contains("--cluster"), "{bad}: {err}");
        }
        let err = parse(&["--cluster", "4", "--gpus", "2"]).unwrap_err().to_string();
        assert!(err.contains("cannot be used with"), "{err}");
    }

    #[test]
    fn shapes_take_their_own_coefficients_grids_and_variants() {
        let check = |argv: &[&str]| {
            let args = parse(argv).unwrap();
            check_shape(&args, args.grid).map(|()| variants(&args).unwrap())
        };
        assert_eq!(
            check(&["--shape", "star13"]).unwrap(),
            [StencilVariant::SharedTiled, StencilVariant::Streaming]
        );
        assert_eq!(check(&["--shape", "box27", "--coeffs", "1,2,3,4"]).unwrap(), [StencilVariant::Streaming]);
        let args = parse(&["--shape", "star25"]).unwrap();
        assert_eq!(coefficients(&args).len(), 13);
        let refused = [
            (&["--shape", "box27", "--coeffs", "1,2,3"][..], "takes 4 coefficients"),
            (&["--coeffs", "1,2,3"][..], "takes 7 coefficients"),
            (&["--shape", "star25", "--grid", "8"][..], "at least 9"),
            (
                &["--shape", "star13", "--variant", "basic"][..],
                "built as shared-tiled and streaming, not basic",
            ),
            (&["--shape", "box27", "--variant", "shared-tiled"][..], "built as streaming, not shared-tiled"),
        ];
        for (argv, why) in refused {
            let err = check(argv).unwrap_err().to_string();
            assert!(err.contains(why), "{argv:?}: {err}");
        }
        assert!(parse(&["--shape", "star9"]).unwrap_err().to_string().contains("star7, star13"));
    }

    #[test]
    fn fusion_depths_are_checked_before_the_gpu() {
        let fuse = |extra: &[&str]| {
            let args = parse(&[&["--variant", "temporal", "--steps", "64"], extra].concat()).unwrap();
            check_fuse(&args, args.dtype.unwrap_or(DtypeArg::All))
        };
        assert!(fuse(&[]).is_ok());
        assert!(fuse(&["--fuse", "1"]).is_ok());
        assert!(fuse(&["--fuse", "3", "--dtype", "f64"]).is_ok());
        let err = fuse(&["--fuse", "5"]).unwrap_err().to_string();
        assert!(err.contains("--fuse 5") && err.contains("fusion depths"), "{err}");
        assert!(parse(&["--fuse", "0"]).unwrap_err().to_string().contains("fuse"));
    }

    #[test]
    fn every_option_parses() {
        let args = parse(&[
            "--grid",
            "5x5x1000",
            "--dtype",
            "f64",
            "--variant",
            "shared-tiled,register-tiled",
            "--steps",
            "10",
            "--coeffs",
            "0.4,0.1,0.1,0.1,0.1,0.1,0.1",
            "--repeat",
            "3",
            "--no-verify",
            "--json",
            "--seed",
            "42",
        ])
        .unwrap();
        assert_eq!(args.grid, Grid3 { nx: 1000, ny: 5, nz: 5 });
        assert_eq!(args.variant.0, [StencilVariant::SharedTiled, StencilVariant::RegisterTiled]);
        assert_eq!(coefficients(&args)[0], 0.4);
        assert_eq!((args.steps, args.run.repeat, args.run.seed), (10, 3, Some(42)));
    }

    #[test]
    fn bad_arguments_are_refused_with_a_reason() {
        for (args, reason) in [
            (&["--grid", "2"][..], "between 3 and"),
            (&["--grid", "4x4"][..], "NZxNYxNX"),
            (&["--coeffs", "1,2,3,4,5,6,x"][..], "not a number"),
            (&["--coeffs", "1,2,3,4,5,6,inf"][..], "not finite"),
            (&["--variant", "tiled"][..], "unknown stencil variant"),
            (&["--steps", "0"][..], "steps"),
            (&["--repeat", "0"][..], "repeat"),
            (&["--dtype", "f16"][..], "f16"),
            (&["--kept-l2", "101"][..], "not in 0..=100"),
        ] {
            let err = parse(args).unwrap_err().to_string();
            assert!(err.contains(reason), "{args:?}: {err}");
        }
    }

    #[test]
    fn input_conflicts_with_grid_and_seed() {
        let args = parse(&["--input", "in.npy", "--output", "out.npy", "--variant", "streaming"]).unwrap();
        assert_eq!(args.input.as_deref(), Some(Path::new("in.npy")));
        assert_eq!(args.output.as_deref(), Some(Path::new("out.npy")));
        for other in [&["--grid", "64"][..], &["--seed", "1"][..]] {
            let err = parse(&[&["--input", "in.npy"][..], other].concat()).unwrap_err();
            assert_eq!(err.kind(), clap::error::ErrorKind::ArgumentConflict, "{other:?}: {err}");
        }
    }

    #[test]
    fn dtype_must_be_absent_or_match_the_input_file() {
        use DtypeArg::{All, One};
        use Precision::{F32, F64};
        assert_eq!(chosen_dtype(None, None).unwrap(), All);
        assert_eq!(chosen_dtype(Some(One(F64)), None).unwrap(), One(F64));
        assert_eq!(chosen_dtype(None, Some(F32)).unwrap(), One(F32));
        assert_eq!(chosen_dtype(Some(One(F64)), Some(F64)).unwrap(), One(F64));
        for asked in [One(F32), All] {
            let err = chosen_dtype(Some(asked), Some(F64)).unwrap_err();
            assert!(matches!(err, Error::BadArgument(_)), "{err}");
            assert!(err.to_string().contains("which holds f64"), "{err}");
        }
    }

    #[test]
    fn the_printed_launches_are_the_cards_defaults_or_the_given_one() {
        use gpu_kernels::stencil::tiles::{STAR25_F32, STAR25_F32_H100, STAR25_F64, STAR25_F64_H100};
        // Each element type's launch, as `run_dtype` takes it.
        let launches = |extra: &[&str], card, dtype: DtypeArg| -> Vec<(Precision, StreamingShape)> {
            let args = parse(extra).unwrap();
            let launch = |&p: &Precision| Some((p, streaming_launch(&args, card, p).unwrap()?));
            dtype.precisions().iter().filter_map(launch).collect()
        };
        let star25 = ["--shape", "star25"];
        let both = DtypeArg::All;
        assert_eq!(
            launches(&star25, TunedCard::H200, both),
            [(Precision::F32, STAR25_F32), (Precision::F64, STAR25_F64)]
        );
        assert_eq!(
            launches(&star25, TunedCard::H100, both),
            [(Precision::F32, STAR25_F32_H100), (Precision::F64, STAR25_F64_H100)]
        );
        let given = "32x8 v2 r1 a1 p1 z64".parse::<Describe>().unwrap().0;
        let args = ["--shape", "star25", "--launch", "32x8 v2 r1 a1 p1 z64"];
        assert_eq!(
            launches(&args, TunedCard::H100, DtypeArg::One(Precision::F64)),
            [(Precision::F64, given)]
        );
        // None where no high-order streaming kernel runs.
        assert!(launches(&[], TunedCard::H100, both).is_empty(), "the seven-point star");
        assert!(
            launches(&["--shape", "star25", "--variant", "shared-tiled"], TunedCard::H100, both).is_empty()
        );
    }

    #[test]
    fn launches_are_checked_before_anything_runs() {
        use Precision::{F32, F64};
        let check = |extra: &[&str], dtype| check_launch(&parse(extra).unwrap(), DtypeArg::One(dtype));
        let star25 = |launch: &'static str| vec!["--shape", "star25", "--launch", launch];
        assert!(check(&[], F64).is_ok(), "no --launch, no constraint");
        assert!(check(&star25("32x4 v2 r1 a1 p1 z32"), F64).is_ok(), "the one-row f64 kernel");
        assert!(
            check(&star25("32x4 v2 r2 a1 p1 waves c2"), F64).is_ok(),
            "the f64 default's kernel in one wave, in pairs"
        );
        assert!(check(&star25("32x16 v4 r1 a1 p1 waves"), F32).is_ok(), "the f32 default");
        assert!(check(&["--shape", "box27", "--launch", "32x16 v4 r1 a0 p1 waves"], F32).is_ok());
        for (extra, dtype, says) in [
            (vec!["--launch", "32x4 v2 r1 a1 p1 z32"], F64, "the seven-point star's are"),
            (
                [star25("32x4 v2 r1 a1 p1 z32"), vec!["--variant", "shared-tiled"]].concat(),
                F64,
                "add --variant streaming",
            ),
            (star25("32x4 v8 r1 a1 p1 z32"), F64, "no star25 kernel with 8 points per row"),
            (star25("32x4 v4 r1 a1 p1 z32"), F64, "is built for f64"),
            (star25("32x4 v2 r1 a1 p0 z32"), F64, "give p1"),
            (star25("32x4 v2 r1 a1 p1 z32 along y"), F64, "walk along z, not along y"),
        ] {
            let err = check(&extra, dtype).unwrap_err();
            assert!(matches!(err, Error::BadArgument(_)), "{extra:?}: {err}");
            assert!(err.to_string().contains(says), "{extra:?}: {err}");
        }
        let all = check_launch(&parse(&star25("32x4 v2 r1 a1 p1 z32")).unwrap(), DtypeArg::All).unwrap_err();
        assert!(all.to_string().contains("give --dtype f32 or --dtype f64"), "{all}");
        let syntax = parse(&star25("32x4 v2")).unwrap_err().to_string();
        assert!(syntax.contains("no rows a thread"), "{syntax}");
        assert!(!syntax.contains("bad argument"), "clap says the value is invalid: {syntax}");
    }

    #[test]
    fn output_needs_one_variant_and_one_dtype() {
        let check = |extra: &[&str], dtype| check_output(&parse(extra).unwrap(), dtype);
        assert!(check(&[], DtypeArg::All).is_ok(), "no --output, no constraint");
        assert!(check(&["--output", "o.npy", "--variant", "basic"], DtypeArg::One(Precision::F32)).is_ok());
        for (extra, dtype) in [
            (&["--output", "o.npy"][..], DtypeArg::One(Precision::F32)),
            (&["--output", "o.npy", "--variant", "basic,streaming"][..], DtypeArg::One(Precision::F64)),
            (&["--output", "o.npy", "--variant", "basic"][..], DtypeArg::All),
        ] {
            let err = check(extra, dtype).unwrap_err();
            assert!(matches!(err, Error::BadArgument(_)), "{err}");
            assert!(err.to_string().contains("--output writes one grid"), "{err}");
        }
    }

    #[test]
    fn npy_grids_round_trip_in_both_dtypes() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("grid.npy");
        let f32_grid = random::random_grid::<f32>((3, 4, 5), 7).unwrap();
        npy::write_output(&path, &f32_grid).unwrap();
        let read = read_grid_npy(&path).unwrap();
        assert_eq!(read.grid(), Grid3 { nx: 5, ny: 4, nz: 3 });
        assert_eq!(read, NpyGrid::F32(f32_grid));
        let f64_grid = random::random_grid::<f64>((6, 3, 4), 8).unwrap();
        ndarray_npy::write_npy(&path, &f64_grid).unwrap();
        assert_eq!(read_grid_npy(&path).unwrap(), NpyGrid::F64(f64_grid));
    }

    #[test]
    fn bad_npy_files_are_errors_not_panics() {
        let tmp = tempfile::tempdir().unwrap();
        let file = |name: &str| tmp.path().join(name);
        ndarray_npy::write_npy(file("i32.npy"), &Array3::<i32>::zeros((3, 3, 3))).unwrap();
        ndarray_npy::write_npy(file("2d.npy"), &ndarray::Array2::<f32>::zeros((4, 4))).unwrap();
        ndarray_npy::write_npy(file("thin.npy"), &Array3::<f64>::zeros((3, 2, 8))).unwrap();
        ndarray_npy::write_npy(
            file("fortran.npy"),
            &Array3::<f32>::zeros(ndarray::ShapeBuilder::f((3, 4, 5))),
        )
        .unwrap();
        std::fs::write(file("text.npy"), "not numpy").unwrap();
        ndarray_npy::write_npy(file("short.npy"), &Array3::<f32>::zeros((4, 4, 4))).unwrap();
        let bytes = std::fs::read(file("short.npy")).unwrap();
        std::fs::write(file("short.npy"), &bytes[..bytes.len() - 4]).unwrap();
        for (name, reason) in [
            ("missing.npy", "cannot open it"),
            ("i32.npy", "expected float32"),
            ("2d.npy", "has 2 dimensions"),
            ("thin.npy", "holds 3x2x8: ny = 2"),
            ("fortran.npy", "Fortran order"),
            ("text.npy", "not a NumPy .npy file"),
            ("short.npy", "needs 256"),
        ] {
            let err = read_grid_npy(&file(name)).unwrap_err();
            let text = err.to_string();
            assert!(matches!(err, Error::BadArgument(_) | Error::BadShape(_)), "{name}: {text}");
            assert!(text.contains(reason) && text.contains(name) && !text.contains('\n'), "{name}: {text}");
        }
    }

    #[test]
    fn dtypes_are_parsed_by_name() {
        assert_eq!(parse(&["--dtype", "f64"]).unwrap().dtype, Some(DtypeArg::One(Precision::F64)));
        assert_eq!(parse(&["--dtype", "all"]).unwrap().dtype, Some(DtypeArg::All));
        assert_eq!(DtypeArg::All.precisions(), Precision::ALL);
        assert_eq!(DtypeArg::One(Precision::F32).precisions(), [Precision::F32]);
        let err = parse_dtype("f16").unwrap_err();
        assert!(err.contains("unknown element type `f16`: expected one of f32, f64, all"), "{err}");
        let err = parse(&["--dtype", "F32"]).unwrap_err().to_string();
        assert!(err.contains("[possible values: f32, f64, all]"), "{err}");
    }
}
