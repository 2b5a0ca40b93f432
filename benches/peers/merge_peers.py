#!/usr/bin/env python3
"""Times the merges a CUDA C++ user would pick instead of ours, `thrust::merge` and
`cub::DeviceMerge::MergeKeys` (benches/peers/merge_peers.cu, compiled here with nvcc), and our
`merge` kernels on the same inputs, checks every output bitwise against a stable merge in numpy,
and writes JSON that `cargo xtask bench-report` adds to the merge_variants tables.

    python3 benches/peers/merge_peers.py --ours target/release/merge --out target/criterion/merge_peers.json

Options: --cases 2^20+2^20,2^27+2^27,2^27+2^20,2^27+2^27:few-unique,2^27+2^27:all-equal (M+N[:DIST],
M and N as 2^K or an integer, DIST uniform (default), few-unique or all-equal), --dtypes i32,f64
(any of i32, u32, i64, f32, f64), --repeat 50, --warm-up 3, --seed 2026, --out FILE (default: JSON
on stdout, the table on stderr), --ours PATH (our `merge` binary), --ours-variants merge-path,tiled,
--nvcc nvcc, --arch sm_90, --cache DIR (where the compiled program is kept, default target/merge_peers),
--tmp DIR (where the inputs and outputs are written, one case at a time; default the system's
temporary folder), --device 0, --busy-wait, --append (add the rows to the --out file, replacing
those of the same peer and case: a long run can be split, e.g. one dtype per call), --values u32|u64
(merge by key: thrust::merge_by_key and cub::DeviceMerge::MergePairs against `merge --values`, each key
of A carrying its index as its value and each key of B its index with the top bit set; keys and
values both checked bit for bit; the rows say which values they carried).

Inputs (numpy, from --seed): `uniform` sorts random keys over the type's whole range ([-1, 1) for
floats); `few-unique` draws every key of A and B from the same 16 values, and `all-equal` makes
every key one value: the values our generator uses (host/src/merge/distribution.rs), so ties cross
A and B and the stable order of equal keys is tested.

Check: every output is compared bit for bit (as unsigned integers of the key's width, so -0.0 and
+0.0 differ) with a stable merge: `np.concatenate((a, b))[np.argsort(kind="stable")]`, which puts A's
key first on ties. Each output is poisoned (all bits set) before the run that produces it, so an
unwritten key fails.

Timing: CUDA events around each call, as `merge --json` and criterion time ours (launch latency
counts for both): the peers median of --repeat after --warm-up calls (thrust with a caching allocator
for its temporary storage and no synchronisation, so no cudaMalloc, cudaFree or host wake-up falls
between the events; see the header of merge_peers.cu), ours median of --repeat after one warm-up
run. With --busy-wait each peer call is enqueued while a one-thread kernel keeps the GPU busy, so
its events time GPU work alone (ours are still timed as above). Every row's percent_of_copy is
against a device-to-device copy of the same bytes timed in the row's own process.

Needs Python 3.8+ and numpy; nvcc (CUDA 12.8+ or 13, with thrust and CUB) and an NVIDIA GPU to
measure anything. Without nvcc or a GPU it prints one line and exits 0.
"""
import argparse
import datetime
import hashlib
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile

import numpy as np

from peer_report import write_report

CASES = "2^20+2^20,2^27+2^27,2^27+2^20,2^27+2^27:few-unique,2^27+2^27:all-equal"
DTYPES = {"i32": np.int32, "u32": np.uint32, "i64": np.int64, "f32": np.float32, "f64": np.float64}
UNSIGNED = {4: np.uint32, 8: np.uint64}
DISTRIBUTIONS = ("uniform", "few-unique", "all-equal")
FEW_UNIQUE_KEYS = 16  # host::merge::FEW_UNIQUE_KEYS
OURS_VARIANTS = "merge-path,tiled"
SOURCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "merge_peers.cu")
REPOSITORY = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
NVCC_FLAGS = ("-O3", "-std=c++17")


