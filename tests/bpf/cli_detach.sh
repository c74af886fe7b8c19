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

# A pinned ia_jobs of the wrong type: switch s2's maps cannot be loaded.
topo_attach_fails_cleanly() {
	local out
	mkdir -p "/sys/fs/bpf/inagg/ia-$TAG-s2" &&
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
t "net up --attach: a switch that cannot load fails cleanly, nothing left" topo_attach_fails_cleanly
finish
