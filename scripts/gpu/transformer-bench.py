#!/usr/bin/env python3
"""Measures Megatron-style GPT training iterations on one GPU: time per phase
and peak memory, for the transformer planner's validation (docs/LLM.md, "The project's H100 runs").

Each configuration builds a decoder-only transformer (pre-norm; GPT: LayerNorm,
GELU MLP, learned positions; llama: RMSNorm, SwiGLU, grouped-query attention,
no position table since rotary embeddings cost no parameters and little time),
trains it on random tokens for a few iterations with mixed precision as
PyTorch's AMP does it (fp32 weights, gradients and Adam states, bf16 autocast,
fused AdamW), and records the median iteration time and its spread, the
forward, backward and optimizer times, the static memory (weights, gradients,
optimizer states) and the peak memory the allocator saw. A configuration that
runs out of memory is recorded as `oom`, with the memory it had reached.

Recomputation: `none`, or `full` (every layer's activations recomputed in the
backward pass, torch.utils.checkpoint, keeping only each layer's input).

  python3 transformer-bench.py --out DIR [--device cuda|cpu] [--budget-s 240] [--quick]

Writes DIR/transformer.csv (one row per configuration, appended as measured)
and DIR/gemm.csv (matmul throughput by shape, bf16 and fp32). Stops starting
configurations once --budget-s has passed.
"""
import argparse
import csv
import math
import os
import statistics
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.utils.checkpoint as cp


class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        h, ffn = c["hidden"], c["ffn_hidden"]
        self.heads, self.kv_heads = c["heads"], c["kv_heads"]
        self.head_dim = h // self.heads
        norm = nn.LayerNorm if c["arch"] == "gpt" else RMSNorm
        self.norm1, self.norm2 = norm(h), norm(h)
        self.qkv = nn.Linear(h, (self.heads + 2 * self.kv_heads) * self.head_dim, bias=c["arch"] == "gpt")
        self.proj = nn.Linear(h, h, bias=c["arch"] == "gpt")
        self.swiglu = c["arch"] == "llama"
        self.up = nn.Linear(h, (2 if self.swiglu else 1) * ffn, bias=not self.swiglu)
        self.down = nn.Linear(ffn, h, bias=not self.swiglu)

    def attention(self, x):
        b, s, _ = x.shape
        q, k, v = self.qkv(x).split(
            [self.heads * self.head_dim, self.kv_heads * self.head_dim, self.kv_heads * self.head_dim], dim=-1)
        q = q.view(b, s, self.heads, self.head_dim).transpose(1, 2)
        k = k.view(b, s, self.kv_heads, self.head_dim).transpose(1, 2)
        v = v.view(b, s, self.kv_heads, self.head_dim).transpose(1, 2)
        if self.kv_heads != self.heads:
            rep = self.heads // self.kv_heads
            k, v = k.repeat_interleave(rep, dim=1), v.repeat_interleave(rep, dim=1)
        if hasattr(F, "scaled_dot_product_attention"):
            o = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        else:  # older PyTorch (CPU rehearsal): the explicit softmax
            mask = torch.ones(s, s, dtype=torch.bool, device=x.device).triu(1)
            a = (q @ k.transpose(-1, -2)) / math.sqrt(self.head_dim)
            o = a.masked_fill(mask, float("-inf")).softmax(-1) @ v
        return self.proj(o.transpose(1, 2).reshape(b, s, -1))

    def mlp(self, x):
        u = self.up(x)
        if self.swiglu:
            g, u = u.chunk(2, dim=-1)
            return self.down(F.silu(g) * u)
        return self.down(F.gelu(u, approximate="tanh"))

    def forward(self, x):
        x = x + self.attention(self.norm1(x))
        return x + self.mlp(self.norm2(x))


class RMSNorm(nn.Module):
    def __init__(self, h, eps=1e-5):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(h))
        self.eps = eps

    def forward(self, x):
        return x * torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True) + self.eps).to(x.dtype) * self.weight


