#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# inaggd removes the lock files earlier daemons left in /run/inagg only for
# networks that are not up: the unheld lock of a network whose namespaces
# exist stays, since its daemon may be starting (tests/unit/inaggd_opts.sh
# has the rest). Needs root; run under flock /tmp/ia-net.lock.
BUILD=${BUILD:-build}
D=$(realpath -m "$BUILD/inaggd")
topo=$(dirname "$0")/../../docs/fig1.json
s=$(($$ % 1000000))
up=w$s down=v$s tag=q$s
tmp=$(mktemp -d)
cleanup() {
	ip netns del "ia-$up-dest" 2>/dev/null
	rm -rf "$tmp" /run/inagg/inaggd-$up.lock /run/inagg/inaggd-$down.lock \
		/run/inagg/agent-ia-$up-dest.json
}
trap cleanup EXIT

. "$(dirname "$0")/../ktap.sh"

keeps_up() {
	mkdir -p /run/inagg
	ip netns add "ia-$up-dest" || return 1
	echo 1 >/run/inagg/inaggd-$up.lock
	echo 1 >/run/inagg/inaggd-$down.lock
	: >/run/inagg/agent-ia-$up-dest.json
	timeout 60 "$D" -t "$topo" -s "$tmp/sock" -S "$tmp/state.json" -n $tag -m 0 2>"$tmp/err"
	grep -q "network '$tag' is not up" "$tmp/err" || { cat "$tmp/err"; return 1; }
	[ -e /run/inagg/inaggd-$up.lock ] || { echo "lock of a network up removed"; return 1; }
	[ ! -e /run/inagg/inaggd-$down.lock ] || { echo "stale lock kept"; return 1; }
	[ -e /run/inagg/agent-ia-$up-dest.json ] || { echo "record of a namespace removed"; return 1; }
}
t "a stale lock and agent record of a network that is up stay, a lock of one down goes" keeps_up
finish
