#!/usr/bin/env bash
# Builds the Debian package from ./build, installs it with apt, checks that the
# installed `trainplan` is on PATH and answers a real question, and removes it
# again. Needs root (or sudo) and a configured ./build (scripts/build.sh).
# scripts/test.sh runs it when TRAINPLAN_PACKAGE_TEST=1 (CI sets it).
set -euo pipefail
cd "$(dirname "$0")/.."
SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
rm -rf build/package
cpack -G DEB --config build/CPackConfig.cmake -B build/package >/dev/null
deb=$(ls build/package/trainplan_*.deb)
echo "[package] $deb: $(dpkg-deb -f "$deb" Depends | cut -c1-160)"
$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "./$deb" >/dev/null
trap '$SUDO env DEBIAN_FRONTEND=noninteractive apt-get remove -y -qq trainplan >/dev/null || true' EXIT
installed=$(command -v trainplan)
[ "$installed" = /usr/bin/trainplan ] || { echo "[package] trainplan on PATH is '$installed', not /usr/bin/trainplan"; exit 1; }
trainplan --version
out=$(cd /tmp && trainplan plan --samples "$OLDPWD/examples/lenet-mnist-samples.csv" --target 0.95 --deadline 10m --json)
echo "$out" | grep -q '"choice"' || { echo "[package] the installed trainplan did not plan: $out"; exit 1; }
[ -f /usr/share/doc/trainplan/README.md ] || { echo "[package] no README in /usr/share/doc/trainplan"; exit 1; }
echo "[package] ok: installed with apt, /usr/bin/trainplan planned, removed"
