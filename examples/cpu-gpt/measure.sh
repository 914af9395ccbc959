#!/bin/bash
# Measures the CPU GPT grid of examples/cpu-gpt/README.md with trainplan-train
# directly (one process per rank over loopback Gloo) and writes it in the
# shape `trainplan llm predict --calibrate` reads. `trainplan llm profile`
# runs the same grid from a command template; this script needs only the
# trainer. Usage: measure.sh [OUT.csv] (default grid-measure.csv); TRAIN=path/to/trainplan-train.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
TRAIN=${TRAIN:-$here/../../build/trainplan-train}
OUT=${1:-grid-measure.csv}
LAYERS=4 HIDDEN=128 HEADS=4 SEQ=64 VOCAB=256 GLOBAL=16
# tp pp dp micro_batch
GRID=${GRID:-"1 1 1 1;1 1 1 2;1 1 1 4;1 1 1 8;2 1 1 1;2 1 1 2;2 1 1 4;2 1 1 8;1 2 1 1;1 2 1 2;1 2 1 4;1 2 1 8;1 1 2 1;1 1 2 2;1 1 2 4;1 1 2 8;2 2 1 2;2 2 1 4;2 1 2 2;2 1 2 4;1 2 2 2;1 2 2 4;1 4 1 2;1 4 1 4"}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "gpus,global_batch,micro_batch,hidden,heads,layers,seq,vocab,tied_embeddings,tp,dp,pp,precision,iteration_time_s,memory_gib,ci95_low_s,ci95_high_s,iterations_timed,peak_rss_gib,load_avg" > "$OUT"
port=29700
IFS=';' read -ra configs <<< "$GRID"
for c in "${configs[@]}"; do
  read -r tp pp dp mb <<< "$c"
  w=$((tp * pp * dp)); port=$((port + 1))
  args="--workload gpt --tp $tp --pp $pp --dp $dp --micro-batch $mb --global-batch $GLOBAL --layers $LAYERS --hidden $HIDDEN
        --heads $HEADS --seq $SEQ --vocab $VOCAB --time-only --warmup-iterations 3 --min-iterations 10 --max-iterations 30
        --step-ci 0.02 --master-port $port"
  pids=()
  for ((k = 1; k < w; k++)); do "$TRAIN" $args --rank $k > /dev/null 2> "$tmp/err$k" & pids+=($!); done
  "$TRAIN" $args --rank 0 > "$tmp/out" 2> "$tmp/err0" || { cat "$tmp"/err*; exit 1; }
  for p in "${pids[@]}"; do wait "$p"; done
  load=$(cut -d' ' -f1 /proc/loadavg)
  python3 - "$tmp/out" "$w" "$load" >> "$OUT" <<'PY'
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
e = [x for x in ev if x["event"] == "iteration_timing"][-1]
g = 2.0 ** 30
print(f'{sys.argv[2]},{e["global_batch"]},{e["micro_batch"]},{e["hidden"]},{e["heads"]},{e["layers"]},{e["seq"]},'
      f'{e["vocab"]},false,{e["tp"]},{e["dp"]},{e["pp"]},fp32,{e["iteration_time_s"]:.6g},{e["peak_memory_bytes"] / g:.6g},'
      f'{e["ci95"][0]:.6g},{e["ci95"][1]:.6g},{e["iterations_timed"]},{max(e["peak_rss_bytes_per_rank"]) / g:.6g},'
      f'{sys.argv[3]}')
PY
  tail -1 "$OUT"
done
