#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Static analysis of user/ (issue 31): cppcheck, warnings and errors, fails on
# any finding. A false positive is suppressed where it is, with its reason
# ("cppcheck-suppress ID ; why"); libbpf's macros are in cppcheck.cfg. The
# same options must find a leak on an error path planted here, or the check
# checks nothing. KTAP.
BUILD=${BUILD:-build}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$here/../ktap.sh"

if ! command -v cppcheck >/dev/null; then
	echo "TAP version 13"
	echo "1..0 # SKIP no cppcheck (scripts/deps.sh check installs it)"
	exit 0
fi

# Every folder of user/ is an include path: files move between them.
incs=(-I"$root/include" -I"$(realpath -m "$BUILD")")
while IFS= read -r d; do incs+=(-I"$d"); done < <(find "$root/user" -type d)

check() {
	cppcheck --enable=warning --inline-suppr --library="$here/cppcheck.cfg" --std=c11 \
		-D_GNU_SOURCE "${incs[@]}" --quiet -j2 --error-exitcode=1 \
		--template='{file}:{line}: {severity}: {id}: {message}' "$@"
}

user_clean() { (cd "$root" && check user/); }

finds_a_leak() {
	cat >"$tmp/leak.c" <<'C'
#include <errno.h>
#include <stdlib.h>
#include <string.h>
int f(const char *s, int n)
{
	char *a = strdup(s);

	if (!a)
		return -ENOMEM;
	if (n < 0)
		return -EINVAL;
	free(a);
	return n;
}
C
	check "$tmp/leak.c" >"$tmp/out" 2>&1 && { echo "the leak was not found"; return 1; }
	grep -q "leak.c:11: error: memleak" "$tmp/out" || { cat "$tmp/out"; return 1; }
}

t "cppcheck finds nothing in user/" user_clean
t "cppcheck finds a leak on an error path" finds_a_leak
finish
