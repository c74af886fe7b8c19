#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# inagg dev attach / detach / show on one interface of a namespace (KTAP).
BUILD=${BUILD:-build}
INAGG=$(realpath -m "$BUILD/inagg")
NS=ia-at$$
SW=ia-at$$-sw
tmp=$(mktemp -d)
cleanup() {
	ip netns del "$NS" 2>/dev/null
	rm -rf "/sys/fs/bpf/inagg/$SW" "/sys/fs/bpf/inagg/$SW"-[123] "$tmp"
}
trap cleanup EXIT

. "$(dirname "$0")/../ktap.sh"

setup() {
	ip netns add "$NS" &&
	ip -n "$NS" link add eth1 type veth peer name eth2 &&
	ip -n "$NS" link set eth1 up && ip -n "$NS" link set eth2 up
}

attach() {
	"$INAGG" dev attach eth1 --netns "$NS" --switch "$SW" &&
	ip -n "$NS" link show eth1 | grep -q 'prog/xdp' &&
	"$INAGG" dev show --netns "$NS" --switch "$SW" | grep -E '^  eth1 .* ia_xdp$' &&
	"$INAGG" dev --netns "$NS" --switch "$SW" | grep -E '^  eth2 .* no xdp$' &&
	[ -e "/sys/fs/bpf/inagg/$SW/ia_jobs" ]
}

status_json() {
	"$INAGG" -j dev show --netns "$NS" --switch "$SW" >"$tmp/st.json" &&
	grep -q '"name": "eth1"' "$tmp/st.json" && grep -q '"prog": "ia_xdp"' "$tmp/st.json" &&
	grep -q '"backend"' "$tmp/st.json"
}

detach() {
	"$INAGG" detach dev eth1 --netns "$NS" --switch "$SW" &&
	! ip -n "$NS" link show eth1 | grep -q 'prog/xdp'
}

bad_input() {
	local out
	out=$("$INAGG" dev attach nosuch0 --netns "$NS" --switch "$SW" 2>&1) && return 1
	[[ $out == *"nosuch0"* ]] || { echo "$out"; return 1; }
	out=$("$INAGG" dev attach --netns "$NS" 2>&1) && return 1
	[[ $out == *"missing IFACE"* ]] || { echo "$out"; return 1; }
	out=$("$INAGG" dev attach eth1 --netns ia-no-such-ns 2>&1) && return 1
	[[ $out == *"ia-no-such-ns"* ]] || { echo "$out"; return 1; }
	out=$("$INAGG" dev attach eth1 --netns "$NS" -m fast 2>&1) && return 1
	[[ $out == *"-m: invalid value 'fast': need auto, drv or skb"* ]] || { echo "$out"; return 1; }
}

t "namespace with a veth pair" setup
t "attach: XDP on eth1 with the switch's pinned maps" attach
t "dev show -j lists interfaces, programs and the ledger backend" status_json
t "detach (old name, dev keyword) removes the program" detach
t "bad device, namespace or mode refused with a reason" bad_input

# Detaching names a switch that exists and a port that has inagg's program.
detach_errors() {
	local out
	out=$("$INAGG" dev detach eth1 --netns "$NS" --switch ia-no-such-sw 2>&1) && return 1
	[[ $out == *"switch ia-no-such-sw"* ]] || { echo "$out"; return 1; }
	[ ! -e /sys/fs/bpf/inagg/ia-no-such-sw ] || { echo "pinned a switch"; return 1; }
	out=$("$INAGG" dev detach eth2 --netns "$NS" --switch "$SW" 2>&1) && return 1
	[[ $out == *"eth2"* ]] || { echo "$out"; return 1; }
}
t "detach: unknown switch or nothing attached is an error" detach_errors

# A switch's ports attached all at once, as systemd starts their inagg-attach@ units at boot:
# each attach succeeds and all share one program (the switch's pins), in three fresh switches.
together() {
	local r i pids p ids
	for i in 1 2 3 4; do
		ip -n "$NS" link add "p$i" type veth peer name "q$i" && ip -n "$NS" link set "p$i" up &&
			ip -n "$NS" link set "q$i" up || return 1
	done
	for r in 1 2 3; do
		pids=()
		for i in 1 2 3 4; do
			"$INAGG" dev attach "p$i" --netns "$NS" --switch "$SW-$r" >"$tmp/at$i" 2>&1 &
			pids+=($!)
		done
		for p in "${pids[@]}"; do wait "$p" || { cat "$tmp"/at*; return 1; }; done
		ids=$(for i in 1 2 3 4; do ip -n "$NS" -d link show "p$i" |
			sed -n 's/.*prog\/xdp id \([0-9]*\).*/\1/p'; done | sort -u)
		[ "$(wc -w <<<"$ids")" = 1 ] || { echo "switch $SW-$r: programs $ids"; return 1; }
		for i in 1 2 3 4; do
			"$INAGG" dev detach "p$i" --netns "$NS" --switch "$SW-$r" >/dev/null || return 1
		done
		rm -rf "/sys/fs/bpf/inagg/$SW-$r"
	done
}
t "a switch's four ports attached at once: all attached, one program" together

# The same where nobody mounted bpffs (as on a router VM whose systemd did not): it is mounted
# once, not once per port (stacked mounts each took their own pins). In a mount namespace of
# its own, whose pins go with it.
unmounted() {
	unshare -m --propagation private bash -c '
		umount -l /sys/fs/bpf && ! grep -q " /sys/fs/bpf " /proc/self/mounts || exit 1
		pids=() rc=0
		for i in 1 2 3 4; do
			"$0" dev attach "p$i" --netns "$1" --switch "$2" >"$3/um$i" 2>&1 &
			pids+=($!)
		done
		for p in "${pids[@]}"; do wait "$p" || rc=1; done
		n=$(grep -c " /sys/fs/bpf bpf " /proc/self/mounts)
		echo "bpffs mounted $n times"; cat "$3"/um*
		[ "$rc" = 0 ] && [ "$n" = 1 ]' "$INAGG" "$NS" "$SW-m" "$tmp"
}
t "bpffs not mounted: four ports attached at once mount it once" unmounted
finish
