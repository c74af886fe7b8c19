#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Runs the kmod test programs inside a qemu guest (TCG) that boots Debian's
# kernel matching the headers inagg.ko was built against, with the module
# loaded, and relays the guest's KTAP result lines on stdout, renumbered.
# The test programs are the ones built for the host (build/tests/kmod/*);
# their shared libraries are copied into the initramfs.
#
# Env: BUILD (default build), VM_TIMEOUT (seconds, default 900),
#      VM_TESTS (space-separated program names to run, default all).
set -u
BUILD=${BUILD:-build}
timeout_s=${VM_TIMEOUT:-900}
vm=$BUILD/vm
ko=$BUILD/kmod/inagg.ko
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

# The kernel image of the same version as the headers, downloaded once.
kernel=$vm/vmlinuz-$kver
if [ ! -f "$kernel" ]; then
	pkg=linux-image-$kver
	rm -rf "$vm/deb" && mkdir -p "$vm/deb"
	if ! (cd "$vm/deb" && apt-get download "$pkg" >/dev/null 2>&1); then
		apt-get update -qq >/dev/null 2>&1
		(cd "$vm/deb" && apt-get download "$pkg" >/dev/null 2>&1)
	fi
	deb=$(ls "$vm/deb/${pkg}"_*.deb 2>/dev/null | head -n 1)
	if [ -z "$deb" ] || ! dpkg-deb -x "$deb" "$vm/deb/x" ||
	   ! cp "$vm/deb/x/boot/vmlinuz-$kver" "$kernel.tmp"; then
		result "not ok" "vm: fetch $pkg"
		finish 1
	fi
	mv "$kernel.tmp" "$kernel"
	rm -rf "$vm/deb"
fi

# The initramfs: busybox, the module, the test programs and their libraries.
root=$vm/root
rm -rf "$root"
mkdir -p "$root"/{bin,dev,proc,sys,tmp,run,tests}
cp /bin/busybox "$root/bin/busybox"
cp "$ko" "$root/inagg.ko"
progs=()
for t in "$BUILD"/tests/kmod/*; do
	[ -f "$t" ] && [ -x "$t" ] || continue
	name=$(basename "$t")
	if [ -n "${VM_TESTS:-}" ] && [[ " $VM_TESTS " != *" $name "* ]]; then
		continue
	fi
	cp "$t" "$root/tests/"
	progs+=("$name")
	for lib in $(ldd "$t" | grep -oE '/[^ ]+'); do
		[ -f "$root$lib" ] && continue
		mkdir -p "$root$(dirname "$lib")"
		cp -L "$lib" "$root$lib"
	done
done
if [ ${#progs[@]} -eq 0 ]; then
	result "not ok" "vm: no test programs in $BUILD/tests/kmod"
	finish 1
fi

cat >"$root/init" <<'EOF'
#!/bin/busybox sh
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mount -t tmpfs tmp /tmp
mount -t tmpfs run /run
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
out=/dev/ttyS1
stty -F $out raw -echo 2>/dev/null
echo "@@ boot $(uname -r)" >$out
insmod /inagg.ko
echo "@@ insmod $?" >$out
export INAGG_KO=/inagg.ko INAGG_EXPECT_BACKEND=kernel
for t in /tests/*; do
	echo "@@ run ${t##*/}" >$out
	"$t" >$out 2>&1 </dev/null
	echo "@@ exit ${t##*/} $?" >$out
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

# Boot. ttyS0 is the kernel console, ttyS1 carries the results.
console=$vm/console.log
out=$vm/results.log
rm -f "$console" "$out"
timeout "$timeout_s" qemu-system-x86_64 -accel tcg -m 512 -smp 2 -nographic \
	-monitor none -no-reboot -kernel "$kernel" -initrd "$vm/initrd.gz" \
	-append "console=ttyS0 panic=-1 quiet slab_nomerge rdinit=/init" \
	-serial "file:$console" -serial "file:$out" </dev/null >/dev/null 2>"$vm/qemu.err"
qrc=$?
[ -f "$out" ] || : >"$out"
tr -d '\r' <"$out" >"$out.txt"

# Relay: renumber every top-level KTAP result as "<program>: <name>".
declare -A exited
prog= failed_in_prog=0 in_dmesg=0 done=0 status=0
while IFS= read -r line; do
	case $line in
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
		echo "$line" >>"$vm/dmesg.txt.new"
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
mv -f "$vm/dmesg.txt.new" "$vm/dmesg.txt" 2>/dev/null

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
else
	result "not ok" "vm: guest did not finish (qemu status $qrc, timeout ${timeout_s}s)"
	tail -n 30 "$console" 2>/dev/null | tr -d '\r' | sed 's/^/# /'
	sed 's/^/# /' "$vm/qemu.err" 2>/dev/null
	status=1
fi
finish "$status"
