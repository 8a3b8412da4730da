#!/usr/bin/env bash
# Builds the libFuzzer targets (tests/fuzz: ONNX loader, IDX reader, image header, benchmark JSON,
# profile JSON, .cu contract parser) with clang in build-fuzz/ and runs each for SECONDS
# (default 600) under the limits every input must respect: 1 GB of memory (-rss_limit_mb, which
# also caps a single allocation) and 10 s per input. Then prints, per target, the executions,
# the findings (crash-, leak-, oom-, timeout- files) and the peak RSS.
#   scripts/fuzz.sh [SECONDS]            every target, one after the other
#   FUZZ_PARALLEL=1 scripts/fuzz.sh 600  all at once
#   FUZZ_TARGETS="fuzz_idx_reader" scripts/fuzz.sh 600   some of them (e.g. again after a fix)
# Needs clang and libFuzzer: scripts/install-deps.sh --fuzz. Findings are kept in
# build-fuzz/findings/<target>/; each one found so far is a regression test in tests/core.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds="${1:-600}"
build=build-fuzz
cxx="${CXX_FUZZ:-$(command -v clang++-14 || command -v clang++)}"
targets="${FUZZ_TARGETS:-fuzz_onnx_loader fuzz_idx_reader fuzz_image_header fuzz_benchmark_json fuzz_profile_json fuzz_kernel_source}"

cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER="$cxx" -DCONVSCOPE_FUZZ=ON \
  -DCONVSCOPE_WITH_CUDA=OFF -DCONVSCOPE_WITH_GUI=OFF -DCONVSCOPE_SANITIZE=OFF \
  $(command -v ccache >/dev/null && echo -DCMAKE_CXX_COMPILER_LAUNCHER=ccache) >/dev/null
nice cmake --build "$build" -j "$(nproc)" --target $targets

# Seed corpora: a few small shipped models and the ONNX operator conformance models (by path,
# not copied into the repository), and small IDX files written here.
seeds="$build/seeds"
rm -rf "$seeds" && mkdir -p "$seeds/onnx" "$seeds/idx" "$seeds/image" "$seeds/benchmark" "$seeds/profile" "$seeds/kernel"
cp data/models/lenet5.onnx tests/data/exported/lenet5-torchscript-op13.onnx "$seeds/onnx/"
for case in /usr/share/libonnx-testdata/data/node/test_{conv,gemm,flatten,reshape,relu,maxpool,averagepool,softmax,matmul,add,constant,identity,sigmoid,tanh}*; do
  [ -f "$case/model.onnx" ] && cp "$case/model.onnx" "$seeds/onnx/$(basename "$case").onnx"
