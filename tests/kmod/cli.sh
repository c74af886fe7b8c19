#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# "inagg ledger" end to end against the user-space ledger, in a network
# namespace of its own (unshare -n: nothing named, nothing left behind).
# Prints KTAP. Env: BUILD (default build).
set -u
BUILD=${BUILD:-build}
inagg=$(realpath "$BUILD/inagg" 2>/dev/null)
n=0 status=0

check() {	# check NAME EXPECTED_RC GREP_PATTERN -- ARGS...
	local name=$1 want=$2 pat=$3 out rc
	shift 4
	out=$("$inagg" "$@" 2>&1)
	rc=$?
	n=$((n + 1))
	if [ "$rc" = "$want" ] && grep -qE -- "$pat" <<<"$out"; then
		echo "ok $n cli: $name"
	else
		echo "not ok $n cli: $name (status $rc, want $want, pattern '$pat')"
		sed 's/^/# /' <<<"$out"
		status=1
	fi
}

# Everything below runs inside one new network namespace: without one (not
# root) the test skips; a missing inagg or ledger command fails below.
if [ "${INAGG_CLI_INNER:-}" != 1 ]; then
	if ! unshare -n true 2>/dev/null; then
		echo "TAP version 13"
		echo "1..0 # SKIP needs a network namespace of its own (unshare -n)"
		exit 4
	fi
	dir=$(mktemp -d /tmp/ia-cli-XXXXXX)
	trap 'rm -rf "$dir"' EXIT
	INAGG_CLI_INNER=1 INAGG_LEDGER=user INAGG_LEDGER_DIR=$dir BUILD=$BUILD \
		unshare -n bash "$0"
	exit $?
fi

echo "TAP version 13"
check "ledger -h" 0 'inagg \[-j\] ledger show' -- ledger -h
check "show a new ledger" 0 '"used_jobs": 0' -- -j ledger show
check "show names the backend" 0 '^backend +user' -- ledger show
check "set capacity" 0 'jobs +0/2' -- ledger set --jobs 2 --slots 10
check "admit" 0 'admitted job 1 with 4 slots' -- ledger admit -J 1 --slots 4
check "admit json" 0 '"used_slots": 8' -- -j ledger admit -J 2 --slots 4
check "job limit refused" 1 'max_jobs' -- ledger admit -J 3 --slots 1
check "job limit refused, json" 1 '"error": .*job limit reached' -- -j ledger admit -J 3 --slots 1
check "already admitted" 1 'already admitted' -- ledger admit -J 2 --slots 1
check "shrink refused" 1 'Device or resource busy: max_jobs below' -- ledger set --jobs 1
check "release" 0 'released job 1 \(4 slots\)' -- ledger release -J 1
check "state after release" 0 '"used_jobs": 1' -- -j ledger show
check "release unknown" 1 'job not admitted' -- ledger release -J 1
check "slot limit refused" 1 'slot limit reached' -- ledger admit -J 5 --slots 7
check "unknown option" 1 "unknown option '-J'" -- ledger set -J 3
check "missing value" 1 'needs an argument' -- ledger admit -J
check "missing option" 1 'missing --slots N' -- ledger admit -J 4
check "old keyword form refused" 1 "unexpected argument 'jobs'" -- ledger set jobs 2
check "default command is show" 0 '^backend +user' -- ledger
check "no kernel module here" 1 'not loaded|cannot open' -- ledger show -B kernel
check "other namespace" 1 'cannot open the ledger of ia-none' -- ledger show --netns ia-none
echo "1..$n"
exit $status
