#!/usr/bin/env bash
# Lays out every tracked C/C++/CUDA source by .clang-format (clang-format 14).
# Usage: scripts/format.sh          rewrite the files in place
#        scripts/format.sh --check  change nothing; list the files that differ, exit 1 if any
# tests/data holds golden files, compared byte for byte: never formatted.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v clang-format-14 >/dev/null || scripts/deps.sh clang-format-14
mapfile -t files < <(git ls-files -- '*.cpp' '*.h' '*.c' '*.cu' '*.cuh' ':!:tests/data/*')
if [ "${1:-}" = "--check" ]; then
  bad=()
  for f in "${files[@]}"; do
    clang-format-14 --style=file "$f" | cmp -s - "$f" || bad+=("$f")
  done
  if [ ${#bad[@]} -ne 0 ]; then
    printf 'not formatted (run scripts/format.sh): %s\n' "${bad[@]}" >&2
    exit 1
  fi
  echo "format: ${#files[@]} files as .clang-format lays them out"
else
  printf '%s\0' "${files[@]}" | xargs -0 -n 32 clang-format-14 --style=file -i
fi
