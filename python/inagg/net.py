# SPDX-License-Identifier: GPL-2.0
"""inaggd's control socket from Python (one JSON request per connection,
user/lib/ctl/ctl.h) and a live network in namespaces for tests and benchmarks
(inagg net up --attach, then inaggd), torn down on exit."""
import errno
import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time

from ._lib import JobRefused

DEFAULT_SOCK = "/run/inagg/inaggd.sock"
ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))


# As the C client (user/lib/ctl/ctl.h, IA_CTL_WAIT_MS): a request may wait on its routers.
WAIT_S = int(os.environ.get("INAGG_CTL_TIMEOUT_MS") or 300000) / 1000


def request(req, sock=None):
    """inaggd's answer to req (a dict); JobRefused when it says no or cannot be reached."""
    path = sock or DEFAULT_SOCK
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(WAIT_S)
            s.connect(path)
            s.sendall(json.dumps(req).encode() + b"\n")
            s.shutdown(socket.SHUT_WR)
            data = b""
            while chunk := s.recv(65536):
                data += chunk
    except OSError as e:
        raise JobRefused(errno.ECONNREFUSED, f"cannot reach inaggd at {path}: {e}") from None
    try:
        resp = json.loads(data)
    except ValueError:
        # A daemon that closed without answering (it exited meanwhile), not a JSON error.
        raise JobRefused(errno.ECONNREFUSED,
                         f"inaggd at {path}: no answer ({len(data)} bytes, not JSON)") from None
    if not resp.get("ok"):
        raise JobRefused(errno.ECONNREFUSED, f"inaggd: {resp.get('error', 'no reason given')}")
    return resp


def submit(k, algorithm="smc", sock=None, **fields):
    return request({"cmd": "submit", "k": k, "algorithm": algorithm, **fields}, sock)["job"]


def show(job, sock=None):
    return request({"cmd": "show", "job": job}, sock)["job"]


def end(job, sock=None):
    return request({"cmd": "end", "job": job}, sock)


def in_ns(netns, argv):
    return ["ip", "netns", "exec", netns] + list(argv)


class LiveNet:
    """A topology up in namespaces ia-TAG-* with its daemon; down on exit.

    rate_mbit: tbf on every uplink (rate x MBIT); kernel_fwd: inaggd -K, so
    that upward inagg messages pass those qdiscs too (docs/net.md); mtu:
    every link's (larger chunks need more than 1500)."""

    def __init__(self, topo, tag=None, rate_mbit=None, kernel_fwd=False, build=None,
                 mtu=None):
        self.build = build or os.environ.get("BUILD") or os.path.join(ROOT, "build")
        self.tag = tag or f"p{os.getpid() % 10000000}"
        self.dir = tempfile.mkdtemp(prefix="inagg-py-")
        self.topo = os.path.join(self.dir, "topo.json")
        self.sock = os.path.join(self.dir, "inaggd.sock")
        with open(self.topo, "w") as f:
            json.dump(topo, f)
        self.rate_mbit, self.kernel_fwd, self.mtu = rate_mbit, kernel_fwd, mtu
        self.daemon = None
        self.env = dict(os.environ, INAGG_LEDGER="user", INAGG_LEDGER_DIR=self.dir)

    def __enter__(self):
        try:
            self.up()
        except BaseException:
            self.down()
            raise
        return self

    def __exit__(self, *exc):
        self.down()

    def up(self):
        cmd = [os.path.join(self.build, "inagg"), "net", "up", "-t", self.topo, "-n", self.tag,
               "--attach"]
        if self.rate_mbit:
            cmd += ["--rate-mbit", str(self.rate_mbit)]
        if self.mtu:
            cmd += ["--mtu", str(self.mtu)]
        subprocess.run(cmd, check=True, env=self.env, stdout=subprocess.DEVNULL)
        self.log = open(os.path.join(self.dir, "inaggd.log"), "w")
        cmd = [os.path.join(self.build, "inaggd"), "-t", self.topo, "-n", self.tag, "-s",
               self.sock, "-S", os.path.join(self.dir, "state.json")]
        if self.kernel_fwd:
            cmd.append("-K")
        self.daemon = subprocess.Popen(cmd, env=self.env, stderr=self.log)
        for _ in range(200):
            try:
                request({"cmd": "list"}, self.sock)
                return
            except JobRefused:
                if self.daemon.poll() is not None:
                    break
                time.sleep(0.05)
        raise RuntimeError(f"inaggd did not start (log: {self.log.name})")

    def down(self):
        if self.daemon and self.daemon.poll() is None:
            self.daemon.send_signal(signal.SIGTERM)
            self.daemon.wait()
        subprocess.run([os.path.join(self.build, "inagg"), "net", "down", "-n", self.tag, "-t",
                        self.topo], env=self.env, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
        shutil.rmtree(self.dir, ignore_errors=True)

    def submit(self, k, algorithm="smc", **fields):
        return submit(k, algorithm, self.sock, **fields)

    def end(self, job):
        return end(job, self.sock)
