#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Acceptance of the Debian packages on Debian 12 (KTAP). Both packages are
# installed with apt-get into a Debian 12 root (packaging/mkroot.sh: made once
# in $BUILD/pkg/root, about 6 minutes, then reused), which must resolve
# inagg's Depends by itself; DKMS must build inagg.ko for the root's kernel
# headers (installing the one the package carries prebuilt, when it is for that
# kernel), and compile it when the headers' kernel hook runs (as on an ABI bump);
# the installed binaries run: inagg ledger show, and inagg dev attach, show and
# detach on a veth of a namespace of this test. Every run works on an overlay
# of the root, in a mount namespace of its own, so the root stays as built and
# nothing is left mounted. With a port attached, the packages are upgraded to a
# next version (the same tree with its version raised, built here as make deb
# builds): the port stays attached with its pins, DKMS moves to the new version,
# the operator's configuration stays. Removal disables the ports' units; purge
# leaves no unit link, state, pin or module. Needs root; touches a namespace:
# run it under flock /tmp/inagg-net.lock (make check's caller holds it).
BUILD=${BUILD:-build}
build=$(realpath -m "$BUILD")
here=$(cd "$(dirname "$0")/../.." && pwd)

if [ "${INAGG_PKG_INNER:-}" != 1 ]; then
	tmp=$(mktemp -d /tmp/ia-pkg-XXXXXX)
	NS=ia-pkg$$
	trap 'ip netns del "$NS" 2>/dev/null; rm -rf "$tmp"' EXIT
	INAGG_PKG_INNER=1 NS=$NS tmp=$tmp BUILD=$BUILD \
		unshare -m --propagation private bash "$0"
	exit $?
fi

. "$here/tests/ktap.sh"
. "$here/tests/daemon.sh"
dpid=
trap '[ -n "$dpid" ] && kill "$dpid" 2>/dev/null' EXIT

