#!/usr/bin/env bash
# How far the fair timing of one kernel spreads when it is graded alone and when it is graded
# beside other submissions with --jobs (issue 35, item 5; docs/class-mode.md, "Timings share
# nothing"). On a GPU machine:
#   alone   the kernel (default examples/kernels/tiled_conv.cu) is the only submission of a class,
#           graded RUNS times with `grade --only` (its result removed before each run);
#   beside  the same kernel among OTHERS submissions of scripts/make-class.sh (correct, wrong, not
#           compiling, breaking the contract), the whole class graded with --jobs JOBS until RUNS
#           timings are there (every result removed before each grading; the reference lines are
#           timed once, in the first, before any submission, and kept). --copies C puts C copies of
#           the kernel, under C ids, into the class: each grading then times it C times, each copy
#           beside the others and the other copies (a device call's time: 20 timings in one
#           grading rather than twenty);
# then prints, per setting and batch, the kernel's op-time sum (its conv layers' median times,
# summed: what ranks) over the runs: median, min, max and the relative spread (max - min) /
# median, as a Markdown table to paste into docs/results/ (also written to OUT/spread.md, and every
# run to OUT/spread.csv).
#
# Every run's result is kept (OUT/alone/run-NN.json, OUT/beside/run-NN.json), so a second call with
# the same OUT goes on where the first stopped. --budget S starts no run after S seconds: with a
# device call limited to 600 s, `--budget 420` and the same command again until it prints the table.
#
#   scripts/measure-timing-spread.sh CONVSCOPE_CLI OUT [--runs 20] [--others 20] [--jobs 8]
#       [--copies 1] [--kernel FILE.cu] [--time-limit 60] [--budget SECONDS]
#       [--phase all|alone|beside|report]
#       [-- options for grade, such as --model FILE.onnx --data DIR]
set -euo pipefail
usage() {
  sed -n '2,29p' "$0" >&2
  exit 2
}
[ $# -ge 2 ] || usage
repo="$(cd "$(dirname "$0")/.." && pwd)"
cli="$1"
out="$2"
shift 2
runs=20 others=20 jobs=8 copies=1 time_limit=60 budget=0 phase=all
kernel="$repo/examples/kernels/tiled_conv.cu"
grade_options=()
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) runs="$2"; shift 2 ;;
    --others) others="$2"; shift 2 ;;
    --jobs) jobs="$2"; shift 2 ;;
    --copies) copies="$2"; shift 2 ;;
    --kernel) kernel="$2"; shift 2 ;;
    --time-limit) time_limit="$2"; shift 2 ;;
    --budget) budget="$2"; shift 2 ;;
    --phase) phase="$2"; shift 2 ;;
    --) shift; grade_options=("$@"); break ;;
    *) echo "measure-timing-spread.sh: unknown option '$1'" >&2; usage ;;
  esac
done
fail() { echo "measure-timing-spread.sh: $*" >&2; exit 1; }
for n in "$runs" "$others" "$jobs" "$copies" "$time_limit" "$budget"; do
  [[ "$n" =~ ^[0-9]+$ ]] || fail "'$n' is not a whole number"
done
[ "$runs" -ge 2 ] || fail "--runs must be at least 2 (a spread needs two timings)"
[ "$others" -ge 1 ] || fail "--others must be at least 1"
[ "$copies" -ge 1 ] || fail "--copies must be at least 1"
case "$phase" in all | alone | beside | report) ;; *) fail "--phase is all, alone, beside or report, not '$phase'" ;; esac
[ -x "$cli" ] || fail "$cli: not an executable (the convscope-cli to measure)"
[ -f "$kernel" ] || fail "$kernel: no such kernel file"
command -v python3 >/dev/null || fail "python3 is needed to read the results (JSON)"

