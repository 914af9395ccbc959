#!/usr/bin/env python3
"""Measures how much of a GPU's TF32 tensor-core peak fp32 training of the six
reference networks (pollux-t4's and sia-a100's: ResNet-18 on CIFAR-10 shapes,
ResNet-50 on ImageNet shapes, BERT-base on SQuAD shapes, DeepSpeech2, YOLOv3's
Darknet-53, NCF) actually gets, per batch, on one GPU. The transfer model
(docs/TRANSFER.md) must decide what an Ampere-or-later GPU's fp32 convolutions
and dense layers run at; this measures it with the project's own code instead
of inferring it from another project's traces.

Each network is written here from its published architecture (no downloads:
the device machine has no network) and trained on random data already on the
GPU, so the step is the GPU's work plus the framework's launches, without a
data loader. Three math modes, alternated within each configuration so that
drift falls on all three alike:

  fp32       cudnn.allow_tf32 = False, cuda.matmul.allow_tf32 = False
  conv-tf32  convolutions and cuDNN RNNs on TF32 (PyTorch's default since 1.12)
  tf32       dense layers too (PyTorch 1.7 to 1.11's default)

  python3 tf32-bench.py --out DIR [--device cuda|cpu] [--budget-s 300] [--quick]

Writes DIR/tf32.csv, one row per (network, batch, mode, repeat), appended as
measured: the median, 10th and 90th percentile step time of --min-time-s of
steps after a warm-up, and the peak allocated memory. Stops starting
configurations once --budget-s has passed; a configuration that runs out of
memory is recorded as `oom`.
"""
import argparse
import csv
import os
import statistics
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


# --- ResNet (He et al. 2016); the CIFAR variant as in kuangliu/pytorch-cifar --------------------
class Basic(nn.Module):
    expansion = 1

    def __init__(self, cin, c, stride):
        super().__init__()
        self.c1 = nn.Conv2d(cin, c, 3, stride, 1, bias=False)
        self.b1 = nn.BatchNorm2d(c)
        self.c2 = nn.Conv2d(c, c, 3, 1, 1, bias=False)
        self.b2 = nn.BatchNorm2d(c)
        self.sc = nn.Sequential()
        if stride != 1 or cin != c:
            self.sc = nn.Sequential(nn.Conv2d(cin, c, 1, stride, bias=False), nn.BatchNorm2d(c))

    def forward(self, x):
        y = F.relu(self.b1(self.c1(x)))
        return F.relu(self.b2(self.c2(y)) + self.sc(x))


class Bottleneck(nn.Module):
    expansion = 4

    def __init__(self, cin, c, stride):
        super().__init__()
        self.c1 = nn.Conv2d(cin, c, 1, bias=False)
        self.b1 = nn.BatchNorm2d(c)
        self.c2 = nn.Conv2d(c, c, 3, stride, 1, bias=False)
        self.b2 = nn.BatchNorm2d(c)
        self.c3 = nn.Conv2d(c, 4 * c, 1, bias=False)
        self.b3 = nn.BatchNorm2d(4 * c)
        self.sc = nn.Sequential()
        if stride != 1 or cin != 4 * c:
            self.sc = nn.Sequential(nn.Conv2d(cin, 4 * c, 1, stride, bias=False), nn.BatchNorm2d(4 * c))

    def forward(self, x):
        y = F.relu(self.b1(self.c1(x)))
        y = F.relu(self.b2(self.c2(y)))
        return F.relu(self.b3(self.c3(y)) + self.sc(x))


class ResNet(nn.Module):
    def __init__(self, block, counts, classes, imagenet_stem):
        super().__init__()
        if imagenet_stem:
            self.stem = nn.Sequential(nn.Conv2d(3, 64, 7, 2, 3, bias=False), nn.BatchNorm2d(64), nn.ReLU(),
                                      nn.MaxPool2d(3, 2, 1))
        else:
            self.stem = nn.Sequential(nn.Conv2d(3, 64, 3, 1, 1, bias=False), nn.BatchNorm2d(64), nn.ReLU())
        layers, cin = [], 64
        for i, n in enumerate(counts):
            c = 64 * 2 ** i
            for j in range(n):
                layers.append(block(cin, c, 2 if (j == 0 and i > 0) else 1))
                cin = c * block.expansion
        self.body = nn.Sequential(*layers)
        self.fc = nn.Linear(cin, classes)

    def forward(self, x):
        y = self.body(self.stem(x))
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(y, 1), 1))


