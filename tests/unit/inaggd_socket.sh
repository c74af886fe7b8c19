#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Two daemons, one control socket: the second (another network, the same -s,
# as two 'inaggd' without -s are) is refused and the first keeps its socket;
# a killed daemon's stale socket file is replaced. The routers are fake, as in
# routers_daemon.sh: an ssh ($INAGG_SSH) that runs the real agent here on a
# user-space ledger, every port "lo" (no namespace, no BPF). KTAP.
BUILD=${BUILD:-build}
tmp=$(mktemp -d /tmp/ia-dsk-XXXXXX)
d1= d2=
cleanup() {
	for p in $d1 $d2; do kill "$p" 2>/dev/null && wait "$p" 2>/dev/null; done
	rm -rf "$tmp"
}
trap "cleanup; true" EXIT
. "$(dirname "$0")/../ktap.sh"
. "$(dirname "$0")/../daemon.sh"

[ "$(id -u)" = 0 ] || skip_all "changing a ledger needs root (CAP_NET_ADMIN)"

cat >"$tmp/ssh" <<'SH'
#!/bin/sh
while [ $# -gt 0 ]; do case "$1" in -T) shift;; -o|-p|-i) shift 2;; *) break;; esac; done
host=$1; shift; dir=$(dirname "$0")
mkdir -p "$dir/$host"
export INAGG_LEDGER=user INAGG_LEDGER_DIR="$dir/$host/ledger"
exec "$@" -S "$dir/$host/agent.json"
SH
chmod +x "$tmp/ssh"
agent=$(cd "$BUILD" && pwd)/inagg-agent
topo() {	# FILE HOST
	cat >"$1" <<JSON
{"switches": [{"name": "r0", "parent": null, "load": 1, "slots": 64, "site":
  {"host": "$2", "agent": "$agent", "timeout_ms": 5000, "retries": 0, "holdoff_ms": 200,
   "ports": {"up": "lo", "down": [], "hosts": ["lo"]},
   "peers": {"up": "02:00:00:00:00:09", "hosts": ["02:00:00:00:00:01"]}}}]}
JSON
}
topo "$tmp/a.json" ha
topo "$tmp/b.json" hb
export INAGG_SSH=$tmp/ssh
sock=$tmp/sock
# Network tags of this run: [a-z0-9], at most 8.
ta=a$(($$ % 1000000)) tb=b$(($$ % 1000000))

network_of() {
	"$BUILD/inagg" -j job list -S "$sock" 2>/dev/null | grep -o '"network":"[a-z0-9]*"'
}

first_daemon() {
	"$BUILD/inaggd" -t "$tmp/a.json" -n "$ta" -s "$sock" -S "$tmp/a-state.json" -m 0 \
		2>"$tmp/a.log" &
	d1=$!
	wait_daemon "$sock" "$d1" "$tmp/a.log" 20 && [ "$(network_of)" = "\"network\":\"$ta\"" ]
}

second_refused() {
	timeout 30 "$BUILD/inaggd" -t "$tmp/b.json" -n "$tb" -s "$sock" -S "$tmp/b-state.json" \
		-m 0 2>"$tmp/b.log"
	local rc=$?
	[ $rc -eq 1 ] || { echo "exit $rc"; cat "$tmp/b.log"; return 1; }
	grep -q "control socket $sock: another daemon listens on it" "$tmp/b.log" ||
		{ cat "$tmp/b.log"; return 1; }
	# The first still has its socket, and answers for its network.
	[ "$(network_of)" = "\"network\":\"$ta\"" ] || { echo "socket now: $(network_of)"; return 1; }
}

stale_replaced() {
	kill -9 "$d1" && wait "$d1" 2>/dev/null
	d1=
	[ -S "$sock" ] || { echo "no stale socket file to replace"; return 1; }
	"$BUILD/inaggd" -t "$tmp/b.json" -n "$tb" -s "$sock" -S "$tmp/b-state.json" -m 0 \
		2>"$tmp/b.log" &
	d2=$!
	wait_daemon "$sock" "$d2" "$tmp/b.log" 20 && [ "$(network_of)" = "\"network\":\"$tb\"" ]
}

t "a daemon on the socket" first_daemon
t "a second daemon on the same socket is refused, the first keeps it" second_refused
t "a killed daemon's stale socket is replaced" stale_replaced
finish
