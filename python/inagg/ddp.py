# SPDX-License-Identifier: GPL-2.0
"""A DistributedDataParallel communication hook that all-reduces gradients
through inagg.

    hook = inagg.ddp.Hook(inagg.Worker.join(job, rank))
    ddp_model.register_comm_hook(hook, inagg.ddp.allreduce_hook)

Each gradient bucket travels as int32 fixed point (inagg.fixed) in one
all-reduce of the job's stream, laid out as

    [ N exponent slots | 1 overflow count | the bucket's values ]

Every worker puts, in its own slot, the exponent e_i of its largest
|gradient| (|g| < 2^e_i), and encodes its values at the scale agreed for
this bucket (frac = 30 - e - ceil(log2 N) for the agreed e; no sum of N
values |g| < 2^e can wrap). A worker whose values reach 2^e adds 1 to the
overflow count. The sum tells every worker the same thing: with no
overflow, the decoded sum is within N * 2^-(frac+1) of the exact one; with
an overflow, the result is thrown away and the bucket is sent again at the
scale of the largest exponent now known (which fits by construction). The
next step starts from that exponent plus a margin. So a gradient is never
decoded from a sum that could have wrapped; NaN or infinity raises WrapRisk.

The hook runs synchronously (the all-reduce blocks the backward pass that
reached the bucket) and returns a completed future.
"""
import errno
import math

import numpy as np
import torch

from . import fixed
from ._lib import WrapRisk

SLOT_OFFSET = 1 << 16	# an exponent slot holds e + offset: never 0 for a worker that wrote it
FIRST_EXPONENT = 0	# before any step: |g| < 1


class Hook:
    """State of the hook for one worker: its inagg handle, the agreed exponent
    per bucket, and a record of every all-reduce (for tests and reports).

    verify_group: a torch.distributed group (Gloo) to all-reduce every bucket
    through as well, in float64 (the reference) and float32 (what Gloo gives
    DDP), recording the largest differences next to the fixed-point bound.
    """

    def __init__(self, worker, margin=1, verify_group=None, rank=None):
        self.worker = worker
        self.n = worker.nworkers
        self.rank = worker.index if rank is None else rank
        if not 0 <= self.rank < self.n:
            raise ValueError(f"rank {self.rank}: the hook needs this worker's index among "
                             f"the job's {self.n} (Worker.join knows it)")
        self.margin = margin
        self.exp = {}
        self.verify_group = verify_group
        self.records = []
        self.step = 0
        self.resends = 0

    def _once(self, g, e_local, agreed):
        n = self.n
        frac = fixed.frac_for_exponent(agreed, n)
        vec = np.zeros(n + 1 + g.size, dtype=np.int32)
        vec[self.rank] = e_local + SLOT_OFFSET
        over = e_local > agreed
        vec[n] = int(over)
        # Over the agreed bound, the values are saturated and the result discarded.
        fixed.encode_unchecked(g, frac, out=vec[n + 1:])
        self.worker.allreduce(vec)
        exps = vec[:n].astype(np.int64) - SLOT_OFFSET
        return frac, int(vec[n]), int(exps.max()), vec[n + 1:]

    def reduce(self, g, key=0):
        """The sum over workers of g (float32 numpy), as float64, and its scale."""
        m = float(np.max(np.abs(g))) if g.size else 0.0
        if not math.isfinite(m):
            raise WrapRisk(errno.ERANGE, f"step {self.step}: a gradient is not finite "
                           "(NaN or infinity); inagg sums only finite values")
        e_local = fixed.exponent(m)
        agreed = self.exp.get(key, FIRST_EXPONENT)
        for attempt in range(2):
            frac, over, emax, data = self._once(g, e_local, agreed)
            if not over:
                self.exp[key] = emax + self.margin
                return fixed.decode(data, frac), frac, emax
            # Every worker saw the same count and exponents: all resend alike.
            self.resends += 1
            agreed = emax
        raise WrapRisk(errno.ERANGE, f"step {self.step}: values over the scale of their own "
                       "exponents (a worker changed its gradient during the all-reduce?)")


def allreduce_hook(state, bucket):
    """register_comm_hook(state, allreduce_hook): the mean gradient through inagg."""
    buf = bucket.buffer()
    # numpy has no bfloat16: every bucket goes through float32 (exact from bf16 and fp16).
    g = buf.detach().to(torch.float32).cpu().numpy()
    total, frac, emax = state.reduce(g, bucket.index())
    n = state.n
    if state.verify_group is not None:
        _verify(state, buf, g, total, frac, emax, bucket.index())
    buf.copy_(torch.from_numpy(total / n).to(buf.dtype))
    if bucket.is_last():
        state.step += 1
    fut = torch.futures.Future()
    fut.set_result(buf)
    return fut


def _verify(state, buf, g, total, frac, emax, index):
    import torch.distributed as dist

    n = state.n
    ref = torch.from_numpy(g.astype(np.float64))
    dist.all_reduce(ref, group=state.verify_group)
    f32 = torch.from_numpy(g.copy())
    dist.all_reduce(f32, group=state.verify_group)
    mean = torch.from_numpy(total / n).to(torch.float32).double()
    exact = ref / n
    bound = fixed.error_bound(frac, n) / n
    # What the float32 mean adds (half an ulp of |g| < 2^emax, relative to 2^-24).
    f32_round = math.ldexp(1.0, emax - 24)
    # Gloo's float32 sum: each of its n - 1 additions rounds a partial sum of magnitude < n 2^emax.
    gloo_bound = (n - 1) * n * math.ldexp(1.0, emax - 24) / n + f32_round
    state.records.append({
        "step": state.step, "bucket": index, "elements": int(g.size), "frac": frac,
        "err_exact": float((mean - exact).abs().max()), "bound": bound + f32_round,
        "err_gloo": float((mean - f32.double() / n).abs().max()),
        "bound_gloo": bound + f32_round + gloo_bound,
    })
