# SPDX-License-Identifier: GPL-2.0
# Sourced by the shell tests that start inaggd. "wait_daemon SOCK PID LOG SECONDS" waits
# until the daemon PID answers "inagg job list" on SOCK; it fails, printing LOG, if the
# daemon exits first or does not answer within SECONDS. Uses $BUILD/inagg.
wait_daemon() {
	local sock=$1 pid=$2 log=$3 i
	for i in $(seq 1 $(($4 * 10))); do
		[ -S "$sock" ] && "$BUILD/inagg" job list -S "$sock" >/dev/null 2>&1 && return 0
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	cat "$log"
	return 1
}

# "wait_line FILE PATTERN SECONDS" waits until a line of FILE matches PATTERN (grep); it fails,
# printing FILE's last 20 lines, if none does within SECONDS.
wait_line() {
	local i
	for i in $(seq 1 $(($3 * 10))); do
		grep -q "$2" "$1" 2>/dev/null && return 0
		sleep 0.1
	done
	tail -n 20 "$1"
	return 1
}
