#!/usr/bin/env bash
# Builds te and runs the main demo (examples/quickstart).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
source scripts/build_config.sh
cmake -S . -B build "${te_cmake_args[@]}"
cmake --build build -j "$(nproc)" --target quickstart
./build/examples/quickstart
