#!/usr/bin/env python3
"""Times the merges a CUDA C++ user would pick instead of ours, `thrust::merge` and
`cub::DeviceMerge::MergeKeys` (benches/peers/merge_peers.cu, compiled here with nvcc), and our
`merge` kernels on the same inputs, checks every output bitwise against a stable merge in numpy,
and writes JSON that `cargo xtask bench-report` adds to the merge_variants tables.

    python3 benches/peers/merge_peers.py --ours target/release/merge --out target/criterion/merge_peers.json
    python3 benches/peers/merge_peers.py --set all --ours target/release/merge --out target/criterion/set_peers.json

Options: --cases 2^20+2^20,2^27+2^27,2^27+2^20,2^27+2^27:few-unique,2^27+2^27:all-equal (M+N[:DIST],
M and N as 2^K or an integer, DIST uniform (default), few-unique or all-equal), --dtypes i32,f64
(any of i32, u32, i64, f32, f64), --repeat 50, --warm-up 3, --rounds 1, --seed 2026, --out FILE (default: JSON
on stdout, the table on stderr), --ours PATH (our `merge` binary), --ours-variants merge-path,tiled
(with --set: merge-path), --nvcc nvcc, --arch sm_90, --cache DIR (where the compiled program is kept,
default target/merge_peers), --tmp DIR (where the inputs and outputs are written, one case at a time;
default the system's temporary folder), --device 0, --busy-wait, --append (add the rows to the --out
file, replacing those of the same peer and case, and set operation: a long run can be split, e.g. one
dtype per call), --values u32|u64
(merge by key: thrust::merge_by_key and cub::DeviceMerge::MergePairs against `merge --values`, each key
of A carrying its index as its value and each key of B its index with the top bit set; keys and
values both checked bit for bit; the rows say which values they carried), --set OP[,OP...] (set
operations instead of merges, OP among union, intersection, difference, symmetric-difference, or all
for the four; not with --values: see Set operations below).

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

Rounds: with --rounds R each case runs R times, the peers' process and ours alternating (ours first
in every other round), and each row is the median of its R medians (its rounds' own in "round_ms"
and "round_copy_ms"); stderr gives thrust's and CUB's time over ours round by round. The GPU's pace
drifts by tenths of a per cent from one process to the next, so a ratio near a threshold is read
from several rounds, not from one pair of processes.

Set operations (--set): for each case, key type and operation, merge_peers.cu times
thrust::set_<op> (thrust::set_union, ..., thrust::set_symmetric_difference; CUB has none) and, with
--ours, `merge --set OP --output ... --no-verify` runs our kernels (merge path's alone: each of
--ours-variants, default merge-path, is passed as --variant, and its row is ours/<variant> with the
operation in "set"). Every output (its first `outputs` keys) is checked bit for bit against
`set_reference`, a vectorised numpy walk with std::set_*'s multiset semantics: for a key found m
times in A and n times in B, union keeps A's m copies then B's last max(n - m, 0), intersection A's
first min(m, n), difference A's last max(m - n, 0), symmetric difference A's last m - n if m > n,
else B's last n - m; sorted, A's copies before B's among equal keys (-0.0 and +0.0 are one key, each
output the source key's bits); the count each reports must be the reference's too. The reference is
checked on cppreference's examples at every start (set_reference_self_test). Thrust synchronises
inside each call to read its count of outputs back, and that wait is timed with it. Set rows carry
"set" (the operation) and "outputs" (the count of keys written); their gkeys_per_s is (m + n) / ms,
and their percent_of_copy compares bandwidths: the operation reads m + n keys and writes `outputs`,
the copy reads and writes m + n, so percent_of_copy = 100 * copy_ms / ms * (m + n + outputs) /
(2 (m + n)) (the other rows' is 100 * copy_ms / ms: the same bytes).

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
import statistics
import subprocess
import sys
import tempfile

import numpy as np

from peer_report import appended, write_report

CASES = "2^20+2^20,2^27+2^27,2^27+2^20,2^27+2^27:few-unique,2^27+2^27:all-equal"
DTYPES = {"i32": np.int32, "u32": np.uint32, "i64": np.int64, "f32": np.float32, "f64": np.float64}
UNSIGNED = {4: np.uint32, 8: np.uint64}
DISTRIBUTIONS = ("uniform", "few-unique", "all-equal")
FEW_UNIQUE_KEYS = 16  # host::merge::FEW_UNIQUE_KEYS
OURS_VARIANTS = "merge-path,tiled"
SET_OURS_VARIANTS = "merge-path"  # with --set: our set operations are merge path's kernels alone
SET_OPERATIONS = ("union", "intersection", "difference", "symmetric-difference")
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


def parse_set_operations(text):
    """`OP[,OP...]` among SET_OPERATIONS, or `all` for the four, in the order given."""
    names = [o.strip() for o in text.split(",") if o.strip()]
    if "all" in names:
        names = [o for o in names if o != "all"] + list(SET_OPERATIONS)
    unknown = [o for o in names if o not in SET_OPERATIONS]
    if unknown or not names:
        raise argparse.ArgumentTypeError(
            f"unknown set operation(s) {unknown}: expected a comma-separated list of {', '.join(SET_OPERATIONS)}, "
            "or all")
    return list(dict.fromkeys(names))


def parse_args(argv=None):
    parser = argparse.ArgumentParser(
        description="Time thrust::merge and cub::DeviceMerge (or with --set thrust's set operations) against "
        "our merge kernels; write JSON.",
        epilog="Example: python3 benches/peers/merge_peers.py --ours target/release/merge "
        "--out target/criterion/merge_peers.json; set operations: python3 benches/peers/merge_peers.py "
        "--set all --ours target/release/merge --out target/criterion/set_peers.json",
    )
    parser.add_argument("--cases", type=parse_cases, default=parse_cases(CASES),
                        help=f"comma-separated M+N[:DIST] (default {CASES})")
    parser.add_argument("--dtypes", type=parse_dtypes, default=["i32", "f64"],
                        help="comma-separated key types among i32, u32, i64, f32, f64 (default i32,f64)")
    parser.add_argument("--repeat", type=int, default=50, help="timed calls per peer (default 50)")
    parser.add_argument("--warm-up", type=int, default=3, help="untimed calls before them (peers; default 3)")
    parser.add_argument("--rounds", type=int, default=1,
                        help="times each case's peers and ours run, alternating (peers, ours, peers, ours, ...); "
                        "each row's ms is the median of its rounds' medians, so a drift of the GPU's pace "
                        "during the run falls on both sides alike (default 1)")
    parser.add_argument("--seed", type=int, default=2026, help="seed of the random inputs (default 2026)")
    parser.add_argument("--out", help="write the JSON here (default: print it on stdout)")
    parser.add_argument("--ours", help="our `merge` binary, run on the same inputs (e.g. target/release/merge)")
    parser.add_argument("--ours-variants", type=parse_variants,
                        help=f"our variants to run, each a row ours/<variant> (default {OURS_VARIANTS}, with --set "
                             f"{SET_OURS_VARIANTS}, the only one with set operations); merge-path@256x15-pipelined "
                             "picks a merge-path shape (merge --path-shape)")
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
    parser.add_argument("--set", type=parse_set_operations, metavar="OP[,OP...]",
                        help=f"set operations instead of merges, among {', '.join(SET_OPERATIONS)} (all: the four): "
                        "thrust::set_<op> and `merge --set OP`, checked against std::set_*'s multiset semantics")
    parser.add_argument("--append", action="store_true",
                        help="add the rows to the --out file, replacing rows of the same peer and case "
                        "(and set operation)")
    args = parser.parse_args(argv)
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")
    if args.warm_up < 0:
        parser.error("--warm-up must be at least 0")
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")
    if args.ours and not (os.path.isfile(args.ours) and os.access(args.ours, os.X_OK)):
        parser.error(f"--ours {args.ours}: not an executable file")
    if args.append and not args.out:
        parser.error("--append needs --out FILE")
    if args.tmp and not os.path.isdir(args.tmp):
        parser.error(f"--tmp {args.tmp}: not a folder")
    if args.set and args.values:
        parser.error("--set and --values are exclusive: a set operation takes keys alone")
    if args.ours_variants is None:
        args.ours_variants = parse_variants(SET_OURS_VARIANTS if args.set else OURS_VARIANTS)
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


def occurrences(keys):
    """Each key's index among the equal keys of sorted `keys` (0 for the first copy)."""
    index = np.searchsorted(keys, keys, "left")
    return np.subtract(np.arange(len(keys)), index, out=index)