done
printf '\x00\x00\x08\x01\x00\x00\x00\x03\x01\x02\x03' >"$seeds/idx/labels"
printf '\x00\x00\x08\x03\x00\x00\x00\x02\x00\x00\x00\x02\x00\x00\x00\x02\x00\x40\x80\xff\x01\x02\x03\x04' >"$seeds/idx/images"
gzip -c "$seeds/idx/images" >"$seeds/idx/images.gz"
gzip -c "$seeds/idx/labels" >"$seeds/idx/labels.gz"
# Tiny pictures (a 3 x 2 gray gradient) in every format the header check knows, written by OpenCV.
python3 - "$seeds/image" <<'PYTHON'
import struct, sys, zlib
folder = sys.argv[1]
def chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
rows = b"".join(b"\0" + bytes([y * 120 + x * 40 for x in range(3)]) for y in range(2))
png = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 3, 2, 8, 0, 0, 0, 0))
png += chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")
open(folder + "/small.png", "wb").write(png)
palette = b"".join(bytes([i, i, i, 0]) for i in range(256))
pixels = b"".join(bytes([y * 120 + x * 40 for x in range(3)]) + b"\0" for y in range(2))
header = struct.pack("<2sIHHI", b"BM", 54 + 1024 + len(pixels), 0, 0, 54 + 1024)
header += struct.pack("<IiiHHIIiiII", 40, 3, 2, 1, 8, 0, len(pixels), 2835, 2835, 256, 0)
open(folder + "/small.bmp", "wb").write(header + palette + pixels)
PYTHON
printf '\xff\xd8\xff\xe0\x00\x10\x4a\x46\x49\x46\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00\xff\xdb\x00\x43\x00\x10\x0b\x0c\x0e\x0c\x0a\x10\x0e\x0d\x0e\x12\x11\x10\x13\x18\x28\x1a\x18\x16\x16\x18\x31\x23\x25\x1d\x28\x3a\x33\x3d\x3c\x39\x33\x38\x37\x40\x48\x5c\x4e\x40\x44\x57\x45\x37\x38\x50\x6d\x51\x57\x5f\x62\x67\x68\x67\x3e\x4d\x71\x79\x70\x64\x78\x5c\x65\x67\x63\xff\xc0\x00\x0b\x08\x00\x02\x00\x03\x01\x01\x11\x00\xff\xc4\x00\x1f\x00\x00\x01\x05\x01\x01\x01\x01\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\xff\xc4\x00\xb5\x10\x00\x02\x01\x03\x03\x02\x04\x03\x05\x05\x04\x04\x00\x00\x01\x7d\x01\x02\x03\x00\x04\x11\x05\x12\x21\x31\x41\x06\x13\x51\x61\x07\x22\x71\x14\x32\x81\x91\xa1\x08\x23\x42\xb1\xc1\x15\x52\xd1\xf0\x24\x33\x62\x72\x82\x09\x0a\x16\x17\x18\x19\x1a\x25\x26\x27\x28\x29\x2a\x34\x35\x36\x37\x38\x39\x3a\x43\x44\x45\x46\x47\x48\x49\x4a\x53\x54\x55\x56\x57\x58\x59\x5a\x63\x64\x65\x66\x67\x68\x69\x6a\x73\x74\x75\x76\x77\x78\x79\x7a\x83\x84\x85\x86\x87\x88\x89\x8a\x92\x93\x94\x95\x96\x97\x98\x99\x9a\xa2\xa3\xa4\xa5\xa6\xa7\xa8\xa9\xaa\xb2\xb3\xb4\xb5\xb6\xb7\xb8\xb9\xba\xc2\xc3\xc4\xc5\xc6\xc7\xc8\xc9\xca\xd2\xd3\xd4\xd5\xd6\xd7\xd8\xd9\xda\xe1\xe2\xe3\xe4\xe5\xe6\xe7\xe8\xe9\xea\xf1\xf2\xf3\xf4\xf5\xf6\xf7\xf8\xf9\xfa\xff\xda\x00\x08\x01\x01\x00\x00\x3f\x00\xd5\xb1\xb1\xb4\xfb\x14\x5f\xe8\xb0\x7d\xdf\xf9\xe6\x2b\xff\xd9' >"$seeds/image/small.jpg"
printf '\x52\x49\x46\x46\x2e\x00\x00\x00\x57\x45\x42\x50\x56\x50\x38\x4c\x22\x00\x00\x00\x2f\x02\x40\x00\x00\x2f\x20\x10\x48\xc2\xd9\x5f\x71\x89\x41\x19\x94\xf9\x4f\x6c\x43\x4d\xdb\x06\x6c\xa8\xf3\x2f\xa7\x46\xf4\x3f\xa6\x17' >"$seeds/image/small.webp"
printf '\x49\x49\x2a\x00\x10\x00\x00\x00\x80\x00\x05\x02\x83\xc4\x0e\x02\x0c\x00\x00\x01\x03\x00\x01\x00\x00\x00\x03\x00\x00\x00\x01\x01\x03\x00\x01\x00\x00\x00\x02\x00\x00\x00\x02\x01\x03\x00\x01\x00\x00\x00\x08\x00\x00\x00\x03\x01\x03\x00\x01\x00\x00\x00\x05\x00\x00\x00\x06\x01\x03\x00\x01\x00\x00\x00\x01\x00\x00\x00\x11\x01\x04\x00\x01\x00\x00\x00\x08\x00\x00\x00\x15\x01\x03\x00\x01\x00\x00\x00\x01\x00\x00\x00\x16\x01\x03\x00\x01\x00\x00\x00\x02\x00\x00\x00\x17\x01\x04\x00\x01\x00\x00\x00\x08\x00\x00\x00\x1c\x01\x03\x00\x01\x00\x00\x00\x01\x00\x00\x00\x3d\x01\x03\x00\x01\x00\x00\x00\x02\x00\x00\x00\x53\x01\x03\x00\x01\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00' >"$seeds/image/small.tif"
printf 'P5\n3 2\n255\n\x00\x10\x20\x30\x40\x50' >"$seeds/image/small.pgm"
printf 'P2\n2 2\n9\n0 3\n6 9\n' >"$seeds/image/small-ascii.pgm"

