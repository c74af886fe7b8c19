#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The bash completion (packaging/inagg.bash) against the program's help and
# the man page's source, docs/cli.md (KTAP), as bpftool checks its own: every
# object, command and option in docs/cli.md's SYNOPSIS and in each command's
# -h is offered; values complete by kind (interfaces, files), and an option
# that takes one of a list of names offers exactly the names the parser
# takes (asked by giving it a wrong one, so from the option table itself).
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

# -j, -v and -h may stand anywhere among a command's arguments; -V only first.
global_options_after() {
	offers -j --json -v --verbose -h --help -- inagg job submit - &&
	! offer inagg job submit - | grep -qxE -- '-V|--version'
}

# The commands, as "inagg -h" lists them: "OBJECT COMMAND".
commands_of_help() {
	inagg -h | sed -n 's/^ *inagg \[-j\] \([a-z]*\) \([a-z]*\).*/\1 \2/p'
}

# The names the parser takes for option $2 of command $1, one per line: it
# refuses a wrong one with "need a, b or c" (numbers: "need an integer ...").
parser_choices() {
	local out
	out=$(inagg $1 "$2" '?' --zz-bogus 2>&1)
	case $out in
	*"invalid value '?': need a "* | *"invalid value '?': need an "*) ;;
	*"invalid value '?': need "*)
		sed -E "s/.*invalid value '\?': need //; s/ or /, /; s/, /\n/g" <<<"$out" ;;
	esac
}

# Every option with a value of every command's -h: the values offered after
# it (long and short form) are the parser's names, and none where it takes
# no list.
values_of_options() {
	local c s l m want got f help forms n=0
	while read -r c; do
		help=$(inagg $c -h)
		while read -r s l m; do
			[ -n "$m" ] || continue
			want=$(parser_choices "$c" "--$l" | sort)
			forms=("--$l")
			[ "$s" != - ] && forms+=("-$s")
			for f in "${forms[@]}"; do
				if [ -z "$want" ]; then
					[ -z "$(_inagg_choices "$help" "$f")" ] || {
						echo "inagg $c $f: offers names, the parser takes no list"
						return 1
					}
					continue
				fi
				got=$(offer inagg $c "$f" "" | sort)
				[ "$got" = "$want" ] || {
					echo "inagg $c $f: offers '$(echo $got)'," \
						"the parser takes '$(echo $want)'"
					return 1
				}
			done
			[ -n "$want" ] && n=$((n + 1))
		done < <(sed -n '/^Options:/,$p' <<<"$help" | grep -E '^  -|^      --' |
			sed -E 's/^ +//; s/,? +/ /g' |
			awk '{ if ($1 ~ /^--/) { s = "-"; l = $1; m = $2 }
			       else { s = substr($1, 2); l = $2; m = $3 }
			       if (m !~ /^[A-Z][A-Z0-9_|=.]*$/) m = ""
			       print s, substr(l, 3), m }')
	done < <(commands_of_help)
	echo "$n options with named values"
	[ "$n" -ge 10 ]
}

# eval's figures, as its parser lists them for one it does not know.
figures() {
	local want
	want=$(inagg eval run fig0 2>&1 | sed -nE 's/.*unknown figure .* \((.*)\)$/\1/p' |
		sed 's/, /\n/g' | sort)
	[ -n "$want" ] || { echo "no list of figures from inagg eval run fig0"; return 1; }
	diff <(echo "$want") <(offer inagg eval run "" | sort) &&
	diff <(echo "$want") <(offer inagg eval run fig2 "" | sort)
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
t "completion: -j, -v, -h after the command too, -V not" global_options_after
t "completion: every option's named values are the parser's" values_of_options
t "completion: eval run's figures" figures
t "completion: values by kind (interface, file)" values
t "completion: every option of inaggd -h" inaggd_options
t "completion: nothing for a word inagg does not know" unknown_word
finish
