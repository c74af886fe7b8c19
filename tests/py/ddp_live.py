# SPDX-License-Identifier: GPL-2.0
"""A short live DDP run: 4 workers in the namespaces of a live inagg network
(two switches under a root, SMC placement by inaggd, k = 1), 2 epochs of the
digits MLP (python/examples/digits.py) with the inagg comm hook, every
gradient bucket also all-reduced through Gloo over the same links: at every
step of every worker the inagg gradient is within the fixed-point bound of
the exact (float64) sum and within that plus float32 rounding of Gloo's.
Then the same training through Gloo alone: final test accuracy within 1
point. Run under flock /tmp/inagg-net.lock (make check's net layers are)."""
import json
import os
import shutil
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "python"))
from inagg import launch, net  # noqa: E402
from ktap import run  # noqa: E402

TOPO = {"switches": [
    {"name": "s0", "parent": None, "capacity": 2},
    {"name": "s1", "parent": "s0", "load": 2, "capacity": 2},
    {"name": "s2", "parent": "s0", "load": 2, "capacity": 2}]}
EPOCHS = 2
SCRIPT = os.path.join(net.ROOT, "python", "examples", "digits.py")
tmp = tempfile.mkdtemp(prefix="inagg-ddp-")
res = {}


def train(live, job, backend, verify, port):
    out = os.path.join(tmp, f"{backend}.json")
    argv = [SCRIPT, "--epochs", str(EPOCHS), "--out", out] + (["--verify"] if verify else [])
    t0 = time.monotonic()
    rc = launch.run(job["job"], argv, live.sock, backend, port, timeout=300)
    print(f"# {backend}: {time.monotonic() - t0:.1f} s (4 processes start, train, end)")
    assert rc == 0, f"{backend} training exited {rc}"
    with open(out) as f:
        return json.load(f)


def test_live():
    t0 = time.monotonic()
    with net.LiveNet(TOPO) as live:
        print(f"# network up: {time.monotonic() - t0:.1f} s")
        job = live.submit(1)
        assert len(job["workers"]) == 4 and job["blue"], job
        res["inagg"] = train(live, job, "inagg", True, 29500)
        st = net.request({"cmd": "stats", "job": job["job"]}, live.sock)
        res["chunks"] = st.get("chunks", 0)
        res["ranks"] = []
        for r in range(4):
            with open(os.path.join(tmp, f"inagg.json.rank{r}")) as f:
                res["ranks"].append(json.load(f))
        live.end(job["job"])
        job = live.submit(1)
        res["gloo"] = train(live, job, "gloo", False, 29501)


def test_every_step_within_the_fixed_point_bound():
    steps = EPOCHS * res["inagg"]["steps_per_epoch"]
    worst = 0.0
    for r, rk in enumerate(res["ranks"]):
        assert rk["steps"] == steps, (r, rk["steps"], steps)
        assert {x["step"] for x in rk["records"]} == set(range(steps))
        for x in rk["records"]:
            assert x["err_exact"] <= x["bound"], (r, x)
            assert x["err_gloo"] <= x["bound_gloo"], (r, x)
            worst = max(worst, x["err_exact"] / x["bound"])
    print(f"# {steps} steps x 4 workers: largest error / bound {worst:.3g}")


def test_traffic_went_through_inagg():
    # Every step's bucket is one call of the stream: chunks the root saw.
    assert res["chunks"] >= EPOCHS * res["inagg"]["steps_per_epoch"], res["chunks"]


def test_accuracy_as_gloo():
    a, g = res["inagg"]["test_accuracy"][-1], res["gloo"]["test_accuracy"][-1]
    print(f"# test accuracy after {EPOCHS} epochs: inagg {a:.4f}, gloo {g:.4f}")
    assert abs(a - g) <= 0.01 and a > 0.5, (a, g)


status = run([test_live, test_every_step_within_the_fixed_point_bound,
              test_traffic_went_through_inagg, test_accuracy_as_gloo])
shutil.rmtree(tmp, ignore_errors=True)
sys.exit(status)
