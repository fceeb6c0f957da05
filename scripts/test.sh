#!/usr/bin/env bash
# Builds te and runs the whole test suite.
# Usage: scripts/test.sh [--sanitize | --llvm N]
#   --sanitize: ASan + UBSan + LeakSanitizer build of the whole suite;
#   --llvm N:   build te against LLVM N (/usr/lib/llvm-N) and run the LLVM backend's tests
#               (ctest label "llvm"); CI runs it with 19 beside Debian's default 14.
set -euo pipefail
cd "$(dirname "$0")/.."

build=build
source scripts/build_config.sh
cmake_args=("${te_cmake_args[@]}")
targets=(all)
ctest_args=()
if [ "${1:-}" = "--llvm" ]; then
  version=${2:?"--llvm needs a version, e.g. --llvm 19"}
  build=build-llvm$version
  cmake_args+=(-DLLVM_DIR=/usr/lib/llvm-$version/lib/cmake/llvm -DTE_BUILD_BENCHMARKS=OFF
    -DTE_BUILD_EXAMPLES=OFF)
  targets=(te_llvm_tests)
  ctest_args+=(-L llvm)
  scripts/deps.sh "llvm-$version-dev"
elif [ "${1:-}" = "--sanitize" ]; then
  build=build-asan
  # -O1: ASan's advice (the suite runs several times faster than at -O0); -g1: line tables,
  # all that its reports need.
  cmake_args+=(-DTE_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug "-DCMAKE_CXX_FLAGS_DEBUG=-O1 -g1"
    "-DCMAKE_C_FLAGS_DEBUG=-O1 -g1" -DTE_BUILD_BENCHMARKS=OFF -DTE_BUILD_EXAMPLES=OFF)
  # The nvcc checks spend their time in nvcc, not in te (the plain pass runs them).
  export TE_NVCC=
  export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0
  export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
fi

scripts/deps.sh
jobs=$(nproc)
cmake -S . -B "$build" "${cmake_args[@]}"
cmake --build "$build" -j "$jobs" --target "${targets[@]}"
ctest --test-dir "$build" --output-on-failure -j "$jobs" "${ctest_args[@]}"
