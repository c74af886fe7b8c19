#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# inaggd's command line: a bad option value or network tag is refused at once,
# one line naming it, before the daemon looks for the network (none is up).
BUILD=${BUILD:-build}
D=$BUILD/inaggd
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

. "$(dirname "$0")/../ktap.sh"

topo=$(dirname "$0")/../../docs/fig1.json

# refused PATTERN ARGS...: non-zero exit, one line on stderr matching PATTERN.
refused() {
	local pattern=$1 rc
	shift
	timeout 20 "$D" -t "$topo" -s "$tmp/sock" -S "$tmp/state.json" "$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	[ $rc -ne 0 ] && [ $rc -lt 124 ] || { echo "exit $rc"; cat "$tmp/err"; return 1; }
	[ "$(wc -l <"$tmp/err")" -eq 1 ] || { echo "not one line:"; cat "$tmp/err"; return 1; }
	grep -Eq -- "$pattern" "$tmp/err" || { echo "no /$pattern/ in:"; cat "$tmp/err"; return 1; }
}

tag=u$$
# atoi() took these for 0 ("-m x": never sample) or for their leading digits.
t "-m x refused" refused "--sample: invalid value 'x'" -n $tag -m x
t "-m 100ms refused" refused "--sample: invalid value '100ms'" -n $tag -m 100ms
t "-m -1 refused" refused "--sample: invalid value '-1'" -n $tag -m -1
t "-m 60001 refused" refused "--sample: invalid value '60001': 0\.\.60000" -n $tag -m 60001
t "-L x refused" refused "--lend-hold: invalid value 'x'" -n $tag -L x
t "-L 1e3 refused" refused "--lend-hold: invalid value '1e3'" -n $tag -L 1e3
# The tag names namespaces and /run/inagg files: net up's rule, not only its length.
t "tag with capitals and _ refused" refused "network tag 'BAD_TAG': use 1 to 8 of \[a-z0-9\]" -n BAD_TAG
t "tag with a path refused" refused "network tag '\.\./x'" -n ../x
t "tag too long refused" refused "network tag '123456789'" -n 123456789
# A topology file's error names the file, as inagg's do ("topology: not valid
# JSON" said which topology only when the file was missing).
printf '{' >"$tmp/trunc.json"
printf '{"switches": [{"name": "s0", "parent": null, "rate": 0}]}' >"$tmp/rate0.json"
bad_topo() {
	timeout 20 "$D" -t "$1" -n $tag -s "$tmp/sock" -S "$tmp/state.json" 2>"$tmp/err"
	[ $? -eq 1 ] && [ "$(wc -l <"$tmp/err")" -eq 1 ] && grep -q -- "$2" "$tmp/err" ||
		{ cat "$tmp/err"; return 1; }
}
t "truncated topology named" bad_topo "$tmp/trunc.json" "error: $tmp/trunc.json: topology: not valid JSON"
t "bad field named with its file" bad_topo "$tmp/rate0.json" "error: $tmp/rate0.json: switch \"s0\": field \"rate\""
t "missing topology named once" bad_topo "$tmp/none.json" "error: $tmp/none.json: No such file"

