#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Issue 14's acceptance: three router VMs on Debian's 6.1 kernel, r0 above r1
# and r2, joined by virtio links (qemu socket backends), each running
# dropbear, inagg.ko and the datapath on its ports; the controller (inaggd)
# on this host reaches them only over ssh (docs/remote.md). The destination
# is a namespace in r0, one worker a namespace in r1, one in r2, each behind
# a virtio pair of its router. Checks: a job placed by SMC k=1 exact with
# measured messages per link equal to the model; the blue router's tail
# published and its head occupancy sampled through its agent; an agent killed
# mid-job losing nothing; every job ended released everywhere; a router's own
# kernel ledger refusing an admission, rolled back on the others; a router
# made unreachable refusing the next job with nothing left admitted on the
# others; the controller started while a router is unreachable, running a
# job without it, and connecting it once it is back; clean kernel logs.
# KTAP on stdout.
#
# How the routers boot (ROUTERS_BOOT), the checks the same in both:
#   package    each VM is a Debian 12 system: this host's root
#              over virtio-9p, read-only, under a tmpfs overlay, with its
#              systemd, and udev and dropbear laid on top; docs/routers.md's
#              commands 1 and 2 run as written (make deb; apt-get install of
#              both packages in each guest, DKMS installing inagg.ko, the
#              inagg-attach@ units on every tree port). Needs this host to be
#              Debian 12 with the kernel's headers.
#   initramfs  (the default, what make check runs) a busybox initramfs with
#              inagg.ko, inagg and inagg-agent of the build tree copied in (the
#              binaries in /ia): about 1.5 minutes against about 13 under TCG.
#              make check-routers runs the package boot.
# ROUTERS_DKMS=build: command 1 makes inagg-dkms without the module prebuilt
# for the VMs' kernel (DKMS_PREBUILT=), so that DKMS compiles it in each guest
# (package boot only; make check-routers-dkms, much slower under TCG).
#
# The kernel is Debian's linux-image of inagg.ko's headers (as tests/kmod/vm.sh
# fetches it); dropbear (and udev, systemd, what command 2 fetches) come from
# Debian's packages (apt-get download). Env: BUILD (default build), VM (the
# kernel's folder, default BUILD/vm), KO (default BUILD/kmod/inagg.ko: its
# kver), KEEP=1 keeps the scratch folder, ROUTERS_STEPS=N stops after the N
# first results (to work on the boot). Design and what it covers: docs/remote.md.
# Absolute: the page's command 4 runs in the folder of topo.json.
BUILD=$(cd "${BUILD:-build}" && pwd) || exit 1
VM=${VM:-$BUILD/vm}
KO=${KO:-$BUILD/kmod/inagg.ko}
here=$(cd "$(dirname "$0")/../.." && pwd)
mode=${ROUTERS_BOOT:-initramfs}
case $mode in
package) ia= ;;		# the installed package's commands, in PATH
initramfs) ia=/ia/ ;;	# the build tree's, copied in
*) echo "ROUTERS_BOOT: package or initramfs, not $mode" >&2; exit 2 ;;
esac
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
. "$here/tests/daemon.sh"

kver=$(cat "${KO%/*}/kver" 2>/dev/null)
kernel=$VM/vmlinuz-$kver
mods=$VM/routers-$kver
# The initramfs loads these (virtio; for the package boot then the 9p root and its overlay).
kmods="virtio_ring virtio virtio_pci_modern_dev virtio_pci_legacy_dev virtio_pci
       failover net_failover virtio_net"
# veth: the namespaces of "inagg net up" behind the inaggd.service test (unit_under_systemd).
kmods_root="netfs fscache 9pnet 9pnet_virtio 9p overlay veth"
dropbear_pkgs="dropbear-bin libtomcrypt1 libtommath1"
# What this host's root lacks of a fresh Debian 12 VM: an sshd, and udev (the systemd
# device units inagg-attach@IFACE binds to), with the systemd of its version.
base_pkgs="$dropbear_pkgs udev libudev1 systemd libsystemd0 libsystemd-shared"
port=$((30000 + $$ % 20000))

# ---- the initramfs, one for the three ----
root=$tmp/root
stage=$root/stage	# package boot: laid on the VMs' root
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

# The kernel image of the module's headers, its modules for the initramfs and its module lists.
fetch_kernel() {
	local pkg=linux-image-$kver deb m f have=1
	# A module added to the lists since the cache was made: fetched again.
	for m in $kmods $kmods_root; do compgen -G "$mods/$m.ko*" >/dev/null || have=; done
	[ -f "$kernel" ] && [ -f "$mods/.complete" ] && [ -n "$have" ] && return 0
	rm -rf "$tmp/k" "$mods" && mkdir -p "$tmp/k" "$mods" && download "$tmp/k" "$pkg" || return 1
	deb=$(ls "$tmp/k/${pkg}"_*.deb | head -n 1)
	dpkg-deb -x "$deb" "$tmp/k/x" && cp "$tmp/k/x/boot/vmlinuz-$kver" "$kernel.tmp" || return 1
	for m in $kmods $kmods_root; do
		f=$(find "$tmp/k/x/lib/modules/$kver" -name "$m.ko*" | head -n 1)
		[ -n "$f" ] && cp "$f" "$mods/" || { echo "$pkg has no $m.ko"; return 1; }
	done
	cp "$tmp/k/x/lib/modules/$kver"/modules.{builtin,builtin.modinfo,order} "$mods/" || return 1
	mv "$kernel.tmp" "$kernel" && touch "$mods/.complete" && rm -rf "$tmp/k"
}