def note(message):
    print(f"merge_peers: {message}", file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------------------------
# Arguments


def parse_count(text):
    """`2^K` or a non-negative integer."""
    text = text.strip()
    try:
        if text.startswith("2^"):
            exponent = int(text[2:])
            if not 0 <= exponent < 63:
                raise ValueError
            return 1 << exponent
        value = int(text)
        if value < 0:
            raise ValueError
        return value
    except ValueError:
        raise argparse.ArgumentTypeError(f"`{text}` is not a count: expected 2^K or an integer, e.g. 2^27 or 1000")


def parse_case(text):
    """`M+N[:DIST]` as (m, n, dist)."""
    sizes, _, dist = text.partition(":")
    dist = dist or "uniform"
    if dist not in DISTRIBUTIONS:
        raise argparse.ArgumentTypeError(
            f"`{text}`: unknown distribution `{dist}`: expected one of {', '.join(DISTRIBUTIONS)}")
    parts = sizes.split("+")
    if len(parts) != 2:
        raise argparse.ArgumentTypeError(
            f"`{text}` is not a case: expected M+N[:DIST], e.g. 2^27+2^20 or 2^27+2^27:few-unique")
    return parse_count(parts[0]), parse_count(parts[1]), dist


def parse_cases(text):
    return [parse_case(c) for c in text.split(",") if c.strip()]


def parse_dtypes(text):
    dtypes = [d.strip() for d in text.split(",") if d.strip()]
    unknown = [d for d in dtypes if d not in DTYPES]
    if unknown or not dtypes:
        raise argparse.ArgumentTypeError(
            f"unknown dtype(s) {unknown}: expected a comma-separated list of {', '.join(DTYPES)}")
    return dtypes


def parse_variants(text):
    variants = [v.strip() for v in text.split(",") if v.strip()]
    if not variants:
        raise argparse.ArgumentTypeError("expected at least one variant, e.g. merge-path,tiled")
    return variants


def parse_args(argv=None):
    parser = argparse.ArgumentParser(
        description="Time thrust::merge and cub::DeviceMerge against our merge kernels; write JSON.",
        epilog="Example: python3 benches/peers/merge_peers.py --ours target/release/merge "
        "--out target/criterion/merge_peers.json",
    )
    parser.add_argument("--cases", type=parse_cases, default=parse_cases(CASES),
                        help=f"comma-separated M+N[:DIST] (default {CASES})")
    parser.add_argument("--dtypes", type=parse_dtypes, default=["i32", "f64"],
                        help="comma-separated key types among i32, u32, i64, f32, f64 (default i32,f64)")
    parser.add_argument("--repeat", type=int, default=50, help="timed calls per peer (default 50)")
    parser.add_argument("--warm-up", type=int, default=3, help="untimed calls before them (peers; default 3)")
    parser.add_argument("--seed", type=int, default=2026, help="seed of the random inputs (default 2026)")
    parser.add_argument("--out", help="write the JSON here (default: print it on stdout)")
    parser.add_argument("--ours", help="our `merge` binary, run on the same inputs (e.g. target/release/merge)")
    parser.add_argument("--ours-variants", type=parse_variants, default=parse_variants(OURS_VARIANTS),
                        help=f"our variants to run, each a row ours/<variant> (default {OURS_VARIANTS}); "
                             "merge-path@256x15-pipelined picks a merge-path shape (merge --path-shape)")
    parser.add_argument("--nvcc", default="nvcc", help="the CUDA compiler (default: nvcc on PATH)")
    parser.add_argument("--arch", default="sm_90", help="nvcc -arch (default sm_90, the H100/H200)")
    parser.add_argument("--cache", default=os.path.join(REPOSITORY, "target", "merge_peers"),
                        help="folder for the compiled program (default target/merge_peers)")
    parser.add_argument("--tmp", help="folder for the inputs and outputs of one case at a time (default: the system's)")
    parser.add_argument("--device", type=int, default=0, help="GPU ordinal (default 0)")
    parser.add_argument("--busy-wait", action="store_true",
                        help="enqueue each peer call while the GPU busy-waits, timing GPU work alone "
                        "(default: events around the call, as `merge` times ours)")
    parser.add_argument("--values", choices=("u32", "u64"),
                        help="merge by key, each key with a value of this type (default: keys alone)")
    parser.add_argument("--append", action="store_true",
                        help="add the rows to the --out file, replacing rows of the same peer and case")
    args = parser.parse_args(argv)
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")
    if args.warm_up < 0:
        parser.error("--warm-up must be at least 0")
    if args.ours and not (os.path.isfile(args.ours) and os.access(args.ours, os.X_OK)):
        parser.error(f"--ours {args.ours}: not an executable file")
    if args.append and not args.out:
        parser.error("--append needs --out FILE")
    if args.tmp and not os.path.isdir(args.tmp):
        parser.error(f"--tmp {args.tmp}: not a folder")
    return args


def count_label(count):
    """2^K for a power of two, else the decimal number (as `cargo xtask bench-report` names cases)."""
    return f"2^{count.bit_length() - 1}" if count > 0 and count & (count - 1) == 0 else str(count)


def case_label(m, n, dist):
    return f"{count_label(m)}+{count_label(n)}" + ("" if dist == "uniform" else f"-{dist}")


# ---------------------------------------------------------------------------------------------
# Inputs and the reference (numpy, host)


def key_at(numerator, denominator, dtype):
    """The key `numerator / denominator` of the way up the type's range, as our generator's
    `HostKey::from_level` places it: over the whole range for integers, over [-1, 1) for floats."""
    numpy_type = DTYPES[dtype]
    if np.issubdtype(numpy_type, np.floating):
        return numpy_type(2.0 * numerator / denominator - 1.0)
    info = np.iinfo(numpy_type)
    span = int(info.max) - int(info.min) + 1
    return numpy_type(int(info.min) + span * numerator // denominator)


def sorted_uniform(rng, size, dtype):
    numpy_type = DTYPES[dtype]
    if np.issubdtype(numpy_type, np.floating):
        keys = rng.uniform(-1.0, 1.0, size).astype(numpy_type, copy=False)
    else:
        info = np.iinfo(numpy_type)
        keys = rng.integers(info.min, info.max, size, dtype=numpy_type, endpoint=True)
    keys.sort()
    return keys


def make_inputs(m, n, dist, dtype, seed):
    """Sorted A (m keys) and B (n keys) of `dist` in `dtype`, the same for the same seed."""
    rng = np.random.default_rng(seed)
    if dist == "uniform":
        return sorted_uniform(rng, m, dtype), sorted_uniform(rng, n, dtype)
    if dist == "few-unique":
        values = np.array([key_at(2 * v + 1, 2 * FEW_UNIQUE_KEYS, dtype) for v in range(FEW_UNIQUE_KEYS)],
                          dtype=DTYPES[dtype])
        uniform = np.full(FEW_UNIQUE_KEYS, 1.0 / FEW_UNIQUE_KEYS)
        return tuple(np.repeat(values, rng.multinomial(size, uniform)) for size in (m, n))
    if dist == "all-equal":
        key = key_at(5, 8, dtype)
        return np.full(m, key, dtype=DTYPES[dtype]), np.full(n, key, dtype=DTYPES[dtype])
    raise ValueError(f"unknown distribution {dist}")


def reference(a, b):
    """The stable merge of sorted a and b: on equal keys, A's come first."""
    both = np.concatenate((a, b))
    order = np.argsort(both, kind="stable")
    return both[order]


def source_values(m, n, values):
    """The values of A's and B's keys in a merge by key, one array (A's then B's): each key's
    index, with the top bit set for B's (as `merge --values` and merge_peers.cu make them)."""
    numpy_type = UNSIGNED[4 if values == "u32" else 8]
    top = numpy_type(1) << numpy_type(8 * np.dtype(numpy_type).itemsize - 1)
    return np.concatenate((np.arange(m, dtype=numpy_type), np.arange(n, dtype=numpy_type) | top))


def reference_by_key(a, b, values):
    """The stable merge by key of sorted a and b with their source values: keys and values."""
    both = np.concatenate((a, b))
    order = np.argsort(both, kind="stable")
    return both[order], source_values(len(a), len(b), values)[order]


def bits(keys):
    """The keys as unsigned integers of their width: equal only for identical bit patterns."""
    return keys.view(UNSIGNED[keys.dtype.itemsize])


def compare(path, expected):
    """`(check, first wrong index)` of the .npy file at `path` against `expected`, bit for bit."""
    try:
        result = np.load(path, mmap_mode="r")
    except (OSError, ValueError) as error:
        return f"FAIL: cannot read the output ({error})", None
    if result.dtype != expected.dtype or result.shape != expected.shape:
        return f"FAIL: output is {result.dtype} {result.shape}, expected {expected.dtype} {expected.shape}", None
    wrong = np.flatnonzero(bits(result) != bits(expected))
    del result
    return ("OK", None) if wrong.size == 0 else ("FAIL", int(wrong[0]))


# ---------------------------------------------------------------------------------------------
# Rows


def row(peer, case, ms=None, copy_ms=None, check="OK", first_wrong_index=None, timing=None):
    """One peer on one case, in the JSON's format; `case` is (m, n, dist, dtype, values)."""
    m, n, dist, dtype, values = case
    ms = ms if ms is not None and math.isfinite(ms) and ms > 0 else None
    copy_ms = copy_ms if copy_ms is not None and math.isfinite(copy_ms) and copy_ms > 0 else None
    return {
        "peer": peer,
        "m": m,
        "n": n,
        "dist": dist,
        "dtype": dtype,
        "values": values,
        "ms": ms,
        "gkeys_per_s": (m + n) / ms / 1e6 if ms else None,
        "copy_ms": copy_ms,
        "percent_of_copy": 100.0 * copy_ms / ms if ms and copy_ms else None,
        "check": check,
        "first_wrong_index": first_wrong_index,
        "timing": timing,
    }


def skipped(peer, case, reason, copy_ms=None):
    reason = " ".join(reason.split())
    reason = reason if len(reason) <= 200 else reason[:197] + "..."
    note(f"{peer} {case_label(*case[:3])} {case[3]} skipped: {reason}")
    return row(peer, case, copy_ms=copy_ms, check=f"skipped: {reason}")


def failure_reason(done):
    """The first line with `error` that the program wrote on stderr, else its last line, else its
    exit status."""
    lines = [line.strip() for line in (done.stderr or "").splitlines() if line.strip()]
    errors = [line for line in lines if "error" in line.lower()]
    return (errors or lines or [f"exit status {done.returncode}"])[0 if errors else -1]


PEERS = ("thrust::merge", "cub::DeviceMerge")
PEERS_BY_KEY = ("thrust::merge_by_key", "cub::DeviceMerge::MergePairs")


def compare_by_key(keys_path, values_path, expected):
    """`compare` of the keys, then of the values, of a merge by key against `(keys, values)`."""
    check, first_wrong = compare(keys_path, expected[0])
    if check != "OK":
        return check, first_wrong
    check, first_wrong = compare(values_path, expected[1])
    return (check if check == "OK" else f"{check} (values)"), first_wrong


def peer_rows(program, args, case, paths, expected):
    """thrust::merge and cub::DeviceMerge (with --values, their merges by key) on one case (one
    run of the program), each checked."""
    peers = PEERS_BY_KEY if args.values else PEERS
    outputs = dict(zip(peers, (("thrust", "thrust_values"), ("cub", "cub_values"))))
    command = [program, "--a", paths["a"], "--b", paths["b"], "--out", paths["thrust"], "--cub-out", paths["cub"],
               "--repeat", str(args.repeat), "--warm-up", str(args.warm_up), "--device", str(args.device)]
    if args.values:
        command += ["--values", args.values, "--values-out", paths["thrust_values"],
                    "--cub-values-out", paths["cub_values"]]
    if args.busy_wait:
        command.append("--busy-wait")
    done = subprocess.run(command, capture_output=True, text=True)
    try:
        report = json.loads(done.stdout)
        copy_ms, results = report["copy_ms"], {r["peer"]: r for r in report["rows"]}
    except (ValueError, KeyError, TypeError):
        return [skipped(peer, case, f"merge_peers failed: {failure_reason(done)}") for peer in peers]
    wait = "enqueued during a GPU busy-wait, " if report.get("busy_wait") else ""
    timing = (f"CUDA events around each call ({wait}caching allocator, no sync), "
              f"median of {args.repeat} after {args.warm_up} warm-up calls")
    rows = []
    for peer in peers:
        result = results.get(peer)
        if result is None or result.get("error") or result.get("ms") is None:
            reason = (result or {}).get("error") or "merge_peers gave no result"
            rows.append(skipped(peer, case, reason, copy_ms=copy_ms))
            continue
        keys_path, values_path = (paths[name] for name in outputs[peer])
        if args.values:
            check, first_wrong = compare_by_key(keys_path, values_path, expected)
        else:
            check, first_wrong = compare(keys_path, expected)
        rows.append(row(peer, case, result["ms"], copy_ms, check, first_wrong, timing))
        remove(keys_path)
        remove(values_path)
    return rows


def ours_row(args, variant, case, paths, expected):
    """One of our variants on one case (`merge --input-a --input-b --output --json`), checked here
    (so `merge` is told --no-verify: its own check is the same bitwise comparison). With --values,
    `merge --values` (which writes no output file) checks itself against its CPU merge by key,
    whose values are the ones `reference_by_key` gives."""
    peer = f"ours/{variant}"
    variant, _, shape = variant.partition("@")
    shape_option = ["--path-shape", shape] if shape else []
    output = ["--values", args.values] if args.values else ["--output", paths["ours"], "--no-verify"]
    command = [args.ours, "--input-a", paths["a"], "--input-b", paths["b"], *output,
               "--variant", variant, *shape_option, "--repeat", str(args.repeat), "--device", str(args.device),
               "--json"]
    done = subprocess.run(command, capture_output=True, text=True)
    try:
        ours = json.loads(done.stdout)["rows"][0]
    except (ValueError, KeyError, IndexError, TypeError):
        return skipped(peer, case, failure_reason(done))
    if args.values:
        status = ours.get("status")
        check = "OK" if status == "OK" else f"FAIL: merge reported {status}"
        first_wrong = ours.get("first_wrong_index")
    else:
        check, first_wrong = compare(paths["ours"], expected)
    remove(paths["ours"])
    if check == "OK" and ours.get("status") == "FAIL":
        check = "FAIL: merge reported FAIL"
    timing = f"merge --json: CUDA events around the launch, median of {args.repeat} after 1 warm-up run"
    return row(peer, case, ours.get("ms"), ours.get("copy_ms"), check, first_wrong, timing)


def remove(path):
    try:
        os.remove(path)
    except FileNotFoundError:
        pass


def run_case(program, args, m, n, dist, dtype):
    """The peers and our variants on one case, in a temporary folder removed afterwards."""
    case = (m, n, dist, dtype, args.values)
    note(f"{case_label(m, n, dist)} {dtype}" + (f" with {args.values} values" if args.values else ""))
    with tempfile.TemporaryDirectory(prefix="merge_peers-", dir=args.tmp) as tmp:
        names = ("a", "b", "thrust", "cub", "ours", "thrust_values", "cub_values")
        paths = {name: os.path.join(tmp, f"{name}.npy") for name in names}
        a, b = make_inputs(m, n, dist, dtype, args.seed)
        np.save(paths["a"], a)
        np.save(paths["b"], b)
        expected = reference_by_key(a, b, args.values) if args.values else reference(a, b)
        del a, b
        rows = peer_rows(program, args, case, paths, expected)
        for variant in (args.ours_variants if args.ours else []):
            rows.append(ours_row(args, variant, case, paths, expected))
    return rows


# ---------------------------------------------------------------------------------------------
# Set-up: nvcc, the program, the GPU


def nvcc_version(nvcc):
    """`13.0 (V13.0.88)` from `nvcc --version`, or its last line."""
    try:
        text = subprocess.run([nvcc, "--version"], capture_output=True, text=True).stdout
    except OSError:
        return None
    found = re.search(r"release ([\d.]+), (V[\d.]+)", text)
    if found:
        return f"{found.group(1)} ({found.group(2)})"
    lines = text.strip().splitlines()
    return lines[-1] if lines else None


def compile_program(nvcc, args, version):
    """merge_peers.cu compiled into the cache folder, once per source, compiler and flags; None if
    nvcc fails (its messages go to stderr)."""
    flags = list(NVCC_FLAGS) + [f"-arch={args.arch}"]
    with open(SOURCE, "rb") as f:
        digest = hashlib.sha256(f.read() + repr((os.path.realpath(nvcc), version, flags)).encode()).hexdigest()
    os.makedirs(args.cache, exist_ok=True)
    program = os.path.join(args.cache, f"merge_peers-{args.arch}-{digest[:12]}")
    if os.path.isfile(program):
        return program, flags
    note(f"compiling {os.path.relpath(SOURCE)} with {nvcc} {' '.join(flags)} (about a minute)")
    partial = f"{program}.part{os.getpid()}"
    done = subprocess.run([nvcc, *flags, "-o", partial, SOURCE], capture_output=True, text=True)
    if done.returncode != 0:
        sys.stderr.write(done.stdout + done.stderr)
        remove(partial)
        return None, flags
    os.replace(partial, program)
    return program, flags


def gpu_name(device):
    """The GPU's name from nvidia-smi, or None."""
    try:
        done = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader", "-i", str(device)],
                              capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    name = done.stdout.strip().splitlines()
    return name[0].strip() if done.returncode == 0 and name else None


def row_key(r):
    return (r.get("peer"), r.get("m"), r.get("n"), r.get("dist"), r.get("dtype"), r.get("values"))


def appended(path, report):
    """For --append: the rows already in `path` (if it exists) that this run does not replace."""
    if not os.path.isfile(path):
        return []
    try:
        with open(path) as f:
            previous = json.load(f)
        rows = list(previous["rows"])
    except (OSError, ValueError, KeyError, TypeError) as error:
        note(f"--append: {path} is not a merge_peers.py result ({error}); it is replaced")
        return []
    if previous.get("gpu") != report["gpu"]:
        note(f"--append: {path} was measured on {previous.get('gpu')}, this run on {report['gpu']}")
    replaced = {row_key(r) for r in report["rows"]}
    return [r for r in rows if row_key(r) not in replaced]


def table(rows):
    """A short human-readable table of the rows."""
    lines = [f"{'peer':<29} {'case':<28} {'dtype':<9} {'ms':>9} {'Gkeys/s':>8} {'% copy':>7}  check"]

    def number(value, width, spec):
        return f"{value:{width}{spec}}" if value is not None else f"{'-':>{width}}"

    for r in rows:
        dtype = r["dtype"] + (f"+{r['values']}" if r.get("values") else "")
        lines.append(f"{r['peer']:<29} {case_label(r['m'], r['n'], r['dist']):<28} {dtype:<9} "
                     f"{number(r['ms'], 9, '.4f')} {number(r['gkeys_per_s'], 8, '.2f')} "
                     f"{number(r['percent_of_copy'], 7, '.1f')}  {r['check']}")
    return "\n".join(lines)


def main(argv=None):
    args = parse_args(argv)
    nvcc = shutil.which(args.nvcc)
    if nvcc is None:
        print(f"merge_peers: nvcc not found (`{args.nvcc}`; install the CUDA toolkit or pass --nvcc PATH): "
              "nothing to measure")
        return 0
    version = nvcc_version(nvcc)
    program, flags = compile_program(nvcc, args, version)
    if program is None:
        note(f"{nvcc} could not compile {SOURCE} (messages above)")
        return 1
    done = subprocess.run([program, "--info", "--device", str(args.device)], capture_output=True, text=True)
    if done.returncode == 3:
        reason = failure_reason(done)
        reason = reason[len("merge_peers: "):] if reason.startswith("merge_peers: ") else reason
        print(f"merge_peers: {reason}: nothing to measure")
        return 0
    try:
        info = json.loads(done.stdout)
    except ValueError:
        note(f"{program} --info failed: {failure_reason(done)}")
        return 1
    rows = []
    for dtype in args.dtypes:
        for m, n, dist in args.cases:
            rows += run_case(program, args, m, n, dist, dtype)
    report = {
        "gpu": gpu_name(args.device) or info.get("gpu"),
        "compute_capability": info.get("compute_capability"),
        "nvcc": version,
        "nvcc_flags": flags,
        "cccl": info.get("cccl_version") or info.get("thrust_version"),
        "thrust": info.get("thrust_version"),
        "cub": info.get("cub_version"),
        "cuda_runtime": info.get("cuda_runtime"),
        "cuda_driver": info.get("cuda_driver"),
        "date": datetime.datetime.now(datetime.timezone.utc).date().isoformat(),
        "seed": args.seed,
        "repeat": args.repeat,
        "warm_up": args.warm_up,
        "busy_wait": args.busy_wait,
        "rows": rows,
    }
    if args.append:
        report["rows"] = appended(args.out, report) + rows
    write_report(report, table(rows), args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
