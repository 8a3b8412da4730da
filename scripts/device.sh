#!/usr/bin/env bash
# The one command for the lent GPU machine (an H100; no Qt, no OpenCV, no package registry
# there). Everything was built here by scripts/device-bundle.sh and travels as one archive:
#   Here, once per change:  scripts/device-bundle.sh
#   The device call:        carry .deps/device-bundle.tar.xz and .data; command: scripts/device.sh
# There it runs every test (the GPU ones, and the window's under Qt's offscreen platform: live
# inference with every GPU variant, the Profile tab, a GPU sweep), compute-sanitizer memcheck,
# racecheck, synccheck and initcheck on every GPU variant and a student's kernel, the benchmark at batch 1, 100, 1,000 and
# 10,000 (BENCH_BATCHES), the profiler table and PyTorch's reference figures at the same batch sizes in the same call
# (pytorch.json beside bench.json: its end-to-end peer compiled into one CUDA graph, and the pinned upload bandwidth
# that the end-to-end floor needs). Logs and screenshots go under $OUT.
# Stages can be chosen: STAGES="test sanitize bench class ncu" (default: test sanitize bench); class
# grades a made-up class of CLASS_SIZE (default 24) submissions with convscope-cli grade; the ncu
# stage profiles the conv kernels of NCU_VARIANTS (default: the three fastest) at batch NCU_BATCH (default 10,000),
# and with NCU_SASS=1 also writes each SASS instruction's executed count and stalls (logs/ncu-VARIANT-sass.csv);
# BENCH_VARIANTS (comma-separated) narrows the benchmark (default: every GPU variant and the CPU's);
# BENCH_BATCHES (comma-separated) sets the batch sizes of the benchmark and of PyTorch (default: 1,100,1000,10000);
# PYTORCH=0 leaves out PyTorch's reference figures; TESTS (a ctest regex) narrows the tests, TESTS_EXCLUDE (another)
# leaves some out; SANITIZE_VARIANTS (a
# test-name pattern such as gpu_tensor*) narrows the sanitize stage to those variants;
# TEST_TIMEOUT, CLASS_TIMEOUT, BENCH_TIMEOUT and PYTORCH_TIMEOUT (seconds) bound the stages so
# that one device call holds them all. The spread stage measures how far one kernel's fair timing
# spreads graded alone and beside a class (scripts/measure-timing-spread.sh, SPREAD_RUNS timings of
# each, default 20, beside SPREAD_OTHERS others, default 20, starting no run after SPREAD_BUDGET s,
# default 400); PLANS=0 leaves out the engine's plans for every variant (about 30 s).
set -uo pipefail
cd "$(dirname "$0")/.."
OUT="${OUT:-$PWD/device-out}"
STAGES="${STAGES:-test sanitize bench}"
# The device tool brings back at most 8 files: logs and screenshots go to archives.
LOGS="$OUT/logs"
SHOTS="$OUT/screens"
mkdir -p "$LOGS" "$SHOTS"
trap 'tar -C "$OUT" -czf "$OUT/logs.tar.gz" logs screens && rm -rf "$LOGS" "$SHOTS"' EXIT
trap 'exit 143' TERM  # stopped by a timeout: the logs are still packed
status=0
stage() { [[ " $STAGES " == *" $1 "* ]]; }

[ -f .deps/device-bundle.tar.xz ] || { echo "device.sh: no .deps/device-bundle.tar.xz: run scripts/device-bundle.sh here and carry it"; exit 1; }
tar -xJf .deps/device-bundle.tar.xz
bundle="$PWD/device-bundle"
# CTest's files and the tests name the paths of the machine that built them: link that path here.
source_dir=$(cat "$bundle/source-dir.txt")
if [ "$source_dir" != "$PWD" ] && [ ! -e "$source_dir" ]; then
  mkdir -p "$(dirname "$source_dir")" && ln -s "$PWD" "$source_dir"
fi
build="$source_dir/build-device"

