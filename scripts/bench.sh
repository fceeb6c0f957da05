#!/usr/bin/env bash
# Builds te's benchmarks (Release) and runs them at 1 and 2 threads. Installs what they need
# (Google Benchmark) and, when it can, the optional peers (OpenBLAS, Halide 14); a peer that
# cannot be installed is skipped. Results: build-bench/results/threads<N>.{json,md}, the .md
# being the summary table bench/README.md quotes.
# Usage: scripts/bench.sh [--no-peers] [Google Benchmark flags, e.g. --benchmark_filter=sgemm]
set -euo pipefail
cd "$(dirname "$0")/.."

peers=(libopenblas-dev libhalide14-0-dev)
if [ "${1:-}" = "--no-peers" ]; then
  peers=()
  shift
fi
scripts/deps.sh
for p in "${peers[@]}"; do
  scripts/deps.sh "$p" || echo "te bench: could not install $p; its peer is skipped"
done

build=build-bench
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DTE_BUILD_BENCHMARKS=ON \
  -DTE_BUILD_TESTS=OFF -DTE_BUILD_EXAMPLES=OFF
cmake --build "$build" --target te_bench -j "$(nproc)"

mkdir -p "$build/results/tune"
# The tune groups' records (resumed by later runs): out of the source tree.
export TE_BENCH_TUNE_DIR="${TE_BENCH_TUNE_DIR:-$build/results/tune}"
for threads in 1 2; do
  echo "== te_bench, $threads thread(s) =="
  TE_NUM_THREADS=$threads OPENBLAS_NUM_THREADS=$threads "$build/bench/te_bench" \
    --benchmark_out="$build/results/threads$threads.json" \
    --summary_out="$build/results/threads$threads.md" "$@"
done
echo "te bench: summaries in $build/results/threads1.md and threads2.md"
