#!/usr/bin/env bash
# Builds te and runs the main demo (examples/quickstart).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
cmake -S . -B build -G Ninja
cmake --build build -j "$(nproc)" --target quickstart
./build/examples/quickstart
