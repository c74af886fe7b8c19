# SPDX-License-Identifier: GPL-2.0
# bash completion for inagg(8) and inaggd(8).
# It holds no list of commands or options: at completion time it reads the
# program's own help ("inagg -h", "inagg OBJECT -h", "inagg OBJECT COMMAND -h"),
# so it offers exactly what the installed binary accepts and cannot drift from
# it. tests/unit/completion.sh checks it against the help and docs/cli.md.

# Every option (-x, --long) of a help text's usage lines and option lines
# (those that start with an option); with $2, of its first line only.
_inagg_options() {
	grep -E '^(Usage:| +-| +inagg )' <<<"$1" | head -n "${2:-1000000}" |
		grep -oE '(^|[][ {|,])--?[A-Za-z][A-Za-z0-9-]*' | sed 's/^[^-]*//' | sort -u
}

# The usage lines of a help text, each without its "Usage: PROG [-j]".
_inagg_usage() {
	sed -nE 's/^(Usage:)? +[a-z]+ (\[-j\] )?([a-z].*)$/\3/p' <<<"$1"
}

# Literal words (objects, commands, keywords) that may follow the words $2...
# in the usage lines of help text $1: "ledger { show | set }" gives show, set.
_inagg_next() {
	local help=$1 line w prefix
	shift
	prefix="$*"
	while IFS= read -r line; do
		if [ -n "$prefix" ]; then
			[[ "$line " == "$prefix "* ]] || continue
			line=${line#"$prefix"}
		fi
		line=${line# }
		if [[ $line == "{ "* ]]; then	# alternatives up to the closing brace
			line=${line#\{ }
			line=${line%%\}*}
			for w in $line; do
				[[ $w =~ ^[a-z][a-z0-9-]*$ ]] && echo "$w"
			done
			continue
		fi
		w=${line%% *}
		[[ $w =~ ^[a-z][a-z0-9-]*$ ]] && echo "$w"
	done < <(_inagg_usage "$help") | sort -u
}

# The placeholder after option or keyword $2 in help text $1 (FILE, IFACE, ...).
_inagg_arg() {
	grep -oE -- "(^|[][ ,])$2( |, --?[a-z-]+ )[A-Z][A-Z0-9_|=.]*" <<<"$1" | head -n 1 |
		awk '{ print $NF }'
}

# The placeholder a command takes as its first bare word ("dev attach IFACE"),
# from the usage lines of "inagg -h" ($1); the command's words follow.
_inagg_positional() {
	local top=$1
	shift
	_inagg_usage "$top" | sed -nE "s/^$* ([A-Z][A-Z0-9_]*)( .*)?$/\1/p" | head -n 1
}

# The values option $2 takes, if it names them: the list that ends its entry
# in help text $1, as the option table prints it ("(ina, ps or auto; default
# auto)"; prose such as "(gnuplot)" is no list), one per line.
_inagg_choices() {
	awk -v opt="$2" '
		/^  -|^      --/ {
			if (on)
				exit
			line = $0
			sub(/^ +/, "", line)
			split(line, w, /,? +/)
			on = w[1] == opt || w[2] == opt
		}
		/^[^ ]/ { if (on) exit }
		on { text = text " " $0 }
		END {
			gsub(/ +/, " ", text)
			if (!match(text, /\([^()]*\) *$/))
				exit
			list = substr(text, RSTART + 1, RLENGTH - 1)
			sub(/\) *$/, "", list)
			sub(/; .*/, "", list)
			name = "[a-z][a-z0-9_.-]*"
			if (list !~ "^" name "(, " name ")* or " name "$")
				exit
			gsub(/,|or /, "", list)
			n = split(list, v, " ")
			for (i = 1; i <= n; i++)
				print v[i]
		}' <<<"$1"
}

# The words of a list that help text $1 gives under a placeholder ("FIG:",
# then "  fig2   ..." lines), for a command's positional arguments.
_inagg_listed() {
	awk '/[A-Z]+:$/ { on = 1; next }
		on && /^  [a-z][a-z0-9-]*  / { print $1; next }
		on && !/^      / { on = 0 }' <<<"$1"
}

# Completes a value of the kind its placeholder names.
_inagg_value() {
	case $1 in
	FILE | PATH | DIR | TOPOLOGY | WORKLOADS | PLACEMENT*)
		compopt -o filenames 2>/dev/null
		COMPREPLY=($(compgen -f -- "$2")) ;;
	IFACE)
		COMPREPLY=($(compgen -W "$(ls /sys/class/net 2>/dev/null)" -- "$2")) ;;
	NETNS | NS | NAME* | TAG)
		COMPREPLY=($(compgen -W "$(ip netns list 2>/dev/null | cut -d' ' -f1)" -- "$2")) ;;
	*)
		COMPREPLY=() ;;
	esac
}

