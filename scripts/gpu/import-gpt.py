#!/usr/bin/env python3
"""Makes a grid CSV in `trainplan llm predict`'s shape from the GPT time
trials that scripts/gpu/measure.sh (SUITE=gpt) recorded: one row per trial
that printed an iteration_timing line, with the trainer's median iteration
time (or its 10th percentile) and its peak allocated memory, so that
`trainplan llm evaluate --grid` and `llm predict --calibrate` read it as
they read `trainplan llm profile`'s output.

    scripts/gpu/import-gpt.py RAW.jsonl [--statistic median|p10] > grid.csv

Trials that failed (no iteration_timing line) are listed on stderr. The
trainer's bf16 mode keeps fp32 weights, gradients and Adam moments and
computes in bf16 (PyTorch AMP's layout), the planner's amp-fp32-master;
fp32 trials are fp32. The trainer has no dropout (dropout false) and
unfused attention (no flash_attention column: false)."""
import argparse
import csv
import json
import sys

COLUMNS = ["gpus", "global_batch", "micro_batch", "hidden", "heads", "layers", "seq", "vocab",
           "tied_embeddings", "dropout", "tp", "dp", "pp", "precision", "iteration_time_s", "memory_gib",
           "iteration_time_spread", "iterations_timed"]


def trials(path):
    """(header, events) per framed trial."""
    cur = None
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line.startswith("{"):
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as e:
                sys.exit(f"{path}:{n}: not JSON: {e}")
            if "trial" in obj:
                cur = (obj["trial"], [], n)
            elif "trial_end" in obj:
                if cur:
                    yield cur[0], cur[1], cur[2], obj["trial_end"]
                cur = None
            elif cur is not None:
                cur[1].append(obj)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("raw")
    ap.add_argument("--statistic", choices=["median", "p10"], default="median")
    a = ap.parse_args()
    w = csv.writer(sys.stdout, lineterminator="\n")
    w.writerow(COLUMNS)
    for head, events, line, end in trials(a.raw):
        timing = [e for e in events if e.get("event") == "iteration_timing"]
        if not timing:
            print(f"{a.raw}:{line}: no iteration_timing (exit {end.get('rc')}): {head.get('flags')}", file=sys.stderr)
            continue
        e = timing[-1]
        t = e["iteration_time_s"] if a.statistic == "median" else e["iteration_time_p10_s"]
        peak = e.get("peak_memory_bytes", -1)
        lo, hi = e["ci95"]
        precision = "amp-fp32-master" if e.get("precision") == "bf16" else "fp32"
        w.writerow([e["tp"] * e["pp"] * e["dp"], e["global_batch"], e["micro_batch"], e["hidden"], e["heads"],
                    e["layers"], e["seq"], e["vocab"], "false", "false", e["tp"], e["dp"], e["pp"], precision,
                    f"{t:.6g}", f"{peak / 2**30:.6g}" if peak >= 0 else "",
                    f"{(hi - lo) / 2 / e['iteration_time_s']:.4g}", e["iterations_timed"]])


if __name__ == "__main__":
    main()
