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
# The docs' own paths hold from the installed documentation folder.
for f in docs/USAGE.md docs/lab/RESULTS.md examples/lenet-mnist-samples.csv; do
  [ -f "/usr/share/doc/trainplan/$f" ] || { echo "[package] no $f in /usr/share/doc/trainplan"; exit 1; }
done
# The installed trainer finds its data outside the build tree: a small MNIST
# (96 training images, cut from the tree's) in the user's data directory, the
# first place it searches, is the one it trains on.
if [ -x /usr/bin/trainplan-train ]; then
  trainplan-datasets --help >/dev/null || { echo "[package] trainplan-datasets is not installed"; exit 1; }
  src=third_party/datasets/mnist
  if [ -f "$src/train-images-idx3-ubyte" ]; then
    xdg=$(mktemp -d); small="$xdg/trainplan/datasets/mnist"; mkdir -p "$small"
    cut_idx() {  # FILE KIND(1 labels, 3 images) N BYTES_PER_ITEM
      local header=$((4 + 4 * $2))
      { printf "\x00\x00\x08\x0$2\x00\x00\x00\\x$(printf %02x "$3")"
        head -c $((header + $3 * $4)) "$src/$1" | tail -c +9; } > "$small/$1"
    }
    cut_idx train-images-idx3-ubyte 3 96 784; cut_idx train-labels-idx1-ubyte 1 96 1
    cut_idx t10k-images-idx3-ubyte 3 32 784; cut_idx t10k-labels-idx1-ubyte 1 32 1
    out=$(cd /tmp && env -u TRAINPLAN_DATA_DIR XDG_DATA_HOME="$xdg" trainplan-train --workload lenet-mnist --batch 32 --epochs 1)
    rm -rf "$xdg"
    echo "$out" | grep -q '"train_samples":96' ||
      { echo "[package] the installed trainer did not train on the data in XDG_DATA_HOME: $out"; exit 1; }
    echo "[package] the installed trainer found its data in the user's data directory"
  fi
fi
echo "[package] ok: installed with apt, /usr/bin/trainplan planned, removed"
