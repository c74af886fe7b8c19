# SPDX-License-Identifier: GPL-2.0
"""An MLP on scikit-learn's digits (8x8 images, 10 classes, offline in
python3-sklearn), data-parallel with DistributedDataParallel. Run on every
worker by python3 -m inagg.launch; the gradients go through inagg
(INAGG_BACKEND=inagg: the comm hook of inagg.ddp) or through Gloo's
all-reduce (INAGG_BACKEND=gloo) over the same namespaces and links.

Same seeds everywhere: the same initial weights, the same split and the
same sample order, so the two backends differ only by how gradients are
summed. Rank 0 writes one JSON object to --out: per step the loss on the
whole training set, per epoch the test accuracy, and the seconds spent.
With --verify every bucket is also all-reduced through Gloo (float64 and
float32) and each rank writes its records of differences to OUT.rankR.
"""
import argparse
import datetime
import json
import os
import time

import numpy as np
import torch
import torch.distributed as dist
import torch.nn as nn
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split
from torch.nn.parallel import DistributedDataParallel as DDP


def data(seed):
    x, y = load_digits(return_X_y=True)
    x = (x / 16.0).astype(np.float32)
    xtr, xte, ytr, yte = train_test_split(x, y, test_size=0.25, random_state=seed,
                                          stratify=y)
    t = torch.from_numpy
    return t(xtr), t(ytr).long(), t(xte), t(yte).long()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--epochs", type=int, default=10)
    ap.add_argument("--batch", type=int, default=16, help="samples per worker per step")
    ap.add_argument("--lr", type=float, default=0.05)
    ap.add_argument("--hidden", type=int, default=64)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--verify", action="store_true")
    ap.add_argument("--out", required=True)
    a = ap.parse_args()

    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    backend = os.environ.get("INAGG_BACKEND", "inagg")
    torch.set_num_threads(1)
    dist.init_process_group("gloo", rank=rank, world_size=world,
                            init_method=f"tcp://{os.environ['MASTER_ADDR']}:"
                                        f"{os.environ['MASTER_PORT']}",
                            timeout=datetime.timedelta(seconds=120))
    torch.manual_seed(a.seed)
    model = nn.Sequential(nn.Linear(64, a.hidden), nn.ReLU(), nn.Linear(a.hidden, 10))
    ddp = DDP(model)
    hook = None
    if backend == "inagg":
        import inagg
        from inagg import ddp as iddp
        worker = inagg.Worker.join(int(os.environ["INAGG_JOB"]), rank,
                                   os.environ.get("INAGG_SOCK"))
        if worker.nworkers != world:
            raise SystemExit(f"job has {worker.nworkers} workers, WORLD_SIZE is {world}")
        hook = iddp.Hook(worker, verify_group=dist.group.WORLD if a.verify else None)
        ddp.register_comm_hook(hook, iddp.allreduce_hook)
    xtr, ytr, xte, yte = data(a.seed)
    opt = torch.optim.SGD(ddp.parameters(), lr=a.lr, momentum=0.9)
    lossf = nn.CrossEntropyLoss()
    steps = len(xtr) // (world * a.batch)
    curve, acc = [], []
    t0 = time.monotonic()
    comm = 0.0
    for epoch in range(a.epochs):
        perm = torch.randperm(len(xtr), generator=torch.Generator().manual_seed(a.seed + epoch))
        for s in range(steps):
            idx = perm[s * world * a.batch:(s + 1) * world * a.batch][rank::world]
            opt.zero_grad()
            loss = lossf(ddp(xtr[idx]), ytr[idx])
            tb = time.monotonic()
            loss.backward()	# the all-reduce runs inside
            comm += time.monotonic() - tb
            opt.step()
            if rank == 0:
                with torch.no_grad():
                    curve.append(float(lossf(model(xtr), ytr)))
        with torch.no_grad():
            acc.append(float((model(xte).argmax(1) == yte).float().mean()))
    seconds = time.monotonic() - t0
    if rank == 0:
        with open(a.out, "w") as f:
            json.dump({"backend": backend, "workers": world, "epochs": a.epochs,
                       "steps_per_epoch": steps, "loss": curve, "test_accuracy": acc,
                       "seconds": seconds, "backward_seconds": comm,
                       "resends": hook.resends if hook else 0}, f)
    if hook and a.verify:
        with open(f"{a.out}.rank{rank}", "w") as f:
            json.dump({"steps": hook.step, "records": hook.records}, f)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
