#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Issue 14's acceptance: three router VMs on Debian's 6.1 kernel, r0 above r1
# and r2, joined by virtio links (qemu socket backends), each running
# dropbear, inagg.ko and the datapath on its ports; the controller (inaggd)
# on this host reaches them only over ssh (docs/remote.md). The destination
# is a namespace in r0, one worker a namespace in r1, one in r2, each behind
# a virtio pair of its router. Checks: a job placed by SMC k=1 exact with
# measured messages per link equal to the model; an agent killed mid-job
# losing nothing; a router made unreachable refusing the next job with
# nothing left admitted on the others; every job ended released everywhere;
# clean kernel logs. KTAP on stdout.
#
# The kernel and its virtio modules are those of tests/kmod/vm.sh (fetched
# the same way if it has not run yet); dropbear comes from Debian's packages.
# Env: BUILD (default build), VM (the kernel's folder, default BUILD/vm), KO
# (default BUILD/kmod/inagg.ko), KEEP=1 keeps the scratch folder. Design and
# what it covers: docs/remote.md.
BUILD=${BUILD:-build}
VM=${VM:-$BUILD/vm}
KO=${KO:-$BUILD/kmod/inagg.ko}
here=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d /tmp/ia-routers-XXXXXX)
pids=()
cleanup() {
	[ -n "${daemon:-}" ] && kill "$daemon" 2>/dev/null && wait "$daemon" 2>/dev/null
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
	for p in "${pids[@]}"; do wait "$p" 2>/dev/null; done
	[ -n "${KEEP:-}" ] || rm -rf "$tmp"
}
trap cleanup EXIT
. "$here/tests/ktap.sh"

kver=$(cat "${KO%/*}/kver" 2>/dev/null)
kernel=$VM/vmlinuz-$kver
mods=$VM/modules-$kver
kmods="virtio_ring virtio virtio_pci_modern_dev virtio_pci_legacy_dev virtio_pci
       failover net_failover virtio_net"
dropbear_pkgs="dropbear-bin libtomcrypt1 libtommath1"
port=$((30000 + $$ % 20000))

# ---- the initramfs, one for the three ----
root=$tmp/root
mkdir -p "$root"/{bin,usr/sbin,dev,proc,sys,tmp,run,etc,var/lib,root/.ssh,modules,ia} "$tmp/deb"

