#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make install / uninstall (KTAP): the files land exactly where the installed
# man pages' INSTALLED FILES table says (PREFIX=/usr), or under another
# prefix; the units name the installed binaries and pass systemd-analyze;
# the man pages carry the docs' synopsis and render cleanly; an operator's
# changed configuration survives install and uninstall; libinagg.so.1, its
# header and the Python package serve a C program and /usr/bin/python3 from
# the installed tree alone, and ldconfig runs on an install without DESTDIR.
BUILD=${BUILD:-build}
here=$(cd "$(dirname "$0")/../.." && pwd)
build=$(realpath -m "$BUILD")
tmp=$(mktemp -d /tmp/ia-inst-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
. "$here/tests/ktap.sh"
. "$here/tests/pkg/api.bash"

# Debian's multiarch folder and the Python of /usr/local (/usr/local/lib/python3.N).
ma=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
pyver=$(/usr/bin/python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])')

# PATH PACKAGE of each row of a man page's INSTALLED FILES table (stdin).
manfiles() { awk -F '\t' -f "$here/tests/pkg/manfiles.awk"; }

mk() { make -C "$here" --no-print-directory -s BUILD="$build" "$@"; }

# The man page's rows for package $2 of page $1 (installed, gzipped).
rows() { zcat "$1" | manfiles | awk -v p="$2" '$2 == p { print $1 }'; }

# Files (and links) under $1, as absolute paths of the installed system.
installed() { (cd "$1" && find . \( -type f -o -type l \) | sed 's|^\.||' | sort); }

# $1: DESTDIR; $2: prefix the table's /usr (and /lib/systemd) become.
same_as_table() {
	local d=$1 prefix=$2 page want row f
	page=$d$prefix/share/man/man8/inagg.8.gz
	[ -f "$page" ] || { echo "no man page at $page"; return 1; }
	want=$tmp/want
	: >"$want"
	# make install puts what the packages inagg, libinagg1, libinagg-dev and python3-inagg hold.
	for row in $(rows "$page" inagg; rows "$page" libinagg1; rows "$page" libinagg-dev
			rows "$page" python3-inagg); do
		case $row in
		/usr/lib/python3/*) [ "$prefix" != /usr ] &&
			row=$prefix/lib/python$pyver/${row#/usr/lib/python3/} ;;
		/usr/*) row=$prefix${row#/usr} ;;
		/lib/systemd/*) [ "$prefix" != /usr ] && row=$prefix$row ;;
		esac
		# A row may be a pattern (docs/*.md): it must match something.
		compgen -G "$d$row" >/dev/null || { echo "missing: $row"; return 1; }
		for f in $d$row; do echo "${f#$d}"; done >>"$want"
	done
	sort -u -o "$want" "$want"
	installed "$d" >"$tmp/got"
	diff -u "$want" "$tmp/got"
}

both_pages_agree() {
	local m=$1/usr/share/man/man8
	diff <(zcat "$m/inagg.8.gz" | manfiles) \
	     <(zcat "$m/inaggd.8.gz" | manfiles)
}

# Every ExecStart/ExecStop names an installed executable.
units_name_binaries() {
	local d=$1 u exe n=0
	for u in "$d"/"$2"/*.service; do
		for exe in $(sed -nE 's/^Exec(Start|Stop)=-?([^ ]+).*/\2/p' "$u"); do
			[ -x "$d$exe" ] || { echo "$u: $exe not installed"; return 1; }
			n=$((n + 1))
		done
	done
	[ "$n" -ge 3 ]
}

