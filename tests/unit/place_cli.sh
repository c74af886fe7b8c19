#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# inagg topo place at scale and its limits, inagg eval --metric (KTAP). Needs $BUILD/inagg.
. "$(dirname "$0")/../lib/cli.sh"

# --links: all by default on small trees, congested above 1024 switches, none on request.
links_default() {
	"$INAGG" -j topo place -t "$fig1" -k 2 >"$tmp/o" || return 1
	grep -q '"links_shown": "all"' "$tmp/o" && [ "$(grep -c '{"switch": ' "$tmp/o")" -eq 7 ] || return 1
	"$INAGG" topo gen -d 10 -o "$tmp/big.json" || return 1
	"$INAGG" -j topo place -t "$tmp/big.json" -k 8 >"$tmp/o" || return 1
	grep -q '"links_shown": "congested"' "$tmp/o" || return 1
	# Every listed link is at the network congestion.
	want=$(sed -n 's/^  "congestion_exact": "\(.*\)",$/\1/p' "$tmp/o")
	[ -n "$want" ] && grep '{"switch": ' "$tmp/o" | grep -v "\"congestion_exact\": \"$want\"" | grep -q . && return 1
	[ "$(grep -c '{"switch": ' "$tmp/o")" -ge 1 ]
}
t "topo place --links: all on small trees, congested on large ones" links_default
links_choice() {
	"$INAGG" -j topo place -t "$fig1" -k 2 --links none >"$tmp/o" &&
		grep -q '"links": \[\]' "$tmp/o" &&
		"$INAGG" topo place -t "$fig1" -k 2 --links congested >"$tmp/t" &&
		[ "$(grep -cE '^s[0-9] ' "$tmp/t")" -eq 2 ] &&	# s5 and s6 at 5
		! "$INAGG" topo place -t "$fig1" -k 2 --links some 2>/dev/null
}
t "topo place --links none and congested; a bad value refused" links_choice

# The JSON stays valid with several placements streamed.
t "topo place -j -a all parses" bash -c \
	"'$INAGG' -j topo place -t '$fig1' -k 2 -a all | /usr/bin/python3 -c 'import json,sys; d=json.load(sys.stdin); assert len(d[\"placements\"]) == 8'"

# Brute force on 63 switches with k=10 says why, not "Argument list too long".
brute_big() {
	"$INAGG" topo gen -d 5 -o "$tmp/t63.json" || return 1
	! "$INAGG" topo place -t "$tmp/t63.json" -k 10 -a brute 2>"$tmp/e" || return 1
	grep -q 'too large for brute force' "$tmp/e" && ! grep -q 'Argument list' "$tmp/e" &&
		"$INAGG" topo place -t "$tmp/t63.json" -k 2 -a brute >/dev/null
}
t "topo place -a brute: too large instances refused with the reason" brute_big

# Names that could not name a namespace are refused at load, by every command.
bad_names() {
	for nm in 'a/b' 'a\nb' "$(head -c 100 /dev/zero | tr '\0' x)" dest; do
		printf '{"switches": [{"name": "%s", "parent": null, "load": 1}]}' "$nm" >"$tmp/n.json"
		! "$INAGG" topo place -t "$tmp/n.json" -k 1 2>"$tmp/e" || return 1
		grep -q 'field "name"' "$tmp/e" || return 1
		[ "$(wc -l <"$tmp/e")" -eq 1 ] || return 1
	done
}
t "switch names checked at load: '/', newline, 100 characters, dest" bad_names

# eval --metric: the paper's sum by default, the summed-link one on request.
EVAL="-d 4 --seeds 2 --nworkloads 1,2 -c 1,4 --multi-k 3 --cap-workloads 4"
metric() {
	"$INAGG" -j eval fig4 fig5 $EVAL >"$tmp/sum" &&
		"$INAGG" -j eval fig4 fig5 $EVAL --metric link >"$tmp/link" &&
		[ "$(grep -c '"metric": "sum"' "$tmp/sum")" -eq 2 ] &&
		[ "$(grep -c '"metric": "link"' "$tmp/link")" -eq 2 ] &&
		! cmp -s "$tmp/sum" "$tmp/link" &&
		grep -q '"smc_sd": ' "$tmp/sum" &&
		! "$INAGG" eval fig4 --metric worst 2>/dev/null
}
t "eval --metric sum (default) and link; standard deviations in JSON" metric
# With capacity >= workloads (4 here), nothing constrains one workload by
# another: the paper's metric cannot get worse with more capacity.
capacity_enough() {
	/usr/bin/python3 - "$tmp/sum" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for block in d["fig5"]["vs_all_red"]:
    rows = block["rows"]
    assert rows[-1]["smc"] <= rows[0]["smc"] + 1e-12, rows
PY
}
t "eval fig5, sum: capacity 4 no worse than 1 for SMC" capacity_enough
plots() {
	"$INAGG" eval fig2 fig4 $EVAL -k 1,2 --plot "$tmp/p" >/dev/null 2>&1 || return 1
	[ -s "$tmp/p/fig2-red-exp-uniform.dat" ] && grep -q 'smc_sd' "$tmp/p/fig2-red-exp-uniform.dat" &&
		grep -q 'yerrorlines' "$tmp/p/plots.gp"
}
t "eval --plot: all-red-normalised Fig. 2, error bars" plots

finish
