#!/usr/bin/env python3
"""Re-run the README's quick result commands and compare their figures with the README's.

    scripts/dev/check-readme-figures.py [BUILD/trainplan] [DATA]

Each check reads a figure twice: from the README's results row (by a pattern on
that row's text) and from the output of the command the row names (by a pattern
on what it prints). Neither side is written here, so a model change that moves a
figure, or an edit that moves the README, shows up as a mismatch. Only the rows
whose commands take seconds to a minute are checked; the benchmarks that take
longer and the demo are left to their own commands. Needs ../shared/data (DATA); exits 0 when
every figure matches, 1 otherwise, 2 when the data or the binary is missing.
"""
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build", "trainplan")
DATA = sys.argv[2] if len(sys.argv) > 2 else os.path.join(ROOT, "..", "shared", "data")
L = os.path.join(DATA, "llm")

# (README row key, command, [(README pattern, output pattern)]): each pattern has
# one group, the figure as printed.
CHECKS = [
    ("Korthikanti's 8 runs", ["llm", "evaluate", "--korthikanti", L], [
        (r"mean ([\d.]+)%, worst", r"datasheet defaults.*?mean \|error\| ([\d.]+)%"),
        (r"worst ([\d.]+)% \[", r"datasheet defaults.*?mean \|error\| [\d.]+%, worst ([\d.]+)%"),
        (r"calibrated on 5, the other 3: ([\d.]+)%", r"20 draws\): mean \|error\| ([\d.]+)%"),
    ]),
    ("Megatron runs on 384", ["llm", "evaluate", "--scale", L], [
        (r"A100-80GB: datasheet ([\d.]+)%", r"a100-80gb: seconds.*?datasheet: mean \|error\| ([\d.]+)%"),
        (r"calibrated on 5 runs ([\d.]+)%", r"a100-80gb: seconds.*?calibrated on 5 drawn runs.*?mean \|error\| ([\d.]+)%"),
        (r"3 runs\): datasheet ([\d.]+)%", r"a100-40gb: seconds.*?datasheet: mean \|error\| ([\d.]+)%"),
    ]),
    ("NeMo on DGX H100", ["llm", "evaluate", "--nemo", L], [
        (r"datasheet ([\d.]+)%", r"h100: seconds.*?datasheet: mean \|error\| ([\d.]+)%"),
        (r"calibrated on 5 runs ([\d.]+)%", r"h100: seconds.*?calibrated on 5 drawn runs.*?mean \|error\| ([\d.]+)%"),
    ]),
    ("Megatron CI (312 runs)", ["llm", "evaluate", "--megatron-ci", L], [
        (r"memory ([\d.]+)%", r"\nall \(MAPE\)\s+\d+\s+\S+\s+\S+\s+\S+\s+([\d.]+)%"),
        (r"time ([\d.]+)% \[", r"\nall \(MAPE\)\s+\d+\s+\S+\s+([\d.]+)%"),
        (r"repeat only to ([\d.]+)%", r"median of the others: time MAPE ([\d.]+)%"),
        (r"fastest in (\d+) of \d+ groups", r"within 3% of the fastest in (\d+) of"),
        (r"fastest in \d+ of (\d+) groups", r"within 3% of the fastest in \d+ of (\d+) groups"),
    ]),
    ("CPU GPT trainer", ["llm", "evaluate", "--grid", os.path.join(ROOT, "examples/cpu-gpt/grid.csv"),
                         "--gpu", os.path.join(ROOT, "examples/cpu-gpt/cpu-2core.csv")], [
        (r"time ([\d.]+)% \[", r"^time: .*?leave one configuration out: MAPE ([\d.]+)%"),
        (r"memory ([\d.]+)% \[", r"^peak memory: .*?leave one configuration out: MAPE ([\d.]+)%"),
    ]),
    ("Step time on a GPU never profiled, T4 → A100", [
        "evaluate", "--transfer", "--from", os.path.join(DATA, "pollux-t4"), "--from-gpu", "t4",
        "--to", os.path.join(DATA, "sia-a100"), "--to-gpu", "a100-40gb", "--target-trials", "0"], [
        (r"no trial ([\d.]+)% \[", r"\nmedian\s+([\d.]+)%"),
    ]),
    ("The same, A100 → T4", [
        "evaluate", "--transfer", "--from", os.path.join(DATA, "sia-a100"), "--from-gpu", "a100-40gb",
        "--to", os.path.join(DATA, "pollux-t4"), "--to-gpu", "t4", "--target-trials", "0"], [
        (r"no trial ([\d.]+)% \(", r"\nmedian\s+([\d.]+)%"),
        (r"the datasheet ratio ([\d.]+)%", r"\nmedian\s+[\d.]+%\s+([\d.]+)%"),
    ]),
    ("A cluster of a GPU never profiled", ["bench", "simulate-gpu", "--data", DATA, "--seeds", "1-8"], [
        (r"mean JCT off by ([\d.]+)%", r"3 trials \(median.*?\n.*?median ([\d.]+)% /"),
        (r"GPU-hours by ([\d.]+)% at", r"3 trials \(median.*?\n.*?median [\d.]+% / ([\d.]+)%"),
        (r"with none ([\d.]+)% /", r"error against.*?moved, no trial .*?\n.*?median ([\d.]+)% /"),
        (r"unmoved ([\d.]+)% /", r"error against.*?steps unmoved .*?\n.*?median ([\d.]+)% /"),
    ]),
    ("A cluster of two GPU types", ["bench", "simulate-types", "--data", DATA, "--seeds", "1-8"], [
        (r"as Sia\) ([\d,]+) s mean JCT", r"\npollux\s+(\d+)\s"),
        (r"against ([\d,]+) s blind", r"\npollux-blind\s+(\d+)\s"),
        (r"blind to types \(([\d.]+)x median", r"\npollux-blind .*?%\s+([\d.]+)x"),
        (r"pollux's and coconfig's mean JCT within ([\d.]+)%", r"3 trials.*?\npollux\s+\d+ s\s+\S+%\s+\d+ s\s+[+-]?([\d.]+)%"),
        (r"and ([\d.]+)% at the median over 8 seeds", r"3 trials.*?\ncoconfig\s+\d+ s\s+\S+%\s+\d+ s\s+[+-]?([\d.]+)%"),
    ]),
    # bench simulate's mean row at a load: tiresias, optimus, pollux, coconfig, fifo (its default order).
    ("Simulator, Pollux's published JCT", ["bench", "simulate", "--data", DATA], [
        (r"Tiresias ([\d,]+) /", r"load 1\.0x: average.*?\nmean\s+(\d+) /"),
        (r"Optimus ([\d,]+) /", r"load 1\.0x: average.*?\nmean\s+\d+ /\s+\d+\s+(\d+) /"),
        (r"Pollux's objective ([\d,]+) /", r"load 1\.0x: average.*?\nmean(?:\s+\d+ /\s+\d+){2}\s+(\d+) /"),
    ]),
    ("Our scheduler (`coconfig`)", ["bench", "simulate", "--data", DATA], [
        (r"([\d.]+)x at 1\.0x load", r"load 1\.0x: average.*?coconfig / pollux \(ours\) = ([\d.]+)"),
        (r"([\d.]+)x at 1\.5x", r"load 1\.5x: average.*?coconfig / pollux \(ours\) = ([\d.]+)"),
        (r"([\d.]+)x at 2\.0x", r"load 2\.0x: average.*?coconfig / pollux \(ours\) = ([\d.]+)"),
        (r"at 0\.5x \(([\d.]+)x\)", r"load 0\.5x: average.*?coconfig / pollux \(ours\) = ([\d.]+)"),
    ]),
]