# Every $VAR of the units' commands is set by the configuration installed.
units_vars_set() {
	local d=$1 v
	for v in $(sed -nE 's/^Exec[^=]*=//p' "$d"/lib/systemd/system/*.service |
		grep -oE '\$[A-Z_]+' | tr -d '$' | sort -u); do
		grep -qE "^$v=" "$d"/etc/inagg/*.conf || { echo "$v set nowhere"; return 1; }
	done
}

# systemd-analyze verify, with the binaries where the units say (no DESTDIR).
units_verify() {
	local p=$tmp/direct u out
	# CONFDIR, LDCONFIG, SYSUSERS: not this machine's /etc/inagg, loader cache or groups.
	mk install PREFIX="$p" CONFDIR="$p/etc" LDCONFIG=true SYSUSERS=true >/dev/null || return 1
	cp "$p/lib/systemd/system/inagg-attach@.service" "$tmp/inagg-attach@eth1.service"
	for u in "$p/lib/systemd/system/inaggd.service" "$tmp/inagg-attach@eth1.service" \
			"$p/lib/systemd/system/inagg-prometheus.timer"; do
		out=$(systemd-analyze verify --man=no "$u" 2>&1) || { echo "$out"; return 1; }
		[ -z "$out" ] || { echo "$out"; return 1; }
	done
}

# inaggd's unit is confined: systemd-analyze's exposure at most 5 (of 10), and it is
# Type=notify (inaggd says READY=1 once its socket listens).
unit_confined() {
	local u=$1/lib/systemd/system/inaggd.service out score
	grep -qx 'Type=notify' "$u" || { echo "not Type=notify"; return 1; }
	out=$(systemd-analyze security --offline=yes "$u" 2>&1) || { echo "$out"; return 1; }
	score=$(sed -n 's/.*Overall exposure level for inaggd.service: \([0-9.]*\).*/\1/p' <<<"$out")
	echo "exposure $score"
	[ -n "$score" ] && awk -v s="$score" 'BEGIN { exit !(s <= 5.0) }'
}

# The synopsis of docs/cli.md is inagg(8)'s; inaggd -h's usage is inaggd(8)'s.
synopsis_from_docs() {
	local m=$1/usr/share/man/man8 line text
	text=$(MANWIDTH=200 man -l "$m/inagg.8.gz" 2>/dev/null | sed 's/^ *//')
	while IFS= read -r line; do
		grep -qxF -- "$line" <<<"$text" || { echo "not in inagg(8): $line"; return 1; }
	done < <(awk '/^## SYNOPSIS/ { on = 1; next } /^## / { on = 0 }
		on && /^    / { sub(/^ +/, ""); print }' "$here/docs/cli.md")
	line=$("$build/inaggd" -h | head -n 1 | sed 's/^Usage: *//')
	MANWIDTH=200 man -l "$m/inaggd.8.gz" 2>/dev/null | sed 's/^ *//' | grep -qxF -- "$line"
}

renders_cleanly() {
	local out p
	for p in inagg inaggd inagg-agent; do
		out=$(zcat "$1/usr/share/man/man8/$p.8.gz" | LC_ALL=C groff -ww -z -man -t 2>&1) &&
		[ -z "$out" ] || { echo "$p.8: $out"; return 1; }
	done
}

keeps_changed_config() {
	local d=$1
	echo 'INAGG_ATTACH_ARGS="-m drv"' >>"$d/etc/inagg/attach.conf"
	mk install PREFIX=/usr DESTDIR="$d" >/dev/null &&
	grep -q 'm drv' "$d/etc/inagg/attach.conf"
}

uninstalls() {
	local d=$1 left
	mk uninstall PREFIX="$2" DESTDIR="$d" &&
	left=$(installed "$d") &&
	if [ -n "$3" ]; then [ "$left" = "$3" ]; else [ -z "$left" ]; fi ||
		{ echo "left: $left"; return 1; }
}

# What python3 writes beside the installed package when it may (as root), which
# uninstall must remove with it.
bytecode() {
	/usr/bin/python3 -m compileall -q "$1" && compgen -G "$1/__pycache__/*.pyc"
}

# ldconfig and systemd-sysusers run after install (and ldconfig after uninstall) on the
# system itself, never for a DESTDIR. systemd-sysusers is given a root of this test's, so
# that the group is made there and not on this machine.
runs_ldconfig() {
	local p=$tmp/ld sr=$tmp/sysroot
	mkdir -p "$sr/etc" || return 1
	# CONFDIR too, so as not to touch this machine's /etc/inagg.
	mk install PREFIX="$p" CONFDIR="$p/etc" LDCONFIG="touch $tmp/ld-install" \
		SYSUSERS="systemd-sysusers --root=$sr" >/dev/null &&
	mk uninstall PREFIX="$p" CONFDIR="$p/etc" LDCONFIG="touch $tmp/ld-uninstall" >/dev/null &&
	mk install PREFIX=/usr DESTDIR="$p" LDCONFIG="touch $tmp/ld-destdir" \
		SYSUSERS="touch $tmp/su-destdir" >/dev/null &&
	mk uninstall PREFIX=/usr DESTDIR="$p" LDCONFIG="touch $tmp/ld-destdir" >/dev/null || return 1
	[ -e "$tmp/ld-install" ] || { echo "no ldconfig after install"; return 1; }
	[ -e "$tmp/ld-uninstall" ] || { echo "no ldconfig after uninstall"; return 1; }
	[ ! -e "$tmp/ld-destdir" ] || { echo "ldconfig with DESTDIR"; return 1; }
	[ ! -e "$tmp/su-destdir" ] || { echo "systemd-sysusers with DESTDIR"; return 1; }
	grep -E '^inagg:x:[0-9]+:' "$sr/etc/group" || { echo "no group inagg made"; return 1; }
}

# The group the installed sysusers.d file makes is the one inaggd lets use its socket
# by default (-g; the unit passes none), and the unit makes inaggd a member of it: its
# bounding set has no CAP_CHOWN, and root may chown its socket only to a group it is in
# (inaggd.service exited at start on 6.1 once the group existed).
sysusers_group() {
	local f=$1/usr/lib/sysusers.d/inagg.conf u=$1/lib/systemd/system/inaggd.service g
	g=$(awk '$1 == "g" { print $2 }' "$f") || return 1
	echo "sysusers.d: group $g"
	[ "$g" = inagg ] && "$build/inaggd" -h | grep -q -- "-g, --group GROUP .*" &&
	"$build/inaggd" -h | grep -q "(default $g; no such group: root only)" &&
	! grep -q -- '-g' "$1/etc/inagg/inaggd.conf" || return 1
	grep -q '^CapabilityBoundingSet=.*CAP_CHOWN' "$u" ||
	grep -qE "^SupplementaryGroups=(.* )?$g( |$)" "$u" ||
		{ echo "inaggd.service: neither CAP_CHOWN nor in group $g"; return 1; }
}

dkms_tree() {
	local d=$tmp/dkms v
	v=$("$build/inagg" --version | awk '{ print $2 }')
	mk install-dkms DESTDIR="$d" PREFIX=/usr &&
	grep -qx "PACKAGE_VERSION=\"$v\"" "$d/usr/src/inagg-$v/dkms.conf" &&
	[ -f "$d/usr/src/inagg-$v/kmod/inagg_main.c" ] &&
	[ -f "$d/usr/src/inagg-$v/kmod/Kbuild" ] &&
	grep -qx inagg "$d/usr/lib/modules-load.d/inagg.conf"
}

# Every local file an installed page links to ([x](memory-history.svg)) is
# installed beside it: the pictures were not, so the pages showed none.
doc_links() {
	local doc=$1/usr/share/doc/inagg f l bad=
	for f in "$doc"/*.md; do
		for l in $(grep -oE '\]\([^)#]+[)#]' "$f" | sed -E 's/^\]\(//; s/[)#]$//' |
			grep -v '^[a-z]*:'); do
			[ -e "$doc/$l" ] || bad+=" ${f##*/}:$l"
		done
	done
	[ -z "$bad" ] || { echo "links to files not installed:$bad"; return 1; }
}

u=$tmp/usr l=$tmp/local
t "install: make install PREFIX=/usr DESTDIR=..." mk install PREFIX=/usr DESTDIR="$u"
t "install: the files are those of inagg(8)'s INSTALLED FILES" same_as_table "$u" /usr
t "install: inagg(8) and inaggd(8) list the same files" both_pages_agree "$u"
t "install: libinagg.so.1 in /usr/lib/$ma, soname libinagg.so.1, libinagg.so links it" \
	lib_installed "$u" "/usr/lib/$ma"
t "install: /usr/include/inagg/api.h and what it includes" headers_installed "$u" /usr/include
t "install: a C program builds with -linagg against the installed tree and runs" \
	c_program "$u" "/usr/lib/$ma" /usr/include
t "install: /usr/bin/python3 imports the installed inagg, which loads the installed library" \
	py_imports "$u" "/usr/lib/$ma" /usr/lib/python3/dist-packages
t "install: the docs' pictures are installed with them" doc_links "$u"
t "install: units name the installed binaries" units_name_binaries "$u" lib/systemd/system
t "install: sysusers.d makes the group inaggd's socket is shared with" sysusers_group "$u"
t "install: the units' variables are set in /etc/inagg" units_vars_set "$u"
if command -v systemd-analyze >/dev/null; then
	t "install: systemd-analyze verify of the units (inaggd, attach@eth1, prometheus timer and service)" units_verify
else
	results+=("ok $((++n)) install: systemd-analyze verify # SKIP no systemd-analyze")
fi
if systemd-analyze security --help 2>/dev/null | grep -q -- --offline; then
	t "install: inaggd.service is Type=notify, systemd-analyze security <= 5" unit_confined "$u"
else
	results+=("ok $((++n)) install: inaggd.service confined # SKIP no systemd-analyze --offline")
fi
t "install: man pages carry docs/cli.md's and inaggd -h's synopsis" synopsis_from_docs "$u"
t "install: man pages render without groff warnings" renders_cleanly "$u"
t "install: a changed /etc/inagg file is not overwritten" keeps_changed_config "$u"
t "install: uninstall keeps only the changed configuration" uninstalls "$u" /usr \
	/etc/inagg/attach.conf
t "install: PREFIX=/usr/local" mk install PREFIX=/usr/local DESTDIR="$l"
t "install: PREFIX=/usr/local puts the table's /usr files under it" same_as_table "$l" /usr/local
t "install: PREFIX=/usr/local libinagg.so.1 in /usr/local/lib/$ma" \
	lib_installed "$l" "/usr/local/lib/$ma"
t "install: PREFIX=/usr/local a C program builds with -linagg and runs" \
	c_program "$l" "/usr/local/lib/$ma" /usr/local/include
t "install: PREFIX=/usr/local /usr/bin/python3 imports inagg from python$pyver/dist-packages" \
	py_imports "$l" "/usr/local/lib/$ma" "/usr/local/lib/python$pyver/dist-packages"
t "install: PREFIX=/usr/local units name the installed binaries" units_name_binaries "$l" \
	usr/local/lib/systemd/system
t "install: python3's byte code of the installed inagg" \
	bytecode "$l/usr/local/lib/python$pyver/dist-packages/inagg"
t "install: uninstall PREFIX=/usr/local removes everything, byte code too" \
	uninstalls "$l" /usr/local ""
t "install: ldconfig after (un)install, systemd-sysusers after install without DESTDIR, not with one" \
	runs_ldconfig
t "install: make install-dkms: the DKMS source tree of this version" dkms_tree
finish
