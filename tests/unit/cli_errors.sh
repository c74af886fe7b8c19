#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The error contract of docs/cli.md on input a new user gets wrong: exit 1,
# one line "inagg: ..." on stderr and nothing on stdout; with -j, exit 1 and
# one JSON object {"error": "..."} on stdout whose message is one line.
# Needs $BUILD/inagg; no daemon, no root networking.
. "$(dirname "$0")/../lib/cli.sh"

printf '{' >"$tmp/trunc.json"
: >"$tmp/empty.json"
printf '{"blue": []} tail\n' >"$tmp/trail.json"

# fails PATTERN ARGS...: the contract, and the message matches PATTERN.
fails() {
	local pattern=$1 rc
	shift
	timeout 20 "$INAGG" "$@" >"$tmp/out" 2>"$tmp/err" </dev/null
	rc=$?
	[ $rc -eq 1 ] || { echo "exit $rc, want 1"; cat "$tmp/err"; return 1; }
	[ ! -s "$tmp/out" ] || { echo "stdout not empty:"; head -5 "$tmp/out"; return 1; }
	[ "$(wc -l <"$tmp/err")" -eq 1 ] || { echo "not one line:"; cat "$tmp/err"; return 1; }
	grep -q '^inagg: ' "$tmp/err" || { echo "no 'inagg: ':"; cat "$tmp/err"; return 1; }
	grep -Eq -- "$pattern" "$tmp/err" || { echo "no /$pattern/ in:"; cat "$tmp/err"; return 1; }
	timeout 20 "$INAGG" -j "$@" >"$tmp/out" 2>/dev/null </dev/null
	rc=$?
	[ $rc -eq 1 ] || { echo "-j: exit $rc, want 1"; return 1; }
	python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert list(d) == ["error"], d
assert "\n" not in d["error"], repr(d["error"])
' "$tmp/out" || { echo "-j: not one JSON error:"; cat "$tmp/out"; return 1; }
}

# A placement or workloads file that is missing or not JSON says so in one
# line, as a topology file does (json-c's messages ended in a newline).
t "dot -P missing file" fails 'none.json: No such file or directory$' \
	topo dot -t "$fig1" -P "$tmp/none.json"
t "dot -P truncated JSON" fails 'trunc.json: not valid JSON \(unexpected end of input at offset 1\)$' \
	topo dot -t "$fig1" -P "$tmp/trunc.json"
t "dot -P empty file" fails 'empty.json: not valid JSON' topo dot -t "$fig1" -P "$tmp/empty.json"
t "dot -P text after the JSON" fails 'trail.json: not valid JSON \(text after the value' \
	topo dot -t "$fig1" -P "$tmp/trail.json"
t "dot -P a folder" fails ': Is a directory$' topo dot -t "$fig1" -P "$tmp"
t "multi --workloads truncated JSON" fails 'trunc.json: not valid JSON' \
	topo multi -t "$fig1" --workloads "$tmp/trunc.json"
t "multi --workloads missing file" fails 'none.json: No such file or directory$' \
	topo multi -t "$fig1" --workloads "$tmp/none.json"

# A number beyond the field's type names the limit it broke (it said
# "need an integer >= 0" of 99999999999999999999).
t "-k too large names its limit" fails "-k: invalid value '99999999999999999999': need an integer in 0\.\." \
	topo place -t "$fig1" -k 99999999999999999999
t "-l too large names its limit" fails "-l: invalid value '99999999999': need an integer in 0\.\." \
	topo gen -l 99999999999
t "-k not a number" fails "-k: invalid value 'x': need an integer >= 0$" topo place -t "$fig1" -k x

# The global options: one line, and JSON with -j even before an object.
t "unknown global option" fails "unknown option '--frob'; try 'inagg -h'$" --frob
t "-j without an object gives a JSON error" bash -c \
	"'$INAGG' -j >'$tmp/o' 2>/dev/null; [ \$? -eq 1 ] && grep -q '^{ \"error\": \"missing object' '$tmp/o'"
t "no object prints the usage, exit 1" bash -c \
	"'$INAGG' 2>'$tmp/e' >/dev/null; [ \$? -eq 1 ] && grep -q '^Usage: inagg' '$tmp/e'"

