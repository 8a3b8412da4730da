#!/usr/bin/env bash
# A one-node Slurm cluster on this machine, from Debian's slurm-wlm and munge, for testing what
# ConvScope submits to a cluster (sbatch array jobs and their dependencies) for real, not mocked.
# Everything lives under one folder (default /tmp/convscope-slurm): the munge key and socket, the
# configuration, the state, the logs; nothing of the machine's own /etc is used or changed.
#
#   scripts/slurm-local.sh start     start munged, slurmctld and slurmd; wait until the node is idle
#   scripts/slurm-local.sh stop      stop them and remove the folder
#   scripts/slurm-local.sh status    sinfo of the running cluster
#   eval "$(scripts/slurm-local.sh env)"   point sbatch, squeue, scontrol... at it (SLURM_CONF)
#
# Needs root (the daemons, and slurmd runs jobs as their user). The node has this machine's CPUs
# and memory; processes are tracked by proctrack/linuxproc and tasks are not confined
# (task/none), so no cgroup is needed. There is no accounting database: a job's end is read with
# squeue and scontrol, not sacct. SLURM_LOCAL_DIR chooses another folder.
set -euo pipefail
dir="${SLURM_LOCAL_DIR:-/tmp/convscope-slurm}"
say() { echo "slurm-local: $*"; }
fail() { echo "slurm-local: $*" >&2; exit 1; }

env_lines() { echo "export SLURM_CONF=$dir/slurm.conf"; }

stop() {
  for daemon in slurmd slurmctld; do
    if [ -f "$dir/$daemon.pid" ]; then kill "$(cat "$dir/$daemon.pid")" 2>/dev/null || true; fi
  done
  if [ -S "$dir/munge.socket" ]; then munged --stop --socket="$dir/munge.socket" >/dev/null 2>&1 || true; fi
  sleep 1
  for daemon in slurmd slurmctld munged; do
    if [ -f "$dir/$daemon.pid" ]; then kill -9 "$(cat "$dir/$daemon.pid")" 2>/dev/null || true; fi
  done
  rm -rf "$dir"
}

start() {
  [ "$(id -u)" -eq 0 ] || fail "needs root: slurmd runs jobs as their users, and munged and slurmd start as root"
  for program in munged mungekey slurmctld slurmd sinfo sbatch; do
    command -v "$program" >/dev/null || fail "$program is not installed: run scripts/install-deps.sh (slurm-wlm, munge)"
  done
  if [ -f "$dir/slurmctld.pid" ] && kill -0 "$(cat "$dir/slurmctld.pid")" 2>/dev/null; then
    say "already running ($dir)"
    return 0
  fi
  rm -rf "$dir"
  mkdir -p "$dir/state" "$dir/spool" "$dir/logs"
  chmod 700 "$dir"

  # munge: a fresh key, its own socket, pid, seed and log under the folder.
  mungekey --create --keyfile="$dir/munge.key" >/dev/null 2>&1 ||
    dd if=/dev/urandom of="$dir/munge.key" bs=1024 count=1 status=none
  chmod 400 "$dir/munge.key"
  munged --force --socket="$dir/munge.socket" --key-file="$dir/munge.key" --pid-file="$dir/munged.pid" \
    --seed-file="$dir/munged.seed" --log-file="$dir/logs/munged.log" ||
    fail "munged did not start: $(tail -3 "$dir/logs/munged.log" 2>/dev/null)"

  local node cpus memory
  node="$(hostname -s)"
  cpus="$(nproc)"
  memory=$(($(sed -n 's/^MemTotal: *\([0-9]*\) kB/\1/p' /proc/meminfo) * 9 / 10240))  # MB, 90 %
  cat >"$dir/slurm.conf" <<EOF
ClusterName=convscope-local
SlurmctldHost=$node(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$dir/munge.socket
SlurmctldPort=${SLURM_LOCAL_CTLD_PORT:-16817}
SlurmdPort=${SLURM_LOCAL_SLURMD_PORT:-16818}
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/logs/slurmctld.log
SlurmdLogFile=$dir/logs/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
MpiDefault=none
SlurmctldTimeout=30
SlurmdTimeout=30
InactiveLimit=0
MinJobAge=600
KillWait=5
Waittime=0
NodeName=$node NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$memory State=UNKNOWN
PartitionName=local Nodes=$node Default=YES MaxTime=INFINITE State=UP
EOF
  export SLURM_CONF="$dir/slurm.conf"
  slurmctld -f "$dir/slurm.conf" || fail "slurmctld did not start: $(tail -5 "$dir/logs/slurmctld.log" 2>/dev/null)"
  slurmd -f "$dir/slurm.conf" -N "$node" || fail "slurmd did not start: $(tail -5 "$dir/logs/slurmd.log" 2>/dev/null)"
  for _ in $(seq 1 60); do
    if sinfo -h -N -o '%t' 2>/dev/null | grep -qE '^(idle|mix|alloc)'; then
      say "node $node ($cpus CPUs) idle; $(env_lines)"
      return 0
    fi
    sleep 0.5
  done
  sinfo -N -l 2>&1 || true
  tail -5 "$dir/logs/slurmctld.log" "$dir/logs/slurmd.log" 2>/dev/null || true
  fail "the node did not become idle in 30 s (logs in $dir/logs)"
}

case "${1:-}" in
  start) start ;;
  stop) stop; say "stopped" ;;
  status) SLURM_CONF="$dir/slurm.conf" sinfo -N -l ;;
  env) env_lines ;;
  *) sed -n '2,16p' "$0"; exit 2 ;;
esac
