# SPDX-License-Identifier: GPL-2.0
# Sourced by the shell tests. "t NAME COMMAND..." records one KTAP result from
# the command's exit status (the end of its output as diagnostics when it
# fails); "finish" prints the plan and the results, and exits 1 if any failed.
# The caller provides $tmp, a scratch folder.
# Skips are for what the environment lacks (root, a device), never for a
# command of ours that fails: while t_skip holds a reason, "t" records its
# test as skipped with it; "skip_all REASON" skips the whole program.
results=()
n=0
t_skip=

t() {
	local name=$1 l
	shift
	n=$((n + 1))
	if [ -n "$t_skip" ]; then
		results+=("ok $n $name # SKIP $t_skip")
		return
	fi
	if "$@" >"$tmp/log" 2>&1; then
		results+=("ok $n $name")
	else
		results+=("not ok $n $name")
		while IFS= read -r l; do results+=("# $l"); done < <(tail -20 "$tmp/log")
	fi
}

finish() {
	local r
	echo "TAP version 13"
	echo "1..$n"
	printf '%s\n' "${results[@]}"
	for r in "${results[@]}"; do
		[[ $r == "not ok "* ]] && exit 1
	done
	exit 0
}

# A plan of no tests with the reason, and kselftest's skip status.
skip_all() {
	echo "TAP version 13"
	echo "1..0 # SKIP $1"
	exit 4
}

# Whether this user may keep inaggd's files in /run/inagg (IA_RUN_DIR).
run_dir_ok() {
	mkdir -p /run/inagg 2>/dev/null && [ -w /run/inagg ]
}
