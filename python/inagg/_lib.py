# SPDX-License-Identifier: GPL-2.0
"""ctypes binding of libinagg.so's stable API (include/inagg/api.h).

ctypes rather than a CPython extension: nothing to compile against Python's
headers (no python3-dev), the binding follows the C API's version instead of
the interpreter's ABI, and a call costs microseconds against an all-reduce's
milliseconds. ctypes releases the GIL during each call, so a PS and workers
can run as threads of one process (the tests do).
"""
import ctypes
import errno
import os

API_VERSION = 2
ERRLEN = 256

# Options of enum ia_api_opt.
OPT_RETRIES = 1
OPT_TIMEOUT_MS = 2
OPT_WINDOW = 3
OPT_CAPACITY = 4
OPT_CHUNK = 5
# Flags of ia_api_allreduce_f32().
F32_MEAN = 0x1


class InaggError(RuntimeError):
    """An inagg call failed; errno and the library's one-line reason."""

    def __init__(self, err, msg):
        super().__init__(f"{msg} ({errno.errorcode.get(err, err)})")
        self.errno = err


class TimeoutError_(InaggError, TimeoutError):
    """A chunk got no result after the retries: the PS or the network is gone. Also a
    builtin TimeoutError, so that "except TimeoutError" catches it."""


class Unreachable(InaggError):
    """No PS at the job's destination: its host said nothing listens there, or there is
    no such host (ICMP), and no result came for a second."""


class JobRefused(InaggError):
    """The daemon does not know the job, it is not active, or it cannot be reached."""


class WrapRisk(InaggError):
    """The fixed-point scale would let a sum wrap (or a value is not finite)."""


class Mismatch(InaggError):
    """The workers did not make the same all-reduce calls."""


def _find_library():
    # An installed package has no build/ beside it: the loader finds libinagg.so.1.
    env = os.environ.get("INAGG_LIB")
    if env:
        return env
    here = os.path.dirname(os.path.abspath(__file__))
    built = os.path.join(here, "..", "..", "build", "libinagg.so")
    if os.path.exists(built):
        return os.path.normpath(built)
    return "libinagg.so.1"


_lib = None


def lib():
    """The loaded library, checked for its API version."""
    global _lib
    if _lib is not None:
        return _lib
    path = _find_library()
    try:
        so = ctypes.CDLL(path)
    except OSError as e:
        raise InaggError(errno.ENOENT, f"cannot load libinagg ({path}): {e}; run make "
                         "(or make install) or set INAGG_LIB") from None
    so.ia_api_version.restype = ctypes.c_int
    if so.ia_api_version() != API_VERSION:
        raise InaggError(errno.EPROTO, f"{path}: API version {so.ia_api_version()}, "
                         f"this binding speaks {API_VERSION}")
    h = ctypes.c_void_p
    hp = ctypes.POINTER(ctypes.c_void_p)
    s, u32, u64, i = ctypes.c_char_p, ctypes.c_uint32, ctypes.c_uint64, ctypes.c_int
    e, n = ctypes.c_char_p, ctypes.c_size_t
    sig = {
        "ia_api_worker_join": [s, u32, u32, hp, e, n],
        "ia_api_ps_join": [s, u32, hp, e, n],
        "ia_api_worker_open": [u32, u32, u32, s, s, ctypes.c_uint16, hp, e, n],
        "ia_api_ps_open": [u32, u32, s, s, ctypes.c_uint16, hp, e, n],
        "ia_api_set": [h, i, u64, e, n],
        "ia_api_nworkers": [h],
        "ia_api_index": [h],
        "ia_api_allreduce_i32": [h, ctypes.c_void_p, u64, e, n],
        "ia_api_allreduce_i64": [h, ctypes.c_void_p, u64, e, n],
        "ia_api_allreduce_f32": [h, ctypes.c_void_p, u64, i, ctypes.POINTER(i),
                                 ctypes.POINTER(i), ctypes.c_uint, e, n],
        "ia_api_phase_ns": [h, ctypes.POINTER(u64)],
        "ia_api_ps_serve": [h, ctypes.POINTER(ctypes.c_int), e, n],
        "ia_api_close": [h],
    }
    for name, args in sig.items():
        f = getattr(so, name)
        f.argtypes = args
        f.restype = None if name == "ia_api_close" else ctypes.c_int
    _lib = so
    return so


_CLASSES = {
    errno.ETIMEDOUT: TimeoutError_,
    errno.ECONNREFUSED: JobRefused,
    errno.EHOSTUNREACH: Unreachable,
    errno.EPROTO: Mismatch,
    errno.EDOM: WrapRisk,
    errno.ERANGE: WrapRisk,
    errno.EINVAL: None,
}


def check(ret, buf):
    """Raises the exception of a negative errno return, with the library's reason."""
    if ret >= 0:
        return ret
    err, msg = -ret, buf.value.decode(errors="replace") or os.strerror(-ret)
    if err == errno.EINVAL:
        raise ValueError(msg)
    raise _CLASSES.get(err, InaggError)(err, msg)
