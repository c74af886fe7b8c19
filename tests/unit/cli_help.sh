#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Every command's -h comes from its option table (KTAP): each option that -h
# shows is accepted by the parser, each option of the synopsis is explained
# under "Options:", limits shown are enforced, and no letter or long name has
# two meanings across commands (the vocabulary of docs/cli.md).
# Needs $BUILD/inagg; runs nothing but option parsing.
. "$(dirname "$0")/../lib/cli.sh"

# The commands, as 'inagg -h' lists them: "OBJECT COMMAND".
mapfile -t cmds < <("$INAGG" -h | sed -n 's/^ *inagg \[-j\] \([a-z]*\) \([a-z]*\).*/\1 \2/p')
t "inagg -h lists at least 20 commands" test "${#cmds[@]}" -ge 20

# Options of one command's -h: lines "-x, --name META" or "--name META"
# under "Options:", as "SHORT LONG META" (SHORT "-" when none).
options_of() {
	"$INAGG" $1 -h | sed -n '/^Options:/,$p' |
		sed -n 's/^  -\(.\), --\([a-z0-9-]*\)\( \([A-Z][A-Z]*\)\)\{0,1\} .*/\1 \2 \4/p;
			s/^  -\(.\), --\([a-z0-9-]*\)\( \([A-Z][A-Z]*\)\)\{0,1\}$/\1 \2 \4/p;
			s/^      --\([a-z0-9-]*\)\( \([A-Z][A-Z]*\)\)\{0,1\} .*/- \1 \3/p;
			s/^      --\([a-z0-9-]*\)\( \([A-Z][A-Z]*\)\)\{0,1\}$/- \1 \3/p'
}

# One option is accepted: followed by a bogus option, parsing must go past
# it (the error names the bogus one), or stop at its value (the error names
# the option itself). Never "unknown option" for the option.
accepted() {	# accepted "OBJ CMD" FORM LABEL1 LABEL2 [META]
	local cmd=$1 form=$2 l1=$3 l2=$4 meta=$5 out rc args=("$2")
	[ -n "$meta" ] && args+=("0")
	out=$("$INAGG" $cmd "${args[@]}" --zz-bogus 2>&1)
	rc=$?
	[ $rc -eq 1 ] || { echo "$cmd $form: status $rc"; return 1; }
	if grep -q "unknown option '\\($l1\\|$l2\\)'" <<<"$out"; then
		echo "$cmd: $form shown by -h but not accepted: $out"
		return 1
	fi
	grep -qE -- "unknown option '--zz-bogus'|(^|: )($l1|$l2): " <<<"$out" ||
		{ echo "$cmd $form: unexpected: $out"; return 1; }
}

all_accepted() {
	local cmd=$1 s l m bad=0 count=0
	while read -r s l m; do
		count=$((count + 1))
		accepted "$cmd" "--$l" "-$s" "--$l" "$m" || bad=1
		if [ "$s" != - ]; then
			accepted "$cmd" "-$s" "-$s" "--$l" "$m" || bad=1
		fi
	done < <(options_of "$cmd")
	[ $bad -eq 0 ]
}

# Every -x or --name of the synopsis appears under Options.
synopsis_explained() {
	local cmd=$1 syn o
	syn=$("$INAGG" $cmd -h | sed -n '1,/^[A-Z][a-z]/p' | sed '$d')
	options_of "$cmd" >"$tmp/opts"
	for o in $(grep -oE -- '(^|[ [{|])--?[a-zA-Z][a-z0-9-]*' <<<"$syn" | tr -d ' [{|'); do
		[ "$o" = -j ] && continue
		if [[ $o == --* ]]; then
			awk -v l="${o#--}" '$2 == l { f = 1 } END { exit !f }' "$tmp/opts"
		else
			awk -v s="${o#-}" '$1 == s { f = 1 } END { exit !f }' "$tmp/opts"
		fi || { echo "$cmd: synopsis shows $o, Options does not"; return 1; }
	done
}

for c in "${cmds[@]}"; do
	t "$c: every option of -h is accepted" all_accepted "$c"
	t "$c: every option of the synopsis is explained" synopsis_explained "$c"
