#!/usr/bin/env bash
# Builds the libFuzzer targets (tests/fuzz) with clang in build-fuzz/ and runs each for SECONDS
# (default 600) under the limits every input must respect: 1 GB of memory (-rss_limit_mb, which
# also caps a single allocation) and 10 s per input. Then prints, per target, the executions,
# the findings (crash-, leak-, oom-, timeout- files) and the peak RSS.
#   scripts/fuzz.sh [SECONDS]            both targets, one after the other
#   FUZZ_PARALLEL=1 scripts/fuzz.sh 600  both at once (one core each)
# Needs clang and libFuzzer: scripts/install-deps.sh --fuzz. Findings are kept in
# build-fuzz/findings/<target>/; each one found so far is a regression test in tests/core.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds="${1:-600}"
build=build-fuzz
cxx="${CXX_FUZZ:-$(command -v clang++-14 || command -v clang++)}"

cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER="$cxx" -DCONVSCOPE_FUZZ=ON \
  -DCONVSCOPE_WITH_CUDA=OFF -DCONVSCOPE_WITH_GUI=OFF -DCONVSCOPE_SANITIZE=OFF \
  $(command -v ccache >/dev/null && echo -DCMAKE_CXX_COMPILER_LAUNCHER=ccache) >/dev/null
nice cmake --build "$build" -j "$(nproc)" --target fuzz_onnx_loader fuzz_idx_reader

# Seed corpora: a few small shipped models and the ONNX operator conformance models (by path,
# not copied into the repository), and small IDX files written here.
seeds="$build/seeds"
rm -rf "$seeds" && mkdir -p "$seeds/onnx" "$seeds/idx"
cp data/models/lenet5.onnx tests/data/exported/lenet5-torchscript-op13.onnx "$seeds/onnx/"
for case in /usr/share/libonnx-testdata/data/node/test_{conv,gemm,flatten,reshape,relu,maxpool,averagepool,softmax,matmul,add,constant,identity,sigmoid,tanh}*; do
  [ -f "$case/model.onnx" ] && cp "$case/model.onnx" "$seeds/onnx/$(basename "$case").onnx"
done
printf '\x00\x00\x08\x01\x00\x00\x00\x03\x01\x02\x03' >"$seeds/idx/labels"
printf '\x00\x00\x08\x03\x00\x00\x00\x02\x00\x00\x00\x02\x00\x00\x00\x02\x00\x40\x80\xff\x01\x02\x03\x04' >"$seeds/idx/images"
gzip -c "$seeds/idx/images" >"$seeds/idx/images.gz"
gzip -c "$seeds/idx/labels" >"$seeds/idx/labels.gz"

run() {  # target, seed folder
  local target="$1" seedDir="$2"
  mkdir -p "$build/corpus/$target" "$build/findings/$target"
  ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=0 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    nice "$build/tests/fuzz/$target" -max_total_time="$seconds" -rss_limit_mb=1024 -timeout=10 \
    -print_final_stats=1 -artifact_prefix="$build/findings/$target/" \
    "$build/corpus/$target" "$seedDir" >"$build/$target.log" 2>&1 || true
}

if [ "${FUZZ_PARALLEL:-0}" = 1 ]; then
  run fuzz_onnx_loader "$seeds/onnx" &
  run fuzz_idx_reader "$seeds/idx" &
  wait
else
  run fuzz_onnx_loader "$seeds/onnx"
  run fuzz_idx_reader "$seeds/idx"
fi

status=0
for target in fuzz_onnx_loader fuzz_idx_reader; do
  log="$build/$target.log"
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo "?")
  rss=$(grep -o 'stat::peak_rss_mb: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo "?")
  findings=$(find "$build/findings/$target" -type f | wc -l)
  echo "$target: ${seconds} s, ${runs} executions, ${findings} findings, peak RSS ${rss} MB (log: $log)"
  [ "$findings" -eq 0 ] || status=1
done
exit "$status"
