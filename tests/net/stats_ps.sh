#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# inagg stats show -J of a PS job (tails on its path) without --chunks: the
# chunks the job ran (the first results the root passed down), and messages per chunk
# from them. It divided the root's receptions by its members: 11 of 100 chunks,
# a measured congestion of 9.09 where it was 1. KTAP.
BUILD=${BUILD:-build}
INAGG=$(realpath -m "$BUILD/inagg")
TAG=q$$
TAG=${TAG:0:8}
tmp=$(mktemp -d)
dpid=
cleanup() {
	[ -n "$dpid" ] && kill "$dpid" 2>/dev/null && wait "$dpid" 2>/dev/null
	for p in $(jobs -p); do kill "$p" 2>/dev/null; done
	"$INAGG" net down -n "$TAG" >/dev/null 2>&1
	rm -rf "$tmp"
}
trap cleanup EXIT
. "$(dirname "$0")/../ktap.sh"
. "$(dirname "$0")/../daemon.sh"

topo=$(dirname "$0")/../../docs/fig1.json
sock=$tmp/sock
export INAGG_LEDGER=user INAGG_LEDGER_DIR=$tmp/ledger
chunks=20

up() {
	"$INAGG" net up -t "$topo" -n "$TAG" --attach >/dev/null || return 1
	"$BUILD/inaggd" -t "$topo" -n "$TAG" -s "$sock" -S "$tmp/state.json" -m 0 \
		2>"$tmp/inaggd.log" &
	dpid=$!
	wait_daemon "$sock" "$dpid" "$tmp/inaggd.log" 30
}

run_ps_job() {
	"$INAGG" -j job submit -k 2 --class ps -S "$sock" >"$tmp/job.json" || return 1
	python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
d = j["destination"]
print(j["job"], d["netns"], d["address"], d["down"])
for w in j["workers"]:
    print(w["id"], w["netns"], w["address"])' "$tmp/job.json" >"$tmp/plan" || return 1
	local id dns daddr down wid wns waddr pids=() n=$((chunks * 256)) p
	{ read -r id dns daddr down; cat >"$tmp/workers"; } <"$tmp/plan"
	ip netns exec "$dns" "$INAGG" ps run -J "$id" --nworkers 18 -e $n -D "$down" \
		--linger 200 --ready "$tmp/ready" >"$tmp/ps.out" 2>&1 &
	p=$!
	wait_line "$tmp/ready" ready 10 || return 1
	while read -r wid wns waddr; do
		ip netns exec "$wns" "$INAGG" worker run -J "$id" -i "$wid" -p "$daddr" -A "$waddr" \
			-e $n -S "$sock" >"$tmp/w$wid.out" 2>&1 &
		pids+=($!)
	done <"$tmp/workers"
	for w in "${pids[@]}"; do wait "$w" || { echo "a worker failed"; return 1; }; done
	wait "$p" || { cat "$tmp/ps.out"; return 1; }
}

stats_chunks() {
	"$INAGG" -j stats show -J 1 -S "$sock" >"$tmp/stats.json" || return 1
	python3 -c '
import json, re, sys
s = json.load(open(sys.argv[1]))
chunks = int(sys.argv[2])
ps = open(sys.argv[3]).read()
sent = sum(int(re.search(k + r" (\d+)", ps).group(1)) for k in ("results_sent", "nacks"))
# One first result down per chunk: results the PS sent again (late retransmissions
# on a busy host) and NACKs are flagged, and the switches count them apart.
assert s["chunks"] == chunks, ("chunks", s["chunks"], "want", chunks, "sent", sent)
for l in s["links"]:
    assert l["role"] == "tail", l
    # A tail sends up at most what it received, at least one aggregate per chunk.
    assert l["sent_up"] >= chunks, (l["switch"], l["sent_up"], "want", chunks)
    assert l["messages_per_chunk"] <= 18, (l["switch"], l["messages_per_chunk"])
    assert abs(l["messages_per_chunk"] - l["sent_up"] / s["chunks"]) < 1e-9, l
assert s["congestion"] == max(l["congestion"] for l in s["links"]), s["congestion"]
' "$tmp/stats.json" "$chunks" "$tmp/ps.out"
}

