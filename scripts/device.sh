#!/usr/bin/env bash
# The one command for the lent GPU machine (no Qt, no OpenCV, no package registry there):
# unpack the Debian packages carried in .deps/debs, build with CUDA, run every test (GPU ones
# included), compute-sanitizer memcheck and racecheck on the GPU variants, the benchmark, the
# profiler table and PyTorch's reference figures. Every log goes under $OUT.
#   Here, once: scripts/fetch-device-deps.sh      Then carry .deps and .data with the call.
# Stages can be chosen: STAGES="build test sanitize bench" (default: all of them).
set -uo pipefail
cd "$(dirname "$0")/.."
OUT="${OUT:-$PWD/device-out}"
STAGES="${STAGES:-build test sanitize bench}"
# The device tool brings back at most 8 files: logs go to one archive, results stay beside it.
LOGS="$OUT/logs"
mkdir -p "$LOGS"
trap 'tar -C "$OUT" -czf "$OUT/logs.tar.gz" logs && rm -rf "$LOGS"' EXIT
root="$PWD/.deps/root"
mkdir -p "$root"
for deb in .deps/debs/*.deb; do dpkg -x "$deb" "$root"; done
export CMAKE_PREFIX_PATH="$root/usr"
export LD_LIBRARY_PATH="$root/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export CONVSCOPE_DATA="$PWD/.data/fashion-mnist"
status=0
stage() { [[ " $STAGES " == *" $1 "* ]]; }

{
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv
  nvcc --version | tail -2
  cmake --version | head -1
  g++ --version | head -1
} 2>&1 | tee "$LOGS/machine.txt"

cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DCONVSCOPE_WITH_GUI=OFF -DCONVSCOPE_WITH_OPENCV=OFF \
  -DCMAKE_CUDA_ARCHITECTURES="${CUDA_ARCHS:-90}" >"$LOGS/configure.log" 2>&1 || { tail -40 "$LOGS/configure.log"; exit 1; }
grep "ConvScope:" "$LOGS/configure.log"
cmake --build build-gpu -j "$(nproc)" >"$LOGS/build.log" 2>&1 || { grep -E "error" -A3 "$LOGS/build.log" | head -80; exit 1; }
echo "build ok"
cli=build-gpu/app/cli/convscope-cli
$cli variants 2>&1 | tee "$LOGS/variants.txt" | head -3

if stage test; then
  # The ONNX conformance cases come from a Debian package that is not carried.
  ctest --test-dir build-gpu --output-on-failure -j 4 -E "Conformance" >"$LOGS/ctest.log" 2>&1 || status=1
  grep -E "tests passed|Failed|\*\*\*" "$LOGS/ctest.log" | head -40
fi

if stage sanitize; then
  filter='Registry/ConvVariantCorrectness.*/gpu_*:Registry/ConvVariantCorrectness.*/cudnn:Registry/GpuEngine.CapturedLayers*'
  for tool in memcheck racecheck; do
    compute-sanitizer --tool "$tool" --error-exitcode 9 build-gpu/tests/test_conv_backends --gtest_filter="$filter" \
      >"$LOGS/sanitize-$tool.log" 2>&1
    rc=$?
    compute-sanitizer --tool "$tool" --error-exitcode 9 build-gpu/tests/test_gpu_engine --gtest_filter="$filter" \
      >>"$LOGS/sanitize-$tool.log" 2>&1
    rc2=$?
    echo "compute-sanitizer $tool: exit $rc / $rc2; $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$LOGS/sanitize-$tool.log" | sort | uniq -c | tr '\n' ' ')"
    [ $rc -eq 0 ] && [ $rc2 -eq 0 ] || status=1
  done
fi

if stage bench; then
  variants=$($cli variants | awk '$2=="yes" && $1 ~ /^(gpu-|cudnn)/ {print $1}' | paste -sd, -)
  $cli bench --variants "$variants,cpu-im2col-gemm" --batches 100,1000,10000 --repeats "${REPEATS:-20}" \
    --json "$OUT/bench.json" --csv "$OUT/bench.csv" 2>"$LOGS/bench-progress.log" | tee "$LOGS/bench.txt" || status=1
  $cli profile --variant gpu-restrict-unroll --batch 10000 2>&1 | tee "$OUT/profile.txt"
  python3 scripts/pytorch_reference.py "$OUT/pytorch.json" >/dev/null 2>"$LOGS/pytorch.log" || status=1
  cat "$OUT/pytorch.json"
fi
exit $status
