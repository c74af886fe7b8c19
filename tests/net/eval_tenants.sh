#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# inagg eval tenants --quick, live (docs/cc.md "Live"): every scheme on the
# same mix of 4 concurrent jobs (INA and PS, 2-4 workers each, on two leaves
# under a shaped bottleneck), two interleaved rounds. Asserts that every job
# of every run got the exact sum, that the table is complete (every scheme,
# every figure, every job), that runs other work slowed are run again and
# counted (--max-other, under CPU hogs of this test's own) and that the
# namespaces are gone after it (KTAP).
# The network lock is the caller's (make check runs the net layer under it).
BUILD=${BUILD:-build}
INAGG=$(realpath -m "$BUILD/inagg")
tmp=$(mktemp -d)
hogs=()
trap 'for h in "${hogs[@]}"; do kill "$h" 2>/dev/null; done; rm -rf "$tmp"' EXIT

. "$(dirname "$0")/../ktap.sh"

quick() {
	"$INAGG" -j eval tenants --quick --plot "$tmp/plot" >"$tmp/q.json" 2>"$tmp/q.err"
	local rc=$?
	cat "$tmp/q.err"
	[ $rc -eq 0 ]
}

exact() {
	python3 - "$tmp/q.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["exact"] is True, "not exact"
for p in d["points"]:
    for s in p["schemes"]:
        assert s["exact_rounds"] == s["rounds"], (s["scheme"], s["exact_rounds"])
print("every run exact")
PY
}

complete() {
	python3 - "$tmp/q.json" <<'PY'
import json, math, sys
d = json.load(open(sys.argv[1]))
want = ["netpack-atp", "netpack-a2tp", "flexina", "ht-atp", "flexina-notail"]
keys = ["tput", "vs_netpack_atp", "vs_netpack_a2tp", "tput_all", "all_vs_netpack_atp",
        "all_vs_netpack_a2tp", "tput_sum", "sum_vs_netpack_atp", "sum_vs_netpack_a2tp",
        "jct_ina_ms", "jct_ps_ms", "util", "mark_rate", "coll_rate", "jain", "lends", "lent",
        "up", "bypass", "retx", "timeouts", "waste", "srtt_ms", "cpu_other",
        "window_reports"]
assert len(d["points"]) == 1, len(d["points"])
assert d["timeout_ms"] == 50, d["timeout_ms"]	# the workers' timer floor (IA_LIVE_TIMEOUT_MS)
p = d["points"][0]
assert p["ina"] >= 1 and p["ps"] >= 1, (p["ina"], p["ps"])
assert [s["scheme"] for s in p["schemes"]] == want
for s in p["schemes"]:
    for k in keys:
        for v in (s[k], s[k + "_min"], s[k + "_max"]):
            assert math.isfinite(v) and v >= 0, (s["scheme"], k, v)
        assert s[k + "_min"] <= s[k] <= s[k + "_max"], (s["scheme"], k)
    assert s["tput"] > 0 and s["jct_ina_ms"] > 0 and s["jct_ps_ms"] > 0, s["scheme"]
    # No job ends after the makespan, so the sum of the jobs' own rates (bytes /
    # JCT) is at least all bytes over the makespan, in every round.
    assert s["tput_all"] > 0 and s["tput_sum"] >= s["tput"] * (1 - 1e-9), s["scheme"]
    assert s["timeouts"] <= s["retx"], s["scheme"]
    assert 0 < s["jain"] <= 1, s["scheme"]
    assert s["cpu_other_max"] <= 1, s["scheme"]
    # The INA jobs' workers report their windows to inaggd themselves, in every run.
    assert s["window_reports_min"] > 0, (s["scheme"], "no window report")
    # Each round's figures, in round order.
    for k in ("tput", "vs_netpack_atp", "vs_netpack_a2tp", "tput_all", "all_vs_netpack_atp",
              "all_vs_netpack_a2tp", "tput_sum", "sum_vs_netpack_atp", "sum_vs_netpack_a2tp"):
        r = s[k + "_rounds"]
        assert len(r) == s["rounds"] and min(r) == s[k + "_min"] and max(r) == s[k + "_max"], \
            (s["scheme"], k, r)
    assert len(s["jobs"]) == d["jobs"], s["scheme"]
    assert all(j["tput"] > 0 and j["jct_ms"] > 0 for j in s["jobs"]), s["scheme"]
    # Every chunk reaches its PS as one message at least, as one per worker at most.
    assert 1 <= s["up_min"] and s["up_max"] <= 4, (s["scheme"], s["up_min"], s["up_max"])
    if s["scheme"] in ("netpack-atp", "netpack-a2tp", "flexina-notail"):
        assert s["coll_rate"] == 0, (s["scheme"], "a PS job used switch memory")
        assert s["bypass_max"] == 0, (s["scheme"], "bypassed without a tail")
# Nothing run again without --max-other, and the count says so; the ratios of medians beside.
rp = p["repeats"]
assert rp["max_other"] == 0 and rp["runs"] == 5 * s["rounds"], rp
assert rp["runs_repeated"] == rp["runs_more"] == rp["still_over"] == 0, rp
assert abs(rp["kept_other_max"] - max(s["cpu_other_max"] for s in p["schemes"])) < 1e-9, rp
for s in p["schemes"]:
    assert s["repeats"] == 0 and s["repeats_rounds"] == [0] * s["rounds"], s["scheme"]
rm = {x["scheme"]: x for x in p["ratio_of_medians"]}
assert sorted(rm) == sorted(want), rm
assert rm["netpack-atp"]["ratio_of_medians"] == 1, rm
for s in p["schemes"]:
    assert abs(rm[s["scheme"]]["ratio_of_medians"] * p["schemes"][0]["tput"] - s["tput"]) \
        <= 1e-6 * s["tput"], s["scheme"]
print("table complete:", ", ".join("%s %.2f MB/s" % (s["scheme"], s["tput"] / 1e6)
                                   for s in p["schemes"]))
PY
}

