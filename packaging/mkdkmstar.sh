#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Makes the DKMS tarball inagg-dkms carries, laid out as "dkms mktarball" lays
# it out: the module's source (dkms_source_tree/) and inagg.ko built for one
# kernel (dkms_main_tree/KERNEL/ARCH/module/). The package's postinst gives it
# to DKMS's common.postinst, which loads it ("dkms ldtarball"): on that kernel
# DKMS installs the module without compiling, on any other it builds it from
# the source as before.
# Usage: packaging/mkdkmstar.sh SRC KO TARBALL
#   SRC      the source as the package installs it (/usr/src/inagg-VERSION)
#   KO       inagg.ko built against the headers of its kernel (make modules)
set -eu
src=$1 ko=$2 out=$3
kver=$(/sbin/modinfo -F vermagic "$ko" | cut -d' ' -f1)
[ -n "$kver" ] || { echo "mkdkmstar: no vermagic in $ko" >&2; exit 1; }
tmp=$(mktemp -d) && chmod 0755 "$tmp"
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/dkms_source_tree" "$tmp/dkms_main_tree/$kver/$(uname -m)/module" \
	"$(dirname "$out")"
cp -a "$src/." "$tmp/dkms_source_tree/"
# As DKMS strips what it builds (STRIP defaults to yes).
strip -g -o "$tmp/dkms_main_tree/$kver/$(uname -m)/module/inagg.ko" "$ko"
tar -C "$tmp" --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 -cf - . |
	gzip -9n >"$out"
echo "$out: inagg.ko for $kver"
