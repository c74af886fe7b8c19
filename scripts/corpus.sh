#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Extracts the word-count corpus (docs/apps.md) into $1: the prose of the
# kernel's Documentation/ tree (*.rst, *.txt) from Debian's linux-source-6.1,
# which scripts/deps.sh installs. Never committed; about a minute (xz).
set -e
out=$1
[ -n "$out" ] || { echo "usage: $0 OUTDIR" >&2; exit 2; }
tarball=$(ls /usr/src/linux-source-6.1*.tar.* 2>/dev/null | head -n 1)
[ -n "$tarball" ] || { echo "corpus: linux-source-6.1 is not installed (scripts/deps.sh)" >&2; exit 1; }
top=$(basename "$tarball" | sed 's/\.tar\..*//')
rm -rf "$out.tmp"
mkdir -p "$out.tmp"
tar -xf "$tarball" -C "$out.tmp" --strip-components=1 --wildcards \
	"$top/Documentation/*.rst" "$top/Documentation/*.txt"
rm -rf "$out"
mv "$out.tmp" "$out"
echo "corpus: $(find "$out" -type f | wc -l) files in $out"