download() {	# FOLDER PACKAGE...
	local to=$1
	shift
	(cd "$to" && apt-get download "$@" >/dev/null 2>&1) || {
		apt-get update -qq >/dev/null 2>&1
		(cd "$to" && apt-get download "$@" >/dev/null 2>&1)
	} || { echo "apt-get download $* failed"; return 1; }
}

initramfs() {
	local m
	[ -f "$KO" ] && [ -n "$kver" ] || { echo "no $KO (make)"; return 1; }
	mkdir -p "$VM" && fetch_kernel || return 1
	cp /bin/busybox "$root/bin/busybox" || return 1
	for m in $kmods $([ "$mode" = package ] && echo $kmods_root); do
		cp "$mods/$m".ko* "$root/modules/" && echo "$m" >>"$root/modules/order" || return 1
	done
	ssh-keygen -q -t ed25519 -N '' -f "$tmp/key" || return 1
	copy "$(command -v ip)" /usr/sbin/ip || return 1
	init_common >"$root/init"
	if [ "$mode" = package ]; then
		debian_root && init_debian >>"$root/init"
	else
		binaries && init_binaries >>"$root/init"
	fi || return 1
	chmod +x "$root/init"
	(cd "$root" && find . | cpio -o -H newc --quiet | gzip -1) >"$tmp/initrd.gz"
}

# Initramfs boot: dropbear, inagg.ko and the build tree's binaries in the initramfs.
binaries() {
	local d b
	download "$tmp/deb" $dropbear_pkgs || return 1
	for d in "$tmp"/deb/*.deb; do dpkg-deb -x "$d" "$tmp/deb/x" || return 1; done
	cp "$KO" "$root/inagg.ko" && copy /bin/dash /bin/sh &&
		copy "$tmp/deb/x/usr/sbin/dropbear" /usr/sbin/dropbear || return 1
	for b in inagg inagg-agent; do copy "$BUILD/$b" "/ia/$b" || return 1; done
	cp "$tmp/key.pub" "$root/root/.ssh/authorized_keys"
	echo 'root:x:0:0:root:/root:/bin/sh' >"$root/etc/passwd"
	echo 'root:x:0:' >"$root/etc/group"
}

# Package boot: the guests boot Debian's 6.1 kernel from the initramfs, which mounts this
# host's root (virtio-9p, read-only) below a tmpfs and starts its systemd: a Debian 12 system
# with the kernel's headers, on which docs/routers.md's command 2 installs the packages with
# apt-get. What the host root lacks of a fresh VM is laid on top (the stage): an sshd
# (dropbear), udev, the run's key, the host name, the kernel's module lists, and the .debs
# apt-get would fetch from the mirror, fetched by this host beforehand (the guests are offline).
debian_root() {
	local d m p u
	[ -d "/usr/src/linux-headers-$kver" ] || { echo "no linux-headers-$kver here"; return 1; }
	mkdir -p "$stage"/{etc/systemd/system/multi-user.target.wants,etc/dropbear,root/.ssh} \
		"$stage/var/cache/apt/archives" "$stage/lib/modules/$kver" "$root"/{lower,rw,new}
	apt_cache && download "$tmp/deb" $base_pkgs || return 1
	for d in "$tmp"/deb/*.deb; do dpkg-deb -x "$d" "$stage" || return 1; done
	cp "$mods"/modules.* "$stage/lib/modules/$kver/" || return 1
	# Debian 12 has merged /usr: what the packages put in /lib, /bin, /sbin goes below /usr.
	for m in bin sbin lib lib64; do
		[ -d "$stage/$m" ] && [ -L "/$m" ] || continue
		mkdir -p "$stage/usr/$m" && cp -a "$stage/$m/." "$stage/usr/$m/" && rm -rf "$stage/$m" ||
			return 1
	done
	cp "$tmp/key.pub" "$stage/root/.ssh/authorized_keys" && : >"$stage/etc/fstab" || return 1
	# The sshd the controller uses (22), and a spare (2222) that only the test's hands use.
	cat >"$stage/etc/systemd/system/ia-sshd@.service" <<'EOF'
[Unit]
Description=the test's sshd on port %i
[Service]
ExecStart=/usr/sbin/dropbear -F -R -E -s -p %i -P /run/db%i.pid
[Install]
WantedBy=multi-user.target
EOF
	for p in 22 2222; do
		ln -s ../ia-sshd@.service "$stage/etc/systemd/system/multi-user.target.wants/ia-sshd@$p.service"
	done
	# This host's own services and timers do not run on the routers.
	for u in postgresql.service e2scrub_reap.service getty@tty1.service apt-daily.timer \
		 apt-daily-upgrade.timer dpkg-db-backup.timer e2scrub_all.timer fstrim.timer \
		 man-db.timer systemd-timesyncd.service; do
		ln -s /dev/null "$stage/etc/systemd/system/$u"
	done
}

# What command 2's apt-get would download on this root: fetched here into the guests' cache.
apt_cache() {
	local debs pkgs
	debs=$(ls "$BUILD"/pkg/inagg_*_amd64.deb "$BUILD"/pkg/inagg-dkms_*.deb 2>/dev/null)
	[ -n "$debs" ] || { echo "no packages in $BUILD/pkg (make deb)"; return 1; }
	pkgs=$(apt-get install -s -y linux-headers-amd64 $debs 2>&1 |
	       awk '/^Inst / && !/local-deb/ { print $2 }')
	[ -z "$pkgs" ] && return 0
	download "$stage/var/cache/apt/archives" $pkgs && echo "# cached for command 2: $(echo $pkgs)"
}

# The start of the init, the same in both boots: modules, the NICs named as docs/routers.md
# has them (eth0 management, then the tree's ports; the hosts' NICs keep x names until
# hosts_up moves them into their namespaces), the management address.
init_common() {
	cat <<'EOF'
#!/bin/busybox sh
/bin/busybox --install -s /bin
export PATH=/usr/sbin:/bin:/ia
# iproute2's, not busybox's applet (which the shell would run first): it knows namespaces.
ip() { /usr/sbin/ip "$@"; }
mount -t proc proc /proc; mount -t sysfs sys /sys; mount -t devtmpfs dev /dev
h=$(sed -n 's/.*inagg.host=\(r[0-9]\).*/\1/p' /proc/cmdline); n=${h#r}
for m in $(cat /modules/order); do insmod /modules/$m.ko*; done
byname() { for d in /sys/class/net/*; do [ "$(cat $d/address)" = "$1" ] && basename $d; done; }
ren() { ip link set dev "$(byname "$1")" name "$2" && ip link set dev "$2" up; }
for d in /sys/class/net/eth*; do ip link set dev "${d##*/}" name "x${d##*/}"; done
ren 52:54:00:99:0$n:00 eth0
ip addr add 10.0.2.15/24 dev eth0; ip route add default via 10.0.2.2; ip link set lo up
case $h in
r0) ren 52:54:00:99:00:01 eth1; ren 52:54:00:99:00:03 eth2; ren 52:54:00:99:00:04 eth3 ;;
r1) ren 52:54:00:99:01:01 eth1; ren 52:54:00:99:01:02 eth2 ;;
r2) ren 52:54:00:99:02:01 eth1; ren 52:54:00:99:02:02 eth2 ;;
esac
EOF
}

