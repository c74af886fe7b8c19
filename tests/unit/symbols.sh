#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# libinagg's exported names (KTAP): every symbol an application can link
# against starts with ia_, and nothing in it ends the process (abort, exit):
# the library returns errors, its caller decides.
BUILD=${BUILD:-build}
LIB=$BUILD/libinagg.a
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

. "$(dirname "$0")/../ktap.sh"

# Global definitions of every object: "T name", "D name", "B name", ...
defined() {
	nm -g --defined-only "$LIB" | awk 'NF == 3 { print $3 }' | sort -u
}

prefixed() {
	local bad
	[ -f "$LIB" ] || { echo "no library at $LIB"; return 1; }
	defined >"$tmp/syms"
	[ -s "$tmp/syms" ] || { echo "nm found no symbols in $LIB"; return 1; }
	bad=$(grep -v '^ia_' "$tmp/syms")
	[ -z "$bad" ] || { echo "exported without the ia_ prefix:"; echo "$bad"; return 1; }
	echo "$(wc -l <"$tmp/syms") symbols, all ia_"
}

no_exit() {
	local bad
	bad=$(nm -A -u "$LIB" | grep -E ' U (abort|exit)$')
	[ -z "$bad" ] || { echo "calls that end the process:"; echo "$bad"; return 1; }
}

# Every ia_ name libinagg.so uses is in it: an object left out of its list
# (the Makefile's SO_OBJS) would fail only when a program loads it.
so_complete() {
	local so=$BUILD/libinagg.so bad
	[ -f "$so" ] || { echo "no library at $so"; return 1; }
	bad=$(nm -D --undefined-only "$so" | awk '$2 ~ /^ia_/ { print $2 }')
	[ -z "$bad" ] || { echo "libinagg.so needs what it does not hold:"; echo "$bad"; return 1; }
}

t "libinagg exports only ia_ symbols" prefixed
t "libinagg.so holds every ia_ name it uses" so_complete
t "libinagg never calls abort() or exit()" no_exit
finish
