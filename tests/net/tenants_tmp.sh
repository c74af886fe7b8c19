#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# inagg eval tenants (live) against a folder planted beforehand (issue 31): a
# temporary user makes /tmp/inagg-tenants-1 (the name the eval used, by its
# pid: 1 in a pid namespace of its own) full of symlinks to a root-owned file.
# The eval runs until its daemon answers and is stopped: the file is the same
# byte for byte, the planted folder unchanged, and the eval worked in a 0700
# folder of its own under /run/inagg. Needs root; run under flock
# /tmp/inagg-heavy.lock. KTAP.
BUILD=${BUILD:-build}
INAGG=$(realpath -m "$BUILD/inagg")
tmp=$(mktemp -d)
user=iat$$ plant=/tmp/inagg-tenants-1 run=
cleanup() {
	[ -n "$run" ] && kill "$run" 2>/dev/null && wait "$run" 2>/dev/null
	rm -rf "$plant" "$tmp"
	[ -n "$new" ] && rm -rf "$new"
	userdel "$user" 2>/dev/null
}
trap "cleanup; true" EXIT
. "$(dirname "$0")/../ktap.sh"

if [ "$(id -u)" != 0 ] || ! command -v useradd >/dev/null || ! command -v unshare >/dev/null; then
	echo "TAP version 13"
	echo "1..0 # SKIP needs root, useradd and unshare"
	exit 0
fi
if [ -e "$plant" ]; then
	echo "TAP version 13"
	echo "1..0 # SKIP $plant exists already"
	exit 0
fi

planted() {
	useradd -M -N -g nogroup -s /usr/sbin/nologin "$user" || return 1
	head -c 4096 /dev/urandom >"$tmp/victim"
	cp "$tmp/victim" "$tmp/victim.orig"
	chmod 0755 "$tmp"
	setpriv --reuid="$user" --regid=nogroup --clear-groups sh -c '
		mkdir -m 0777 "$1" && cd "$1" || exit 1
		for f in topo.json inaggd.log state.json state.json.tmp inaggd.sock ledger \
			 agent.json; do ln -s "$2" "$f" || exit 1; done' sh "$plant" "$tmp/victim" ||
		return 1
	ls -lA --time-style=full-iso "$plant" >"$tmp/plant.before"
	[ "$(stat -c %U "$plant")" = "$user" ]
}

# The eval as pid 1 of a pid namespace, stopped once its daemon answers.
eval_runs() {
	local before i pid up=
	before=$(ls -d /run/inagg/tenants-* 2>/dev/null)
	unshare --pid --fork "$INAGG" eval tenants --quick >"$tmp/eval.out" 2>&1 &
	run=$!
	for i in $(seq 1 1200); do
		for d in /run/inagg/tenants-*; do
			[ -d "$d" ] && ! grep -qxF "$d" <<<"$before" && new=$d
		done
		[ -n "$new" ] && [ -S "$new/inaggd.sock" ] && up=1 && break
		kill -0 "$run" 2>/dev/null || break
		sleep 0.1
	done
	pid=$(pgrep -P "$run" | head -1)
	[ -n "$pid" ] && kill -TERM "$pid"
	wait "$run"
	run=
	[ -n "$up" ] || { tail "$tmp/eval.out"; return 1; }
	# Stopped, it took its network down.
	! ip netns list | grep -q "^ia-e1-" || { ip netns list; return 1; }
}

victim_same() { cmp "$tmp/victim" "$tmp/victim.orig"; }

plant_same() {
	ls -lA --time-style=full-iso "$plant" >"$tmp/plant.after"
	diff "$tmp/plant.before" "$tmp/plant.after"
}

own_folder() {
	[ "$(stat -c '%a %U' "$new")" = "700 root" ] || { stat "$new"; return 1; }
	[ -f "$new/topo.json" ] && [ ! -L "$new/topo.json" ] || { ls -la "$new"; return 1; }
}

t "a user plants $plant with symlinks to a root-owned file" planted
t "the live eval runs until its daemon answers, then is stopped" eval_runs
t "the symlinks' target is unchanged, byte for byte" victim_same
t "the planted folder is unchanged" plant_same
t "the eval worked in a 0700 folder of root's under /run/inagg" own_folder
finish
