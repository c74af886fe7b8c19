#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Builds, once, the Debian 12 root that tests/pkg/chroot.sh installs the
# packages into: debootstrap (minbase) from the mirror this machine's apt
# uses, then what a router VM has before inagg: dkms, Debian's kernel
# headers (linux-headers-amd64) and systemd (systemd-sysusers makes inagg's group). The libraries inagg depends on are only
# downloaded, so that installing the .deb must resolve its Depends (offline).
# A root is rebuilt when this script changes; an unfinished one is never used.
# Usage: packaging/mkroot.sh ROOT       (prints what it does on stderr)
set -eu
root=${1:?usage: mkroot.sh ROOT}
stamp=$(sha256sum "$0" | cut -c1-16)
if [ -f "$root/.inagg-root" ] && [ "$(cat "$root/.inagg-root")" = "$stamp" ]; then
	exit 0
fi
[ "$(id -u)" = 0 ] || { echo "mkroot: needs root (debootstrap, chroot)" >&2; exit 1; }
command -v debootstrap >/dev/null ||
	{ echo "mkroot: debootstrap missing (scripts/deps.sh check)" >&2; exit 1; }

# The mirror: the first bookworm source of this machine's apt configuration.
mirror=$(cat /etc/apt/sources.list.d/*.sources 2>/dev/null |
	awk '/^URIs:/ { u = $2 } /^Suites:/ && / bookworm( |$)/ && u { print u; exit }')
[ -n "$mirror" ] || mirror=$(grep -hsE '^deb +[^ ]+ +bookworm +' /etc/apt/sources.list \
	/etc/apt/sources.list.d/*.list | awk '{ print $2; exit }')
[ -n "$mirror" ] || { echo "mkroot: no bookworm source in /etc/apt" >&2; exit 1; }

tmp=$root.tmp
rm -rf "$tmp" "$root"
mkdir -p "$(dirname "$root")"
echo "mkroot: debootstrap bookworm from $mirror" >&2
debootstrap --variant=minbase bookworm "$tmp" "$mirror" >"$tmp.log" 2>&1 || {
	tail -n 20 "$tmp.log" >&2
	exit 1
}
# The same sources as this machine (security and updates carry the kernel).
rm -f "$tmp/etc/apt/sources.list"
cp /etc/apt/sources.list.d/*.sources "$tmp/etc/apt/sources.list.d/" 2>/dev/null || true
cp /etc/apt/sources.list "$tmp/etc/apt/" 2>/dev/null || true
# Nothing starts services inside the root.
printf '#!/bin/sh\nexit 101\n' >"$tmp/usr/sbin/policy-rc.d"
chmod +x "$tmp/usr/sbin/policy-rc.d"

in_root() {
	unshare -m --propagation private sh -c '
		r=$1; shift
		mount -t proc proc "$r/proc" && mount --rbind /dev "$r/dev" &&
		mount -t sysfs sys "$r/sys" && exec chroot "$r" "$@"' sh "$tmp" "$@"
}
export DEBIAN_FRONTEND=noninteractive LC_ALL=C
echo "mkroot: dkms, linux-headers-amd64, systemd" >&2
in_root apt-get update -qq >>"$tmp.log" 2>&1 &&
in_root apt-get install -y -qq --no-install-recommends dkms linux-headers-amd64 systemd \
	>>"$tmp.log" 2>&1 &&
in_root apt-get install -y -qq --download-only libbpf1 libjson-c5 libmnl0 iproute2 \
	>>"$tmp.log" 2>&1 || { tail -n 20 "$tmp.log" >&2; exit 1; }
echo "$stamp" >"$tmp/.inagg-root"
mv "$tmp" "$root"
mv "$tmp.log" "$root.log"
