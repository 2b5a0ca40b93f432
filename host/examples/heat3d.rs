//! `heat3d`: 3D heat diffusion on the GPU with the library's seven-point stencil, fused over
//! time steps by the temporal kernel.
//!
//! A hot sphere (u = 1, radius N/6) sits at the centre of a cold unit cube (u = 0) whose faces are
//! held at 0. Explicit Euler on an N³ grid of spacing h = 1/(N-1) is
//!
//! ```text
//! u_new = u + r·(sum of the 6 neighbours − 6u),   r = α·dt/h²
//! ```
//!
//! that is the stencil with coefficients c0 = 1 − 6r and c1..c6 = r. The time step is
//! dt = CFL·h²/(6α), so r = CFL/6: stable (and every new value a convex combination of old ones)
//! for CFL ≤ 1. The steps run on the GPU with `StencilVariant::Temporal` (several steps per pass
//! over the grid), in segments between evenly spaced snapshots. At each snapshot the example
//! prints the total heat (it falls once heat reaches the cold faces), the extremes, and where the
//! heat went: the radius of the region at or above half the maximum, and the rms distance of the
//! heat from the centre next to its free-space value √(r₀² + 6r·step) (the gap is the heat the
//! faces took). It writes the middle x–y slice (z = N/2) as a PNG with the INFERNO colour map on
//! the fixed scale 0..1, so that the images are comparable.
//!
//! Two checks, each reported on one line (exit status 1 if one fails):
//! 1. the fused run equals the same number of single steps bit for bit, on every point;
//! 2. the discrete maximum principle: no value leaves the initial range [0, 1].
//!
//! ```sh
//! cargo run --release --example heat3d
//! cargo run --release --example heat3d -- --grid 128 --steps 5000 --snapshots 6 --dtype f64
//! ```
//!
//! Exit status: 0 all checks passed, 1 a check failed, 2 an error (bad arguments, no GPU, a
//! file that could not be written).

use std::error::Error as StdError;
use std::fs::{self, File};
use std::io::BufWriter;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, ValueEnum};
use gpu_kernels::stencil::Coeffs;
use host::merge::HostKey;
use host::report::{Table, gpu_line};
use host::stencil::{StencilProblem, temporal};
use host::{Element, Gpu};
use ndarray::{Array3, ArrayView2, ArrayView3, Axis};

/// Errors of the example: the library's, and writing the images.
type BoxResult<T> = Result<T, Box<dyn StdError>>;

/// Images are upscaled (nearest neighbour) to at least this many pixels on a side.
const MIN_IMAGE_PX: usize = 256;

