#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# End-to-end tests of the inagg command line (KTAP). Needs $BUILD/inagg.
. "$(dirname "$0")/../lib/cli.sh"

# Congestion of "inagg topo place" in text and JSON equals the expected value.
place_is() {
	local algo=$1 want=$2 got
	got=$("$INAGG" topo place -t "$fig1" -k 2 -a "$algo" | awk '$1 == "congestion" { print $2 }')
	[ "$got" = "$want" ] || { echo "text: $algo gave '$got', want $want"; return 1; }
	got=$("$INAGG" -j topo place -t "$fig1" -k 2 -a "$algo" |
		sed -n 's/^  "congestion": \([0-9.]*\),$/\1/p')
	# JSON doubles are printed as Python's repr: 8.0
	[ "$got" = "$want.0" ] || { echo "json: $algo gave '$got', want $want.0"; return 1; }
}
for pair in top:8 max:9 level:6 smc:5 smc-naive:5 all-red:18 all-blue:1 brute:5; do
	t "fig1 place ${pair%%:*} congestion ${pair#*:}" place_is "${pair%%:*}" "${pair#*:}"
done

# The blue set printed is the one whose model congestion is reported: SMC on
# Fig. 1 must pick s2 and s4 (the only optimum with k=2).
smc_blue() {
	"$INAGG" topo place -t "$fig1" -k 2 | grep -qx 'blue        2: s2 s4'
}
t "fig1 smc blue set s2 s4" smc_blue

# Prefix matching and -j placement anywhere.
t "old name 'place', by its prefix 'pl', runs topo place" bash -c "'$INAGG' pl -t '$fig1' -k 2 | grep -q '^algorithm   smc'"
t "-j after the arguments" bash -c "'$INAGG' topo place -t '$fig1' -k 2 -j | grep -q '\"algorithm\": \"smc\"'"
t "unknown command fails" bash -c "! '$INAGG' frob 2>/dev/null"
t "unknown subcommand fails" bash -c "! '$INAGG' topo frob 2>/dev/null"

# Bad input: a one-line error naming the switch and the field, non-zero exit.
bad_case() {
	local name=$1 json=$2 k=$3 algo=$4 pattern=$5 f=$tmp/bad.json rc
	printf '%s\n' "$json" >"$f"
	"$INAGG" topo place -t "$f" -k "$k" -a "$algo" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	[ $rc -ne 0 ] || { echo "exit 0"; return 1; }
	[ ! -s "$tmp/out" ] || { echo "stdout not empty:"; cat "$tmp/out"; return 1; }
	[ "$(wc -l <"$tmp/err")" -eq 1 ] || { echo "not one line:"; cat "$tmp/err"; return 1; }
	grep -Eq -- "$pattern" "$tmp/err" || { echo "no /$pattern/ in:"; cat "$tmp/err"; return 1; }
	# The same error as one JSON object on stdout with -j.
	"$INAGG" -j topo place -t "$f" -k "$k" -a "$algo" >"$tmp/out" 2>/dev/null && return 1
	grep -q '^{ "error": ' "$tmp/out" || { echo "no JSON error:"; cat "$tmp/out"; return 1; }
}
R='{"name": "s0", "parent": null, "rate": 1, "load": 0}'
bad() { t "bad input: $1" bad_case "$@"; }
bad "not JSON" '{"switches": [' 1 smc 'JSON'
bad "missing name" "{\"switches\": [$R, {\"parent\": \"s0\", \"rate\": 1, \"load\": 1}]}" 1 smc \
	'#1.*"name"'
bad "duplicate name" "{\"switches\": [$R, {\"name\": \"s0\", \"parent\": \"s0\", \"rate\": 1, \"load\": 1}]}" \
	1 smc '"s0".*"name".*duplicate'
bad "unknown parent" "{\"switches\": [$R, {\"name\": \"s1\", \"parent\": \"sx\", \"rate\": 1, \"load\": 1}]}" \
	1 smc '"s1".*"parent".*"sx"'
bad "no root" '{"switches": [{"name": "a", "parent": "b", "rate": 1, "load": 1}, {"name": "b", "parent": "a", "rate": 1, "load": 1}]}' \
	1 smc 'root'
bad "two roots" "{\"switches\": [$R, {\"name\": \"s1\", \"parent\": null, \"rate\": 1, \"load\": 1}]}" \
	1 smc '"s1".*"parent"'
