#!/usr/bin/env bash
# The local Slurm cluster of scripts/slurm-local.sh, started for real: an array job throttled to
# two tasks at a time, each task writing its own file, and a merge job that waits for the array
# (afterok) and counts what the tasks wrote. Fails with the reason where Slurm cannot start.
set -euo pipefail
repo="$(cd "$(dirname "$0")/../.." && pwd)"
work="$(mktemp -d)"
export SLURM_LOCAL_DIR="$work/cluster"
cleanup() { "$repo/scripts/slurm-local.sh" stop >/dev/null 2>&1 || true; rm -rf "$work"; }
trap cleanup EXIT
"$repo/scripts/slurm-local.sh" start
eval "$("$repo/scripts/slurm-local.sh" env)"

mkdir -p "$work/out"
cat >"$work/task.sh" <<SCRIPT
#!/bin/bash
#SBATCH --array=0-4%2
#SBATCH --output=$work/out/log-%A_%a.out
echo "\$SLURM_ARRAY_TASK_ID" >"$work/out/task-\$SLURM_ARRAY_TASK_ID"
SCRIPT
array=$(sbatch --parsable "$work/task.sh")
merge=$(sbatch --parsable --dependency="afterok:$array" --output="$work/out/merge.out" \
  --wrap "cat $work/out/task-* | sort -n | paste -sd, - >$work/out/merged")
for _ in $(seq 1 120); do
  [ -z "$(squeue -h -j "$array,$merge" 2>/dev/null)" ] && break
  sleep 0.5
done
[ -z "$(squeue -h -j "$array,$merge" 2>/dev/null)" ] || { squeue; echo "FAIL: the jobs did not end in 60 s"; exit 1; }
state=$(scontrol show job "$merge" | grep -oE 'JobState=[A-Z]+')
[ "$state" = "JobState=COMPLETED" ] || { echo "FAIL: merge job $merge ended $state"; exit 1; }
merged=$(cat "$work/out/merged")
[ "$merged" = "0,1,2,3,4" ] || { echo "FAIL: the merge saw '$merged', not the five tasks 0,1,2,3,4"; exit 1; }
logs=$(ls "$work/out" | grep -cE "^log-${array}_[0-4]\.out$")
[ "$logs" -eq 5 ] || { echo "FAIL: $logs task logs named %A_%a, not 5"; exit 1; }
echo "1 passed, 0 failed"
