#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# inaggd knows who asks (issue 31): clients run as two users of a temporary
# group and one user outside it, all made (and removed) by this test. A job
# belongs to whoever submitted it: another member cannot end, show or change
# it (EPERM, with why), root can; a user outside the group cannot connect,
# even when the socket's mode lets it in; owners survive a restart (state
# file). A one-switch network in namespaces, a user-space ledger. Needs root;
# run under flock /tmp/inagg-heavy.lock. KTAP.
BUILD=${BUILD:-build}
BUILD=$(cd "$BUILD" && pwd)
tmp=$(mktemp -d /tmp/ia-own-XXXXXX)
d1=
# Names of this run: a group and three users that did not exist before.
grp=iag$$ ua=iaa$$ ub=iab$$ uc=iac$$
cleanup() {
	[ -n "$d1" ] && kill "$d1" 2>/dev/null && wait "$d1" 2>/dev/null
	"$BUILD/inagg" net down -n "$tag" >/dev/null 2>&1
	for u in $ua $ub $uc; do userdel "$u" 2>/dev/null; done
	groupdel "$grp" 2>/dev/null
	rm -rf "$tmp"
}
trap "cleanup; true" EXIT
. "$(dirname "$0")/../ktap.sh"
. "$(dirname "$0")/../daemon.sh"

if [ "$(id -u)" != 0 ]; then
	echo "TAP version 13"
	echo "1..0 # SKIP users, groups and a ledger need root"
	exit 0
fi
if ! command -v useradd >/dev/null || ! command -v setpriv >/dev/null; then
	echo "TAP version 13"
	echo "1..0 # SKIP no useradd or setpriv"
	exit 0
fi
groupadd "$grp" || exit 1
useradd -M -N -g nogroup -G "$grp" -s /usr/sbin/nologin "$ua" &&
	useradd -M -N -g nogroup -G "$grp" -s /usr/sbin/nologin "$ub" &&
	useradd -M -N -g nogroup -s /usr/sbin/nologin "$uc" || exit 1
# The users reach the socket in $tmp, not what is in it.
chmod 0711 "$tmp"

cat >"$tmp/topo.json" <<'JSON'
{"switches": [{"name": "s0", "parent": null, "rate": 1, "load": 2, "slots": 64}]}
JSON
export INAGG_LEDGER=user INAGG_LEDGER_DIR=$tmp/ledger
sock=$tmp/sock
tag=o$(($$ % 1000000))
up() { "$BUILD/inagg" net up -t "$tmp/topo.json" -n "$tag" --attach >/dev/null; }

# "as USER inagg ARGS...": the CLI as USER, with exactly the groups useradd gave it.
as() {
	local u=$1
	shift
	setpriv --reuid="$u" --regid=nogroup --init-groups "$BUILD/inagg" "$@" -S "$sock"
}

start() {
	"$BUILD/inaggd" -t "$tmp/topo.json" -n "$tag" -s "$sock" -S "$tmp/state.json" -m 0 \
		-g "$grp" 2>"$tmp/d.log" &
	d1=$!
	wait_daemon "$sock" "$d1" "$tmp/d.log" 20
}

stop() {
	kill "$d1" && wait "$d1" 2>/dev/null
	d1=
}

socket_mode() {
	local m
	m=$(stat -c '%a %U %G' "$sock")
	[ "$m" = "0660 root $grp" ] || [ "$m" = "660 root $grp" ] || { echo "socket: $m"; return 1; }
}

owner_submits() {
	as "$ua" job submit -k 1 -J 1 >"$tmp/out" 2>&1 || { cat "$tmp/out"; return 1; }
	# The record says whose it is.
	"$BUILD/inagg" -j job list -S "$sock" | grep -q "\"owner\":$(id -u "$ua")" ||
		{ "$BUILD/inagg" -j job list -S "$sock"; return 1; }
}

