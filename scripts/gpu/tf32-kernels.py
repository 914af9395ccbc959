#!/usr/bin/env python3
"""Measures the throughput of the reference networks' matrix kernels in fp32 on
the CUDA cores and in TF32 on the tensor cores, one kernel at a time, so that
the share of the TF32 peak a convolution or dense layer reaches is known
without the memory-bound work around it (tf32-bench.py times whole steps,
where batch norm, activations and the optimizer dilute the ratio).

Kernels: every distinct convolution of ResNet-18 on CIFAR shapes (batch 1024),
ResNet-50 at 224 (batch 163) and Darknet-53 at 416 (batch 16), forward, input
gradient and weight gradient together; BERT-base's four dense products at
sequence 384 and batch 12, forward and both gradients; square products of 1024
to 8192. Each is timed with CUDA events over at least --min-time-s after a
warm-up, in both modes alternated, twice.

  python3 tf32-kernels.py --out DIR [--device cuda|cpu] [--budget-s 150] [--quick]

Writes DIR/tf32-kernels.csv: network, kernel, shape, flop (per call, forward
and backward), mode, repeat, calls, median_ms, tflops.
"""
import argparse
import csv
import os
import statistics
import sys
import time

# torch is imported where kernels run, so that tf32-summary.py can read the
# networks' convolution lists on a machine without it.


def resnet_convs(basic, batch, side, counts, imagenet_stem, unique=True):
    """(name, N, Cin, H, W, Cout, k, stride) of a ResNet's convolutions in order; with unique, each
    shape once."""
    out = []
    if imagenet_stem:
        out.append(("stem", batch, 3, side, side, 64, 7, 2))
        h = side // 4
    else:
        out.append(("stem", batch, 3, side, side, 64, 3, 1))
        h = side
    cin = 64
    for i, n in enumerate(counts):
        c = 64 * 2 ** i
        for j in range(n):
            s = 2 if (j == 0 and i > 0) else 1
            if basic:
                out.append((f"l{i}.c1", batch, cin, h, h, c, 3, s))
                h2 = h // s
                out.append((f"l{i}.c2", batch, c, h2, h2, c, 3, 1))
                if s != 1 or cin != c:
                    out.append((f"l{i}.sc", batch, cin, h, h, c, 1, s))
                cin, h = c, h2
            else:
                out.append((f"l{i}.c1", batch, cin, h, h, c, 1, 1))
                out.append((f"l{i}.c2", batch, c, h, h, c, 3, s))
                h2 = h // s
                out.append((f"l{i}.c3", batch, c, h2, h2, 4 * c, 1, 1))
                if s != 1 or cin != 4 * c:
                    out.append((f"l{i}.sc", batch, cin, h, h, 4 * c, 1, s))
                cin, h = 4 * c, h2
    if not unique:
        return out
    seen, once = set(), []
    for k in out:
        if k[1:] not in seen:
            seen.add(k[1:])
            once.append(k)
    return once


