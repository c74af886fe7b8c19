#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The packages of "make deb" (KTAP): metadata (dpkg-deb -I), contents
# (dpkg-deb -c) against the INSTALLED FILES table of the man page they carry,
# conffiles, maintainer scripts, and the DKMS source being this tree's module;
# the package's libinagg.so.1, header and Python package serve a C program and
# /usr/bin/python3 from the unpacked package alone.
BUILD=${BUILD:-build}
here=$(cd "$(dirname "$0")/../.." && pwd)
build=$(realpath -m "$BUILD")
tmp=$(mktemp -d /tmp/ia-deb-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
. "$here/tests/ktap.sh"
. "$here/tests/pkg/api.bash"

# PATH PACKAGE of each row of a man page's INSTALLED FILES table (stdin).
manfiles() { awk -F '\t' -f "$here/tests/pkg/manfiles.awk"; }

deb=$(ls "$build"/pkg/inagg_*.deb 2>/dev/null | head -n 1)
dkms=$(ls "$build"/pkg/inagg-dkms_*.deb 2>/dev/null | head -n 1)
version=$("$build/inagg" --version | awk '{ print $2 }')

field() { dpkg-deb -f "$1" "$2"; }

metadata() {
	[ "$(field "$deb" Package)" = inagg ] &&
	[ "$(field "$deb" Version)" = "$version" ] &&
	[ "$(field "$deb" Architecture)" = "$(dpkg --print-architecture)" ] &&
	[ -n "$(field "$deb" Maintainer)" ] && [ -n "$(field "$deb" Description)" ]
}

# Depends names each of Debian's packages the binaries need, by name.
depends() {
	local d p
	d=$(field "$deb" Depends)
	echo "Depends: $d"
	for p in libbpf1 libjson-c5 libmnl0 iproute2; do
		grep -qE "(^|, )$p( \(|,|$)" <<<"$d" || { echo "no $p"; return 1; }
	done
}

# Files of the package, as absolute paths.
files() { dpkg-deb -c "$1" | awk '$1 !~ /^d/ { sub(/^\./, "", $6); print $6 }' | sort; }

contents_as_man_page() {
	local want=$tmp/want row f
	dpkg-deb -x "$deb" "$tmp/x" || return 1
	: >"$want"
	for row in $(zcat "$tmp/x/usr/share/man/man8/inagg.8.gz" | manfiles |
		awk '$2 == "inagg" { print $1 }'); do
		compgen -G "$tmp/x$row" >/dev/null || { echo "missing: $row"; return 1; }
		for f in $tmp/x$row; do echo "${f#$tmp/x}"; done >>"$want"
	done
	sort -u -o "$want" "$want"
	diff -u "$want" <(files "$deb")
}

owned_by_root() {
	! dpkg-deb -c "$deb" | awk '{ print $2 }' | grep -vx root/root &&
	! dpkg-deb -c "$dkms" | awk '{ print $2 }' | grep -vx root/root
}

conffiles() {
	dpkg-deb -e "$deb" "$tmp/ctl" &&
	diff <(sort "$tmp/ctl/conffiles") <(files "$deb" | grep '^/etc/')
}

scripts_parse() {
	local s
	dpkg-deb -e "$dkms" "$tmp/dctl" || return 1
	for s in "$tmp"/ctl/*inst "$tmp"/ctl/*rm "$tmp"/dctl/*inst "$tmp"/dctl/*rm; do
		[ -x "$s" ] && sh -n "$s" || { echo "$s"; return 1; }
	done
	grep -q "common.postinst inagg $version" "$tmp/dctl/postinst"
}

runs() {
	"$tmp/x/usr/sbin/inagg" --version | grep -qx "inagg $version" &&
	"$tmp/x/usr/sbin/inaggd" -h | grep -q '^Usage: inaggd' &&
	! readelf -S "$tmp/x/usr/sbin/inagg" | grep -q '\.debug_info'
}

ma=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
lib=/usr/lib/$ma

unpacked() { [ -d "$tmp/x" ] || dpkg-deb -x "$deb" "$tmp/x"; }

lib_stripped() {
	unpacked && lib_installed "$tmp/x" "$lib" &&
	! readelf -S "$tmp/x$lib/libinagg.so.1" | grep -q '\.debug_info'
}

# dpkg runs ldconfig once done (the trigger of Debian policy 8.1.1); shlibs lets
# other packages' dpkg-shlibdeps depend on inagg; dh_python3's byte code handling.
lib_metadata() {
	dpkg-deb -e "$deb" "$tmp/lctl" &&
	grep -qx 'activate-noawait ldconfig' "$tmp/lctl/triggers" &&
	grep -qx "libinagg 1 inagg (>= $version)" "$tmp/lctl/shlibs" &&
	grep -q '^	py3compile -p inagg$' "$tmp/lctl/postinst" &&
	grep -q '^	py3clean -p inagg$' "$tmp/lctl/prerm"
}

dkms_metadata() {
	[ "$(field "$dkms" Package)" = inagg-dkms ] &&
	[ "$(field "$dkms" Version)" = "$version" ] &&
	# All, unless it carries a module prebuilt for this machine's kernel.
	[ "$(field "$dkms" Architecture)" = "$(prebuilt && dpkg --print-architecture || echo all)" ] &&
	field "$dkms" Depends | grep -qE '(^|, )dkms( |,|$)'
}

# The sources are those Kbuild names (inagg-y), its headers, the ABI header and the rules.
dkms_contents() {
	local s=/usr/src/inagg-$version f srcs
	srcs=$(cd "$here" && { echo kmod/Kbuild include/inagg/netlink.h include/inagg/ledger_rules.h; ls kmod/*.h;
		sed -n 's/^inagg-y *:= *//p' kmod/Kbuild | tr ' ' '\n' | sed -n 's|\.o$|.c|p' |
		sed 's|^|kmod/|'; })
	dpkg-deb -x "$dkms" "$tmp/d" &&
	diff <(files "$dkms") <({ echo /usr/lib/modules-load.d/inagg.conf; echo "$s/dkms.conf"
		prebuilt && echo "$tarball"
		for f in $srcs; do echo "$s/$f"; done; } | sort) &&
	grep -qx "PACKAGE_VERSION=\"$version\"" "$tmp/d$s/dkms.conf" &&
	grep -qx 'BUILT_MODULE_NAME\[0\]="inagg"' "$tmp/d$s/dkms.conf" &&
	grep -qx 'AUTOINSTALL="yes"' "$tmp/d$s/dkms.conf" &&
	for f in $srcs; do
		cmp "$here/$f" "$tmp/d$s/$f" || return 1
	done
}