def counts_in(keys, other):
    """How many times each key of `keys` is in sorted `other`."""
    count = np.searchsorted(other, keys, "right")
    count -= np.searchsorted(other, keys, "left")
    return count


def set_masks(a, b, operation):
    """Which keys of sorted a and b `std::set_<operation>` keeps, as two boolean masks. For a key
    found m times in A and n times in B: union keeps A's m copies and B's last max(n - m, 0),
    intersection A's first min(m, n), difference A's last max(m - n, 0), symmetric difference A's
    last m - n if m > n, else B's last n - m. A copy is "last" when its index among the equal keys
    of its array is at least the other array's count of them. Keys are equal as numbers (-0.0 and
    +0.0 are one key), as std::set_* and thrust compare them."""
    keep_b = np.zeros(len(b), dtype=bool)
    if operation == "union":
        keep_a = np.ones(len(a), dtype=bool)
    elif operation == "intersection":
        keep_a = occurrences(a) < counts_in(a, b)
    elif operation in ("difference", "symmetric-difference"):
        keep_a = occurrences(a) >= counts_in(a, b)
    else:
        raise ValueError(f"unknown set operation {operation}")
    if operation in ("union", "symmetric-difference"):
        keep_b = occurrences(b) >= counts_in(b, a)
    return keep_a, keep_b


