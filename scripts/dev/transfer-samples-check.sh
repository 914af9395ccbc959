#!/usr/bin/env bash
# How far `trainplan transfer --samples` lands from the A100 traces: draws
# the paper plan's samples from each T4 trace, moves them to the A100 with no
# A100 step, and compares each configuration's predicted epoch time with the
# A100 trace's (step time interpolated in the batch at the same placement,
# times the steps of an epoch); beside it, the same configurations predicted
# from the whole T4 trace (`transfer --from`, syncs measured). Prints the MRE
# (equation 12) per network.
#   scripts/dev/transfer-samples-check.sh [DATA (../shared/data)] [SEED (1)]
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
data=${1:-$here/../shared/data}
seed=${2:-1}
tp=${TRAINPLAN:-$here/build/trainplan}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for n in bert cifar10 deepspeech2 imagenet ncf yolov3; do
  "$tp" sample --workload "$data/pollux-t4/$n" --plan paper --seed "$seed" -o "$out/$n-t4.csv" 2>/dev/null
  "$tp" transfer --samples "$out/$n-t4.csv" --from-gpu t4 --to-gpu a100-40gb -o "$out/$n-a100.csv" >/dev/null 2>&1
done
python3 - "$data/sia-a100" "$out" "$data/pollux-t4" "$tp" <<'PY'
import csv, sys, collections, subprocess
truth_root, out, t4_root, tp = sys.argv[1:5]

def trace(d):
    by = collections.defaultdict(list)
    for r in csv.DictReader(open(d + '/placements.csv')):
        by[r['placement']].append((float(r['local_bsz']), float(r['step_time'])))
    return {k: sorted(v) for k, v in by.items()}

def interp(series, b):
    if not series or b < series[0][0] - 1e-9 or b > series[-1][0] + 1e-9:
        return None
    for (b0, t0), (b1, t1) in zip(series, series[1:]):
        if b0 <= b <= b1:
            return t0 + (b - b0) / (b1 - b0) * (t1 - t0) if b1 > b0 else t0
    return series[0][1]

def placement(workers, nodes):
    base, extra = divmod(workers, nodes)
    return ''.join(str(base + (1 if i >= nodes - extra else 0)) for i in range(nodes))

for net in ['bert', 'cifar10', 'deepspeech2', 'imagenet', 'ncf', 'yolov3']:
    steps = trace(f'{truth_root}/{net}')
    lines = open(f'{out}/{net}-a100.csv').read().splitlines()
    n = int(next(x for x in lines[0].split() if x.startswith('dataset_size')).split('=')[1])
    rows, seen = [], set()
    for r in csv.DictReader(lines[1:]):
        key = (r['batch'], r['workers'], r['nodes'])
        if key in seen:
            continue
        seen.add(key)
        b, w = float(r['batch']), int(r['workers'])
        nodes = int(r['nodes']) if r['nodes'] else (w + 7) // 8
        t = interp(steps.get(placement(w, nodes), []), b)
        if t is not None:
            rows.append((placement(w, nodes), b, w, t * n / (b * w), float(r['epoch_time_s'])))
    # The whole T4 trace's prediction at the same placements and batches.
    p = subprocess.run([tp, 'transfer', '--from', f'{t4_root}/{net}', '--from-gpu', 't4', '--to-gpu', 'a100-40gb',
                        '--placements', ','.join(sorted({x[0] for x in rows})),
                        '--batches', ','.join('%g' % b for b in sorted({x[1] for x in rows})), '-o', f'{out}/{net}-trace.csv'],
                       capture_output=True, text=True, check=True)
    by_trace = {(r['placement'], float(r['local_bsz'])): float(r['step_time'])
                for r in csv.DictReader(open(f'{out}/{net}-trace.csv'))}
    num = den = num_trace = 0.0
    for pl, b, w, true, pred in rows:
        num += abs(pred - true)
        num_trace += abs(by_trace[(pl, b)] * n / (b * w) - true)
        den += true
    print(f'{net:12s} {len(rows):3d} of {len(seen)} configurations on the A100 trace: MRE from the samples '
          f'{100 * num / den:.1f}%, from the whole T4 trace {100 * num_trace / den:.1f}%')
PY
