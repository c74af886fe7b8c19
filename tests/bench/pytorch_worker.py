# SPDX-License-Identifier: GPL-2.0
"""One process of tests/bench/pytorch_bench.py: ranks 0..N-1 are workers (in
their namespaces), rank N serves the PS of each inagg job in turn (in the
destination's). Gloo connects all N + 1 for barriers; Gloo's all-reduce runs
in the workers' group. Every round times each configuration once, in an
order rotated per round; rank 0 writes the times (max over workers)."""
import datetime
import json
import os
import sys
import time

import numpy as np
import torch
import torch.distributed as dist

import inagg
from inagg.ddp import Hook

rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
cfg = json.loads(os.environ["BENCH_CFG"])
n = world - 1
torch.set_num_threads(1)
dist.init_process_group("gloo", rank=rank, world_size=world,
                        init_method=f"tcp://{os.environ['MASTER_ADDR']}:{os.environ['MASTER_PORT']}",
                        timeout=datetime.timedelta(seconds=600))
wg = dist.new_group(list(range(n)))
jobs = cfg["jobs"]	# name -> job id; "gloo" is Gloo
names = ["gloo"] + list(jobs)
hooks = {}
if rank < n:
    for name, job in jobs.items():
        # Many retries: all red, 8 x 16M elements queue at the root uplink's tbf for long.
        w = inagg.Worker.join(job, rank, cfg["sock"]).configure(capacity=cfg["capacity"],
                                                                retries=500)
        hooks[name] = Hook(w)
times = []
for size in cfg["sizes"]:
    g = np.random.default_rng(rank).uniform(-1, 1, size).astype(np.float32)
    for r in range(cfg["rounds"]):
        order = names[r % len(names):] + names[:r % len(names)]
        for name in order:
            ps = None
            if rank == n and name != "gloo":
                ps = inagg.PS.join(jobs[name], cfg["sock"]).configure(
                    capacity=cfg["capacity"]).start()
            dist.barrier()
            t = 0.0
            if rank < n:
                t0 = time.monotonic()
                if name == "gloo":
                    dist.all_reduce(torch.from_numpy(g.copy()), group=wg)
                else:
                    hooks[name].reduce(g)
                t = time.monotonic() - t0
            tt = torch.tensor([t], dtype=torch.float64)
            dist.all_reduce(tt, op=dist.ReduceOp.MAX)
            if ps:
                ps.stop()
                ps.close()
            if rank == 0:
                times.append({"size": size, "round": r, "config": name, "seconds": float(tt)})
                # Kept as it goes: an interrupted bench still has its rounds.
                with open(cfg["out"], "w") as f:
                    json.dump(times, f)
                print(f"# {size} round {r} {name}: {float(tt):.3f} s", file=sys.stderr,
                      flush=True)
dist.barrier()
dist.destroy_process_group()
