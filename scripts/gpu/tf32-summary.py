#!/usr/bin/env python3
"""Summarises what tf32-bench.py and tf32-kernels.py measured (examples/h200-tf32/):
the whole-step time of each network and batch in the three math modes, and the
throughput of each network's matrix kernels in fp32 and TF32 with the TF32
kernel share, the figure GpuSpec::tf32_kernel_share takes:

    share = (TF32 throughput / TF32 peak) / (fp32 throughput / fp32 peak)

over each network's distinct kernels together (flop over summed time, the
faster of the two repeats of each kernel), and again with each convolution
counted as often as the network runs it (BERT's four products run once a
layer each, so its figure is the same).

  python3 tf32-summary.py DIR [--tf32-peak 494.7] [--fp32-peak 66.9]

DIR holds tf32-steps*.csv and tf32-kernels.csv. Peaks default to the
catalog's H200 (TFLOP/s, dense).
"""
import argparse
import collections
import csv
import glob
import importlib.util
import os
import statistics


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("--tf32-peak", type=float, default=494.7)
    ap.add_argument("--fp32-peak", type=float, default=66.9)
    a = ap.parse_args()

    steps = collections.defaultdict(list)
    for path in sorted(glob.glob(os.path.join(a.dir, "tf32-steps*.csv"))):
        for r in csv.DictReader(open(path)):
            if r["status"] == "ok":
                steps[(r["network"], int(r["batch"]), r["mode"])].append(float(r["median_ms"]))
    print("Whole training steps, median of the trials' medians, ms (spread: largest (max-min)/median of a mode)")
    print(f"| network | batch | fp32 | conv-tf32 | tf32 | fp32 / tf32 | spread |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for net, batch in sorted({(n, b) for n, b, _ in steps}):
        v = [steps[(net, batch, m)] for m in ("fp32", "conv-tf32", "tf32")]
        med = [statistics.median(x) for x in v]
        spread = max((max(x) - min(x)) / statistics.median(x) for x in v)
        print(f"| {net} | {batch} | {med[0]:.2f} | {med[1]:.2f} | {med[2]:.2f} | {med[0] / med[2]:.2f} | "
              f"{100 * spread:.1f}% |")

    kernels = collections.defaultdict(lambda: collections.defaultdict(list))
    flop = {}
    for r in csv.DictReader(open(os.path.join(a.dir, "tf32-kernels.csv"))):
        if r["tflops"] == "error":
            continue
        key = (r["network"], r["kernel"], r["shape"])
        flop[key] = int(r["flop"])
        kernels[key][r["mode"]].append(float(r["median_ms"]))
    totals = collections.defaultdict(lambda: [0.0, 0.0, 0.0, 0])
    for key, modes in kernels.items():
        t = totals[key[0]]
        t[0] += flop[key]
        t[1] += min(modes["fp32"])
        t[2] += min(modes["tf32"])
        t[3] += 1
    print()
    print(f"Matrix kernels, forward and both gradients (peaks: TF32 {a.tf32_peak:g}, fp32 {a.fp32_peak:g} TFLOP/s)")
    print("| network | kernels | fp32 TFLOP/s | share of fp32 peak | TF32 TFLOP/s | share of TF32 peak | "
          "TF32 / fp32 | TF32 kernel share |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    shares = []
    for net, (fl, f, t, n) in totals.items():
        fp32, tf32 = fl / f / 1e9, fl / t / 1e9
        share = (tf32 / a.tf32_peak) / (fp32 / a.fp32_peak)
        if net != "square":
            shares.append(share)
        print(f"| {net} | {n} | {fp32:.1f} | {fp32 / a.fp32_peak:.2f} | {tf32:.1f} | {tf32 / a.tf32_peak:.2f} | "
              f"{f / t:.2f} | {share:.3f} |")
    print()
    print(f"TF32 kernel share, median over the networks (square products left out): {statistics.median(shares):.3f}")

    # Each convolution as often as the network runs it: the lists tf32-kernels.py measured from.
    spec = importlib.util.spec_from_file_location("tf32_kernels", os.path.join(os.path.dirname(__file__), "tf32-kernels.py"))
    tk = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tk)
    by_shape = {(k[0], k[2]): k for k in kernels}  # (network, shape) -> the measured kernel's key
    weighted = []
    print()
    print("| network | convolutions run | TF32 / fp32 | TF32 kernel share, by occurrence |")
    print("|---|---:|---:|---:|")
    for net, convs in tk.network_convs(unique=False).items():
        fl = f = t = 0.0
        for _, *shape in convs:
            key = by_shape.get((net, "x".join(map(str, shape))))
            if key is None:
                continue
            fl += tk.conv_flop(*shape)
            f += min(kernels[key]["fp32"])
            t += min(kernels[key]["tf32"])
        if fl > 0:
            share = (fl / t / a.tf32_peak) / (fl / f / a.fp32_peak)
            weighted.append(share)
            print(f"| {net} | {len(convs)} | {f / t:.2f} | {share:.3f} |")
    if "bert" in totals:
        fl, f, t, _ = totals["bert"]
        weighted.append((fl / t / a.tf32_peak) / (fl / f / a.fp32_peak))
        print(f"| bert | 48 | {f / t:.2f} | {weighted[-1]:.3f} |")
    if weighted:
        print()
        print(f"TF32 kernel share by occurrence, median over the networks: {statistics.median(weighted):.3f}")


if __name__ == "__main__":
    main()
