#!/usr/bin/python3
"""PyTorch twin of skiff_ddp_bench (bench/ddp_bench.cpp): the same MLP, batch and steps,
trained alone or with DistributedDataParallel over Gloo, and the same all-reduce sizes.
One JSON line per result from rank 0. Run through bench/compare_ddp.sh:
    python3 -m torch.distributed.run --nproc_per_node 2 bench/pytorch_ddp.py [steps warmup batch]
"""
import json
import os
import statistics
import sys
import time

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F

steps, warmup, batch = (int(a) for a in (sys.argv[1:4] + ["30", "5", "64"][len(sys.argv[1:4]):]))
torch.set_num_threads(int(os.environ.get("THREADS", "1")))
distributed = "WORLD_SIZE" in os.environ and int(os.environ["WORLD_SIZE"]) > 1
if distributed:
    dist.init_process_group("gloo")
rank, world = (dist.get_rank(), dist.get_world_size()) if distributed else (0, 1)

torch.manual_seed(0)
net = nn.Sequential(nn.Linear(784, 1024), nn.ReLU(), nn.Linear(1024, 1024), nn.ReLU(), nn.Linear(1024, 10))
model = nn.parallel.DistributedDataParallel(net) if distributed else net
opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
g = torch.Generator().manual_seed(1 + rank)
x = torch.randn(batch, 784, generator=g)
y = torch.randint(0, 10, (batch,), generator=g)
times = []
for s in range(warmup + steps):
    t0 = time.perf_counter()
    opt.zero_grad()
    F.cross_entropy(model(x), y).backward()
    opt.step()
    if s >= warmup:
        times.append(time.perf_counter() - t0)
step_s = statistics.median(times)
if rank == 0:
    print(json.dumps({"what": "train", "ranks": world, "batch_per_rank": batch, "step_ms": round(step_s * 1e3, 3),
                      "samples_per_s": round(batch * world / step_s, 1)}), flush=True)
if distributed:
    for mib in (1, 4, 16, 64):
        buf = torch.ones(mib << 18)
        reps = 5 if mib >= 16 else 10
        t = []
        for i in range(reps + 2):
            dist.barrier()
            t0 = time.perf_counter()
            dist.all_reduce(buf)
            if i >= 2:
                t.append(time.perf_counter() - t0)
        sec = statistics.median(t)
        if rank == 0:
            print(json.dumps({"what": "allreduce", "ranks": world, "mib": mib, "ms": round(sec * 1e3, 3),
                              "gb_per_s": round((mib << 20) / sec / 1e9, 3)}), flush=True)
    dist.destroy_process_group()
