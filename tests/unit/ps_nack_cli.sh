#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# NACKs of "inagg ps run" (docs/hosts.md, "Loss recovery"), KTAP: hand-made
# contributions on loopback show the PS a loss (sender 1's piece of chunk 1
# before its piece of chunk 0); by default the PS sends a NACK and says so
# in its JSON (nacks, nacked), with --no-nack none. No root needed.
BUILD=${BUILD:-build}
INAGG=$BUILD/inagg
tmp=$(mktemp -d /tmp/ia-nackcli-XXXXXX)
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; rm -rf "$tmp"' EXIT
. "$(dirname "$0")/../ktap.sh"

# An address of this process's own (loopback is 127/8): trees may test at once.
net=127.$((($$ >> 8) % 250 + 1)).$(($$ % 250 + 1))

# A CONTRIB of job 9, one element (value 1), chunk $1 from sender $2.
contrib() {
	local seq sender
	seq=$(printf %02x "$1")
	sender=$(printf %02x "$2")
	printf "\x01\x01\x00\x00\x00\x09\x00\x00\x00\x$seq\x00\x00\x00\x$sender\x00\x00\x00\x01\x00\x01\x00\x00\x01\x00\x00\x00" \
		>"/dev/udp/$net.1/9430"
}

# ps_nacks WANT [OPTION]: the PS run with OPTION reports WANT NACK messages.
ps_nacks() {
	local want=$1 i got
	shift
	rm -f "$tmp/ready"
	"$INAGG" -j ps run -J 9 --nworkers 2 -e 2 -C 1 -A "$net.1" -D "$net.2" --linger 200 \
		--ready "$tmp/ready" "$@" >"$tmp/out" 2>"$tmp/err" &
	pids+=($!)
	for i in $(seq 100); do [ -e "$tmp/ready" ] && break; sleep 0.05; done
	[ -e "$tmp/ready" ] || { cat "$tmp/err"; return 1; }
	contrib 1 1
	sleep 0.1
	contrib 0 1
	contrib 0 2
	contrib 1 2
	# A PS that missed a piece would wait for ever: 5 s at most.
	for i in $(seq 100); do kill -0 "${pids[-1]}" 2>/dev/null || break; sleep 0.05; done
	kill "${pids[-1]}" 2>/dev/null
	wait "${pids[-1]}" || { cat "$tmp/out" "$tmp/err"; return 1; }
	got=$(sed -n 's/^  "nacks": \([0-9]*\),$/\1/p' "$tmp/out")
	[ "$got" = "$want" ] || { echo "nacks '$got', want $want"; cat "$tmp/out"; return 1; }
	grep -q '"complete": true' "$tmp/out" || { cat "$tmp/out"; return 1; }
	# Every late-message counter is reported (late_stale was kept from users).
	for i in late late_quiet late_deferred late_stale; do
		grep -q "^  \"$i\": 0," "$tmp/out" || { echo "no $i 0"; cat "$tmp/out"; return 1; }
	done
}

t "ps run: a piece out of order gets one NACK" ps_nacks 1
t "ps run --no-nack: none" ps_nacks 0 --no-nack
finish