# The one word of $2... that $1 is a unique prefix of (as the CLI resolves it).
_inagg_resolve() {
	local typed=$1 w hit= n=0
	shift
	for w in "$@"; do
		[ "$w" = "$typed" ] && { echo "$w"; return; }
		[[ $w == "$typed"* ]] && { hit=$w; n=$((n + 1)); }
	done
	[ "$n" = 1 ] && echo "$hit"
}

# Keywords of a command's arguments ("dev IFACE", "netns NAME", "job ID"):
# words followed by a placeholder, in the usage lines and in the first column
# of the help's two-space indented lines.
_inagg_keywords() {
	{
		_inagg_usage "$1"
		sed -nE 's/^  ([a-z].*)/\1/p' <<<"$1" | sed -E 's/ {2,}.*//'
	} | grep -oE '(^|[][ {|])[a-z][a-z0-9-]* [A-Z][A-Z0-9_|=.]*' |
		sed -E 's/^[][ {|]//; s/ .*//' | sort -u
}

_inagg() {
	local prog=${COMP_WORDS[0]} cur=${COMP_WORDS[COMP_CWORD]}
	local prev=${COMP_WORDS[COMP_CWORD - 1]}
	local help top sub path=() words=() w i arg nbare=0

	help=$("$prog" -h 2>&1)
	top=$help
	# The object and command typed so far; options and their values skipped.
	for ((i = 1; i < COMP_CWORD; i++)); do
		w=${COMP_WORDS[i]}
		if [[ $w == -* ]]; then
			[ -n "$(_inagg_arg "$help" "$w")" ] && i=$((i + 1))
			continue
		fi
		[ ${#path[@]} -ge 2 ] && { nbare=$((nbare + 1)); continue; }
		words=($(_inagg_next "$help" "${path[@]}"))
		[ ${#words[@]} -eq 0 ] && { nbare=$((nbare + 1)); continue; }
		w=$(_inagg_resolve "$w" "${words[@]}")
		[ -z "$w" ] && return 0		# not a word inagg knows
		path+=("$w")
		sub=$("$prog" "${path[@]}" -h 2>&1) && help=$sub
	done

	arg=$(_inagg_arg "$help" "$prev")
	if [ -n "$arg" ] && [ "$COMP_CWORD" -gt 1 ]; then
		words=($(_inagg_choices "$help" "$prev"))
		if [ ${#words[@]} -gt 0 ]; then
			COMPREPLY=($(compgen -W "${words[*]}" -- "$cur"))
		else
			_inagg_value "$arg" "$cur"
		fi
	elif [[ $cur == -* ]]; then
		# Before the object, only the options of "inagg" itself; after it,
		# those that may appear anywhere too (-j, -v, -h), not -V.
		if [ ${#path[@]} -eq 0 ]; then
			words=($(_inagg_options "$help" 1))
		else
			words=($({ _inagg_options "$help"; _inagg_options "$top" 1; } |
				grep -vxE -- '-V|--version' | sort -u))
		fi
		COMPREPLY=($(compgen -W "${words[*]}" -- "$cur"))
	elif [ ${#path[@]} -gt 0 ] && [ "$nbare" = 0 ] &&
	     arg=$(_inagg_positional "$top" "${path[@]}") && [ -n "$arg" ]; then
		_inagg_value "$arg" "$cur"
	else
		words=($(_inagg_next "$help" "${path[@]}"))
		[ ${#path[@]} -gt 0 ] && words+=($(_inagg_keywords "$help"))
		[ ${#path[@]} -ge 2 ] && words+=($(_inagg_listed "$help"))
		words=($(printf '%s\n' "${words[@]}" | sort -u))
		COMPREPLY=($(compgen -W "${words[*]}" -- "$cur"))
	fi
	return 0
}

_inaggd() {
	local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]} help arg
	help=$("${COMP_WORDS[0]}" -h 2>&1)
	arg=$(_inagg_arg "$help" "$prev")
	if [ -n "$arg" ] && [ "$COMP_CWORD" -gt 1 ]; then
		_inagg_value "$arg" "$cur"
		return 0
	fi
	COMPREPLY=($(compgen -W "$(_inagg_options "$help")" -- "$cur"))
}

complete -F _inagg inagg
complete -F _inaggd inaggd