bad "cycle" "{\"switches\": [$R, {\"name\": \"a\", \"parent\": \"b\", \"rate\": 1, \"load\": 1}, {\"name\": \"b\", \"parent\": \"a\", \"rate\": 1, \"load\": 1}]}" \
	1 smc '"(a|b)".*"parent".*cycle'
bad "rate 0" "{\"switches\": [$R, {\"name\": \"s1\", \"parent\": \"s0\", \"rate\": 0, \"load\": 1}]}" \
	1 smc '"s1".*"rate"'
bad "rate < 0" "{\"switches\": [$R, {\"name\": \"s1\", \"parent\": \"s0\", \"rate\": -1.5, \"load\": 1}]}" \
	1 smc '"s1".*"rate"'
bad "negative load" "{\"switches\": [$R, {\"name\": \"s1\", \"parent\": \"s0\", \"rate\": 1, \"load\": -2}]}" \
	1 smc '"s1".*"load"'
bad "fractional load" "{\"switches\": [$R, {\"name\": \"s1\", \"parent\": \"s0\", \"rate\": 1, \"load\": 1.5}]}" \
	1 smc '"s1".*"load"'
bad "k < 0" "{\"switches\": [$R]}" -1 smc '^inagg: -k: .*-1'
bad "unknown algorithm" "{\"switches\": [$R]}" 1 nosuch "unknown algorithm 'nosuch'"
missing_file() {
	local out
	out=$("$INAGG" topo place -t "$tmp/none.json" -k 1 2>&1) && return 1
	grep -q 'none.json: No such file' <<<"$out"
}
t "missing topology file" missing_file

# Workloads file errors name the workload, switch and field.
wl_bad() {
	printf '%s\n' "$2" >"$tmp/wl.json"
	"$INAGG" topo multi -t "$fig1" --workloads "$tmp/wl.json" 2>"$tmp/err" >/dev/null && return 1
	[ "$(wc -l <"$tmp/err")" -eq 1 ] && grep -Eq "$3" "$tmp/err" || { cat "$tmp/err"; return 1; }
}
t "multi: unknown switch in load" wl_bad x '{"workloads": [{"name": "w", "k": 1, "load": {"s9": 1}}]}' \
	'"w".*"load".*"s9"'
t "multi: fractional load" wl_bad x '{"workloads": [{"name": "w", "k": 1, "load": {"s3": 0.5}}]}' \
	'"w".*"s3".*"load"'
t "multi: k < 0" wl_bad x '{"workloads": [{"name": "w", "k": -1}]}' '"w".*"k"'

# multi: capacity 1 per switch is consumed; the second identical workload
# cannot reuse the first one's blue switches, and totals add up.
multi_check() {
	printf '%s\n' '{"workloads": [{"name": "a", "k": 2}, {"name": "b", "k": 2}]}' >"$tmp/wl.json"
	"$INAGG" topo multi -t "$fig1" --workloads "$tmp/wl.json" >"$tmp/m" || return 1
	a=$(awk '$1 == "a" { $1=$2=$3=$4=""; print }' "$tmp/m" | xargs)
	b=$(awk '$1 == "b" { $1=$2=$3=$4=""; print }' "$tmp/m" | xargs)
	[ "$a" = "s2 s4" ] || { echo "a: '$a'"; return 1; }
	for s in $b; do [[ " $a " != *" $s "* ]] || { echo "b reuses $s"; return 1; }; done
	# Each switch's total messages = a's + b's.
	"$INAGG" -j topo multi -t "$fig1" --workloads "$tmp/wl.json" >"$tmp/mj" || return 1
	grep -q '"residual": 0' "$tmp/mj"
}
t "multi: capacity consumed, workloads separate" multi_check

# topo show prints every field a topology file sets: slots too (default 4096).
show_slots() {
	printf '%s\n' '{"switches": [{"name": "s0", "parent": null, "rate": 1, "load": 1, "slots": 128},' \
		'{"name": "s1", "parent": "s0", "rate": 2, "load": 1}]}' >"$tmp/sl.json"
	"$INAGG" topo show -t "$tmp/sl.json" >"$tmp/show" || return 1
	grep -q ' slots$' "$tmp/show" && grep -Eq '^s0 .* 128$' "$tmp/show" &&
		grep -Eq '^s1 .* 4096$' "$tmp/show" || { cat "$tmp/show"; return 1; }
	"$INAGG" -j topo show -t "$tmp/sl.json" | grep -c '"slots": \(128\|4096\)' | grep -qx 2
}
t "topo show: slots per switch" show_slots

