#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# inagg eval fig6 (KTAP): both use cases' curves, normalised to all-red, on
# the project's own docs/ as the corpus: one point per k, each in (0, 1],
# falling with k and never below all-blue; the PS curve below word count's;
# bad input refused in words.
BUILD=${BUILD:-build}
INAGG=$BUILD/inagg
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

. "$(dirname "$0")/../ktap.sh"

"$INAGG" -j eval fig6 --corpus docs -d 4 --seeds 3 -k 1,2,4,8 >"$tmp/out.json" 2>"$tmp/err"
t "eval fig6 runs" test $? -eq 0
t "four points, both applications" \
	test "$(jq '[.rows[] | select(.wordcount > 0 and .ps > 0)] | length' "$tmp/out.json")" = 4
t "every point in (0, 1]" \
	jq -e 'all(.rows[]; .wordcount <= 1 and .ps <= 1)' "$tmp/out.json"
t "curves fall with k" \
	jq -e '[.rows[] | .wordcount] as $w | [.rows[] | .ps] as $p |
	       all(range(1; $w | length); $w[.] <= $w[. - 1] and $p[.] <= $p[. - 1])' "$tmp/out.json"
t "never below all-blue" \
	jq -e '.all_blue as $b | all(.rows[]; .wordcount >= $b.wordcount and .ps >= $b.ps)' \
	"$tmp/out.json"
t "the PS gains more than word count" jq -e 'all(.rows[]; .ps <= .wordcount)' "$tmp/out.json"
t "corpus size reported" \
	jq -e '.corpus.words > 10000 and .corpus.unique > 1000 and .corpus.files > 3' "$tmp/out.json"
t "text output has both columns" \
	bash -c "'$INAGG' eval fig6 --corpus docs -d 3 --seeds 1 | grep -q 'wordcount.*ps'"
out=$("$INAGG" eval fig6 --corpus "$tmp/none" 2>&1)
t "missing corpus: non-zero exit naming the path" \
	bash -c "! '$INAGG' eval fig6 --corpus '$tmp/none' >/dev/null 2>&1 && [[ '$out' == *'$tmp/none'* ]]"
t "--keys 0 refused" bash -c "! '$INAGG' eval fig6 --corpus docs --keys 0 2>/dev/null"
finish
