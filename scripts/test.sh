#!/usr/bin/env bash
# Builds te and runs the whole test suite.
# Usage: scripts/test.sh [--sanitize]   (--sanitize: ASan + UBSan + LeakSanitizer build)
set -euo pipefail
cd "$(dirname "$0")/.."

build=build
cmake_args=()
if [ "${1:-}" = "--sanitize" ]; then
  build=build-asan
  cmake_args+=(-DTE_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug -DTE_BUILD_BENCHMARKS=OFF)
  export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0
  export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
fi

scripts/deps.sh
jobs=$(nproc)
cmake -S . -B "$build" -G Ninja "${cmake_args[@]}"
cmake --build "$build" -j "$jobs"
ctest --test-dir "$build" --output-on-failure -j "$jobs"
