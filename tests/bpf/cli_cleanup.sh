#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# inagg dev cleanup (KTAP): a switch whose ports vanished without a detach (its namespace
# deleted) leaves pins behind; cleanup --dry-run names it and removes nothing, cleanup
# removes its pins and keeps those of a switch still attached, which goes on working, and a
# second run removes nothing. The removing runs are limited to this test's switches
# (--switch 'ia-ccPID-*'): stale pins of anyone else on the host are not this test's to
# remove, and a switch being set up elsewhere meanwhile has pins but no port yet.
BUILD=${BUILD:-build}
INAGG=$(realpath -m "$BUILD/inagg")
NSA=ia-$$-cca
NSB=ia-$$-ccb
SWA=ia-cc$$-a
SWB=ia-cc$$-b
SWC=ia-cc$$-c
MINE="ia-cc$$-*"
PINS=/sys/fs/bpf/inagg
tmp=$(mktemp -d)
cleanup() {
	ip netns del "$NSA" 2>/dev/null
	ip netns del "$NSB" 2>/dev/null
	rm -rf "$PINS/$SWA" "$PINS/$SWB" "$PINS/$SWC" "$tmp"
}
trap cleanup EXIT

. "$(dirname "$0")/../ktap.sh"

[ "$(id -u)" -eq 0 ] || skip_all "needs root"

xdp_id() {	# xdp_id NS IFACE: the id of the XDP program on IFACE, empty if none
	ip -n "$1" -d link show "$2" | grep -oE 'prog/xdp id [0-9]+' | grep -oE '[0-9]+$'
}

setup() {	# two namespaces, each with a veth pair and a switch on eth1
	local ns
	for ns in "$NSA" "$NSB"; do
		ip netns add "$ns" &&
		ip -n "$ns" link add eth1 type veth peer name eth2 &&
		ip -n "$ns" link set eth1 up && ip -n "$ns" link set eth2 up || return 1
	done
	"$INAGG" dev attach eth1 --netns "$NSA" --switch "$SWA" &&
	"$INAGG" dev attach eth1 --netns "$NSB" --switch "$SWB" &&
	[ -n "$(xdp_id "$NSA" eth1)" ] && [ -n "$(xdp_id "$NSB" eth1)" ] &&
	[ -e "$PINS/$SWA/prog_ia_xdp" ] && [ -e "$PINS/$SWB/prog_ia_xdp" ]
}

# Namespace B deleted without a detach: its veths and their XDP program go, the pins stay.
vanish() {
	ip netns del "$NSB" && [ -e "$PINS/$SWB/prog_ia_xdp" ]
}

dry_run() {
	local out
	# Every switch of the host, removing nothing: B would go, A stays.
	out=$("$INAGG" dev cleanup --dry-run 2>"$tmp/err") || { echo "$out"; cat "$tmp/err"; return 1; }
	echo "$out"
	grep -qx "$SWB: would remove (attached to no port: --dry-run)" <<<"$out" &&
	grep -qx "$SWA: kept: attached to 1 port" <<<"$out" || return 1
	out=$("$INAGG" -j dev cleanup --dry-run --switch "$MINE" 2>"$tmp/err") || { echo "$out"; cat "$tmp/err"; return 1; }
	echo "$out"
	jq -e --arg a "$SWA" --arg b "$SWB" '.dry_run and
		([.switches[] | select(.switch == $b and .action == "would remove" and .ports == 0)]
		 | length == 1) and
		([.switches[] | select(.switch == $a and .action == "kept" and .ports == 1)]
		 | length == 1) and (.switches | length == 2)' <<<"$out" >/dev/null &&
	[ -e "$PINS/$SWB/prog_ia_xdp" ] && [ -e "$PINS/$SWA/prog_ia_xdp" ]
}

