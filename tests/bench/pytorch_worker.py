# SPDX-License-Identifier: GPL-2.0
"""One process of tests/bench/pytorch_bench.py: ranks 0..N-1 are workers (in
their namespaces), rank N serves the PS of each inagg job in turn (in the
destination's). Besides the times, each configuration's CPU: every process's
user + system time (getrusage) summed, the whole machine's /proc/stat, and the
hook's phases (BENCH_DEBUG=1 prints them per worker). Gloo connects all
N + 1 for barriers; Gloo's all-reduce runs in the workers' group. After an
untimed warm-up round, every round times each configuration once, in an
order rotated per round; rank 0 writes the times (max over workers)."""
import datetime
import json
import os
import resource
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
                                                                chunk=cfg["chunk"], retries=500)
        hooks[name] = Hook(w)


def cpu_seconds():
    """This process's user + system CPU time (a PS's serving thread included)."""
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return ru.ru_utime + ru.ru_stime


def machine_ticks():
    """The whole machine's /proc/stat CPU line: user, nice, system, idle, iowait, irq, softirq."""
    with open("/proc/stat") as f:
        return [int(x) for x in f.readline().split()[1:8]]


times = []
for size in cfg["sizes"]:
    g = np.random.default_rng(rank).uniform(-1, 1, size).astype(np.float32)
    # Round -1 warms every configuration up, untimed: buffers, connections and each
    # bucket's agreed exponent, as in the steady state of a training loop.
    for r in range(-1, cfg["rounds"]):
        order = names[r % len(names):] + names[:r % len(names)]
        for name in order:
            ps = None
            if rank == n and name != "gloo":
                ps = inagg.PS.join(jobs[name], cfg["sock"]).configure(
                    capacity=cfg["capacity"], chunk=cfg["chunk"]).start()
            dist.barrier()
            t, phases = 0.0, {}
            m0, c0 = machine_ticks(), cpu_seconds()
            if rank < n:
                t0 = time.monotonic()
                if name == "gloo":
                    dist.all_reduce(torch.from_numpy(g.copy()), group=wg)
                else:
                    # As Gloo's above: a copy, summed in place (a DDP bucket is).
                    hooks[name].reduce_into(g.copy())
                    phases = hooks[name].phases
                t = time.monotonic() - t0
                if rank == 0 and r >= 0 and os.environ.get("BENCH_STAMPS"):
                    # When each timed call ran (CLOCK_MONOTONIC, perf's clock): cpu_split.py.
                    with open(os.environ["BENCH_STAMPS"], "a") as f:
                        print(name, size, f"{t0:.6f}", f"{t0 + t:.6f}", file=f)
            if os.environ.get("BENCH_DEBUG") and name in hooks:
                print(f"# rank {rank} {name}: {t:.3f} s {phases}, resends "
                      f"{hooks[name].resends}", file=sys.stderr, flush=True)
            # The PS rank counts its serving thread's CPU until every worker is done.
            tt = torch.tensor([t], dtype=torch.float64)
            dist.all_reduce(tt, op=dist.ReduceOp.MAX)
            cpu = torch.tensor([cpu_seconds() - c0], dtype=torch.float64)
            dist.all_reduce(cpu)
            m1 = machine_ticks()
            ph = torch.tensor([phases.get(k, 0.0) for k in ("encode", "net", "decode")],
                              dtype=torch.float64)
            dist.all_reduce(ph, op=dist.ReduceOp.MAX)
            if ps:
                ps.stop()
                ps.close()
            if rank == 0 and r >= 0:
                hz = os.sysconf("SC_CLK_TCK")
                d = [(b - a) / hz for a, b in zip(m0, m1)]
                times.append({"size": size, "round": r, "config": name, "seconds": float(tt),
                              "host_cpu": float(cpu), "softirq": d[6], "system": d[2],
                              "user": d[0] + d[1], "idle": d[3],
                              "encode": float(ph[0]), "net": float(ph[1]),
                              "decode": float(ph[2])})
                # Kept as it goes: an interrupted bench still has its rounds.
                with open(cfg["out"], "w") as f:
                    json.dump(times, f)
                print(f"# {size} round {r} {name}: {float(tt):.3f} s", file=sys.stderr,
                      flush=True)
dist.barrier()
dist.destroy_process_group()