#[derive(Parser, Debug)]
#[command(
    name = "heat3d",
    about = "3D heat diffusion on the GPU: a hot sphere cooling in a cold box, run with the temporal (fused) stencil kernel",
    long_about = "3D heat diffusion on the GPU with the seven-point stencil, explicit Euler: u_new = u + r·(sum of \
the 6 neighbours − 6u), r = α·dt/h², i.e. coefficients c0 = 1 − 6r and c1..c6 = r, with dt = CFL·h²/(6α) so that \
r = CFL/6 (stable for CFL ≤ 1). The grid is the unit cube, N points a side (h = 1/(N-1)); it starts as a hot sphere \
(u = 1) of radius N/6 points at the centre, u = 0 elsewhere, and the faces stay at 0. The steps run with the temporal \
kernel (several steps per pass over the grid). At each of --snapshots evenly spaced steps (t = 0 and the end \
included) it prints the total heat, the extremes and the radius of the region at or above half the maximum, and \
writes the middle x–y slice (z = N/2) to --out as heat3d_step_<step>.png (INFERNO colour map, fixed scale 0..1).\n\n\
Checks: (1) the fused run equals the same number of single steps bit for bit; (2) the discrete maximum principle, \
0 ≤ u ≤ 1 at every snapshot.\n\nExit status: 0 all checks passed, 1 a check failed, 2 an error (bad arguments, \
no GPU, a file that could not be written)."
)]
struct Args {
    /// Grid points a side: an N×N×N cube.
    #[arg(long, value_name = "N", default_value_t = 256, value_parser = clap::value_parser!(u32).range(8..=2048))]
    grid: u32,
    /// Element type.
    #[arg(long, value_enum, default_value_t = Dtype::F32)]
    dtype: Dtype,
    /// Time steps in all.
    #[arg(long, default_value_t = 2000, value_parser = clap::value_parser!(u32).range(1..))]
    steps: u32,
    /// Snapshots (printed statistics and images), evenly spaced in time from t = 0 to the end.
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u32).range(2..=1000))]
    snapshots: u32,
    /// dt as a fraction of the stability limit h²/(6α); above 1 the scheme is unstable.
    #[arg(long, default_value_t = 0.9, value_parser = parse_positive)]
    cfl: f64,
    /// Thermal diffusivity α (it sets dt; r = α·dt/h² depends only on --cfl).
    #[arg(long, default_value_t = 1.0, value_parser = parse_positive)]
    alpha: f64,
    /// Folder for the PNG images (created if missing).
    #[arg(long, value_name = "DIR", default_value = "docs/heat3d")]
    out: PathBuf,
    /// GPU ordinal.
    #[arg(long, default_value_t = 0)]
    device: usize,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Dtype {
    F32,
    F64,
}

fn parse_positive(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 => Ok(v),
        _ => Err(format!("`{text}` is not a positive number")),
    }
}

/// A grid element whose bits can be compared (`HostKey::bits`): `f32` or `f64`.
trait Float: Element + HostKey {}

impl<T: Element + HostKey> Float for T {}

/// Grid spacing, time step and the stencil weight `r = α·dt/h²` on the unit cube.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Physics {
    h: f64,
    dt: f64,
    r: f64,
}

impl Physics {
    /// `n` points a side, diffusivity `alpha`, `dt = cfl·h²/(6α)`.
    fn new(n: usize, alpha: f64, cfl: f64) -> Self {
        let h = 1.0 / (n - 1) as f64;
        let r = cfl / 6.0;
        Physics { h, dt: r * h * h / alpha, r }
    }

    /// The explicit Euler step as stencil coefficients: c1..c6 = r rounded to `T`, and c0 = 1 − 6r
    /// from that rounded r, so that in `f32` the seven weights sum to exactly 1 (no heat is
    /// made or lost by the weights themselves; in `f64` to within an ulp).
    fn coeffs<T: Element>(&self) -> Coeffs<T> {
        let r = T::from_f64(self.r);
        Coeffs([T::from_f64(1.0 - 6.0 * r.to_f64()), r, r, r, r, r, r])
    }
}

/// An `n³` grid, shape `(nz, ny, nx)`: 1 inside the sphere of radius `n/6` about the centre,
/// 0 elsewhere (the faces included).
fn hot_sphere<T: Element>(n: usize) -> Array3<T> {
    let centre = (n - 1) as f64 / 2.0;
    let radius = n as f64 / 6.0;
    Array3::from_shape_fn((n, n, n), |(z, y, x)| {
        let d2 = [z, y, x].iter().map(|&i| (i as f64 - centre).powi(2)).sum::<f64>();
        T::from_f64(if d2 <= radius * radius { 1.0 } else { 0.0 })
    })
}

/// `snapshots` steps evenly spaced from 0 to `steps` (rounded, repeats dropped when there are
/// more snapshots than steps).
fn snapshot_steps(steps: usize, snapshots: usize) -> Vec<usize> {
    let last = snapshots.max(2) - 1;
    let mut at: Vec<usize> = (0..=last).map(|i| (2 * i * steps + last) / (2 * last)).collect();
    at.dedup();
    at
}