# eval --plot's folder is checked before the run: it printed every table, then failed.
: >"$tmp/afile"
t "eval --plot in a missing folder" fails 'none/plots: No such file or directory$' \
	eval run fig2 -d 1 --seeds 1 --plot "$tmp/none/plots"
t "eval --plot on a file" fails 'afile: Not a directory$' eval run fig2 -d 1 --seeds 1 --plot "$tmp/afile"

# worker and ps check -o before the run: they ran the whole job (a worker without
# a PS retried for a minute, a PS waited for its workers) and then lost the result.
t "worker -o in a missing folder fails at once" fails 'none/sum.txt: No such file or directory$' \
	worker run -J 1 -i 1 -p 127.0.0.1 -e 4 --cc fixed --class ina -o "$tmp/none/sum.txt"
t "ps -o in a missing folder fails at once" fails 'none/sum.txt: No such file or directory$' \
	ps run -J 1 --nworkers 1 -e 4 -u -o "$tmp/none/sum.txt"
t "worker -o on a folder fails at once" fails ': Is a directory$' \
	worker run -J 1 -i 1 -p 127.0.0.1 -e 4 --cc fixed --class ina -o "$tmp"
# Loopback addresses of this run (127.X.Y.Z from the pid), so that two runs
# of this test at once do not share a worker's address.
lo=127.$((($$ >> 8) & 255)).$(($$ & 255))
lore=${lo//./\\.}
# A worker without a PS waited about 45 s (--retries 50, doubling to 1 s) to
# say "no result after 50 retransmissions". Nothing on $lo.201:9430: the
# host answers ICMP port unreachable, and the worker fails after 1 s of it.
t "worker with no PS: the address, not 50 retries" fails \
	"worker 1: no PS at $lore.201:9430: nothing listens on that port \\(ICMP port unreachable\\)" \
	worker run -J 1 -i 1 -p $lo.201 -A $lo.202 -e 4 --cc fixed --class ina
t "worker with no PS fails within 5 s" bash -c \
	"timeout 5 '$INAGG' worker run -J 1 -i 1 -p $lo.201 -A $lo.202 -e 4 --cc fixed \
	 --class ina 2>/dev/null; [ \$? -eq 1 ]"
# A PS that never answers (a socket that never reads): the give-up names it.
python3 -c '
import socket, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind((sys.argv[2], 9430))
open(sys.argv[1], "w").close()
time.sleep(60)
' "$tmp/mute.ready" "$lo.203" &
mute=$!
for _ in $(seq 100); do [ -e "$tmp/mute.ready" ] && break; sleep 0.05; done
t "a PS that never answers: named in the give-up" fails \
	"chunk 0: no result after 3 retransmissions: no result at all from the PS at $lore.203:9430 in [0-9.]+ s" \
	worker run -J 1 -i 1 -p $lo.203 -A $lo.204 -e 4 --cc fixed --class ina --retries 3
kill $mute 2>/dev/null
wait $mute 2>/dev/null
# The refusals of a PS started a moment after its worker are no failure.
late_ps() {
	"$INAGG" worker run -J 1 -i 1 -p $lo.205 -A $lo.206 -e 4 --cc fixed --class ina \
		>"$tmp/late.w" 2>&1 &
	local w=$! rc
	sleep 0.2
	"$INAGG" ps run -J 1 --nworkers 1 -e 4 -u -A $lo.205 --linger 100 >/dev/null 2>&1
	wait $w
	rc=$?
	cat "$tmp/late.w"
	return $rc
}
t "a PS started 0.2 s after its worker: the run succeeds" late_ps

# A run that fails leaves a file that was there as it was, and makes none.
keeps_file() {
	echo old >"$tmp/keep.txt"
	"$INAGG" worker run -J 1 -i 1 -p 127.0.0.1 -A 127.0.0.2 -e 4 --cc fixed --class ina --retries 1 \
		-o "$tmp/keep.txt" 2>/dev/null && return 1
	[ "$(cat "$tmp/keep.txt")" = old ] || { echo "keep.txt now: $(cat "$tmp/keep.txt")"; return 1; }
	"$INAGG" worker run -J 1 -i 1 -p 127.0.0.1 -A 127.0.0.2 -e 4 --cc fixed --class ina --retries 1 \
		-o "$tmp/new.txt" 2>/dev/null && return 1
	[ ! -e "$tmp/new.txt" ] || { echo "new.txt made by a failed run"; return 1; }
}
t "a failed run keeps -o's file and makes none" keeps_file

# job submit offers and takes only what inaggd places jobs with: -h listed brute,
# which the daemon then refused ("algorithm: unknown or not for jobs").
t "job submit -a brute refused before asking inaggd" fails \
	"-a: invalid value 'brute': need smc, top, max, level, all-red, all-blue or smc-naive$" \
	job submit -k 1 -a brute -S "$tmp/none.sock"
t "job submit -h does not list brute" bash -c \
	"'$INAGG' job submit -h | grep -A2 -- '--algo' | grep -q 'all-blue or smc-naive' &&
	 ! '$INAGG' job submit -h | grep -A2 -- '--algo' | grep -q brute"

# A daemon that accepts and never answers (stopped, stuck): the CLI waited in
# read() for good. A listener that never reads stands in for it.
# The second listener's backlog is full (listen(0), one connection waiting):
# there connect() itself waits.
python3 -c '
import socket, sys, time
s = socket.socket(socket.AF_UNIX)
s.bind(sys.argv[1])
s.listen(8)
f = socket.socket(socket.AF_UNIX)
f.bind(sys.argv[2])
f.listen(0)
c = socket.socket(socket.AF_UNIX)
c.connect(sys.argv[2])
open(sys.argv[3], "w").close()
time.sleep(120)
' "$tmp/silent.sock" "$tmp/full.sock" "$tmp/silent.ready" &
silent=$!
for _ in $(seq 100); do [ -e "$tmp/silent.ready" ] && break; sleep 0.05; done
export INAGG_CTL_TIMEOUT_MS=300
t "a daemon that never answers: an error after the bound, not a hang" fails \
	"inaggd at $tmp/silent.sock: no answer within 300 ms" job list -S "$tmp/silent.sock"
t "a daemon whose backlog is full: the same" fails \
	"inaggd at $tmp/full.sock: no answer within 300 ms" job list -S "$tmp/full.sock"
unset INAGG_CTL_TIMEOUT_MS
kill $silent 2>/dev/null
wait $silent 2>/dev/null

# Lists refuse an empty item: strtok() skipped it, so "-a smc," ran smc alone
# and "-k 1,,2" two budgets, whatever the typo meant.
t "-a with a trailing comma" fails "-a: invalid list 'smc,': an empty item$" \
	topo place -t "$fig1" -k 2 -a smc,
t "eval -k with an empty item" fails "-k: invalid list '1,,2': an empty item$" eval run fig2 -k 1,,2
t "-W with a trailing comma" fails "-W: invalid list 's3=1,': an empty item$" \
	job submit -k 1 -W s3=1, -S "$tmp/none.sock"

t "-W with a switch twice" fails "-W: switch 's3' given twice$" \
	job submit -k 1 -W s3=1,s4=2,s3=2 -S "$tmp/none.sock"

# Job id 0 is reserved: inaggd never gives it and libinagg.so refuses it; the
# worker and PS commands took it and ran.
t "worker -J 0 refused" fails "-J: invalid value '0': need an integer in 1\.\.4294967295$" \
	worker run -J 0 -i 1 -p 127.0.0.1 -e 4 --cc fixed --class ina --retries 1
t "ps -J 0 refused" fails "-J: invalid value '0': need an integer in 1\.\.4294967295$" \
	ps run -J 0 --nworkers 1 -e 4 -u

# A sender id twice in -M counted its workers twice; in --expect, its vector.
t "ps -M with an id twice" fails "-M: id 2 given twice$" \
	ps run -J 1 --nworkers 4 -e 4 -u -M 0-3,2
t "ps -M with an id twice, other nworkers" fails "-M: id 5 given twice$" \
	ps run -J 1 --nworkers 4 -e 4 -u -M 5:2,5:3
t "ps --expect with a seed twice" fails "--expect: id 1 given twice$" \
	ps run -J 1 --nworkers 2 -e 4 -u --expect 1,1
t "ps -M and --expect without repeats pass" fails 'none/sum.txt: No such file or directory$' \
	ps run -J 1 --nworkers 6 -e 4 -u -M 0-3,7:2 --expect 0-3,7 -o "$tmp/none/sum.txt"

# A vector file is decimal: strtoll's base 0 took "010" for 8 and "0x10" for 16.
printf '1 0x10\n' >"$tmp/hex.txt"
t "worker -f with a hex element refused" fails "hex.txt: element 2: invalid int32 '0x10'$" \
	worker run -J 1 -i 1 -p 127.0.0.1 -f "$tmp/hex.txt" --cc fixed --class ina --retries 1

# -j, -v and -h are global options only where they are options: main.c took
# them anywhere, so "-t -h" printed help, "-o -j" wrote JSON to stdout.
mkdir -p "$tmp/cwd/-h"
abs=$(realpath "$INAGG")
fig1abs=$(realpath "$fig1")
t "-t -h: a file named -h" fails "^inagg: -h: No such file or directory$" topo show -t -h
t "--topo -v: a file named -v" fails "^inagg: -v: No such file or directory$" topo show --topo -v
t "-f -j: a vector file named -j" fails "^inagg: -j: No such file or directory$" \
	worker run -J 1 -i 1 -p 127.0.0.1 -f -j --cc fixed --class ina --retries 1
t "-h after -- is an argument" fails "unexpected argument '-h'" topo show -t "$fig1" -- -h
t "-uo -h: the bundle's last option takes -h" bash -c \
	"cd '$tmp/cwd' && '$abs' ps run -J 1 --nworkers 1 -e 4 -uo -h 2>'$tmp/e' >'$tmp/o';
	 [ \$? -eq 1 ] && [ ! -s '$tmp/o' ] && grep -q '^inagg: -h: Is a directory$' '$tmp/e'"
t "-o -j writes the file -j, not JSON" bash -c \
	"cd '$tmp/cwd' && '$abs' topo dot -t '$fig1abs' -o -j >'$tmp/o' &&
	 [ ! -s '$tmp/o' ] && grep -q '^digraph' ./-j && ! grep -q 'dot' '$tmp/o'"
t "--out -v: a long option's value" bash -c \
	"cd '$tmp/cwd' && '$abs' topo dot -t '$fig1abs' --out -v >'$tmp/o' 2>&1 &&
	 [ ! -s '$tmp/o' ] && grep -q '^digraph' ./-v"
t "-j after an option's value still means JSON" bash -c \
	"'$INAGG' topo show -t '$fig1' -j | python3 -c 'import json, sys; json.load(sys.stdin)'"
t "-h after options still asks for help" bash -c \
	"'$INAGG' topo dot -t '$fig1' -o '$tmp/none/x' -h | grep -q '^Usage: inagg \\[-j\\] topo dot'"

# A folder given as the vector file said "read error".
t "worker -f a folder names the cause" fails "^inagg: $tmp: Is a directory$" \
	worker run -J 1 -i 1 -p 127.0.0.1 -f "$tmp" --cc fixed --class ina --retries 1

# The rest of the contract, on one mistake per kind.
t "unknown command" fails "unknown command 'frob'" frob
t "unknown subcommand" fails "topo: unknown command 'frob'" topo frob
t "missing required option" fails 'missing -k K' topo place -t "$fig1"
t "option without its value" fails "option '-t' needs an argument" topo place -t
t "unknown option" fails "unknown option '--bogus'" topo place -t "$fig1" -k 1 --bogus
t "unexpected argument" fails "unexpected argument 'extra'" topo place -t "$fig1" -k 1 extra
t "out-of-range option" fails '-d: invalid value .25.: need an integer in 0\.\.24' topo gen -d 25
t "rate not > 0" fails "--rate-mbit: invalid value '0': need a number > 0$" \
	net up -t "$tmp/none.json" --rate-mbit 0
t "real out of range" fails "--avail: invalid value '2': need a number in 0\.\.1$" topo gen --avail 2
t "bad enum value" fails "--links: invalid value 'x': need none, congested or all" \
	topo place -t "$fig1" -k 1 --links x
t "bad IPv4 address" fails "-p: invalid IPv4 address '10.0.0.300'" \
	worker run -J 1 -i 1 -p 10.0.0.300 -e 4
t "daemon not running" fails "cannot reach inaggd at $tmp/none.sock" job list -S "$tmp/none.sock"
t "missing topology" fails 'none.json: No such file or directory$' topo show -t "$tmp/none.json"

finish
