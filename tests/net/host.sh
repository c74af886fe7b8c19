#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# "inagg worker" and "inagg ps" on a live network (KTAP): a PS namespace and 3
# worker namespaces joined by a plain Linux bridge in a middle namespace.
# Needs root; $BUILD/inagg's worker and ps commands are tested, not assumed.
BUILD=${BUILD:-build}
INAGG=$(realpath -m "$BUILD/inagg")
P=ia-hs$$
NS=("$P-br" "$P-ps" "$P-w0" "$P-w1" "$P-w2")
tmp=$(mktemp -d)
pids=()

cleanup() {
	local p n
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
	for n in "${NS[@]}"; do ip netns del "$n" 2>/dev/null; done
	rm -rf "$tmp"
}
trap cleanup EXIT

. "$(dirname "$0")/../ktap.sh"

# Network namespaces need root; a CLI without worker or ps is a failure.
[ "$(id -u)" = 0 ] || skip_all "needs root (network namespaces)"
t "inagg worker run -h and ps run -h" bash -c '"$0" worker run -h && "$0" ps run -h' "$INAGG"

setup() {
	local i ns
	ip netns add "$P-br" || return 1
	ip -n "$P-br" link add br0 type bridge && ip -n "$P-br" link set br0 up || return 1
	for i in 1 2 3 4; do
		ns=${NS[$i]}
		ip netns add "$ns" &&
		ip -n "$P-br" link add h$i type veth peer name p$i &&
		ip -n "$P-br" link set h$i netns "$ns" &&
		ip -n "$ns" link set h$i name eth0 &&
		ip -n "$ns" addr add 10.78.0.$i/24 dev eth0 &&
		ip -n "$ns" link set eth0 up && ip -n "$ns" link set lo up &&
		ip -n "$P-br" link set p$i master br0 up || return 1
	done
}
# PS 10.78.0.1, worker k 10.78.0.(2 + k).

# Starts "inagg ps ARGS" in the PS namespace; returns once it is bound.
ps_start() {
	rm -f "$tmp/ready"
	ip netns exec "$P-ps" "$INAGG" "$@" --ready "$tmp/ready" >"$tmp/ps.out" 2>"$tmp/ps.err" &
	ps_pid=$!
	pids+=("$ps_pid")
	# The PS creates the file once its socket is bound.
	local i
	for i in $(seq 100); do
		[ -f "$tmp/ready" ] && return 0
		kill -0 "$ps_pid" 2>/dev/null || break
		sleep 0.05
	done
	echo "PS did not get ready: $(cat "$tmp/ps.err")"
	return 1
}

# Runs worker k with ARGS in its namespace, output to $tmp/wK.out.
worker_start() {
	local k=$1
	shift
	ip netns exec "$P-w$k" "$INAGG" "$@" -i "$k" -p 10.78.0.1 -A 10.78.0.$((2 + k)) \
		>"$tmp/w$k.out" 2>"$tmp/w$k.err" &
	wpid[$k]=$!
	pids+=("${wpid[$k]}")
}

workers_wait() {
	local k rc=0
	for k in 0 1 2; do
		wait "${wpid[$k]}" || { echo "worker $k failed: $(cat "$tmp/w$k.err")"; rc=1; }
	done
	return $rc
}

ps_wait() {
	wait "$ps_pid" || { echo "PS failed: $(cat "$tmp/ps.err")"; return 1; }
}

json_field() {
	sed -n "s/^  \"$2\": \"\{0,1\}\([^\",]*\)\"\{0,1\},\{0,1\}$/\1/p" "$1"
}