# The CUDA runtime, cuBLAS and cuDNN are this machine's own; find their folders.
cuda_dirs=""
for lib in libcudart.so.13 libcublas.so.13 libcudnn.so.9; do
  dir=$(ldconfig -p | awk -v l="$lib" '$1 == l {print $NF; exit}' | xargs -r dirname)
  [ -n "$dir" ] || dir=$(find /usr/local/cuda*/ /usr/lib /opt -name "$lib" 2>/dev/null | head -1 | xargs -r dirname)
  [ -n "$dir" ] && cuda_dirs="$cuda_dirs:$dir"
done
export LD_LIBRARY_PATH="$bundle/lib$cuda_dirs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export QT_PLUGIN_PATH="$bundle/plugins" QT_QPA_PLATFORM=offscreen
cat >"$bundle/fonts.conf" <<EOF
<?xml version="1.0"?><!DOCTYPE fontconfig SYSTEM "fonts.dtd">
<fontconfig><dir>$bundle/fonts</dir><cachedir>/tmp/convscope-fontconfig</cachedir></fontconfig>
EOF
export FONTCONFIG_FILE="$bundle/fonts.conf"
export CONVSCOPE_DATA="$PWD/.data/fashion-mnist"
# On this machine a GPU test that skips (no GPU, no CUDA, no kernel compiler) fails instead: it
# would pass having checked nothing (GPU_TEST_SKIP, tests/core/test_support.h). The tests and the
# sanitize stage both run with it.
export CONVSCOPE_REQUIRE_GPU=1
cli="$build/app/cli/convscope-cli"

{
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv
  ldd --version | head -1
  echo "CUDA libraries from:${cuda_dirs//:/ }"
  window="$build/app/gui/convscope"
  [ -x "$window" ] || { echo "no window in this bundle (device-bundle.sh --without-qt)"; window=; }
  ldd "$cli" $window | grep "not found" || echo "every library found"
} 2>&1 | tee "$LOGS/machine.txt"
$cli variants 2>&1 | tee "$LOGS/variants.txt" | head -3
# The engine's plan for every variant on this GPU (its real shared-memory limits decide what the
# direct-convolution variants take): the stages and every fallback with its reason.
: >"$LOGS/plans.txt"
[ "${PLANS:-1}" = 0 ] || for v in $($cli variants | awk '$2=="yes" {print $1}'); do
  for model in course-high lenet5; do $cli info --model "data/models/$model.onnx" --variant "$v" --batch 10000 | sed -n '/^Plan for/,$p'; done
done >"$LOGS/plans.txt" 2>&1
echo "plans: $(grep -c '^Plan for' "$LOGS/plans.txt") made, $(grep -c -- '-- fallback' "$LOGS/plans.txt") fallback stages"
grep -- '-- fallback' "$LOGS/plans.txt" | sort | uniq -c | head -5

if stage test; then
  # Left out there: the ONNX conformance cases (their Debian package is not carried), the local
  # Slurm cluster (no slurm-wlm there) and the install checks (they need the source tree's CMake).
  CONVSCOPE_SCREENSHOT_DIR="$SHOTS" timeout "${TEST_TIMEOUT:-1200}" ctest --test-dir "$build" --output-on-failure -j 6 -E "[Cc]onformance|SlurmLocal|desktop_file_valid|install_layout|Scripts\.${TESTS_EXCLUDE:+|$TESTS_EXCLUDE}" ${TESTS:+-R "$TESTS"} \
    >"$LOGS/ctest.log" 2>&1 || status=1
  grep -E "tests passed|Failed|\*\*\*|Not Run" "$LOGS/ctest.log" | head -40
  grep -cE "^ *[0-9]+/[0-9]+ Test +#[0-9]+: (GpuWindow|Profile\.AGpu)[^ ]* +\.+ +Passed" "$LOGS/ctest.log" |
    sed 's/^/window GPU tests passed: /'
  # The window as a user starts it, on this GPU (the default variant is the fastest one here).
  [ ! -x "$build/app/gui/convscope" ] || "$build/app/gui/convscope" --screenshot "$SHOTS/window-gpu.png" --index 0 --tab explore >"$LOGS/window.log" 2>&1 ||
    { status=1; cat "$LOGS/window.log"; }