# PATH PACKAGE of each row of a man page's INSTALLED FILES table (stdin).
manfiles() { awk -F '\t' -f "$here/tests/pkg/manfiles.awk"; }
root=$build/pkg/root
mnt=$tmp/mnt
inagg_deb=$(ls "$build"/pkg/inagg_*.deb 2>/dev/null | head -n 1)
lib_deb=$(ls "$build"/pkg/libinagg1_*.deb 2>/dev/null | head -n 1)
dkms_deb=$(ls "$build"/pkg/inagg-dkms_*.deb 2>/dev/null | head -n 1)
version=${dkms_deb##*/inagg-dkms_}
version=${version%_*.deb}
in_root() {
	chroot "$mnt" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LC_ALL=C \
		DEBIAN_FRONTEND=noninteractive "$@"
}

make_root() {
	"$here/packaging/mkroot.sh" "$root"
}

mount_root() {
	mkdir -p "$tmp/upper" "$tmp/work" "$mnt" &&
	mount -t overlay overlay -o "lowerdir=$root,upperdir=$tmp/upper,workdir=$tmp/work" "$mnt" &&
	mount -t proc proc "$mnt/proc" && mount --rbind /dev "$mnt/dev" &&
	mount -t sysfs sys "$mnt/sys" && mount -t bpf bpf "$mnt/sys/fs/bpf" &&
	mount -t tmpfs run "$mnt/run" &&
	cp "$inagg_deb" "$dkms_deb" "$lib_deb" "$mnt/tmp/"
}

# apt-get must resolve inagg's Depends by itself (the root's cache has them). The
# root has no python3: python3-inagg is tested unpacked (tests/pkg/deb.sh).
install_debs() {
	in_root apt-get install -y --no-install-recommends \
		"/tmp/${inagg_deb##*/}" "/tmp/${dkms_deb##*/}" "/tmp/${lib_deb##*/}"
}

depends_installed() {
	local p
	for p in libbpf1 libjson-c5 libmnl0 iproute2 dkms; do
		in_root dpkg-query -W -f='${Package} ${Status}\n' "$p" |
			grep 'install ok installed' || return 1
	done
}

kver=
module_built() {
	local ko
	kver=$(ls "$mnt/lib/modules" | head -n 1)
	ko=$mnt/lib/modules/$kver/updates/dkms/inagg.ko
	echo "kernel $kver"
	in_root dkms status inagg && in_root dkms status inagg | grep -q "$kver.*installed" &&
	[ -f "$ko" ] && /sbin/modinfo -F vermagic "$ko" | grep -q "^$kver " &&
	in_root /sbin/modinfo -F name "/lib/modules/$kver/updates/dkms/inagg.ko" | grep -qx inagg
}

# The package's prebuilt module, when it is for the root's kernel, is what DKMS installed
# there: loaded from its tarball, not compiled (a build leaves its log).
prebuilt_installed() {
	local tb=$mnt/usr/share/inagg-dkms/inagg-$version.dkms.tar.gz d
	d=$mnt/var/lib/dkms/inagg/$version/$kver/$(uname -m)
	[ -f "$tb" ] || { echo "no prebuilt module in the package"; return 0; }
	mkdir -p "$tmp/tb" && tar -C "$tmp/tb" -xzf "$tb" || return 1
	[ -d "$tmp/tb/dkms_main_tree/$kver" ] || {
		echo "prebuilt for $(ls "$tmp/tb/dkms_main_tree"), the root's kernel is $kver"; return 0; }
	cmp "$tmp/tb/dkms_main_tree/$kver/$(uname -m)/module/inagg.ko" \
		"$mnt/lib/modules/$kver/updates/dkms/inagg.ko" && [ ! -e "$d/log/make.log" ]
}

# A new kernel's headers run this hook; with the module gone it must come back.
abi_bump_rebuilds() {
	in_root dkms unbuild "inagg/$version" -k "$kver" &&
	! in_root dkms status inagg | grep -q "$kver" &&
	[ ! -e "$mnt/lib/modules/$kver/updates/dkms/inagg.ko" ] &&
	in_root /etc/kernel/header_postinst.d/dkms "$kver" &&
	[ -f "$mnt/lib/modules/$kver/updates/dkms/inagg.ko" ] &&
	in_root dkms status inagg | grep -q "$kver.*installed" &&
	[ -f "$mnt/var/lib/dkms/inagg/$version/$kver/$(uname -m)/log/make.log" ]
}

modules_load() {
	grep -qx inagg "$mnt/usr/lib/modules-load.d/inagg.conf"
}

# Every file the man page lists for the two packages is in the root.
files_as_man_page_says() {
	local path pkg f n=0
	while read -r path pkg; do
		path=${path//VERSION/$version}
		case $pkg in inagg | inagg-dkms | libinagg1) ;; *) continue ;; esac
		n=$((n + 1))
		for f in "$mnt"$path; do
			[ -e "$f" ] || { echo "missing: $path ($pkg)"; return 1; }
		done
	done < <(zcat "$mnt/usr/share/man/man8/inagg.8.gz" | manfiles)
	echo "$n paths checked"
	[ "$n" -ge 10 ]
}

# The postinst made inaggd's group (systemd-sysusers), a system group.
group_made() {
	local gid
	gid=$(in_root getent group inagg | cut -d: -f3)
	echo "group inagg: gid $gid"
	[ -n "$gid" ] && [ "$gid" -lt 1000 ]
}

ledger_show() {
	in_root /usr/bin/inagg ledger show | tee /dev/stderr | grep -qE '^backend +user'
}

inaggd_runs() {
	in_root /usr/sbin/inaggd -h | grep -q 'Usage: inaggd'
}

veth() {
	ip netns add "$NS" &&
	ip -n "$NS" link add eth1 type veth peer name eth2 &&
	ip -n "$NS" link set eth1 up && ip -n "$NS" link set eth2 up
}

in_ns() { nsenter --net="/run/netns/$NS" chroot "$mnt" env -i LC_ALL=C "$@"; }

attach() {
	in_ns /usr/bin/inagg dev attach eth1 --switch pkgsw &&
	ip -n "$NS" link show eth1 | grep -q 'prog/xdp' &&
	[ -e "$mnt/sys/fs/bpf/inagg/pkgsw" ]
}

status() {
	in_ns /usr/bin/inagg dev show --switch pkgsw | tee /dev/stderr | grep -E '^ +eth1 .*ia_xdp'
}

detach() {
	in_ns /usr/bin/inagg dev detach eth1 --switch pkgsw | tee /dev/stderr | grep -q 'unpinned' &&
	! ip -n "$NS" link show eth1 | grep -q 'prog/xdp' &&
	# The last port gone, so are the switch's pins.
	[ ! -e "$mnt/sys/fs/bpf/inagg/pkgsw" ]
}

