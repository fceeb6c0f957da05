#!/usr/bin/env bash
# Builds te and runs the whole test suite.
# Usage: scripts/test.sh [--sanitize | --sanitize-core | --llvm N]
#   --sanitize:      ASan + UBSan + LeakSanitizer build of the whole suite;
#   --sanitize-core: the same build of the core tests only (tests/sanitize_core.txt), each
#                    executable run once: what CI runs, in about a third of the time;
#   --llvm N:        build te against LLVM N (/usr/lib/llvm-N) and run the LLVM backend's
#                    tests (ctest label "llvm"); CI runs it with 19 beside Debian's default 14.
set -euo pipefail
cd "$(dirname "$0")/.."

build=build
source scripts/build_config.sh
cmake_args=("${te_cmake_args[@]}")
targets=(all)
ctest_args=()
core=""
if [ "${1:-}" = "--llvm" ]; then
  version=${2:?"--llvm needs a version, e.g. --llvm 19"}
  build=build-llvm$version
  cmake_args+=(-DLLVM_DIR=/usr/lib/llvm-$version/lib/cmake/llvm -DTE_BUILD_BENCHMARKS=OFF
    -DTE_BUILD_EXAMPLES=OFF)
  targets=(te_llvm_tests)
  ctest_args+=(-L llvm)
  scripts/deps.sh "llvm-$version-dev"
elif [ "${1:-}" = "--sanitize" ] || [ "${1:-}" = "--sanitize-core" ]; then
  build=build-asan
  # -O1: ASan's advice (the suite runs several times faster than at -O0); -g1: line tables,
  # all that its reports need.
  cmake_args+=(-DTE_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug "-DCMAKE_CXX_FLAGS_DEBUG=-O1 -g1"
    "-DCMAKE_C_FLAGS_DEBUG=-O1 -g1" -DTE_BUILD_BENCHMARKS=OFF -DTE_BUILD_EXAMPLES=OFF)
  # The nvcc checks spend their time in nvcc, not in te (the plain pass runs them).
  export TE_NVCC=
  export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0
  export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
  if [ "$1" = "--sanitize-core" ]; then
    core=$(grep '^test_' tests/sanitize_core.txt)
    targets=(te_sanitize_core_tests)
  fi
elif [ -n "${1:-}" ]; then
  echo "usage: $0 [--sanitize | --sanitize-core | --llvm N]" >&2
  exit 2
fi

scripts/deps.sh
jobs=$(nproc)
cmake -S . -B "$build" "${cmake_args[@]}"
cmake --build "$build" -j "$jobs" --target "${targets[@]}"
if [ -n "$core" ]; then
  # Each executable once (all its tests in one process), $jobs at a time; a failure prints
  # that executable's output.
  cd "$build/tests"
  echo "$core" | TE_CACHE=0 xargs -P "$jobs" -I{} sh -c \
    './{} --gtest_brief=1 > {}.sanitize.log 2>&1 && echo "passed: {}" || { cat {}.sanitize.log; echo "FAILED: {}"; exit 1; }'
else
  ctest --test-dir "$build" --output-on-failure -j "$jobs" "${ctest_args[@]}"
fi
