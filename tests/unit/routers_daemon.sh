#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# inaggd with a router that cannot be reached when it starts (docs/remote.md):
# it starts all the same and answers its clients, the router marked down; once
# the router answers, the daemon's loop connects it in the background (its
# ledger gets the topology's limits). The routers are fake: an ssh ($INAGG_SSH)
# that runs the real agent here on a user-space ledger per host, with every
# port "lo" (no namespace, no BPF). KTAP.
BUILD=${BUILD:-build}
tmp=$(mktemp -d /tmp/ia-rtd-XXXXXX)
daemon=
cleanup() {
	[ -n "$daemon" ] && kill "$daemon" 2>/dev/null && wait "$daemon" 2>/dev/null
	[ -n "${KEEP:-}" ] || rm -rf "$tmp"
}
trap "cleanup; true" EXIT
. "$(dirname "$0")/../ktap.sh"

if [ "$(id -u)" != 0 ]; then
	echo "TAP version 13"
	echo "1..0 # SKIP changing a ledger needs root (CAP_NET_ADMIN)"
	exit 0
fi

cat >"$tmp/ssh" <<'EOF'
#!/bin/sh
while [ $# -gt 0 ]; do case "$1" in -T) shift;; -o|-p|-i) shift 2;; *) break;; esac; done
host=$1; shift; dir=$(dirname "$0")
if [ -e "$dir/$host.down" ]; then
	echo "ssh: connect to host $host port 22: No route to host" >&2; exit 255; fi
mkdir -p "$dir/$host"
export INAGG_LEDGER=user INAGG_LEDGER_DIR="$dir/$host/ledger"
exec "$@" -S "$dir/$host/agent.json"
EOF
chmod +x "$tmp/ssh"
agent=$(cd "$BUILD" && pwd)/inagg-agent
site() {	# HOST
	echo "{\"host\": \"$1\", \"agent\": \"$agent\", \"timeout_ms\": 2000, \"retries\": 0,
	       \"holdoff_ms\": 200, \"ports\": {\"up\": \"lo\", \"down\": [\"lo\"], \"hosts\": [\"lo\"]},
	       \"peers\": {\"up\": \"02:00:00:00:00:09\", \"hosts\": [\"02:00:00:00:00:01\"]}}"
}
cat >"$tmp/topo.json" <<EOF
{"switches": [
 {"name": "r0", "parent": null, "load": 0, "slots": 64, "site": $(site r0)},
 {"name": "r1", "parent": "r0", "load": 1, "slots": 48, "site": $(site r1)}]}
EOF
export INAGG_SSH=$tmp/ssh

starts_with_r1_down() {
	local i
	touch "$tmp/r1.down"
	"$BUILD/inaggd" -t "$tmp/topo.json" -n u$$ -s "$tmp/sock" -S "$tmp/state.json" -m 0 \
		2>"$tmp/inaggd.log" &
	daemon=$!
	for i in $(seq 1 100); do
		"$BUILD/inagg" job list -S "$tmp/sock" >/dev/null 2>&1 && break
		kill -0 "$daemon" 2>/dev/null || { cat "$tmp/inaggd.log"; return 1; }
		sleep 0.1
	done
	"$BUILD/inagg" job list -S "$tmp/sock" >/dev/null || { cat "$tmp/inaggd.log"; return 1; }
	grep -q 'router r1 (r1): unreachable.*No route to host.*marked down' "$tmp/inaggd.log" || {
		cat "$tmp/inaggd.log"; return 1; }
}
t "inaggd starts with r1 unreachable, r1 marked down" starts_with_r1_down

ledger_of() {	# HOST
	INAGG_LEDGER=user INAGG_LEDGER_DIR=$tmp/$1/ledger "$BUILD/inagg" -j ledger show
}

r0_set_up_r1_not() {
	ledger_of r0 | jq -e '.max_slots == 64' >/dev/null || { ledger_of r0; return 1; }
	[ ! -e "$tmp/r1/ledger" ] || { echo "r1's ledger was touched"; return 1; }
}
t "r0's ledger set up, r1's untouched" r0_set_up_r1_not

connected_when_back() {
	local i
	rm -f "$tmp/r1.down"
	for i in $(seq 1 100); do
		grep -q 'router r1 (r1) connected' "$tmp/inaggd.log" && break
		sleep 0.1
	done
	grep -q 'router r1 (r1) connected: ports read, ledger set up' "$tmp/inaggd.log" || {
		cat "$tmp/inaggd.log"; return 1; }
	ledger_of r1 | jq -e '.max_slots == 48' >/dev/null || { ledger_of r1; return 1; }
	"$BUILD/inagg" job list -S "$tmp/sock" >/dev/null
}
t "r1 back: connected in the background, its ledger set up" connected_when_back

finish