copy() {	# FILE DEST, with its libraries
	local lib
	mkdir -p "$root$(dirname "$2")"
	cp -L "$1" "$root$2" || return 1
	for lib in $(LD_LIBRARY_PATH=$tmp/deb/x/usr/lib/x86_64-linux-gnu ldd "$1" 2>/dev/null |
		     grep -oE '/[^ ]+'); do
		local to=${lib#"$tmp/deb/x"}	# a library of the downloaded packages
		[ -f "$root$to" ] && continue
		mkdir -p "$root$(dirname "$to")"
		cp -L "$lib" "$root$to"
	done
}

# The kernel image of the module's headers and its virtio modules, as vm.sh fetches them.
fetch_kernel() {
	local pkg=linux-image-$kver deb m f
	[ -f "$kernel" ] && [ -f "$mods/.complete" ] && return 0
	rm -rf "$tmp/k" && mkdir -p "$tmp/k" "$mods" || return 1
	(cd "$tmp/k" && apt-get download "$pkg" >/dev/null 2>&1) || {
		apt-get update -qq >/dev/null 2>&1
		(cd "$tmp/k" && apt-get download "$pkg" >/dev/null 2>&1)
	} || { echo "apt-get download $pkg failed"; return 1; }
	deb=$(ls "$tmp/k/${pkg}"_*.deb | head -n 1)
	dpkg-deb -x "$deb" "$tmp/k/x" && cp "$tmp/k/x/boot/vmlinuz-$kver" "$kernel.tmp" || return 1
	for m in $kmods veth; do
		f=$(find "$tmp/k/x/lib/modules/$kver" -name "$m.ko*" | head -n 1)
		[ -n "$f" ] && cp "$f" "$mods/" || { echo "$pkg has no $m.ko"; return 1; }
	done
	mv "$kernel.tmp" "$kernel" && touch "$mods/.complete"
}

initramfs() {
	[ -f "$KO" ] && [ -n "$kver" ] || { echo "no $KO (make)"; return 1; }
	mkdir -p "$VM" && fetch_kernel || return 1
	(cd "$tmp/deb" && apt-get download $dropbear_pkgs >/dev/null 2>&1) || {
		apt-get update -qq >/dev/null 2>&1
		(cd "$tmp/deb" && apt-get download $dropbear_pkgs >/dev/null 2>&1)
	} || { echo "apt-get download $dropbear_pkgs failed"; return 1; }
	for d in "$tmp"/deb/*.deb; do dpkg-deb -x "$d" "$tmp/deb/x" || return 1; done
	cp /bin/busybox "$root/bin/busybox" && cp "$KO" "$root/inagg.ko" || return 1
	for m in $kmods; do
		cp "$mods/$m".ko* "$root/modules/" && echo "$m" >>"$root/modules/order" || return 1
	done
	copy "$(command -v ip)" /usr/sbin/ip && copy /bin/dash /bin/sh &&
		copy "$tmp/deb/x/usr/sbin/dropbear" /usr/sbin/dropbear || return 1
	for b in inagg inagg-agent; do copy "$BUILD/$b" "/ia/$b" || return 1; done
	ssh-keygen -q -t ed25519 -N '' -f "$tmp/key" || return 1
	cp "$tmp/key.pub" "$root/root/.ssh/authorized_keys"
	echo 'root:x:0:0:root:/root:/bin/sh' >"$root/etc/passwd"
	echo 'root:x:0:' >"$root/etc/group"
	cat >"$root/init" <<'EOF'
#!/bin/busybox sh
/bin/busybox --install -s /bin
export PATH=/usr/sbin:/bin:/ia
# iproute2's, not busybox's applet (which the shell would run first): it knows namespaces.
ip() { /usr/sbin/ip "$@"; }
mount -t proc proc /proc; mount -t sysfs sys /sys; mount -t devtmpfs dev /dev
mount -t tmpfs tmp /tmp; mount -t tmpfs run /run; mount -t bpf bpf /sys/fs/bpf
mkdir -p /dev/pts /etc/dropbear && mount -t devpts devpts /dev/pts
h=$(sed -n 's/.*inagg.host=\(r[0-9]\).*/\1/p' /proc/cmdline); n=${h#r}
hostname "$h"
for m in $(cat /modules/order); do insmod /modules/$m.ko*; done
insmod /inagg.ko
byname() { for d in /sys/class/net/*; do [ "$(cat $d/address)" = "$1" ] && basename $d; done; }
ren() { ip link set dev "$(byname "$1")" name "$2" && ip link set dev "$2" up; }
# A host of the tree: one NIC of a virtio pair moved into its namespace.
host() {	# NS MAC ADDR GW
	ip netns add "$1"
	ip link set dev "$(byname "$2")" netns "$1"
	ip -n "$1" link set dev "$(ip -n "$1" -o link | sed -n 's/^[0-9]*: \(eth[0-9]*\).*/\1/p')" name eth0
	ip -n "$1" addr add "$3/30" dev eth0
	ip -n "$1" link set eth0 up; ip -n "$1" link set lo up
	ip -n "$1" route add default via "$4"
}
ren 52:54:00:99:0$n:00 eth0
ip addr add 10.0.2.15/24 dev eth0; ip link set lo up
case $h in
r0) ren 52:54:00:99:00:01 up; ren 52:54:00:99:00:03 d0; ren 52:54:00:99:00:04 d1
    host dest 52:54:00:99:00:02 10.64.0.1 10.64.0.2 ;;
r1) ren 52:54:00:99:01:01 up; ren 52:54:00:99:01:02 h0
    host w0 52:54:00:99:01:03 10.128.0.2 10.128.0.1 ;;