fi

if stage sanitize; then
  # Four compute-sanitizer tools over every GPU variant (the tensor-core, fused-epilogue and
  # whole-network kernels included), the arithmetic kernels, and over the student-kernel path (a template checked through
  # the CLI, whose kernel runs in a child process: the sanitizer follows it). The tools run side by
  # side, one process each, so the stage fits one device call; each tool's error count is reported.
  every_gpu_variant='Registry/ConvVariantCorrectness.*/gpu_*:Registry/ConvVariantCorrectness.*/cudnn:Registry/GpuEngine.CapturedLayers*'
  # SANITIZE_VARIANTS (a test-name pattern such as gpu_tensor*) narrows the variant tests to those
  # variants' and leaves out the whole-network tests and the student's kernel (the end-to-end tests
  # stay as they are), e.g. to check a kernel path chosen by an environment variable
  # (CONVSCOPE_TENSOR_MMA).
  narrowed="${SANITIZE_VARIANTS:-}"
  [ -n "$narrowed" ] &&
    every_gpu_variant="Registry/ConvVariantCorrectness.*/$narrowed:Registry/GpuEngine.CapturedLayers*/$narrowed"
  sanitize_tool() {  # tool: runs every target under it, prints "tool: errors N, exits ..."
    local tool=$1 log="$LOGS/sanitize-$1.log" exits=""
    : >"$log"
    run() { compute-sanitizer --tool "$tool" --error-exitcode 9 --target-processes all "$@" >>"$log" 2>&1; exits="$exits $?"; }
    run "$build/tests/test_conv_backends" --gtest_filter="$every_gpu_variant"
    run "$build/tests/test_gpu_engine" --gtest_filter="$every_gpu_variant:GpuArithmetic.*"
    run "$build/tests/test_fused_epilogue" ${narrowed:+--gtest_filter="*/$narrowed"}
    [ -n "$narrowed" ] || run "$build/tests/test_whole_network"
    # The queue gate's test holds the stream with a host function; initcheck (CUDA 13, H100) runs
    # the work queued behind it at once, so that test's timing fails under it with no error found:
    # the other three tools run it.
    local gate='GpuQueueGate.*:'
    [ "$tool" = initcheck ] && gate=''
    run "$build/tests/test_end_to_end_gpu" \
      --gtest_filter="GpuImageBytes.*:${gate}Registry/GpuEndToEnd.Recorded*/gpu_whole_network:Registry/GpuEndToEnd.Recorded*/gpu_fused_epilogue:Registry/GpuEndToEnd.Recorded*/gpu_tensor*"
    [ -n "$narrowed" ] || run "$cli" kernel check examples/kernels/tiled_conv.cu --no-network
    # "ERROR SUMMARY: N errors" (memcheck, synccheck, initcheck) and "RACECHECK SUMMARY: N hazards".
    local errors
    errors=$(grep -hoE '(ERROR|RACECHECK) SUMMARY: [0-9]+' "$log" | awk '{n += $3} END {print n + 0}')
    echo "compute-sanitizer $tool: $errors errors or hazards; exits:$exits"
    [ "$errors" -eq 0 ] && [ -z "$(echo "$exits" | tr -d ' 0')" ]
  }
  pids=()
  for tool in memcheck racecheck synccheck initcheck; do
    sanitize_tool "$tool" >"$LOGS/sanitize-$tool.summary" &
    pids+=($!)
  done
  for pid in "${pids[@]}"; do wait "$pid" || status=1; done
  cat "$LOGS"/sanitize-*.summary
fi