# --- BERT-base with a SQuAD span head (Devlin et al. 2019) -------------------------------------
class Bert(nn.Module):
    def __init__(self, layers=12, hidden=768, heads=12, ffn=3072, vocab=30522, seq=384):
        super().__init__()
        self.tok = nn.Embedding(vocab, hidden)
        self.pos = nn.Embedding(seq, hidden)
        self.norm = nn.LayerNorm(hidden)
        layer = nn.TransformerEncoderLayer(hidden, heads, ffn, dropout=0.1, activation="gelu", batch_first=True)
        self.enc = nn.TransformerEncoder(layer, layers)
        self.span = nn.Linear(hidden, 2)

    def forward(self, ids):
        pos = torch.arange(ids.shape[1], device=ids.device)
        return self.span(self.enc(self.norm(self.tok(ids) + self.pos(pos))))


# --- DeepSpeech2 as deepspeech.pytorch builds it (Amodei et al. 2016) --------------------------
class DeepSpeech2(nn.Module):
    def __init__(self, freq=161, hidden=1024, layers=5, classes=29):
        super().__init__()
        self.conv = nn.Sequential(
            nn.Conv2d(1, 32, (41, 11), (2, 2), (20, 5)), nn.BatchNorm2d(32), nn.Hardtanh(0, 20),
            nn.Conv2d(32, 32, (21, 11), (2, 1), (10, 5)), nn.BatchNorm2d(32), nn.Hardtanh(0, 20))
        f = (freq + 2 * 20 - 41) // 2 + 1
        f = (f + 2 * 10 - 21) // 2 + 1
        self.rnn = nn.LSTM(32 * f, hidden, layers, bidirectional=True, batch_first=True)
        self.fc = nn.Linear(2 * hidden, classes)

    def forward(self, x):  # x: batch, 1, freq, time
        y = self.conv(x)
        b, c, f, t = y.shape
        y, _ = self.rnn(y.reshape(b, c * f, t).transpose(1, 2))
        return self.fc(y).log_softmax(-1)


