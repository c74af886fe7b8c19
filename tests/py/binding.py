# SPDX-License-Identifier: GPL-2.0
"""The Python binding (python/inagg) on loopback, no daemon: fixed-point
bounds and the refusal of unsafe scales, exact int32/int64 sums through
libinagg.so, the DDP hook's scale agreement, and every error as its Python
exception. A PS and workers run as threads on 127.X.Y.Z addresses and a
port of this process."""
import errno
import math
import os
import subprocess
import sys
import threading

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "python"))
import inagg  # noqa: E402
from inagg import fixed  # noqa: E402
from ktap import run  # noqa: E402

PID = os.getpid()
PORT = 20000 + PID % 40000
PS_ADDR = f"127.{(PID >> 8) & 255}.{PID & 255}.1"
rng = np.random.default_rng(11)


def waddr(i):
    return f"127.{(PID >> 8) & 255}.{PID & 255}.{10 + i}"


def raises(exc, f, *a, **kw):
    try:
        f(*a, **kw)
    except exc as e:
        return e
    raise AssertionError(f"{f.__name__} did not raise {exc.__name__}")


def in_workers(job, n, body, ps=True, **cfg):
    """body(worker, i) in n threads against a PS thread; results per worker."""
    p = None
    if ps:
        p = inagg.PS(job, n, PS_ADDR, port=PORT).configure(chunk=cfg.get("chunk")).start()
    out, errs = [None] * n, [None] * n

    def one(i):
        try:
            with inagg.Worker(job, i, n, waddr(i), PS_ADDR, port=PORT) as w:
                w.configure(timeout_ms=20, **cfg)
                out[i] = body(w, i)
        except Exception as e:
            errs[i] = e
    ts = [threading.Thread(target=one, args=(i,)) for i in range(n)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    if p:
        p.stop()
        p.close()
    return out, errs


def test_frac_for_is_the_largest_safe_scale():
    for _ in range(2000):
        n = int(rng.integers(1, 300))
        m = float(rng.choice([rng.uniform(0, 1e-3), rng.uniform(0, 10), rng.uniform(0, 1e6)]))
        f = fixed.frac_for(m, n)
        assert fixed.safe(f, m, n)
        assert f == 62 or not fixed.safe(f + 1, m, n), (m, n, f)
        # The definition, in exact integers: N * (m 2^f + 1/2) < 2^31.
        num, den = m.as_integer_ratio()
        assert n * (2 * num * 2 ** f + den) < 2 ** 32 * den


def test_unsafe_scales_refused():
    e = raises(inagg.WrapRisk, fixed.check_scale, 20, 1024.0, 2)
    assert e.errno == errno.ERANGE and "wrap" in str(e)
    fixed.check_scale(19, 1024.0, 2)     # 2 * (2^29 + 1/2) < 2^31
    raises(inagg.WrapRisk, fixed.check_scale, 20, 1024.0, 3)
    raises(inagg.WrapRisk, fixed.frac_for, 2.0 ** 31, 1)
    raises(inagg.WrapRisk, fixed.frac_for, float("inf"), 1)
    raises(inagg.WrapRisk, fixed.frac_for, float("nan"), 4)
    raises(ValueError, fixed.frac_for, 1.0, 0)
    # encode() checks the values it is given, NaN and infinity included.
    raises(inagg.WrapRisk, fixed.encode, np.array([0.5, 1024.0]), 20, 2)
    raises(inagg.WrapRisk, fixed.encode, np.array([0.5, np.nan]), 4, 2)
    raises(inagg.WrapRisk, fixed.encode, np.array([-np.inf]), 4, 2)
    assert fixed.encode(np.array([1023.9]), 19, 2)[0] == round(1023.9 * 2 ** 19)


def test_exponent_scale_never_wraps():
    for n in (1, 2, 3, 4, 7, 8, 9, 64, 1000):
        for e in (-40, -3, 0, 1, 5, 20):
            f = fixed.frac_for_exponent(e, n)
            below = math.nextafter(2.0 ** e, 0)
            assert fixed.safe(f, below, n), (n, e)
            # The worst case in integers: n values all at the largest encodable magnitude.
            top = int(np.rint(np.ldexp(below, f)))
            assert n * top < 2 ** 31 and -n * top >= -2 ** 31


def test_fixed_sum_within_bound():
    for n in (2, 5, 8):
        m = 3.7
        f = fixed.frac_for(m, n)
        xs = rng.uniform(-m, m, size=(n, 5000))
        xs[0, 0], xs[1, 0] = m, m     # the extreme, too
        s = sum(fixed.encode(x, f, n).astype(np.int64) for x in xs)
        assert s.max() < 2 ** 31 and s.min() >= -2 ** 31
        err = np.abs(fixed.decode(s, f) - xs.sum(axis=0)).max()
        assert err <= fixed.error_bound(f, n), (err, fixed.error_bound(f, n))


def test_int32_and_int64_exact():
    n = 3
    v32 = [rng.integers(-2 ** 31, 2 ** 31, size=3000, dtype=np.int64).astype(np.int32)
           for _ in range(n)]
    v64 = [rng.integers(-2 ** 63, 2 ** 63 - 1, size=777, dtype=np.int64) for _ in range(n)]
    want32 = (sum(v.astype(np.int64) for v in v32) % 2 ** 32).astype(np.uint32)
    want64 = v64[0].copy()
    with np.errstate(over="ignore"):
        for v in v64[1:]:
            want64 += v

    def body(w, i):
        a, b = v32[i].copy(), v64[i].copy()
        w.allreduce(a)
        w.allreduce(b)
        return a, b
    out, errs = in_workers(1, n, body)
    assert errs == [None] * n, errs
    for a, b in out:
        assert np.array_equal(a.view(np.uint32), want32)
        assert np.array_equal(b, want64)


def test_exact_at_every_chunk_size():
    # Loopback's MTU takes the largest chunk; 1 and 300 leave the last chunk partial.
    n = 3
    v = [rng.integers(-2 ** 31, 2 ** 31, size=5000, dtype=np.int64).astype(np.int32)
         for _ in range(n)]
    want = (sum(x.astype(np.int64) for x in v) % 2 ** 32).astype(np.uint32)
    for job, chunk in ((20, 1), (21, 300), (22, 768)):
        def body(w, i):
            a = v[i].copy()
            w.allreduce(a)
            return a
        out, errs = in_workers(job, n, body, chunk=chunk)
        assert errs == [None] * n, (chunk, errs)
        for a in out:
            assert np.array_equal(a.view(np.uint32), want), chunk
    with inagg.Worker(1, 0, 1, "127.0.0.1", "127.0.0.1") as w:
        for bad in (0, 769):
            e = raises(ValueError, w.configure, chunk=bad)
            assert "chunk" in str(e) and "1..768" in str(e), e


def test_hook_agrees_on_a_scale_and_resends_once():
    from inagg.ddp import Hook
    n = 4
    # Worker 2's gradients are far larger than the first step's guess (|g| < 1).
    gs = [rng.normal(0, 0.01 if i != 2 else 40.0, size=2000).astype(np.float32)
          for i in range(n)]
    exact = sum(g.astype(np.float64) for g in gs)

    def body(w, i):
        h = Hook(w, rank=i)
        first = h.reduce(gs[i], key=0)
        second = h.reduce(gs[i], key=0)
        return first, second, h.resends
    out, errs = in_workers(2, n, body)
    assert errs == [None] * n, errs
    for (t1, f1, e1), (t2, f2, e2), resends in out:
        assert resends == 1              # the first call only
        # The resend used the largest exponent; the next call that plus the margin.
        assert f1 == fixed.frac_for_exponent(e1, n)
        assert f2 == fixed.frac_for_exponent(e1 + 1, n)
        for t, f in ((t1, f1), (t2, f2)):
            assert np.abs(t - exact).max() <= fixed.error_bound(f, n)
        assert e1 == fixed.exponent(float(np.abs(gs[2]).max()))
    # Every worker got the very same sums.
    assert all(np.array_equal(o[0][0], out[0][0][0]) for o in out)


def test_float_allreduce_in_c_within_the_bound():
    """ia_api_allreduce_f32 through Hook.reduce_into: a bucket's first call agrees on
    the exponent first (no resend), the mean within the fixed-point bound plus
    float32's rounding, every worker the same bytes, and the float32 sum reduce()
    gives at the same scale, bit for bit."""
    from inagg.ddp import Hook
    n = 4
    gs = [rng.normal(0, 0.01 if i != 2 else 40.0, size=3001).astype(np.float32)
          for i in range(n)]
    exact = sum(g.astype(np.float64) for g in gs)

    def body(w, i):
        h = Hook(w, rank=i)
        v = gs[i].copy()
        f1, e1 = h.reduce_into(v, key=0, mean=True)
        resends = h.resends
        total, f2, e2 = h.reduce(gs[i], key=0)	# the numpy path at the same scale
        u = gs[i].copy()
        f3, e3 = h.reduce_into(u, key=0)	# the sum, at the scale reduce() left
        return v, f1, e1, resends, total, f2, u, f3, h.phases
    out, errs = in_workers(7, n, body)
    assert errs == [None] * n, errs
    big = fixed.exponent(float(np.abs(gs[2]).max()))
    for v, f1, e1, resends, total, f2, u, f3, phases in out:
        assert resends == 0 and e1 == big
        assert f1 == fixed.frac_for_exponent(big, n)
        bound = fixed.error_bound(f1, n) / n + 2.0 ** (big - 24)
        assert np.abs(v.astype(np.float64) - exact / n).max() <= bound
        assert f3 == f2 == fixed.frac_for_exponent(big + 1, n)
        # The same integers decoded the same way: bit for bit what numpy gives.
        assert np.array_equal(u, total.astype(np.float32))
        assert set(phases) == {"encode", "net", "decode"} and phases["net"] > 0
    assert all(np.array_equal(o[0], out[0][0]) for o in out)


def test_float_allreduce_refuses_non_finite_and_bad_arrays():
    from inagg.ddp import Hook

    def body(w, i):
        v = np.array([1.0, np.inf], dtype=np.float32)
        try:
            Hook(w, rank=i).reduce_into(v)
        finally:
            assert v[1] == np.inf	# nothing written
    out, errs = in_workers(8, 1, body)
    assert isinstance(errs[0], inagg.WrapRisk) and "not finite" in str(errs[0]), errs

    # float32's extremes: its largest values (exponent 128, then 129 with the margin)
    # and subnormals keep their place in the sum.
    ext = np.array([3.0e38, -3.0e38, 1e-40, -0.0, 0.5], dtype=np.float32)

    def extremes(w, i):
        h = Hook(w, rank=i)
        a, b = ext.copy(), ext.copy()
        return h.reduce_into(a), h.reduce_into(b), a, b
    out, errs = in_workers(11, 1, extremes)
    assert errs == [None], errs
    (f1, e1), (f2, e2), a, b = out[0]
    assert e1 == e2 == 128 and f2 == f1 - 1
    for v, f in ((a, f1), (b, f2)):
        assert np.abs(v.astype(np.float64) - ext).max() <= fixed.error_bound(f, 1), v
    with inagg.Worker(1, 0, 1, "127.0.0.1", "127.0.0.1") as w:
        raises(ValueError, w.allreduce_f32, np.zeros(4, dtype=np.float64), 0, 0)
        raises(ValueError, w.allreduce_f32, np.zeros(4, dtype=np.float32), 1, 0)
        raises(ValueError, w.allreduce_f32, np.zeros(4, dtype=np.float32), 0, 500)
        raises(ValueError, w.allreduce_f32, np.zeros(4, dtype=np.float32), -1, 0)


class FakeBucket:
    """What allreduce_hook reads of DDP's GradBucket."""

    def __init__(self, buf, index, last):
        self.buf, self.i, self.last = buf, index, last

    def buffer(self):
        return self.buf

    def index(self):
        return self.i

    def is_last(self):
        return self.last


def test_hook_returns_at_once_and_completes_in_bucket_order():
    """The DDP hook on float32 buckets: a pending future each, completed by the
    hook's thread with the mean in the bucket's own memory; an error reaches wait()."""
    import torch
    from inagg.ddp import Hook, allreduce_hook
    n, sizes = 3, (5000, 700)
    gs = [[rng.normal(0, 1, size=m).astype(np.float32) for m in sizes] for _ in range(n)]

    def body(w, i):
        h = Hook(w, rank=i)
        bufs = [torch.from_numpy(g.copy()) for g in gs[i]]
        futs = [allreduce_hook(h, FakeBucket(b, k, k == len(bufs) - 1))
                for k, b in enumerate(bufs)]
        assert h.step == 1
        return [f.wait() is b for f, b in zip(futs, bufs)], [b.numpy() for b in bufs]
    out, errs = in_workers(9, n, body)
    assert errs == [None] * n, errs
    for k in range(len(sizes)):
        exact = sum(gs[i][k].astype(np.float64) for i in range(n)) / n
        for same, bufs in out:
            assert all(same)
            e = fixed.exponent(max(float(np.abs(gs[i][k]).max()) for i in range(n)))
            bound = fixed.error_bound(fixed.frac_for_exponent(e, n), n) / n + 2.0 ** (e - 24)
            assert np.abs(bufs[k] - exact).max() <= bound
            assert np.array_equal(bufs[k], out[0][1][k])

    def bad(w, i):
        b = torch.tensor([1.0, float("nan")])
        fut = allreduce_hook(Hook(w, rank=i), FakeBucket(b, 0, True))
        return fut.wait()
    out, errs = in_workers(10, 1, bad)
    assert isinstance(errs[0], Exception) and "not finite" in str(errs[0]), errs


def test_hook_refuses_non_finite_gradients():
    from inagg.ddp import Hook

    def body(w, i):
        return Hook(w, rank=i).reduce(np.array([1.0, np.nan], dtype=np.float32))
    out, errs = in_workers(3, 1, body)
    assert isinstance(errs[0], inagg.WrapRisk) and "not finite" in str(errs[0]), errs


def test_errors_as_exceptions():
    # No PS: a timeout, not a hang and not a wrong sum.
    def body(w, i):
        w.configure(retries=2, timeout_ms=5)
        return w.allreduce(np.zeros(10, dtype=np.int32))
    out, errs = in_workers(4, 1, body, ps=False)
    assert isinstance(errs[0], inagg.Timeout), errs
    assert errs[0].errno == errno.ETIMEDOUT
    # No PS, default retries: the port refuses (ICMP), so Unreachable after a second
    # naming the address, not a Timeout after 45 s of retries.
    def body_default(w, i):
        return w.allreduce(np.zeros(10, dtype=np.int32))
    out, errs = in_workers(6, 1, body_default, ps=False)
    assert isinstance(errs[0], inagg.Unreachable), errs
    assert errs[0].errno == errno.EHOSTUNREACH
    assert f"no PS at {PS_ADDR}:{PORT}: nothing listens on that port" in str(errs[0]), errs
    # No daemon: the job is refused.
    e = raises(inagg.JobRefused, inagg.Worker.join, 3, 0, sock="/tmp/inagg-py-no-such.sock")
    assert "cannot reach inaggd" in str(e)
    raises(inagg.JobRefused, inagg.PS.join, 3, sock="/tmp/inagg-py-no-such.sock")
    # Bad arguments.
    raises(ValueError, inagg.Worker, 0, 0, 1, "127.0.0.1", "127.0.0.1")
    raises(ValueError, inagg.Worker, 1, 0, 1, "not-an-address", "127.0.0.1")
    with inagg.Worker(1, 0, 1, "127.0.0.1", "127.0.0.1") as w:
        raises(ValueError, w.configure, retries=0)
        raises(ValueError, w.allreduce, np.zeros(4, dtype=np.float32))
        raises(ValueError, w.allreduce, [1, 2, 3])
        raises(ValueError, w.allreduce, np.zeros(8, dtype=np.int32)[::2])
    # Workers making different calls.
    def diff(w, i):
        return w.allreduce(np.zeros(100 + i, dtype=np.int32))
    out, errs = in_workers(5, 2, diff)
    assert all(isinstance(e, inagg.Mismatch) for e in errs), errs


def test_out_of_range_integers_refused():
    # ctypes wraps what does not fit the C parameter: job -1 became 2^32 - 1 (accepted),
    # port 70000 became 4464, retries -1 the u64 2^64 - 1 (refused by the library as that).
    for args, what in (((-1, 0, 1), "job -1"), ((2**32, 0, 1), "job 4294967296"),
                       ((1, -1, 1), "id -1"), ((1, 0, 2**32 + 1), "nworkers 4294967297")):
        e = raises(ValueError, inagg.Worker, *args, "127.0.0.1", "127.0.0.1")
        assert str(e).startswith(what + ": need an integer in 0..4294967295"), e
    e = raises(ValueError, inagg.Worker, 1, 0, 1, "127.0.0.1", "127.0.0.1", port=70000)
    assert str(e).startswith("port 70000: need an integer in 0..65535"), e
    raises(ValueError, inagg.PS, -1, 1, "127.0.0.1")
    raises(ValueError, inagg.PS, 1, 1, "127.0.0.1", port=-5)
    raises(ValueError, inagg.Worker.join, -1, 0, sock="/tmp/inagg-py-no-such.sock")
    raises(ValueError, inagg.PS.join, 2**40, sock="/tmp/inagg-py-no-such.sock")
    with inagg.Worker(1, 0, 1, "127.0.0.1", "127.0.0.1") as w:
        e = raises(ValueError, w.configure, retries=-1)
        assert str(e).startswith("retries -1: need an integer"), e
        raises(ValueError, w.configure, window=2.5)
        w.configure(window=np.int64(8), retries=3)   # numpy and plain ints pass
    # Text arguments that are not text raised AttributeError from ctypes' encode.
    for args in ((1, 0, 1, 5, "127.0.0.1"), (1, 0, 1, "127.0.0.1", b"127.0.0.1")):
        e = raises(ValueError, inagg.Worker, *args)
        assert "need a string" in str(e), e
    raises(ValueError, inagg.PS, 1, 1, "127.0.0.1", down=10)
    e = raises(ValueError, inagg.Worker.join, 1, 0, sock=5)
    assert str(e) == "sock 5: need a string", e
    import pathlib
    e = raises(inagg.JobRefused, inagg.Worker.join, 1, 0,
               sock=pathlib.Path("/tmp/inagg-py-no-such.sock"))
    assert "cannot reach inaggd" in str(e), e
    # A closed handle's nworkers and index were -22 (-EINVAL), as if numbers.
    w = inagg.Worker(1, 0, 3, "127.0.0.1", "127.0.0.1")
    assert w.nworkers == 3
    w.close()
    raises(ValueError, lambda: w.nworkers)
    raises(ValueError, lambda: w.index)


def test_entry_points_fail_in_one_line():
    # python3 -m inagg.launch / inagg.ps without a daemon printed a traceback.
    pypath = os.path.join(os.path.dirname(__file__), "..", "..", "python")
    env = dict(os.environ, PYTHONPATH=pypath)
    sock = "/tmp/inagg-py-no-such.sock"
    for mod, args, want in (
            ("inagg.launch", ["--job", "1", "--sock", sock, "x.py"],
             "python3 -m inagg.launch: cannot reach inaggd at " + sock),
            ("inagg.ps", ["--job", "1", "--sock", sock],
             "python3 -m inagg.ps: job 1 refused: cannot reach inaggd at " + sock),
            ("inagg.ps", ["--job", "-1", "--sock", sock],
             "python3 -m inagg.ps: job -1: need an integer")):
        r = subprocess.run([sys.executable, "-m", mod] + args, env=env, capture_output=True,
                           text=True, timeout=60)
        lines = r.stderr.splitlines()
        assert r.returncode == 1 and len(lines) == 1 and lines[0].startswith(want), \
            (mod, args, r.returncode, r.stderr)


def test_request_without_an_answer():
    # A daemon that accepts and closes without answering gave a JSONDecodeError.
    import socket
    from inagg import net
    path = f"/tmp/inagg-py-close-{PID}.sock"
    srv = socket.socket(socket.AF_UNIX)
    srv.bind(path)
    srv.listen(1)

    def close_one():
        c, _ = srv.accept()
        while c.recv(65536):  # the whole request, then no answer
            pass
        c.close()
    t = threading.Thread(target=close_one)
    t.start()
    try:
        e = raises(inagg.JobRefused, net.request, {"cmd": "list"}, path)
        assert "no answer" in str(e), e
    finally:
        t.join()
        srv.close()
        os.unlink(path)


def test_debug_prints_a_line_per_call():
    # INAGG_DEBUG=1: each call's counters on stderr (why was it slow?); unset: silence.
    pypath = os.path.join(os.path.dirname(__file__), "..", "..", "python")
    code = (
        "import numpy as np, inagg\n"
        f"p = inagg.PS(40, 1, '{PS_ADDR}', port={PORT + 1}).start()\n"
        f"with inagg.Worker(40, 0, 1, '{waddr(0)}', '{PS_ADDR}', port={PORT + 1}) as w:\n"
        "    a = np.arange(2000, dtype=np.int32)\n"
        "    w.allreduce(a)\n"
        "    w.allreduce(a)\n"
        "    assert a[1999] == 1999\n"
        "p.stop()\n")
    for debug, want in (("1", 2), ("0", 0), ("", 0)):
        r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           env=dict(os.environ, PYTHONPATH=pypath, INAGG_DEBUG=debug),
                           timeout=60)
        assert r.returncode == 0, r.stderr
        lines = [x for x in r.stderr.splitlines() if x.startswith("inagg: job 40 worker 0")]
        assert len(lines) == want, (debug, r.stderr)
        ps = [x for x in r.stderr.splitlines() if x.startswith("inagg: job 40 PS: ret 0")]
        assert len(ps) == (want > 0) and (not ps or "results 16" in ps[0]), (debug, r.stderr)
        for i, x in enumerate(lines):
            # 2,000 elements and the tag in chunks of 256: 8 results.
            assert f"call {i}: ret 0" in x and "results 8 (dup 0)" in x, x


def test_library_exports_only_the_api():
    from inagg import _lib
    syms = subprocess.run(["nm", "-D", "--defined-only", _lib._find_library()],
                          capture_output=True, text=True, check=True).stdout.split("\n")
    names = [l.split()[-1].split("@")[0] for l in syms if l.strip()]
    names = [x for x in names if not x.startswith("INAGG_")]	# version nodes
    assert names and all(x.startswith("ia_api_") for x in names), names


sys.exit(run([test_frac_for_is_the_largest_safe_scale, test_unsafe_scales_refused,
              test_exponent_scale_never_wraps, test_fixed_sum_within_bound,
              test_int32_and_int64_exact, test_hook_agrees_on_a_scale_and_resends_once,
              test_float_allreduce_in_c_within_the_bound,
              test_float_allreduce_refuses_non_finite_and_bad_arrays,
              test_hook_returns_at_once_and_completes_in_bucket_order,
              test_hook_refuses_non_finite_gradients, test_errors_as_exceptions,
              test_exact_at_every_chunk_size,
              test_out_of_range_integers_refused, test_entry_points_fail_in_one_line,
              test_request_without_an_answer, test_debug_prints_a_line_per_call,
              test_library_exports_only_the_api]))