/// What one snapshot of the grid shows.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Snapshot {
    step: usize,
    /// Sum of u over the grid.
    heat: f64,
    min: f64,
    max: f64,
    /// Points that are NaN or infinite.
    non_finite: usize,
    /// Radius (in grid spacings) of the ball with as many points as are at or above max/2.
    half_max_radius: f64,
    /// Root-mean-square distance of the heat from the centre, in grid spacings.
    rms_radius: f64,
}

impl Snapshot {
    fn of<T: Element>(step: usize, u: ArrayView3<T>) -> Self {
        let (nz, ny, nx) = u.dim();
        let centre = [nz, ny, nx].map(|n| (n - 1) as f64 / 2.0);
        let (mut heat, mut moment, mut non_finite) = (0.0, 0.0, 0);
        let (mut min, mut max) = (f64::INFINITY, f64::NEG_INFINITY);
        for ((z, y, x), v) in u.indexed_iter() {
            let v = v.to_f64();
            if !v.is_finite() {
                non_finite += 1;
                continue;
            }
            let d2: f64 = [z, y, x].iter().zip(centre).map(|(&i, c)| (i as f64 - c).powi(2)).sum();
            heat += v;
            moment += v * d2;
            min = min.min(v);
            max = max.max(v);
        }
        let above = u.iter().filter(|v| v.to_f64() >= max / 2.0).count() as f64;
        let half_max_radius = (3.0 * above / (4.0 * std::f64::consts::PI)).cbrt();
        let rms_radius = (moment / heat).sqrt();
        Snapshot { step, heat, min, max, non_finite, half_max_radius, rms_radius }
    }

    /// Whether every value is finite and within `[lo, hi]`.
    fn within(&self, lo: f64, hi: f64) -> bool {
        self.non_finite == 0 && self.min >= lo && self.max <= hi
    }
}

/// The INFERNO colour of `value` on the scale 0..1 (clamped; NaN shows as 0).
fn colour(value: f64) -> [u8; 3] {
    let t = if value.is_nan() { 0.0 } else { value.clamp(0.0, 1.0) };
    let c = colorous::INFERNO.eval_continuous(t);
    [c.r, c.g, c.b]
}

/// How many pixels a side each grid point gets so that the image is at least
/// [`MIN_IMAGE_PX`] wide.
fn upscale(n: usize) -> usize {
    MIN_IMAGE_PX.div_ceil(n.max(1))
}

/// A slice of shape `(ny, nx)` as RGB bytes, each point `scale × scale` pixels, y upward (row
/// 0 of the image is the last y).
fn slice_rgb<T: Element>(slice: ArrayView2<T>, scale: usize) -> Vec<u8> {
    let (ny, nx) = slice.dim();
    let mut rgb = Vec::with_capacity(ny * nx * scale * scale * 3);
    for row in slice.rows().into_iter().rev() {
        let line: Vec<u8> =
            row.iter().flat_map(|v| std::iter::repeat_n(colour(v.to_f64()), scale)).flatten().collect();
        for _ in 0..scale {
            rgb.extend_from_slice(&line);
        }
    }
    rgb
}

/// Writes `rgb` (8-bit RGB, rows top to bottom) as a PNG.
fn write_png(path: &Path, width: usize, height: usize, rgb: &[u8]) -> BoxResult<()> {
    let fail = |e: &dyn std::fmt::Display| format!("writing {}: {e}", path.display());
    let file = File::create(path).map_err(|e| fail(&e))?;
    let (w, h) = (u32::try_from(width)?, u32::try_from(height)?);
    let mut encoder = png::Encoder::new(BufWriter::new(file), w, h);
    encoder.set_color(png::ColorType::Rgb);
    encoder.set_depth(png::BitDepth::Eight);
    let mut writer = encoder.write_header().map_err(|e| fail(&e))?;
    writer.write_image_data(rgb).map_err(|e| fail(&e))?;
    writer.finish().map_err(|e| fail(&e))?;
    Ok(())
}