# Initramfs boot: the module, XDP on the tree ports, the sshds, then nothing.
init_binaries() {
	cat <<'EOF'
mount -t tmpfs tmp /tmp; mount -t tmpfs run /run; mount -t bpf bpf /sys/fs/bpf
mkdir -p /dev/pts /etc/dropbear && mount -t devpts devpts /dev/pts
hostname "$h"
insmod /inagg.ko
for p in eth1 eth2 eth3; do
	[ -e /sys/class/net/$p ] && /ia/inagg dev attach $p --switch "$h" >/dev/null
done
# The controller's sshd (22), and a spare (2222) that only the test's hands use.
dropbear -R -E -s -p 22 -P /run/db22.pid 2>/dev/ttyS0
dropbear -R -E -s -p 2222 -P /run/db2222.pid 2>/dev/ttyS0
echo "@@ ready $h" >/dev/ttyS0
while :; do sleep 3600; done
EOF
}

# Package boot: the root, and its systemd.
init_debian() {
	cat <<'EOF'
mount -t 9p -o trans=virtio,version=9p2000.L,ro,cache=loose,msize=512000 hostroot /lower &&
mount -t tmpfs -o size=2g,mode=0755 rw /rw && mkdir /rw/upper /rw/work &&
mount -t overlay -o lowerdir=/lower,upperdir=/rw/upper,workdir=/rw/work root /new || {
	echo "@@ no root" >/dev/ttyS0; poweroff -f; }
cp -a /stage/. /new/
echo "$h" >/new/etc/hostname
tr -d - </proc/sys/kernel/random/uuid >/new/etc/machine-id
# man-db's index is not rebuilt on every install (two minutes of TCG per router).
rm -f /new/var/lib/man-db/auto-update
mount -t tmpfs tmp /new/tmp
echo "@@ root $h" >/dev/ttyS0
exec switch_root /new /lib/systemd/systemd
EOF
}