mkdir -p "$out/alone" "$out/beside"
out="$(cd "$out" && pwd)"
cli="$(cd "$(dirname "$cli")" && pwd)/$(basename "$cli")"
# The kernel's id: among the others' (student-000 ...), early in their order, so that the children
# graded beside it with --jobs are at work when it is graded.
id=student-003-target
# Copy c of the kernel (--copies): the first is $id; the others' ids sort among the class too.
copy_id() { if [ "$1" -eq 1 ]; then echo "$id"; else printf "student-%03d-target-copy" $((3 + 2 * $1)); fi; }
log="$out/runs.log"
started=$SECONDS

# Its op-time sum at each batch and its status, from a result: "status|100=s|1000=s|10000=s".
summary() {
  python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))
times = r.get("opTimeSeconds") or {}
print(r.get("status", "?") + "|" + "|".join(f"{b}={t:.6g}" for b, t in sorted(times.items(), key=lambda bt: int(bt[0]))))' "$1"
}

# One setting: run the next runs until RUNS are there or the budget is spent. $1: alone|beside.
measure() {
  local setting="$1" class="$out/$1-class" results="$out/$1-results"
  if [ ! -d "$class" ]; then
    if [ "$setting" = beside ]; then
      "$repo/scripts/make-class.sh" "$others" "$class.tmp" >/dev/null
    else
      mkdir -p "$class.tmp"
    fi
    cp "$kernel" "$class.tmp/$id.cu"
    if [ "$setting" = beside ]; then
      for ((c = 2; c <= copies; c++)); do cp "$kernel" "$class.tmp/$(copy_id "$c").cu"; done
    fi
    mv "$class.tmp" "$class"
  fi
  local done_runs
  while :; do
    done_runs=$(find "$out/$setting" -name 'run-*.json' | wc -l)
    [ "$done_runs" -lt "$runs" ] || break
    if [ "$budget" -gt 0 ] && [ $((SECONDS - started)) -ge "$budget" ]; then
      echo "$setting: $done_runs of $runs runs done; budget of $budget s spent: run the same command again to go on"
      return 1
    fi
    local run=$((done_runs + 1)) begin=$SECONDS
    local name
    name=$(printf "run-%02d" "$run")
    if [ "$setting" = alone ]; then
      rm -f "$results/submissions/$id.json"
      "$cli" grade "$class" --out "$results" --only "$id" --time-limit "$time_limit" \
        ${grade_options[@]+"${grade_options[@]}"} >>"$log" 2>&1 || fail "$setting $name: grade failed (exit $?): see $log"
    else
      rm -rf "$results/submissions"
      "$cli" grade "$class" --out "$results" --jobs "$jobs" --retime-top 0 --time-limit "$time_limit" \
        ${grade_options[@]+"${grade_options[@]}"} >>"$log" 2>&1 || fail "$setting $name: grade failed (exit $?): see $log"
    fi
    # Each copy's timing is a run of its own (beside: C copies; alone: the one).
    local c copies_here=1
    [ "$setting" = beside ] && copies_here=$copies
    for ((c = 1; c <= copies_here && run <= runs; c++, run++)); do
      local copy
      copy="$(copy_id "$c")"
      name=$(printf "run-%02d" "$run")
      [ -f "$results/submissions/$copy.json" ] || fail "$setting $name: no result for $copy: see $log"
      cp "$results/submissions/$copy.json" "$out/$setting/$name.json.tmp"
      mv "$out/$setting/$name.json.tmp" "$out/$setting/$name.json"
      local result
      result="$(summary "$out/$setting/$name.json")"
      echo "$setting $name of $runs ($copy): grading $((SECONDS - begin)) s, $result" | tee -a "$log"
      # Nothing is timed without a GPU: say so at once rather than after every run.
      [[ "$result" != "compiled, not run: no GPU|"* ]] || fail "no GPU can run the kernel here: nothing to time (see $log)"
    done
  done
}

