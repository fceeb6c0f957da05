#!/usr/bin/env bash
# Installs the Debian packages te needs to build and test, if any are missing.
# Usage: scripts/deps.sh [extra packages...]
set -euo pipefail

# doxygen: the `docs` target and the test that every public declaration is documented;
# OpenMPI: the auto-tuner's optional MPI measurement ranks and their test;
# llvm-19-dev: CI builds te against LLVM 19 as well as Debian's default 14;
# nlohmann-json3-dev: the tuning records (a private, header-only dependency);
# python3-numpy: the GPU check kit's runner (scripts/gpu_check.py), checked by a test;
# libxgboost-dev: the auto-scheduler's learned cost model (gradient-boosted trees);
# libcli11-dev: the `te` command line's option parsing (tools/te, header-only);
# gcc-/g++-aarch64-linux-gnu, libc6-dev-arm64-cross, qemu-user: the cross-compiled AOT
# tests build te's C runtime for aarch64, link aarch64 objects and run them under qemu-aarch64.
# libtorch-dev, python3-torch (about 600 MB): te_torch (te kernels as PyTorch operators,
# te/torch.h), its tests (C++ through the dispatcher, Python through torch.ops) and the
# examples/torch_extension training script; python3-torch also runs
# scripts/gen_torch_golden.py, which regenerates tests/data/torch_golden.
packages=(g++ cmake ninja-build pkg-config libfmt-dev llvm-dev llvm-19-dev nlohmann-json3-dev
  libgtest-dev libgmock-dev libbenchmark-dev doxygen libopenmpi-dev openmpi-bin python3-numpy
  libcli11-dev libxgboost-dev gcc-aarch64-linux-gnu g++-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user
  libtorch-dev python3-torch "$@")

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "te: installing missing packages: ${missing[*]}"
sudo_cmd=()
[ "$(id -u)" -ne 0 ] && sudo_cmd=(sudo)
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