r2) ren 52:54:00:99:02:01 up; ren 52:54:00:99:02:02 h0
    host w0 52:54:00:99:02:03 10.128.0.6 10.128.0.5 ;;
esac
for p in up d0 d1 h0; do
	[ -e /sys/class/net/$p ] && /ia/inagg dev attach $p --switch "$h" >/dev/null
done
dropbear -R -E -s -p 22 2>/dev/ttyS0
echo "@@ ready $h" >/dev/ttyS0
while :; do sleep 3600; done
EOF
	chmod +x "$root/init"
	(cd "$root" && find . | cpio -o -H newc --quiet | gzip -1) >"$tmp/initrd.gz"
}

# ---- the three VMs ----
nic() {	# NETDEV-ARGS MAC: one virtio-net NIC on that backend
	local id
	id=$(sed -n 's/^[a-z]*,id=\([^,]*\).*/\1/p' <<<"$1")
	printf -- '-netdev\n%s\n-device\nvirtio-net-pci,netdev=%s,mac=%s,romfile=\n' "$1" "$id" "$2"
}

boot() {	# VM EXTRA-NIC-ARGS...
	local r=$1 args=()
	shift
	mapfile -t args < <(nic "user,id=m,net=10.0.2.0/24,hostfwd=tcp:127.0.0.1:$((port + r))-:22" \
			       "52:54:00:99:0$r:00"; for a in "$@"; do nic ${a%% *} ${a#* }; done)
	qemu-system-x86_64 -accel tcg -m 512 -smp 1 -nographic -vga none -monitor none \
		-no-reboot -kernel "$kernel" -initrd "$tmp/initrd.gz" \
		-append "console=ttyS0 panic=-1 quiet rdinit=/init inagg.host=r$r" \
		-serial "file:$tmp/r$r.console" "${args[@]}" </dev/null >"$tmp/r$r.qemu" 2>&1 &
	pids+=($!)
}

vssh() {	# VM COMMAND
	local r=$1
	shift
	ssh -T -o BatchMode=yes -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null \
		-o LogLevel=ERROR -o ConnectTimeout=10 -i "$tmp/key" -p $((port + r)) \
		root@127.0.0.1 "$@"
}

vms_up() {
	boot 0 "hubport,id=a,hubid=0 52:54:00:99:00:01" "hubport,id=b,hubid=0 52:54:00:99:00:02" \
	       "socket,id=c,listen=127.0.0.1:$((port + 10)) 52:54:00:99:00:03" \
	       "socket,id=d,listen=127.0.0.1:$((port + 11)) 52:54:00:99:00:04"
	sleep 2
	boot 1 "socket,id=a,connect=127.0.0.1:$((port + 10)) 52:54:00:99:01:01" \
	       "hubport,id=b,hubid=0 52:54:00:99:01:02" "hubport,id=c,hubid=0 52:54:00:99:01:03"
	boot 2 "socket,id=a,connect=127.0.0.1:$((port + 11)) 52:54:00:99:02:01" \
	       "hubport,id=b,hubid=0 52:54:00:99:02:02" "hubport,id=c,hubid=0 52:54:00:99:02:03"
	local r i
	for r in 0 1 2; do
		for i in $(seq 1 180); do
			grep -q "@@ ready r$r" "$tmp/r$r.console" 2>/dev/null && break
			sleep 1
		done
		grep -q "@@ ready r$r" "$tmp/r$r.console" || {
			echo "r$r did not boot"; tail -20 "$tmp/r$r.console" "$tmp/r$r.qemu"; return 1; }
	done
	for r in 0 1 2; do
		[ "$(vssh $r hostname)" = "r$r" ] || {
			echo "no ssh to r$r"; tail -20 "$tmp/r$r.console"; return 1; }
	done
}

# ---- the controller ----
topology() {
	local s="" n
	for n in 0 1 2; do
		s+="$( [ $n = 0 ] || echo ,)
{\"name\": \"r$n\", \"parent\": $([ $n = 0 ] && echo null || echo '"r0"'),
 \"load\": $([ $n = 0 ] && echo 0 || echo 1),
 \"site\": {\"host\": \"root@127.0.0.1\", \"agent\": \"/ia/inagg-agent\", \"layout\": true,
  \"ssh\": [\"-p\", \"$((port + n))\", \"-i\", \"$tmp/key\", \"-o\", \"StrictHostKeyChecking=no\",
          \"-o\", \"UserKnownHostsFile=/dev/null\", \"-o\", \"LogLevel=ERROR\"],
  \"peers\": $([ $n = 0 ] && echo '{"up": "52:54:00:99:00:02"}' ||
	       echo "{\"hosts\": [\"52:54:00:99:0$n:03\"]}"),
  \"timeout_ms\": 30000, \"retries\": 1}}"
	done
	echo "{\"switches\": [$s]}" >"$tmp/topo.json"
}

controller_up() {
	topology
	"$BUILD/inaggd" -t "$tmp/topo.json" -n q -s "$tmp/sock" -S "$tmp/state.json" \
		2>"$tmp/inaggd.log" &
	daemon=$!
	for i in $(seq 1 600); do
		[ -S "$tmp/sock" ] && "$BUILD/inagg" job list -S "$tmp/sock" >/dev/null 2>&1 && return 0
		kill -0 "$daemon" 2>/dev/null || break
		sleep 0.5
	done
	cat "$tmp/inaggd.log"
	return 1
}

CHUNKS=100
ELEMS=$((CHUNKS * 256))

# A job end to end: submit, the destination and the workers in the VMs, results and stats.
run_job() {	# K [DURING]
	local k=$1 during=${2:-} job id ids dest down ww
	job=$("$BUILD/inagg" -j job submit -k "$k" -S "$tmp/sock") || { echo "$job"; return 1; }
	echo "$job" >"$tmp/job.json"
	id=$(jq -r .job <<<"$job")
	dest=$(jq -r .destination.address <<<"$job")
	down=$(jq -r .destination.down <<<"$job")
	ww=$(jq -r .worker_window <<<"$job")
	ids=$(jq -r '[.workers[].id] | join(",")' <<<"$job")
	echo "$id" >"$tmp/id"
	vssh 0 "ip netns exec dest /ia/inagg -j ps --job $id --nworkers 2 --elems $ELEMS --addr $dest \
		--down $down --linger 1000 --ready /tmp/ready --expect $ids" >"$tmp/ps.out" 2>"$tmp/ps.err" &
	local ps=$!
	for i in $(seq 1 120); do vssh 0 "test -e /tmp/ready" && break; sleep 1; done
	local w=()
	local g
	for g in 0 1; do
		local wid waddr
		wid=$(jq -r ".workers[$g].id" <<<"$job")
		waddr=$(jq -r ".workers[$g].address" <<<"$job")
		vssh $((g + 1)) "ip netns exec w0 /ia/inagg -j worker --job $id --id $wid --ps $dest \
			--addr $waddr --elems $ELEMS --window $ww --timeout 3000 --nworkers 2" \
			>"$tmp/w$g.out" 2>"$tmp/w$g.err" &
		w+=($!)
	done
	[ -n "$during" ] && $during
	local rc=0
	for p in "${w[@]}"; do wait "$p" || rc=1; done
	wait "$ps" || rc=1
	vssh 0 "rm -f /tmp/ready"
	[ $rc = 0 ] || { tail -3 "$tmp"/ps.* "$tmp"/w*.out "$tmp"/w*.err; return 1; }
	jq -e '.exact and .complete' "$tmp/ps.out" >/dev/null || { cat "$tmp/ps.out"; return 1; }
	local sum
	sum=$(jq -r .checksum "$tmp/ps.out")
	for g in 0 1; do
		[ "$(jq -r .checksum "$tmp/w$g.out")" = "$sum" ] || { cat "$tmp/w$g.out"; return 1; }
	done
	# Measured messages per chunk on each uplink = the model.
	"$BUILD/inagg" -j stats -J "$id" --chunks "$CHUNKS" -S "$tmp/sock" >"$tmp/stats.json" &&
		jq -e '[.links[] | .messages_per_chunk == .model_messages] | all' "$tmp/stats.json" \
			>/dev/null || { cat "$tmp/stats.json"; return 1; }
}

job_end() {
	"$BUILD/inagg" job end -J "$(cat "$tmp/id")" -S "$tmp/sock" >/dev/null
}

smc_job_exact_and_as_modelled() {
	run_job 1 && jq -e '.congestion == 1 and (.blue | length) == 1' "$tmp/job.json" >/dev/null &&
		"$BUILD/inagg" -j job show -J "$(cat "$tmp/id")" -S "$tmp/sock" >"$tmp/show.json" &&
		jq -e '[.routers[] | .health == "ok" and .reboots == 0] | all and length == 3' \
			"$tmp/show.json" >/dev/null && job_end
}

kill_blue_agent() {
	local b
	sleep 2
	b=$(jq -r '.blue[0] // empty' "$tmp/job.json")
	[ -n "$b" ] && vssh "${b#r}" 'kill -9 $(pidof inagg-agent)'
}

agent_killed_mid_job_loses_nothing() {
	run_job 1 kill_blue_agent && jq -e '(.blue | length) == 1' "$tmp/job.json" >/dev/null &&
		"$BUILD/inagg" -j job show -J "$(cat "$tmp/id")" -S "$tmp/sock" >"$tmp/show.json" &&
		jq -e '.failed == null and ([.routers[] | .reboots == 0] | all)' "$tmp/show.json" \
			>/dev/null && job_end
}

held_nowhere() {	# ID
	local n
	for n in 0 1 2; do
		vssh $n "/ia/inagg -j ledger show" | jq -e --argjson id "$1" \
			'[.jobs[]? | .id == $id] | any | not' >/dev/null || {
			echo "r$n still holds job $1"; return 1; }
	done
}

unreachable_router_rolls_back() {
	local out
	# r2's sshd and every session through it gone: the agent with them.
	vssh 2 'kill $(pidof dropbear)' 2>/dev/null
	out=$("$BUILD/inagg" -j job submit -k 1 -S "$tmp/sock" 2>&1) && {
		echo "accepted: $out"; return 1; }
	grep -q 'router r2 (root@127.0.0.1): unreachable' <<<"$out" || { echo "$out"; return 1; }
	local n
	for n in 0 1; do
		vssh $n "/ia/inagg -j ledger show" | jq -e '[.jobs[]?] | length == 0' >/dev/null || {
			echo "r$n holds a job"; return 1; }
	done
}

ended_jobs_released_everywhere() {
	held_nowhere 1 && held_nowhere 2
}

kernel_logs_clean() {
	local n
	for n in 0 1; do vssh $n 'poweroff -f' >/dev/null 2>&1; done
	sleep 3
	! grep -E 'BUG|WARNING:|Oops|Call Trace' "$tmp"/r*.console
}

# Each test's output kept apart (KEEP=1 keeps the folder).
tt() { t "$@"; cp "$tmp/log" "$tmp/log.$n"; }
tt "routers: initramfs with dropbear, inagg.ko, inagg-agent" initramfs
tt "routers: three 6.1 VMs boot, ssh reaches each" vms_up
tt "routers: inaggd on the host starts the three agents over ssh" controller_up
tt "routers: SMC k=1 job exact, messages per link = model, routers ok" smc_job_exact_and_as_modelled
tt "routers: the blue router's agent killed mid-job loses nothing" agent_killed_mid_job_loses_nothing
tt "routers: every ended job released on every router" ended_jobs_released_everywhere
tt "routers: r2 unreachable: the job refused, nothing held on r0 and r1" unreachable_router_rolls_back
tt "routers: kernel logs clean" kernel_logs_clean
finish
