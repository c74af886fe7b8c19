# SPDX-License-Identifier: GPL-2.0
# The start of a KTAP test of the inagg command line, sourced: $INAGG, a
# folder $tmp removed at exit, ktap.sh's t and finish, the paper's Fig. 1
# topology in $fig1. A missing binary is the one failure reported.
BUILD=${BUILD:-build}
INAGG=$BUILD/inagg
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

. "$(dirname "${BASH_SOURCE[0]}")/../ktap.sh"

fig1=$(dirname "${BASH_SOURCE[0]}")/../../docs/fig1.json

if [ ! -x "$INAGG" ]; then
	t "inagg binary at $INAGG" false
	finish
fi