def decimals(figure):
    # The README may round what the command prints (20.8% for 20.77%).
    return len(figure.split(".")[1]) if "." in figure else 0


def number(figure):
    return float(figure.replace(",", ""))  # the README writes thousands as 2,822


def readme_row(text, key):
    rows = [l for l in text.splitlines() if l.startswith("|") and key in l.split("|")[1]]
    if len(rows) != 1:
        raise SystemExit(f"check-readme-figures: {len(rows)} README rows match '{key}' (want 1)")
    return rows[0]


def main():
    if not os.path.isdir(L):
        print(f"check-readme-figures: {DATA} has no llm/: the shared data is not here, nothing checked")
        return 2
    if not os.access(BIN, os.X_OK):
        print(f"check-readme-figures: no binary at {BIN} (build first, or give its path)")
        return 2
    readme = open(os.path.join(ROOT, "README.md"), encoding="utf-8").read()
    bad = 0
    printed_by = {}  # several rows read one command's output (bench simulate): run it once
    for key, args, pairs in CHECKS:
        row = readme_row(readme, key)
        if tuple(args) not in printed_by:
            out = subprocess.run([BIN] + args, capture_output=True, text=True, cwd=ROOT)
            printed_by[tuple(args)] = out.stdout + out.stderr
        printed = printed_by[tuple(args)]
        for readme_pat, out_pat in pairs:
            want = re.search(readme_pat, row)
            got = re.search(out_pat, printed, re.S | re.M)
            if not want or not got:
                print(f"MISSING  {key}: README /{readme_pat}/ {'found' if want else 'not found'}, "
                      f"output /{out_pat}/ {'found' if got else 'not found'}")
                bad += 1
            elif round(number(got.group(1)), decimals(want.group(1))) != number(want.group(1)):
                print(f"DIFFERS  {key}: README {want.group(1)}, `trainplan {' '.join(args)}` prints {got.group(1)}")
                bad += 1
            else:
                print(f"ok       {key}: {got.group(1)}")
    print(f"check-readme-figures: {bad} figure(s) differ or were not found")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