# The hosts of the tree: a NIC of each virtio pair moved into its namespace (before command 2,
# which attaches inagg to every interface the router has but eth0).
hosts_up() {
	local r
	for r in 0 1 2; do
		hssh $r 'byname() { for d in /sys/class/net/*; do
				[ "$(cat $d/address)" = "$1" ] && basename $d; done; }
			 host() {	# NS MAC ADDR GW
				dev=$(byname "$2")
				ip netns add "$1" && ip link set dev "$dev" netns "$1" &&
				ip -n "$1" link set dev "$dev" name eth0 &&
				ip -n "$1" addr add "$3/30" dev eth0 &&
				ip -n "$1" link set eth0 up && ip -n "$1" link set lo up &&
				ip -n "$1" route add default via "$4"
			 }
			 case $(hostname) in
			 r0) host dest 52:54:00:99:00:02 10.64.0.1 10.64.0.2 ;;
			 r1) host w0 52:54:00:99:01:03 10.128.0.2 10.128.0.1 ;;
			 r2) host w0 52:54:00:99:02:03 10.128.0.6 10.128.0.5 ;;
			 esac' || { echo "r$r: hosts"; return 1; }
	done
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
	mapfile -t args < <(nic "user,id=m,net=10.0.2.0/24,hostfwd=tcp:127.0.0.1:$((port + r))-:22,hostfwd=tcp:127.0.0.1:$((port + 20 + r))-:2222" \
			       "52:54:00:99:0$r:00"; for a in "$@"; do nic ${a%% *} ${a#* }; done)
	[ "$mode" = package ] && args+=(-m 1024 -virtfs \
		local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap)
	qemu-system-x86_64 -accel tcg -m 512 -smp "${ROUTERS_SMP:-1}" -nographic -vga none \
		-monitor none -no-reboot -kernel "$kernel" -initrd "$tmp/initrd.gz" \
		-append "console=ttyS0 panic=-1 quiet rdinit=/init inagg.host=r$r net.ifnames=0" \
		-serial "file:$tmp/r$r.console" "${args[@]}" </dev/null >"$tmp/r$r.qemu" 2>&1 &
	pids+=($!)
}

vssh() {	# VM COMMAND
	local r=$1
	shift
	command ssh -T -o BatchMode=yes -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null \
		-o LogLevel=ERROR -o ConnectTimeout=10 -i "$tmp/key" -p $((port + r)) \
		root@127.0.0.1 "$@"
}

# The same through the spare sshd: works while the controller's is down.
hssh() {	# VM COMMAND
	local r=$1
	shift
	command ssh -T -o BatchMode=yes -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null \
		-o LogLevel=ERROR -o ConnectTimeout=10 -i "$tmp/key" -p $((port + 20 + r)) \
		root@127.0.0.1 "$@"
}

# Whether the switch's maps hold job ID, asked of an agent of the test's own (its own record).
pushed_on() {	# VM ID
	echo "{\"op\": \"pushed\", \"job\": $2}" |
		vssh "$1" "${ia}inagg-agent -s r$1 -S /tmp/probe.json" | jq -e .pushed >/dev/null
}

vms_up() {
	local t0=$SECONDS r i
	boot 0 "hubport,id=a,hubid=0 52:54:00:99:00:01" "hubport,id=b,hubid=0 52:54:00:99:00:02" \
	       "socket,id=c,listen=127.0.0.1:$((port + 10)) 52:54:00:99:00:03" \
	       "socket,id=d,listen=127.0.0.1:$((port + 11)) 52:54:00:99:00:04"
	sleep 2
	boot 1 "socket,id=a,connect=127.0.0.1:$((port + 10)) 52:54:00:99:01:01" \
	       "hubport,id=b,hubid=0 52:54:00:99:01:02" "hubport,id=c,hubid=0 52:54:00:99:01:03"
	boot 2 "socket,id=a,connect=127.0.0.1:$((port + 11)) 52:54:00:99:02:01" \
	       "hubport,id=b,hubid=0 52:54:00:99:02:02" "hubport,id=c,hubid=0 52:54:00:99:02:03"
	for r in 0 1 2; do
		for i in $(seq 1 300); do
			[ "$(vssh $r hostname 2>/dev/null)" = "r$r" ] && break
			grep -q '@@ no root' "$tmp/r$r.console" && break
			kill -0 "${pids[r]}" 2>/dev/null || break
			sleep 1
		done
		[ "$(vssh $r hostname)" = "r$r" ] || {
			echo "no ssh to r$r"; tail -20 "$tmp/r$r.console" "$tmp/r$r.qemu"; return 1; }
	done
	echo "# booted and reachable after $((SECONDS - t0)) s"
	hosts_up
}

# ---- the controller ----
# docs/routers.md's topology, as it stands there, but for what reaches the VMs: each site's host
# and ssh arguments (this host's forwarded port, the run's key), the agent's path in the
# initramfs boot (/ia), longer bounds
# (TCG), and two jobs at once per switch (the ledger test admits one of its own).
topology() {
	sed -n '/^    {"switches": \[/,/\]}$/s/^    //p' "$here/docs/routers.md" >"$tmp/topo-doc.json"
	jq --arg key "$tmp/key" --argjson port "$port" --arg ia "$ia" '.switches |= map(
		.capacity = 2 |
		.site.host = "root@127.0.0.1" |
		if $ia != "" then .site.agent = $ia + "inagg-agent" else . end |
		.site.ssh = ["-p", ($port + (.name[1:] | tonumber) | tostring), "-i", $key,
			     "-o", "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null",
			     "-o", "LogLevel=ERROR"] |
		.site.timeout_ms = 30000 | .site.retries = 1)' "$tmp/topo-doc.json" >"$tmp/topo.json"
}

# The commands of docs/routers.md, run with the test's paths: inaggd's socket and state.
inaggd() { exec "$BUILD/inaggd" "$@" -s "$tmp/sock" -S "$tmp/state.json" 2>>"$tmp/inaggd.log"; }
inagg() { "$BUILD/inagg" "$@" -S "$tmp/sock"; }
page() {	# N: command N of docs/routers.md, with the lines it continues
	awk -v n="$1" '/^    / { buf = buf substr($0, 5) "\n"
			if ($0 ~ " # " n "( .*)?$") { sub(" +# " n "( [^\n]*)?\n$", "\n", buf)
				printf "%s", buf; exit }
			if ($0 !~ /\\$/) buf = ""; next }
		{ buf = "" }' "$here/docs/routers.md"
}

