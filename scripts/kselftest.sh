#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Extracts the kselftest harness headers from Debian's linux-source-6.1 into
# the build folder ($1). They are never committed.
set -e
out=$1
tarball=$(ls /usr/src/linux-source-6.1*.tar.* 2>/dev/null | head -n 1)
[ -n "$tarball" ] || { echo "kselftest: linux-source-6.1 is not installed" >&2; exit 1; }
mkdir -p "$out"
top=$(basename "$tarball" | sed 's/\.tar\..*//')
tar -xf "$tarball" -C "$out" --strip-components=4 \
	"$top/tools/testing/selftests/kselftest_harness.h" \
	"$top/tools/testing/selftests/kselftest.h"
touch "$out/kselftest_harness.h" "$out/kselftest.h"
