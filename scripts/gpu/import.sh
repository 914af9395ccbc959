#!/usr/bin/env bash
# Builds sample stores and CSVs from what scripts/gpu/measure.sh recorded on a
# GPU machine, by replaying each trial's recorded output through
# `trainplan profile --cmd ... --time-cmd ...`: the samples are made by the
# same code as a local profile (time trials first, epoch time = steps per
# epoch x median step time + overhead). The recording holds two passes of the
# time trials, so each pass becomes its own store (--time-repeats 1) and the
# two can be compared with `trainplan samples compare`.
#
#   scripts/gpu/import.sh RAW_DIR OUT_DIR "NVIDIA H200" [TRAINPLAN]
set -euo pipefail
raw=$(cd "$1" && pwd)
out=$2
hardware=$3
tp=${4:-./build/trainplan}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
batches=$(python3 -c "
import json
b = sorted({json.loads(l)['trial']['batch'] for l in open('$raw/trials.jsonl') if l.startswith('{\"trial\"')})
print(','.join(map(str, b)))")
for wl in lenet-mnist mlp-fashion; do
  for pass in 1 2; do
    store="$out/$wl-pass$pass.db"
    rm -f "$store" "$store-wal" "$store-shm"
    # Pass 2 holds the time trials only: the training trials were run once.
    epochs=$([ "$pass" = 1 ] && echo 1,5 || echo 1)
    "$tp" profile --quiet --store "$store" --hardware "$hardware" --name "$wl" --workers 1 --batches "$batches" --epochs "$epochs" \
      --cmd "$here/replay-trial.py $raw/trials.jsonl $wl {batch} {epochs}" \
      --time-cmd "$here/replay-trial.py $raw/timing.jsonl $wl {batch} time $pass" --time-repeats 1 \
      -o "$out/$wl-pass$pass.csv"
  done
done
