#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The main job: the paper's Fig. 1 instance (7-switch complete binary tree,
# leaf loads 2,6,5,5, all rates 1, k=2) placed with every algorithm beside the
# congestion the paper reports, the SMC placement drawn, then each of SMC,
# Top, Max and Level run live on real packets and measured.
# Usage: scripts/demo.sh BUILD_DIR
set -e
build=${1:-build}
inagg=$build/inagg
out=$build/demo
mkdir -p "$out"
# The topology is docs/fig1.json.
topo=$(realpath --relative-to=. "$(dirname "$0")/../docs/fig1.json")

# What Fig. 1 and Sec. III of the paper report (all-red/all-blue/brute follow
# from the model: 18 messages reach d unaggregated, 1 when all aggregate, and
# brute force must match SMC's optimum).
declare -A paper=([top]=8 [max]=9 [level]=6 [smc]=5 [all-red]=18 [all-blue]=1 [brute]=5)
k=2
echo "Fig. 1 instance ($topo), k=$k"
printf '%-10s %10s %6s  %s\n' algorithm congestion paper "blue switches"
bad=0
for a in top max level smc smc-naive all-red all-blue brute; do
	res=$("$inagg" topo place -t "$topo" -k $k -a $a)
	cong=$(awk '$1 == "congestion" { print $2 }' <<<"$res")
	blue=$(awk '$1 == "blue" { $1 = ""; $2 = ""; print }' <<<"$res")
	want=${paper[$a]:-${paper[smc]}}
	mark=
	[ "$cong" = "$want" ] || { mark="  <-- differs"; bad=1; }
	printf '%-10s %10s %6s %s%s\n' "$a" "$cong" "$want" "$blue" "$mark"
done

"$inagg" topo dot -t "$topo" -a smc -k $k -o "$out/fig1-smc.dot"
echo "DOT of the SMC placement: $out/fig1-smc.dot"
if command -v dot >/dev/null; then
	dot -Tpng "$out/fig1-smc.dot" -o "$out/fig1-smc.png"
	echo "PNG: $out/fig1-smc.png"
else
	echo "graphviz 'dot' not installed: no PNG"
fi
[ $bad -eq 0 ] || { echo "demo: congestion differs from the paper" >&2; exit 1; }

# The same comparison on real packets: the tree in network namespaces with
# the XDP datapath on every switch port, inaggd placing and configuring each
# job, 18 workers and the destination running an allreduce.
if [ "$(id -u)" != 0 ]; then
	echo "not root: skipping the live run (it builds network namespaces)"
	exit 0
fi
tag=demo
sock=$out/inaggd.sock
chunks=${DEMO_CHUNKS:-1000}
n=$((chunks * 256))
export INAGG_LEDGER_DIR=$out/ledger
mkdir -p "$INAGG_LEDGER_DIR"
dpid=
cleanup() {
	[ -n "$dpid" ] && kill "$dpid" 2>/dev/null && wait "$dpid" 2>/dev/null
	"$inagg" net down -n $tag -t "$topo" >/dev/null 2>&1
}
trap cleanup EXIT
trap 'exit 130' INT TERM
cleanup	# what an interrupted run left
rm -f "$out/inaggd-state.json"
"$inagg" net up -t "$topo" -n $tag --attach
"$build/inaggd" -t "$topo" -n $tag -s "$sock" -S "$out/inaggd-state.json" 2>"$out/inaggd.log" &
dpid=$!
for _ in $(seq 100); do
	"$inagg" job list -S "$sock" >/dev/null 2>&1 && break
	sleep 0.1
done

echo
echo "Live allreduce of $chunks chunks of 256 int32 per worker (18 workers), k=$k"
printf '%-10s %8s %9s %7s %9s\n' algorithm model measured exact seconds
for a in smc top max level; do
	show=$("$inagg" job submit -k $k -a $a -S "$sock")
	id=$(awk '/^job /{ sub(":", "", $2); print $2; exit }' <<<"$show")
	ww=$(sed -n 's/.*(workers \([0-9]*\) in flight).*/\1/p' <<<"$show")
	read -r daddr dns down < <(awk '/destination/{ gsub(/[(),]/, ""); print $2, $3, $7 }' <<<"$show")
	mapfile -t workers < <(awk '$1 == "worker" { print $2, $3, $4 }' <<<"$show")
	seeds=$(printf '%s\n' "${workers[@]}" | awk '{ print $1 }' | paste -sd,)
	rm -f "$out/ps.ready"
	ip netns exec "$dns" "$inagg" -j ps run -J "$id" --nworkers ${#workers[@]} -e $n -D "$down" \
		--linger 300 --ready "$out/ps.ready" --expect "$seeds" >"$out/ps-$a.json" 2>/dev/null &
	ppid=$!
	for _ in $(seq 100); do [ -e "$out/ps.ready" ] && break; sleep 0.05; done
	wpids=()
	for w in "${workers[@]}"; do
		read -r wid waddr wns <<<"$w"
		ip netns exec "$wns" "$inagg" -j worker run -J "$id" -i "$wid" -p "$daddr" -A "$waddr" \
			-e $n -w "$ww" >"$out/worker-$a-$wid.json" 2>&1 &
		wpids+=($!)
	done
	ok=yes
	for p in "${wpids[@]}"; do wait "$p" || ok=no; done
	wait $ppid || ok=no
	sum=$(grep -o '"checksum": *"[0-9a-f]*"' "$out/ps-$a.json")
	grep -q '"exact": *true' "$out/ps-$a.json" || ok=no
	for w in "${workers[@]}"; do
		read -r wid _ <<<"$w"
		[ -n "$sum" ] && grep -q "$sum" "$out/worker-$a-$wid.json" || ok=no
	done
	read -r measured model < <("$inagg" stats show -J "$id" --chunks $chunks -S "$sock" |
		sed -n 's/.*measured congestion \([0-9.]*\) (model \([0-9.]*\)).*/\1 \2/p') || true
	secs=$(sed -n 's/.*"elapsed": *\([0-9.]*\).*/\1/p' "$out/ps-$a.json")
	printf '%-10s %8s %9s %7s %9.3f\n' $a "$model" "$measured" $ok "${secs:-0}"
	"$inagg" job end -J "$id" -S "$sock" >/dev/null
	[ $ok = yes ] && [ "$model" = "$measured" ] || bad=1
done
[ $bad -eq 0 ] || { echo "demo: a live run was not exact or not as modelled" >&2; exit 1; }
