# SPDX-License-Identifier: GPL-2.0
"""Workers and the PS of an inagg job: Python handles over include/inagg/api.h."""
import ctypes
import errno
import operator
import os
import threading

import numpy as np

from . import _lib
from ._lib import check


def _enc(name, s, path=False):
    """A text argument for the C API (a path may be os.PathLike): anything else raised
    AttributeError (an address 5, a socket path as bytes)."""
    if s is None:
        return None
    if path and isinstance(s, os.PathLike):
        s = os.fspath(s)
    if not isinstance(s, str):
        raise ValueError(f"{name} {s!r}: need a string")
    return s.encode()


def _uint(name, v, bits):
    """v itself, if the C parameter of `bits` bits holds it: ctypes would wrap
    -1 to 2^bits - 1 and 2^33 to 2, and the library then checks another number."""
    try:
        n = None if isinstance(v, bool) else operator.index(v)
    except TypeError:
        n = None
    if n is None or not 0 <= n < 1 << bits:
        raise ValueError(f"{name} {v!r}: need an integer in 0..{(1 << bits) - 1}")
    return n


class _Handle:
    def __init__(self, opener, *args):
        self._lib = _lib.lib()
        self._h = ctypes.c_void_p()
        self._err = ctypes.create_string_buffer(_lib.ERRLEN)
        check(opener(self._lib)(*args, ctypes.byref(self._h), self._err, _lib.ERRLEN),
              self._err)

    def set(self, opt, value, name="value"):
        value = _uint(name, value, 64)
        check(self._lib.ia_api_set(self._h, opt, value, self._err, _lib.ERRLEN), self._err)
        return self

    def configure(self, retries=None, timeout_ms=None, window=None, capacity=None,
                  chunk=None):
        """Retries per chunk, shortest resend wait, chunks in flight, stream length,
        elements per message (the PS's and every worker's the same; 768 needs
        links of MTU 3130)."""
        for opt, name, v in ((_lib.OPT_RETRIES, "retries", retries),
                             (_lib.OPT_TIMEOUT_MS, "timeout_ms", timeout_ms),
                             (_lib.OPT_WINDOW, "window", window),
                             (_lib.OPT_CAPACITY, "capacity", capacity),
                             (_lib.OPT_CHUNK, "chunk", chunk)):
            if v is not None:
                self.set(opt, v, name)
        return self

    def _open(self):
        """The handle; a closed one gave -EINVAL as its nworkers and index."""
        if not self._h:
            raise ValueError("closed handle")
        return self._h

    @property
    def nworkers(self):
        return self._lib.ia_api_nworkers(self._open())

    def close(self):
        if self._h:
            self._lib.ia_api_close(self._h)
            self._h = ctypes.c_void_p()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass


class Worker(_Handle):
    """One worker of a job. Worker.join() asks inaggd; Worker(...) needs no daemon."""

    def __init__(self, job, id, nworkers, addr, ps, port=0):
        super().__init__(lambda so: so.ia_api_worker_open, _uint("job", job, 32),
                         _uint("id", id, 32), _uint("nworkers", nworkers, 32),
                         _enc("addr", addr), _enc("ps", ps), _uint("port", port, 16))

    @classmethod
    def join(cls, job, index, sock=None):
        """Worker number index of job, as inaggd lists them (run in its namespace)."""
        self = cls.__new__(cls)
        _Handle.__init__(self, lambda so: so.ia_api_worker_join, _enc("sock", sock, path=True),
                         _uint("job", job, 32), _uint("index", index, 32))
        return self

    @property
    def index(self):
        return self._lib.ia_api_index(self._open())

    def allreduce(self, v):
        """In place: v (a C-contiguous int32 or int64 numpy array) becomes the sum
        over the job's workers (modulo 2^32 or 2^64). Returns v."""
        if not isinstance(v, np.ndarray) or not v.flags.c_contiguous or not v.flags.writeable:
            raise ValueError("allreduce: a writeable C-contiguous numpy array")
        if v.dtype == np.int32:
            f = self._lib.ia_api_allreduce_i32
        elif v.dtype == np.int64:
            f = self._lib.ia_api_allreduce_i64
        else:
            raise ValueError(f"allreduce: int32 or int64 elements, not {v.dtype} "
                             "(floats: inagg.fixed)")
        check(f(self._h, v.ctypes.data, v.size, self._err, _lib.ERRLEN), self._err)
        return v


    def allreduce_f32(self, v, rank, exponent, mean=False):
        """In place: v (a C-contiguous float32 numpy array) becomes the sum (or the
        mean) over the job's workers through fixed point at the scale of the agreed
        exponent (every |v| < 2^exponent; docs/pytorch.md). Returns (ok, emax,
        frac): ok False when some worker reached 2^exponent (v unchanged: call again
        with emax, as every worker does), emax the largest exponent reported."""
        if not isinstance(v, np.ndarray) or v.dtype != np.float32 or \
                not v.flags.c_contiguous or not v.flags.writeable:
            raise ValueError("allreduce_f32: a writeable C-contiguous float32 numpy array")
        e, f = ctypes.c_int(exponent), ctypes.c_int(0)
        ret = self._lib.ia_api_allreduce_f32(self._open(), v.ctypes.data, v.size, rank,
                                             ctypes.byref(e), ctypes.byref(f),
                                             _lib.F32_MEAN if mean else 0, self._err,
                                             _lib.ERRLEN)
        if ret == -errno.ERANGE:
            return False, e.value, f.value
        check(ret, self._err)
        return True, e.value, f.value

    def phases(self):
        """Seconds of the last allreduce_f32's encode, network and decode."""
        ns = (ctypes.c_uint64 * 3)()
        self._lib.ia_api_phase_ns(self._open(), ns)
        return dict(zip(("encode", "net", "decode"), (x / 1e9 for x in ns)))


class PS(_Handle):
    """The destination of a job. PS.join() asks inaggd; PS(...) needs no daemon
    (down=None: results to each worker, for networks without switches)."""

    def __init__(self, job, nworkers, addr, down=None, port=0):
        super().__init__(lambda so: so.ia_api_ps_open, _uint("job", job, 32),
                         _uint("nworkers", nworkers, 32), _enc("addr", addr),
                         _enc("down", down),
                         _uint("port", port, 16))
        self._stop = ctypes.c_int(0)
        self._thread = None
        self.error = None

    @classmethod
    def join(cls, job, sock=None):
        self = cls.__new__(cls)
        _Handle.__init__(self, lambda so: so.ia_api_ps_join, _enc("sock", sock, path=True),
                         _uint("job", job, 32))
        self._stop = ctypes.c_int(0)
        self._thread = None
        self.error = None
        return self

    def serve(self):
        """Serves the job until stop() (from another thread or a signal handler)."""
        err = ctypes.create_string_buffer(_lib.ERRLEN)
        check(self._lib.ia_api_ps_serve(self._h, ctypes.byref(self._stop), err, _lib.ERRLEN),
              err)

    def start(self):
        """serve() in a thread; errors are kept in .error and raised by stop()."""
        def run():
            try:
                self.serve()
            except Exception as e:  # handed to stop()
                self.error = e
        self._thread = threading.Thread(target=run, daemon=True)
        self._thread.start()
        return self

    def stop(self):
        self._stop.value = 1
        if self._thread:
            self._thread.join()
            self._thread = None
        if self.error:
            raise self.error