/// Writes the x–y slice z = nz/2 of `u` to `dir/heat3d_step_<step>.png`; returns the path.
fn write_slice<T: Element>(dir: &Path, step: usize, u: ArrayView3<T>) -> BoxResult<PathBuf> {
    let slice = u.index_axis(Axis(0), u.dim().0 / 2);
    let (ny, nx) = slice.dim();
    let scale = upscale(nx.max(ny));
    let path = dir.join(format!("heat3d_step_{step}.png"));
    write_png(&path, nx * scale, ny * scale, &slice_rgb(slice, scale))?;
    Ok(path)
}

/// Runs `steps` steps of the temporal kernel from `from`, `fuse` steps per pass (default: the
/// library's choice; `Some(1)`: single steps); returns the grid and the GPU time (ms).
fn advance<T: Element>(
    gpu: &Gpu,
    from: ArrayView3<T>,
    coeffs: Coeffs<T>,
    steps: usize,
    fuse: Option<usize>,
) -> host::Result<(Array3<T>, f64)> {
    let mut problem = StencilProblem::new(gpu, from, coeffs)?;
    let ms = problem.run_fused(fuse, steps)?;
    Ok((problem.output()?, ms))
}

/// Points whose bits differ, and the first of them: `((z, y, x), a, b)`.
#[derive(Debug, Default, PartialEq)]
struct BitDiff {
    mismatches: usize,
    first: Option<((usize, usize, usize), f64, f64)>,
}

fn bit_diff<T: Float>(a: ArrayView3<T>, b: ArrayView3<T>) -> BitDiff {
    let mut diff = BitDiff::default();
    for ((at, &x), &y) in a.indexed_iter().zip(b.iter()) {
        if x.bits() != y.bits() {
            diff.mismatches += 1;
            diff.first.get_or_insert((at, x.to_f64(), y.to_f64()));
        }
    }
    diff
}

fn print_setup<T: Element>(args: &Args, physics: Physics, at: &[usize]) -> host::Result<()> {
    let n = args.grid;
    let Physics { h, dt, r } = physics;
    let steps = args.steps as usize;
    println!(
        "heat3d: {n}³ {} grid on the unit cube, {steps} steps to t = {:.4e}, snapshots at steps {at:?}",
        T::NAME,
        steps as f64 * dt
    );
    println!(
        "  h = {h:.6e}, dt = CFL·h²/(6α) = {dt:.6e} (CFL {}, α = {}), r = α·dt/h² = {r}",
        args.cfl, args.alpha
    );
    let Coeffs(c) = physics.coeffs::<T>();
    println!("  stencil coefficients in {}: c0 = 1 − 6r = {}, c1..c6 = r = {}", T::NAME, c[0], c[1]);
    if r > 1.0 / 6.0 {
        println!(
            "  warning: r > 1/6 (CFL > 1): the scheme is unstable; expect growing oscillations and check 2 to fail"
        );
    }
    println!(
        "  initial: u = 1 in the sphere of radius {:.2} points (N/6) at the centre, u = 0 elsewhere; faces held at 0",
        n as f64 / 6.0
    );
    let first = at[1] - at[0];
    println!(
        "  temporal kernel, {first} steps to the first snapshot: {}",
        temporal::schedule(first, None, T::PRECISION)?
    );
    Ok(())
}

