# SPDX-License-Identifier: GPL-2.0
# Sourced by install.sh and deb.sh (not a test of its own): what a host
# gets of an installed tree, libinagg.so.1 with its header and the Python
# package, used from that tree alone. Each takes the root of the tree
# (a DESTDIR or an unpacked package) and the folders under it.

# $1 root, $2 library folder: the library under its soname, and the link -linagg takes.
lib_installed() {
	local l=$1$2
	[ -f "$l/libinagg.so.1" ] && [ ! -L "$l/libinagg.so.1" ] ||
		{ echo "no file $2/libinagg.so.1"; return 1; }
	[ "$(readlink "$l/libinagg.so")" = libinagg.so.1 ] ||
		{ echo "$2/libinagg.so is no link to libinagg.so.1"; return 1; }
	readelf -d "$l/libinagg.so.1" | grep -F 'Library soname: [libinagg.so.1]'
}

# $1 root, $2 include folder: api.h and the headers of include/inagg it includes.
headers_installed() {
	local h
	for h in inagg/api.h $(sed -n 's/^#include [<"]\(inagg\/[^>"]*\)[>"].*/\1/p' \
			"$here/include/inagg/api.h"); do
		cmp "$here/include/$h" "$1$2/$h" || return 1
	done
}

# $1 root, $2 library folder, $3 include folder: a program of the API's
# users builds with -linagg against the tree only and runs with its library.
c_program() {
	local l=$1$2
	cat >"$tmp/api.c" <<'EOF'
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <inagg/api.h>

int main(void)
{
	char err[IA_API_ERRLEN] = "";
	struct ia_api *h;
	int ret;

	if (ia_api_version() != IA_API_VERSION)
		return 1;
	/* Fails on its arguments: no socket, no daemon, no root needed. */
	ret = ia_api_worker_open(1, 0, 2, "no-address", "10.0.0.1", 0, &h, err, sizeof(err));
	printf("%d: %s\n", ret, err);
	return ret == -EINVAL && !h && strstr(err, "not an IPv4 address") ? 0 : 1;
}
EOF
	cc -Wall -Werror -I"$1$3" -o "$tmp/api" "$tmp/api.c" -L"$l" -linagg || return 1
	readelf -d "$tmp/api" | grep -qF 'Shared library: [libinagg.so.1]' || return 1
	LD_LIBRARY_PATH=$l ldd "$tmp/api" | grep -F "libinagg.so.1 => $l/libinagg.so.1" &&
	LD_LIBRARY_PATH=$l "$tmp/api"
}

# $1 root, $2 library folder, $3 Python folder: /usr/bin/python3 imports
# every module of python/inagg from the tree and loads the tree's library
# by its soname (no INAGG_LIB); $3 is on python3's own path.
py_imports() {
	local out
	diff <(cd "$here/python/inagg" && ls *.py) <(cd "$1$3/inagg" && ls *.py) || return 1
	/usr/bin/python3 -c 'import sys; sys.exit(sys.argv[1] not in sys.path)' "$3" ||
		{ echo "$3 is not on python3's path"; return 1; }
	out=$(cd "$tmp" && env -u INAGG_LIB PYTHONDONTWRITEBYTECODE=1 PYTHONPATH="$1$3" \
		LD_LIBRARY_PATH="$1$2" /usr/bin/python3 -c '
import inagg, inagg._lib
inagg._lib.lib()
print(inagg.__file__)
print(*sorted({l.split()[-1] for l in open("/proc/self/maps") if "libinagg" in l}))
') || return 1
	echo "$out"
	[ "$out" = "$1$3/inagg/__init__.py
$1$2/libinagg.so.1" ]
}
