# SPDX-License-Identifier: GPL-2.0
# Sourced by the shell tests. "t NAME COMMAND..." records one KTAP result from
# the command's exit status (the end of its output as diagnostics when it
# fails); "finish" prints the plan and the results, and exits 1 if any failed.
# The caller provides $tmp, a scratch folder.
results=()
n=0

t() {
	local name=$1 l
	shift
	n=$((n + 1))
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