# -h on every command, --version.
for c in "topo place" "topo multi" "topo gen" "topo dot" "topo show" "eval run" "net up" "net down" \
	"dev attach" "dev detach" "dev show" "job submit" "job list" "job show" "job end" \
	"stats show" "worker run" "ps run" "ledger show" "ledger set" "ledger admit" "ledger release"; do
	t "'$c -h' prints usage" bash -c "'$INAGG' $c -h | grep -q '^Usage: inagg \[-j\] $c'"
done
t "'topo -h' lists subcommands" bash -c "'$INAGG' topo -h | grep -q 'topo gen'"
t "'-h' lists commands" bash -c "'$INAGG' -h | grep -q 'inagg \[-j\] topo place'"
t "--version" bash -c "'$INAGG' --version | grep -Eq '^inagg [0-9]+\.[0-9]+'"
t "-j --version" bash -c "'$INAGG' -j --version | grep -q '\"version\"'"

# topo gen: same seed same tree, other seed other tree.
gen_det() {
	"$INAGG" topo gen -d 5 -l powerlaw -r exp -s 42 >"$tmp/g1" &&
		"$INAGG" topo gen -d 5 -l powerlaw -r exp -s 42 >"$tmp/g2" &&
		"$INAGG" topo gen -d 5 -l powerlaw -r exp -s 43 >"$tmp/g3" || return 1
	cmp -s "$tmp/g1" "$tmp/g2" && ! cmp -s "$tmp/g1" "$tmp/g3"
}
t "topo gen: deterministic per seed" gen_det
t "topo gen: random tree deterministic" bash -c \
	"cmp <('$INAGG' topo gen -R 50 -r random -s 7) <('$INAGG' topo gen -R 50 -r random -s 7)"
t "topo gen: output parses (place on it)" bash -c \
	"'$INAGG' topo gen -R 40 -r random -l powerlaw --loaded all -s 3 -o '$tmp/r.json' && '$INAGG' topo place -t '$tmp/r.json' -k 4 >/dev/null"

# Leaf loads of a generated tree as one number per line.
leaf_loads() {
	"$INAGG" topo gen -d "$1" -l "$2" -s "$3" |
		awk -F'"load": ' '/"load"/ { split($2, a, ","); print a[1] }' | tail -n $((1 << $1))
}
t "topo gen: 255 switches at depth 7" bash -c "[ \$('$INAGG' topo gen -d 7 | grep -c '\"name\"') -eq 255 ]"
loads_in() {
	leaf_loads "$1" "$2" 9 | awk -v lo="$3" -v hi="$4" -v mlo="$5" -v mhi="$6" '
		{ if ($1 < lo || $1 > hi) bad++; s += $1; c++ }
		END { m = s / c; print "mean", m, "n", c, "out of range", bad + 0
		      exit !(bad == 0 && m >= mlo && m <= mhi) }'
}
t "topo gen: uniform loads in [1,9], mean ~5" loads_in 12 uniform 1 9 4.8 5.2
t "topo gen: power-law loads in [2,62], mean ~5" loads_in 14 powerlaw 2 62 4.7 5.3
# A heavy tail: some leaves above 30 among 4096 (P(x > 30) is about 2%).
heavy_tail() {
	[ "$(leaf_loads 12 powerlaw 1 | awk '$1 > 30' | wc -l)" -gt 10 ]
}
t "topo gen: power-law reaches large loads" heavy_tail
const_loads() {
	[ "$(leaf_loads 3 3 1 | tr '\n' ' ')" = "3 3 3 3 3 3 3 3 " ] &&
		[ "$("$INAGG" topo gen -d 3 -l 3 | grep -c '"load": 0,')" -eq 7 ]
}
t "topo gen: const load 3 on every leaf, 0 inside" const_loads
# Rates by height: linear 1..depth+1, exp 1.5^height.
rates_are() {
	"$INAGG" topo gen -d 4 -r "$1" |
		awk -F'"rate": ' '/"rate"/ { split($2, a, ","); print a[1] }' | uniq | tr '\n' ' ' |
		grep -qx "$2"
}
t "topo gen: linear rates 5 4 3 2 1 by level" rates_are linear "5 4 3 2 1 "
t "topo gen: exp rates 1.5^height" rates_are exp "5.0625 3.375 2.25 1.5 1 "
t "topo gen: const rates" rates_are const "1 "

