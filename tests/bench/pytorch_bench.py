# SPDX-License-Identifier: GPL-2.0
"""All-reduce of float32 vectors (1M, 4M, 16M elements) on a live two-level
tree with rate-limited, oversubscribed uplinks: through inagg with SMC at
k = 1, 2, 4, through inagg with every switch red (the PS does it all), and
through Gloo's all-reduce (TCP, ring) over the same namespaces and links.
inaggd runs with -K, so that inagg's upward messages pass the same tbf
qdiscs as Gloo's TCP (docs/net.md). Interleaved rounds; median and range of
the times and of the per-round ratios to Gloo and to all red.

Environment: BENCH_SIZES (comma list, default 1048576,4194304,16777216),
BENCH_LOADS (workers per leaf, default 2,2,2,2),
BENCH_ROUNDS (3), BENCH_MBIT (uplink rate, 200), BENCH_PLOT (directory
for pytorch_bench.dat/.gp/.png, default build/bench)."""
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "python"))
from inagg import net  # noqa: E402

# Root s0 above four leaves (BENCH_LOADS workers each, default 2); every uplink at rate 1 x MBIT,
# so that a leaf's hosts (and the root's four leaves) share one uplink: oversubscribed. With even
# loads SMC makes the root alone blue for k = 1, 2, 4; BENCH_LOADS=4,2,1,1 makes k matter
# (model congestion 4, 2, 1).
LOADS = [int(x) for x in os.environ.get("BENCH_LOADS", "2,2,2,2").split(",")]
TOPO = {"switches": [{"name": "s0", "parent": None, "capacity": 4}] + [
    {"name": f"s{i + 1}", "parent": "s0", "load": n, "capacity": 4} for i, n in enumerate(LOADS)]}
SIZES = [int(x) for x in os.environ.get("BENCH_SIZES", "1048576,4194304,16777216").split(",")]
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "3"))
MBIT = float(os.environ.get("BENCH_MBIT", "200"))
PLOT = os.environ.get("BENCH_PLOT", os.path.join(net.ROOT, "build", "bench"))
PY = "/usr/bin/python3"


def run(live, jobs, out, port=29600):
    info = net.show(next(iter(jobs.values())), live.sock)
    workers = info["workers"]
    cfg = {"jobs": jobs, "sock": live.sock, "sizes": SIZES, "rounds": ROUNDS, "out": out,
           "capacity": 1 << 30}
    env = dict(os.environ, PYTHONPATH=os.path.join(net.ROOT, "python"),
               WORLD_SIZE=str(len(workers) + 1), MASTER_ADDR=workers[0]["address"],
               MASTER_PORT=str(port), GLOO_SOCKET_IFNAME="eth0", OMP_NUM_THREADS="1",
               BENCH_CFG=json.dumps(cfg))
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "pytorch_worker.py")
    nss = [w["netns"] for w in workers] + [info["destination"]["netns"]]
    procs = [subprocess.Popen(net.in_ns(ns, [PY, script]), env=dict(env, RANK=str(r)))
             for r, ns in enumerate(nss)]
    try:
        rcs = [p.wait() for p in procs]
    finally:
        for p in procs:
            if p.poll() is None:
                p.send_signal(signal.SIGKILL)
                p.wait()
    if any(rcs):
        raise SystemExit(f"bench processes exited {rcs}")
    with open(out) as f:
        return json.load(f)


def fmt_range(xs, f="{:.3f}"):
    return f"{f.format(statistics.median(xs))} ({f.format(min(xs))}-{f.format(max(xs))})"


def report(times, models):
    names = ["gloo", "all-red", "k1", "k2", "k4"]
    t = {(x["size"], x["round"], x["config"]): x["seconds"] for x in times}
    print(f"# uplinks {MBIT:g} Mbit/s (tbf), {ROUNDS} interleaved rounds; model congestion "
          "(messages per chunk on the worst uplink): " +
          ", ".join(f"{k} {v}" for k, v in models.items()))
    print(f"{'elements':>9} {'config':>8} {'median s (range)':>24} "
          f"{'x Gloo (median, range)':>26} {'x all red':>22}")
    rows = []
    for size in SIZES:
        for name in names:
            secs = [t[(size, r, name)] for r in range(ROUNDS)]
            vs_g = [t[(size, r, name)] / t[(size, r, "gloo")] for r in range(ROUNDS)]
            vs_r = [t[(size, r, name)] / t[(size, r, "all-red")] for r in range(ROUNDS)]
            print(f"{size:>9} {name:>8} {fmt_range(secs):>24} {fmt_range(vs_g, '{:.2f}'):>26} "
                  f"{fmt_range(vs_r, '{:.2f}'):>22}")
            rows.append((size, name, statistics.median(secs), min(secs), max(secs)))
    return rows


def plot(rows):
    os.makedirs(PLOT, exist_ok=True)
    dat = os.path.join(PLOT, "pytorch_bench.dat")
    names = ("gloo", "all-red", "k1", "k2", "k4")
    # One block per configuration (gnuplot's index), so that each one's points join.
    with open(dat, "w") as f:
        for name in names:
            f.write(f"# {name}: elements median min max (seconds)\n")
            for size, n, med, lo, hi in rows:
                if n == name:
                    f.write(f"{size} {med:.4f} {lo:.4f} {hi:.4f}\n")
            f.write("\n\n")
    gp = os.path.join(PLOT, "pytorch_bench.gp")
    with open(gp, "w") as f:
        f.write(f"set terminal pngcairo size 800,500\nset output '{PLOT}/pytorch_bench.png'\n"
                "set logscale xy\nset xlabel 'float32 elements'\nset ylabel 'all-reduce seconds'\n"
                "set key left top\n"
                f"set title 'all-reduce, {sum(LOADS)} workers, uplinks {MBIT:g} Mbit/s'\nplot " +
                ", ".join(f"'{dat}' index {i} using 1:2:3:4 with yerrorlines title '{n}'"
                          for i, n in enumerate(names)) + "\n")
    if subprocess.run(["gnuplot", gp], stderr=subprocess.DEVNULL).returncode == 0:
        print(f"# plot: {PLOT}/pytorch_bench.png")


def main():
    # SIGTERM (a timeout) still kills the processes and takes the network down.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit("pytorch_bench: terminated"))
    out = tempfile.mktemp(prefix="inagg-bench-", suffix=".json")
    t0 = time.monotonic()
    with net.LiveNet(TOPO, rate_mbit=MBIT, kernel_fwd=True) as live:
        jobs, models = {}, {}
        for name, k, algo in (("all-red", 0, "all-red"), ("k1", 1, "smc"), ("k2", 2, "smc"),
                              ("k4", 4, "smc")):
            j = live.submit(k, algo)
            jobs[name] = j["job"]
            models[name] = j["congestion"]
        times = run(live, jobs, out)
    os.unlink(out)
    plot(report(times, models))
    print(f"# {time.monotonic() - t0:.0f} s in all")


if __name__ == "__main__":
    main()
