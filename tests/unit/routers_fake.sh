#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# inaggd against fake routers (docs/remote.md): an ssh ($INAGG_SSH) that runs an
# agent in sh here, which answers every request ok and logs it, never answers an
# admission while HOST.silent exists, and says the boot id in HOST.boot.
#  - Serving while a call waits on a silent router: a submission through r1
#    waits on r1's admission; meanwhile another client's job show and job stats
#    of a job elsewhere, and a submission whose switches (r2, r0) that call does
#    not use, are answered and done before it, while a submission that needs r1
#    waits its turn. The waiting submission stays all or nothing: refused on r1,
#    it leaves nothing admitted or pushed anywhere.
#  - A router that reboots under jobs: a job it only forwards (red there) is
#    pushed to it again once it is connected and goes on ("recovered"); a job
#    with a tail (state) there is failed with the reason.
# KTAP.
BUILD=${BUILD:-build}
tmp=$(mktemp -d /tmp/ia-rtf-XXXXXX)
daemon=
pids=()
cleanup() {
	[ -n "$daemon" ] && kill "$daemon" 2>/dev/null && wait "$daemon" 2>/dev/null
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
	[ -n "${KEEP:-}" ] || rm -rf "$tmp"
}
trap "cleanup; true" EXIT
. "$(dirname "$0")/../ktap.sh"
. "$(dirname "$0")/../daemon.sh"
run_dir_ok || skip_all "inaggd keeps its lock file in /run/inagg: root's"

cat >"$tmp/ssh" <<'EOF'
#!/bin/sh
while [ $# -gt 0 ]; do case "$1" in -T) shift;; -o|-p|-i) shift 2;; *) break;; esac; done
exec "$(dirname "$0")/agent.sh" "$1"
EOF
cat >"$tmp/agent.sh" <<'EOF'
#!/bin/sh
host=$1; dir=$(dirname "$0") boot=b
[ -e "$dir/$host.boot" ] && boot=$(cat "$dir/$host.boot")
echo $$ >"$dir/$host.pid"
while IFS= read -r l; do
	seq=$(printf '%s' "$l" | sed -n 's/.*"seq":\([0-9]*\).*/\1/p')
	op=$(printf '%s' "$l" | sed -n 's/.*"op":"\([a-z]*\)".*/\1/p')
	job=$(printf '%s' "$l" | sed -n 's/.*"job":\([0-9]*\).*/\1/p')
	r='"ok":true'
	case $op in
	hello|state) r="$r,\"proto\":1,\"switch\":\"$host\",\"boot_id\":\"$boot\",\"epoch\":1,\"jobs\":[],\"lost\":[]";;
	ports)	n=$(printf '%s' "$l" | grep -o '"name"' | wc -l) p=
		for i in $(seq 1 "$n"); do
			p="$p${p:+,}{\"name\":\"lo\",\"ifindex\":1,\"mac\":\"02:00:00:00:0$i:0$i\"}"
		done
		r="$r,\"ports\":[$p]";;
	room)	r="$r,\"room\":true";;
	admit)	while [ -e "$dir/$host.silent" ]; do sleep 0.1; done;;
	admitted) r="$r,\"admitted\":true";;
	pushed)	r="$r,\"pushed\":true";;
	esac
	echo "$op $job" >>"$dir/$host.ops"
	echo "{$r,\"seq\":$seq}"
done
EOF
chmod +x "$tmp/ssh" "$tmp/agent.sh"
site() {	# HOST [TIMEOUT_MS]
	echo "{\"host\": \"$1\", \"agent\": \"inagg-agent\", \"timeout_ms\": ${2:-5000}, \"retries\": 0,
	       \"holdoff_ms\": 200, \"ports\": {\"up\": \"lo\", \"down\": [\"lo\", \"lo\"], \"hosts\": [\"lo\"]},
	       \"peers\": {\"up\": \"02:00:00:00:00:09\", \"hosts\": [\"02:00:00:00:00:01\"]}}"
}
cat >"$tmp/topo.json" <<EOF
{"switches": [
 {"name": "r0", "parent": null, "load": 0, "capacity": 4, "site": $(site r0)},
 {"name": "r1", "parent": "r0", "load": 1, "capacity": 4, "site": $(site r1 4000)},
 {"name": "r2", "parent": "r0", "load": 1, "capacity": 4, "site": $(site r2)}]}
EOF
export INAGG_SSH=$tmp/ssh
sock=$tmp/sock

starts() {
	"$BUILD/inaggd" -t "$tmp/topo.json" -n m$$ -s "$sock" -S "$tmp/state.json" -m 0 \
		2>"$tmp/inaggd.log" &
	daemon=$!
	wait_daemon "$sock" "$daemon" "$tmp/inaggd.log" 10 &&
		"$BUILD/inagg" job submit -k 1 -J 1 -W r2=1 -S "$sock" >/dev/null
}
t "inaggd starts on three fake routers, job 1 on r2" starts

# Job 5 through r1 (all-blue: admitted on r0, then on r1, which never answers).
waiting_submission() {
	touch "$tmp/r1.silent"
	"$BUILD/inagg" job submit -k 2 -a all-blue -J 5 -W r1=1 -S "$sock" >"$tmp/j5.out" 2>&1 &
	j5=$!
	pids+=("$j5")
	# r0 admits it first; then r1's admission is what it waits for (logged once answered).
	wait_line "$tmp/r0.ops" '^admit 5' 5 && sleep 0.2 && kill -0 "$j5" &&
		! grep -q '^admit 5' "$tmp/r1.ops"
}
t "job 5 waits on r1's admission" waiting_submission

