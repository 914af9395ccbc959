#!/usr/bin/env bash
# Install, check the layering, build, start a single-node Slurm for the Slurm test, run every test;
# with TRAINPLAN_PACKAGE_TEST=1 (CI), also build, apt-install and remove the Debian package;
# with TRAINPLAN_SANITIZE_TEST=1 (CI), also run the parsers' fuzz tests under ASan and UBSan
# (scripts/sanitize.sh --fuzz-only, a second build in ./build-sanitize).
# Ends with how long each step took.
set -euo pipefail
cd "$(dirname "$0")/.."
steps=()
step_start=$SECONDS
step_done() {
  steps+=("$(printf '%-28s %5d s' "$1" $((SECONDS - step_start)))")
  step_start=$SECONDS
}
# Also when a step fails and set -e ends the script there.
report() {
  local rc=$?
  echo "[test] time by step:"
  [ ${#steps[@]} -gt 0 ] && printf '  %s\n' "${steps[@]}"
  echo "[test] exit $rc"
}
trap report EXIT
scripts/install-deps.sh
step_done install
scripts/check-layers.sh
scripts/build.sh
step_done build
slurm_started=0
if [ -x scripts/slurm-up.sh ] && scripts/slurm-up.sh; then
  slurm_started=1
  export TRAINPLAN_SLURM_TEST=1
else
  echo "[test] Slurm could not be started: the Slurm test will skip"
fi
step_done "start Slurm"
rc=0
# --timeout: a hung test fails by name instead of holding the run; the slowest takes under 30 s.
ctest --test-dir build --output-on-failure -j2 --timeout 600 || rc=$?
if [ $slurm_started -eq 1 ]; then scripts/slurm-down.sh || true; fi
step_done tests
if [ "${TRAINPLAN_PACKAGE_TEST:-0}" = 1 ]; then
  scripts/test-package.sh || rc=1
  step_done "Debian package"
fi
# The whole suite under the sanitizers compiles for most of an hour on two cores and ran past
# CI's limit (docs/lab/FUZZING.md): CI runs the fuzz tests there, scripts/sanitize.sh the rest.
if [ "${TRAINPLAN_SANITIZE_TEST:-0}" = 1 ]; then
  scripts/sanitize.sh --fuzz-only || rc=1
  step_done "sanitized fuzz tests"
fi
exit $rc
