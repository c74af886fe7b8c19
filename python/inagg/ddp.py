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

The hook returns at once with a future that a thread of the hook completes
when the bucket's all-reduce has (one thread per hook, so that every worker
makes its calls in DDP's bucket order): backward goes on while buckets
travel, as with Gloo's and NCCL's hooks. float32 buckets are encoded, sent,
and decoded into the bucket in place by libinagg (ia_api_allreduce_f32: one
pass each way, no copy); other dtypes and the verify mode take the numpy
path of reduce(), synchronously.
"""
import concurrent.futures
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
        self.phases = {}	# the last reduce_into()'s seconds: encode, net, decode
        self._thread = None

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

    def reduce_into(self, v, key=0, mean=False):
        """In place: v (C-contiguous float32 numpy) becomes the sum (or mean) over
        workers, within N * 2^-(frac+1) of the exact one plus float32 rounding, by
        libinagg in one pass each way. Returns (frac, emax); WrapRisk as reduce()."""
        agreed = self.exp.get(key)
        if agreed is None:
            agreed = self._first_exponent(v)
        for attempt in range(2):
            ok, emax, frac = self.worker.allreduce_f32(v, self.rank, agreed, mean)
            self.phases = self.worker.phases()
            if ok:
                self.exp[key] = emax + self.margin
                return frac, emax
            # Every worker saw the same count and exponents: all resend alike.
            self.resends += 1
            agreed = emax
        raise WrapRisk(errno.ERANGE, f"step {self.step}: values over the scale of their own "
                       "exponents (a worker changed its gradient during the all-reduce?)")

    def _first_exponent(self, v):
        """A bucket's first call: the workers' exponents in an all-reduce of N slots,
        one round trip, so that the bucket itself is sent once, at a scale that fits
        (a guess would cost the whole bucket again when it is too small)."""
        m = float(np.max(np.abs(v))) if v.size else 0.0
        slots = np.zeros(self.n, dtype=np.int32)
        # Not finite: the float call refuses it (WrapRisk) after this agreement.
        slots[self.rank] = (fixed.exponent(m) if math.isfinite(m) else 0) + SLOT_OFFSET
        self.worker.allreduce(slots)
        return int((slots.astype(np.int64) - SLOT_OFFSET).max())

    def submit(self, fn):
        """fn() on the hook's one thread, in the order submitted."""
        if self._thread is None:
            self._thread = concurrent.futures.ThreadPoolExecutor(
                max_workers=1, thread_name_prefix="inagg-hook")
        return self._thread.submit(fn)


def allreduce_hook(state, bucket):
    """register_comm_hook(state, allreduce_hook): the mean gradient through inagg."""
    buf = bucket.buffer()
    in_place = buf.dtype == torch.float32 and buf.device.type == "cpu" and buf.is_contiguous()
    if in_place and state.verify_group is None:
        return _async_mean(state, bucket, buf)
    # numpy has no bfloat16: other buckets go through float32 (exact from bf16 and fp16).
    g = buf.detach().to(torch.float32).cpu().numpy()
    if in_place:	# verified: libinagg's path, checked against Gloo's sums of g
        g = g.copy()
        arr = buf.detach().numpy()
        frac, emax = state.reduce_into(arr, bucket.index(), mean=True)
        mean = arr
    else:
        total, frac, emax = state.reduce(g, bucket.index())
        mean = (total / state.n).astype(np.float32)
    if state.verify_group is not None:
        _verify(state, g, mean, frac, emax, bucket.index())
    if not in_place:
        buf.copy_(torch.from_numpy(mean).to(buf.dtype))
    if bucket.is_last():
        state.step += 1
    fut = torch.futures.Future()
    fut.set_result(buf)
    return fut


def _async_mean(state, bucket, buf):
    """The mean of a float32 bucket, in place, completed on the hook's thread."""
    arr = buf.detach().numpy()	# the bucket's own memory
    index = bucket.index()
    fut = torch.futures.Future()

    def work():
        try:
            state.reduce_into(arr, index, mean=True)
            fut.set_result(buf)
        except BaseException as e:	# the training loop's wait() raises it
            fut.set_exception(e)
    state.submit(work)
    if bucket.is_last():
        state.step += 1
    return fut


def _verify(state, g, mean32, frac, emax, index):
    """Records how far the float32 mean mean32 of the workers' g is from the exact
    (float64) mean and from Gloo's float32 one, beside the bounds."""
    import torch.distributed as dist

    n = state.n
    ref = torch.from_numpy(g.astype(np.float64))
    dist.all_reduce(ref, group=state.verify_group)
    f32 = torch.from_numpy(g.copy())
    dist.all_reduce(f32, group=state.verify_group)
    mean = torch.from_numpy(mean32).double()
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
