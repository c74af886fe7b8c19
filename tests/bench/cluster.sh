#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make bench: the cluster simulation of issue 33 point 5 (docs/cc.md "Cluster
# simulation"). 200 jobs training ResNet-50, VGG-16, BERT-base or GPT-2
# (gradients scaled by 1/1024) arrive as a Poisson process on 32 leaves under
# 4 spines and aggregate at their leaves and spines; every scheme runs the
# same jobs of each round. For memory 0.25 and 0.5 and mean arrival gaps
# ARRIVALS (ms: loaded, near NetPack's tipping point, light), ROUNDS seeds:
# JCT per scheme and per model, flexina over netpack-atp and netpack-a2tp on
# mean JCT, p95 and makespan with bootstrap 95 % intervals, and the JCT CDF
# plot of each arrival gap ($BUILD/bench-cluster/cluster-jct-<gap>.svg; the
# 1 ms one is docs/cluster-jct.svg). Fails only when a run fails or a
# scheme leaves a slot free that a running job could have had (idle > 0).
# Measured here: 238 s in all (33-46 s a point, 2-5 s a round of 5 schemes).
BUILD=${BUILD:-build}
INAGG=$(realpath -m "$BUILD/inagg")
ROUNDS=${ROUNDS:-10}
ARRIVALS=${ARRIVALS:-1 1.5 2.5}
here=$(cd "$(dirname "$0")/../.." && pwd)
out=$BUILD/bench-cluster
mkdir -p "$out"
set -o pipefail
start=$(date +%s)
for a in $ARRIVALS; do
	cdfs=()
	for m in 0.25 0.5; do
		echo "== cluster, memory $m, mean arrival gap $a ms ($ROUNDS rounds)"
		"$INAGG" eval tenants --sim --cluster --mem "$m" --arrival-ms "$a" \
			--rounds "$ROUNDS" --cdf "$out/cdf-$m-$a.dat" | tee "$out/cluster-$m-$a.txt" ||
			exit 1
		# idle (8th column): slot-seconds a running job could have had a head in
		awk '$1 ~ /^(netpack|flexina|ht-)/ && NF == 14 && $8 != 0 { bad = 1 }
		     END { exit bad }' "$out/cluster-$m-$a.txt" ||
			{ echo "memory $m, gap $a: a scheme left usable memory idle" >&2; exit 1; }
		cdfs+=("$out/cdf-$m-$a.dat")
	done
	if command -v gnuplot > /dev/null; then
		"$here/scripts/cluster-plot.sh" "$out/cluster-jct-$a.svg" "${cdfs[@]}"
	fi
done
echo "cluster simulation: $(($(date +%s) - start)) s"
