#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The bash completion (packaging/inagg.bash) against the program's help and
# the man page's source, docs/cli.md (KTAP), as bpftool checks its own: every
# object, command and option in docs/cli.md's SYNOPSIS and in each command's
# -h is offered; values complete by kind (interfaces, files).
BUILD=${BUILD:-build}
here=$(cd "$(dirname "$0")/../.." && pwd)
build=$(realpath -m "$BUILD")
tmp=$(mktemp -d /tmp/ia-comp-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
. "$here/tests/ktap.sh"
PATH=$build:$PATH
. "$here/packaging/inagg.bash"

# What completing the last word of "$@" offers, one per line.
offer() {
	COMP_WORDS=("$@")
	COMP_CWORD=$(($# - 1))
	COMPREPLY=()
	"_$1"
	printf '%s\n' "${COMPREPLY[@]}"
}

# offers WORD... -- COMMAND LINE: each WORD is among the offers.
offers() {
	local want=() w got
	while [ "$1" != -- ]; do want+=("$1"); shift; done
	shift
	got=$(offer "$@")
	for w in "${want[@]}"; do
		grep -qxF -- "$w" <<<"$got" || { echo "'$*' does not offer '$w': $got"; return 1; }
	done
}

# The SYNOPSIS lines of docs/cli.md, without "inagg" and its global options.
synopsis() {
	awk '/^## SYNOPSIS/ { on = 1; next } /^## / { on = 0 }
		on && /^    inagg / { sub(/^ +inagg +/, ""); print }' "$here/docs/cli.md" |
		sed -E 's/^(\[[^]]*\] *)+//' | grep -E '^[a-z]'
}

objects_of_help() {
	inagg -h | sed -nE 's/^(Usage:)? +inagg (\[-j\] )?([a-z]+).*/\3/p' | sort -u
}

objects_are_help() {
	diff <(objects_of_help) <(offer inagg "" | sort)
}

objects_of_docs() {
	local o
	for o in $(synopsis | awk '{ print $1 }' | sort -u); do
		offers "$o" -- inagg "" || return 1
	done
}

prefix_resolves() {
	diff <(offer inagg to "") <(offer inagg topo "") && [ -n "$(offer inagg to "")" ]
}

# Commands and keywords right after each object in the synopsis.
commands_of_docs() {
	local obj rest w
	while read -r obj rest; do
		if [[ $rest == "{ "* ]]; then		# { a ... | b | ... }
			rest=${rest#\{ }
			rest=${rest%%\}*}
			for w in $(tr '|' '\n' <<<"$rest" | awk '{ print $1 }'); do
				[[ $w =~ ^[a-z] ]] && { offers "$w" -- inagg "$obj" "" || return 1; }
			done
		elif [[ $rest =~ ^([a-z][a-z0-9-]*) ]]; then
			offers "${BASH_REMATCH[1]}" -- inagg "$obj" "" || return 1
		fi
	done < <(synopsis)
}

# Each option of a synopsis line is offered for its object or one of the
# line's commands.
options_of_docs() {
	local obj rest o c cmds got
	while read -r obj rest; do
		cmds=$(offer inagg "$obj" "" | grep -xF -f <(tr ' {|' '\n\n\n' <<<"$rest"))
		got=$(offer inagg "$obj" -; for c in $cmds; do offer inagg "$obj" "$c" -; done)
		for o in $(grep -oE '(^|[][ {|])--?[a-zA-Z][a-zA-Z0-9-]*' <<<"$rest" | sed 's/^[^-]*//'); do
			grep -qxF -- "$o" <<<"$got" || { echo "$obj ($rest): $o not offered"; return 1; }
		done
	done < <(synopsis)
}

# Each option line ("  -x, --long ...") of every command's -h is offered.
# Commands are the words after the object not followed by a value ("dev IFACE").
options_of_help() {
	local obj cmd o got n=0
	for obj in $(objects_of_help); do
		for cmd in "" $(inagg "$obj" -h |
			sed -nE "s/^(Usage:)? +inagg (\[-j\] )?$obj ([a-z][a-z-]*)( [^A-Z].*)?$/\3/p" |
			sort -u); do
			got=$(offer inagg "$obj" $cmd -)
			for o in $(inagg "$obj" $cmd -h | grep -oE '^ +-[a-zA-Z](, --[a-z][a-z-]*)?' |
				tr -d ,); do
				grep -qxF -- "$o" <<<"$got" ||
					{ echo "inagg $obj $cmd: $o not offered"; return 1; }
				n=$((n + 1))
			done
		done
	done
	echo "$n options"
	[ "$n" -ge 40 ]
}

global_options() {
	offers -j --json -h --help -V --version -- inagg - &&
	! offer inagg - | grep -qx -- --attach
}

values() {
	: >"$tmp/t.json"
	offers lo -- inagg dev attach "" &&
	(cd "$tmp" && offers t.json -- inagg topo show -t "") &&
	(cd "$tmp" && offers t.json -- inaggd --topology "")
}

inaggd_options() {
	local o
	local got
	got=$(offer inaggd -)
	for o in $(inaggd -h | grep -E '^ +-' | grep -oE '(^| )-[a-zA-Z](, --[a-z][a-z-]*)?' |
		tr -d ,); do
		grep -qxF -- "$o" <<<"$got" || { echo "inaggd: $o not offered"; return 1; }
	done
}

unknown_word() {
	[ -z "$(offer inagg nosuch "")" ]
}

t "completion: objects are those of inagg -h" objects_are_help
t "completion: every object of docs/cli.md's synopsis" objects_of_docs
t "completion: a unique prefix stands for its object" prefix_resolves
t "completion: every command of docs/cli.md's synopsis" commands_of_docs
t "completion: every option of docs/cli.md's synopsis" options_of_docs
t "completion: every option line of every command's -h" options_of_help
t "completion: inagg's own options before the object" global_options
t "completion: values by kind (interface, file)" values
t "completion: every option of inaggd -h" inaggd_options
t "completion: nothing for a word inagg does not know" unknown_word
finish
