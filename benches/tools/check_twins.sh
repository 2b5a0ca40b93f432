#!/usr/bin/env bash
# Checks the CUDA C++ twins without a GPU (see README.md): writes the generated sources, compiles
# each with NVRTC (and assembles it with ptxas when $PTXAS is set), and runs the merge twins on
# the CPU. Run from anywhere; NVRTC from $NVRTC_LIB or the Python given as $PYTHON (a venv with
# the nvidia-cuda-nvrtc wheel).
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
out="${TWIN_SOURCE_DIR:-${CARGO_TARGET_DIR:-$root/target}/twins}"
export TWIN_SOURCE_DIR="$out"
cd "$root"
cargo test -q -p benches --lib -- --ignored write_twin_sources >/dev/null
for twins in stencil merge; do
    echo "== $twins twins"
    "${PYTHON:-python3}" benches/tools/check_twins.py "$out/${twins}_twins.cu" --ptx "$out/${twins}_twins.ptx" \
        ${PTXAS:+--ptxas "$PTXAS"}
done
echo "== merge twins on the CPU"
g++ -std=c++20 -O2 -pthread -DTWIN_SOURCE="\"$out/merge_twins.cu\"" benches/tools/emulate_merge_twins.cpp \
    -o "$out/emulate_merge_twins"
"$out/emulate_merge_twins"
