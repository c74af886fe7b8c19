# SPDX-License-Identifier: GPL-2.0
# Prints "PATH PACKAGE" for each row of the INSTALLED FILES table of a man
# page's source (as packaging/mkman.sh renders docs/router-vm.md), so that the
# tests check the files against what the installed page says.
# Usage: zcat inagg.8.gz | awk -F '\t' -f tests/pkg/manfiles.awk
/^\.SH/ { on = ($0 ~ /"INSTALLED FILES"/); next }
!on { next }
/^\.TS/ { intab = 1; fmt = 1; hdr = 1; next }
/^\.TE/ { intab = 0; next }
!intab { next }
fmt { if ($0 ~ /\.$/) fmt = 0; next }
NF < 2 { next }
hdr { hdr = 0; next }
{
	p = $1
	k = $2
	gsub(/\\f[BIRP]|\\%|\\&/, "", p)
	gsub(/\\-/, "-", p)
	gsub(/\\f[BIRP]|\\%|\\&/, "", k)
	gsub(/ /, "_", k)
	print p, k
}
