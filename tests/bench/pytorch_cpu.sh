#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make bench: where the end hosts' CPU of the float32 all-reduce goes (docs/allreduce.md §8).
# The 8-worker tree, 16M elements, Gloo and inagg at congestion 1 (k = 5), 3 interleaved rounds,
# under a system-wide perf record; tests/bench/cpu_split.py puts every sample of a host process
# inside a timed call in a class (user, system calls, its own receive softirq, the switches'
# softirq charged to it) and prints CPU s per GB of vector. BENCH_SIZES, BENCH_CONFIGS override.
set -e
dir=$(dirname "$0")
command -v perf >/dev/null || { echo "pytorch_cpu: no perf (Debian: linux-perf)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
hz=499
BENCH_STAMPS=$tmp/stamps BENCH_SIZES=${BENCH_SIZES:-16777216} BENCH_CONFIGS=${BENCH_CONFIGS:-k5} \
	BENCH_ROUNDS=${BENCH_ROUNDS:-3} BENCH_PLOT=$tmp \
	perf record -q -a -g -k mono -F $hz -o "$tmp/perf.data" -- \
	/usr/bin/python3 -u "$dir/pytorch_bench.py"
perf script -i "$tmp/perf.data" -F comm,tid,time,ip,sym 2>/dev/null |
	python3 "$dir/cpu_split.py" "$tmp/stamps" $hz
