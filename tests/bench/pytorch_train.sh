#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make bench: the digits MLP through inagg and through Gloo, loss curves plotted.
exec /usr/bin/python3 -u "$(dirname "$0")/../../python/examples/compare.py" "${BUILD:-build}/bench"
