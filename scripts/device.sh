#!/usr/bin/env bash
# The one command for the lent GPU machine (no Qt, no OpenCV, no package registry there):
# unpack the Debian packages carried in .deps/debs, build with CUDA, run the tests, and write
# every log under $OUT. Carry .deps and .data (the Fashion-MNIST IDX files) with the call:
#   scripts/fetch-device-deps.sh   (once, here)   then run: scripts/device.sh
set -uo pipefail
cd "$(dirname "$0")/.."
OUT="${OUT:-$PWD/device-out}"
mkdir -p "$OUT"
root="$PWD/.deps/root"
mkdir -p "$root"
for deb in .deps/debs/*.deb; do dpkg -x "$deb" "$root"; done
export CMAKE_PREFIX_PATH="$root/usr"
export LD_LIBRARY_PATH="$root/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export CONVSCOPE_DATA="$PWD/.data/fashion-mnist"

{
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv
  nvcc --version | tail -2
  cmake --version | head -1
  g++ --version | head -1
} 2>&1 | tee "$OUT/machine.txt"

cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DCONVSCOPE_WITH_GUI=OFF -DCONVSCOPE_WITH_OPENCV=OFF \
  -DCMAKE_CUDA_ARCHITECTURES="${CUDA_ARCHS:-90}" >"$OUT/configure.log" 2>&1 || { tail -40 "$OUT/configure.log"; exit 1; }
grep "ConvScope:" "$OUT/configure.log"
cmake --build build-gpu -j "$(nproc)" >"$OUT/build.log" 2>&1 || { grep -E "error" -A3 "$OUT/build.log" | head -60; exit 1; }
echo "build ok"

build-gpu/app/cli/convscope-cli variants 2>&1 | tee "$OUT/variants.txt"
build-gpu/app/cli/convscope-cli classify --model data/models/course-high.onnx 2>&1 | tee "$OUT/classify.txt"
# The ONNX conformance cases come from a Debian package that is not carried.
ctest --test-dir build-gpu --output-on-failure -j 8 -E "Conformance" >"$OUT/ctest.log" 2>&1
status=$?
tail -15 "$OUT/ctest.log"
exit $status