def set_reference(a, b, operation):
    """`std::set_<operation>` of sorted a and b (see `set_masks`), in sorted order with A's copies
    before B's among equal keys, each key the source key's bits. Vectorised, with no sort: a kept
    key of A goes after the kept keys of A before it and the kept keys of B below it, a kept key
    of B after the kept keys of B before it and the kept keys of A below or equal to it."""
    keep_a, keep_b = set_masks(a, b, operation)
    kept_a = a if keep_a.all() else a[keep_a]
    kept_b = b[keep_b]
    del keep_a, keep_b
    if kept_b.size == 0:
        return kept_a
    out = np.empty(kept_a.size + kept_b.size, dtype=a.dtype)
    at = np.searchsorted(kept_b, kept_a, "left")
    at += np.arange(kept_a.size)
    bits(out)[at] = bits(kept_a)
    at = np.searchsorted(kept_a, kept_b, "right")
    at += np.arange(kept_b.size)
    bits(out)[at] = bits(kept_b)
    return out


def set_reference_self_test():
    """Checks `set_reference` on cppreference's examples of std::set_* and on which copies of
    equal keys it keeps (told apart by -0.0 and +0.0); raises AssertionError if one is wrong."""
    a, b = np.array([1, 2, 3, 4, 5, 5, 5], np.int32), np.array([3, 4, 5, 6, 7], np.int32)
    expected = {"union": [1, 2, 3, 4, 5, 5, 5, 6, 7], "intersection": [3, 4, 5], "difference": [1, 2, 5, 5],
                "symmetric-difference": [1, 2, 5, 5, 6, 7]}
    for operation, keys in expected.items():
        result = set_reference(a, b, operation)
        assert result.dtype == a.dtype and result.tolist() == keys, (operation, result.tolist())
    # A = [5], B = [5, 5, 5]: union keeps A's 5, then B's copies 1 and 2.
    keep_a, keep_b = set_masks(np.array([5]), np.array([5, 5, 5]), "union")
    assert keep_a.tolist() == [True] and keep_b.tolist() == [False, True, True], (keep_a, keep_b)
    # The same with keys told apart by their bits: A = [+0], B = [-0, +0, -0].
    a, b = np.array([0.0]), np.array([-0.0, 0.0, -0.0])
    for operation, copies in {"union": [a[0], b[1], b[2]], "intersection": [a[0]], "difference": [],
                              "symmetric-difference": [b[1], b[2]]}.items():
        result = set_reference(a, b, operation)
        assert bits(result).tolist() == bits(np.array(copies, np.float64)).tolist(), (operation, result)
    a, b = np.array([-0.0, 0.0, -0.0, 1.0]), np.array([0.0, 1.0])
    result = set_reference(a, b, "symmetric-difference")  # A's last two zeros, then nothing
    assert bits(result).tolist() == bits(np.array([0.0, -0.0])).tolist(), result


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


