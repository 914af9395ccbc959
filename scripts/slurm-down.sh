#!/usr/bin/env bash
# Stops, by PID, the daemons that scripts/slurm-up.sh started (slurmd, then
# slurmctld, then munged), and nothing else. Idempotent.
set -euo pipefail
SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
STATE=/run/trainplan-slurm
if [ ! -f "$STATE/started" ]; then
  echo "slurm-down: nothing started by slurm-up.sh"
  exit 0
fi
for daemon in slurmd slurmctld munged; do
  pidfile=$(awk -v d="$daemon" '$1 == d {print $2}' "$STATE/started" | tail -1)
  [ -n "$pidfile" ] || continue
  if [ -f "$pidfile" ] && pid=$(cat "$pidfile") && $SUDO kill -0 "$pid" 2>/dev/null; then
    $SUDO kill "$pid"
    for _ in $(seq 50); do $SUDO kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    if $SUDO kill -0 "$pid" 2>/dev/null; then $SUDO kill -9 "$pid"; fi
    echo "slurm-down: stopped $daemon (pid $pid)"
  else
    echo "slurm-down: $daemon is not running"
  fi
done
$SUDO rm -f "$STATE/started"
