# SPDX-License-Identifier: GPL-2.0
"""Runs a training script on every worker of an inagg job, each in its own
network namespace, and the job's PS in the destination's:

    python3 -m inagg.launch --job 1 [--sock S] [--backend inagg|gloo] SCRIPT [ARGS...]

Each worker process gets RANK, WORLD_SIZE, MASTER_ADDR (worker 0's
address), MASTER_PORT, GLOO_SOCKET_IFNAME=eth0, INAGG_JOB, INAGG_SOCK and
INAGG_BACKEND. With --backend gloo no PS runs: the same namespaces and
links carry Gloo's TCP instead. Exits with the first failing worker's status.
"""
import argparse
import os
import signal
import subprocess
import sys
import time

from . import net
from ._lib import InaggError

# The interpreter the launcher runs in (a venv's, conda's), so that the workers and the PS
# find the same packages (torch, numpy, inagg).
PY = sys.executable or "python3"


def run(job, script_argv, sock=None, backend="inagg", port=29500, env_extra=None,
        timeout=None):
    """Runs script_argv on every worker; its status (-1 when timeout seconds passed)."""
    info = net.show(job, sock)
    workers = info["workers"]
    pypath = os.path.join(net.ROOT, "python")
    base = dict(os.environ, PYTHONPATH=pypath + os.pathsep + os.environ.get("PYTHONPATH", ""),
                WORLD_SIZE=str(len(workers)), MASTER_ADDR=workers[0]["address"],
                MASTER_PORT=str(port), GLOO_SOCKET_IFNAME="eth0", INAGG_JOB=str(job),
                INAGG_SOCK=sock or net.DEFAULT_SOCK, INAGG_BACKEND=backend,
                OMP_NUM_THREADS="1", **(env_extra or {}))
    ps = None
    if backend == "inagg":
        ps = subprocess.Popen(net.in_ns(info["destination"]["netns"],
                                        [PY, "-m", "inagg.ps", "--job", str(job), "--sock",
                                         base["INAGG_SOCK"]]), env=base)
    procs = []
    try:
        for rank, w in enumerate(workers):
            procs.append(subprocess.Popen(net.in_ns(w["netns"], [PY] + list(script_argv)),
                                          env=dict(base, RANK=str(rank))))
        status = 0
        pending = list(procs)
        deadline = time.monotonic() + timeout if timeout else None
        while pending:
            if deadline and time.monotonic() > deadline:
                print(f"inagg.launch: workers still running after {timeout} s", file=sys.stderr)
                return -1
            for p in list(pending):
                rc = p.poll()
                if rc is None:
                    continue
                pending.remove(p)
                if rc and not status:
                    status = rc
                    # One worker failed: the others would wait for it forever.
                    for q in pending:
                        q.send_signal(signal.SIGTERM)
            time.sleep(0.05)
        return status
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
        if ps:
            ps.send_signal(signal.SIGTERM)
            ps.wait()


def main():
    ap = argparse.ArgumentParser(prog="python3 -m inagg.launch", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--job", type=int, required=True)
    ap.add_argument("--sock", default=None, help="inaggd's socket")
    ap.add_argument("--backend", choices=("inagg", "gloo"), default="inagg")
    ap.add_argument("--port", type=int, default=29500, help="Gloo's rendezvous port")
    ap.add_argument("--timeout", type=float, default=None, help="seconds before giving up")
    ap.add_argument("script", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    if not a.script:
        ap.error("no script to run")
    try:
        status = run(a.job, a.script, a.sock, a.backend, a.port, timeout=a.timeout)
    except (InaggError, ValueError) as e:
        # What the user must act on (no daemon, no such job), not a traceback.
        sys.exit(f"{ap.prog}: {e}")
    sys.exit(status)


if __name__ == "__main__":
    main()
