#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make bench: float32 all-reduce through inagg (k = 1, 2, 4, all red) against Gloo, live.
exec /usr/bin/python3 -u "$(dirname "$0")/pytorch_bench.py"
