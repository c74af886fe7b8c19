#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Runs every test layer, adds up their KTAP results and ends with one line
# "N passed, N failed". Exits non-zero if anything failed.
# Usage: scripts/run-tests.sh BUILD_DIR LAYER...
#
# As kselftest's runner does: tests/<layer>/settings may say "timeout=N", the
# seconds each program of the layer may run (default 45). A program still
# running then is killed (timeout(1), status 124) with every process of its
# session and counts as one failure; the rest of the layer runs. Exit status 4
# (KSFT_SKIP) or a plan "1..0 # SKIP reason" is a skip, not a failure.
# Skips are said on their own line before the last one, which stays
# "N passed, N failed" (CI reads it).
# Logs go to BUILD_DIR/test-logs, or to a new folder under /tmp when that is
# not writable (a run as another user); the first line says which.
build=$1
shift
pass=0 fail=0 skip=0
default_timeout=45
ksft_skip=4
log=$build/test-logs
if ! mkdir -p "$log" 2>/dev/null || [ ! -w "$log" ]; then
	log=$(mktemp -d /tmp/inagg-test-logs.XXXXXX) || exit 1
fi
echo "# logs in $log"

# The per-program timeout of a layer: its settings file's, else the default.
layer_timeout() {
	local f=tests/$1/settings v
	v=$([ -f "$f" ] && sed -n 's/^timeout=\([0-9]\+\)[[:space:]]*$/\1/p' "$f" | tail -1)
	echo "${v:-$default_timeout}"
}

# Whether a program's status and seconds say timeout(1) ended it (124, or 137
# when it took the KILL); a 124 of the program's own is a plain failure.
timed_out() {
	{ [ "$1" -eq 124 ] || [ "$1" -eq 137 ]; } && [ "$2" -ge "$3" ]
}

# Counts top-level KTAP result lines of one test program's output.
tally() {
	local name=$1 out=$2 rc=$3 secs=$4 limit=$5 p f s
	p=$(grep -E '^ok [0-9]+' "$out" | grep -vc '# SKIP')
	s=$(grep -E '^ok [0-9]+' "$out" | grep -c '# SKIP')
	f=$(grep -cE '^not ok [0-9]+' "$out")
	if timed_out "$rc" "$secs" "$limit"; then
		# Killed at its timeout: one more failure, whatever it said before.
		f=$((f + 1))
		echo "not ok - $name # TIMEOUT $limit seconds"
	elif [ "$rc" -eq "$ksft_skip" ] && [ "$f" -eq 0 ]; then
		# Skipped (no environment for it), whole if it said no result.
		if [ "$p$s" = 00 ]; then
			s=1
			echo "ok - $name # SKIP $(skip_reason "$out")"
		fi
	elif grep -qE '^1\.\.0([^0-9]|$)' "$out" && [ "$rc" -eq 0 ] && [ "$p$f$s" = 000 ]; then
		s=1
		echo "ok - $name # SKIP $(skip_reason "$out")"
	elif [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		# A program that died without reporting a failure still failed.
		f=1
		echo "not ok - $name exited with status $rc"
	fi
	if [ "$p" -eq 0 ] && [ "$f" -eq 0 ] && [ "$s" -eq 0 ]; then
		f=1
		echo "not ok - $name reported no results"
	fi
	pass=$((pass + p)) fail=$((fail + f)) skip=$((skip + s))
	printf '# %-32s %4d passed, %d failed, %d skipped (%d s)\n' "$name" "$p" "$f" "$s" "$secs"
}

# The reason of a program's "# SKIP" plan or last skip line, if any.
skip_reason() {
	grep -E '# SKIP' "$1" | tail -1 | sed 's/.*# SKIP[[:space:]]*//'
}

for layer in "$@"; do
	progs=()
	for t in "$build/tests/$layer"/*; do
		[ -f "$t" ] && [ -x "$t" ] && progs+=("$t")
	done
	for t in tests/"$layer"/*.sh; do
		[ -f "$t" ] && progs+=("$t")
	done
	[ ${#progs[@]} -eq 0 ] && continue
	limit=$(layer_timeout "$layer")
	echo "# layer $layer (timeout $limit s per program)"
	for t in "${progs[@]}"; do
		name=$layer/$(basename "$t")
		out=$log/${name//\//_}.ktap
		start=$SECONDS
		run=("$t")
		rm -f "$log/.sid"
		[[ $t == *.sh ]] && run=(bash "$t")
		# A session of its own: the harness puts each test in a process group
		# of its own, and timeout(1) signals only its program's group.
		BUILD=$build setsid -w bash -c 'echo $$ >"$0"; exec "$@"' "$log/.sid" \
			timeout -k 10 "$limit" "${run[@]}" >"$out" 2>&1 </dev/null
		rc=$?
		# Whatever of a killed program is still running goes with it.
		secs=$((SECONDS - start))
		sid=$(cat "$log/.sid" 2>/dev/null)
		if timed_out "$rc" "$secs" "$limit" && [ -n "$sid" ]; then
			pkill -KILL -s "$sid"
		fi
		grep -E '^not ok' "$out" | sed "s|^|# $name: |"
		tally "$name" "$out" "$rc" "$secs" "$limit"
	done
done
rm -f "$log/.sid"
[ "$skip" -gt 0 ] && echo "# $skip skipped"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