# --- YOLOv3's Darknet-53 with one detection scale (Redmon and Farhadi 2018) --------------------
def cbl(cin, cout, k, s=1):
    return nn.Sequential(nn.Conv2d(cin, cout, k, s, k // 2, bias=False), nn.BatchNorm2d(cout), nn.LeakyReLU(0.1))


class DarkRes(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.f = nn.Sequential(cbl(c, c // 2, 1), cbl(c // 2, c, 3))

    def forward(self, x):
        return x + self.f(x)


class Yolo(nn.Module):
    def __init__(self, classes=80):
        super().__init__()
        mods, c = [cbl(3, 32, 3)], 32
        for n in (1, 2, 8, 8, 4):
            mods.append(cbl(c, 2 * c, 3, 2))
            c *= 2
            mods += [DarkRes(c) for _ in range(n)]
        # the heads of the three scales hold about a third of YOLOv3's work; one head at the
        # coarsest scale with the same five-layer neck keeps the shape of the step
        mods += [cbl(c, c // 2, 1), cbl(c // 2, c, 3), cbl(c, c // 2, 1), cbl(c // 2, c, 3), cbl(c, c // 2, 1),
                 cbl(c // 2, c, 3), nn.Conv2d(c, 3 * (5 + classes), 1)]
        self.net = nn.Sequential(*mods)

    def forward(self, x):
        return self.net(x)


# --- NCF's NeuMF on MovieLens-20M sizes (He et al. 2017) ---------------------------------------
class NeuMF(nn.Module):
    def __init__(self, users=138493, items=26744, factors=64, mlp=(256, 128, 64)):
        super().__init__()
        self.gu, self.gi = nn.Embedding(users, factors), nn.Embedding(items, factors)
        self.mu, self.mi = nn.Embedding(users, mlp[0] // 2), nn.Embedding(items, mlp[0] // 2)
        layers = []
        for a, b in zip(mlp[:-1], mlp[1:]):
            layers += [nn.Linear(a, b), nn.ReLU()]
        self.mlp = nn.Sequential(*layers)
        self.out = nn.Linear(factors + mlp[-1], 1)

    def forward(self, uv):
        u, v = uv[:, 0], uv[:, 1]
        g = self.gu(u) * self.gi(v)
        m = self.mlp(torch.cat([self.mu(u), self.mi(v)], 1))
        return self.out(torch.cat([g, m], 1)).squeeze(1)


def make(name, batch, dev, quick):
    """Model, optimizer, one step's inputs and loss function for a network at a batch."""
    if name == "cifar10":
        m = ResNet(Basic, (2, 2, 2, 2), 10, False)
        x = torch.randn(batch, 3, 32, 32, device=dev)
        y = torch.randint(0, 10, (batch,), device=dev)
        loss = lambda out: F.cross_entropy(out, y)
        opt = lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9, weight_decay=5e-4)
    elif name == "imagenet":
        m = ResNet(Bottleneck, (3, 4, 6, 3), 1000, True)
        side = 64 if quick else 224
        x = torch.randn(batch, 3, side, side, device=dev)
        y = torch.randint(0, 1000, (batch,), device=dev)
        loss = lambda out: F.cross_entropy(out, y)
        opt = lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9, weight_decay=1e-4)
    elif name == "bert":
        seq = 64 if quick else 384
        m = Bert(layers=2 if quick else 12, seq=seq)
        x = torch.randint(0, 30522, (batch, seq), device=dev)
        s = torch.randint(0, seq, (batch,), device=dev)
        e = torch.randint(0, seq, (batch,), device=dev)
        loss = lambda out: (F.cross_entropy(out[..., 0], s) + F.cross_entropy(out[..., 1], e)) / 2
        opt = lambda p: torch.optim.AdamW(p, lr=3e-5)
    elif name == "deepspeech2":
        frames = 100 if quick else 600  # about 6 s of audio at 10 ms hops
        m = DeepSpeech2(hidden=64 if quick else 1024)
        x = torch.randn(batch, 1, 161, frames, device=dev)
        t_out = frames // 2
        targets = torch.randint(1, 29, (batch, t_out // 4), device=dev)
        in_len = torch.full((batch,), t_out, dtype=torch.long, device=dev)
        tg_len = torch.full((batch,), t_out // 4, dtype=torch.long, device=dev)
        loss = lambda out: F.ctc_loss(out.transpose(0, 1), targets, in_len, tg_len)
        opt = lambda p: torch.optim.SGD(p, lr=3e-4, momentum=0.9, nesterov=True)
    elif name == "yolov3":
        side = 96 if quick else 416
        m = Yolo()
        x = torch.randn(batch, 3, side, side, device=dev)
        loss = lambda out: out.float().pow(2).mean()
        opt = lambda p: torch.optim.SGD(p, lr=1e-3, momentum=0.9, weight_decay=5e-4)
    elif name == "ncf":
        m = NeuMF()
        x = torch.stack([torch.randint(0, 138493, (batch,), device=dev),
                         torch.randint(0, 26744, (batch,), device=dev)], 1)
        y = torch.randint(0, 2, (batch,), device=dev).float()
        loss = lambda out: F.binary_cross_entropy_with_logits(out, y)
        opt = lambda p: torch.optim.Adam(p, lr=1e-3)
    else:
        raise ValueError(name)
    m = m.to(dev).train()
    return m, opt(m.parameters()), x, loss


# The local batches pollux-t4 and sia-a100 measured, a spread of them.
BATCHES = {
    "cifar10": [32, 64, 128, 257, 513, 1024],
    "imagenet": [20, 40, 81, 163],
    "bert": [4, 8, 12],
    "deepspeech2": [10, 20, 40, 80],
    "yolov3": [4, 8, 16],
    "ncf": [256, 2051, 8207, 32768],
}
MODES = {"fp32": (False, False), "conv-tf32": (True, False), "tf32": (True, True)}


def set_mode(mode):
    conv, mm = MODES[mode]
    torch.backends.cudnn.allow_tf32 = conv
    torch.backends.cuda.matmul.allow_tf32 = mm


def sync(dev):
    if dev == "cuda":
        torch.cuda.synchronize()


def time_steps(step, dev, warmup, min_time, min_steps, max_steps):
    for _ in range(warmup):
        step()
    sync(dev)
    times = []
    start = time.perf_counter()
    while len(times) < max_steps and (len(times) < min_steps or time.perf_counter() - start < min_time):
        t0 = time.perf_counter()
        step()
        sync(dev)
        times.append(time.perf_counter() - t0)
    return times


def schedule(networks, quick):
    """(network, batch) pairs, the networks taken in turn and each one's smallest and largest batch
    first, so that a run stopped by its budget has the ends of every network's range."""
    orders = []
    for net in networks:
        b = BATCHES[net][:1] if quick else BATCHES[net]
        orders.append([(net, x) for x in ([b[0], b[-1]] + b[1:-1] if len(b) > 1 else b)])
    out = []
    for i in range(max(map(len, orders))):
        out += [o[i] for o in orders if i < len(o)]
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--budget-s", type=float, default=300)
    ap.add_argument("--min-time-s", type=float, default=0.4)
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--networks", default=",".join(BATCHES))
    ap.add_argument("--quick", action="store_true")
    a = ap.parse_args()
    dev = a.device
    torch.backends.cudnn.benchmark = True  # every reference trainer turns it on
    os.makedirs(a.out, exist_ok=True)
    path = os.path.join(a.out, "tf32.csv")
    new = not os.path.exists(path)
    f = open(path, "a", newline="")
    w = csv.writer(f)
    if new:
        w.writerow(["network", "batch", "mode", "repeat", "steps", "median_ms", "p10_ms", "p90_ms", "peak_gib",
                    "status"])
    t_start = time.perf_counter()
    for net, batch in schedule(a.networks.split(","), a.quick):
        if time.perf_counter() - t_start > a.budget_s:
            print(f"budget spent: {net} b={batch} and later not measured", file=sys.stderr)
            f.close()
            return
        torch.manual_seed(0)
        try:
            m, opt, x, loss = make(net, batch, dev, a.quick)

            def step():
                opt.zero_grad(set_to_none=True)
                loss(m(x)).backward()
                opt.step()

            for rep in range(a.repeats):
                for mode in MODES:
                    set_mode(mode)
                    if dev == "cuda":
                        torch.cuda.reset_peak_memory_stats()
                    ts = time_steps(step, dev, 1 if a.quick else 5, 0 if a.quick else a.min_time_s,
                                    2 if a.quick else 10, 3 if a.quick else 200)
                    q = statistics.quantiles(ts, n=10) if len(ts) >= 2 else [ts[0]] * 9
                    peak = torch.cuda.max_memory_allocated() / 2**30 if dev == "cuda" else 0
                    w.writerow([net, batch, mode, rep, len(ts), f"{statistics.median(ts) * 1e3:.4f}",
                                f"{q[0] * 1e3:.4f}", f"{q[-1] * 1e3:.4f}", f"{peak:.2f}", "ok"])
                    f.flush()
            print(f"[{time.perf_counter() - t_start:.0f}s] {net} b={batch} done", file=sys.stderr)
        except torch.cuda.OutOfMemoryError:
            w.writerow([net, batch, "", 0, 0, "", "", "", "", "oom"])
            f.flush()
        except Exception as e:  # one network's failure must not cost the others' measurements
            print(f"{net} b={batch} failed: {e!r}", file=sys.stderr)
            w.writerow([net, batch, "", 0, 0, "", "", "", "", "error"])
            f.flush()
        finally:
            m = opt = x = loss = None
            if dev == "cuda":
                torch.cuda.empty_cache()
    f.close()


if __name__ == "__main__":
    main()