# A refusal of ub on job 1: exit 1, EPERM named, and the job still there.
refused() {
	as "$ub" "$@" 1 >"$tmp/out" 2>&1 && { echo "allowed: $*"; cat "$tmp/out"; return 1; }
	grep -q "job 1 belongs to uid $(id -u "$ua"): uid $(id -u "$ub") may not .*Operation not permitted" \
		"$tmp/out" || { cat "$tmp/out"; return 1; }
	"$BUILD/inagg" -j job list -S "$sock" | grep -q '"job":1' || { echo "job 1 gone"; return 1; }
}

other_cannot_end() { refused job end -J; }
other_cannot_show() { refused job show -J; }

# A forged request, written by hand to the socket, fares no better than the CLI's.
other_raw_end() {
	printf '{"cmd":"end","job":1}\n' >"$tmp/req"
	setpriv --reuid="$ub" --regid=nogroup --init-groups /usr/bin/python3 -c '
import socket, sys
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])
s.sendall(open(sys.argv[2], "rb").read()); print(s.makefile().readline())' "$sock" "$tmp/req" \
		>"$tmp/out" 2>&1
	grep -q '"ok":false' "$tmp/out" && grep -q '"errno":1' "$tmp/out" ||
		{ cat "$tmp/out"; return 1; }
	"$BUILD/inagg" -j job list -S "$sock" | grep -q '"job":1'
}

owner_shows() {
	as "$ua" -j job show -J 1 >"$tmp/out" 2>&1 || { cat "$tmp/out"; return 1; }
	grep -q '"workers"' "$tmp/out"
}

other_list_hides() {
	as "$ub" -j job list >"$tmp/out" 2>&1 || { cat "$tmp/out"; return 1; }
	! grep -q '"job":1' "$tmp/out" || { cat "$tmp/out"; return 1; }
	as "$ua" -j job list | grep -q '"job":1'
}

outsider_no_file_access() {
	as "$uc" job list >"$tmp/out" 2>&1 && { cat "$tmp/out"; return 1; }
	grep -q "cannot reach inaggd.*Permission denied" "$tmp/out" || { cat "$tmp/out"; return 1; }
}

# The socket's mode opened by hand: the daemon still refuses the outsider.
outsider_refused_by_daemon() {
	chmod 0666 "$sock"
	as "$uc" job list >"$tmp/out" 2>&1
	local rc=$?
	chmod 0660 "$sock"
	[ $rc -ne 0 ] || { cat "$tmp/out"; return 1; }
	grep -q "permission denied: uid $(id -u "$uc") is neither root nor in group '$grp'" \
		"$tmp/out" || { cat "$tmp/out"; return 1; }
	grep -q "neither root nor in group" "$tmp/d.log"
}

owner_after_restart() {
	stop
	start || return 1
	refused job end -J || return 1
	"$BUILD/inagg" -j job list -S "$sock" | grep -q "\"owner\":$(id -u "$ua")"
}

owner_ends() {
	as "$ua" job end -J 1 >"$tmp/out" 2>&1 || { cat "$tmp/out"; return 1; }
	! "$BUILD/inagg" -j job list -S "$sock" | grep -q '"job":1'
}

root_ends_any() {
	as "$ub" job submit -k 1 -J 2 >"$tmp/out" 2>&1 || { cat "$tmp/out"; return 1; }
	"$BUILD/inagg" job end -J 2 -S "$sock" || return 1
	! "$BUILD/inagg" -j job list -S "$sock" | grep -q '"job":2'
}

t "a network up, its daemon started" eval 'up && start'
t "its socket is 0660 root:group" socket_mode
t "a member of the group submits a job, owned by it" owner_submits
t "another member cannot end it (EPERM)" other_cannot_end
t "another member cannot show it (EPERM)" other_cannot_show
t "another member's raw end request is refused (errno 1)" other_raw_end
t "its owner shows it (what a worker joining asks)" owner_shows
t "another member's list does not show it" other_list_hides
t "a user outside the group cannot open the socket" outsider_no_file_access
t "a user outside the group is refused by the daemon too" outsider_refused_by_daemon
t "the owner survives a restart (state file)" owner_after_restart
t "the owner ends its job" owner_ends
t "root ends another's job" root_ends_any
finish
