#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make bench: float32 all-reduce through inagg (all red, SMC at every k up to congestion 1)
# against Gloo, live: the even tree of docs/pytorch.md at three sizes, an uneven tree where
# k changes the placement, and a wider one (16 workers). BENCH_TREES overrides the list.
set -e
bench=$(dirname "$0")/pytorch_bench.py
for tree in ${BENCH_TREES:-2,2,2,2:1048576,4194304,16777216 4,2,1,1:4194304 4,4,4,4:4194304}; do
	echo "== tree ${tree%%:*} (workers per leaf), elements ${tree#*:}"
	BENCH_LOADS=${tree%%:*} BENCH_SIZES=${BENCH_SIZES:-${tree#*:}} \
		/usr/bin/python3 -u "$bench"
done
