# SPDX-License-Identifier: GPL-2.0
"""The PS of an inagg job, until SIGTERM or SIGINT (run in the destination's
namespace): python3 -m inagg.ps --job J [--sock S] [--capacity ELEMENTS]
[--chunk ELEMENTS]"""
import argparse
import signal
import sys
import threading

from . import PS
from ._lib import InaggError


def main():
    ap = argparse.ArgumentParser(prog="python3 -m inagg.ps")
    ap.add_argument("--job", type=int, required=True)
    ap.add_argument("--sock", default=None)
    ap.add_argument("--capacity", type=int, default=None)
    ap.add_argument("--chunk", type=int, default=None,
                    help="elements per message, as the workers' (default 256)")
    a = ap.parse_args()
    try:
        serve(a)
    except (InaggError, ValueError) as e:
        # What the user must act on (no daemon, no such job), not a traceback.
        sys.exit(f"{ap.prog}: {e}")


def serve(a):
    ps = PS.join(a.job, a.sock).configure(capacity=a.capacity, chunk=a.chunk)

    done = threading.Event()
    # Python runs signal handlers in the main thread only: serve in another one.
    signal.signal(signal.SIGTERM, lambda *_: done.set())
    signal.signal(signal.SIGINT, lambda *_: done.set())
    ps.start()
    print(f"inagg ps: job {a.job}, {ps.nworkers} workers", file=sys.stderr)
    while not done.wait(0.2) and ps._thread.is_alive():
        pass
    ps.stop()


if __name__ == "__main__":
    main()
