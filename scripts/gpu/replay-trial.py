#!/usr/bin/env python3
"""Prints the recorded output of one trial from scripts/gpu/measure.sh's
timing.jsonl or trials.jsonl, so that `trainplan profile --cmd` can build a
sample store from what a GPU machine measured (scripts/gpu/import.sh).

  replay-trial.py FILE WORKLOAD BATCH EPOCHS [PASS]

EPOCHS 'time' picks a time trial (--time-only); PASS (1-based, default 1)
picks the n-th recording of that trial. Exits 1 when there is none.
"""
import json
import sys


def blocks(path):
    """Yields (trial header, output lines) in file order."""
    header, lines = None, []
    with open(path) as f:
        for raw in f:
            obj = json.loads(raw)
            if "trial" in obj:
                header, lines = obj["trial"], []
            elif "trial_end" in obj:
                if header is not None and obj["trial_end"]["rc"] == 0:
                    yield header, lines
                header = None
            elif header is not None:
                lines.append(raw.rstrip("\n"))


def main():
    path, workload, batch, epochs = sys.argv[1:5]
    wanted_pass = int(sys.argv[5]) if len(sys.argv) > 5 else 1
    time_only = epochs == "time"
    seen = 0
    for h, lines in blocks(path):
        if h["workload"] != workload or h["batch"] != int(batch):
            continue
        if ("--time-only" in h["flags"]) != time_only or (not time_only and h["epochs"] != int(epochs)):
            continue
        seen += 1
        if seen == wanted_pass:
            print("\n".join(lines))
            return 0
    print(f"no recording {wanted_pass} of {workload} b={batch} e={epochs} in {path}", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
