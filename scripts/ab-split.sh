#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A/B of xdp_bench's split rig (the DUT on CPU 0, paced generator on CPU 1):
# the per-core figures of blue_aggregate and red_forward of two builds,
# interleaved B A B A ... (the shared host's load drifts), median and range
# of each, and after/before of the medians and of each adjacent pair.
#
#   scripts/ab-split.sh BEFORE_BUILD AFTER_BUILD [ROUNDS]
#
# BEFORE_BUILD and AFTER_BUILD are build folders holding tests/bench/xdp_bench
# (an older tree: git worktree add /tmp/before <commit>, then make
# build/tests/bench/xdp_bench there). ROUNDS (default 3) runs of each, about
# 1 min 50 s a run. Needs root. Each run's output is kept in $AB_OUT
# (default: a new folder under /tmp, printed).
#
# Heavy work on the 2-core host is serialised by flock on $AB_LOCK (default
# /tmp/inagg-heavy.lock; empty: no lock): held for the whole A/B up to 3
# rounds (about 11 min), else for each B A pair, never much beyond 15 min.
# Not part of make bench (building an old tree needs git).
set -euo pipefail

if [ $# -lt 2 ]; then
	sed -n '4,20s/^# \{0,1\}//p' "$0" >&2
	exit 2
fi
before=$(cd "$1" && pwd)
after=$(cd "$2" && pwd)
rounds=${3:-3}
lock=${AB_LOCK-/tmp/inagg-heavy.lock}
out=${AB_OUT:-$(mktemp -d /tmp/ab-split.XXXXXX)}
mkdir -p "$out"
for b in "$before" "$after"; do
	[ -x "$b/tests/bench/xdp_bench" ] || { echo "ab-split: no $b/tests/bench/xdp_bench" >&2; exit 1; }
done

take() { [ -z "$lock" ] || flock 9; }
give() { [ -z "$lock" ] || flock -u 9; }
[ -z "$lock" ] || exec 9>>"$lock"

# One run of side $1 (B or A), round $2: its log, and a line "side round blue red".
run() {
	local side=$1 r=$2 dir log
	[ "$side" = B ] && dir=$before || dir=$after
	log=$out/$side$r.log
	echo "# $(date -u +%H:%M:%S) $side round $r: $dir" >&2
	if ! BUILD=$dir "$dir/tests/bench/xdp_bench" -s >"$log" 2>&1; then
		echo "ab-split: $side round $r failed, see $log" >&2
		tail -3 "$log" >&2
		return 1
	fi
	grep '^# warning: split\|drop_port' "$log" | sed "s/^/  $side$r: /" >&2 || true
	awk -v s="$side" -v r="$r" '/per core Mpps \(1e9/ {
		for (i = 1; i <= NF; i++) {
			if ($i == "blue_aggregate") b = $(i + 1)
			if ($i == "red_forward") f = $(i + 1)
		}
		print s, r, b, f }' "$log" >>"$out/rates"
}

: >"$out/rates"
whole=0
[ "$rounds" -le 3 ] && whole=1
[ $whole = 1 ] && take
for r in $(seq 1 "$rounds"); do
	[ $whole = 1 ] || take
	run B "$r"
	run A "$r"
	[ $whole = 1 ] || give
done
[ $whole = 1 ] && give

echo "# $(date -u '+%F %H:%M') UTC, $rounds rounds B A interleaved, logs in $out"
echo "# before $before ($(git -C "$before/.." rev-parse --short HEAD 2>/dev/null || echo '?'))," \
	"after $after ($(git -C "$after/.." rev-parse --short HEAD 2>/dev/null || echo '?'))"
/usr/bin/python3 - "$out/rates" <<'EOF'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
v = {(s, n): [float(x) for x in (b, f)] for s, n, b, f in rows}
names = ("blue_aggregate", "red_forward")
rounds = sorted({int(n) for _, n, _, _ in rows})
print("per core Mpps (split rig, 1e9 / DUT ns, each run the median of its 5 rounds)")
print("%-15s %-6s %s" % ("", "", "  ".join("r%d" % r for r in rounds)))
for i, name in enumerate(names):
    med = {}
    for s in ("B", "A"):
        xs = [v[(s, str(r))][i] for r in rounds if (s, str(r)) in v]
        med[s] = statistics.median(xs)
        print("%-15s %-6s %s   median %.3f  range %.3f-%.3f" % (
            name, "before" if s == "B" else "after", "  ".join("%.3f" % x for x in xs),
            med[s], min(xs), max(xs)))
    pairs = [v[("A", str(r))][i] / v[("B", str(r))][i] for r in rounds
             if ("A", str(r)) in v and ("B", str(r)) in v]
    print("%-15s after/before of the medians %.3f (%+.1f %%); per pair %s" % (
        name, med["A"] / med["B"], 100 * (med["A"] / med["B"] - 1),
        " ".join("%.3f" % p for p in pairs)))
EOF
