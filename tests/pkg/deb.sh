#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The packages of "make deb" (KTAP): metadata (dpkg-deb -I), contents
# (dpkg-deb -c) against the INSTALLED FILES table of the man page they carry,
# conffiles, maintainer scripts, hardening, lintian, and the DKMS source being
# this tree's module; libinagg1's libinagg.so.1, libinagg-dev's header and
# python3-inagg's package serve a C program and /usr/bin/python3 from the
# unpacked packages alone.
BUILD=${BUILD:-build}
here=$(cd "$(dirname "$0")/../.." && pwd)
build=$(realpath -m "$BUILD")
tmp=$(mktemp -d /tmp/ia-deb-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
. "$here/tests/ktap.sh"
. "$here/tests/pkg/api.bash"

# PATH PACKAGE of each row of a man page's INSTALLED FILES table (stdin).
manfiles() { awk -F '\t' -f "$here/tests/pkg/manfiles.awk"; }

pkgdeb() { ls "$build"/pkg/"$1"_*.deb 2>/dev/null | head -n 1; }
deb=$(pkgdeb inagg)
dkms=$(pkgdeb inagg-dkms)
libdeb=$(pkgdeb libinagg1)
devdeb=$(pkgdeb libinagg-dev)
pydeb=$(pkgdeb python3-inagg)
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

# Files of the package, as absolute paths, but the copyright and changelog debhelper
# puts in every package's /usr/share/doc/PACKAGE/.
files() {
	dpkg-deb -c "$1" | awk '$1 !~ /^d/ { sub(/^\./, "", $6); print $6 }' |
		grep -vE '^/usr/share/doc/[^/]+/(copyright|changelog\.gz)$' | sort
}

# All four packages unpacked into one tree, as on a host that installed them.
unpacked() {
	[ -d "$tmp/x" ] && return 0
	for p in "$deb" "$libdeb" "$devdeb" "$pydeb"; do dpkg-deb -x "$p" "$tmp/x" || return 1; done
}

# Each package holds exactly the rows of inagg(8)'s INSTALLED FILES table that name it.
contents_as_man_page() {
	local want=$tmp/want row f p d
	unpacked || return 1
	for p in inagg libinagg1 libinagg-dev python3-inagg; do
		d=$(pkgdeb "$p")
		: >"$want"
		for row in $(zcat "$tmp/x/usr/share/man/man8/inagg.8.gz" | manfiles |
			awk -v p="$p" '$2 == p { print $1 }'); do
			compgen -G "$tmp/x$row" >/dev/null || { echo "missing: $row"; return 1; }
			for f in $tmp/x$row; do echo "${f#$tmp/x}"; done >>"$want"
		done
		sort -u -o "$want" "$want"
		diff -u "$want" <(files "$d") || { echo "in $p"; return 1; }
	done
}

owned_by_root() {
	local p
	for p in "$deb" "$dkms" "$libdeb" "$devdeb" "$pydeb"; do
		! dpkg-deb -c "$p" | awk '{ print $2 }' | grep -vx root/root || return 1
	done
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
	grep -qx "DKMS_VERSION=$version" "$tmp/dctl/postinst" &&
	grep -q 'common.postinst' "$tmp/dctl/postinst" &&
	# Maintainer scripts leave systemctl to debhelper's helpers (daemon-reload aside).
	! grep -hE '^[^#]*systemctl' "$tmp"/ctl/*inst "$tmp"/ctl/*rm | grep -v daemon-reload
}

# The postinst makes inaggd's group from the sysusers.d file the package holds (what
# dh_installsysusers adds), and Depends names what provides systemd-sysusers.
makes_group() {
	[ -f "$tmp/ctl/postinst" ] || dpkg-deb -e "$deb" "$tmp/ctl" || return 1
	grep -q '^ *systemd-sysusers .* inagg.conf$' "$tmp/ctl/postinst" &&
	files "$deb" | grep -qx /usr/lib/sysusers.d/inagg.conf &&
	field "$deb" Depends | grep -q 'systemd | systemd-standalone-sysusers'
}

runs() {
	unpacked &&
	"$tmp/x/usr/bin/inagg" --version | grep -qx "inagg $version" &&
	"$tmp/x/usr/sbin/inaggd" -h | grep -q '^Usage: inaggd' &&
	"$tmp/x/usr/sbin/inagg-agent" -h | grep -q '^Usage: inagg-agent' &&
	! readelf -S "$tmp/x/usr/bin/inagg" | grep -q '\.debug_info'
}

# dpkg-buildflags' hardening in every ELF file: PIE, BIND_NOW and RELRO, fortified
# calls, no executable stack.
hardened() {
	local f
	unpacked || return 1
	for f in "$tmp/x/usr/bin/inagg" "$tmp/x/usr/sbin/inaggd" "$tmp/x/usr/sbin/inagg-agent" \
			"$tmp/x/$lib/libinagg.so.1"; do
		readelf -d "$f" | grep -qE 'BIND_NOW|FLAGS.*NOW' || { echo "$f: no bindnow"; return 1; }
		readelf -l "$f" | grep -q GNU_RELRO || { echo "$f: no relro"; return 1; }
		readelf -h "$f" | grep -q 'DYN ' || { echo "$f: not PIE"; return 1; }
		readelf -lW "$f" | grep GNU_STACK | grep -q RWE && { echo "$f: exec stack"; return 1; }
	done
	for f in "$tmp/x/usr/bin/inagg" "$tmp/x/usr/sbin/inaggd"; do
		readelf --dyn-syms -W "$f" | grep -q '__[a-z]*_chk@' || { echo "$f: not fortified"; return 1; }
	done
}

# lintian on every package: no error and no warning (docs/router-vm.md lists what it
# still says at the pedantic and info levels, and why).
lintian_clean() {
	local out
	command -v lintian >/dev/null || { echo "no lintian"; return 1; }
	local rc=0
	out=$(lintian --fail-on error,warning "$build"/pkg/*.changes 2>&1) || rc=$?
	grep -v 'running with root privileges' <<<"$out"
	return $rc
}

ma=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
lib=/usr/lib/$ma

lib_stripped() {
	unpacked && lib_installed "$tmp/x" "$lib" &&
	! readelf -S "$tmp/x$lib/libinagg.so.1" | grep -q '\.debug_info'
}

# dpkg runs ldconfig once done (the trigger of Debian policy 8.1.1); shlibs and
# the symbols file let other packages' dpkg-shlibdeps depend on libinagg1, every
# symbol of the API versioned (INAGG_1, or INAGG_2 for what API version 2 added);
# dh_python3's byte code handling.
lib_metadata() {
	local sym
	dpkg-deb -e "$libdeb" "$tmp/lctl" && dpkg-deb -e "$pydeb" "$tmp/pctl" &&
	grep -qx 'activate-noawait ldconfig' "$tmp/lctl/triggers" &&
	grep -qx "libinagg 1 libinagg1 (>= $version)" "$tmp/lctl/shlibs" &&
	grep -qx 'libinagg.so.1 libinagg1 #MINVER#' "$tmp/lctl/symbols" || return 1
	for sym in $(grep -oE '\bia_api_[a-z0-9_]+\(' "$here/include/inagg/api.h" | tr -d '(' |
			sort -u); do
		grep -qE "^ $sym@INAGG_[12] " "$tmp/lctl/symbols" || { echo "no $sym"; return 1; }
	done
	[ "$(field "$devdeb" Depends | grep -o 'libinagg1 ([^)]*)')" = "libinagg1 (= $version)" ] &&
	field "$pydeb" Depends | grep -qE '(^|, )libinagg1 ' &&
	field "$pydeb" Depends | grep -qE '(^|, )python3-numpy' &&
	grep -q 'py3compile -p python3-inagg' "$tmp/pctl/postinst" &&
	grep -q 'py3clean -p python3-inagg' "$tmp/pctl/prerm"
}

dkms_metadata() {
	[ "$(field "$dkms" Package)" = inagg-dkms ] &&
	[ "$(field "$dkms" Version)" = "$version" ] &&
	[ "$(field "$dkms" Architecture)" = all ] &&
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

if [ -z "$deb" ] || [ -z "$dkms" ] || [ -z "$libdeb" ] || [ -z "$devdeb" ] || [ -z "$pydeb" ]; then
	t "deb: packages built (make deb)" false
	finish
fi
t "deb: inagg metadata (dpkg-deb -I)" metadata
t "deb: Depends libbpf1, libjson-c5, libmnl0, iproute2" depends
t "deb: contents (dpkg-deb -c) are inagg(8)'s INSTALLED FILES" contents_as_man_page
t "deb: files owned by root" owned_by_root
t "deb: /etc/inagg files are conffiles" conffiles
t "deb: maintainer scripts parse" scripts_parse
t "deb: postinst makes the group inagg (sysusers.d)" makes_group
t "deb: packaged binaries run, stripped" runs
t "deb: hardened: PIE, bindnow, relro, fortify, no executable stack" hardened
t "deb: libinagg.so.1 in $lib, soname libinagg.so.1, stripped, libinagg.so links it" \
	lib_stripped
t "deb: /usr/include/inagg/api.h and what it includes" headers_installed "$tmp/x" /usr/include
t "deb: a C program builds with -linagg against the package and runs" \
	c_program "$tmp/x" "$lib" /usr/include
t "deb: /usr/bin/python3 imports the package's inagg, which loads the package's library" \
	py_imports "$tmp/x" "$lib" /usr/lib/python3/dist-packages
t "deb: libinagg1's ldconfig trigger, shlibs and symbols; -dev and python3 depend on it" \
	lib_metadata
t "deb: inagg-dkms metadata" dkms_metadata
t "deb: inagg-dkms holds this tree's module source and dkms.conf" dkms_contents
t "deb: inagg-dkms's DKMS tarball: that source, this tree's inagg.ko for its kernel" dkms_tarball
t "deb: lintian: no errors, no warnings" lintian_clean
finish
