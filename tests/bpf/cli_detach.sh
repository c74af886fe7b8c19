#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# inagg dev attach / dev detach as an operator relies on them (KTAP): a wrong switch
# name creates nothing, detaching nothing fails, another switch's program is
# neither replaced nor removed unless --force, one program serves a switch's
# ports, and net up --attach fails cleanly when a switch cannot load.
BUILD=${BUILD:-build}
INAGG=$(realpath -m "$BUILD/inagg")
NS=ia-cd$$
SW=ia-cd$$-sw
OTHER=ia-cd$$-other
WRONG=ia-cd$$-wrong
TAG=cd$$
tmp=$(mktemp -d)
cleanup() {
	ip netns del "$NS" 2>/dev/null
	"$INAGG" net down -n "$TAG" -t docs/fig1.json >/dev/null 2>&1
	rm -rf "/sys/fs/bpf/inagg/ia-$TAG-s2"
	rm -rf "/sys/fs/bpf/inagg/$SW" "/sys/fs/bpf/inagg/$OTHER" "/sys/fs/bpf/inagg/$WRONG" "$tmp"
}
trap cleanup EXIT

. "$(dirname "$0")/../ktap.sh"

# This tree's IA_MAPS_LAYOUT (include/inagg/maps.h).
LAYOUT=$(sed -n 's/^#define IA_MAPS_LAYOUT[[:space:]]*\([0-9]*\)u\?$/\1/p' include/inagg/maps.h)

# pin_layout DIR N: DIR/ia_layout recording map layout N, as the loader pins it.
pin_layout() {
	bpftool map create "$1/ia_layout" type array key 4 value 4 entries 1 name ia_layout &&
	bpftool map update pinned "$1/ia_layout" key 0 0 0 0 \
		value $(($2 & 255)) $(($2 >> 8 & 255)) $(($2 >> 16 & 255)) $(($2 >> 24 & 255))
}

xdp_id() {	# xdp_id IFACE: the id of the XDP program on IFACE, empty if none
	ip -n "$NS" -d link show "$1" | grep -oE 'prog/xdp id [0-9]+' | grep -oE '[0-9]+$'
}

setup() {
	ip netns add "$NS" &&
	ip -n "$NS" link add eth1 type veth peer name eth2 &&
	ip -n "$NS" link set eth1 up && ip -n "$NS" link set eth2 up
}

wrong_switch() {
	local out
	out=$("$INAGG" dev detach eth1 --netns "$NS" --switch "$WRONG" 2>&1) && return 1
	[[ $out == *"$WRONG"*"not set up"* ]] || { echo "$out"; return 1; }
	[ ! -e "/sys/fs/bpf/inagg/$WRONG" ]
}

detach_nothing() {
	local out
	"$INAGG" dev attach eth1 --netns "$NS" --switch "$SW" >/dev/null &&
	"$INAGG" dev detach eth1 --netns "$NS" --switch "$SW" >/dev/null || return 1
	out=$("$INAGG" dev detach eth1 --netns "$NS" --switch "$SW" 2>&1) && return 1
	[[ $out == *"no inagg program attached"* ]] || { echo "$out"; return 1; }
}

one_program() {
	"$INAGG" dev attach eth1 --netns "$NS" --switch "$SW" >/dev/null &&
	"$INAGG" dev attach eth2 --netns "$NS" --switch "$SW" >/dev/null || return 1
	[ -n "$(xdp_id eth1)" ] && [ "$(xdp_id eth1)" = "$(xdp_id eth2)" ] || return 1
	"$INAGG" dev detach eth2 --netns "$NS" --switch "$SW" >/dev/null
}