/// The snapshots as a table. Radii are in grid spacings; "free-space rms" is what the rms
/// radius would be with no faces: the scheme adds exactly 6r to the mean squared distance per
/// step, so the gap to it is the heat the cold faces took.
fn print_snapshots(snapshots: &[Snapshot], physics: Physics) {
    let (heat0, rms0) = (snapshots[0].heat, snapshots[0].rms_radius);
    let mut table = Table::new(vec![
        "step",
        "time",
        "total heat (Σu)",
        "% of t=0",
        "min",
        "max",
        "half-max radius",
        "rms radius",
        "free-space rms",
    ]);
    for s in snapshots {
        let free_space = (rms0 * rms0 + 6.0 * physics.r * s.step as f64).sqrt();
        table.push(vec![
            s.step.to_string(),
            format!("{:.4e}", s.step as f64 * physics.dt),
            format!("{:.3}", s.heat),
            format!("{:.4}", 100.0 * s.heat / heat0),
            format!("{:.4e}", s.min),
            format!("{:.6}", s.max),
            format!("{:.2}", s.half_max_radius),
            format!("{:.2}", s.rms_radius),
            format!("{free_space:.2}"),
        ]);
    }
    print!("{}", table.render());
    println!("(radii in grid points; half-max radius: the ball as large as the region where u ≥ max/2)");
}

/// Check 1: the fused run against single steps. Prints its line; returns whether it passed.
fn check_bits<T: Float>(fused: ArrayView3<T>, single: ArrayView3<T>, steps: usize) -> bool {
    let diff = bit_diff(fused, single);
    let points = fused.len();
    match diff.first {
        None => println!(
            "check 1: temporal (fused) run = {steps} single steps, bit for bit on all {points} points: OK"
        ),
        Some(((z, y, x), a, b)) => println!(
            "check 1: temporal (fused) run vs {steps} single steps: FAIL, {} of {points} points differ, first at (z, y, x) = ({z}, {y}, {x}): {a:e} vs {b:e}",
            diff.mismatches
        ),
    }
    diff.mismatches == 0
}

/// Check 2: the discrete maximum principle at every snapshot. Prints its line.
fn check_bounds(snapshots: &[Snapshot]) -> bool {
    let (lo, hi) = (snapshots[0].min, snapshots[0].max);
    let bad: Vec<&Snapshot> = snapshots.iter().filter(|s| !s.within(lo, hi)).collect();
    match bad.first() {
        None => {
            println!("check 2: maximum principle, {lo} ≤ u ≤ {hi} at all {} snapshots: OK", snapshots.len())
        }
        Some(s) => println!(
            "check 2: maximum principle {lo} ≤ u ≤ {hi}: FAIL at {} snapshot(s), first at step {}: min {:e}, max {:e}, {} non-finite",
            bad.len(),
            s.step,
            s.min,
            s.max,
            s.non_finite
        ),
    }
    bad.is_empty()
}

/// The whole run for elements of type `T`; returns whether both checks passed.
fn simulate<T: Float>(gpu: &Gpu, args: &Args) -> BoxResult<bool> {
    let (n, steps) = (args.grid as usize, args.steps as usize);
    let physics = Physics::new(n, args.alpha, args.cfl);
    let coeffs = physics.coeffs::<T>();
    let at = snapshot_steps(steps, args.snapshots as usize);
    print_setup::<T>(args, physics, &at)?;
    fs::create_dir_all(&args.out).map_err(|e| format!("creating {}: {e}", args.out.display()))?;

    let initial = hot_sphere::<T>(n);
    let mut current = initial.clone();
    let (mut snapshots, mut paths, mut fused_ms) = (Vec::new(), Vec::new(), 0.0);
    for (i, &step) in at.iter().enumerate() {
        if i > 0 {
            let ms;
            (current, ms) = advance(gpu, current.view(), coeffs, step - at[i - 1], None)?;
            fused_ms += ms;
        }
        snapshots.push(Snapshot::of(step, current.view()));
        paths.push(write_slice(&args.out, step, current.view())?);
    }
    print_snapshots(&snapshots, physics);
    for path in &paths {
        println!("wrote {}", path.display());
    }

    let (single, single_ms) = advance(gpu, initial.view(), coeffs, steps, Some(1))?;
    let bits_ok = check_bits(current.view(), single.view(), steps);
    let bounds_ok = check_bounds(&snapshots);
    let gpoints = |ms: f64| (n as f64).powi(3) * steps as f64 / ms / 1e6;
    println!(
        "GPU time: temporal {fused_ms:.2} ms ({:.1} Gpoint-steps/s), single steps {single_ms:.2} ms ({:.1} Gpoint-steps/s), fused speed-up {:.2}×",
        gpoints(fused_ms),
        gpoints(single_ms),
        single_ms / fused_ms
    );
    Ok(bits_ok && bounds_ok)
}

