#!/usr/bin/env bash
# Runs .clang-tidy's checks (clang-tidy 14) on te's sources.
# Usage: scripts/tidy.sh [FILE.cpp...]   (default: the .cpp files changed since origin/main,
#                                        or since HEAD~1 without a remote)
# The compile commands come from build-tidy/, configured here without unity batches (a
# unity batch has no command per file) and never built: clang-tidy only parses.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v clang-tidy-14 >/dev/null || scripts/deps.sh clang-tidy-14
source scripts/build_config.sh
if [ ! -f build-tidy/compile_commands.json ]; then
  cmake -S . -B build-tidy "${te_cmake_args[@]}" -DTE_UNITY_BUILD=OFF \
    -DCMAKE_EXPORT_COMPILE_COMMANDS=ON >/dev/null
fi
files=("$@")
if [ ${#files[@]} -eq 0 ]; then
  base=$(git rev-parse -q --verify origin/main || git rev-parse HEAD~1)
  mapfile -t files < <(git diff --name-only --diff-filter=d "$base" -- '*.cpp')
fi
[ ${#files[@]} -eq 0 ] && { echo "tidy: no changed .cpp file"; exit 0; }
clang-tidy-14 -p build-tidy --quiet "${files[@]}"