# topo dot: colours of the SMC placement and congestion labels of Fig. 1.
dot_check() {
	"$INAGG" topo dot -t "$fig1" -a smc -k 2 >"$tmp/d" || return 1
	for s in s2 s4; do grep -q "^	\"$s\" .*fillcolor=\"royalblue\"" "$tmp/d" || return 1; done
	for s in s0 s1 s3 s5 s6; do grep -q "^	\"$s\" .*fillcolor=\"tomato\"" "$tmp/d" || return 1; done
	# Uplink labels: s0 4, s1 3, s2 1, s3 2, s4 1, s5 5, s6 5 (from the model).
	for e in s0:d:4 s1:s0:3 s2:s0:1 s3:s1:2 s4:s1:1 s5:s2:5 s6:s2:5; do
		IFS=: read -r a b c <<<"$e"
		grep -q "\"$a\" -> \"$b\" \[label=\"$c\"" "$tmp/d" || { echo "no $e"; return 1; }
	done
	grep -q 'label="6"' "$tmp/d" && grep -q 'penwidth' "$tmp/d"
}
t "topo dot: smc colours and labels" dot_check
dot_json() {
	"$INAGG" -j topo place -t "$fig1" -k 2 -a top >"$tmp/top.json" &&
		"$INAGG" topo dot -t "$fig1" -P "$tmp/top.json" >"$tmp/d" || return 1
	grep -q '"s0" .*royalblue' "$tmp/d" && grep -q '"s2" .*royalblue' "$tmp/d" &&
		grep -q '"s1" -> "s0" \[label="8"' "$tmp/d" && grep -q 'label="top, k=2: congestion 8"' "$tmp/d"
}
t "topo dot: placement from place -j" dot_json
t "topo dot: no placement labels rates" bash -c "'$INAGG' topo dot -t '$fig1' | grep -q 'label=\"w=1\"'"
# -j: stdout is one JSON document for every command, also those that write DOT or a file.
dot_j() {
	"$INAGG" -j topo dot -t "$fig1" -a smc -k 2 >"$tmp/dj" || return 1
	python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["title"] == "smc, k=2: congestion 5", d
assert d["dot"].startswith("digraph inagg {") and "royalblue" in d["dot"], d["dot"][:80]
' "$tmp/dj" || { head -c 300 "$tmp/dj"; return 1; }
	# The same DOT as without -j.
	"$INAGG" topo dot -t "$fig1" -a smc -k 2 >"$tmp/dt" &&
		python3 -c 'import json, sys; sys.stdout.write(json.load(open(sys.argv[1]))["dot"])' \
			"$tmp/dj" | cmp - "$tmp/dt"
}
t "topo dot -j: the DOT inside one JSON document" dot_j
out_j() {
	"$INAGG" -j topo dot -t "$fig1" -o "$tmp/o.dot" >"$tmp/oj" &&
		grep -q '"output": ".*o.dot"' "$tmp/oj" && head -1 "$tmp/o.dot" | grep -q '^digraph' &&
		"$INAGG" -j topo gen -d 1 -o "$tmp/o.json" >"$tmp/gj" &&
		python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); assert d["switches"] == 3, d' \
			"$tmp/gj" && "$INAGG" topo show -t "$tmp/o.json" >/dev/null ||
		{ cat "$tmp/oj" "$tmp/gj"; return 1; }
}
t "topo dot/gen -j -o FILE: a JSON answer on stdout" out_j
t "topo dot: -a ALGO without -k fails" bash -c "! '$INAGG' topo dot -t '$fig1' -a smc 2>/dev/null"

