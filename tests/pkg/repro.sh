#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Reproducible packages (KTAP): the tree make deb built its packages from,
# built again in another folder as make deb builds it, gives byte-identical
# .debs. On a difference it says which files differ and how (diffoscope if
# installed, else the two dpkg-deb -c listings and each file's sha256).
BUILD=${BUILD:-build}
here=$(cd "$(dirname "$0")/../.." && pwd)
build=$(realpath -m "$BUILD")
tmp=$(mktemp -d /tmp/ia-repro-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
. "$here/tests/ktap.sh"

version=$("$build/inagg" --version | awk '{ print $2 }')
src=$build/pkg/inagg-$version
# Another path than the first build's: the packages must not record where they were built.
again=$tmp/src/inagg-$version

# The second build, as make deb runs it (with the prebuilt module if the first had one).
rebuild() {
	local dkms ko=
	dkms=$(ls "$build"/pkg/inagg-dkms_*.deb 2>/dev/null | head -n 1)
	[ -f "$src/debian/rules" ] && [ -n "$dkms" ] || { echo "no $src or packages (make deb)"; return 1; }
	dpkg-deb -c "$dkms" | grep -q '\.dkms\.tar\.gz$' && ko=$build/kmod/inagg.ko
	mkdir -p "$tmp/src" && cp -a "$src" "$again" || return 1
	(cd "$again" && ${ko:+INAGG_DKMS_PREBUILT=$ko} \
		dpkg-buildpackage -b -us -uc -J"$(nproc)" >"$tmp/build.log" 2>&1) ||
		{ tail -n 20 "$tmp/build.log"; return 1; }
}

# What differs between two .debs: their listings, then the files' hashes.
explain() {
	local a=$1 b=$2 d=$tmp/diff/$(basename "$1")
	if command -v diffoscope >/dev/null; then
		diffoscope --text - "$a" "$b" | head -n 60
		return
	fi
	diff <(dpkg-deb -c "$a") <(dpkg-deb -c "$b") | head -n 20
	mkdir -p "$d/a" "$d/b" "$d/ca" "$d/cb" &&
	dpkg-deb -x "$a" "$d/a" && dpkg-deb -x "$b" "$d/b" &&
	dpkg-deb -e "$a" "$d/ca" && dpkg-deb -e "$b" "$d/cb" || return
	diff <(cd "$d/a" && find . -type f -exec sha256sum {} + | sort -k2) \
	     <(cd "$d/b" && find . -type f -exec sha256sum {} + | sort -k2) | head -n 20
	diff <(cd "$d/ca" && sha256sum ./* | sort -k2) \
	     <(cd "$d/cb" && sha256sum ./* | sort -k2) | sed 's/^/control: /' | head -n 10
}

# Every package of the first build, by name, has its twin byte for byte.
identical() {
	local a b bad=0 n=0
	for a in "$build"/pkg/*.deb; do
		b=$tmp/src/$(basename "$a")
		n=$((n + 1))
		if [ ! -f "$b" ]; then
			echo "$(basename "$a"): not built again"
			bad=1
		elif [ "$(sha256sum <"$a")" != "$(sha256sum <"$b")" ]; then
			echo "$(basename "$a") differs:"
			explain "$a" "$b"
			bad=1
		fi
	done
	echo "$n packages compared"
	[ "$n" -gt 0 ] && [ "$bad" = 0 ]
}

[ -x "$build/inagg" ] || skip_all "no $build/inagg (make)"
t "repro: the packages' tree built again in another folder" rebuild
t "repro: every .deb byte-identical to make deb's (sha256)" identical
finish
