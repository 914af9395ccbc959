#!/usr/bin/env bash
# Records the outputs of a fixed set of commands (plan, predict, evaluate,
# simulate and the benchmarks, point and at a confidence), or compares them with a
# recording, so that a refactoring can show it changed no number.
#
#   scripts/dev/compare-outputs.sh record DIR [TRAINPLAN]
#   scripts/dev/compare-outputs.sh compare DIR [TRAINPLAN]
#   scripts/dev/compare-outputs.sh against REV
#
# `against REV` builds the CLI of git revision REV in a temporary worktree,
# records its outputs, and compares ./build/trainplan with them.
#
# TRAINPLAN defaults to ./build/trainplan. The commands read ../shared/data
# (the published traces), so this runs only in a checkout that has them.
# Before comparing, fields that time the run itself are removed: JSON keys
# "seconds" or ending in _ms or _seconds, and "took N s" notes in text; the
# checkout's path to the data reads DATA.
# compare exits 1 and prints a diff when any output differs.
set -euo pipefail
here="$(cd "$(dirname "$0")/../.." && pwd)"
if [ "${1:-}" = against ]; then
  rev=${2:?a git revision}
  base=$(mktemp -d)
  git -C "$here" worktree add --detach "$base/src" "$rev" >/dev/null
  echo "[compare-outputs] building $rev's CLI in $base/src" >&2
  cmake -S "$base/src" -B "$base/build" -DCMAKE_BUILD_TYPE=Release -DTRAINPLAN_WITH_TORCH=OFF \
    -DTRAINPLAN_TESTS=OFF -DTRAINPLAN_BENCH=OFF -DTRAINPLAN_MICROBENCH=OFF >/dev/null
  cmake --build "$base/build" -j"$(nproc)" --target trainplan_cli >/dev/null
  rc=0
  "$0" record "$base/recorded" "$base/build/trainplan" &&
    "$0" compare "$base/recorded" "${3:-$here/build/trainplan}" || rc=$?
  git -C "$here" worktree remove --force "$base/src"
  rm -rf "$base"
  exit $rc
fi
mode=${1:?record, compare or against}; dir=${2:?output folder}
tp=$(realpath "${3:-$here/build/trainplan}")
data="$here/../shared/data"
[ -d "$data/pollux-t4" ] || { echo "compare-outputs: $data not found" >&2; exit 2; }
[ -x "$tp" ] || { echo "compare-outputs: $tp is not an executable" >&2; exit 2; }
mkdir -p "$dir"
dir=$(realpath "$dir")
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
cd "$here"
run() {  # run NAME ARGS...: the command's stdout into $work/NAME
  local name=$1; shift
  echo "[compare-outputs] $name: trainplan $*" >&2
  "$tp" "$@" > "$work/$name" 2> "$work/$name.err" || { echo "  exit $?" >> "$work/$name"; }
}
run plan plan --samples examples/lenet-mnist-samples.csv --target 0.95 --deadline 10m --max-workers 4 --json
run plan-confidence plan --samples examples/lenet-mnist-samples.csv --target 0.95 --deadline 10m --max-workers 4 \
  --confidence 0.9 --json
"$tp" sample --workload "$data/pollux-t4/imagenet" --plan paper --seed 3 -o "$work/imagenet-seed3.csv" \
  > "$work/sample" 2>&1
cp "$work/imagenet-seed3.csv" "$work/sample-csv"
run evaluate evaluate --samples "$work/imagenet-seed3.csv" --models all --cv 5 --json
run simulate simulate --workload "$data/workloads/pollux-1.0/workload-3.csv" \
  --policy fifo,tiresias,optimus,coconfig --json
run predict predict --samples examples/lenet-mnist-samples.csv --batch 64 --workers 2 --epochs 3 \
  --confidence 0.9 --json
run bench-coconfig bench coconfig --data "$data" --json
run bench-coconfig-confidence bench coconfig --data "$data" --confidence 0.9 --json
run bench-intervals bench intervals --data "$data" --json
run bench-simulate bench simulate --data "$data" --json
normalise() {
  sed -E -e 's/"[A-Za-z0-9_]*(_ms|_seconds|seconds)": *[-0-9.e+]+,?//g' \
         -e "s#$work#WORK#g" -e "s#$data#DATA#g" -e 's/took [0-9.]+ ?s//g' "$1"
}
status=0
for f in plan plan-confidence predict sample sample-csv evaluate simulate bench-coconfig \
    bench-coconfig-confidence bench-intervals bench-simulate; do
  normalise "$work/$f" > "$work/$f.norm"
  if [ "$mode" = record ]; then
    cp "$work/$f.norm" "$dir/$f"
  elif ! diff -q "$dir/$f" "$work/$f.norm" >/dev/null; then
    echo "DIFFERS: $f"; diff "$dir/$f" "$work/$f.norm" | head -20 || true; status=1
  else
    echo "same: $f"
  fi
done
[ "$mode" = record ] && echo "recorded in $dir"
exit $status
