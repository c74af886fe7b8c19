#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# scripts/run-tests.sh on a layer of its own (KTAP): a program that hangs
# past its folder's timeout (settings: timeout=2), with a child in a process
# group of its own as the kselftest harness makes them, is killed with that
# child and counts as failed; a program that exits 4 and one whose plan is
# "1..0 # SKIP" are skips, a program's own status 124 is a failure but no
# timeout; the programs after the hang run; the last line is
# still "N passed, N failed" and the status says a failure.
here=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'kill "$(cat "$tmp/child.pid" 2>/dev/null)" 2>/dev/null; rm -rf "$tmp"' EXIT

. "$(dirname "$0")/../ktap.sh"

L=$tmp/layer
mkdir -p "$L/build/tests/fake" "$L/tests/fake"
echo timeout=2 >"$L/tests/fake/settings"

# prog NAME BODY: an executable of the fake layer's build folder.
prog() {
	printf '#!/bin/bash\n%s\n' "$2" >"$L/build/tests/fake/$1"
	chmod +x "$L/build/tests/fake/$1"
}
prog a_hang "echo 'TAP version 13'; echo 1..2; echo 'ok 1 before the hang'
set -m; sleep 300 & echo \$! >$tmp/child.pid; wait"
prog b_pass "echo 'TAP version 13'; echo 1..1; echo 'ok 1 fine'"
prog c_fail "echo 'TAP version 13'; echo 1..1; echo 'not ok 1 wrong'; exit 1"
prog d_skip "echo 'TAP version 13'; echo '1..0 # SKIP no such device'; exit 4"
prog f_own124 "echo 'TAP version 13'; echo 1..1; echo 'ok 1 fine'; exit 124"
printf '%s\n' "echo 'TAP version 13'" "echo '1..0 # SKIP needs a thing'" >"$L/tests/fake/e_plan.sh"

run() {
	local start=$SECONDS
	# Bounded: a runner that waits for the hang fails here, not at our own timeout.
	(cd "$L" && timeout 60 "$here/scripts/run-tests.sh" build fake) >"$tmp/out" 2>&1
	echo $? >"$tmp/rc"
	echo $((SECONDS - start)) >"$tmp/secs"
	cat "$tmp/out"
	[ "$(cat "$tmp/rc")" != 124 ] || { echo "the runner did not finish in 60 s"; return 1; }
}

line() {	# line PATTERN: the runner's output has a line matching it
	grep -qE -- "$1" "$tmp/out" || { echo "no line matching '$1':"; cat "$tmp/out"; return 1; }
}

hang_killed() {
	line '^not ok - fake/a_hang # TIMEOUT 2 seconds$' &&
		line '^# fake/a_hang +1 passed, 1 failed, 0 skipped' || return 1
	[ "$(cat "$tmp/secs")" -lt 30 ] || { echo "took $(cat "$tmp/secs") s"; return 1; }
	# The harness's tests run in process groups of their own: gone too (a
	# zombie is gone; this container's init may not reap it at once).
	sleep 0.5
	! ps -o stat= -p "$(cat "$tmp/child.pid")" | grep -qv Z || { echo "the hang's child lives"; return 1; }
}

skips() {
	line '^# fake/d_skip +0 passed, 0 failed, 1 skipped' &&
		line '^ok - fake/d_skip # SKIP no such device$' &&
		line '^# fake/e_plan.sh +0 passed, 0 failed, 1 skipped' &&
		line '^ok - fake/e_plan.sh # SKIP needs a thing$' && line '^# 2 skipped$'
}

rest_ran() {
	line '^# fake/b_pass +1 passed, 0 failed, 0 skipped' &&
		line '^# fake/c_fail: not ok 1 wrong$' &&
		line '^# fake/c_fail +0 passed, 1 failed, 0 skipped'
}

# A 124 of the program's own, at once, is a failure but no timeout.
own_124() {
	line '^not ok - fake/f_own124 exited with status 124$' &&
		line '^# fake/f_own124 +1 passed, 1 failed, 0 skipped'
}

summary() {
	[ "$(tail -1 "$tmp/out")" = "3 passed, 3 failed" ] ||
		{ echo "last line: $(tail -1 "$tmp/out")"; return 1; }
	[ "$(cat "$tmp/rc")" = 1 ] || { echo "status $(cat "$tmp/rc")"; return 1; }
}

t "the runner runs the fake layer" run
t "a hang is killed at its timeout with its child, and fails" hang_killed
t "exit 4 and a 1..0 SKIP plan are skips" skips
t "the programs after the hang run" rest_ran
t "a status 124 of the program's own is no timeout" own_124
t "last line N passed, N failed; failure status" summary
finish
