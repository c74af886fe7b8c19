#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# inagg net up / down: namespaces, addresses, routes, rate emulation, clean
# removal, and nothing left by a failed build (KTAP).
BUILD=${BUILD:-build}
INAGG=$(realpath -m "$BUILD/inagg")
TAG=t$$
TAG=${TAG:0:8}
tmp=$(mktemp -d)
cleanup() {
	"$INAGG" net down -n "$TAG" >/dev/null 2>&1
	rm -rf "$tmp" /sys/fs/bpf/inagg/ia-$TAG-* /run/inagg/agent-ia-$TAG-* /run/inagg/agent-ia-${TAG}x-*
}
trap cleanup EXIT

. "$(dirname "$0")/../ktap.sh"
count() {
	ip netns list | awk '{ print $1 }' | grep -c "^ia-$TAG-"
}

cat >"$tmp/topo.json" <<'JSON'
{"switches": [
  {"name": "r", "parent": null, "rate": 2},
  {"name": "a", "parent": "r", "load": 2},
  {"name": "b", "parent": "r", "load": 1, "rate": 0.5}
]}
JSON

up() {
	"$INAGG" net up -t "$tmp/topo.json" -n "$TAG" --rate-mbit 1 &&
	[ "$(count)" = 7 ]	# 3 switches, 3 workers, the destination
}

routes() {
	# Worker 2 (b's only one) reaches the destination and worker 0 across the tree.
	ip netns exec "ia-$TAG-b-w0" ping -c1 -W2 10.64.0.1 &&
	ip netns exec "ia-$TAG-b-w0" ping -c1 -W2 10.128.0.2 &&
	ip -n "ia-$TAG-r" route | grep -q '10.128.0.2 via 10.64.0.6 dev d0'
}

shaping() {
	tc -n "ia-$TAG-r" qdisc show dev up | grep -q 'tbf .*rate 2Mbit' &&
	tc -n "ia-$TAG-b" qdisc show dev up | grep -q 'tbf .*rate 500Kbit'
}

twice() {
	local out
	out=$("$INAGG" net up -t "$tmp/topo.json" -n "$TAG" 2>&1) && return 1
	[[ $out == *"already up"* ]] || { echo "$out"; return 1; }
	[ "$(count)" = 7 ]
}

down() {
	"$INAGG" net down -n "$TAG" && [ "$(count)" = 0 ] &&
	"$INAGG" topo down -n "$TAG"	# again (by its old name): nothing to do, no error
}

failed_build() {
	local out
	# "dest" cannot name a switch namespace: refused before anything is made.
	sed 's/"name": "b"/"name": "dest"/; s/"parent": "b"/"parent": "dest"/' "$tmp/topo.json" \
		>"$tmp/bad.json"
	out=$("$INAGG" net up -t "$tmp/bad.json" -n "$TAG" 2>&1) && return 1
	[[ $out == *'"dest"'* ]] || { echo "$out"; return 1; }
	# A tag that is not [a-z0-9]{1,8}.
	out=$("$INAGG" net up -t "$tmp/topo.json" -n "Bad-Tag" 2>&1) && return 1
	[[ $out == *"network tag"* ]] || { echo "$out"; return 1; }
	[ "$(count)" = 0 ]
}

# Issue 10: attaching fails on switch r (its pinned ia_jobs is a map of the
# wrong type, so the datapath cannot reuse it). net up --attach must say so
# and remove what it built, not abort with a double free and leave it.
attach_fails() {
	local pins=/sys/fs/bpf/inagg/ia-$TAG-r out rc
	mkdir -p "$pins" &&
	bpftool map create "$pins/ia_jobs" type array key 4 value 4 entries 1 name ia_jobs ||
		return 1
	out=$("$INAGG" net up -t "$tmp/topo.json" -n "$TAG" --attach 2>&1)
	rc=$?
	[ $rc -eq 1 ] || { echo "status $rc: $out"; return 1; }
	[[ $out == *"ia-$TAG-r: maps: "* ]] || { echo "$out"; return 1; }
	[ "$(count)" = 0 ] || { echo "namespaces left behind"; return 1; }
	[ ! -e "$pins" ] || { echo "pins left behind"; return 1; }
}

# net down without -t (as docs/pytorch.md ends) unpins the switches' maps too:
# they stayed, and the next net up --attach of the tag started with their counters.
down_unpins() {
	"$INAGG" net up -t "$tmp/topo.json" -n "$TAG" --attach >/dev/null &&
	[ -e "/sys/fs/bpf/inagg/ia-$TAG-a/ia_jobs" ] || { echo "no pins after net up --attach"; return 1; }
	"$INAGG" net down -n "$TAG" || return 1
	[ "$(count)" = 0 ] || { echo "namespaces left behind"; return 1; }
	if ls -d /sys/fs/bpf/inagg/ia-$TAG-* 2>/dev/null; then
		echo "pins left behind"
		return 1
	fi
}

# net down also drops the agents' records of the namespaces it removed
# (/run/inagg/agent-ia-TAG-SWITCH.json, one per switch a daemon ever used).
down_drops_records() {
	local run=/run/inagg other=/run/inagg/agent-ia-${TAG}x-a.json
	mkdir -p "$run" &&
	"$INAGG" net up -t "$tmp/topo.json" -n "$TAG" >/dev/null || return 1
	echo '{}' >"$run/agent-ia-$TAG-r.json" && echo '{}' >"$run/agent-ia-$TAG-a.json.tmp" &&
		echo '{}' >"$other" || return 1
	"$INAGG" net down -n "$TAG" || return 1
	local left=$(ls "$run"/agent-ia-$TAG-* 2>/dev/null)
	[ -z "$left" ] || { echo "left: $left"; rm -f "$other"; return 1; }
	[ -e "$other" ] || { echo "another network's record removed"; return 1; }
	rm -f "$other"
}

t "net up: one namespace per switch, worker and destination" up
t "routed: workers reach the destination and each other" routes
t "rate emulation: tbf at rate x unit on each uplink" shaping
t "a second net up of the same network is refused, the first intact" twice
t "net down removes every namespace, and is idempotent" down
t "bad switch name or tag: refused, nothing left behind" failed_build
t "net up --attach failing: clear error, nothing left behind" attach_fails
t "net down without -t removes the pinned maps too" down_unpins
t "net down drops the agents' records of its namespaces" down_drops_records
finish
