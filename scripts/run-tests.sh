#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Runs every test layer, adds up their KTAP results and ends with one line
# "N passed, N failed". Exits non-zero if anything failed.
# Usage: scripts/run-tests.sh BUILD_DIR LAYER...
build=$1
shift
pass=0 fail=0 skip=0
log=$build/test-logs
mkdir -p "$log"

# Counts top-level KTAP result lines of one test program's output.
tally() {
	local name=$1 out=$2 rc=$3 p f s
	p=$(grep -E '^ok [0-9]+' "$out" | grep -vc '# SKIP')
	s=$(grep -E '^ok [0-9]+' "$out" | grep -c '# SKIP')
	f=$(grep -cE '^not ok [0-9]+' "$out")
	# A program that died without reporting a failure still failed.
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		f=1
		echo "not ok - $name exited with status $rc"
	fi
	if [ "$p" -eq 0 ] && [ "$f" -eq 0 ] && [ "$s" -eq 0 ]; then
		f=1
		echo "not ok - $name reported no results"
	fi
	pass=$((pass + p)) fail=$((fail + f)) skip=$((skip + s))
	printf '# %-32s %4d passed, %d failed, %d skipped\n' "$name" "$p" "$f" "$s"
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
	echo "# layer $layer"
	for t in "${progs[@]}"; do
		name=$layer/$(basename "$t")
		out=$log/${name//\//_}.ktap
		if [[ $t == *.sh ]]; then
			BUILD=$build bash "$t" >"$out" 2>&1
		else
			"$t" >"$out" 2>&1
		fi
		rc=$?
		grep -E '^not ok' "$out" | sed "s|^|# $name: |"
		tally "$name" "$out" "$rc"
	done
done
[ "$skip" -gt 0 ] && echo "# $skip skipped"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
