#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The main job for now: the paper's Fig. 1 instance (7-switch complete binary
# tree, leaf loads 2,6,5,5, all rates 1, k=2) placed with every algorithm,
# beside the congestion the paper reports, and the SMC placement drawn.
# Usage: scripts/demo.sh BUILD_DIR
set -e
build=${1:-build}
inagg=$build/inagg
out=$build/demo
mkdir -p "$out"
topo=$out/fig1.json

cat >"$topo" <<'JSON'
{"switches": [
  {"name": "s0", "parent": null, "rate": 1, "load": 0},
  {"name": "s1", "parent": "s0", "rate": 1, "load": 0},
  {"name": "s2", "parent": "s0", "rate": 1, "load": 0},
  {"name": "s3", "parent": "s1", "rate": 1, "load": 2},
  {"name": "s4", "parent": "s1", "rate": 1, "load": 6},
  {"name": "s5", "parent": "s2", "rate": 1, "load": 5},
  {"name": "s6", "parent": "s2", "rate": 1, "load": 5}
]}
JSON

# What Fig. 1 and Sec. III of the paper report (all-red/all-blue/brute follow
# from the model: 18 messages reach d unaggregated, 1 when all aggregate, and
# brute force must match SMC's optimum).
declare -A paper=([top]=8 [max]=9 [level]=6 [smc]=5 [all-red]=18 [all-blue]=1 [brute]=5)
k=2
echo "Fig. 1 instance ($topo), k=$k"
printf '%-10s %10s %6s  %s\n' algorithm congestion paper "blue switches"
bad=0
for a in top max level smc smc-naive all-red all-blue brute; do
	res=$("$inagg" place -t "$topo" -k $k -a $a)
	cong=$(awk '$1 == "congestion" { print $2 }' <<<"$res")
	blue=$(awk '$1 == "blue" { $1 = ""; $2 = ""; print }' <<<"$res")
	want=${paper[$a]:-${paper[smc]}}
	mark=
	[ "$cong" = "$want" ] || { mark="  <-- differs"; bad=1; }
	printf '%-10s %10s %6s %s%s\n' "$a" "$cong" "$want" "$blue" "$mark"
done

"$inagg" topo dot -t "$topo" -p smc -k $k -o "$out/fig1-smc.dot"
echo "DOT of the SMC placement: $out/fig1-smc.dot"
if command -v dot >/dev/null; then
	dot -Tpng "$out/fig1-smc.dot" -o "$out/fig1-smc.png"
	echo "PNG: $out/fig1-smc.png"
else
	echo "graphviz 'dot' not installed: no PNG"
fi
[ $bad -eq 0 ] || { echo "demo: congestion differs from the paper" >&2; exit 1; }
