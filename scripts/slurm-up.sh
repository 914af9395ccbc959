#!/usr/bin/env bash
# Starts a single-node Slurm on this machine (munged, slurmctld, slurmd) for
# `trainplan profile --launcher slurm` and its CI test. Idempotent: daemons
# that already run are left alone. The configuration follows
# ../shared/docs/PLATFORM-NOTES.md: no cgroup plugins (the sandbox has none),
# cons_tres on cores, and a partition with OverSubscribe=FORCE so that more
# ranks than cores can run. scripts/slurm-down.sh stops, by PID, only the
# daemons this script started (recorded in $STATE/started).
# Usage: scripts/slurm-up.sh            (as root, or with sudo available)
set -euo pipefail
SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
STATE=/run/trainplan-slurm
CONF=/etc/slurm/slurm.conf
MARK="# written by trainplan scripts/slurm-up.sh"
host=$(hostname -s)

for b in munged slurmctld slurmd sinfo srun; do
  command -v "$b" >/dev/null 2>&1 || [ -x "/usr/sbin/$b" ] || {
    echo "slurm-up: $b not found; install slurm-wlm and munge (scripts/install-deps.sh)" >&2; exit 1; }
done
$SUDO mkdir -p "$STATE" /var/spool/slurmctld /var/spool/slurmd /var/log/slurm /etc/slurm

alive() { [ -f "$1" ] && $SUDO kill -0 "$(cat "$1")" 2>/dev/null; }
started() { echo "$1 $2" | $SUDO tee -a "$STATE/started" >/dev/null; }

# 1. munge, as the munge user, with its directories owned by it.
if munge -n 2>/dev/null | unmunge >/dev/null 2>&1; then
  echo "slurm-up: munged already running"
else
  $SUDO mkdir -p /run/munge /var/lib/munge /var/log/munge
  $SUDO chown munge:munge /etc/munge /run/munge /var/lib/munge /var/log/munge
  $SUDO chmod 0700 /etc/munge
  if [ ! -f /etc/munge/munge.key ]; then
    $SUDO -u munge /usr/sbin/mungekey --create 2>/dev/null || $SUDO runuser -u munge -- /usr/sbin/mungekey --create
  fi
  $SUDO chown munge:munge /etc/munge/munge.key
  $SUDO chmod 0400 /etc/munge/munge.key
  $SUDO runuser -u munge -- /usr/sbin/munged
  for _ in $(seq 50); do munge -n 2>/dev/null | unmunge >/dev/null 2>&1 && break; sleep 0.1; done
  started munged /run/munge/munged.pid
  echo "slurm-up: started munged (pid $(cat /run/munge/munged.pid))"
fi

# 2. slurm.conf, unless someone else's is there.
if [ -f "$CONF" ] && ! grep -qF "$MARK" "$CONF"; then
  echo "slurm-up: $CONF exists and was not written by this script; using it as it is"
else
  mem=$(awk '/MemTotal/ {print int($2 / 1024 * 0.9)}' /proc/meminfo)
  $SUDO tee "$CONF" >/dev/null <<CONF
$MARK
ClusterName=trainplan
SlurmctldHost=$host
SlurmUser=root
AuthType=auth/munge
MpiDefault=none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
ReturnToService=2
StateSaveLocation=/var/spool/slurmctld
SlurmdSpoolDir=/var/spool/slurmd
SlurmctldPidFile=/run/slurmctld.pid
SlurmdPidFile=/run/slurmd.pid
SlurmctldLogFile=/var/log/slurm/slurmctld.log
SlurmdLogFile=/var/log/slurm/slurmd.log
NodeName=$host CPUs=$(nproc) RealMemory=$mem State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE
CONF
fi

# 3. the controller, then the node daemon.
if alive /run/slurmctld.pid; then
  echo "slurm-up: slurmctld already running"
else
  $SUDO /usr/sbin/slurmctld
  for _ in $(seq 50); do alive /run/slurmctld.pid && break; sleep 0.1; done
  started slurmctld /run/slurmctld.pid
  echo "slurm-up: started slurmctld (pid $(cat /run/slurmctld.pid))"
fi
if alive /run/slurmd.pid; then
  echo "slurm-up: slurmd already running"
else
  $SUDO /usr/sbin/slurmd
  for _ in $(seq 50); do alive /run/slurmd.pid && break; sleep 0.1; done
  started slurmd /run/slurmd.pid
  echo "slurm-up: started slurmd (pid $(cat /run/slurmd.pid))"
fi

# 4. wait for the node to be usable.
for _ in $(seq 60); do
  state=$(sinfo -h -n "$host" -o %T 2>/dev/null | head -1 || true)
  case "$state" in
    idle*|mixed*|allocated*)
      # sinfo may show the state recovered from the last run before slurmd has
      # registered; a real one-task job is the proof that jobs can start.
      if timeout 20 srun --quiet --ntasks=1 --time=1 true 2>/dev/null; then
        echo "slurm-up: node $host is $state and runs jobs"; exit 0
      fi ;;
    down*|drain*) $SUDO scontrol update nodename="$host" state=resume 2>/dev/null || true ;;
  esac
  sleep 0.5
done
echo "slurm-up: node $host did not become idle in 30 s (state: ${state:-unknown}); see /var/log/slurm/" >&2
exit 1
