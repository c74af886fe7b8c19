# SPDX-License-Identifier: GPL-2.0
"""Where the end hosts' CPU of tests/bench/pytorch_bench.py goes (docs/allreduce.md §8).

Reads `perf script -F comm,tid,time,ip,sym` of a system-wide `perf record -g` on stdin
and the bench's stamps (BENCH_STAMPS: config, elements, start, end of each timed call)
from argv[1]. Each sample inside a call is put in one class by its stack: a host process's
user time, its system calls (send, receive, poll and wake-ups, other), and the softirq that
ran on its CPU while it was current, which this kernel's tick accounting (no IRQ time
accounting) charges to it: the host's own receive (local delivery: TCP, UDP), or the
switches' work (XDP, veth, redirects, kernel forwarding, tbf). Prints CPU seconds per GB of
vector for each class and configuration, and the host figure without the switches' work."""
import collections
import sys

SOFTIRQ = {"handle_softirqs", "__do_softirq", "net_rx_action", "net_tx_action"}
OWN_RX = {"tcp_v4_rcv", "__udp4_lib_rcv", "udp_rcv", "udp_queue_rcv_one_skb",
          "ip_local_deliver", "ip_local_deliver_finish", "tcp_tsq_handler", "tcp_pace_kick",
          "tcp_v4_early_demux", "udp_v4_early_demux", "sock_def_readable"}
SWITCH = {"veth_xdp_rcv", "xdp_do_redirect", "__dev_flush", "bq_xmit_all", "veth_xdp_xmit",
          "ip_forward", "ip_forward_finish", "net_tx_action", "ip_route_input_slow",
          "tbf_enqueue", "tbf_dequeue", "__qdisc_run"}
RX_ENTRY = {"ip_list_rcv", "ip_rcv", "ip_sublist_rcv"}
SEND = {"__sys_sendmmsg", "__sys_sendmsg", "__sys_sendto", "udp_sendmsg", "tcp_sendmsg"}
RECV = {"__sys_recvmmsg", "__sys_recvmsg", "__sys_recvfrom", "udp_recvmsg", "tcp_recvmsg"}
WAIT = {"do_sys_poll", "__x64_sys_ppoll", "do_epoll_wait", "futex_wait", "schedule"}
CLASSES = ["user", "sys send", "sys receive", "sys poll/wait", "sys other",
           "softirq own receive", "softirq switches", "softirq other"]
# softirq other: the receive path before the route decides (own or forwarded), skb frees.


def classify(syms, kernel_top):
    s = set(syms)
    if s & SOFTIRQ:
        if s & OWN_RX:
            return "softirq own receive"
        # Output from inside the receive path: forwarded (ip_forward is inlined there).
        if (s & SWITCH or any(x.startswith("bpf_prog") for x in syms) or
                ("ip_output" in s and s & RX_ENTRY)):
            return "softirq switches"
        return "softirq other"
    if not kernel_top:
        return "user"
    for cls, names in (("sys send", SEND), ("sys receive", RECV), ("sys poll/wait", WAIT)):
        if s & names:
            return cls
    return "sys other"


def samples(f):
    """(comm, time, [symbols], top frame in the kernel) per sample."""
    head, frames = None, []
    for line in list(f) + [""]:
        if not line.strip():
            if head and frames:
                yield head[0], head[1], [x[1] for x in frames], frames[0][0]
            head, frames = None, []
        elif not line.startswith(("\t", " ")):
            parts = line.split()
            try:
                head = (parts[0], float(parts[-1].rstrip(":")))
            except ValueError:
                head = None
        else:
            addr, _, sym = line.strip().partition(" ")
            frames.append((addr.startswith("ffffffff"), sym.split("+")[0]))


def main():
    calls = []
    with open(sys.argv[1]) as f:
        for line in f:
            name, size, t0, t1 = line.split()
            calls.append((float(t0), float(t1), name, int(size)))
    hz = float(sys.argv[2]) if len(sys.argv) > 2 else 499.0
    cnt = collections.Counter()
    for comm, t, syms, ktop in samples(sys.stdin):
        call = next((c for c in calls if c[0] <= t <= c[1]), None)
        if not call:
            continue
        host = comm.startswith(("python", "pt_", "gloo"))
        cls = classify(syms, ktop) if host else "not a host"
        cnt[(call[2], call[3], cls)] += 1
    keys = sorted({(c[2], c[3]) for c in calls}, key=lambda k: (k[1], k[0] != "gloo", k[0]))
    print("# host CPU seconds per GB of vector by class (perf samples at "
          f"{hz:g} Hz inside the timed calls)")
    print(f"{'elements':>9} {'config':>7} " + " ".join(f"{c:>10.10}" for c in CLASSES) +
          f" {'hosts':>7} {'w/o sw':>7}")
    for name, size in keys:
        n = sum(1 for c in calls if (c[2], c[3]) == (name, size))
        gb = n * 4 * size / 1e9
        v = {c: cnt[(name, size, c)] / hz / gb for c in CLASSES}
        hosts = sum(v.values())
        print(f"{size:>9} {name:>7} " + " ".join(f"{v[c]:>10.1f}" for c in CLASSES) +
              f" {hosts:>7.1f} {hosts - v['softirq switches']:>7.1f}")


if __name__ == "__main__":
    main()