# stats show --prometheus, read strictly (tests/net/promtext.py): every family with HELP and
# TYPE, valid names, numbers; its values are those of stats show -j.
prometheus() {
	local here
	here=$(dirname "$0")
	"$INAGG" stats show --prometheus -S "$sock" >"$tmp/prom" &&
	"$INAGG" stats show --prometheus -J 1 -S "$sock" >"$tmp/prom1" &&
	"$INAGG" -j stats show -S "$sock" >"$tmp/all.json" &&
	"$INAGG" -j stats show -J 1 -S "$sock" >"$tmp/j1.json" &&
	python3 "$here/promtext.py" "$tmp/prom" inagg_ >"$tmp/samples" &&
	python3 "$here/promtext.py" "$tmp/prom1" inagg_ >"$tmp/samples1" || return 1
	! "$INAGG" -j stats show --prometheus -S "$sock" >/dev/null 2>&1 || {
		echo "--prometheus with -j accepted"; return 1; }
	# -o: the same exposition, in a file written whole (no FILE.tmp left).
	"$INAGG" stats show --prometheus -J 1 -o "$tmp/inagg.prom" -S "$sock" &&
	cmp "$tmp/prom1" "$tmp/inagg.prom" && [ ! -e "$tmp/inagg.prom.tmp" ] || return 1
	python3 -c '
import json, sys
d = sys.argv[1]
S = [json.loads(l) for l in open(d + "/samples")]
S1 = [json.loads(l) for l in open(d + "/samples1")]
a, j = json.load(open(d + "/all.json")), json.load(open(d + "/j1.json"))
def get(samples, name, **lab):
    v = [s["value"] for s in samples if s["name"] == name and s["labels"] == lab]
    assert len(v) == 1, (name, lab, v)
    return v[0]
for l in a["links"]:
    sw = l["switch"]
    for m, k in (("sent_up", "sent_up"), ("resent_up", "resent_up"),
                 ("results_down", "results_down"), ("passed", "passed")):
        assert get(S, "inagg_port_%s_total" % m, switch=sw, port="uplink") == l[k], (sw, m)
    for r, v in l["dropped"].items():
        assert get(S, "inagg_port_dropped_total", switch=sw, port="uplink", reason=r) == v
for s in a["memory"]["switches"]:
    assert get(S, "inagg_switch_slots", switch=s["switch"]) == s["slots"], s
    assert get(S, "inagg_switch_jobs", switch=s["switch"]) == s["jobs"], s
for samples in (S, S1):
    assert get(samples, "inagg_job_chunks", job_id="1") == j["chunks"] == int(sys.argv[2])
    assert get(samples, "inagg_job_congestion", job_id="1") == j["congestion"]
    for l in j["links"]:
        sw = l["switch"]
        assert get(samples, "inagg_job_sent_up_total", job_id="1", switch=sw) == l["sent_up"]
        assert get(samples, "inagg_job_received_total", job_id="1", switch=sw) == l["received"]
        for c, v in l["counters"].items():
            assert get(samples, "inagg_job_frames_total", job_id="1", switch=sw,
                       counter=c) == v, (sw, c)
# -J: the job alone.
assert not [s for s in S1 if not s["name"].startswith("inagg_job_")], "not only the job"
print(len(S), "samples,", len({s["name"] for s in S}), "families")
' "$tmp" "$chunks"
}

t "network, daemon" up
t "a PS job of 18 workers, $chunks chunks, exact" run_ps_job
t "stats without --chunks: $chunks chunks, messages per chunk from them" stats_chunks
t "stats show --prometheus: strict text format, the values of stats show -j" prometheus
finish
