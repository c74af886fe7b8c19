#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The library's folders and the cycles between files (KTAP): layers.py reads
# user/lib/lib.mk, the sources' includes and the built objects' symbols.
BUILD=${BUILD:-build}
cd "$(dirname "$0")/../.." || exit 1
exec python3 tests/unit/layers.py "$BUILD"
