#!/usr/bin/env python3
"""A minimal training program that `trainplan profile` can measure.

It follows the trial protocol of docs/PROFILING.md: rank 0 prints one JSON
object per line on stdout after each epoch, then a "done" line. Everything
else (logs, warnings) may go anywhere; lines that are not JSON are ignored.

Profile it with, for example:

  trainplan profile --store example.db --workers 1,2 --batches 32,64,128 --epochs 1,3 \
    --cmd 'python3 examples/train_example.py --batch {batch} --workers {workers} --rank {rank}
           --epochs {epochs} --master-addr {master_addr} --master-port {master_port}'

This file is stdlib-only so that it runs anywhere: the "training" is a
simulated workload whose epoch time falls with the global batch and whose
accuracy rises with epochs. Replace the body of train_one_epoch() and
evaluate() with real work; with PyTorch the skeleton is:

  import torch.distributed as dist
  dist.init_process_group("gloo", init_method=f"tcp://{a.master_addr}:{a.master_port}",
                          rank=a.rank, world_size=a.workers)
  sampler = DistributedSampler(train_set, num_replicas=a.workers, rank=a.rank)
  loader = DataLoader(train_set, batch_size=a.batch, sampler=sampler)
  model = DistributedDataParallel(net)
  for epoch in range(1, a.epochs + 1):
      sampler.set_epoch(epoch); t0 = time.time()
      for x, y in loader: ...                      # forward, backward, step
      epoch_time = time.time() - t0                # time the training only
      acc = evaluate(model)                        # all-reduce so rank 0 has the global value
      if a.rank == 0: report(epoch, epoch_time, acc)
      if reached(acc): break                       # every rank sees the same all-reduced acc

`trainplan plan --early-stop --emit ...` sets TRAINPLAN_TARGET and
TRAINPLAN_TARGET_DIRECTION (max or min): the epochs are then a budget and the
run stops at the first epoch whose metric meets the target (reached() below).
Profiling trials do not set them, so trials run every epoch they were given.
"""
import argparse
import json
import math
import os
import sys
import time

DATASET_SIZE = 6000  # training examples per epoch (reported as train_samples)


def report(**fields):
    print(json.dumps(fields), flush=True)  # flush: the profiler reads lines as they come


def train_one_epoch(batch, workers):
    steps = math.ceil(DATASET_SIZE / (batch * workers))
    time.sleep(steps * (0.0002 + 0.00001 * batch))  # per-step overhead + per-example work


def evaluate(batch, workers, epoch):
    global_batch = batch * workers
    return 0.99 - 0.4 / (epoch + 1) - 0.0001 * global_batch


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--batch", type=int, required=True, help="per-worker batch")
    p.add_argument("--workers", type=int, default=1)
    p.add_argument("--rank", type=int, default=0)
    p.add_argument("--epochs", type=int, default=1)
    p.add_argument("--master-addr", default="127.0.0.1")
    p.add_argument("--master-port", type=int, default=29500)
    a = p.parse_args()
    print(f"rank {a.rank}/{a.workers}: batch {a.batch}, {a.epochs} epochs", file=sys.stderr)
    ran = 0
    for epoch in range(1, a.epochs + 1):
        t0 = time.time()
        train_one_epoch(a.batch, a.workers)
        epoch_time = time.time() - t0
        acc = evaluate(a.batch, a.workers, epoch)
        ran = epoch
        if a.rank == 0:
            report(event="epoch", epoch=epoch, epoch_time_s=epoch_time, metric=acc,
                   metric_name="accuracy", train_samples=DATASET_SIZE)
        if reached(acc):
            break
    if a.rank == 0:
        report(event="done", epochs=ran)


def reached(metric):
    """True when TRAINPLAN_TARGET is set and `metric` meets it (plan --early-stop)."""
    target = os.environ.get("TRAINPLAN_TARGET")
    if target is None:
        return False
    if os.environ.get("TRAINPLAN_TARGET_DIRECTION", "max") == "min":
        return metric <= float(target)
    return metric >= float(target)


if __name__ == "__main__":
    main()