# Integer vectors from files: every worker's output is the exact sum.
exact_files() {
	local k
	for k in 0 1 2; do
		awk -v k=$k 'BEGIN { for (i = 0; i < 5000; i++) print (k + 1) * 1000000 - i * (k + 3) }' \
			>"$tmp/in$k"
	done
	paste "$tmp/in0" "$tmp/in1" "$tmp/in2" | awk '{ print $1 + $2 + $3 }' >"$tmp/want"
	ps_start -j ps run -J 21 --nworkers 3 -e 5000 -C 100 -u -M 0-2 -A 10.78.0.1 --linger 500 \
		-o "$tmp/ps.vec" || return 1
	for k in 0 1 2; do
		worker_start $k worker run -J 21 -C 100 --nworkers 3 -f "$tmp/in$k" -o "$tmp/res$k"
	done
	workers_wait && ps_wait || return 1
	for k in 0 1 2; do
		cmp "$tmp/want" "$tmp/res$k" || { echo "worker $k: wrong result"; return 1; }
	done
	cmp "$tmp/want" "$tmp/ps.vec" || { echo "PS: wrong sum"; return 1; }
	[ "$(json_field "$tmp/ps.out" contributions)" = 150 ] || {
		echo "contributions: want 150"; cat "$tmp/ps.out"; return 1; }
	[ "$(json_field "$tmp/ps.out" complete)" = true ] || { cat "$tmp/ps.out"; return 1; }
}

# Random vectors (seeds), results sent once per chunk to the broadcast
# address: every worker reports the PS's checksum, 2000 chunks.
checksums_down() {
	local k c want
	ps_start -j ps run -J 22 --nworkers 3 -e 512000 -D 10.78.0.255 -A 10.78.0.1 --linger 500 --expect 40-42 ||
		return 1
	for k in 0 1 2; do
		# Bound to any address: results come to the broadcast address.
		ip netns exec "$P-w$k" "$INAGG" -j worker run -J 22 -i $k -p 10.78.0.1 -s $((k + 40)) \
			-e 512000 -w 32 >"$tmp/w$k.out" 2>"$tmp/w$k.err" &
		wpid[$k]=$!
		pids+=("${wpid[$k]}")
	done
	workers_wait && ps_wait || return 1
	want=$(json_field "$tmp/ps.out" checksum)
	[ -n "$want" ] || { cat "$tmp/ps.out"; return 1; }
	for k in 0 1 2; do
		c=$(json_field "$tmp/w$k.out" checksum)
		[ "$c" = "$want" ] || { echo "worker $k checksum $c, PS $want"; return 1; }
		[ "$(json_field "$tmp/w$k.out" results)" = 2000 ] || return 1
	done
	[ "$(json_field "$tmp/ps.out" contributions)" = 6000 ] || { cat "$tmp/ps.out"; return 1; }
	[ "$(json_field "$tmp/ps.out" exact)" = true ] || { cat "$tmp/ps.out"; return 1; }
}

# --expect with other seeds than the workers': "exact": false and a failure.
expect_mismatch() {
	ps_start -j ps run -J 25 --nworkers 1 -e 10 -u -A 10.78.0.1 --linger 300 --expect 7 || return 1
	worker_start 0 worker run -J 25 -e 10 -s 8
	wait "${wpid[0]}" || { cat "$tmp/w0.err"; return 1; }
	wait "$ps_pid" && { echo "PS succeeded on a wrong sum"; return 1; }
	[ "$(json_field "$tmp/ps.out" exact)" = false ] || { cat "$tmp/ps.out"; return 1; }
}

# Real numbers in fixed point (2^-16): the sum within 3 * 2^-17.
floats() {
	local k
	for k in 0 1 2; do
		awk -v k=$k 'BEGIN { for (i = 0; i < 700; i++) printf "%.6f\n", (i - 350) * 0.731 / (k + 1) }' \
			>"$tmp/f$k"
	done
	ps_start ps run -J 23 --nworkers 3 -e 700 -u -A 10.78.0.1 --linger 500 || return 1
	for k in 0 1 2; do
		worker_start $k worker run -J 23 -F 16 -f "$tmp/f$k" -o "$tmp/fr$k"
	done
	workers_wait && ps_wait || return 1
	for k in 0 1 2; do
		paste "$tmp/f0" "$tmp/f1" "$tmp/f2" "$tmp/fr$k" | awk '
			{ d = $1 + $2 + $3 - $4; if (d < 0) d = -d; if (d > 3 * 2^-17) bad++ }
			END { if (bad || NR != 700) { print bad " elements off, " NR " lines"; exit 1 } }' ||
			return 1
	done
}