def row(peer, case, ms=None, copy_ms=None, check="OK", first_wrong_index=None, timing=None, outputs=None):
    """One peer on one case, in the JSON's format; `case` is (m, n, dist, dtype, values, set), `set`
    the set operation or None. A set operation's row also has "set" and "outputs" (the count of
    keys it wrote), and its percent_of_copy compares bandwidths: it moves m + n keys read and
    `outputs` written, the copy 2 (m + n)."""
    m, n, dist, dtype, values, operation = case
    ms = ms if ms is not None and math.isfinite(ms) and ms > 0 else None
    copy_ms = copy_ms if copy_ms is not None and math.isfinite(copy_ms) and copy_ms > 0 else None
    if operation is None:
        percent = 100.0 * copy_ms / ms if ms and copy_ms else None
    else:
        moved = outputs is not None and m + n > 0
        percent = 100.0 * copy_ms / ms * (m + n + outputs) / (2 * (m + n)) if ms and copy_ms and moved else None
    result = {
        "peer": peer,
        "m": m,
        "n": n,
        "dist": dist,
        "dtype": dtype,
        "values": values,
        "ms": ms,
        "gkeys_per_s": (m + n) / ms / 1e6 if ms else None,
        "copy_ms": copy_ms,
        "percent_of_copy": percent,
        "check": check,
        "first_wrong_index": first_wrong_index,
        "timing": timing,
    }
    if operation is not None:
        result["set"] = operation
        result["outputs"] = outputs
    return result


def skipped(peer, case, reason, copy_ms=None):
    reason = " ".join(reason.split())
    reason = reason if len(reason) <= 200 else reason[:197] + "..."
    operation = f" {case[5]}" if case[5] else ""
    note(f"{peer} {case_label(*case[:3])} {case[3]}{operation} skipped: {reason}")
    return row(peer, case, copy_ms=copy_ms, check=f"skipped: {reason}")


def failure_reason(done):
    """The first line with `error` that the program wrote on stderr, else its last line, else its
    exit status."""
    lines = [line.strip() for line in (done.stderr or "").splitlines() if line.strip()]
    errors = [line for line in lines if "error" in line.lower()]
    return (errors or lines or [f"exit status {done.returncode}"])[0 if errors else -1]


PEERS = ("thrust::merge", "cub::DeviceMerge")
PEERS_BY_KEY = ("thrust::merge_by_key", "cub::DeviceMerge::MergePairs")
SET_PEERS = {operation: f"thrust::set_{operation.replace('-', '_')}" for operation in SET_OPERATIONS}


def compare_by_key(keys_path, values_path, expected):
    """`compare` of the keys, then of the values, of a merge by key against `(keys, values)`."""
    check, first_wrong = compare(keys_path, expected[0])
    if check != "OK":
        return check, first_wrong
    check, first_wrong = compare(values_path, expected[1])
    return (check if check == "OK" else f"{check} (values)"), first_wrong


