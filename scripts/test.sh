#!/usr/bin/env bash
# Install, check the layering, build, start a single-node Slurm for the Slurm test, run every test;
# with TRAINPLAN_PACKAGE_TEST=1 (CI), also build, apt-install and remove the Debian package;
# with TRAINPLAN_SANITIZE_TEST=1 (CI), also run every test again under ASan and UBSan
# (scripts/sanitize.sh, a second build in ./build-sanitize).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/check-layers.sh
scripts/build.sh
slurm_started=0
if [ -x scripts/slurm-up.sh ] && scripts/slurm-up.sh; then
  slurm_started=1
  export TRAINPLAN_SLURM_TEST=1
else
  echo "[test] Slurm could not be started: the Slurm test will skip"
fi
rc=0
ctest --test-dir build --output-on-failure -j2 || rc=$?
if [ $slurm_started -eq 1 ]; then scripts/slurm-down.sh || true; fi
if [ "${TRAINPLAN_PACKAGE_TEST:-0}" = 1 ]; then scripts/test-package.sh || rc=1; fi
# Under the sanitizers the per-layer MLP's training (LayerTimeEval, LayerTimeModel) took half
# the suite's test time (1,124 of 2,233 s; docs/lab/FUZZING.md): CI leaves those four tests to
# the normal run above, and scripts/sanitize.sh alone runs them too.
# The Slurm tests ran in the normal run; the sanitized one skips them (Slurm is down by then).
if [ "${TRAINPLAN_SANITIZE_TEST:-0}" = 1 ]; then
  TRAINPLAN_SLURM_TEST=0 scripts/sanitize.sh -E '^LayerTime(Eval|Model)\.' || rc=1
fi
exit $rc