# The DKMS tarball (packaging/mkdkmstar.sh), in the package when the headers of build/kmod's
# kernel are here: the same source as /usr/src, and this tree's inagg.ko for that kernel.
tarball=/usr/share/inagg-dkms/inagg-$version.dkms.tar.gz
prebuilt() { dpkg-deb -c "$dkms" | grep -q " \.$tarball\$"; }
dkms_tarball() {
	local kver m
	prebuilt || { echo "no prebuilt module (no headers of $(cat "$build/kmod/kver"))"; return 0; }
	kver=$(cat "$build/kmod/kver")
	dpkg-deb -x "$dkms" "$tmp/t" && mkdir "$tmp/tb" && tar -C "$tmp/tb" -xzf "$tmp/t$tarball" &&
		diff -r "$tmp/t/usr/src/inagg-$version" "$tmp/tb/dkms_source_tree" || return 1
	m=$tmp/tb/dkms_main_tree/$kver/$(uname -m)/module/inagg.ko
	echo "prebuilt for $kver"
	[ "$(ls "$tmp/tb/dkms_main_tree")" = "$kver" ] &&
	/sbin/modinfo -F vermagic "$m" | grep -q "^$kver " &&
	strip -g -o "$tmp/ko" "$build/kmod/inagg.ko" && cmp "$tmp/ko" "$m"
}

if [ -z "$deb" ] || [ -z "$dkms" ]; then
	t "deb: packages built (make deb)" false
	finish
fi
t "deb: inagg metadata (dpkg-deb -I)" metadata
t "deb: Depends libbpf1, libjson-c5, libmnl0, iproute2" depends
t "deb: contents (dpkg-deb -c) are inagg(8)'s INSTALLED FILES" contents_as_man_page
t "deb: files owned by root" owned_by_root
t "deb: /etc/inagg files are conffiles" conffiles
t "deb: maintainer scripts parse" scripts_parse
t "deb: packaged binaries run, stripped" runs
t "deb: libinagg.so.1 in $lib, soname libinagg.so.1, stripped, libinagg.so links it" \
	lib_stripped
t "deb: /usr/include/inagg/api.h and what it includes" headers_installed "$tmp/x" /usr/include
t "deb: a C program builds with -linagg against the package and runs" \
	c_program "$tmp/x" "$lib" /usr/include
t "deb: /usr/bin/python3 imports the package's inagg, which loads the package's library" \
	py_imports "$tmp/x" "$lib" /usr/lib/python3/dist-packages
t "deb: ldconfig trigger, shlibs of libinagg.so.1, Python byte code compiled and cleaned" \
	lib_metadata
t "deb: inagg-dkms metadata" dkms_metadata
t "deb: inagg-dkms holds this tree's module source and dkms.conf" dkms_contents
t "deb: inagg-dkms's DKMS tarball: that source, this tree's inagg.ko for its kernel" dkms_tarball
finish
