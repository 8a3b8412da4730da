#!/usr/bin/env bash
# convscope-cli grade through a real Slurm cluster (scripts/slurm-local.sh): a made-up class
# (scripts/make-class.sh, plus a stray file and a folder with two .cu files) graded locally and
# with --slurm --wait (an array job throttled to 2 tasks, a merge job afterok) must give the same
# leaderboard: the same ids, statuses and order, one task log per submission named %A_%a, and a
# seed of its own for each task.
# Fails with the reason where Slurm cannot start. Usage: test_grade_slurm.sh CONVSCOPE_CLI
set -euo pipefail
repo="$(cd "$(dirname "$0")/../.." && pwd)"
cli="${1:?usage: test_grade_slurm.sh CONVSCOPE_CLI}"
work="$(mktemp -d)"
export SLURM_LOCAL_DIR="$work/cluster"
cleanup() { "$repo/scripts/slurm-local.sh" stop >/dev/null 2>&1 || true; rm -rf "$work"; }
trap cleanup EXIT
fail() { echo "FAIL: $*"; exit 1; }
# Compile-only on any machine, the GPU machine too (the tasks inherit it: sbatch exports the environment).
export CUDA_VISIBLE_DEVICES=

"$repo/scripts/make-class.sh" 8 "$work/class" >/dev/null
echo "not a kernel" >"$work/class/notes.txt"
mkdir "$work/class/two-kernels"
cp "$repo/examples/kernels/naive_conv.cu" "$repo/examples/kernels/tiled_conv.cu" "$work/class/two-kernels/"

"$cli" grade "$work/class" --out "$work/local" --jobs 2 >/dev/null

"$repo/scripts/slurm-local.sh" start
eval "$("$repo/scripts/slurm-local.sh" env)"
# This cluster has no GPUs (no GRES): --gres none, else every task would ask for one (the default,
# gpu:1) and wait forever for a node that has it.
"$cli" grade "$work/class" --out "$work/slurm" --slurm --gres none --max-parallel 2 --wait --wait-timeout 150

# Ranking order as "rank id status" lines; the two must agree line for line.
# python3 reads the JSON: it is among scripts/install-deps.sh's packages (jq is not).
ranking() {
  python3 -c 'import json, sys
for group in json.load(open(sys.argv[1]))["groups"]:
    for row in group["rows"]:
        print(row["rank"], row["id"], row["status"])' "$1/leaderboard.json"
}
local_ranking="$(ranking "$work/local")"
slurm_ranking="$(ranking "$work/slurm")"
[ "$(echo "$local_ranking" | wc -l)" -eq 8 ] || fail "the local leaderboard has not the 8 submissions: $local_ranking"
[ "$local_ranking" = "$slurm_ranking" ] ||
  fail "the Slurm leaderboard differs from the local one:"$'\n'"local:"$'\n'"$local_ranking"$'\n'"slurm:"$'\n'"$slurm_ranking"
skipped="$(python3 -c 'import json, sys; print(",".join(s["path"] for s in json.load(open(sys.argv[1]))["skipped"]))' \
  "$work/slurm/leaderboard.json")"
[ "$skipped" = "notes.txt,two-kernels" ] || fail "the Slurm leaderboard skipped '$skipped', not notes.txt,two-kernels"
array=$(find "$work/slurm/slurm/logs" -name 'grade_*' -printf '%f\n' | sed -nE 's/^grade_([0-9]+)_[0-9]+\.out$/\1/p' | sort -u)
[ "$(echo "$array" | wc -l)" -eq 1 ] || fail "task logs of more than one array job: $array"
logs=$(find "$work/slurm/slurm/logs" -name 'grade_*' -printf '%f\n' | grep -cE "^grade_${array}_[0-7]\.out$")
[ "$logs" -eq 8 ] || fail "$logs task logs named grade_%A_%a.out, not 8"
# Each task drew its own seed: 8 different ones, none on the scripts' command lines.
seeds="$(python3 -c 'import glob, json, sys
print(len({json.load(open(f))["seed"] for f in glob.glob(sys.argv[1] + "/submissions/*.json")}))' "$work/slurm")"
[ "$seeds" -eq 8 ] || fail "the 8 submissions were graded with $seeds different seeds, not 8"
! grep -q -- "--seed" "$work/slurm/slurm/grade-array.sbatch" || fail "a seed is on the array task's command line"
# A late fix of one file: one task submitted, and said so (the count once named the whole class).
first=$(find "$work/class" -maxdepth 1 -name '*.cu' | sort | head -1)
echo "// a late fix" >>"$first"
again="$("$cli" grade "$work/class" --out "$work/slurm" --slurm --gres none --max-parallel 2 --wait --wait-timeout 150)"
grep -q "submitted array job [0-9]* (1 tasks" <<<"$again" || fail "a regrade of one changed file did not say 1 task: $again"
echo "1 passed, 0 failed"
