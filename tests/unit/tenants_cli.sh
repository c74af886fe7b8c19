#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# inagg eval tenants --sim --quick (KTAP): the table is complete in text and
# JSON (every scheme at every memory point, median with its range), the
# baseline's ratio is 1, and the live run refuses a bad --mix, --max-other or
# --other-repeats before it builds anything (the live run itself, its runs
# again reported: tests/net/eval_tenants.sh).
BUILD=${BUILD:-build}
INAGG=$BUILD/inagg
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

. "$(dirname "$0")/../ktap.sh"

schemes="netpack-atp netpack-a2tp flexina ht-atp flexina-notail"

text_complete() {
	"$INAGG" eval tenants --sim --quick >"$tmp/t" || return 1
	[ "$(grep -c '^memory ' "$tmp/t")" -eq 3 ] || return 1
	for s in $schemes; do
		[ "$(grep -cE "^  $s +[0-9]" "$tmp/t")" -eq 3 ] || { echo "no 3 rows of $s"; return 1; }
	done
}
t "eval tenants --sim --quick: a row per scheme at each of 3 memory points" text_complete

json_complete() {
	"$INAGG" -j eval tenants --sim --quick --mem 0.5 >"$tmp/j" || return 1
	python3 - "$tmp/j" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
pts = d["points"]
assert len(pts) == 1 and pts[0]["mem"] == 0.5, pts
rows = {r["scheme"]: r for r in pts[0]["schemes"]}
assert sorted(rows) == sorted("netpack-atp netpack-a2tp flexina ht-atp flexina-notail".split())
for name, r in rows.items():
    for k in ("tput", "vs_netpack_atp", "jct_ina_ms", "jct_ps_ms", "util", "mark_rate",
              "coll_rate", "jain"):
        assert r[k + "_min"] <= r[k] <= r[k + "_max"], (name, k)
    assert r["tput"] > 0, name
assert rows["netpack-atp"]["vs_netpack_atp"] == 1
assert pts[0]["ina"] + pts[0]["ps"] == d["jobs"] == 32
# Issue 33: selective INA by availability leaves no slot idle for NetPack; the
# headline gives flexina's ratios with bootstrap intervals around them.
for name in ("netpack-atp", "netpack-a2tp"):
    assert rows[name]["idle_slots_max"] == 0, name
    assert rows[name]["all"] > 0 and rows[name]["makespan_ms"] > 0, name
h = pts[0]["headline"]
for m in ("all", "makespan", "sum"):
    for b in ("netpack-atp", "netpack-a2tp"):
        x = h["%s_vs_%s" % (m, b)]
        assert 0 < x["lo"] <= x["ratio"] <= x["hi"], (m, b, x)
PY
}
t "eval tenants -j: every scheme with median, min and max of each figure" json_complete

bad_mix() {
	! "$INAGG" eval tenants --quick --mix 2:5 2>"$tmp/e" && grep -q -- '--mix' "$tmp/e"
}
t "eval tenants (live) refuses a bad --mix" bad_mix

# The workers' timer floor: 1 ms at least (0 would be the library's 2 ms floor, silently).
bad_timeout() {
	! "$INAGG" eval tenants --quick --timeout-ms 0 2>"$tmp/e" && grep -q -- '--timeout-ms' "$tmp/e"
}
t "eval tenants (live) refuses --timeout-ms 0" bad_timeout

# Runs other work slowed, again: a share of the CPU in 0.01..1, at most 10 runs more, and
# the count only with the threshold (it would do nothing); refused before anything runs.
bad_keep() {
	local o
	for o in "--max-other 0" "--max-other 1.5" "--max-other x" "--other-repeats 11" \
		"--other-repeats -1" "--other-repeats 2"; do
		set -- $o
		"$INAGG" eval tenants --quick $o >"$tmp/o" 2>"$tmp/e" &&
			{ echo "accepted: $o"; return 1; }
		[ ! -s "$tmp/o" ] && [ "$(wc -l <"$tmp/e")" -eq 1 ] &&
			grep -q -- "^inagg: $1: " "$tmp/e" || { echo "$o:"; cat "$tmp/e"; return 1; }
	done
	"$INAGG" eval tenants -h | grep -q -- '--max-other F' &&
		"$INAGG" eval tenants -h | grep -q -- '--other-repeats N'
}
t "eval tenants (live) refuses --max-other and --other-repeats out of range" bad_keep

# --sim ignored the live-only options without a word (--mix 2:1 ran the simulator).
sim_live_only() {
	local o
	for o in "--mix 2:1" "--plot $tmp" "--no-congestion" "--live-jobs 3" "--cross 0.5" \
		"--max-other 0.15" "--other-repeats 2"; do
		set -- $o
		"$INAGG" eval tenants --sim --quick $o >"$tmp/o" 2>"$tmp/e" &&
			{ echo "accepted: $o"; return 1; }
		[ ! -s "$tmp/o" ] && [ "$(wc -l <"$tmp/e")" -eq 1 ] &&
			grep -q -- "^inagg: $1: live only" "$tmp/e" || { echo "$o:"; cat "$tmp/e"; return 1; }
	done
}
t "eval tenants --sim refuses live-only options in one line" sim_live_only

# The live run ignored the simulator's options (-w 8 ran live with a window of 64).
live_sim_only() {
	local o
	for o in "--window 8" "--depth 3" "--jobs 5" "--per-leaf 2" "--iters 3" "--link-rate 1e6"; do
		set -- $o
		"$INAGG" eval tenants --quick $o >"$tmp/o" 2>"$tmp/e" &&
			{ echo "accepted: $o"; return 1; }
		[ ! -s "$tmp/o" ] && [ "$(wc -l <"$tmp/e")" -eq 1 ] &&
			grep -q -- "^inagg: $1: --sim only" "$tmp/e" || { echo "$o:"; cat "$tmp/e"; return 1; }
	done
}
t "eval tenants (live) refuses --sim-only options in one line" live_sim_only

finish