# eval: a small run; SMC is optimal in every row of Fig. 2's table.
EVAL="-d 4 --seeds 3 -k 1,2,4,8 --nworkloads 1,2,4 -c 1,2,4 --multi-k 3 --cap-workloads 6"
eval_small() {
	"$INAGG" eval $EVAL >"$tmp/ev" 2>"$tmp/everr" || return 1
	[ ! -s "$tmp/everr" ] || { echo "stderr not empty"; return 1; }
	# Rows of "mean network congestion": k smc top max level all-red all-blue.
	# Means only: each is followed by its standard deviation, "±sd".
	sed -n '/^== Fig. 2: mean network congestion/,/^== /p' "$tmp/ev" | sed 's/ ±[^ ]*//g' >"$tmp/f2"
	[ "$(grep -cE '^ +[0-9]+ ' "$tmp/f2")" -eq 24 ] || { echo "want 24 rows"; return 1; }
	awk '/^ +[0-9]+ / {
		for (i = 3; i <= 6; i++) if ($2 > $i + 1e-9) { print "smc > col", i, ":", $0; bad = 1 }
		if ($7 > $2 + 1e-9) { print "all-blue > smc:", $0; bad = 1 }
		rows++ }
		END { exit bad || rows != 24 }' "$tmp/f2"
}
t "eval: fig. 2 table, smc <= top, max, level, all-red" eval_small
eval_norm() {
	sed -n '/^== Fig. 3/,/^== Fig. 4/p' "$tmp/ev" | sed 's/ ±[^ ]*//g' | awk '/^ +[0-9]+ / {
		if ($2 != "1.0000") bad = 1
		for (i = 3; i <= 6; i++) if ($i < 1) bad = 1
		rows++ } END { exit bad || rows != 24 }' &&
	# Aggregation never adds messages: every strategy <= all-red (fig. 4).
	sed -n '/^== Fig. 4: total congestion vs workloads, normalised/,/^== /p' "$tmp/ev" |
		sed 's/ ±[^ ]*//g' | awk '/^ +[0-9]+ / { for (i = 2; i <= 6; i++) if ($i > 1.00001) bad = 1; rows++ }
		END { exit bad || rows != 9 }'
}
t "eval: fig. 3 smc = 1 and others >= 1, fig. 4 <= all-red" eval_norm
t "eval: deterministic for a seed" bash -c "cmp <('$INAGG' eval $EVAL -s 5) <('$INAGG' eval $EVAL -s 5)"
t "eval: other seed, other numbers" bash -c "! cmp -s <('$INAGG' eval fig2 $EVAL -s 5) <('$INAGG' eval fig2 $EVAL -s 6)"
t "eval: -j has fig2..fig5" bash -c \
	"'$INAGG' -j eval $EVAL | grep -c '\"fig[2345]\": {' | grep -qx 4"
eval_plot() {
	"$INAGG" eval fig4 $EVAL --plot "$tmp/plots" >/dev/null 2>"$tmp/perr" || return 1
	[ -s "$tmp/plots/fig4-const.dat" ] && [ -s "$tmp/plots/plots.gp" ] || return 1
	if command -v gnuplot >/dev/null; then
		[ -s "$tmp/plots/fig4-exp.png" ]
	else
		grep -q "gnuplot not found" "$tmp/perr"
	fi
}
t "eval: --plot writes data, script and PNGs" eval_plot
# gnuplot ran as "cd 'DIR' && gnuplot plots.gp" in a shell: a quote in DIR ended
# the name and the rest ran as commands. A fake gnuplot says where it ran.
eval_plot_quote() {
	local dir="$tmp/it's; touch ran; 'x" bin=$tmp/bin inagg
	inagg=$(cd "$(dirname "$INAGG")" && pwd)/inagg
	mkdir -p "$bin" &&
	printf '#!/bin/sh\npwd >"%s/gp-where"; echo "$@" >>"%s/gp-where"\n' "$tmp" "$tmp" \
		>"$bin/gnuplot" && chmod +x "$bin/gnuplot" &&
	(cd "$tmp" && PATH=$bin:$PATH "$inagg" eval fig4 $EVAL --plot "$dir" >/dev/null 2>"$tmp/perr") &&
	[ ! -e "$tmp/ran" ] && [ -s "$dir/plots.gp" ] &&
	[ "$(cat "$tmp/gp-where")" = "$(cd "$dir" && pwd -P)
plots.gp" ]
}
t "eval: --plot DIR with a quote runs gnuplot in DIR, no shell" eval_plot_quote
t "eval: unknown figure fails" bash -c "! '$INAGG' eval fig9 2>/dev/null"

finish