# Two busy loops of this test on the host's 2 cores: other work over 0.01 of the CPU
# during every run, so runs are run again (once at most) and the table says how many.
again() {
	local h line n more rep
	for h in 1 2; do
		( while :; do :; done ) &
		hogs+=($!)
	done
	"$INAGG" eval tenants --quick --max-other 0.01 --other-repeats 1 >"$tmp/a" 2>&1
	local rc=$?
	kill "${hogs[@]}" 2>/dev/null
	wait "${hogs[@]}" 2>/dev/null
	hogs=()
	[ $rc -eq 0 ] || { cat "$tmp/a"; return 1; }
	line=$(grep 'more than 0.01 of the CPU, run again (at most 1 times): ' "$tmp/a") ||
		{ cat "$tmp/a"; return 1; }
	echo "# $line"
	n=$(sed -n 's/.*times): \([0-9]*\) of 10 runs (\([0-9]*\) runs more).*/\1/p' <<<"$line")
	more=$(sed -n 's/.*times): \([0-9]*\) of 10 runs (\([0-9]*\) runs more).*/\2/p' <<<"$line")
	# The rep column (before exact): each scheme's runs more, summed.
	rep=$(awk '/^  (netpack-atp|netpack-a2tp|flexina|ht-atp|flexina-notail) +[0-9]/ {
		s += $(NF - 1) } END { print s }' "$tmp/a")
	[ -n "$n" ] && [ "$n" -ge 1 ] && [ "$n" = "$more" ] && [ "$rep" = "$more" ] ||
		{ echo "repeated '$n', more '$more', rep column '$rep'"; cat "$tmp/a"; return 1; }
}

plots() {
	[ -s "$tmp/plot/tenants.dat" ] && [ -s "$tmp/plot/tenants.gp" ] &&
	{ ! command -v gnuplot >/dev/null ||
	  { [ -s "$tmp/plot/tenants-tput.png" ] && [ -s "$tmp/plot/tenants-tput-sum.png" ]; }; }
}

# The experiment's namespaces are ia-e<pid>-*: none is left.
ens() {
	ip netns list | grep -cE '^ia-e[0-9]+-'
}

cleaned() {
	[ "$(ens)" -eq "$before" ] || { ip netns list | grep -E '^ia-e[0-9]+-'; false; }
}

before=$(ens)
t quick_live_run quick
t every_job_exact exact
t table_complete complete
t plots_written plots
t runs_slowed_by_other_work_run_again_and_counted again
t namespaces_removed cleaned
finish