completion() {
	in_root bash -c 'source /usr/share/bash-completion/completions/inagg
		COMP_WORDS=(inagg led s); COMP_CWORD=2; _inagg; echo "${COMPREPLY[*]}"' |
		tee /dev/stderr | grep -qw show
}

# Removal disables the ports' units the operator enabled (their links go) and keeps
# the state; purge removes the state (/var/lib/inagg) and the pins.
wants=/etc/systemd/system/multi-user.target.wants
remove() {
	mkdir -p "$mnt$wants" "$mnt/var/lib/inagg" "$mnt/sys/fs/bpf/inagg/pkgsw" &&
	ln -s /lib/systemd/system/inagg-attach@.service "$mnt$wants/inagg-attach@eth1.service" &&
	echo '{}' >"$mnt/var/lib/inagg/agent-pkgsw.json" &&
	in_root apt-get remove -y inagg &&
	[ ! -e "$mnt/usr/bin/inagg" ] && [ ! -L "$mnt$wants/inagg-attach@eth1.service" ] &&
	[ -f "$mnt/var/lib/inagg/agent-pkgsw.json" ] && [ -f "$mnt/etc/inagg/inaggd.conf" ]
}

# A job running across the upgrade: the installed inagg builds the example network (the
# paper's Fig. 1) in namespaces of the root, the installed inaggd admits and configures a job
# on it; after the upgrade the new inaggd, started in its place, recovers the job from its
# state file and ends it. (No systemd runs in the root: the package's restart is the test's.)
net=/usr/share/doc/inagg/examples/topo.json
sock=$mnt/run/inagg/inaggd.sock
start_inaggd() {
	: >"$tmp/inaggd.log"
	chroot "$mnt" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LC_ALL=C \
		/usr/sbin/inaggd -t "$net" -n pk -m 0 2>>"$tmp/inaggd.log" &
	dpid=$!
	BUILD=$build wait_daemon "$sock" "$dpid" "$tmp/inaggd.log" 60
}

job_running() {
	in_root /usr/bin/inagg net up -t "$net" -n pk --attach >/dev/null &&
	start_inaggd && in_root /usr/bin/inagg job submit -k 2 -J 5 >/dev/null &&
	in_root /usr/bin/inagg job list | tee /dev/stderr | grep -q '^job 5: active'
}

# After the upgrade: the old inaggd still answers with the job; the new one, started in its
# place, recovers it (configured in the pinned maps, admitted in the ledger) and ends it.
job_kept() {
	in_root /usr/bin/inagg job list | grep -q '^job 5: active' || { echo "job lost"; return 1; }
	kill "$dpid" && wait "$dpid"
	dpid=
	start_inaggd || return 1
	grep -q 'job 5 recovered' "$tmp/inaggd.log" || { cat "$tmp/inaggd.log"; return 1; }
	in_root /usr/bin/inagg job list | tee /dev/stderr | grep -q '^job 5: active' &&
	in_root /usr/bin/inagg job end -J 5 && ! in_root /usr/bin/inagg job list | grep -q '^job 5:' &&
	kill "$dpid" && wait "$dpid"
	dpid=
	in_root /usr/bin/inagg net down -n pk >/dev/null
}