def darknet_convs(batch, side, unique=True):
    """Darknet-53's convolutions, as resnet_convs gives them (the one-head neck left out)."""
    out, c, h = [("stem", batch, 3, side, side, 32, 3, 1)], 32, side
    for i, n in enumerate((1, 2, 8, 8, 4)):
        out.append((f"d{i}.down", batch, c, h, h, 2 * c, 3, 2))
        c, h = 2 * c, h // 2
        for _ in range(1 if unique else n):
            out.append((f"d{i}.r1", batch, c, h, h, c // 2, 1, 1))
            out.append((f"d{i}.r3", batch, c // 2, h, h, c, 3, 1))
    return out


# The networks' convolutions at the batches measured: network -> list, each shape once or in order.
def network_convs(quick=False, unique=True):
    return {"cifar10": resnet_convs(True, 8 if quick else 1024, 32, (2, 2, 2, 2), False, unique),
            "imagenet": resnet_convs(False, 2 if quick else 163, 64 if quick else 224, (3, 4, 6, 3), True, unique),
            "yolov3": darknet_convs(2 if quick else 16, 64 if quick else 416, unique)}


BERT_DENSE = (("qkv", 768, 2304), ("proj", 768, 768), ("ffn1", 768, 3072), ("ffn2", 3072, 768))


def conv_flop(n, cin, h, w, cout, k, s):
    ho, wo = (h + 2 * (k // 2) - k) // s + 1, (w + 2 * (k // 2) - k) // s + 1
    return 3 * 2 * n * cout * ho * wo * cin * k * k  # forward, input gradient, weight gradient


def conv_call(n, cin, h, w, cout, k, s, dev):
    import torch
    import torch.nn.functional as F
    x = torch.randn(n, cin, h, w, device=dev, requires_grad=True)
    wt = torch.randn(cout, cin, k, k, device=dev, requires_grad=True)
    g = None

    def call():
        nonlocal g
        y = F.conv2d(x, wt, None, s, k // 2)
        if g is None:
            g = torch.randn_like(y)
        torch.autograd.grad(y, (x, wt), g)
    return call


def linear_call(m, k, n, dev):
    import torch
    import torch.nn.functional as F
    x = torch.randn(m, k, device=dev, requires_grad=True)
    w = torch.randn(n, k, device=dev, requires_grad=True)
    g = torch.randn(m, n, device=dev)

    def call():
        y = F.linear(x, w)
        torch.autograd.grad(y, (x, w), g)
    return call


def timed(call, dev, min_time, warmup):
    import torch
    for _ in range(warmup):
        call()
    if dev != "cuda":
        t0 = time.perf_counter()
        call()
        return 1, (time.perf_counter() - t0) * 1e3
    torch.cuda.synchronize()
    times = []
    start = time.perf_counter()
    while len(times) < 5 or (time.perf_counter() - start < min_time and len(times) < 500):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        call()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b))
    return len(times), statistics.median(times)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--budget-s", type=float, default=150)
    ap.add_argument("--min-time-s", type=float, default=0.15)
    ap.add_argument("--quick", action="store_true")
    a = ap.parse_args()
    import torch
    dev, q = a.device, a.quick
    torch.backends.cudnn.benchmark = True
    kernels = []  # (network, name, shape text, flop, call factory)
    for net, convs in network_convs(q).items():
        for name, *shape in convs:
            kernels.append((net, name, "x".join(map(str, shape)), conv_flop(*shape),
                            lambda shape=shape: conv_call(*shape, dev)))
    tokens = 64 if q else 12 * 384
    for name, k, n in BERT_DENSE:
        kernels.append(("bert", name, f"{tokens}x{k}x{n}", 3 * 2 * tokens * k * n,
                        lambda k=k, n=n: linear_call(tokens, k, n, dev)))
    for s in ((256,) if q else (1024, 2048, 4096, 8192)):
        kernels.append(("square", f"gemm{s}", f"{s}x{s}x{s}", 3 * 2 * s ** 3, lambda s=s: linear_call(s, s, s, dev)))
    os.makedirs(a.out, exist_ok=True)
    path = os.path.join(a.out, "tf32-kernels.csv")
    new = not os.path.exists(path)
    f = open(path, "a", newline="")
    w = csv.writer(f)
    if new:
        w.writerow(["network", "kernel", "shape", "flop", "mode", "repeat", "calls", "median_ms", "tflops"])
    t_start = time.perf_counter()
    for net, name, shape, flop, factory in kernels:
        if time.perf_counter() - t_start > a.budget_s:
            print(f"budget spent: {net} {name} and later not measured", file=sys.stderr)
            break
        try:
            call = factory()
            for rep in range(2):
                for mode, tf32 in (("fp32", False), ("tf32", True)):
                    torch.backends.cudnn.allow_tf32 = torch.backends.cuda.matmul.allow_tf32 = tf32
                    calls, ms = timed(call, dev, 0 if q else a.min_time_s, 1 if q else 3)
                    w.writerow([net, name, shape, flop, mode, rep, calls, f"{ms:.4f}", f"{flop / ms / 1e9:.2f}"])
                    f.flush()
        except Exception as e:  # one kernel's failure must not cost the others
            print(f"{net} {name} failed: {e!r}", file=sys.stderr)
            w.writerow([net, name, shape, flop, "", 0, 0, "", "error"])
            f.flush()
        finally:
            call = None
            if dev == "cuda":
                torch.cuda.empty_cache()
    print(f"[{time.perf_counter() - t_start:.0f}s] {len(kernels)} kernels", file=sys.stderr)
    f.close()


if __name__ == "__main__":
    main()
