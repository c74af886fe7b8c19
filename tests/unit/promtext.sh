#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# tests/net/promtext.py, the strict reader of Prometheus' text format that the
# tests of inagg stats show --prometheus use, refuses what the format does not
# allow (a lax reader would pass a broken exporter). KTAP.
here=$(dirname "$0")/..
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$here/ktap.sh"

good='# HELP inagg_a_total A.
# TYPE inagg_a_total counter
inagg_a_total{switch="s\"1\\",port="uplink"} 3
inagg_a_total{switch="s2",port="uplink"} 0
# HELP inagg_b B.
# TYPE inagg_b gauge
inagg_b 0.25
'

# $1: the text; reads it as promtext.py does, prefix inagg_.
reads() { printf '%s' "$1" >"$tmp/in" && python3 "$here/net/promtext.py" "$tmp/in" inagg_; }
refuses() {
	local out
	out=$(reads "$1" 2>&1) && { echo "accepted: $1"; return 1; }
	grep -q -- "$2" <<<"$out" || { echo "$out (want $2)"; return 1; }
}

accepts() {
	reads "$good" >"$tmp/out" && [ "$(wc -l <"$tmp/out")" = 3 ] &&
	grep -qF '"switch": "s\"1\\"' "$tmp/out"
}
t "promtext: a valid exposition, escapes read" accepts
t "promtext: a sample without HELP and TYPE" refuses 'inagg_a 1
' "HELP and TYPE"
t "promtext: HELP without TYPE" refuses '# HELP inagg_a A.
' "HELP without TYPE"
t "promtext: a family's samples apart" refuses "$good"'inagg_a_total{switch="s3"} 1
' "HELP and TYPE"
t "promtext: a counter not *_total" refuses '# HELP inagg_a A.
# TYPE inagg_a counter
inagg_a 1
' "_total"
t "promtext: a value that is no number" refuses '# HELP inagg_a A.
# TYPE inagg_a gauge
inagg_a 1,5
' "not a number"
t "promtext: a metric without the prefix" refuses '# HELP a A.
# TYPE a gauge
a 1
' "bad metric name"
t "promtext: an unquoted label value" refuses '# HELP inagg_a A.
# TYPE inagg_a gauge
inagg_a{switch=s1} 1
' "label"
t "promtext: a sample repeated" refuses '# HELP inagg_a A.
# TYPE inagg_a gauge
inagg_a{x="1"} 1
inagg_a{x="1"} 2
' "repeated"
t "promtext: no newline at the end" refuses '# HELP inagg_a A.
# TYPE inagg_a gauge
inagg_a 1' "newline"
finish
