# SPDX-License-Identifier: GPL-2.0
"""inagg for Python: all-reduce through an inagg network (docs/pytorch.md).

inagg.Worker and inagg.PS bind libinagg.so's stable API; inagg.fixed sums
reals as fixed point with a bound that never wraps; inagg.ddp is a
DistributedDataParallel communication hook (imports torch).
"""
__version__ = "0.1.0"

from ._lib import InaggError, JobRefused, Mismatch, Unreachable, WrapRisk
from ._lib import TimeoutError_ as Timeout
from .core import PS, Worker

__all__ = ["Worker", "PS", "InaggError", "JobRefused", "Mismatch", "Timeout", "Unreachable",
           "WrapRisk"]
