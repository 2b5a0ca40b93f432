#!/usr/bin/env python3
"""Compiles a generated CUDA C++ twin source with NVRTC the way `Twins::compile` does
(`--gpu-architecture=compute_XY --fmad=false`), prints NVRTC's log and the entry points, and,
given a `ptxas`, assembles the PTX with `ptxas -v` and prints each entry point's registers,
stack and spills. Needs no GPU: NVRTC and ptxas come from PyPI wheels (see README.md).

    check_twins.py SOURCE.cu [--arch compute_90] [--ptxas PATH] [--ptx OUT.ptx]

NVRTC is found through $NVRTC_LIB, else next to this Python (a venv with the
`nvidia-cuda-nvrtc` wheel), else as `libnvrtc.so` on the loader's path. Exits non-zero when
NVRTC or ptxas fails.
"""
import argparse
import ctypes
import glob
import os
import re
import subprocess
import sys
import tempfile


def load_nvrtc():
    candidates = [os.environ["NVRTC_LIB"]] if os.environ.get("NVRTC_LIB") else []
    prefix = os.path.dirname(os.path.dirname(os.path.abspath(sys.executable)))
    candidates += sorted(glob.glob(os.path.join(prefix, "lib", "python3*", "site-packages", "nvidia", "cu*", "lib", "libnvrtc.so*")))
    candidates += ["libnvrtc.so"]
    for path in candidates:
        try:
            return ctypes.CDLL(path)
        except OSError:
            continue
    sys.exit("check_twins: NVRTC not found (set NVRTC_LIB or install nvidia-cuda-nvrtc)")


def compile_ptx(nvrtc, source, arch):
    nvrtc.nvrtcGetErrorString.restype = ctypes.c_char_p
    prog = ctypes.c_void_p()
    rc = nvrtc.nvrtcCreateProgram(ctypes.byref(prog), source, b"twins.cu", 0, None, None)
    if rc:
        sys.exit(f"nvrtcCreateProgram: {nvrtc.nvrtcGetErrorString(rc).decode()}")
    options = [f"--gpu-architecture={arch}".encode(), b"--fmad=false"]
    rc = nvrtc.nvrtcCompileProgram(prog, len(options), (ctypes.c_char_p * len(options))(*options))
    size = ctypes.c_size_t()
    nvrtc.nvrtcGetProgramLogSize(prog, ctypes.byref(size))
    log = ctypes.create_string_buffer(size.value)
    nvrtc.nvrtcGetProgramLog(prog, log)
    major, minor = ctypes.c_int(), ctypes.c_int()
    nvrtc.nvrtcVersion(ctypes.byref(major), ctypes.byref(minor))
    print(f"NVRTC {major.value}.{minor.value}, {arch}, --fmad=false; log: {log.value.decode().strip() or '(empty)'}")
    if rc:
        sys.exit(f"nvrtcCompileProgram: {nvrtc.nvrtcGetErrorString(rc).decode()}")
    nvrtc.nvrtcGetPTXSize(prog, ctypes.byref(size))
    ptx = ctypes.create_string_buffer(size.value)
    nvrtc.nvrtcGetPTX(prog, ptx)
    return ptx.value.decode()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("source")
    parser.add_argument("--arch", default="compute_90")
    parser.add_argument("--ptxas", default=os.environ.get("PTXAS"))
    parser.add_argument("--ptx", help="where to write the PTX")
    args = parser.parse_args()
    ptx = compile_ptx(load_nvrtc(), open(args.source, "rb").read(), args.arch)
    entries = re.findall(r"\.entry\s+(\w+)\s*\(", ptx)
    print(f"{len(entries)} entry points: {' '.join(sorted(entries))}")
    ptx_path = args.ptx or tempfile.mkstemp(suffix=".ptx")[1]
    with open(ptx_path, "w") as f:
        f.write(ptx)
    if not args.ptxas:
        print("no ptxas (--ptxas or $PTXAS): registers not reported")
        return
    sm = "sm_" + args.arch.split("_")[1]
    run = subprocess.run([args.ptxas, f"-arch={sm}", "-v", ptx_path, "-o", os.devnull], capture_output=True, text=True)
    if run.returncode:
        sys.exit(f"ptxas failed:\n{run.stderr}")
    entry, rows = None, []
    for line in run.stderr.splitlines():
        if m := re.search(r"Compiling entry function '(\w+)'", line):
            entry = m.group(1)
        elif m := re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads", line):
            stack, spill_st, spill_ld = m.groups()
        elif m := re.search(r"Used (\d+) registers", line):
            rows.append((entry, int(m.group(1)), stack, spill_st, spill_ld))
    print(f"ptxas -arch={sm}:")
    print(f"{'entry point':<36}{'registers':>10}{'stack':>8}{'spill st':>10}{'spill ld':>10}")
    for entry, regs, stack, spill_st, spill_ld in sorted(rows):
        print(f"{entry:<36}{regs:>10}{stack:>8}{spill_st:>10}{spill_ld:>10}")


if __name__ == "__main__":
    main()