# A --forever PS serves until SIGTERM, then prints its statistics and succeeds.
forever() {
	ps_start -j ps run -J 24 --nworkers 1 -e 10 -u -A 10.78.0.1 --forever || return 1
	worker_start 0 worker run -J 24 -e 10
	wait "${wpid[0]}" || { cat "$tmp/w0.err"; return 1; }
	kill -0 "$ps_pid" || { echo "PS ended before SIGTERM"; return 1; }
	kill -TERM "$ps_pid"
	ps_wait || return 1
	[ "$(json_field "$tmp/ps.out" complete)" = true ] || { cat "$tmp/ps.out"; return 1; }
}

# Bad input is refused with a one-line reason.
bad_input() {
	local out
	printf '1 2 x3\n' >"$tmp/bad"
	out=$("$INAGG" worker run -J 1 -i 0 -p 10.78.0.1 -f "$tmp/bad" 2>&1) && return 1
	[[ $out == *"element 3: invalid int32 'x3'"* ]] || { echo "$out"; return 1; }
	printf '1 2147483648\n' >"$tmp/bad"
	out=$("$INAGG" worker run -J 1 -i 0 -p 10.78.0.1 -f "$tmp/bad" 2>&1) && return 1
	[[ $out == *"element 2"* ]] || { echo "$out"; return 1; }
	out=$("$INAGG" worker run -J 1 -i 0 -p 10.78.0.1 -e 0 2>&1) && return 1
	[[ $out == *"-e: invalid value '0'"* ]] || { echo "$out"; return 1; }
	out=$("$INAGG" ps run -J 1 --nworkers 2 -e 10 2>&1) && return 1
	[[ $out == *"missing -D ADDR or -u"* ]] || { echo "$out"; return 1; }
	out=$("$INAGG" -j ps run -J 1 --nworkers 2 -e 10 -u -M 3-1 2>/dev/null) && return 1
	[[ $out == *'"error"'*"-M: invalid list"* ]] || { echo "$out"; return 1; }
}

# A worker without its PS: the PS's host refuses (ICMP port unreachable), and
# an address of the link that nobody has fails ARP (ICMP host unreachable),
# and one without a route is refused by every send (ENETUNREACH).
# Each is one line "no PS at ADDR:9430" within seconds; it was "no result
# after 50 retransmissions" after about 45 s.
no_ps() {
	local out rc
	out=$(timeout 10 ip netns exec "$P-w0" "$INAGG" worker run -J 26 -i 0 -p 10.78.0.1 \
		-A 10.78.0.2 -e 10 --cc fixed --class ina 2>&1)
	rc=$?
	[ $rc -eq 1 ] && [[ $out == *"no PS at 10.78.0.1:9430: nothing listens on that port"* ]] ||
		{ echo "no PS: exit $rc: $out"; return 1; }
	out=$(timeout 15 ip netns exec "$P-w0" "$INAGG" worker run -J 26 -i 0 -p 10.78.0.99 \
		-A 10.78.0.2 -e 10 --cc fixed --class ina 2>&1)
	rc=$?
	[ $rc -eq 1 ] && [[ $out == *"no PS at 10.78.0.99:9430: host unreachable"* ]] ||
		{ echo "no host: exit $rc: $out"; return 1; }
	# No route at all (the namespace has only its link's): each send is refused.
	out=$(timeout 10 ip netns exec "$P-w0" "$INAGG" worker run -J 26 -i 0 -p 10.99.0.1 \
		-A 10.78.0.2 -e 10 --cc fixed --class ina 2>&1)
	rc=$?
	[ $rc -eq 1 ] && [[ $out == *"no PS at 10.99.0.1:9430: no route to it"* ]] ||
		{ echo "no route: exit $rc: $out"; return 1; }
}

t "network setup" setup
t "integer files: every worker gets the exact sum" exact_files
t "random vectors, results down to one address: checksums agree" checksums_down
t "--expect: a sum of other seeds is reported as not exact" expect_mismatch
t "float fixed-point round trip" floats
t "--forever PS ends on SIGTERM with statistics" forever
t "bad input refused with a reason" bad_input
t "no PS: the address, within seconds" no_ps
finish