fn run(args: &Args) -> BoxResult<bool> {
    let gpu = Gpu::new(args.device)?;
    println!("{}", gpu_line(&gpu.info));
    match args.dtype {
        Dtype::F32 => simulate::<f32>(&gpu, args),
        Dtype::F64 => simulate::<f64>(&gpu, args),
    }
}

fn main() -> ExitCode {
    let args = Args::parse();
    match run(&args) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("heat3d: error: {e}");
            ExitCode::from(2)
        }
    }
}

#[cfg(test)]
mod tests {
    use host::stencil::reference_steps;

    use super::*;

    #[test]
    fn defaults() {
        let args = Args::try_parse_from(["heat3d"]).unwrap();
        assert_eq!((args.grid, args.dtype, args.steps, args.snapshots), (256, Dtype::F32, 2000, 4));
        assert_eq!((args.cfl, args.alpha, args.out), (0.9, 1.0, PathBuf::from("docs/heat3d")));
        for bad in [&["--grid", "4"][..], &["--snapshots", "1"], &["--steps", "0"], &["--cfl", "-1"]] {
            assert!(Args::try_parse_from(std::iter::once("heat3d").chain(bad.iter().copied())).is_err());
        }
    }

    #[test]
    fn default_cfl_gives_r_of_0_15_and_weights_summing_to_one() {
        let p = Physics::new(256, 1.0, 0.9);
        assert!((p.r - 0.15).abs() < 1e-15);
        assert!((p.h - 1.0 / 255.0).abs() < 1e-15);
        assert!((p.r - 1.0 * p.dt / (p.h * p.h)).abs() < 1e-12);
        let Coeffs(c) = p.coeffs::<f64>();
        assert!((c[0] - 0.1).abs() < 1e-12 && c[1..].iter().all(|&ci| ci == p.r));
        assert!((c.iter().sum::<f64>() - 1.0).abs() < 1e-12);
    }

    #[test]
    fn f32_weights_sum_to_exactly_one() {
        let Coeffs(c) = Physics::new(256, 1.0, 0.9).coeffs::<f32>();
        assert_eq!(c[1], 0.15f32);
        assert_eq!(c.iter().map(|&ci| f64::from(ci)).sum::<f64>(), 1.0);
    }

    #[test]
    fn rms_radius_grows_by_6r_per_step_in_free_space() {
        let physics = Physics::new(32, 1.0, 0.9);
        let u0 = hot_sphere::<f64>(32);
        let u = reference_steps(u0.view(), physics.coeffs::<f64>(), 5);
        let (s0, s) = (Snapshot::of(0, u0.view()), Snapshot::of(5, u.view()));
        assert!((s.heat / s0.heat - 1.0).abs() < 1e-12, "no heat has reached the faces yet");
        let grown = s.rms_radius.powi(2) - s0.rms_radius.powi(2);
        assert!((grown - 6.0 * physics.r * 5.0).abs() < 1e-9, "{grown}");
    }

