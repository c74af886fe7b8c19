#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The cluster simulation's JCT CDF (docs/cc.md "Cluster simulation"): one
# panel per file that `inagg eval tenants --sim --cluster --cdf FILE` wrote
# (a memory point each), one line per scheme, every job of every round.
# Usage: scripts/cluster-plot.sh OUT.svg|OUT.png CDF...
set -e
out=$1
[ -n "$out" ] && [ $# -ge 2 ] || { echo "usage: $0 OUT.svg CDF..." >&2; exit 2; }
shift
n=$#
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
{
	case "$out" in
	*.png) echo "set terminal png size 900,$((380 * n + 40))" ;;
	*) echo "set terminal svg size 900,$((380 * n + 40)) dynamic font 'sans,11'" ;;
	esac
	echo "set output '$out'"
	echo "set multiplot layout $n,1 title 'Cluster simulation: job completion times, every job of every round'"
	echo "set key right bottom"
	echo "set grid xtics ytics mxtics"
	echo "set logscale x"
	echo "set xlabel 'JCT (ms)'"
	echo "set ylabel 'fraction of jobs'"
	echo "set yrange [0:1]"
	for f in "$@"; do
		[ -s "$f" ] || { echo "$f: no CDF (inagg eval tenants --sim --cluster --cdf $f)" >&2; exit 1; }
		# "# mem M scheme S" heads each block: the panel's memory, the lines' titles
		mem=$(sed -n 's/^# mem \([^ ]*\) .*/\1/p' "$f" | head -1)
		echo "set title 'memory $mem of the heads of 4 jobs per leaf'"
		# at most about 400 points a line: the steps look the same, the SVG stays small
		k=$(( $(grep -c '^[0-9]' "$f") / (400 * $(grep -c '^# mem' "$f")) + 1 ))
		i=0
		sep="plot"
		for s in $(sed -n 's/^# mem [^ ]* scheme //p' "$f"); do
			printf "%s '%s' index %d every $k using 1:2 with steps lw 2 title '%s'" "$sep" "$f" "$i" "$s"
			sep=", \\
    "
			i=$((i + 1))
		done
		echo
	done
	echo "unset multiplot"
} > "$tmp/plot.gp"
gnuplot "$tmp/plot.gp"
echo "$out"
