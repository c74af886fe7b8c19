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

# No IPv6 in the namespace: eth2's router solicitations and MLD reports would reach eth1's
# program and count as passed frames beside show_stats' own (seen once in CI: 'passed 3').
setup() {
	ip netns add "$NS" &&
	ip netns exec "$NS" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 \
		net.ipv6.conf.default.disable_ipv6=1 &&
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

# Frames sent into eth1 from its peer by a packet socket: n inagg messages of version 9 and
# m frames that are not inagg's (ethertype 0x88b5).
send_frames() {
	ip netns exec "$NS" python3 - "$1" "$2" \
		"$(ip -n "$NS" -br link show eth1 | awk '{ print $3 }')" <<'PY'
import socket, struct, sys
n, m, mac = int(sys.argv[1]), int(sys.argv[2]), bytes.fromhex(sys.argv[3].replace(":", ""))
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind(("eth2", 0))
src = b"\x02\x00\x00\x00\x00\x02"
hdr = struct.pack("!BBIIIIHBB", 9, 1, 7, 0, 1, 1, 1, 0, 0) + b"\0" * 4
udp = struct.pack("!HHHH", 40000, 9430, 8 + len(hdr), 0)
ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp) + len(hdr), 0, 0, 64, 17, 0,
                 bytes([10, 0, 0, 2]), bytes([10, 0, 0, 1]))
for _ in range(n):
    s.send(mac + src + b"\x08\x00" + ip + udp + hdr)
for _ in range(m):
    s.send(mac + src + b"\x88\xb5" + b"\0" * 46)
PY
}

# dev show: the port's program id, mode and tag are ip link's; --stats: its counters, by
# outcome, from the datapath's per-CPU counters (drops by reason, frames passed).
show_stats() {
	local line id tag mode
	send_frames 3 2 || return 1
	line=$("$INAGG" dev show --stats --netns "$NS" --switch "$SW" | tee "$tmp/show" |
		grep -E '^  eth1 ') || { cat "$tmp/show"; return 1; }
	id=$(ip -n "$NS" -d link show eth1 | sed -n 's/.*prog\/xdp id \([0-9]*\) .*/\1/p')
	tag=$(ip -n "$NS" -d link show eth1 | sed -n 's/.*prog\/xdp id .* tag \([0-9a-f]*\).*/\1/p')
	mode=$(ip -n "$NS" -d link show eth1 | grep -q 'xdpgeneric' && echo skb || echo drv)
	cat "$tmp/show"
	[[ $line =~ \ xdp\ id\ $id\ mode\ $mode\ tag\ $tag\ ia_xdp$ ]] ||
		{ echo "want id $id mode $mode tag $tag"; return 1; }
	# The counters follow eth1's line, indented; eth2 (no xdp) has none.
	awk '/^  eth1 / { on = 1; next } /^  [^ ]/ { on = 0 } on' "$tmp/show" >"$tmp/ctr"
	grep -qw 'drop_version 3' "$tmp/ctr" && grep -qw 'passed 2' "$tmp/ctr" &&
	grep -qw 'rx [0-9]*' "$tmp/ctr" || return 1
	awk '/^  eth2 / { on = 1; next } /^  [^ ]/ { on = 0 } on' "$tmp/show" | grep -q . &&
		{ echo "counters under eth2"; return 1; }
	"$INAGG" -j dev show --stats --netns "$NS" --switch "$SW" >"$tmp/st.json" &&
	python3 - "$tmp/st.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
p = {i["name"]: i for i in d["interfaces"]}
st = p["eth1"]["stats"]
assert st["drop_version"] == 3 and st["passed"] == 2, st
assert all(isinstance(v, int) for v in st.values()) and len(st) >= 20, st
assert "stats" not in p["eth2"], p["eth2"]
assert p["eth1"]["mode"] in ("drv", "skb") and len(p["eth1"]["tag"]) == 16, p["eth1"]
PY
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
t "dev show: id, mode, tag as ip link says; --stats: eth1's frames by outcome, text and JSON" show_stats
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