report() {
  python3 - "$out" "$id" "$kernel" "$others" "$jobs" "$repo" "$copies" <<'PY'
import csv, glob, json, os, statistics, sys

out, target, kernel, others, jobs, repo, copies = sys.argv[1:8]
kernel = os.path.abspath(kernel)
if kernel.startswith(repo + os.sep):
    kernel = os.path.relpath(kernel, repo)
beside = f"beside {others} others" + (f" and {int(copies) - 1} copies of itself" if int(copies) > 1 else "")
settings = [("alone", "alone"), ("beside", f"{beside}, --jobs {jobs}")]
rows, table, medians, notes, waits, gpu = [], [], {}, [], {}, None
for key, label in settings:
    files = sorted(glob.glob(os.path.join(out, key, "run-*.json")))
    by_batch = {}
    for f in files:
        r = json.load(open(f))
        gpu = gpu or (r.get("gpu") or {})
        timing_steps = [s for s in r.get("steps", []) if s.get("step") == "timing"]
        waited = sum(s.get("waitedSeconds", 0.0) for s in timing_steps)
        if timing_steps:
            waits.setdefault(label, []).append(waited)
        run = os.path.basename(f)[len("run-"):-len(".json")]
        if r.get("status") != "passed":
            notes.append(f"{label}, run {run}: {r.get('status')}: {r.get('message', '')}")
        for batch, seconds in (r.get("opTimeSeconds") or {}).items():
            rows.append([key, run, batch, seconds, r.get("status"), f"{waited:.3f}"])
            if r.get("status") == "passed":
                by_batch.setdefault(int(batch), []).append(seconds)
    for batch in sorted(by_batch):
        t = by_batch[batch]
        median = statistics.median(t)
        medians[(key, batch)] = median
        table.append(f"| {label} | {batch:,} | {len(t)} | {median * 1e3:.4f} | {min(t) * 1e3:.4f} | "
                     f"{max(t) * 1e3:.4f} | {(max(t) - min(t)) / median * 100:.2f} % |")
with open(os.path.join(out, "spread.csv"), "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(["setting", "run", "batch", "op_time_s", "status", "timing_waited_s"])
    w.writerows(rows)
gpu = gpu or {}
lines = [
    f"Op-time sum of `{kernel}` (id `{target}`), each run a fresh grading (its own seed), "
    f"on {gpu.get('name', 'no GPU')} (driver {gpu.get('driver', '?')}, CUDA runtime {gpu.get('cudaRuntime', '?')}): "
    f"graded alone with `grade --only`, and beside {others} submissions of `scripts/make-class.sh` graded with "
    f"`--jobs {jobs}`" + (f" ({copies} copies of the kernel under their own ids in each grading, each copy's "
                          f"timing a run)" if int(copies) > 1 else "") + "; spread = (max - min) / median.",
    "",
    "| setting | batch | runs | median (ms) | min (ms) | max (ms) | spread |",
    "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
] + table
ratios = [f"{b:,}: {medians[('beside', b)] / medians[('alone', b)]:.4f}"
          for (k, b) in sorted(medians) if k == "alone" and ("beside", b) in medians]
if ratios:
    lines += ["", "Median beside / median alone, per batch: " + ", ".join(ratios) + "."]
if waits:
    lines += ["", "How long the timing step waited for its GPU (the others' compiles and checks in flight), median "
              "over the runs: " + ", ".join(f"{label} {statistics.median(w):.2f} s" for label, w in waits.items()) + "."]
if notes:
    lines += ["", "Runs that did not pass (left out of the table):"] + [f"- {n}" for n in notes]
text = "\n".join(lines) + "\n"
open(os.path.join(out, "spread.md"), "w").write(text)
print(text, end="")
PY
}

complete=1
if [ "$phase" = all ] || [ "$phase" = alone ]; then measure alone || complete=0; fi
if [ "$complete" = 1 ] && { [ "$phase" = all ] || [ "$phase" = beside ]; }; then measure beside || complete=0; fi
if [ "$complete" = 1 ]; then report; fi
