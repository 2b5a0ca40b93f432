#!/usr/bin/env python3
"""Times the 7-point stencil as a new user would write it in `torch.compile` and in JAX `jax.jit`,
on the grids, element types and coefficients of our criterion benchmark (`stencil_variants`),
checks every result, and writes JSON that `cargo xtask bench-report` adds to the stencil tables.

    python3 benches/peers/stencil_peers.py --ours .gpu/bin/stencil --out $OUT/stencil_peers.json

Options: --grids 128,256,512,256x512x1024 (N or NZxNYxNX, x fastest), --dtypes f32,f64,
--repeat 50, --seed, --out FILE (default: JSON on stdout, the table on stderr), --ours PATH (our
`stencil` binary: it runs on the same input, its result is compared with each peer's, and its
streaming kernel is recorded as the row `ours/streaming`), --append (add the rows to the --out file,
replacing those of the same peer, stencil, grid and dtype: one file for several --stencil runs).

Semantics (ours exactly): u has shape (nz, ny, nx); out = u, and every interior point gets
c0*u[z,y,x] + c1*u[z,y,x-1] + c2*u[z,y,x+1] + c3*u[z,y-1,x] + c4*u[z,y+1,x] + c5*u[z-1,y,x]
+ c6*u[z+1,y,x]; points on a face keep their input. --stencil star13|star25|box27 times the other
stencil shapes instead (`stencil --shape`): the stars of order R = 2 and 4 (one coefficient per axis
and distance, for the two points at that distance; points within R of a face keep their input) and
the 27-point box (one coefficient per distance class: centre, face, edge, corner), with the bounded
coefficients of our `stencil_shapes` benchmark; their rows are named `<peer>/<stencil>`. Input: uniform in [-1, 1) from a fixed seed,
never zero. Each result is checked against a float64 numpy reference on the host (relative error:
max abs error over max |reference|; tolerance 1e-5 in f32, 1e-12 in f64).

Timing: torch (the peers and a device-to-device copy, the ceiling) with CUDA events per call,
each call dispatched while the GPU busy-waits (so Python's launch overhead is not timed), median of
--repeat after warm-up; JAX has no CUDA events, so batches of K calls are timed with
time.perf_counter up to block_until_ready, and the median batch is divided by K (on small grids
that includes dispatch). Compilation is never timed. Needs Python 3.12, numpy and PyTorch with CUDA; JAX is optional. Without torch or a
CUDA GPU it prints one line and exits 0.
"""
import argparse
import dataclasses
import datetime
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

from peer_report import appended, write_report

# What our criterion benchmark runs (benches/benches/stencil_variants.rs).
COEFFICIENTS = (0.4, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1)
STENCILS = ("star7", "star13", "star25", "box27")
RADIUS = {"star7": 1, "star13": 2, "star25": 4, "box27": 1}
GRIDS = "128,256,512,256x512x1024"
TOLERANCE = {"f32": 1e-5, "f64": 1e-12}
NUMPY_DTYPE = {"f32": np.float32, "f64": np.float64}
WARM_UP = 3
JAX_BATCH = 10
BUSY_WAIT_CYCLES = 2_000_000  # about 1 ms at 2 GHz: longer than dispatching one call


def parse_grid(text):
    """`N` (a cube) or `NZxNYxNX` as (nz, ny, nx), every extent at least 3."""
    parts = text.lower().split("x")
    try:
        extents = [int(p) for p in parts]
    except ValueError:
        raise argparse.ArgumentTypeError(f"`{text}` is not a grid: expected N or NZxNYxNX, e.g. 512 or 256x512x1024")
    if len(extents) == 1:
        extents *= 3
    if len(extents) != 3 or min(extents) < 3:
        raise argparse.ArgumentTypeError(f"`{text}` is not a grid: expected N or NZxNYxNX, every extent at least 3")
    return tuple(extents)


def parse_grids(text):
    return [parse_grid(g) for g in text.split(",")]


def parse_dtypes(text):
    dtypes = text.split(",")
    unknown = [d for d in dtypes if d not in NUMPY_DTYPE]
    if unknown or not dtypes:
        raise argparse.ArgumentTypeError(f"unknown dtype(s) {unknown}: expected f32, f64 or f32,f64")
    return dtypes


