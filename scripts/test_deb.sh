#!/usr/bin/env bash
# Builds te's Debian packages (cpack -G DEB) from a build folder, checks their names and
# Depends, installs them into a clean prefix (dpkg-deb -x: no root, the machine's /usr
# untouched) and builds and runs the consumer project (tests/consumer/app) against it,
# with the packaged `te` command line. Usage: scripts/test_deb.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
top=$(pwd)
build=$(cd "${1:-build}" && pwd)

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
(cd "$build" && cpack -G DEB -B "$scratch/packages" >/dev/null)
te_deb=$(ls "$scratch"/packages/te_*.deb)
dev_deb=$(ls "$scratch"/packages/te-dev_*.deb)

depends=$(dpkg-deb -f "$te_deb" Depends)
for needed in libllvm libfmt libstdc++6; do
  [[ "$depends" == *"$needed"* ]] || { echo "te.deb: Depends lacks $needed: $depends"; exit 1; }
done
dev_depends=$(dpkg-deb -f "$dev_deb" Depends)
[[ "$dev_depends" == *"te (= "* ]] || { echo "te-dev.deb: Depends lacks te: $dev_depends"; exit 1; }

root="$scratch/root"
dpkg-deb -x "$te_deb" "$root"
dpkg-deb -x "$dev_deb" "$root"
prefix="$root/usr"
for f in bin/te include/te/te.h lib/libte.so lib/libte_runtime.so lib/cmake/te/teConfig.cmake \
         lib/pkgconfig/te.pc; do
  [ -e "$prefix/$f" ] || { echo "the packages lack /usr/$f"; exit 1; }
done
"$prefix/bin/te" --help >/dev/null

cmake -DMODE=package -DPREFIX="$prefix" -DBUILD_DIR="$scratch/consumer" \
  -DAPP_DIR="$top/tests/consumer/app" -DTE_SOURCE_DIR="$top" -DTE_BINARY_DIR="$build" \
  -DGENERATOR=Ninja -DMAKE_PROGRAM="$(command -v ninja)" -DCXX="$(command -v c++)" \
  -DCC="$(command -v cc)" -DEXPECT_MPI=0 -P tests/consumer/run_consumer.cmake
echo "te: the Debian packages install and build the consumer project"
