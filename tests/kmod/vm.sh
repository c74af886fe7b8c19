#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The Debian 6.1 test layer: boots, under qemu-system-x86_64 -accel tcg,
# Debian's kernel matching the headers inagg.ko was built against, with the
# module loaded, and runs inside it the host-built test programs:
#   tests/kmod/*   the module (netlink ABI, ledger, load/unload)
#   tests/bpf/*    the XDP datapath: the BPF_PROG_TEST_RUN table and the live
#                  veth test, on 6.1's verifier and drivers
#   tests/vm/*     the whole system over virtio-net (virtio_job.c): inagg
#                  attach native on virtio_net, inaggd, jobs blue and red
#                  exact at every worker, measured messages = the model,
#                  the kernel ledger
# and relays the guest's KTAP result lines on stdout, renumbered as
# "ok N layer/program: test". Design and timings: docs/vm-tests.md.
#
# Virtio links. tests/vm/virtio_job --links says how many links its tree
# has; the guest gets one pair of virtio-net-pci NICs per link (MACs
# 52:54:00:1a:LL:01 and :02, LL the link in hex), the two NICs of a pair
# joined back to back by qemu, so a frame sent on one is received on the
# other through both virtio_net drivers. Backends (VM_NET):
#   tap  (default where /dev/net/tun works) each NIC on a multiqueue tap with
#        queues=2 = vCPUs, the two taps of a link in one bridge; qemu runs in
#        an unnamed network namespace of its own (unshare --net), so nothing
#        of this is visible on the host. Queue pairs = vCPUs: XDP_TX and
#        redirect get a queue per CPU, as on a well-configured router VM.
#   hub  a qemu hub with two ports per link (no host resources); one queue
#        pair per NIC, so virtio_net's XDP transmit runs in its locked mode
#        (the guest's dmesg says "XDP request 3 queues but max is 1").
#
# Env: BUILD (default build), VM_TIMEOUT (seconds, default 900),
#      VM_TESTS (space-separated program names to run, default all),
#      VM_NET (tap or hub, default tap if possible).
set -u
BUILD=${BUILD:-build}
timeout_s=${VM_TIMEOUT:-900}
vm=$BUILD/vm
ko=$BUILD/kmod/inagg.ko
smp=2
# Guest modules the tests need, in load order (Debian builds them as modules).
kmods="virtio_ring virtio virtio_pci_modern_dev virtio_pci_legacy_dev virtio_pci
       failover net_failover virtio_net veth"
n=0

result() {	# result ok|"not ok" description
	n=$((n + 1))
	echo "$1 $n $2"
}

finish() {
	echo "1..$n"
	exit "${1:-0}"
}

echo "TAP version 13"
if [ ! -f "$ko" ] || [ ! -f "$BUILD/kmod/kver" ]; then
	result "not ok" "vm: $ko not built (make modules)"
	finish 1
fi
kver=$(cat "$BUILD/kmod/kver")
mkdir -p "$vm"
start=$(date +%s)

# The kernel image of the same version as the headers and the modules above,
# downloaded once.
kernel=$vm/vmlinuz-$kver
mods=$vm/modules-$kver
if [ ! -f "$kernel" ] || [ ! -f "$mods/.complete" ]; then
	pkg=linux-image-$kver
	rm -rf "$vm/deb" "$mods" && mkdir -p "$vm/deb" "$mods"
	if ! (cd "$vm/deb" && apt-get download "$pkg" >/dev/null 2>&1); then
		apt-get update -qq >/dev/null 2>&1
		(cd "$vm/deb" && apt-get download "$pkg" >/dev/null 2>&1)
	fi
	deb=$(ls "$vm/deb/${pkg}"_*.deb 2>/dev/null | head -n 1)
	ok=0
	if [ -n "$deb" ] && dpkg-deb -x "$deb" "$vm/deb/x" &&
	   cp "$vm/deb/x/boot/vmlinuz-$kver" "$kernel.tmp"; then
		ok=1
		for m in $kmods; do
			f=$(find "$vm/deb/x/lib/modules/$kver" -name "$m.ko*" | head -n 1)
			[ -n "$f" ] && cp "$f" "$mods/" || { ok=0; echo "# $pkg has no $m.ko"; }
		done
	fi
	if [ "$ok" = 0 ]; then
		result "not ok" "vm: fetch $pkg"
		finish 1
	fi
	mv "$kernel.tmp" "$kernel"
	touch "$mods/.complete"
	rm -rf "$vm/deb"