# The tree make deb copied, its version raised (cli.h and the changelog): a new upstream
# version, built as make deb builds.
next=
build_next() {
	local src=$build/pkg/inagg-$version d=$tmp/next/inagg-$version
	next=$version.1
	[ -f "$src/debian/rules" ] || { echo "no $src (make deb)"; return 1; }
	mkdir -p "$tmp/next" && cp -a "$src" "$d" && rm -rf "$d/debian/build" &&
	sed -i "s/^#define INAGG_VERSION \"$version\"/#define INAGG_VERSION \"$next\"/" \
		"$d/user/inagg/cli.h" &&
	{ printf 'inagg (%s) unstable; urgency=medium\n\n  * Test upgrade.\n\n' "$next"
	  printf ' -- inagg developers <inagg@example.org>  %s\n\n' "$(date -R)"
	  cat "$src/debian/changelog"; } >"$d/debian/changelog" &&
	(cd "$d" && dpkg-buildpackage -b -us -uc -J"$(nproc)" >"$tmp/next/build.log" 2>&1) ||
		{ tail -n 20 "$tmp/next/build.log"; return 1; }
	ls "$tmp/next"/*_"$next"_*.deb
}

upgrade() {
	local p
	[ -n "$next" ] || return 1
	echo 'INAGG_ATTACH_ARGS="-m skb"' >>"$mnt/etc/inagg/attach.conf"
	for p in inagg inagg-dkms libinagg1; do cp "$tmp/next/${p}_${next}"_*.deb "$mnt/tmp/"; done
	in_root sh -c "apt-get install -y --no-install-recommends /tmp/inagg_${next}_*.deb \
		/tmp/inagg-dkms_${next}_*.deb /tmp/libinagg1_${next}_*.deb" || return 1
	[ "$(in_root dpkg-query -W -f='${Version}' inagg)" = "$next" ] &&
	in_root /usr/bin/inagg --version | grep -qx "inagg $next" || { echo "not $next"; return 1; }
	ip -n "$NS" link show eth1 | grep -q 'prog/xdp' || { echo "eth1 detached"; return 1; }
	[ -e "$mnt/sys/fs/bpf/inagg/pkgsw" ] || { echo "pins gone"; return 1; }
	in_root dkms status inagg
	in_root dkms status inagg | grep -q "^inagg/$next, $kver.*installed" &&
	! in_root dkms status inagg | grep -q "^inagg/$version," &&
	[ ! -e "$mnt/usr/src/inagg-$version" ] || { echo "DKMS not moved to $next"; return 1; }
	grep -q 'm skb' "$mnt/etc/inagg/attach.conf" || { echo "configuration lost"; return 1; }
	version=$next
}

purge() {
	in_root apt-get purge -y inagg inagg-dkms libinagg1 &&
	[ ! -e "$mnt/usr/bin/inagg" ] && [ ! -e "$mnt/lib/systemd/system/inaggd.service" ] &&
	[ ! -e "$mnt/var/lib/inagg" ] && [ ! -e "$mnt/sys/fs/bpf/inagg" ] &&
	[ ! -e "$mnt/lib/modules/$kver/updates/dkms/inagg.ko" ] &&
	[ ! -e "$mnt/usr/src/inagg-$version" ] && [ ! -e "$mnt/etc/inagg" ]
}

if [ -z "$inagg_deb" ] || [ -z "$dkms_deb" ]; then
	t "pkg: packages built (make deb)" false
	finish
fi
t "pkg: Debian 12 root with dkms and kernel headers ($root)" make_root
t "pkg: mount an overlay of the root" mount_root || true
if [[ ${results[-1]} == "not ok"* ]]; then
	finish
fi
t "pkg: apt-get installs inagg and inagg-dkms" install_debs
t "pkg: Depends brought libbpf1 libjson-c5 libmnl0 iproute2 dkms" depends_installed
t "pkg: dkms built inagg.ko for the root's kernel" module_built
t "pkg: the package's prebuilt inagg.ko installed, not compiled, on its kernel" prebuilt_installed
t "pkg: the kernel headers' hook builds it again (ABI bump)" abi_bump_rebuilds
t "pkg: modules-load.d loads inagg at boot" modules_load
t "pkg: every file where inagg(8) says" files_as_man_page_says
t "pkg: the postinst made the system group inagg" group_made
t "pkg: installed inagg ledger show" ledger_show
t "pkg: installed inaggd runs" inaggd_runs
t "pkg: a veth in namespace $NS" veth
t "pkg: installed inagg dev attach" attach
t "pkg: installed inagg dev show" status
t "pkg: a job admitted and configured by the installed inaggd on the example network" \
	job_running
t "pkg: the next version's packages built (dpkg-buildpackage)" build_next
t "pkg: apt-get upgrades to it with a port attached: still attached, pins, DKMS, conffile" \
	upgrade
t "pkg: the job survives the upgrade: the new inaggd recovers it, then ends it" job_kept
t "pkg: installed inagg dev detach, the last port: its pins removed" detach
t "pkg: installed bash completion" completion
t "pkg: apt-get remove inagg disables the ports' units, keeps state and configuration" remove
t "pkg: apt-get purge removes the packages, the module, the state and the pins" purge
finish