# A benchmark file cut to one run of one layer (the shipped H100 sweep), a profile as the CLI
# writes it, and the students' kernels: the examples and the broken ones of the tests.
python3 - docs/results/bench-h100.json "$seeds" <<'PYTHON'
import json, sys
bench = json.load(open(sys.argv[1]))
bench["runs"] = bench["runs"][:1]
bench["runs"][0]["layers"] = bench["runs"][0]["layers"][:1]
json.dump(bench, open(sys.argv[2] + "/benchmark/one-run.json", "w"), indent=1)
profile = {"schema": "convscope-profile/1", "variant": "gpu-tiled", "model": "course-high", "device": "H100",
           "date": "2026-11-25", "batch": 1000,
           "rows": [{"name": "conv", "is_copy": False, "calls": 2, "total_ms": 6.0, "min_ms": 1.5, "max_ms": 4.5,
                     "share": 0.6},
                    {"name": "[CUDA memcpy HtoD]", "is_copy": True, "calls": 1, "total_ms": 4.0, "min_ms": 4.0,
                     "max_ms": 4.0, "share": 0.4}]}
json.dump(profile, open(sys.argv[2] + "/profile/profile.json", "w"), indent=1)
PYTHON
cp examples/kernels/*.cu tests/data/kernels/*.cu "$seeds/kernel/"

run() {  # target, seed folder
  local target="$1" seedDir="$2"
  mkdir -p "$build/corpus/$target" "$build/findings/$target"
  ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=0 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    nice "$build/tests/fuzz/$target" -max_total_time="$seconds" -rss_limit_mb=1024 -timeout=10 \
    -print_final_stats=1 -artifact_prefix="$build/findings/$target/" \
    "$build/corpus/$target" "$seedDir" >"$build/$target.log" 2>&1 || true
}

seed_of() {  # target -> its seed folder
  case "$1" in
    fuzz_onnx_loader) echo "$seeds/onnx" ;;
    fuzz_idx_reader) echo "$seeds/idx" ;;
    fuzz_image_header) echo "$seeds/image" ;;
    fuzz_benchmark_json) echo "$seeds/benchmark" ;;
    fuzz_profile_json) echo "$seeds/profile" ;;
    fuzz_kernel_source) echo "$seeds/kernel" ;;
    *) echo "fuzz.sh: unknown target '$1'" >&2; exit 2 ;;
  esac
}
for target in $targets; do seed_of "$target" >/dev/null; done
if [ "${FUZZ_PARALLEL:-0}" = 1 ]; then
  for target in $targets; do run "$target" "$(seed_of "$target")" & done
  wait
else
  for target in $targets; do run "$target" "$(seed_of "$target")"; done
fi

status=0
for target in $targets; do
  log="$build/$target.log"
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo "?")
  rss=$(grep -o 'stat::peak_rss_mb: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo "?")
  findings=$(find "$build/findings/$target" -type f | wc -l)
  echo "$target: ${seconds} s, ${runs} executions, ${findings} findings, peak RSS ${rss} MB (log: $log)"
  [ "$findings" -eq 0 ] || status=1
done
exit "$status"