others_program_kept() {
	local out id
	id=$(xdp_id eth1)
	out=$("$INAGG" dev attach eth1 --netns "$NS" --switch "$OTHER" 2>&1) && return 1
	[[ $out == *"another inagg switch"*"--force"* ]] || { echo "$out"; return 1; }
	out=$("$INAGG" dev detach eth1 --netns "$NS" --switch "$OTHER" 2>&1) && return 1
	[ "$(xdp_id eth1)" = "$id" ] || return 1
	"$INAGG" dev attach eth1 --netns "$NS" --switch "$OTHER" --force >/dev/null &&
	[ "$(xdp_id eth1)" != "$id" ] &&
	"$INAGG" dev detach eth1 --netns "$NS" --switch "$OTHER" >/dev/null &&
	[ -z "$(xdp_id eth1)" ]
}

# An upgrade (docs/router-vm.md): eth1 runs the program of pins another version made, of
# another layout (stale LAYOUT) or an older package's without ia_layout (stale none). Another
# port is not attached with them, the error saying what to do; detach removes that program
# and, the last port, the pins; the port is then attached with new pins.
stale() {
	local out pins=/sys/fs/bpf/inagg/$SW want
	[ -n "$LAYOUT" ] || { echo "no IA_MAPS_LAYOUT in maps.h"; return 1; }
	"$INAGG" dev attach eth1 --netns "$NS" --switch "$SW" >/dev/null &&
	rm "$pins/ia_layout" || return 1
	if [ "$1" = none ]; then
		want="older inagg"
	else
		pin_layout "$pins" "$1" || return 1
		want="map layout $1, this inagg's is $LAYOUT"
	fi
	out=$("$INAGG" dev attach eth2 --netns "$NS" --switch "$SW" 2>&1) && return 1
	echo "$out"
	[[ $out == *"$want"*"systemctl restart 'inagg-attach@*'"* ]] || return 1
	[ -z "$(xdp_id eth2)" ] || { echo "eth2 attached"; return 1; }
	out=$("$INAGG" dev detach eth1 --netns "$NS" --switch "$SW" 2>&1) || { echo "$out"; return 1; }
	echo "$out"
	[[ $out == *unpinned* ]] && [ -z "$(xdp_id eth1)" ] && [ ! -e "$pins" ] || return 1
	"$INAGG" dev attach eth1 --netns "$NS" --switch "$SW" >/dev/null &&
	[ -n "$(xdp_id eth1)" ] && [ -e "$pins/ia_layout" ] &&
	"$INAGG" dev detach eth1 --netns "$NS" --switch "$SW" >/dev/null && [ ! -e "$pins" ]
}

# A pinned ia_jobs of the wrong type: switch s2's maps cannot be loaded.
topo_attach_fails_cleanly() {
	local out
	mkdir -p "/sys/fs/bpf/inagg/ia-$TAG-s2" &&
	pin_layout "/sys/fs/bpf/inagg/ia-$TAG-s2" "$LAYOUT" &&
	bpftool map create "/sys/fs/bpf/inagg/ia-$TAG-s2/ia_jobs" type array key 4 value 4 \
		entries 1 name ia_jobs || return 1
	out=$("$INAGG" net up -t docs/fig1.json -n "$TAG" --attach 2>&1) && return 1
	[[ $out == *"ia-$TAG-s2"*"ia_jobs"* ]] || { echo "$out"; return 1; }
	[[ $out != *"double free"* && $out != *"Aborted"* ]] || { echo "$out"; return 1; }
	! ip netns list | grep -q "^ia-$TAG-"
}

t "namespace with a veth pair" setup
t "detach with a switch never set up fails and creates nothing" wrong_switch
t "detach with nothing attached fails, saying so" detach_nothing
t "two ports of a switch run one program" one_program
t "another switch's program: kept unless --force" others_program_kept
t "maps of another layout: refused, saying what to do; detach removes them" \
	stale $((LAYOUT + 1))
t "maps of an older package (no ia_layout): likewise" stale none
t "net up --attach: a switch that cannot load fails cleanly, nothing left" topo_attach_fails_cleanly
finish