    #[test]
    fn sphere_is_hot_inside_and_cold_on_the_faces() {
        let n = 48;
        let u = hot_sphere::<f32>(n);
        assert_eq!(u.dim(), (n, n, n));
        let hot = u.iter().filter(|&&v| v == 1.0).count();
        assert_eq!(hot + u.iter().filter(|&&v| v == 0.0).count(), n * n * n);
        let ball = 4.0 / 3.0 * std::f64::consts::PI * (n as f64 / 6.0).powi(3);
        assert!((hot as f64 / ball - 1.0).abs() < 0.1, "{hot} vs {ball}");
        assert_eq!(u[[n / 2, n / 2, n / 2]], 1.0);
        assert!(u.index_axis(Axis(0), 0).iter().all(|&v| v == 0.0));
        let s = Snapshot::of(0, u.view());
        assert_eq!((s.min, s.max, s.heat, s.non_finite), (0.0, 1.0, hot as f64, 0));
        assert!((s.half_max_radius - n as f64 / 6.0).abs() < 0.5, "{}", s.half_max_radius);
    }

    #[test]
    fn snapshots_are_evenly_spaced_from_start_to_end() {
        assert_eq!(snapshot_steps(2000, 4), [0, 667, 1333, 2000]);
        assert_eq!(snapshot_steps(10, 2), [0, 10]);
        assert_eq!(snapshot_steps(2, 5), [0, 1, 2]);
        assert_eq!(snapshot_steps(1, 3), [0, 1]);
    }

    #[test]
    fn colours_span_inferno_and_clamp() {
        assert_eq!(colour(0.0), [0, 0, 4]);
        assert_eq!(colour(1.0), [252, 255, 164]);
        assert_eq!(colour(-3.0), colour(0.0));
        assert_eq!(colour(7.0), colour(1.0));
        assert_eq!(colour(f64::NAN), colour(0.0));
    }

    #[test]
    fn slices_are_upscaled_to_at_least_256_pixels_y_upward() {
        assert_eq!((upscale(256), upscale(100), upscale(64), upscale(1000)), (1, 3, 4, 1));
        let slice = ndarray::arr2(&[[0.0f32, 0.0], [1.0, 1.0]]);
        let rgb = slice_rgb(slice.view(), 3);
        assert_eq!(rgb.len(), 6 * 6 * 3);
        assert_eq!(rgb[..3], colour(1.0), "row 0 of the image is the last y");
        assert_eq!(rgb[rgb.len() - 3..], colour(0.0));
    }

    #[test]
    fn png_is_written() {
        let dir = tempfile::tempdir().unwrap();
        let u = hot_sphere::<f64>(10);
        let path = write_slice(dir.path(), 0, u.view()).unwrap();
        assert_eq!(path.file_name().unwrap(), "heat3d_step_0.png");
        let bytes = fs::read(&path).unwrap();
        assert_eq!(&bytes[1..4], b"PNG");
    }

    #[test]
    fn bit_diff_finds_the_first_mismatch() {
        let a = hot_sphere::<f32>(8);
        let mut b = a.clone();
        assert_eq!(bit_diff(a.view(), b.view()), BitDiff::default());
        b[[1, 2, 3]] = -0.0;
        let d = bit_diff(a.view(), b.view());
        assert_eq!((d.mismatches, d.first), (1, Some(((1, 2, 3), 0.0, 0.0))), "0.0 and -0.0 differ in bits");
    }

    /// The CPU reference evaluates the same formula as the kernels: heat only leaves, and the
    /// values stay within [0, 1] at the default CFL, in both precisions.
    fn cools_within_bounds<T: Element>() {
        let u0 = hot_sphere::<T>(16);
        let coeffs = Physics::new(16, 1.0, 0.9).coeffs::<T>();
        let mut last = Snapshot::of(0, u0.view());
        let mut u = u0;
        for step in 1..=20 {
            u = reference_steps(u.view(), coeffs, 5);
            let s = Snapshot::of(5 * step, u.view());
            assert!(s.within(0.0, 1.0), "{s:?}");
            assert!(
                s.heat < last.heat && s.half_max_radius >= last.half_max_radius - 1.0,
                "{s:?} after {last:?}"
            );
            last = s;
        }
    }

    #[test]
    fn cpu_reference_cools_within_bounds() {
        cools_within_bounds::<f32>();
        cools_within_bounds::<f64>();
    }
}
