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
BENCH_ROUNDS (3), BENCH_CONFIGS (a comma list such as all-red,k5: only
these and Gloo), BENCH_MBIT (uplink rate, 200), BENCH_CHUNK (inagg's
elements per message, default 768: every link's MTU is raised to fit, for
Gloo's TCP too), BENCH_PLOT (directory for pytorch_bench.dat/.gp/.png,
default build/bench)."""
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
TOPO = {"switches": [{"name": "s0", "parent": None, "capacity": 16}] + [
    {"name": f"s{i + 1}", "parent": "s0", "load": n, "capacity": 16}
    for i, n in enumerate(LOADS)]}
SIZES = [int(x) for x in os.environ.get("BENCH_SIZES", "1048576,4194304,16777216").split(",")]
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "3"))
MBIT = float(os.environ.get("BENCH_MBIT", "200"))
CHUNK = int(os.environ.get("BENCH_CHUNK", "768"))
# IP packet of a chunk plus a flushed partial's member set (wire.h); never below Ethernet's.
MTU = max(1500, 20 + 8 + 22 + 4 * CHUNK + 8)
MSS = MTU - 52	# TCP with timestamps
PLOT = os.environ.get("BENCH_PLOT", os.path.join(net.ROOT, "build", "bench"))
PY = "/usr/bin/python3"


def run(live, jobs, out, port=29600):
    info = net.show(next(iter(jobs.values())), live.sock)
    workers = info["workers"]
    cfg = {"jobs": jobs, "sock": live.sock, "sizes": SIZES, "rounds": ROUNDS, "out": out,
           "capacity": 1 << 30, "chunk": CHUNK}
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


def frame_bytes(chunk):
    """Bytes a tbf counts for one inagg message of chunk elements (Ethernet, IP, UDP, inagg)."""
    return 14 + 20 + 8 + 22 + 4 * chunk


def link_bound(size, name, model, chunk):
    """Seconds the busiest uplink needs for this configuration's bytes in one direction.

    inagg: its model congestion (messages per chunk on the worst uplink, every rate 1) times
    the chunks of one call (the hook's N + 1 slots and the call tag ride along). Gloo's ring:
    2 (N - 1) / N vectors over a leaf uplink in TCP segments of MSS (MTU - 52; 66 bytes of
    Ethernet, IP, TCP with timestamps per segment)."""
    rate = MBIT * 1e6 / 8
    n = sum(LOADS)
    if name == "gloo":
        return 2 * (n - 1) / n * 4 * size * (MSS + 66) / MSS / rate
    chunks = -(-(size + n + 2) // chunk)
    return model * chunks * frame_bytes(chunk) / rate


def report(times, models, names, chunk):
    rows = {(x["size"], x["round"], x["config"]): x for x in times}
    print(f"# {sum(LOADS)} workers, leaves {LOADS}, uplinks {MBIT:g} Mbit/s (tbf), MTU {MTU}, "
          f"inagg chunks of {chunk} elements, {ROUNDS} "
          "interleaved rounds; model congestion (messages per chunk on the worst uplink): " +
          ", ".join(f"{k} {v}" for k, v in models.items()))
    print("# bound: bytes over the busiest uplink / its rate; host CPU: workers' and PS "
          "processes' user + system per GB of vector; softirq: the whole machine's per GB; idle: of all CPUs")
    print(f"{'elements':>9} {'config':>8} {'bound s':>7} {'median s (range)':>22} "
          f"{'x bound':>18} {'x Gloo':>18} {'host cpu s/GB':>13} {'softirq s/GB':>12} "
          f"{'encode/net/decode s':>20} {'idle':>5}")
    out = []
    for size in SIZES:
        gb = 4 * size / 1e9
        for name in names:
            rs = [rows[(size, r, name)] for r in range(ROUNDS)]
            secs = [x["seconds"] for x in rs]
            bound = link_bound(size, name, models.get(name, 0), chunk)
            vs_b = [t / bound for t in secs]
            vs_g = [x["seconds"] / rows[(size, r, "gloo")]["seconds"] for r, x in enumerate(rs)]
            cpu = statistics.median(x["host_cpu"] for x in rs) / gb
            sirq = statistics.median(x["softirq"] for x in rs) / gb
            ncpu = os.cpu_count()
            idle = statistics.median(x["idle"] / (ncpu * x["seconds"]) for x in rs)
            ph = "/".join(f"{statistics.median(x[k] for x in rs):.2f}"
                          for k in ("encode", "net", "decode"))
            print(f"{size:>9} {name:>8} {bound:>7.2f} {fmt_range(secs, '{:.2f}'):>22} "
                  f"{fmt_range(vs_b, '{:.2f}'):>18} {fmt_range(vs_g, '{:.2f}'):>18} "
                  f"{cpu:>13.1f} {sirq:>12.1f} {ph if name != 'gloo' else '-':>20} {idle:>5.0%}")
            out.append((size, name, statistics.median(secs), min(secs), max(secs), bound))
    return out


def plot(rows, names):
    """One plot per size: each configuration's median and range beside its link bound."""
    os.makedirs(PLOT, exist_ok=True)
    for size in SIZES:
        tag = f"{size}_{'-'.join(map(str, LOADS))}"
        dat = os.path.join(PLOT, f"pytorch_bench_{tag}.dat")
        with open(dat, "w") as f:
            f.write("# index config median min max bound (seconds)\n")
            for i, name in enumerate(names):
                for sz, n, med, lo, hi, bound in rows:
                    if sz == size and n == name:
                        f.write(f"{i} {name} {med:.4f} {lo:.4f} {hi:.4f} {bound:.4f}\n")
        gp = os.path.join(PLOT, f"pytorch_bench_{tag}.gp")
        png = os.path.join(PLOT, f"pytorch_bench_{tag}.png")
        with open(gp, "w") as f:
            f.write(f"set terminal pngcairo size 800,500\nset output '{png}'\n"
                    "set style fill solid 0.5\nset boxwidth 0.6\nset yrange [0:*]\n"
                    "set ylabel 'all-reduce seconds'\nset key left top\n"
                    f"set title '{size} float32, {sum(LOADS)} workers, uplinks {MBIT:g} Mbit/s'\n"
                    f"plot '{dat}' using 1:3:xtic(2) with boxes title 'median', "
                    f"'' using 1:3:4:5 with yerrorbars title 'range' lc rgb 'black', "
                    f"'' using 1:6 with points pt 7 title 'link bound'\n")
        if subprocess.run(["gnuplot", gp], stderr=subprocess.DEVNULL).returncode == 0:
            print(f"# plot: {png}")


def link_stats(live, jobs):
    """BENCH_STATS=1: what each uplink's tbf sent and dropped, and each job's messages per
    link beside the model (inagg stats show), over the whole run."""
    for sw in TOPO["switches"]:
        ns = f"ia-{live.tag}-{sw['name']}"
        q = subprocess.run(["ip", "netns", "exec", ns, "tc", "-s", "qdisc", "show", "dev", "up"],
                           capture_output=True, text=True).stdout
        print(f"# {sw['name']} up: " + " ".join(q.split()))
    # A host that drops a datagram for want of socket buffer (a PS or worker descheduled)
    # recovers it only by the resend timer.
    info = net.show(next(iter(jobs.values())), live.sock)
    for ns in sorted({w["netns"] for w in info["workers"]} | {info["destination"]["netns"]}):
        snmp = subprocess.run(["ip", "netns", "exec", ns, "cat", "/proc/net/snmp"],
                              capture_output=True, text=True).stdout.split("\n")
        udp = [x.split()[1:] for x in snmp if x.startswith("Udp:")]
        if len(udp) == 2:
            print(f"# {ns} udp: " + " ".join(f"{k} {v}" for k, v in zip(*udp)
                                             if k in ("InDatagrams", "InErrors",
                                                      "RcvbufErrors", "SndbufErrors")))
    for name, job in jobs.items():
        st = subprocess.run([os.path.join(live.build, "inagg"), "stats", "show", "-J", str(job),
                             "-S", live.sock], capture_output=True, text=True, env=live.env)
        print(f"# {name} (job {job}):\n" + "\n".join("#   " + x for x in
                                                   st.stdout.strip().split("\n")))


def main():
    # SIGTERM (a timeout) still kills the processes and takes the network down.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit("pytorch_bench: terminated"))
    out = tempfile.mktemp(prefix="inagg-bench-", suffix=".json")
    t0 = time.monotonic()
    # BENCH_KFWD=0 (a diagnosis, not a comparison): inagg's frames redirected by XDP,
    # past the tbf qdiscs, so that only Gloo's traffic is shaped.
    kfwd = os.environ.get("BENCH_KFWD", "1") != "0"
    with net.LiveNet(TOPO, rate_mbit=MBIT, kernel_fwd=kfwd, mtu=MTU) as live:
        jobs, models = {}, {}
        for name, k, algo in (("all-red", 0, "all-red"), ("all-blue", 0, "all-blue")):
            j = live.submit(k, algo)
            jobs[name], models[name] = j["job"], j["congestion"]
        # SMC at every k up to the first that reaches every switch blue's congestion.
        best = models.pop("all-blue")
        live.end(jobs.pop("all-blue"))
        for k in range(1, len(TOPO["switches"]) + 1):
            j = live.submit(k, "smc")
            jobs[f"k{k}"], models[f"k{k}"] = j["job"], j["congestion"]
            if j["congestion"] <= best:
                break
        # BENCH_CONFIGS (comma list) runs only these configurations, and Gloo.
        keep = os.environ.get("BENCH_CONFIGS")
        if keep:
            for name in [x for x in jobs if x not in keep.split(",")]:
                live.end(jobs.pop(name))
                models.pop(name)
        names = ["gloo"] + list(jobs)
        times = run(live, jobs, out)
        if os.environ.get("BENCH_STATS"):
            link_stats(live, jobs)
    os.unlink(out)
    plot(report(times, models, names, CHUNK), names)
    print(f"# {time.monotonic() - t0:.0f} s in all")


if __name__ == "__main__":
    main()