def parse_args(argv=None):
    parser = argparse.ArgumentParser(
        description="Time torch.compile and jax.jit on our stencil benchmarks (the 7-point star, or --stencil); write JSON.",
        epilog="Example: python3 benches/peers/stencil_peers.py --ours target/release/stencil "
        "--out target/criterion/stencil_peers.json",
    )
    parser.add_argument("--grids", type=parse_grids, default=parse_grids(GRIDS),
                        help=f"comma-separated grids, N or NZxNYxNX (default {GRIDS})")
    parser.add_argument("--dtypes", type=parse_dtypes, default=["f32", "f64"], help="f32, f64 or f32,f64 (default)")
    parser.add_argument("--repeat", type=int, default=50, help="timed calls per peer (default 50)")
    parser.add_argument("--seed", type=int, default=2026, help="seed of the random input (default 2026)")
    parser.add_argument("--out", help="write the JSON here (default: print it on stdout)")
    parser.add_argument("--ours", help="our `stencil` binary, run on the same input (e.g. target/release/stencil)")
    parser.add_argument("--stencil", choices=STENCILS, default="star7",
                        help="the stencil shape (default star7; our `stencil --shape`)")
    parser.add_argument("--append", action="store_true",
                        help="add the rows to the --out file, replacing rows of the same peer, stencil, grid and dtype")
    args = parser.parse_args(argv)
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")
    if args.ours and not (os.path.isfile(args.ours) and os.access(args.ours, os.X_OK)):
        parser.error(f"--ours {args.ours}: not an executable file")
    if args.append and not args.out:
        parser.error("--append needs --out FILE")
    return args


def note(message):
    print(f"stencil_peers: {message}", file=sys.stderr, flush=True)


def short_reason(error):
    """The first line of an exception, for a `skipped: ...` check."""
    lines = [line for line in str(error).splitlines() if line.strip()]
    text = f"{type(error).__name__}: {lines[0] if lines else ''}".strip()
    return text if len(text) <= 200 else text[:197] + "..."


# ---------------------------------------------------------------------------------------------
# Input, reference and errors (numpy, host)


def make_input(shape, dtype, seed):
    """Uniform in [-1, 1) from `seed`, in `dtype`, with no zero."""
    u = np.random.default_rng(seed).uniform(-1.0, 1.0, size=shape).astype(NUMPY_DTYPE[dtype], copy=False)
    u[u == 0] = 0.5
    return u


def stencil_coefficients(stencil):
    """The coefficients our criterion benchmark runs for `stencil` (`bounded` in
    benches/benches/stencil_variants.rs): the centre keeps 0.4, the neighbours share 0.6."""
    if stencil == "star7":
        return COEFFICIENTS
    if stencil == "box27":
        return (1.0 / 27.0,) * 4
    radius = RADIUS[stencil]
    return (0.4,) + (0.6 / (3 * radius) / 2.0,) * (3 * radius)


def terms(stencil, coefficients):
    """(coefficient, (dz, dy, dx)) for every point the formula reads, in our order: the 7-point
    star's centre, x-, x+, y-, y+, z-, z+; a high-order star's centre, then x, y and z for each
    distance (-d, +d); the box's centre, then faces, edges and corners in z, y, x order."""
    if stencil == "star7":
        offsets = [(0, 0, 0), (0, 0, -1), (0, 0, 1), (0, -1, 0), (0, 1, 0), (-1, 0, 0), (1, 0, 0)]
        return list(zip(coefficients, offsets))
    found = [(coefficients[0], (0, 0, 0))]
    if stencil == "box27":
        cube = [(dz, dy, dx) for dz in (-1, 0, 1) for dy in (-1, 0, 1) for dx in (-1, 0, 1)]
        for away in (1, 2, 3):
            found += [(coefficients[away], o) for o in cube if sum(v != 0 for v in o) == away]
        return found
    radius = RADIUS[stencil]
    for axis in range(3):  # x, y, z: the last, middle and first index
        for d in range(1, radius + 1):
            for sign in (-1, 1):
                offset = [0, 0, 0]
                offset[2 - axis] = sign * d
                found.append((coefficients[1 + axis * radius + d - 1], tuple(offset)))
    return found


def shifted(u, radius, offset):
    """The view of u whose element [z, y, x] is u at interior point (z+r, y+r, x+r) + offset."""
    return u[tuple(slice(radius + o, n - radius + o) for o, n in zip(offset, u.shape))]


