#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# inagg eval tenants --quick, live (docs/cc.md "Live"): every scheme on the
# same mix of 4 concurrent jobs (INA and PS, 2-4 workers each, on two leaves
# under a shaped bottleneck), two interleaved rounds. Asserts that every job
# of every run got the exact sum, that the table is complete (every scheme,
# every figure, every job) and that the namespaces are gone after it (KTAP).
# The network lock is the caller's (make check runs the net layer under it).
BUILD=${BUILD:-build}
INAGG=$(realpath -m "$BUILD/inagg")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

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
print("table complete:", ", ".join("%s %.2f MB/s" % (s["scheme"], s["tput"] / 1e6)
                                   for s in p["schemes"]))
PY
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
t namespaces_removed cleaned
finish