# A right command line reaches the network, which is not up.
reaches_net() {
	timeout 60 "$D" -t "$topo" -s "$tmp/sock" -S "$tmp/state.json" -n $tag -m 0 -L 3 2>"$tmp/err"
	[ $? -eq 1 ] && grep -q "network '$tag' is not up" "$tmp/err" || { cat "$tmp/err"; return 1; }
	# The network's lock file goes with the daemon (they piled up by the thousand).
	[ ! -e "/run/inagg/inaggd-$tag.lock" ] || { echo "inaggd-$tag.lock left"; return 1; }
}
run_dir_ok || t_skip="inaggd keeps its lock files in /run/inagg: root's"
t "good options reach the network check, leaving no lock file" reaches_net
# Daemons before e176a68 left their lock files (1,650 in /run/inagg): a daemon
# removes those nobody holds of networks not up, and keeps a held one.
s=$(($$ % 1000000))
# Until flock(1) holds FILE.
held_wait() {
	for _ in $(seq 100); do
		lslocks -n -o PATH 2>/dev/null | grep -qx -- "$1" && return
		sleep 0.05
	done
}
stale_locks() {
	local held=/run/inagg/inaggd-y$s.lock h rc bad=
	mkdir -p /run/inagg
	echo 1 >/run/inagg/inaggd-x$s.lock
	echo 1 >/run/inagg/inaggd-X_$s.lock
	echo 2 >"$held"
	flock "$held" sleep 30 &
	h=$!
	held_wait "$held"
	timeout 60 "$D" -t "$topo" -s "$tmp/sock" -S "$tmp/state.json" -n $tag -m 0 2>"$tmp/err"
	rc=$?
	kill $h 2>/dev/null
	wait $h 2>/dev/null
	[ $rc -eq 1 ] && grep -q "network '$tag' is not up" "$tmp/err" || bad="$(cat "$tmp/err")"
	[ ! -e /run/inagg/inaggd-x$s.lock ] || bad+=" stale inaggd-x$s.lock kept"
	[ ! -e /run/inagg/inaggd-X_$s.lock ] || bad+=" stale inaggd-X_$s.lock kept"
	[ -e "$held" ] || bad+=" held inaggd-y$s.lock removed"
	rm -f "$held" /run/inagg/inaggd-x$s.lock /run/inagg/inaggd-X_$s.lock
	[ -z "$bad" ] || { echo "$bad"; return 1; }
}
t "a daemon removes stale lock files, not held ones" stale_locks
# Agents' records of namespaces that are gone piled up too (4,250).
stale_records() {
	local r=/run/inagg/agent-ia-x$s-s0
	: >"$r.json"
	: >"$r.json.tmp"
	: >/run/inagg/agent-other-x$s.json
	timeout 60 "$D" -t "$topo" -s "$tmp/sock" -S "$tmp/state.json" -n $tag -m 0 2>"$tmp/err"
	grep -q "network '$tag' is not up" "$tmp/err" || { cat "$tmp/err"; return 1; }
	[ ! -e "$r.json" ] && [ ! -e "$r.json.tmp" ] || { echo "records kept"; rm -f "$r".*; return 1; }
	# Not an agent of a namespace (ia-...): not the daemon's to judge.
	[ -e /run/inagg/agent-other-x$s.json ] || { echo "agent-other-x$s.json removed"; return 1; }
	rm -f /run/inagg/agent-other-x$s.json
}
t "a daemon removes agents' records of namespaces that are gone" stale_records
# A lock held for a moment (another daemon's removal of stale files) is waited
# for, not taken for a running daemon; one held for good is that.
brief_hold() {
	local f=/run/inagg/inaggd-$tag.lock h
	echo 3 >"$f"
	flock "$f" sleep 0.2 &
	h=$!
	held_wait "$f"
	timeout 60 "$D" -t "$topo" -s "$tmp/sock" -S "$tmp/state.json" -n $tag -m 0 2>"$tmp/err"
	wait $h
	grep -q "network '$tag' is not up" "$tmp/err" || { cat "$tmp/err"; return 1; }
	echo 4 >"$f"
	flock "$f" sleep 30 &
	h=$!
	held_wait "$f"
	timeout 60 "$D" -t "$topo" -s "$tmp/sock" -S "$tmp/state.json" -n $tag -m 0 2>"$tmp/err"
	kill $h 2>/dev/null
	wait $h 2>/dev/null
	rm -f "$f"
	grep -q "network '$tag' already has its daemon (pid 4)" "$tmp/err" || { cat "$tmp/err"; return 1; }
}
t "a lock held for a moment is waited for, one held for good refused" brief_hold
t_skip=
t "-h prints the usage, exit 0" bash -c "'$D' -h | grep -q '^Usage: inaggd -t TOPOLOGY -n TAG'"

finish
