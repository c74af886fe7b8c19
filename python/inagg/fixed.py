# SPDX-License-Identifier: GPL-2.0
"""Fixed point for summing reals as int32 through inagg.

A real x travels as round(x * 2^frac). N workers' values of magnitude at
most M sum without wrapping when

    N * (M * 2^frac + 1/2) < 2^31            (check_scale)

(the 1/2 is rounding), and the decoded sum is then within N * 2^-(frac+1)
of the exact real sum (error_bound). Knowing only that every |x| < 2^e,
frac = 30 - e - ceil(log2 N) is safe: N * 2^(e+frac) <= 2^30 and N/2 < 2^30
(frac_for_exponent). Anything outside the bound is refused with WrapRisk,
never encoded into a sum that could wrap.
"""
import errno
import math

import numpy as np

from ._lib import WrapRisk

LIMIT = 2.0 ** 31


def _need_workers(nworkers):
    if not isinstance(nworkers, (int, np.integer)) or nworkers < 1:
        raise ValueError(f"nworkers {nworkers!r}: at least 1")


def safe(frac, max_abs, nworkers):
    """Whether nworkers values of magnitude max_abs sum without wrap at frac."""
    _need_workers(nworkers)
    if not math.isfinite(max_abs) or max_abs < 0:
        return False
    return nworkers * (math.ldexp(max_abs, frac) + 0.5) < LIMIT


def check_scale(frac, max_abs, nworkers):
    """Raises WrapRisk unless the sum of nworkers values |x| <= max_abs cannot wrap."""
    if not safe(frac, max_abs, nworkers):
        raise WrapRisk(errno.ERANGE, f"scale 2^{frac} with {nworkers} workers and |x| up to "
                       f"{max_abs!r}: a sum could wrap (needs N * (max * 2^frac + 1/2) < 2^31)")


def frac_for(max_abs, nworkers, most=62):
    """The largest frac <= most at which check_scale() passes; WrapRisk if none."""
    _need_workers(nworkers)
    if not math.isfinite(max_abs) or max_abs < 0:
        raise WrapRisk(errno.ERANGE, f"|x| up to {max_abs!r}: not a finite bound")
    for f in range(most, -1, -1):
        if safe(f, max_abs, nworkers):
            return f
    raise WrapRisk(errno.ERANGE, f"{nworkers} values of magnitude {max_abs!r} do not fit "
                   "in a 32-bit sum even without fractional bits")


def ceil_log2(n):
    return max(0, (int(n) - 1).bit_length())


def exponent(max_abs):
    """The smallest e with max_abs < 2^e (at least -100)."""
    if not math.isfinite(max_abs):
        raise WrapRisk(errno.ERANGE, f"value {max_abs!r} is not finite")
    return max(-100, math.frexp(max_abs)[1]) if max_abs > 0 else -100


def frac_for_exponent(e, nworkers):
    """The scale at which nworkers values |x| < 2^e always sum without wrap."""
    _need_workers(nworkers)
    return 30 - e - ceil_log2(nworkers)


def error_bound(frac, nworkers):
    """Largest distance of a decoded sum of nworkers encoded values from the real sum."""
    return nworkers * math.ldexp(1.0, -(frac + 1))


def encode(x, frac, nworkers, out=None):
    """x (real numpy array) as int32 at frac; WrapRisk if a sum of nworkers such
    values could wrap or a value is not finite."""
    x = np.asarray(x, dtype=np.float64)
    m = float(np.max(np.abs(x))) if x.size else 0.0
    if not math.isfinite(m):
        raise WrapRisk(errno.ERANGE, "a value to sum is not finite (NaN or infinity)")
    check_scale(frac, m, nworkers)
    return encode_unchecked(x, frac, out)


def encode_unchecked(x, frac, out=None):
    """round(x * 2^frac), saturated to int32 (callers check the bound themselves)."""
    s = np.rint(np.ldexp(np.asarray(x, dtype=np.float64), frac))
    np.clip(s, -LIMIT, LIMIT - 1, out=s)
    if out is None:
        return s.astype(np.int32)
    out[...] = s
    return out


def decode(s, frac):
    """The reals of int32 sums s at frac (float64)."""
    return np.ldexp(np.asarray(s, dtype=np.float64), -frac)