class Decoder(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.embed = nn.Embedding(c["vocab"], c["hidden"])
        self.pos = nn.Embedding(c["seq_len"], c["hidden"]) if c["arch"] == "gpt" else None
        self.blocks = nn.ModuleList(Block(c) for _ in range(c["layers"]))
        self.norm = nn.LayerNorm(c["hidden"]) if c["arch"] == "gpt" else RMSNorm(c["hidden"])
        self.full_recompute = c["recompute"] == "full"

    def forward(self, tokens, labels):
        x = self.embed(tokens)
        if self.pos is not None:
            x = x + self.pos.weight[: tokens.shape[1]]
        for blk in self.blocks:
            x = cp.checkpoint(blk, x, use_reentrant=False) if self.full_recompute else blk(x)
        logits = F.linear(self.norm(x), self.embed.weight)  # tied output layer
        return F.cross_entropy(logits.float().reshape(-1, logits.shape[-1]), labels.reshape(-1))


# Published shapes (vocabularies padded to a multiple of 128, as Megatron does):
# GPT-3 sizes from Brown et al. 2020 table 2.1 (heads chosen to divide the
# hidden size with head dimension 64-128); llama-3.2-1b from Meta's model card.
MODELS = {
    "gpt-125m": dict(arch="gpt", layers=12, hidden=768, heads=12, kv_heads=12, ffn_hidden=3072, vocab=50304),
    "gpt-350m": dict(arch="gpt", layers=24, hidden=1024, heads=16, kv_heads=16, ffn_hidden=4096, vocab=50304),
    "gpt-760m": dict(arch="gpt", layers=24, hidden=1536, heads=16, kv_heads=16, ffn_hidden=6144, vocab=50304),
    "gpt-1.3b": dict(arch="gpt", layers=24, hidden=2048, heads=16, kv_heads=16, ffn_hidden=8192, vocab=50304),
    "gpt-2.7b": dict(arch="gpt", layers=32, hidden=2560, heads=32, kv_heads=32, ffn_hidden=10240, vocab=50304),
    "llama-3.2-1b": dict(arch="llama", layers=16, hidden=2048, heads=32, kv_heads=8, ffn_hidden=8192, vocab=128256),
}

FIELDS = ["model", "arch", "layers", "hidden", "heads", "kv_heads", "ffn_hidden", "vocab", "seq_len", "micro_batch",
          "num_microbatches", "recompute", "precision", "params", "status", "iters", "iter_ms_median", "iter_ms_min",
          "iter_ms_max", "fwd_ms", "bwd_ms", "optimizer_ms", "static_mem_bytes", "peak_mem_bytes", "device", "note"]


def grid(quick, models, part):
    if quick:  # a rehearsal on a CPU: tiny shapes, every code path
        tiny = dict(arch="gpt", layers=2, hidden=64, heads=4, kv_heads=4, ffn_hidden=256, vocab=512)
        tiny_llama = dict(arch="llama", layers=2, hidden=64, heads=4, kv_heads=2, ffn_hidden=192, vocab=512)
        for name, m in (("tiny-gpt", tiny), ("tiny-llama", tiny_llama)):
            for rc in ("none", "full"):
                for mb in (1, 2):
                    yield name, m, 128, mb, 1, rc
        yield "tiny-gpt", tiny, 128, 1, 3, "none"
        return
    # Every model at sequence 2048, micro-batches doubling until memory runs
    # out, with and without full recomputation.
    for name in (MODELS if part in ("all", "main") else []):
        if models and name not in models:
            continue
        for rc in ("none", "full"):
            for mb in (1, 2, 4, 8, 16):
                yield name, MODELS[name], 2048, mb, 1, rc
    if part == "main":
        return
    # Sequence length at fixed tokens per micro-batch, and gradient accumulation.
    for seq, mb in ((512, 16), (1024, 8), (4096, 2), (8192, 1)):
        yield "gpt-350m", MODELS["gpt-350m"], seq, mb, 1, "none"
    for m in (2, 4):
        yield "gpt-760m", MODELS["gpt-760m"], 2048, 4, m, "none"
        yield "llama-3.2-1b", MODELS["llama-3.2-1b"], 2048, 2, m, "none"


class Clock:
    """Elapsed milliseconds between marks: CUDA events on a GPU, the wall clock on a CPU."""

    def __init__(self, device):
        self.cuda = device.type == "cuda"

    def mark(self):
        if self.cuda:
            e = torch.cuda.Event(enable_timing=True)
            e.record()
            return e
        return time.perf_counter()

    def ms(self, a, b):
        if self.cuda:
            b.synchronize()
            return a.elapsed_time(b)
        return (b - a) * 1e3


def measure(name, m, seq, mb, nmb, rc, device, iters, warmup):
    c = dict(m, seq_len=seq, recompute=rc)
    row = dict(model=name, seq_len=seq, micro_batch=mb, num_microbatches=nmb, recompute=rc,
               precision="bf16-amp" if device.type == "cuda" else "fp32", device=torch.cuda.get_device_name()
               if device.type == "cuda" else "cpu", note="")
    row.update({k: m[k] for k in ("arch", "layers", "hidden", "heads", "kv_heads", "ffn_hidden", "vocab")})
    model = opt = None
    try:
        if device.type == "cuda":
            torch.cuda.empty_cache()
            torch.cuda.reset_peak_memory_stats()
        model = Decoder(c).to(device)
        row["params"] = sum(p.numel() for p in model.parameters())
        fused = {"fused": True} if device.type == "cuda" else {}
        opt = torch.optim.AdamW(model.parameters(), lr=1e-4, **fused)
        tokens = torch.randint(0, c["vocab"], (nmb, mb, seq + 1), device=device)
        clock = Clock(device)
        amp = torch.autocast(device_type="cuda", dtype=torch.bfloat16) if device.type == "cuda" else \
            torch.autocast(device_type="cpu", enabled=False)
        times, fwd, bwd, optim = [], [], [], []
        static = None
        for it in range(warmup + iters):
            # Marks only while the iteration runs; the times are read after its
            # end, so that reading them never stalls the launches.
            t0 = clock.mark()
            marks = []
            for i in range(nmb):
                a0 = clock.mark()
                with amp:
                    loss = model(tokens[i, :, :-1], tokens[i, :, 1:]) / nmb
                a1 = clock.mark()
                loss.backward()
                marks.append((a0, a1, clock.mark()))
            o0 = clock.mark()
            opt.step()
            opt.zero_grad(set_to_none=False)  # gradients stay allocated, as Megatron's buffers do
            t1 = clock.mark()
            total = clock.ms(t0, t1)
            f = sum(clock.ms(a0, a1) for a0, a1, _ in marks)
            b = sum(clock.ms(a1, a2) for _, a1, a2 in marks)
            if it == 0 and device.type == "cuda":
                torch.cuda.synchronize()
                # After the first step: weights, gradients and Adam states, no activations.
                static = torch.cuda.memory_allocated() - tokens.numel() * tokens.element_size()
            if it >= warmup:
                times.append(total)
                fwd.append(f)
                bwd.append(b)
                optim.append(clock.ms(o0, t1))
        row.update(status="ok", iters=iters, iter_ms_median=statistics.median(times), iter_ms_min=min(times),
                   iter_ms_max=max(times), fwd_ms=statistics.median(fwd), bwd_ms=statistics.median(bwd),
                   optimizer_ms=statistics.median(optim))
        if device.type == "cuda":
            row.update(static_mem_bytes=static, peak_mem_bytes=torch.cuda.max_memory_allocated())
    except torch.cuda.OutOfMemoryError as e:
        row.update(status="oom", note=str(e).split("\n")[0][:160])
        if device.type == "cuda":
            row.update(peak_mem_bytes=torch.cuda.max_memory_allocated())
    except RuntimeError as e:  # a kernel or shape failure: recorded, the sweep goes on
        row.update(status="error", note=str(e).split("\n")[0][:160])
    finally:
        del model, opt
        if device.type == "cuda":
            torch.cuda.empty_cache()
    return row


def gemm_sweep(device, out, quick):
    """Matmul throughput by shape: (tokens x hidden_in) @ (hidden_in x hidden_out)."""
    dtypes = [torch.bfloat16, torch.float32] if device.type == "cuda" else [torch.float32]
    sizes = (64, 128) if quick else (512, 1024, 2048, 4096, 8192, 16384)
    hiddens = (64, 256) if quick else (256, 512, 768, 1024, 2048, 4096, 8192, 16384)
    clock = Clock(device)
    with open(out, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["dtype", "m", "k", "n", "ms", "tflops", "device"])
        for dt in dtypes:
            if dt == torch.float32 and device.type == "cuda":
                torch.backends.cuda.matmul.allow_tf32 = False  # plain fp32, the datasheet's fp32 peak
            for m in sizes:
                for k in hiddens:
                    for n in hiddens:
                        if dt == torch.float32 and device.type == "cuda" and m * k * n > 2 ** 36:
                            continue  # fp32 is slow: keep the sweep within its budget
                        a = torch.randn(m, k, device=device, dtype=dt)
                        b = torch.randn(k, n, device=device, dtype=dt)
                        for _ in range(3):
                            a @ b
                        reps = max(3, min(200, int(2e11 / (2 * m * k * n))))
                        t0 = clock.mark()
                        for _ in range(reps):
                            a @ b
                        t1 = clock.mark()
                        ms = clock.ms(t0, t1) / reps
                        w.writerow([str(dt).replace("torch.", ""), m, k, n, f"{ms:.5f}",
                                    f"{2 * m * k * n / ms / 1e9:.2f}", device.type])
                fh.flush()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--budget-s", type=float, default=240)
    ap.add_argument("--iters", type=int, default=8)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--skip-gemm", action="store_true")
    ap.add_argument("--models", default="", help="comma-separated names from the main grid (default: all)")
    ap.add_argument("--part", choices=("all", "main", "extra"), default="all",
                    help="main: every model by micro-batch and recomputation; extra: sequence and accumulation")
    a = ap.parse_args()
    device = torch.device(a.device)
    os.makedirs(a.out, exist_ok=True)
    start = time.time()
    path = os.path.join(a.out, "transformer.csv")
    fresh = not os.path.exists(path)
    oom_at = set()  # (model, seq, recompute, num_microbatches) whose smaller micro-batch ran out of memory
    with open(path, "a", newline="") as fh:
        w = csv.DictWriter(fh, FIELDS)
        if fresh:
            w.writeheader()
        for name, m, seq, mb, nmb, rc in grid(a.quick, set(filter(None, a.models.split(","))), a.part):
            if time.time() - start > a.budget_s:
                print(f"budget of {a.budget_s} s spent: stopping before {name} mb={mb}", file=sys.stderr)
                break
            if (name, seq, rc, nmb) in oom_at:
                continue
            row = measure(name, m, seq, mb, nmb, rc, device, a.iters, a.warmup)
            w.writerow(row)
            fh.flush()
            if row["status"] == "oom":
                oom_at.add((name, seq, rc, nmb))
            print(f"[{time.time() - start:6.1f}s] {name} seq={seq} mb={mb}x{nmb} {rc}: {row['status']} "
                  f"{row.get('iter_ms_median', float('nan')):.1f} ms peak {row.get('peak_mem_bytes', 0) / 2**30:.1f} GiB",
                  file=sys.stderr)
    if not a.skip_gemm:
        gemm_sweep(device, os.path.join(a.out, "gemm.csv"), a.quick)
        print(f"[{time.time() - start:6.1f}s] gemm sweep done", file=sys.stderr)


if __name__ == "__main__":
    main()
