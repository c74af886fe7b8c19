#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Installs the Debian packages inagg needs, only those missing.
# Usage: scripts/deps.sh [build|check|demo|bench]
set -e
need="make gcc clang llvm pkg-config libjson-c-dev libbpf-dev libelf-dev zlib1g-dev bpftool
      iproute2 libmnl-dev linux-source-6.1 dpkg-dev"
case "${1:-build}" in
check) need="$need qemu-system-x86 busybox-static linux-headers-amd64 cpio kmod iputils-ping
	debootstrap man-db groff-base python3-torch python3-sklearn jq procps cppcheck
	debhelper dh-dkms dh-python lintian python3-venv python3-numpy" ;;
demo) need="$need graphviz gnuplot-nox" ;;
# The PyTorch comparison (docs/pytorch.md) uses Debian's /usr/bin/python3.
bench) need="$need python3-torch python3-sklearn gnuplot-nox linux-perf" ;;
esac
missing=
for p in $need; do
	# A package whose triggers another install is running is installed too.
	dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null |
		grep -qE '^install ok (installed|triggers-pending|triggers-awaited)' ||
		missing="$missing $p"
done
[ -z "$missing" ] && exit 0
echo "installing:$missing" >&2
[ "$(id -u)" = 0 ] || { echo "deps: need root to install:$missing" >&2; exit 1; }
export DEBIAN_FRONTEND=noninteractive
# Another apt-get (a second build, unattended upgrades) holds dpkg's lock: wait for it.
apt_get() { apt-get -o DPkg::Lock::Timeout=600 "$@"; }
apt_get install -y -qq $missing >/dev/null 2>&1 || {
	apt_get update -qq >/dev/null
	apt_get install -y -qq $missing >/dev/null
}