def counted(check, outputs, expected):
    """`check` of a set operation's row, or FAIL if the count of outputs it reported is not the
    reference's (its output file may still be right)."""
    if check == "OK" and outputs != len(expected):
        return f"FAIL: it reported {outputs} outputs, expected {len(expected)}"
    return check


def peer_rows(program, args, case, paths, expected):
    """thrust::merge and cub::DeviceMerge (with --values, their merges by key; with a set
    operation, thrust's alone: CUB has none) on one case (one run of the program), each checked."""
    operation = case[5]
    peers = (SET_PEERS[operation],) if operation else PEERS_BY_KEY if args.values else PEERS
    outputs = dict(zip(peers, (("thrust", "thrust_values"), ("cub", "cub_values"))))
    command = [program, "--a", paths["a"], "--b", paths["b"], "--out", paths["thrust"],
               *(["--set", operation] if operation else ["--cub-out", paths["cub"]]),
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
    sync = "thrust syncs to read its count of outputs back" if operation else "no sync"
    timing = (f"CUDA events around each call ({wait}caching allocator, {sync}), "
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
        if operation:
            check = counted(check, result.get("outputs"), expected)
        rows.append(row(peer, case, result["ms"], copy_ms, check, first_wrong, timing, result.get("outputs")))
        remove(keys_path)
        remove(values_path)
    return rows


def ours_row(args, variant, case, paths, expected):
    """One of our variants on one case (`merge --input-a --input-b --output --json`), checked here
    (so `merge` is told --no-verify: its own check is the same bitwise comparison). With --values,
    `merge --values` (which writes no output file) checks itself against its CPU merge by key,
    whose values are the ones `reference_by_key` gives. With a set operation, `merge --set OP`
    (merge-path alone has set kernels) writes its outputs, checked here against `set_reference`,
    and the row is still ours/<variant>, with the operation in its "set"."""
    peer = f"ours/{variant}"
    operation = case[5]
    variant, _, shape = variant.partition("@")
    shape_option = ["--path-shape", shape] if shape else []
    output = ["--values", args.values] if args.values else ["--output", paths["ours"], "--no-verify"]
    if operation:
        output = ["--set", operation, *output]
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
    if operation:
        check = counted(check, ours.get("outputs"), expected)
    timing = f"merge --json: CUDA events around the launch, median of {args.repeat} after 1 warm-up run"
    return row(peer, case, ours.get("ms"), ours.get("copy_ms"), check, first_wrong, timing,
               ours.get("outputs") if operation else None)


def of_rounds(rounds):
    """One row per peer from the rows of `rounds` (each round the same peers in the same order):
    its ms and copy_ms the medians of the rounds' (each itself a median of --repeat), with the
    rounds' own in "round_ms" and "round_copy_ms"; a check that failed in any round fails the row.
    With one round, its rows unchanged."""
    if len(rounds) == 1:
        return rounds[0]
    rows = []
    for same_peer in zip(*rounds):
        first = same_peer[0]
        failed = [r for r in same_peer if r["check"] != "OK"]
        timed = [r for r in same_peer if r["ms"] is not None]
        copies = [r["copy_ms"] for r in same_peer if r["copy_ms"] is not None]
        case = (first["m"], first["n"], first["dist"], first["dtype"], first["values"], first.get("set"))
        chosen = failed[0] if failed else first
        combined = row(first["peer"], case, statistics.median([r["ms"] for r in timed]) if timed else None,
                       statistics.median(copies) if copies else None, chosen["check"], chosen["first_wrong_index"],
                       f"{first['timing']}; median of {len(rounds)} rounds, alternating with the other rows'",
                       first.get("outputs"))
        combined["round_ms"] = [r["ms"] for r in same_peer]
        combined["round_copy_ms"] = [r["copy_ms"] for r in same_peer]
        rows.append(combined)
    ours = [r for r in rows if r["peer"].startswith("ours/")]
    for peer in (r for r in rows if not r["peer"].startswith("ours/")):
        for mine in ours:
            ratios = [p / o for p, o in zip(peer["round_ms"], mine["round_ms"]) if p and o]
            if ratios:
                note(f"  {peer['peer']} / {mine['peer']} per round: {' '.join(f'{x:.3f}' for x in ratios)} "
                     f"(median {statistics.median(ratios):.3f})")
    return rows


def remove(path):
    try:
        os.remove(path)
    except FileNotFoundError:
        pass


def run_case(program, args, m, n, dist, dtype):
    """The peers and our variants on one case (with --set, for each operation in turn), in a
    temporary folder removed afterwards."""
    with_what = f" with {args.values} values" if args.values else f" set {','.join(args.set)}" if args.set else ""
    note(f"{case_label(m, n, dist)} {dtype}{with_what}")
    with tempfile.TemporaryDirectory(prefix="merge_peers-", dir=args.tmp) as tmp:
        names = ("a", "b", "thrust", "cub", "ours", "thrust_values", "cub_values")
        paths = {name: os.path.join(tmp, f"{name}.npy") for name in names}
        a, b = make_inputs(m, n, dist, dtype, args.seed)
        np.save(paths["a"], a)
        np.save(paths["b"], b)

        def checked_rows(operation, expected):
            case = (m, n, dist, dtype, args.values, operation)

            def ours():
                return [ours_row(args, v, case, paths, expected) for v in (args.ours_variants if args.ours else [])]

            def one_round(ours_first):
                # Every other round runs ours first, so that neither side always follows the other.
                mine = ours() if ours_first else None
                peers = peer_rows(program, args, case, paths, expected)
                return peers + (mine if ours_first else ours())

            return of_rounds([one_round(k % 2 == 1) for k in range(args.rounds)])

        if not args.set:
            expected = reference_by_key(a, b, args.values) if args.values else reference(a, b)
            del a, b
            return checked_rows(None, expected)
        rows = []
        for operation in args.set:
            rows += checked_rows(operation, set_reference(a, b, operation))
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
    return (r.get("peer"), r.get("m"), r.get("n"), r.get("dist"), r.get("dtype"), r.get("values"), r.get("set"))


def table(rows):
    """A short human-readable table of the rows; with set operations' rows, their operation and
    count of outputs too, and a line on what their % of copy means."""
    sets = any(r.get("set") for r in rows)
    peer_width = max([29] + [len(r["peer"]) for r in rows])
    set_header = f" {'set':<20} {'outputs':>11}" if sets else ""
    lines = [f"{'peer':<{peer_width}} {'case':<28} {'dtype':<9}{set_header} {'ms':>9} {'Gkeys/s':>8} {'% copy':>7}"
             "  check"]

    def number(value, width, spec):
        return f"{value:{width}{spec}}" if value is not None else f"{'-':>{width}}"

    for r in rows:
        dtype = r["dtype"] + (f"+{r['values']}" if r.get("values") else "")
        operation = f" {r.get('set') or '-':<20} {number(r.get('outputs'), 11, 'd')}" if sets else ""
        lines.append(f"{r['peer']:<{peer_width}} {case_label(r['m'], r['n'], r['dist']):<28} {dtype:<9}{operation} "
                     f"{number(r['ms'], 9, '.4f')} {number(r['gkeys_per_s'], 8, '.2f')} "
                     f"{number(r['percent_of_copy'], 7, '.1f')}  {r['check']}")
    if sets:
        lines.append("Gkeys/s: (m + n) keys in / ms; % copy of a set operation: 100 x copy_ms / ms x "
                     "(m + n + outputs) / (2 (m + n)), its bandwidth's share of the copy's (it reads m + n keys "
                     "and writes its outputs, the copy reads and writes m + n)")
    return "\n".join(lines)


def main(argv=None):
    args = parse_args(argv)
    set_reference_self_test()  # milliseconds; an AssertionError here is a bug in the reference
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
        "rounds": args.rounds,
        "busy_wait": args.busy_wait,
        "rows": rows,
    }
    if args.append:
        report["rows"] = appended(args.out, report, row_key, "merge_peers") + rows
    write_report(report, table(rows), args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