def reference(u, stencil, coefficients):
    """One step in float64 on the host, with one temporary the size of the interior."""
    u = u.astype(np.float64)
    radius = RADIUS[stencil]
    (c0, centre), *rest = terms(stencil, coefficients)
    interior = np.multiply(shifted(u, radius, centre), c0)
    term = np.empty_like(interior)
    for c, offset in rest:
        interior += np.multiply(shifted(u, radius, offset), c, out=term)
    r = radius
    u[r:-r, r:-r, r:-r] = interior
    return u


def max_rel_error(result, expected):
    """Max |result - expected| over max |expected|, in float64; NaN when result holds NaN."""
    abs_error = float(np.max(np.abs(result.astype(np.float64) - expected)))
    scale = float(np.max(np.abs(expected)))
    return abs_error / scale if scale > 0 else abs_error


def within(error, dtype):
    return error is not None and error <= TOLERANCE[dtype]


# ---------------------------------------------------------------------------------------------
# Peers, written as a new user would


def weighted_sum(u, stencil, coefficients):
    """The formula over the interior, as a user writes it: one shifted slice per point."""
    radius = RADIUS[stencil]
    total = None
    for c, offset in terms(stencil, coefficients):
        term = c * shifted(u, radius, offset)
        total = term if total is None else total + term
    return total


def interior(stencil):
    r = RADIUS[stencil]
    return (slice(r, -r),) * 3


def torch_step(stencil, coefficients):
    def step(u):
        out = u.clone()
        out[interior(stencil)] = weighted_sum(u, stencil, coefficients)
        return out

    return step


def jax_step(stencil, coefficients):
    def step(u):
        return u.at[interior(stencil)].set(weighted_sum(u, stencil, coefficients))

    return step


# ---------------------------------------------------------------------------------------------
# Timing


def time_cuda_events(torch, call, repeat):
    """Median GPU time of `call()` in ms, CUDA events around each call, after warm-up. A GPU
    busy-wait is queued before each call, so the call is dispatched while the GPU waits and the
    events time the GPU's work, not Python's dispatch (criterion times ours the same way)."""
    for _ in range(WARM_UP):
        call()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    samples = []
    for _ in range(repeat):
        torch.cuda._sleep(BUSY_WAIT_CYCLES)
        start.record()
        call()
        end.record()
        end.synchronize()
        samples.append(start.elapsed_time(end))
    return statistics.median(samples)


def cuda_events_timing(repeat):
    return (f"CUDA events per call (dispatched during a GPU busy-wait, so launch overhead is not timed), "
            f"median of {repeat} after {WARM_UP} warm-up calls")