if stage class; then
  # Class mode on this GPU (docs/class-mode.md): a made-up class of CLASS_SIZE submissions (every
  # status, faulting, spinning and printing kernels included) graded with --jobs, its wall time
  # measured; the leaderboard and every submission's result come back in logs.tar.gz (class/).
  class_dir=/tmp/convscope-class
  # CLASS_RUNTIME= (empty) leaves out the faulting, spinning and printing kernels.
  rm -rf "$class_dir" && scripts/make-class.sh "${CLASS_SIZE:-24}" "$class_dir/submissions" ${CLASS_RUNTIME---runtime} >/dev/null
  # The kernels that try to game the timing, beside the class.
  for cheat in caches_result writes_first_call_only writes_nothing; do
    cp "tests/data/kernels/$cheat.cu" "$class_dir/submissions/cheat-$cheat.cu"
  done
  # Every GPU's load, once a second, while the class is graded: with several GPUs each takes turns.
  monitor=""
  if command -v nvidia-smi >/dev/null; then
    nvidia-smi -L | tee "$LOGS/class-gpus.txt"
    nvidia-smi --query-gpu=timestamp,index,utilization.gpu,memory.used --format=csv -l 1 >"$LOGS/class-gpu-load.csv" 2>&1 &
    monitor=$!
  fi
  start=$(date +%s.%N)
  # Stopped at CLASS_TIMEOUT as Ctrl+C stops it: the finished results are kept and merged.
  timeout -s INT -k 30 "${CLASS_TIMEOUT:-240}" "$cli" grade "$class_dir/submissions" --out "$class_dir/results" --jobs 8 \
    --time-limit "${CLASS_TIME_LIMIT:-20}" >"$LOGS/class-grade.log" 2>&1 || status=1
  end=$(date +%s.%N)
  [ -n "$monitor" ] && kill "$monitor" 2>/dev/null
  # Which GPU graded each submission (gpuDevice of its result) and how busy each GPU was.
  python3 - "$class_dir/results/submissions" "$LOGS/class-gpu-load.csv" <<'PY' | tee "$LOGS/class-gpu-share.txt"
import collections, csv, glob, json, os, sys
devices = collections.Counter(json.load(open(f)).get("gpuDevice", "(none)") for f in glob.glob(sys.argv[1] + "/*.json"))
print("results per GPU (CUDA_VISIBLE_DEVICES of the child):", dict(devices))
if os.path.exists(sys.argv[2]):
    busy = collections.defaultdict(list)
    for row in csv.reader(open(sys.argv[2])):
        if len(row) >= 3 and row[1].strip().isdigit():
            busy[row[1].strip()].append(float(row[2].strip().split()[0]))
    for gpu, load in sorted(busy.items()):
        print(f"GPU {gpu}: busy (utilization > 0) in {sum(1 for u in load if u > 0)} of {len(load)} one-second samples, mean {sum(load) / len(load):.0f} %")
PY
  echo "class of $(ls "$class_dir/submissions" | wc -l) submissions, $(ls "$class_dir/results/submissions" 2>/dev/null | wc -l) results, graded in $(awk -v a="$start" -v b="$end" 'BEGIN {printf "%.1f", b - a}') s (wall)" |
    tee "$LOGS/class-wall.txt"
  tail -40 "$LOGS/class-grade.log"
  mkdir -p "$LOGS/class" && cp -r "$class_dir/results/." "$LOGS/class/" 2>/dev/null
fi
if stage spread; then
  runs="${SPREAD_RUNS:-20}"
  scripts/measure-timing-spread.sh "$cli" "$LOGS/spread" --runs "$runs" --others "${SPREAD_OTHERS:-20}" --jobs 8 \
    --copies "$runs" --budget "${SPREAD_BUDGET:-400}" || status=1
fi

