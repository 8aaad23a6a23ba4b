#!/usr/bin/env bash
# A single-node Slurm cluster on this machine for the autograder's --slurm test: munged,
# slurmctld and slurmd on localhost, every file (config, key, state, logs, sockets) under DIR and
# every daemon started in the foreground by this script and stopped by it.
#
#   slurm_cluster.sh install      Debian's slurmctld, slurmd, slurm-client and munge when missing
#                                 (as root; exit 77 with the reason when they cannot be installed)
#   slurm_cluster.sh start DIR    writes DIR/slurm.conf, starts the daemons, waits for the node to
#                                 be idle; prints `export SLURM_CONF=...` for the client commands
#   slurm_cluster.sh stop DIR     stops every daemon it started (pid files in DIR), waits for them
set -euo pipefail

need=(slurmctld slurmd slurm-client munge)

installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }

cmd_install() {
  local missing=()
  for p in "${need[@]}"; do installed "$p" || missing+=("$p"); done
  [ ${#missing[@]} -eq 0 ] && return 0
  if [ "$(id -u)" -ne 0 ]; then
    echo "slurm_cluster: ${missing[*]} not installed and not root (sudo apt-get install -y ${missing[*]})" >&2
    exit 77
  fi
  export DEBIAN_FRONTEND=noninteractive
  # The package scripts must not start system-wide daemons: ours run from DIR only.
  local policy=/usr/sbin/policy-rc.d made_policy=0
  if [ ! -e "$policy" ]; then printf '#!/bin/sh\nexit 101\n' >"$policy"; chmod 755 "$policy"; made_policy=1; fi
  local rc=0
  { [ -n "$(ls -A /var/lib/apt/lists 2>/dev/null | grep -v lock)" ] || apt-get update -qq; } &&
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null || rc=$?
  [ "$made_policy" -eq 1 ] && rm -f "$policy"
  if [ "$rc" -ne 0 ]; then
    echo "slurm_cluster: apt-get install ${missing[*]} failed (exit $rc): no package source reachable?" >&2
    exit 77
  fi
}

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

cmd_start() {
  local dir=$1 host
  host=$(hostname -s)
  mkdir -p "$dir"/{state,spool,munge}
  dir=$(cd "$dir" && pwd)
  chmod 700 "$dir/munge"
  dd if=/dev/urandom of="$dir/munge/munge.key" bs=1024 count=1 status=none
  chmod 400 "$dir/munge/munge.key"
  cat >"$dir/slurm.conf" <<EOF
ClusterName=gpulabtest
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$(free_port)
SlurmdPort=$(free_port)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$dir/munge/munge.socket
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
ReturnToService=2
SlurmdTimeout=30
InactiveLimit=0
KillWait=5
NodeName=$host NodeAddr=127.0.0.1 CPUs=$(nproc) State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
  export SLURM_CONF=$dir/slurm.conf
  munged -f -F --socket="$dir/munge/munge.socket" --key-file="$dir/munge/munge.key" \
    --pid-file="$dir/munge/munged.pid" --log-file="$dir/munge/munged.log" --seed-file="$dir/munge/seed" \
    >/dev/null 2>&1 &
  echo $! >"$dir/munged.bgpid"
  for _ in $(seq 50); do [ -S "$dir/munge/munge.socket" ] && break; sleep 0.1; done
  slurmctld -D -f "$SLURM_CONF" >"$dir/slurmctld.out" 2>&1 &
  echo $! >"$dir/slurmctld.bgpid"
  slurmd -D -f "$SLURM_CONF" >"$dir/slurmd.out" 2>&1 &
  echo $! >"$dir/slurmd.bgpid"
  for _ in $(seq 120); do
    if sinfo -h -o %T 2>/dev/null | grep -q '^idle'; then echo "export SLURM_CONF=$SLURM_CONF"; return 0; fi
    sleep 0.5
  done
  echo "slurm_cluster: the node did not become idle in 60 s; logs:" >&2
  tail -n 20 "$dir"/slurmctld.log "$dir"/slurmd.log "$dir"/slurmctld.out "$dir"/slurmd.out "$dir"/munge/munged.log >&2 || true
  cmd_stop "$dir"
  exit 1
}

cmd_stop() {
  local dir=$1 pid
  # Jobs first (their slurmstepd outlives slurmd), then the daemons.
  if [ -f "$dir/slurmctld.bgpid" ] && kill -0 "$(cat "$dir/slurmctld.bgpid")" 2>/dev/null; then
    SLURM_CONF=$dir/slurm.conf scancel --user="$(id -un)" 2>/dev/null || true
    for _ in $(seq 50); do pgrep -f "slurmstepd.*" >/dev/null 2>&1 || break; sleep 0.1; done
  fi
  for d in slurmd slurmctld munged; do
    [ -f "$dir/$d.bgpid" ] || continue
    pid=$(cat "$dir/$d.bgpid")
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
    rm -f "$dir/$d.bgpid"
  done
}

case "${1:-}" in
  install) cmd_install ;;
  start) cmd_start "${2:?usage: slurm_cluster.sh start DIR}" ;;
  stop) cmd_stop "${2:?usage: slurm_cluster.sh stop DIR}" ;;
  *) echo "usage: slurm_cluster.sh install | start DIR | stop DIR" >&2; exit 2 ;;
esac
