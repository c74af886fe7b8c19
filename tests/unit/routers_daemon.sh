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
. "$(dirname "$0")/../daemon.sh"

[ "$(id -u)" = 0 ] || skip_all "changing a ledger needs root (CAP_NET_ADMIN)"

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
site() {	# HOST [TIMEOUT_MS]
	echo "{\"host\": \"$1\", \"agent\": \"$agent\", \"timeout_ms\": ${2:-2000}, \"retries\": 0,
	       \"holdoff_ms\": 200, \"ports\": {\"up\": \"lo\", \"down\": [\"lo\"], \"hosts\": [\"lo\"]},
	       \"peers\": {\"up\": \"02:00:00:00:00:09\", \"hosts\": [\"02:00:00:00:00:01\"]}}"
}
cat >"$tmp/topo.json" <<EOF
{"switches": [
 {"name": "r0", "parent": null, "load": 0, "slots": 64, "site": $(site r0)},
 {"name": "r1", "parent": "r0", "load": 1, "slots": 48, "site": $(site r1 10000)}]}
EOF
export INAGG_SSH=$tmp/ssh

starts_with_r1_down() {
	touch "$tmp/r1.down"
	"$BUILD/inaggd" -t "$tmp/topo.json" -n u$$ -s "$tmp/sock" -S "$tmp/state.json" -m 0 \
		2>"$tmp/inaggd.log" &
	daemon=$!
	wait_daemon "$tmp/sock" "$daemon" "$tmp/inaggd.log" 10 || return 1
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
	rm -f "$tmp/r1.down"
	wait_line "$tmp/inaggd.log" 'router r1 (r1) connected: ports read, ledger set up' 10 ||
		return 1
	ledger_of r1 | jq -e '.max_slots == 48' >/dev/null || { ledger_of r1; return 1; }
	"$BUILD/inagg" job list -S "$tmp/sock" >/dev/null
}
t "r1 back: connected in the background, its ledger set up" connected_when_back

# r1's agent stopped (SIGSTOP), so that the submission's call to it waits for its whole
# timeout (10 s): the daemon answers another client's "list" meanwhile (the submission then
# fails: these routers have no datapath to push to).
agent_of() {	# HOST: the pid of the agent session the daemon runs on HOST
	local p
	for p in $(pgrep -P "$daemon"); do
		tr '\0' ' ' <"/proc/$p/cmdline" | grep -q -- "-S $tmp/$1/agent.json" && echo "$p"
	done
}

list_answered_while_r1_silent() {
	local a submit t0 t1 rc=0
	a=$(agent_of r1)
	[ -n "$a" ] || { echo "no agent session of r1"; return 1; }
	kill -STOP "$a"
	"$BUILD/inagg" job submit -k 1 -J 5 -S "$tmp/sock" >"$tmp/submit.out" 2>&1 &
	submit=$!
	sleep 1	# the submission is in its call to r1 by then
	t0=$(date +%s%N)
	"$BUILD/inagg" -j job list -S "$tmp/sock" >"$tmp/list.out" || rc=1
	t1=$(date +%s%N)
	kill -0 "$submit" 2>/dev/null || { echo "the submission was over before list"; rc=1; }
	echo "# list answered in $(((t1 - t0) / 1000000)) ms, the submission waiting on r1"
	kill -CONT "$a"
	wait "$submit"
	cat "$tmp/submit.out"
	[ $rc = 0 ] && jq -e '.jobs | type == "array"' "$tmp/list.out" >/dev/null
}
t "a silent router: list answered while the submission waits for it" list_answered_while_r1_silent

finish
