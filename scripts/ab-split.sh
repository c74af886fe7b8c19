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
# (default: a new folder under /tmp, printed); run again with the same AB_OUT
# to add rounds to those there (the summary covers all).
#
# AB_ENV_B and AB_ENV_A: environment (VAR=value ...) of the before and after
# runs, e.g. the check's own cost in one build:
#   AB_ENV_B=XDP_BENCH_UNBOUND=1 scripts/ab-split.sh build build
#
# Each run prints its DUTs' median and range over its 5 rounds; the summary
# gives per run the median's rate and the best round's (the least ns/packet:
# on this shared host some rounds run up to 1.8x slower, and noise only adds
# time), and of each the median and range over the runs.
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
	local side=$1 r=$2 dir log envs
	if [ "$side" = B ]; then dir=$before envs=${AB_ENV_B-}; else dir=$after envs=${AB_ENV_A-}; fi
	log=$out/$side$r.log
	echo "# $(date -u +%H:%M:%S) $side round $r: $envs $dir" >&2
	# shellcheck disable=SC2086 # envs: VAR=value words
	if ! env $envs BUILD="$dir" "$dir/tests/bench/xdp_bench" -s >"$log" 2>&1; then
		echo "ab-split: $side round $r failed, see $log" >&2
		tail -3 "$log" >&2
		return 1
	fi
	grep '^# warning: split\|drop_port' "$log" | sed "s/^/  $side$r: /" >&2 || true
	# "blue_aggregate 313 (303-571)": median and best ns/packet of the run.
	awk -v s="$side" -v r="$r" '/DUT CPU ns\/packet/ {
		for (i = 1; i <= NF; i++) {
			if ($i == "blue_aggregate") { b = $(i + 1); bb = $(i + 2) }
			if ($i == "red_forward") { f = $(i + 1); fb = $(i + 2) }
		}
		gsub(/[(]|-.*/, "", bb); gsub(/[(]|-.*/, "", fb)
		print s, r, b, bb, f, fb }' "$log" >>"$out/rates"
}

touch "$out/rates"
first=$(($(awk '$1 == "A" { n++ } END { print n + 0 }' "$out/rates") + 1))
whole=0
[ "$rounds" -le 3 ] && whole=1
[ $whole = 1 ] && take
for r in $(seq "$first" $((first + rounds - 1))); do
	[ $whole = 1 ] || take
	run B "$r"
	run A "$r"
	[ $whole = 1 ] || give
done
[ $whole = 1 ] && give

echo "# $(date -u '+%F %H:%M') UTC, $((first + rounds - 1)) rounds B A interleaved, logs in $out"
echo "# before ${AB_ENV_B-} $before ($(git -C "$before/.." rev-parse --short HEAD 2>/dev/null || echo '?'))," \
	"after ${AB_ENV_A-} $after ($(git -C "$after/.." rev-parse --short HEAD 2>/dev/null || echo '?'))"
/usr/bin/python3 - "$out/rates" <<'EOF'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
# side, round -> [blue median, blue best, red median, red best], as Mpps per core
v = {(r[0], int(r[1])): [1e3 / float(x) for x in r[2:6]] for r in rows}
rounds = sorted({n for _, n in v})
print("per core Mpps, split rig (1e3 / DUT ns per packet); a run's median and best of its 5 rounds")
print("%-30s %s" % ("", " ".join("%6s" % ("r%d" % r) for r in rounds)))
for i, name in enumerate(("blue_aggregate median", "blue_aggregate best",
                          "red_forward median", "red_forward best")):
    med = {}
    for s in ("B", "A"):
        xs = [v[(s, r)][i] for r in rounds if (s, r) in v]
        med[s] = statistics.median(xs)
        print("%-23s %-6s %s   median %.3f  range %.3f-%.3f" % (
            name, "before" if s == "B" else "after", " ".join("%6.3f" % x for x in xs),
            med[s], min(xs), max(xs)))
    pairs = [v[("A", r)][i] / v[("B", r)][i] for r in rounds if ("A", r) in v and ("B", r) in v]
    print("%-30s after/before of the medians %.3f (%+.1f %%); per pair %s" % (
        name, med["A"] / med["B"], 100 * (med["A"] / med["B"] - 1),
        " ".join("%.3f" % p for p in pairs)))
EOF