remove() {
	local out
	out=$("$INAGG" dev cleanup --switch "$MINE" 2>"$tmp/err") || { echo "$out"; cat "$tmp/err"; return 1; }
	echo "$out"
	[ "$out" = "$SWA: kept: attached to 1 port
$SWB: removed (attached to no port)" ] &&
	[ ! -e "$PINS/$SWB" ] && [ -e "$PINS/$SWA/prog_ia_xdp" ]
}

# A still runs its program with its maps: dev show sees it, detach unpins it as usual.
a_works() {
	local out id
	id=$(xdp_id "$NSA" eth1)
	[ -n "$id" ] || { echo "eth1 of $NSA lost its program"; return 1; }
	out=$("$INAGG" dev show --netns "$NSA" --switch "$SWA" 2>"$tmp/err") || { echo "$out"; cat "$tmp/err"; return 1; }
	echo "$out"
	grep -qE "^  eth1 .* xdp id $id .* ia_xdp\$" <<<"$out" || return 1
	"$INAGG" dev attach eth2 --netns "$NSA" --switch "$SWA" >/dev/null &&
	[ "$(xdp_id "$NSA" eth2)" = "$id" ] &&
	"$INAGG" dev detach eth2 --netns "$NSA" --switch "$SWA" >/dev/null
}

again() {
	local out
	out=$("$INAGG" dev cleanup --switch "$MINE" 2>"$tmp/err") || { echo "$out"; cat "$tmp/err"; return 1; }
	echo "$out"
	[ "$out" = "$SWA: kept: attached to 1 port" ] && [ -e "$PINS/$SWA/prog_ia_xdp" ]
}

# The last port detached, A's pins go with it and cleanup finds nothing of this test's.
none_left() {
	local out
	"$INAGG" dev detach eth1 --netns "$NSA" --switch "$SWA" >/dev/null &&
	[ ! -e "$PINS/$SWA" ] || return 1
	out=$("$INAGG" dev cleanup --switch "$MINE" 2>"$tmp/err") || { echo "$out"; cat "$tmp/err"; return 1; }
	[ "$out" = "no switch matching $MINE pinned under $PINS" ] || { echo "$out"; return 1; }
}

# Switch C without its program's pin (an older version's, a half-done removal): kept while a
# port runs a program on its maps; once the veth is removed (no detach), removed.
no_prog_pin() {
	local out
	"$INAGG" dev attach eth1 --netns "$NSA" --switch "$SWC" >/dev/null &&
	rm "$PINS/$SWC/prog_ia_xdp" || return 1
	out=$("$INAGG" dev cleanup --switch "$MINE" 2>"$tmp/err") || { echo "$out"; cat "$tmp/err"; return 1; }
	echo "$out"
	[ "$out" = "$SWC: no readable ia_xdp program pin; kept: attached to 1 port" ] &&
	[ -e "$PINS/$SWC/ia_jobs" ] || return 1
	ip -n "$NSA" link del eth1 || return 1
	out=$("$INAGG" dev cleanup --switch "$MINE" 2>"$tmp/err") || { echo "$out"; cat "$tmp/err"; return 1; }
	echo "$out"
	[ "$out" = "$SWC: no readable ia_xdp program pin; removed (attached to no port)" ] &&
	[ ! -e "$PINS/$SWC" ]
}

not_root() {
	local out
	command -v setpriv >/dev/null || { echo "no setpriv"; return 1; }
	out=$(setpriv --reuid=65534 --regid=65534 --clear-groups "$INAGG" dev cleanup 2>&1) &&
		return 1
	[[ $out == *"needs root"* ]] || { echo "$out"; return 1; }
}

t "two namespaces, a switch attached in each" setup
t "namespace B deleted without a detach: its pins stay" vanish
t "cleanup --dry-run names B's switch, keeps A's, removes nothing" dry_run
t "cleanup removes B's pins and keeps A's" remove
t "A still attached and working" a_works
t "a second cleanup removes nothing" again
t "after A's last detach, nothing of this test's is pinned" none_left
t "no program pin: kept while its maps run, removed once its veth is gone" no_prog_pin
t "not root: a clear error" not_root
finish