if stage bench; then
  variants=$($cli variants | awk '$2=="yes" && $1 ~ /^(gpu-|cudnn)/ {print $1}' | paste -sd, -)
  batches="${BENCH_BATCHES:-1,100,1000,10000}"
  timeout "${BENCH_TIMEOUT:-1200}" $cli bench --variants "${BENCH_VARIANTS:-$variants,cpu-im2col-gemm}" --batches "$batches" --repeats "${REPEATS:-20}" \
    --json "$OUT/bench.json" --csv "$OUT/bench.csv" 2>"$LOGS/bench-progress.log" | tee "$LOGS/bench.txt" || status=1
  $cli profile --variant gpu-restrict-unroll --batch 10000 --json "$OUT/profile-h100.json" 2>&1 | tee "$OUT/profile.txt"
  # Variants whose products are not FP32 (TF32 tensor cores): their predictions on the whole test
  # set, counted against the exact FP32 kernel's, for every shipped model.
  for model in course-high course-low lenet5; do
    $cli classify --model "data/models/$model.onnx" --variant gpu-restrict-unroll --csv "$LOGS/$model-fp32.csv" >/dev/null 2>&1
    for v in $($cli variants | awk '$2=="yes" && $1 ~ /tensor/ {print $1}'); do
      $cli classify --model "data/models/$model.onnx" --variant "$v" --csv "$LOGS/$model-$v.csv" >/dev/null 2>&1 || status=1
      python3 - "$LOGS/$model-fp32.csv" "$LOGS/$model-$v.csv" "$model" "$v" <<'PY'
import csv, sys
def predictions(path):
    with open(path) as f:
        rows = [r for r in csv.reader(f) if r and r[0].strip().isdigit()]
    return {r[0]: (r[2], r[4]) for r in rows}  # index: (label, predicted)
fp32, other = predictions(sys.argv[1]), predictions(sys.argv[2])
same = sum(1 for k in fp32 if k in other and other[k][1] == fp32[k][1])
right = sum(1 for k in other if other[k][0] == other[k][1])
print(f"{sys.argv[3]} {sys.argv[4]}: {same} of {len(fp32)} predictions equal to gpu-restrict-unroll's (FP32); accuracy {right}/{len(other)}")
PY
    done
  done 2>&1 | tee "$OUT/agreement.txt"
  # PyTorch at the same batch sizes, in the same session, with its own cuDNN (not the one found
  # for the bundle above: PyTorch refuses an older cuDNN on its library path).
  if [ "${PYTORCH:-1}" = 1 ]; then
    env -u LD_LIBRARY_PATH timeout "${PYTORCH_TIMEOUT:-600}" python3 scripts/pytorch_reference.py "$OUT/pytorch.json" "$batches" >/dev/null 2>"$LOGS/pytorch.log" || status=1
    cat "$OUT/pytorch.json"
    # The end-to-end table with every figure's floor and peer (docs/performance.md), from the two files.
    python3 scripts/end_to_end_table.py "$OUT/bench.json" "$OUT/pytorch.json" | tee "$LOGS/end-to-end-table.md" || status=1
  fi
fi
if stage ncu; then
  for v in ${NCU_VARIANTS:-gpu-restrict-unroll gpu-tensor-tf32 gpu-whole-network}; do
    ncu --kernel-name regex:'^(conv|wholeNetwork)' --launch-count 2 --section SpeedOfLight --section LaunchStats \
      --section Occupancy --section WarpStateStats --section SchedulerStats --section MemoryWorkloadAnalysis \
      --section ComputeWorkloadAnalysis --section InstructionStats --section MemoryWorkloadAnalysis_Tables --section SourceCounters \
      ${NCU_SASS:+-o "$LOGS/ncu-$v"} \
      "$cli" bench --variants "$v" --batches "${NCU_BATCH:-10000}" --repeats 1 --warmups 0 >"$LOGS/ncu-$v.txt" 2>&1 || status=1
    if [ -n "${NCU_SASS:-}" ]; then
      # Each SASS instruction's executed count and stall samples, to find where the instructions go.
      ncu -i "$LOGS/ncu-$v.ncu-rep" >>"$LOGS/ncu-$v.txt" 2>&1 || status=1
      ncu -i "$LOGS/ncu-$v.ncu-rep" --page source --print-source sass --csv >"$LOGS/ncu-$v-sass.csv" 2>&1 || status=1
      rm -f "$LOGS/ncu-$v.ncu-rep"
    fi
    grep -E "^  [a-zA-Z_]+.*\(|Duration|Compute \(SM\) Throughput|Memory Throughput|DRAM Throughput|Achieved Occupancy|Registers Per|Issue Slots Busy|Warp Cycles Per Issued" "$LOGS/ncu-$v.txt" | head -40
  done
fi
exit $status