done

# One meaning per name: across commands a letter always has the same long
# name, and a long name the same letter (or none everywhere).
one_meaning() {
	for c in "${cmds[@]}"; do options_of "$c"; done | sort -u >"$tmp/all"
	awk '$1 != "-" { if (s[$1] && s[$1] != $2) { print "-" $1 ": --" s[$1] " and --" $2; bad = 1 }
			 s[$1] = $2 }
	     { if (l[$2] && l[$2] != $1) { print "--" $2 ": -" l[$2] " and -" $1; bad = 1 }
	       l[$2] = $1 }
	     END { exit bad }' "$tmp/all"
}
t "one letter, one long name, across all commands" one_meaning

# The man page (docs/cli.md) lists every option: each long name of every
# command's -h has a row in OPTION VOCABULARY, with its letter if it has
# one and the command's object (or "all") among the row's commands.
vocabulary_complete() {
	local c obj s l m row bad=0
	awk '/^## OPTION VOCABULARY/ { on = 1; next } /^## / { on = 0 }
		on && /^\| `/' "$(dirname "$0")/../../docs/cli.md" >"$tmp/vocab"
	[ -s "$tmp/vocab" ] || { echo "no OPTION VOCABULARY table in docs/cli.md"; return 1; }
	for c in "${cmds[@]}"; do
		obj=${c%% *}
		while read -r s l m; do
			row=$(awk -F'|' -v l="--$l" '{ n = split($2, w, /[` ,]+/)
				for (i = 1; i <= n; i++) if (w[i] == l) { print; exit } }' "$tmp/vocab")
			if [ -z "$row" ]; then
				echo "$c: --$l has no row in docs/cli.md's OPTION VOCABULARY"
				bad=1
			elif [ "$s" != - ] && ! grep -qF -- "\`-$s\`" <<<"$row"; then
				echo "$c: docs/cli.md's row of --$l lacks -$s"
				bad=1
			elif ! awk -F'|' '{ print $4 }' <<<"$row" | grep -qwE -- "$obj|all"; then
				echo "$c: docs/cli.md's row of --$l does not name $obj"
				bad=1
			fi
		done < <(options_of "$c")
	done
	[ $bad -eq 0 ]
}
t "every option of every command is in docs/cli.md's vocabulary (the man page)" \
	vocabulary_complete

# Limits printed by -h are those enforced: -C (chunk) 1..IA_MAX_ELEMS.
limits_enforced() {
	local hi
	hi=$("$INAGG" worker run -h | sed -n 's/.*--chunk E .*(1\.\.\([0-9]*\);.*/\1/p')
	[ -n "$hi" ] || { echo "no limit shown for --chunk"; return 1; }
	"$INAGG" worker run -C $((hi + 1)) --zz 2>&1 | grep -q "\-C: invalid value '$((hi + 1))'" &&
		"$INAGG" worker run -C "$hi" --zz 2>&1 | grep -q "unknown option '--zz'"
}
t "limits shown by -h are enforced (worker --chunk)" limits_enforced

# Issue 11: --depth and --random together are refused, not silently mixed.
depth_random() {
	local out
	out=$("$INAGG" topo gen --depth 2 --random 5 2>&1) && return 1
	grep -q "give only one of -d D and -R N" <<<"$out"
}
t "topo gen --depth 2 --random 5 is refused" depth_random

# Names of earlier versions (packaging units, operators' scripts) run the new commands.
old_names() {
	local pair old new
	for pair in "attach:dev attach" "detach:dev detach" "status:dev show" \
		"topo up:net up" "topo down:net down" "place:topo place" "multi:topo multi"; do
		old=${pair%%:*} new=${pair#*:}
		"$INAGG" $old -h | head -1 | grep -q "^Usage: inagg \[-j\] $new " ||
			{ echo "'$old' does not run '$new'"; return 1; }
		! "$INAGG" -h | grep -qE "inagg \[-j\] $old " || { echo "'$old' listed"; return 1; }
	done
}
t "old names run the new commands and are not listed" old_names

finish
