#!/usr/bin/env bash
# The GPU check kit, in two steps because the GPU machine has no LLVM (te cannot be built
# there) and no network:
#   scripts/gpu_check.sh make [KIT]   on the te machine: builds te_gpu_kit and writes KIT
#                                     (default gpu_kit/): the .cu files, inputs and
#                                     interpret()'s outputs of the CUDA test corpus and the
#                                     reference schedules, and the bench shapes;
#   scripts/gpu_check.sh run [KIT] [--out FILE] [--only NAME...] [--budget-s S]
#                                     on the GPU machine (nvcc, PyTorch with CUDA): compiles
#                                     and runs every kernel, compares with interpret(), times
#                                     the bench kernels against PyTorch and cuBLAS and prints
#                                     the table (scripts/gpu_check.py --help).
set -euo pipefail
cd "$(dirname "$0")/.."
step=${1:-}
kit=${2:-gpu_kit}
case "$step" in
  make)
    source scripts/build_config.sh  # build/ as demo.sh and test.sh configure it
    cmake -S . -B build "${te_cmake_args[@]}" >/dev/null
    cmake --build build --target te_gpu_kit
    rm -rf "$kit"
    build/tests/te_gpu_kit "$kit"
    ;;
  run)
    shift 2 || shift $#
    python3 scripts/gpu_check.py "$kit" "$@"
    ;;
  *)
    echo "usage: scripts/gpu_check.sh make [KIT] | run [KIT] [--out FILE] [--only NAME...] [--budget-s S]" >&2
    exit 2
    ;;
esac
