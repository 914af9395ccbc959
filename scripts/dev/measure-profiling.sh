#!/usr/bin/env bash
# Measures what issue "measurements you can trust" asks of profiling on this
# machine: two profiles of the same grid in a row agree per configuration
# (median and worst difference of epoch time), and the demo's best time model
# error and trial time over several fresh runs. Prints one summary line per
# figure; the stores and JSON are kept under OUT.
#   scripts/dev/measure-profiling.sh [OUT=/tmp/trainplan-noise] [RUNS=3] [BIN=./build/trainplan]
# PROFILE_ARGS (environment): more options for both profiles, e.g.
# PROFILE_ARGS="--time-repeats 3" for an A/B comparison.
set -euo pipefail
out=${1:-/tmp/trainplan-noise}
runs=${2:-3}
tp=$(realpath "${3:-./build/trainplan}")
rm -rf "$out" && mkdir -p "$out"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
for s in a b; do
  /usr/bin/time -f "%e" -o "$out/profile-$s.time" "$tp" profile --workload lenet-mnist --batches 32,64,128 \
    --workers 1,2 --epochs 1 --store "$out/$s.db" --quiet --json ${PROFILE_ARGS:-} > "$out/profile-$s.json"
done
"$tp" samples compare "$out/a.db" "$out/b.db" --json > "$out/compare.json"
python3 - "$out" <<'PY'
import json, sys
out = sys.argv[1]
c = json.load(open(f"{out}/compare.json"))
walls = [float(open(f"{out}/profile-{s}.time").read()) for s in "ab"]
print(f"two profiles: epoch time differs by {100*c['median_diff']:.1f}% at the median, "
      f"{100*c['max_diff']:.1f}% at worst over {c['configurations']} configurations "
      f"(profiles took {walls[0]:.0f} s and {walls[1]:.0f} s)")
PY
for i in $(seq 1 "$runs"); do
  d="$out/demo-$i"
  mkdir -p "$d"
  (cd "$d" && "$tp" demo --store demo.db -o demo.csv --plot none --json > demo.json 2> demo.err)
  "$tp" evaluate --samples "$d/demo.csv" --models all --json > "$d/evaluate.json" 2>/dev/null
  python3 - "$d" <<'PY'
import json, sqlite3, sys
d = sys.argv[1]
j = json.load(open(f"{d}/demo.json"))
walls = [w for (w,) in sqlite3.connect(f"{d}/demo.db").execute("select wall_s from trials")]
ev = next(iter(json.load(open(f"{d}/evaluate.json"))["datasets"].values()))
best = min((m["time"]["cv_mre"], name) for name, m in ev.items() if m["time"]["cv_mre"] is not None)
print(f"demo {d.rsplit('-',1)[1]}: time CV MRE {100*j['cv_mre']['time']:.1f}% ({j['time_model']}), best of all "
      f"time models {100*best[0]:.1f}% ({best[1]}); metric CV MRE {100*j['cv_mre']['metric']:.1f}%; "
      f"{len(walls)} trials took {sum(walls):.1f} s in all; choice b={j['batch']} r={j['workers']} e={j['epochs']}")
PY
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