def time_jax_batches(call, repeat):
    """Median time of `call()` in ms: batches of JAX_BATCH calls up to block_until_ready."""
    for _ in range(WARM_UP):
        call().block_until_ready()
    batches = max(1, repeat // JAX_BATCH)
    samples = []
    for _ in range(batches):
        begin = time.perf_counter()
        for _ in range(JAX_BATCH):
            out = call()
        out.block_until_ready()
        samples.append((time.perf_counter() - begin) * 1e3 / JAX_BATCH)
    timing = (f"time.perf_counter around {JAX_BATCH} calls + block_until_ready (JAX has no CUDA events), "
              f"median of {batches} batches / {JAX_BATCH}, after {WARM_UP} warm-up calls")
    return statistics.median(samples), timing


# ---------------------------------------------------------------------------------------------
# Rows


@dataclasses.dataclass
class Case:
    """One grid and dtype: what every row of it is measured and checked against."""
    shape: tuple
    dtype: str
    repeat: int
    expected: np.ndarray  # the float64 reference
    ours: np.ndarray | None = None  # our result, when --ours is given
    copy_ms: float | None = None  # the copy timed in this process
    stencil: str = "star7"


def row(peer, case, ms=None, error=None, error_vs_ours=None, check=None, timing=None, copy_ms=None):
    """One peer on one case, in the JSON's format; `copy_ms` defaults to the case's."""
    copy_ms = copy_ms if copy_ms is not None else case.copy_ms
    ms = ms if ms is not None and math.isfinite(ms) and ms > 0 else None
    return {
        "peer": peer if case.stencil == "star7" else f"{peer}/{case.stencil}",
        "stencil": case.stencil,
        "grid": list(case.shape),
        "dtype": case.dtype,
        "ms_per_step": ms,
        "gpoints_per_s": math.prod(case.shape) / ms / 1e6 if ms else None,
        "copy_ms": copy_ms,
        "percent_of_copy": 100.0 * copy_ms / ms if ms and copy_ms else None,
        "max_rel_error": finite_or_none(error),
        "max_rel_error_vs_ours": finite_or_none(error_vs_ours),
        "check": check if check is not None else ("OK" if within(error, case.dtype) else "FAIL"),
        "timing": timing,
    }


def finite_or_none(value):
    return value if value is not None and math.isfinite(value) else None


def skipped(peer, case, reason):
    note(f"{peer} {case.shape} {case.dtype} skipped: {reason}")
    return row(peer, case, check=f"skipped: {reason}")


def checked_row(peer, case, ms, result, timing):
    """A row for a peer's `result` (a host array), checked against the reference and ours."""
    error = max_rel_error(result, case.expected)
    error_vs_ours = max_rel_error(result, case.ours) if case.ours is not None else None
    return row(peer, case, ms, error, error_vs_ours, timing=timing)


def torch_copy_ms(torch, u, repeat):
    """The ceiling: a device-to-device copy of the grid (each point read once, written once)."""
    dst = torch.empty_like(u)
    return time_cuda_events(torch, lambda: dst.copy_(u), repeat)


def torch_rows(torch, u, case):
    """`torch.compile` of the natural function, in the default mode and with max-autotune."""
    rows = []
    for peer, options in (("torch.compile", {}),
                          ("torch.compile-max-autotune", {"mode": "max-autotune-no-cudagraphs"})):
        torch.compiler.reset()  # compile for this grid and dtype alone, as a user's program would
        try:
            step = torch.compile(torch_step(case.stencil, stencil_coefficients(case.stencil)), **options)
            step(u)  # compiles
            ms = time_cuda_events(torch, lambda: step(u), case.repeat)
            result = step(u).cpu().numpy()
        except Exception as error:  # a peer that fails to compile or run is reported, not fatal
            rows.append(skipped(peer, case, short_reason(error)))
            continue
        rows.append(checked_row(peer, case, ms, result, cuda_events_timing(case.repeat)))
    torch.compiler.reset()
    return rows


def jax_row(jax, host_input, case):
    """`jax.jit` of the same function written with `u.at[...].set(...)`."""
    try:
        u = jax.device_put(host_input, jax.devices("gpu")[0])
        step = jax.jit(jax_step(case.stencil, stencil_coefficients(case.stencil)))
        step(u).block_until_ready()  # compiles
        ms, timing = time_jax_batches(lambda: step(u), case.repeat)
        result = np.asarray(step(u))
        u.delete()
    except Exception as error:  # as for torch: reported, not fatal
        return skipped("jax.jit", case, short_reason(error))
    return checked_row("jax.jit", case, ms, result, timing)


def run_ours(ours, host_input, case):
    """Runs our streaming kernel on the same input (`stencil --input ... --output ... --json`);
    returns its result (None when it did not run) and its row, with the copy of its own process."""
    with tempfile.TemporaryDirectory(prefix="stencil_peers-") as tmp:
        path_in, path_out = os.path.join(tmp, "in.npy"), os.path.join(tmp, "out.npy")
        np.save(path_in, host_input)
        coefficients = stencil_coefficients(case.stencil)
        command = [ours, "--input", path_in, "--variant", "streaming", "--output", path_out,
                   "--shape", case.stencil, "--repeat", str(case.repeat),
                   "--coeffs", ",".join(repr(c) for c in coefficients), "--json"]
        done = subprocess.run(command, capture_output=True, text=True)
        try:
            ours_row = json.loads(done.stdout)["rows"][0]
            result = np.load(path_out)
        except (ValueError, OSError, KeyError, IndexError):
            reason = (done.stderr.strip().splitlines() or [f"exit status {done.returncode}"])[-1]
            return None, skipped("ours/streaming", case, reason[:200])
    error = max_rel_error(result, case.expected)
    check = "OK" if ours_row["status"] == "OK" and within(error, case.dtype) else "FAIL"
    timing = f"stencil --json: CUDA events per run, median of {case.repeat} after 1 warm-up run"
    fields = row("ours/streaming", case, ours_row["ms_per_step"], error, check=check, timing=timing,
                 copy_ms=ours_row["copy_ms"])
    return result, fields


def run_case(torch, jax, args, shape, dtype):
    """Every peer on one grid and dtype; ours (when given) last."""
    note(f"{shape[0]}x{shape[1]}x{shape[2]} {dtype}")
    host_input = make_input(shape, dtype, args.seed)
    case = Case(shape, dtype, args.repeat, reference(host_input, args.stencil, stencil_coefficients(args.stencil)),
                stencil=args.stencil)
    ours_rows = []
    if args.ours:
        case.ours, ours_row = run_ours(args.ours, host_input, case)
        ours_rows.append(ours_row)
    u = torch.from_numpy(host_input).cuda()
    case.copy_ms = torch_copy_ms(torch, u, args.repeat)
    rows = torch_rows(torch, u, case)
    del u
    torch.cuda.empty_cache()  # leave the memory to JAX
    if isinstance(jax, str):
        rows.append(row("jax.jit", case, check=f"skipped: {jax}"))
    else:
        rows.append(jax_row(jax, host_input, case))
    return rows + ours_rows


# ---------------------------------------------------------------------------------------------
# Set-up and output


def import_torch():
    """torch with a CUDA GPU, else None (after saying why)."""
    try:
        import torch
    except ImportError as error:
        print(f"stencil_peers: PyTorch is not importable ({error}): nothing to measure")
        return None
    if not torch.cuda.is_available():
        print("stencil_peers: no CUDA GPU visible to PyTorch: nothing to measure")
        return None
    return torch


def import_jax(dtypes):
    """jax with a GPU backend and x64 enabled when f64 is run, else the reason it is skipped."""
    os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")  # leave GPU memory to torch and ours
    try:
        import jax
        if "f64" in dtypes:
            jax.config.update("jax_enable_x64", True)
        jax.devices("gpu")
    except Exception as error:
        return f"JAX unavailable ({short_reason(error)})"
    return jax


def row_key(r):
    """What a row measured: a later --append run replaces the row of the same key."""
    return (r.get("peer"), r.get("stencil", "star7"), tuple(r.get("grid") or ()), r.get("dtype"))


def table(rows):
    """A short human-readable table of the rows."""
    lines = [f"{'peer':<28} {'grid':<14} {'dtype':<5} {'ms/step':>9} {'Gpoints/s':>9} {'% copy':>7} "
             f"{'rel err':>9} {'vs ours':>9}  check"]

    def number(value, width, spec):
        return f"{value:{width}{spec}}" if value is not None else f"{'-':>{width}}"

    for r in rows:
        grid = "x".join(str(n) for n in r["grid"])
        lines.append(f"{r['peer']:<28} {grid:<14} {r['dtype']:<5} {number(r['ms_per_step'], 9, '.4f')} "
                     f"{number(r['gpoints_per_s'], 9, '.1f')} {number(r['percent_of_copy'], 7, '.1f')} "
                     f"{number(r['max_rel_error'], 9, '.1e')} {number(r['max_rel_error_vs_ours'], 9, '.1e')}  "
                     f"{r['check']}")
    return "\n".join(lines)


def main(argv=None):
    args = parse_args(argv)
    torch = import_torch()
    if torch is None:
        return 0
    jax = import_jax(args.dtypes)
    if isinstance(jax, str):
        note(f"{jax}: jax.jit rows are skipped")
    rows = []
    for dtype in args.dtypes:
        for shape in args.grids:
            rows += run_case(torch, jax, args, shape, dtype)
    report = {
        "gpu": torch.cuda.get_device_name(),
        "torch": torch.__version__,
        "jax": None if isinstance(jax, str) else jax.__version__,
        "date": datetime.datetime.now(datetime.timezone.utc).date().isoformat(),
        "stencil": args.stencil,
        "coefficients": list(stencil_coefficients(args.stencil)),
        "seed": args.seed,
        "repeat": args.repeat,
        "rows": rows,
    }
    if args.append:
        report["rows"] = appended(args.out, report, row_key, "stencil_peers") + rows
        # The stencils of every row, in the order of STENCILS (a shape per --stencil run), and
        # each one's coefficients (fixed per stencil, so the earlier runs' are these too).
        present = [s for s in STENCILS if s in {r.get("stencil", "star7") for r in report["rows"]}]
        report["stencil"] = ",".join(present)
        report["coefficients"] = {s: list(stencil_coefficients(s)) for s in present}
    write_report(report, table(rows), args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
