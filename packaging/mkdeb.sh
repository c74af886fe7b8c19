#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Makes a .deb of an installed tree with dpkg-deb (no debhelper needed).
# Usage: packaging/mkdeb.sh NAME STAGE OUTDIR VERSION
#   NAME    inagg or inagg-dkms: packaging/debian/NAME.* are its control file,
#           maintainer scripts, triggers and shlibs (@VERSION@, @ARCH@, @SIZE@,
#           @DEPENDS@ filled in; @ARCH@ is all for a package with no program or
#           prebuilt module)
#   STAGE   the files, as "make install DESTDIR=STAGE" left them
# Depends of the binaries and shared libraries come from dpkg-shlibdeps, as
# debhelper would make them.
# Prints the path of the package.
set -eu
name=$1 stage=$2 outdir=$3 version=$4
here=$(cd "$(dirname "$0")" && pwd)
arch=$(dpkg --print-architecture)
# A package with nothing built for this machine (no program, library or prebuilt module)
# is for all.
[ -n "$(find "$stage" -type f \( -perm -u+x -o -name '*.dkms.tar.gz' -o -name '*.so.*' \) \
	-print -quit)" ] ||
	arch=all
[ -f "$here/debian/$name.control" ] || { echo "mkdeb: no $name.control" >&2; exit 1; }
rm -rf "$stage/DEBIAN"
mkdir -p "$stage/DEBIAN" "$outdir"

depends=
bins=$(find "$stage" -type f \( -perm -u+x -path '*/sbin/*' -o -path '*/lib/*.so.*' \) | sort)
if [ -n "$bins" ]; then
	tmp=$(mktemp -d)
	mkdir "$tmp/debian" && : >"$tmp/debian/control"
	depends=$(cd "$tmp" && dpkg-shlibdeps -O $(for b in $bins; do
		printf ' -e%s' "$(cd "$OLDPWD" && realpath "$b")"; done) 2>/dev/null |
		sed -n 's/^shlibs:Depends=//p')
	rm -rf "$tmp"
	[ -n "$depends" ] || { echo "mkdeb: dpkg-shlibdeps found nothing" >&2; exit 1; }
fi
size=$(du -sk --exclude=DEBIAN "$stage" | cut -f1)
sed -e "s/@VERSION@/$version/g" -e "s/@ARCH@/$arch/g" -e "s/@SIZE@/$size/g" \
	-e "s/@DEPENDS@/$depends/g" "$here/debian/$name.control" >"$stage/DEBIAN/control"
for s in preinst postinst prerm postrm triggers shlibs; do
	[ -f "$here/debian/$name.$s" ] || continue
	sed "s/@VERSION@/$version/g" "$here/debian/$name.$s" >"$stage/DEBIAN/$s"
	case $s in *inst | *rm) chmod 0755 "$stage/DEBIAN/$s" ;; esac
done
# Everything under /etc is the operator's to change: a conffile.
if [ -d "$stage/etc" ]; then
	(cd "$stage" && find etc -type f | sort | sed 's|^|/|') >"$stage/DEBIAN/conffiles"
fi
(cd "$stage" && find . -path ./DEBIAN -prune -o -type f -printf '%P\n' | sort |
	xargs -r md5sum) >"$stage/DEBIAN/md5sums"
deb=$outdir/${name}_${version}_$(sed -n 's/^Architecture: //p' "$stage/DEBIAN/control").deb
dpkg-deb --root-owner-group -Zxz --build "$stage" "$deb" >/dev/null
echo "$deb"