# Started while job 5 waits; each must be done while job 5 still waits.
served_meanwhile() {
	local rc=0
	"$BUILD/inagg" -j job show -J 1 -S "$sock" >"$tmp/show.out" || rc=1
	"$BUILD/inagg" -j stats show -J 1 -S "$sock" >"$tmp/stats.out" || rc=1
	"$BUILD/inagg" -j job submit -k 1 -J 7 -W r2=1 -S "$sock" >"$tmp/j7.out" || rc=1
	kill -0 "$j5" 2>/dev/null || { echo "job 5's submission was over before"; rc=1; }
	jq -e '.job == 1' "$tmp/show.out" >/dev/null || { cat "$tmp/show.out"; rc=1; }
	jq -e '.job == 1 and (.links | length) == 2' "$tmp/stats.out" >/dev/null ||
		{ cat "$tmp/stats.out"; rc=1; }
	jq -e '.job == 7' "$tmp/j7.out" >/dev/null || { cat "$tmp/j7.out"; rc=1; }
	# r1's call is busy in show (job 1 does not use r1: not listed).
	echo "# show: $(jq -c '[.routers[] | {switch, health}]' "$tmp/show.out")"
	return $rc
}
t "job show, stats and a submission on r2 and r0 served while job 5 waits on r1" \
	served_meanwhile

# A submission through r1 (busy) waits its turn: not answered while job 5 waits.
held_its_turn() {
	"$BUILD/inagg" -j job submit -k 1 -J 8 -W r1=1 -S "$sock" >"$tmp/j8.out" 2>&1 &
	j8=$!
	pids+=("$j8")
	sleep 0.5
	kill -0 "$j8" && kill -0 "$j5" && [ ! -s "$tmp/j8.out" ] &&
		! cat "$tmp"/r?.ops | grep -q '^admit 8\|^push 8'
}
t "a submission through r1 is held while job 5 waits on r1" held_its_turn

# r1 times out: job 5 is refused there, nothing of it left; then job 8 is served.
all_or_nothing() {
	wait "$j5"
	cat "$tmp/j5.out"
	rm -f "$tmp/r1.silent"
	wait "$j8"
	cat "$tmp/j8.out"
	# Every admission of job 5 released, every push undone.
	local a r p u
	a=$(grep -c '^admit 5' "$tmp/r0.ops") r=$(grep -c '^release 5' "$tmp/r0.ops")
	p=$(cat "$tmp"/r?.ops | grep -c '^push 5') u=$(cat "$tmp"/r?.ops | grep -c '^unpush 5')
	echo "# job 5 on r0: $a admissions, $r releases; pushes $p, unpushes $u"
	[ "$a" -ge 1 ] && [ "$r" -ge "$a" ] && { [ "$p" = 0 ] || [ "$u" -ge "$p" ]; } || return 1
	"$BUILD/inagg" -j job list -S "$sock" >"$tmp/list.out"
	jq -e '[.jobs[].job] | index(5) == null' "$tmp/list.out" >/dev/null &&
		jq -e '[.jobs[].job] | (index(1) != null and index(7) != null)' "$tmp/list.out" \
		>/dev/null || { cat "$tmp/list.out"; return 1; }
}
t "job 5 refused on r1 leaves nothing behind; jobs 1 and 7 stand" all_or_nothing

# Job 9 passes r2 and r0 red (no tails); jobs 1 and 7 have tails on r2.
reboot_red_job_recovers() {
	"$BUILD/inagg" job submit -k 0 --no-tail -J 9 -W r2=1 -S "$sock" >/dev/null || return 1
	[ "$(grep -c '^push 9' "$tmp/r2.ops")" = 1 ] || return 1
	echo b2 >"$tmp/r2.boot"
	kill "$(cat "$tmp/r2.pid")"
	# The call that finds r2's session gone marks it down; its probe finds the new boot.
	"$BUILD/inagg" -j job show -J 9 -S "$sock" >/dev/null
	wait_line "$tmp/inaggd.log" 'job 9 recovered' 10 || return 1
	"$BUILD/inagg" -j job show -J 9 -S "$sock" >"$tmp/show9.out"
	jq -e '(.recovered | test("router r2 .* rebooted")) and .failed == null' \
		"$tmp/show9.out" >/dev/null || { cat "$tmp/show9.out"; return 1; }
	[ "$(grep -c '^push 9' "$tmp/r2.ops")" = 2 ] || { cat "$tmp/r2.ops"; return 1; }
}
t "r2 rebooted: job 9, red there, pushed again and recovered" reboot_red_job_recovers

reboot_tail_job_fails() {
	"$BUILD/inagg" -j job show -J 1 -S "$sock" >"$tmp/show1.out"
	jq -e '(.failed | test("router r2 .* rebooted during the job")) and .recovered == null' \
		"$tmp/show1.out" >/dev/null || { cat "$tmp/show1.out"; return 1; }
	"$BUILD/inagg" job end -J 1 -S "$sock" && "$BUILD/inagg" job end -J 9 -S "$sock"
}
t "r2 rebooted: job 1, with a tail there, failed with the reason; both end" \
	reboot_tail_job_fails

finish
