#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Head and tail of switches over time, from inaggd's memory history
# (docs/memory.md): the "memory" object of `inagg -j stats show --history 4096`,
# as tests/net/tenants.c writes it. One panel per switch: the INA heads' own
# slots, their lent slots and the tail pool stacked, and the slots holding a
# live aggregation in heads and in the tail (sampled; the tail's estimated).
# Usage: scripts/memory-plot.sh HISTORY.json OUT.svg|OUT.png [SWITCH...]
set -e
in=$1 out=$2
[ -n "$in" ] && [ -n "$out" ] || { echo "usage: $0 HISTORY.json OUT.svg [SWITCH...]" >&2; exit 2; }
shift 2
[ $# -gt 0 ] || set -- s2 s0
[ -f "$in" ] || { echo "$in: no history (run the live test: flock /tmp/ia-net.lock build/tests/net/tenants)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0
for sw in "$@"; do
	# t (s), head kept (head - lent), head, head + tail, head live, tail held, tail stale
	jq -r --arg s "$sw" '.history[] | select(.[$s]) |
		[(.t_ms / 1000), (.[$s][0] - .[$s][3]), .[$s][0], (.[$s][0] + .[$s][2]),
		 .[$s][1], (.[$s][4] // 0), (.[$s][5] // 0)] | @tsv' "$in" > "$tmp/$sw.dat"
	[ -s "$tmp/$sw.dat" ] || { echo "$in: no samples of switch $sw" >&2; exit 1; }
	n=$((n + 1))
done
t0=$(cat "$tmp"/*.dat | sort -n | head -1 | cut -f1)
{
	case "$out" in
	*.png) echo "set terminal png size 900,$((260 * n + 40))" ;;
	*) echo "set terminal svg size 900,$((260 * n + 40)) dynamic font 'sans,11'" ;;
	esac
	echo "set output '$out'"
	echo "set multiplot layout $n,1 title 'Switch memory over time (slots): heads, lent slots, tail'"
	echo "set key outside right top vertical"
	echo "set grid ytics"
	echo "set ylabel 'slots'"
	echo "set style fill solid 0.35 noborder"
	i=0
	for sw in "$@"; do
		i=$((i + 1))
		[ $i -eq $n ] && echo "set xlabel 'time (s)'"
		f="$tmp/$sw.dat"
		echo "set title '$sw'"
		echo "plot '$f' using (\$1-$t0):(0):2 with filledcurves lc rgb '#3060c0' title 'INA heads, kept', \\"
		echo "     '$f' using (\$1-$t0):2:3 with filledcurves lc rgb '#80b0ff' title 'INA heads, lent to PS', \\"
		echo "     '$f' using (\$1-$t0):3:4 with filledcurves lc rgb '#f0b060' title 'tail pool', \\"
		echo "     '$f' using (\$1-$t0):5 with steps lw 2 lc rgb '#102060' title 'head slots live', \\"
		echo "     '$f' using (\$1-$t0):(\$3+\$6) with steps lw 2 lc rgb '#a04000' title 'tail slots held (est.)', \\"
		echo "     '$f' using (\$1-$t0):(\$3+\$7) with steps lw 1 dt 2 lc rgb '#600000' title '  of which stale (est.)'"
	done
	echo "unset multiplot"
} > "$tmp/plot.gp"
gnuplot "$tmp/plot.gp"
echo "$out"