fi

# The initramfs: busybox, iproute2's ip, the modules, inagg and inaggd, the
# test programs and every shared library they use. /ia mirrors BUILD, so a
# program finds its siblings as it does on the host (BUILD/tests/LAYER/prog).
root=$vm/root
rm -rf "$root"
mkdir -p "$root"/{bin,usr/sbin,dev,proc,sys,tmp,run,modules,ia/tests}
cp /bin/busybox "$root/bin/busybox"
cp "$ko" "$root/inagg.ko"
for m in $kmods; do
	cp "$mods/$m".ko* "$root/modules/"
	echo "$m" >>"$root/modules/order"
done

# copy FILE DEST: FILE into the initramfs at DEST, with its libraries.
copy() {
	local lib
	mkdir -p "$root$(dirname "$2")"
	cp -L "$1" "$root$2" || return 1
	for lib in $(ldd "$1" 2>/dev/null | grep -oE '/[^ ]+'); do
		[ -f "$root$lib" ] && continue
		mkdir -p "$root$(dirname "$lib")"
		cp -L "$lib" "$root$lib"
	done
}

# dash as /bin/sh: busybox's shell runs its own applets before PATH, and its
# "ip" knows no namespaces (busybox --install leaves existing files alone).
missing=
copy "$(command -v ip)" /usr/sbin/ip || missing="$missing ip"
copy /bin/dash /bin/sh || missing="$missing dash"
for b in inagg inaggd inagg-agent; do
	copy "$BUILD/$b" "/ia/$b" || missing="$missing $b"