# Command 1 of the page, in the source tree (ROUTERS_DKMS=build: without the prebuilt module).
build_page() {
	local cmd
	cmd=$(page 1)
	[ "$cmd" = "make deb" ] || { echo "command 1 is not 'make deb': $cmd"; return 1; }
	[ "${ROUTERS_DKMS:-}" = build ] && export DKMS_PREBUILT=
	(cd "$here" && eval "$cmd" >"$tmp/page1.out" 2>&1) || { tail "$tmp/page1.out"; return 1; }
	ls "$BUILD"/pkg/inagg_*_amd64.deb "$BUILD"/pkg/inagg-dkms_*.deb
}

# Command 2 of the page as it stands, but for the transport (root@rN is the VM's forwarded
# port and the run's key) and BUILD: the packages copied with scp and installed with apt-get,
# DKMS installing inagg.ko in each guest, the module loaded, every tree port attached by its unit.
install_page() {
	local cmd r t0=$SECONDS
	cmd=$(page 2)
	[ -n "$cmd" ] || { echo "no command 2 in docs/routers.md"; return 1; }
	cmd=${cmd//build\/pkg\//$BUILD/pkg/}
	(
		ssh() { local h=${1#root@r}; shift; vssh "$h" "$@"; }
		scp() {	# FILE... root@rN:
			local to=${!#} files=("${@:1:$#-1}")
			echo "@@ $SECONDS s: ${to%:*}"	# where each router's part starts
			command scp -O -q -o BatchMode=yes -o StrictHostKeyChecking=no \
				-o UserKnownHostsFile=/dev/null -o LogLevel=ERROR -i "$tmp/key" \
				-P $((port + ${to:6:1})) "${files[@]}" "root@127.0.0.1:${to#*:}"
		}
		eval "$cmd"
	) >"$tmp/page2.out" 2>&1 || {
		tail -30 "$tmp/page2.out"
		for r in 0 1 2; do vssh $r "journalctl -u 'inagg-attach@*' --no-pager | tail -5"; done
		return 1
	}
	echo "# command 2 took $((SECONDS - t0)) s for the three routers, starting each at:" \
		$(sed -n 's/^@@ \([0-9]*\) s: root@\(r[0-9]\)$/\2 \1 s/p' "$tmp/page2.out")
	for r in 0 1 2; do	# (KEEP=1 keeps what dpkg and apt logged)
		vssh $r "cat /var/log/dpkg.log /var/log/apt/term.log" >"$tmp/r$r.dpkg.log"
		installed_on $r || { echo "r$r: $(tail -5 "$tmp/page2.out")"; return 1; }
	done
}

# Both packages installed, inagg.ko the one DKMS installed (prebuilt, or compiled there with
# ROUTERS_DKMS=build: a build leaves its log), loaded, every tree port's unit active.
installed_on() {	# VM
	local st ko p log
	st=$(vssh $1 "dpkg-query -W -f '\${db:Status-Status} ' inagg inagg-dkms")
	[ "$st" = "installed installed " ] || { echo "r$1: packages: $st"; return 1; }
	ko=$(vssh $1 "modinfo -n inagg")
	[ "$ko" = "/lib/modules/$kver/updates/dkms/inagg.ko" ] || { echo "r$1: inagg is $ko"; return 1; }
	log=/var/lib/dkms/inagg/$("$BUILD/inagg" --version | cut -d' ' -f2)/$kver/x86_64/log/make.log
	if [ "${ROUTERS_DKMS:-}" = build ]; then
		vssh $1 "test -f $log" || { echo "r$1: DKMS did not compile inagg.ko"; return 1; }
	else
		vssh $1 "! test -e $log" || { echo "r$1: DKMS compiled inagg.ko"; return 1; }
	fi
	vssh $1 "test -d /sys/module/inagg" || { echo "r$1: inagg not loaded"; return 1; }
	for p in $(vssh $1 "ls /sys/class/net | grep -vx -e lo -e eth0"); do
		[ "$(vssh $1 "systemctl is-active inagg-attach@$p")" = active ] || {
			echo "r$1: inagg-attach@$p not active"
			vssh $1 "journalctl -u inagg-attach@$p --no-pager | tail -5"; return 1; }
	done
}

# inaggd.service under the guest's systemd (package boot), on r2: over a one-switch network of
# the router's own namespaces (inagg net up), "systemctl start" returns once the socket answers
# (Type=notify), the socket is root:inagg 0660 (the group the package made), inagg job list
# reaches it, the confinement scores at most 5 online, and "systemctl stop" ends it cleanly.
# The router's own network and files are removed after.
unit_under_systemd() {
	local out rc score
	vssh 2 'echo "{\"switches\": [{\"name\": \"s0\", \"parent\": null, \"rate\": 1,
		\"load\": 1}]}" >/etc/inagg/topo.json && inagg net up -t /etc/inagg/topo.json -n ia' \
		>"$tmp/unit.out" 2>&1 || { echo "r2: net up:"; tail -5 "$tmp/unit.out"; return 1; }
	out=$(vssh 2 'systemctl start inaggd && echo "active: $(systemctl is-active inaggd)" &&
		echo "socket: $(stat -c "%U:%G %a" /run/inagg/inaggd.sock)" &&
		echo "group: $(getent group inagg)" && inagg job list && echo "answered" &&
		systemd-analyze security inaggd.service | tail -n 1 &&
		systemctl stop inaggd; echo "stopped: $(systemctl is-active inaggd)"
		test -e /run/inagg/inaggd.sock && echo "socket left"
		# Last, as a failure keeps the last lines: what inaggd itself said.
		journalctl _SYSTEMD_UNIT=inaggd.service _COMM=inaggd --no-pager -o cat | tail -n 8' \
		2>&1)
	rc=$?
	echo "$out" | sed 's/^/# r2: /'
	vssh 2 'inagg net down -n ia; rm -f /etc/inagg/topo.json' >/dev/null 2>&1
	score=$(sed -n 's/.*Overall exposure level for inaggd.service: \([0-9.]*\).*/\1/p' <<<"$out")
	[ "$rc" = 0 ] && grep -qx 'active: active' <<<"$out" &&
	grep -qx 'socket: root:inagg 660' <<<"$out" && grep -qx answered <<<"$out" &&
	grep -qx 'stopped: inactive' <<<"$out" && ! grep -qx 'socket left' <<<"$out" &&
	grep -q 'listening on /run/inagg/inaggd.sock' <<<"$out" &&
	[ -n "$score" ] && awk -v s="$score" 'BEGIN { exit !(s <= 5.0) }'
}

# Command 4 of the page, in the folder of topo.json.
controller_up() {
	local cmd
	topology
	cmd=$(page 4)
	[ -n "$cmd" ] || { echo "no command 4 in docs/routers.md"; return 1; }
	: >"$tmp/inaggd.log"
	cd "$tmp" && eval "$cmd"
	daemon=$!
	cd "$here" && wait_daemon "$tmp/sock" "$daemon" "$tmp/inaggd.log" 300
}

CHUNKS=100
ELEMS=$((CHUNKS * 256))

# A job end to end: submit, the destination and the workers in the VMs, results and stats.
run_job() {	# SUBMIT-ARGS [DURING]
	local args=$1 during=${2:-} job id ids dest down ww nw
	job=$("$BUILD/inagg" -j job submit $args -S "$tmp/sock") || { echo "$job"; return 1; }
	echo "$job" >"$tmp/job.json"
	id=$(jq -r .job <<<"$job")
	dest=$(jq -r .destination.address <<<"$job")
	down=$(jq -r .destination.down <<<"$job")
	ww=$(jq -r .worker_window <<<"$job")
	ids=$(jq -r '[.workers[].id] | join(",")' <<<"$job")
	nw=$(jq -r '.workers | length' <<<"$job")
	echo "$id" >"$tmp/id"
	vssh 0 "ip netns exec dest ${ia}inagg -j ps --job $id --nworkers $nw --elems $ELEMS --addr $dest \
		--down $down --linger 1000 --ready /tmp/ready --expect $ids" >"$tmp/ps.out" 2>"$tmp/ps.err" &
	local ps=$!
	for i in $(seq 1 120); do vssh 0 "test -e /tmp/ready" && break; sleep 1; done
	local w=()
	local g
	rm -f "$tmp"/w*.out "$tmp"/w*.err
	for g in $(seq 0 $((nw - 1))); do
		local wid waddr wsw
		wid=$(jq -r ".workers[$g].id" <<<"$job")
		waddr=$(jq -r ".workers[$g].address" <<<"$job")
		wsw=$(jq -r ".workers[$g].switch" <<<"$job")
		vssh "${wsw#r}" "ip netns exec w0 ${ia}inagg -j worker --job $id --id $wid --ps $dest \
			--addr $waddr --elems $ELEMS --window $ww --timeout 3000 --nworkers $nw" \
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
	for g in $(seq 0 $((nw - 1))); do
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

# Commands 5-8 of docs/routers.md as they stand: the job, its show, the PS in r0's host, a
# worker in r1's and one in r2's (-i 2, as the page says); the PS and the workers agree.
operator_page() {
	local c5 c6 c7 c8 ps w=() g rc=0 sum
	c5=$(page 5) c6=$(page 6) c7=$(page 7) c8=$(page 8)
	[ -n "$c5" ] && [ -n "$c6" ] && [ -n "$c7" ] && [ -n "$c8" ] || {
		echo "commands 5-8 not all in docs/routers.md"; return 1; }
	eval "$c5" >"$tmp/page5.out" || { cat "$tmp/page5.out"; return 1; }
	eval "$c6" >"$tmp/page6.out" || { cat "$tmp/page6.out"; return 1; }
	for r in r0 r1 r2; do
		grep -qE "$r .*ok" "$tmp/page6.out" || { cat "$tmp/page6.out"; return 1; }
	done
	vssh 0 "ip netns exec dest $ia${c7/#inagg/inagg -j}" >"$tmp/ps.out" 2>"$tmp/ps.err" &
	ps=$!
	sleep 3
	vssh 1 "ip netns exec w0 $ia${c8/#inagg/inagg -j}" >"$tmp/w0.out" 2>"$tmp/w0.err" &
	w+=($!)
	vssh 2 "ip netns exec w0 $ia$(sed 's/-i 1/-i 2/' <<<"${c8/#inagg/inagg -j}")" \
		>"$tmp/w1.out" 2>"$tmp/w1.err" &
	w+=($!)
	for p in "${w[@]}"; do wait "$p" || rc=1; done
	wait "$ps" || rc=1
	[ $rc = 0 ] || { tail -3 "$tmp"/ps.* "$tmp"/w*.out "$tmp"/w*.err; return 1; }
	jq -e .complete "$tmp/ps.out" >/dev/null || { cat "$tmp/ps.out"; return 1; }
	sum=$(jq -r .checksum "$tmp/ps.out")
	for g in 0 1; do
		[ "$(jq -r .checksum "$tmp/w$g.out")" = "$sum" ] || { cat "$tmp/w$g.out"; return 1; }
	done
	"$BUILD/inagg" -j stats -J 1 --chunks "$CHUNKS" -S "$tmp/sock" >"$tmp/stats.json" &&
		jq -e '[.links[] | .messages_per_chunk == .model_messages] | all' "$tmp/stats.json" \
			>/dev/null || { cat "$tmp/stats.json"; return 1; }
	"$BUILD/inagg" job end -J 1 -S "$tmp/sock" >/dev/null
}

smc_job_exact_and_as_modelled() {
	run_job "-k 1" && jq -e '.congestion == 1 and (.blue | length) == 1' "$tmp/job.json" \
		>/dev/null && "$BUILD/inagg" -j job show -J "$(cat "$tmp/id")" -S "$tmp/sock" \
		>"$tmp/show.json" &&
		jq -e '[.routers[] | .health == "ok" and .reboots == 0] | all and length == 3' \
			"$tmp/show.json" >/dev/null
}

# FlexINA on a router: the tail its agent published (the kernel ledger's tail), its head read
# from its maps by the sampler (the job's head there), through its agent.
memory_through_agents() {
	local b tail head
	b=$(jq -r '.blue[0]' "$tmp/job.json")
	head=$(jq -r '.head' "$tmp/job.json")
	# The kernel ledger's tail: every slot no head holds (used = heads + tail).
	tail=$(vssh "${b#r}" "${ia}inagg -j ledger show" | jq '.used_slots - ([.jobs[].slots] | add)')
	"$BUILD/inagg" -j stats show -S "$tmp/sock" >"$tmp/mem.json" || return 1
	jq -e --arg b "$b" --argjson tail "${tail:-0}" \
		'.memory.switches[] | select(.switch == $b) |
		 $tail > 0 and .tail.published_slots == $tail and .tail.generation > 0 and
		 .head_slots > 0' "$tmp/mem.json" >/dev/null || {
		echo "ledger tail of $b: $tail"; jq .memory.switches "$tmp/mem.json"; return 1; }
	jq -e --arg b "$b" --argjson head "$head" \
		'[.links[] | select(.switch == $b) | .head] == [$head]' "$tmp/stats.json" >/dev/null || {
		echo "head $head"; jq .links "$tmp/stats.json"; return 1; }
	echo "# $b utilisation $(jq --arg b "$b" '.memory.switches[] | select(.switch == $b) |
		.utilisation' "$tmp/mem.json")"
	job_end
}

kill_blue_agent() {
	local b
	sleep 2
	b=$(jq -r '.blue[0] // empty' "$tmp/job.json")
	[ -n "$b" ] && vssh "${b#r}" 'kill -9 $(pidof inagg-agent)'
}

agent_killed_mid_job_loses_nothing() {
	run_job "-k 1" kill_blue_agent && jq -e '(.blue | length) == 1' "$tmp/job.json" >/dev/null &&
		"$BUILD/inagg" -j job show -J "$(cat "$tmp/id")" -S "$tmp/sock" >"$tmp/show.json" &&
		jq -e '.failed == null and ([.routers[] | .reboots == 0] | all)' "$tmp/show.json" \
			>/dev/null && job_end
}

held_nowhere() {	# ID
	local n
	for n in 0 1 2; do
		vssh $n "${ia}inagg -j ledger show" | jq -e --argjson id "$1" \
			'[.jobs[]? | .id == $id] | any | not' >/dev/null || {
			echo "r$n still holds job $1"; return 1; }
	done
}

# r2's own kernel ledger refuses: it holds job 77 already (admitted there by hand, another head).
ledger_refusal_rolled_back() {
	local out n
	# Admitted as another controller's agent would (the tail gives way), with a record of its own.
	echo '{"op": "admit", "job": 77, "class": 1, "slots": 3}' |
		vssh 2 "${ia}inagg-agent -s r2 -S /tmp/other.json" | jq -e .ok >/dev/null || return 1
	out=$("$BUILD/inagg" job submit -J 77 -k 3 -a all-blue --class ina -S "$tmp/sock") || {
		echo "$out"; return 1; }
	echo 77 >"$tmp/id"
	"$BUILD/inagg" -j job show -J 77 -S "$tmp/sock" >"$tmp/job.json" || return 1
	# Refused on r2 with the kernel's reason; r0 and r1 released, the job placed again without r2.
	grep -qE '^  refused by r2: .+' <<<"$out" || { echo "$out"; return 1; }
	jq -e '(.blue | sort) == ["r0", "r1"]' "$tmp/job.json" >/dev/null || {
		echo "$out"; cat "$tmp/job.json"; return 1; }
	grep -q 'job 77: admission refused on r2: .*; placing again without it' "$tmp/inaggd.log" || {
		grep 'job 77' "$tmp/inaggd.log"; return 1; }
	vssh 2 "${ia}inagg -j ledger show" | jq -e '[.jobs[] | select(.id == 77) | .slots] == [3]' \
		>/dev/null || { echo "r2's ledger is not as its hand left it"; return 1; }
	job_end || return 1
	for n in 0 1; do
		held_nowhere_on $n 77 || return 1
		! pushed_on $n 77 || { echo "r$n's maps still hold job 77"; return 1; }
	done
	! pushed_on 2 77 || { echo "r2's maps still hold job 77"; return 1; }
	echo '{"op": "release", "job": 77}' |
		vssh 2 "${ia}inagg-agent -s r2 -S /tmp/other.json" | jq -e .ok >/dev/null
}

held_nowhere_on() {	# VM ID
	vssh "$1" "${ia}inagg -j ledger show" | jq -e --argjson id "$2" \
		'[.jobs[]? | .id == $id] | any | not' >/dev/null || { echo "r$1 still holds job $2"; return 1; }
}

# r2's controller-facing sshd gone, with every session through it (the agent with them).
r2_sshd_down() {
	hssh 2 'l=$(cat /run/db22.pid); for p in $(pidof dropbear); do
		[ "$(cut -d" " -f4 /proc/$p/stat)" = "$l" ] && kill $p; done; kill $l' 2>/dev/null
}

unreachable_router_rolls_back() {
	local out
	r2_sshd_down
	out=$("$BUILD/inagg" -j job submit -k 1 -S "$tmp/sock" 2>&1) && {
		echo "accepted: $out"; return 1; }
	grep -q 'router r2 (root@127.0.0.1): unreachable' <<<"$out" || { echo "$out"; return 1; }
	local n
	for n in 0 1; do
		vssh $n "${ia}inagg -j ledger show" | jq -e '[.jobs[]?] | length == 0' >/dev/null || {
			echo "r$n holds a job"; return 1; }
	done
}

ended_jobs_released_everywhere() {
	held_nowhere 1 && held_nowhere 2
}

# inaggd started again while r2 cannot be reached: up, r2 marked down, a job without r2 runs.
start_with_router_down() {
	kill "$daemon" && wait "$daemon"
	daemon=
	controller_up || return 1
	grep -q 'router r2 (root@127.0.0.1): unreachable.*marked down' "$tmp/inaggd.log" || {
		cat "$tmp/inaggd.log"; return 1; }
	# An INA job (all-blue: r0 and r1 aggregate), as SMC would see no gain with one worker.
	run_job "-k 2 -a all-blue --class ina -W r1=1" &&
		jq -e '(.workers | length) == 1 and (.blue | sort) == ["r0", "r1"]' "$tmp/job.json" \
			>/dev/null && job_end
}

# r2's sshd back: connected in the background, and the next job runs through it.
router_back_connected() {
	hssh 2 "dropbear -R -E -s -p 22 -P /run/db22.pid" || return 1
	wait_line "$tmp/inaggd.log" 'router r2 (root@127.0.0.1) connected' 60 || return 1
	run_job "-k 1" && "$BUILD/inagg" -j job show -J "$(cat "$tmp/id")" -S "$tmp/sock" \
		>"$tmp/show.json" && jq -e '[.routers[] | .health == "ok"] | all and length == 3' \
		"$tmp/show.json" >/dev/null && job_end
}

kernel_logs_clean() {
	local n
	for n in 0 1; do vssh $n 'poweroff -f' >/dev/null 2>&1; done
	sleep 3
	! grep -E 'BUG|WARNING:|Oops|Call Trace' "$tmp"/r*.console
}

# Each test's output kept apart (KEEP=1 keeps the folder); a passed test's "# " lines (the
# times) follow its result.
tt() {
	t "$@"
	cp "$tmp/log" "$tmp/log.$n"
	[[ ${results[-1]} == ok* ]] && mapfile -t -O ${#results[@]} results < <(grep '^# ' "$tmp/log")
	[ -n "${ROUTERS_STEPS:-}" ] && [ "$n" -ge "$ROUTERS_STEPS" ] && finish
	return 0
}
if [ "$mode" = package ]; then
	tt "routers: docs/routers.md's command 1 builds the packages" build_page
	tt "routers: initramfs booting this host's Debian 12 root, with dropbear" initramfs
else
	tt "routers: initramfs with dropbear, inagg.ko, inagg-agent" initramfs
fi
tt "routers: three 6.1 VMs boot ($mode), ssh reaches each" vms_up
[ "$mode" = package ] &&
	tt "routers: docs/routers.md's command 2: apt-get installs the packages on r0, r1, r2" install_page
[ "$mode" = package ] &&
	tt "routers: inaggd.service under systemd on 6.1: starts ready, socket root:inagg, answers, stops" \
		unit_under_systemd
tt "routers: inaggd on the host starts the three agents over ssh (docs/routers.md's command 4)" controller_up
tt "routers: docs/routers.md's commands 5-8: the job runs, PS and workers agree" operator_page
tt "routers: SMC k=1 job exact, messages per link = model, routers ok" smc_job_exact_and_as_modelled
tt "routers: the blue router's tail published and head sampled through its agent" memory_through_agents
tt "routers: the blue router's agent killed mid-job loses nothing" agent_killed_mid_job_loses_nothing
tt "routers: every ended job released on every router" ended_jobs_released_everywhere
tt "routers: r2's kernel ledger refuses: rolled back on r0 and r1, placed without r2" ledger_refusal_rolled_back
tt "routers: r2 unreachable: the job refused, nothing held on r0 and r1" unreachable_router_rolls_back
tt "routers: inaggd starts with r2 unreachable, a job without r2 runs exact" start_with_router_down
tt "routers: r2 back: connected in the background, a job through it exact" router_back_connected
tt "routers: kernel logs clean" kernel_logs_clean
finish