done
progs=()
for layer in kmod bpf vm; do
	for t in "$BUILD/tests/$layer"/*; do
		[ -f "$t" ] && [ -x "$t" ] || continue
		name=$(basename "$t")
		if [ -n "${VM_TESTS:-}" ] && [[ " $VM_TESTS " != *" $name "* ]]; then
			continue
		fi
		copy "$t" "/ia/tests/$layer/$name" || missing="$missing $layer/$name"
		progs+=("$layer/$name")
		echo "$layer/$name" >>"$root/ia/tests/order"
	done
done
# xdp_fuzz's mutant datapath (tests/model/model.mk), found beside its binary as on the host.
if [ -f "$BUILD/bpf/mutant/inagg_tail.bpf.o" ]; then
	mkdir -p "$root/ia/bpf/mutant"
	cp "$BUILD/bpf/mutant/inagg_tail.bpf.o" "$root/ia/bpf/mutant/"
fi
if [ -n "$missing" ] || [ ${#progs[@]} -eq 0 ]; then
	result "not ok" "vm: initramfs:${missing:- no test programs in $BUILD/tests}"
	finish 1
fi

cat >"$root/init" <<'EOF'
#!/bin/busybox sh
/bin/busybox --install -s /bin
export PATH=/usr/sbin:/bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mount -t tmpfs tmp /tmp
mount -t tmpfs run /run
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
mount -t bpf bpf /sys/fs/bpf
out=/dev/ttyS1
stty -F $out raw -echo 2>/dev/null
echo "@@ boot $(uname -r) $(nproc) cpus" >$out
failed=
for m in $(cat /modules/order); do
	insmod /modules/$m.ko* 2>/dev/null || failed="$failed $m"
done
echo "@@ modules${failed:- ok}" >$out
nics=0
for d in /sys/class/net/*; do
	[ "$(basename "$(readlink $d/device/driver 2>/dev/null)")" = virtio_net ] &&
		nics=$((nics + 1))
done
queues=$(ls -d /sys/class/net/eth0/queues/rx-* 2>/dev/null | wc -l)
echo "@@ nics $nics $queues" >$out
insmod /inagg.ko
echo "@@ insmod $?" >$out
export INAGG_KO=/inagg.ko INAGG_EXPECT_BACKEND=kernel
# xdp_fuzz: slot reads take ms under TCG: 30 s of them, then verdicts, bytes, counters only.
export INAGG_FUZZ_SLOT_S=30
for t in $(cat /ia/tests/order); do
	# The kmod tests unload and load the module; the others need it loaded.
	[ -d /sys/module/inagg ] || insmod /inagg.ko
	echo "@@ run $t" >$out
	t0=$(cut -d. -f1 /proc/uptime)
	/ia/tests/$t >$out 2>&1 </dev/null
	echo "@@ exit $t $? $(($(cut -d. -f1 /proc/uptime) - t0))" >$out
done
echo "@@ dmesg" >$out
dmesg >$out
echo "@@ done" >$out
poweroff -f
EOF
chmod +x "$root/init"
(cd "$root" && find . | cpio -o -H newc --quiet | gzip -1) >"$vm/initrd.gz" || {
	result "not ok" "vm: build initramfs"
	finish 1
}

# The virtio links.
links=0
if [ -x "$root/ia/tests/vm/virtio_job" ]; then
	links=$("$BUILD/tests/vm/virtio_job" --links) || links=0
fi
net=${VM_NET:-}
if [ -z "$net" ]; then
	net=hub
	[ "$links" -gt 0 ] && [ -c /dev/net/tun ] && unshare --net true 2>/dev/null && net=tap
fi
nic_args=()
tap_setup=
for ((l = 0; l < links; l++)); do
	[ "$net" = tap ] && tap_setup+="ip link add b$l type bridge && ip link set b$l up && "
	for e in 1 2; do
		id=n${l}_$e
		mac=$(printf '52:54:00:1a:%02x:%02x' "$l" "$e")
		if [ "$net" = tap ]; then
			# MTU 9000: the guest's links carry frames of the largest chunk (3,144 bytes).
			tap_setup+="ip tuntap add dev t$id mode tap multi_queue &&
				ip link set t$id mtu 9000 master b$l up && "
			nic_args+=(-netdev "tap,id=$id,ifname=t$id,script=no,downscript=no,vhost=off,queues=$smp"
				   -device "virtio-net-pci,netdev=$id,mac=$mac,mq=on,vectors=$((2 * smp + 2)),romfile=")
		else
			nic_args+=(-netdev "hubport,id=$id,hubid=$l"
				   -device "virtio-net-pci,netdev=$id,mac=$mac,romfile=")
		fi
	done
done

# Boot. ttyS0 is the kernel console, ttyS1 carries the results.
console=$vm/console.log
out=$vm/results.log
rm -f "$console" "$out" "$vm/dmesg.txt"
qemu=(qemu-system-x86_64 -accel tcg -m 1024 -smp "$smp" -nographic -vga none
      -monitor none -no-reboot -kernel "$kernel" -initrd "$vm/initrd.gz"
      -append "console=ttyS0 panic=-1 quiet slab_nomerge rdinit=/init"
      -serial "file:$console" -serial "file:$out" "${nic_args[@]}")
boot=$(date +%s)
if [ "$net" = tap ]; then
	# Own network namespace: the taps and bridges exist only for this qemu.
	# No IPv6 on the host side, so the links carry only the guest's frames.
	timeout "$timeout_s" unshare --net bash -c '
		sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
		'"$tap_setup"' exec "$@"' vm-net "${qemu[@]}" </dev/null >/dev/null 2>"$vm/qemu.err"
else
	timeout "$timeout_s" "${qemu[@]}" </dev/null >/dev/null 2>"$vm/qemu.err"
fi
qrc=$?
end=$(date +%s)
[ -f "$out" ] || : >"$out"
tr -d '\r' <"$out" >"$out.txt"

# Relay: renumber every top-level KTAP result as "<layer/program>: <name>".
declare -A exited
prog= failed_in_prog=0 in_dmesg=0 done=0 status=0
while IFS= read -r line; do
	case $line in
	"@@ boot "*) echo "# guest: ${line#@@ boot }"; continue ;;
	"@@ modules "*)
		if [ "${line#@@ modules }" = ok ]; then
			result ok "vm: virtio and veth modules loaded"
		else
			result "not ok" "vm: modules failed to load:${line#@@ modules}"
			status=1
		fi
		continue ;;
	"@@ nics "*)
		set -- ${line#@@ nics }
		if [ "$1" = $((2 * links)) ]; then
			result ok "vm: $1 virtio-net NICs ($net backend, $2 queue pairs, $smp vCPUs)"
		else
			result "not ok" "vm: $1 virtio-net NICs, want $((2 * links))"
			status=1
		fi
		continue ;;
	"@@ insmod "*)
		if [ "${line#@@ insmod }" = 0 ]; then
			result ok "vm: insmod inagg.ko"
		else
			result "not ok" "vm: insmod inagg.ko"
			status=1
		fi
		continue ;;
	"@@ run "*)
		prog=${line#@@ run }
		failed_in_prog=0
		continue ;;
	"@@ exit "*)
		set -- ${line#@@ exit }
		exited[$1]=$2
		echo "# $1: exit status $2 after ${3:-?} s"
		if [ "$2" != 0 ] && [ "$failed_in_prog" = 0 ]; then
			result "not ok" "$1: exited with status $2"
			status=1
		fi
		prog=
		continue ;;
	"@@ dmesg") in_dmesg=1; continue ;;
	"@@ done") done=1; in_dmesg=0; continue ;;
	"@@ "*) continue ;;
	esac
	if [ "$in_dmesg" = 1 ]; then
		echo "$line" >>"$vm/dmesg.txt"
		continue
	fi
	if [[ $line =~ ^(not\ ok|ok)\ [0-9]+\ (.*)$ ]]; then
		verdict=${BASH_REMATCH[1]}
		result "$verdict" "${prog:-guest}: ${BASH_REMATCH[2]}"
		[ "$verdict" = "not ok" ] && { failed_in_prog=1; status=1; }
	else
		echo "# $line"
	fi
done <"$out.txt"

for p in "${progs[@]}"; do
	if [ -z "${exited[$p]:-}" ]; then
		result "not ok" "$p: did not finish in the guest"
		status=1
	fi
done
if [ "$done" = 1 ]; then
	result ok "vm: guest finished (qemu status $qrc)"
	if grep -qE 'BUG|WARNING:|Oops|Call Trace|Objects remaining|kmemleak' "$vm/dmesg.txt"; then
		result "not ok" "vm: kernel log clean"
		grep -E -A5 'BUG|WARNING:|Oops|Call Trace|Objects remaining' "$vm/dmesg.txt" |
			head -40 | sed 's/^/# /'
		status=1
	else
		result ok "vm: kernel log clean"
	fi
	grep -E 'virtio_net.*XDP' "$vm/dmesg.txt" | sort -u | sed 's/^/# guest dmesg: /'
else
	result "not ok" "vm: guest did not finish (qemu status $qrc, timeout ${timeout_s}s)"
	tail -n 30 "$console" 2>/dev/null | tr -d '\r' | sed 's/^/# /'
	sed 's/^/# /' "$vm/qemu.err" 2>/dev/null
	status=1
fi
echo "# vm: $((end - start)) s in all, $((end - boot)) s in qemu"
finish "$status"
