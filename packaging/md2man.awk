# SPDX-License-Identifier: GPL-2.0
# Renders the Markdown of docs/*.md as man(7) source, so that the man pages
# are made from the docs at build time and cannot drift from them. Only the
# subset the docs use: ATX headings, paragraphs, code blocks indented by four
# spaces, "*"/"-"/"1." lists, pipe tables (for tbl), `code`, **bold**, *em*
# and [links](url). The page header (.TH, NAME) is packaging/mkman.sh's.
#
# Variables (awk -v):
#   sect  render only the "## sect..." section (its heading starts so) (default: the whole document,
#         its "#" title left out, "##" becoming .SH in capitals)
#   as    the .SH name of that section (default: sect in capitals)
#   skip  "|"-separated "##" headings to leave out of a whole document

function esc(s) {
	gsub(/\\/, "\\e", s)
	return s
}

function code(s) {
	gsub(/-/, "\\-", s)
	return s
}

# Inline markup of one line of text (backslashes already escaped).
function inline(s,    out, n, parts, i, t) {
	# Bold first, as it may hold code; \001 and \002 stand for its ends.
	while (match(s, /\*\*[^*]+\*\*/))
		s = substr(s, 1, RSTART - 1) "\001" substr(s, RSTART + 2, RLENGTH - 4) \
		    "\002" substr(s, RSTART + RLENGTH)
	n = split(s, parts, "`")
	out = ""
	for (i = 1; i <= n; i++) {
		t = parts[i]
		if (i % 2 == 0 && i < n) {
			out = out "\\fB\\%" code(t) "\\fR"	# \\%: not hyphenated
			continue
		}
		if (i % 2 == 0)
			t = "`" t	# an unmatched backtick stays as it is
		while (match(t, /\[[^]]+\]\([^)]+\)/)) {
			lk = substr(t, RSTART + 1, RLENGTH - 2)
			sub(/\]\(/, " (", lk)
			t = substr(t, 1, RSTART - 1) lk ")" substr(t, RSTART + RLENGTH)
		}
		while (match(t, /(^|[ (])\*[^ *][^*]*\*([ ,.;:)]|$)/)) {
			pre = substr(t, RSTART, 1) == "*" ? "" : substr(t, RSTART, 1)
			body = substr(t, RSTART + length(pre) + 1)
			stop = index(body, "*")
			t = substr(t, 1, RSTART - 1) pre "\\fI" substr(body, 1, stop - 1) "\\fR" \
			    substr(body, stop + 1)
		}
		out = out t
	}
	gsub(/\001/, "\\fB", out)
	gsub(/\002/, "\\fR", out)
	gsub(/\\fR\\fB/, "", out)
	return out
}

# A line of running text: man(7) takes a leading "." or "'" as a request.
function emit(s) {
	if (s ~ /^[.']/)
		s = "\\&" s
	print s
}

function end_code() {
	if (!incode)
		return
	while (ncodeblank > 0 && codebuf[ncode] == "") {	# trailing blank lines
		ncode--
		ncodeblank--
	}
	print ".PP"
	print ".RS 4"
	print ".nf"
	for (i = 1; i <= ncode; i++)
		print (codebuf[i] ~ /^[.']/ ? "\\&" : "") code(codebuf[i])
	print ".fi"
	print ".RE"
	incode = 0
	ncode = 0
	ncodeblank = 0
}

# A .SH title: capitals, no markup (the title is bold anyway).
function shtext(s) {
	gsub(/[`*]/, "", s)
	return code(esc(toupper(s)))
}

# Only the last column wraps (a text block); the others keep their width.
function cell(s, last) {
	sub(/^ +/, "", s)
	sub(/ +$/, "", s)
	s = inline(esc(s))
	return last ? "T{\n" s "\nT}" : s
}

function end_table(    r, c, fmt, hdr, line) {
	if (!ntab)
		return
	print ".PP"
	print ".TS"
	print "tab(\t);"
	hdr = ""
	fmt = ""
	for (c = 1; c <= ncols; c++) {
		hdr = hdr (c > 1 ? " " : "") "lb"
		fmt = fmt (c > 1 ? " " : "") (c == ncols ? "lx" : "l")
	}
	print hdr
	print fmt "."
	for (r = 1; r <= ntab; r++) {
		line = ""
		for (c = 1; c <= ncols; c++)
			line = line (c > 1 ? "\t" : "") cell(tab[r, c], c == ncols)
		print line
	}
	print ".TE"
	ntab = 0
}

# The text of a paragraph or list item is set as one, so that markup may
# span the lines of the source.
function end_para() {
	if (pbuf != "")
		emit(inline(esc(pbuf)))
	pbuf = ""
}

function flush() {
	end_para()
	end_code()
	end_table()
	fresh = 1
}

function heading(level, text) {
	flush()
	inlist = 0
	if (sect != "") {
		if (level == 2) {
			on = (index(text, sect) == 1)
			if (on)
				printf ".SH \"%s\"\n", as != "" ? as : shtext(text)
			return
		}
		if (level < 2)
			on = 0
		if (on)
			printf ".SS \"%s\"\n", inline(esc(text))
		return
	}
	if (level == 1) {
		on = 0
		return
	}
	if (level == 2) {
		on = (index("|" skip "|", "|" text "|") == 0)
		if (on)
			printf ".SH \"%s\"\n", shtext(text)
		return
	}
	if (on)
		printf ".SS \"%s\"\n", inline(esc(text))
}

BEGIN {
	on = (sect == "")
	fresh = 1
}

/^#+ / {
	level = index($0, " ") - 1
	text = substr($0, level + 2)
	heading(level, text)
	next
}

!on { next }

/^$/ {
	if (incode) {
		codebuf[++ncode] = ""
		ncodeblank++
		next
	}
	flush()
	blank = 1
	next
}

# A code block: indented by four after a blank line (six in a list item).
/^    / && (incode || (blank && (!inlist || /^      /))) {
	end_table()
	if (!incode)
		codeind = inlist ? 6 : 4
	incode = 1
	codebuf[++ncode] = esc(substr($0, codeind + 1))
	ncodeblank = 0
	blank = 0
	next
}

/^\|/ {
	end_code()
	if ($0 ~ /^\|[-:| ]+\|$/)	# the header's underline
		next
	line = $0
	sub(/^\| */, "", line)
	sub(/ *\|$/, "", line)
	n = split(line, cols, / *\| */)
	ntab++
	if (n > ncols || ntab == 1)
		ncols = n
	for (c = 1; c <= n; c++)
		tab[ntab, c] = cols[c]
	blank = 0
	next
}

/^ *([*-]|[0-9]+\.) / {
	flush()
	inlist = 1
	item = $0
	sub(/^ */, "", item)
	mark = item
	sub(/ .*/, "", mark)
	sub(/^[^ ]+ +/, "", item)
	printf ".IP %s %d\n", mark ~ /^[0-9]/ ? mark : "\\(bu", mark ~ /^[0-9]/ ? 4 : 2
	pbuf = item
	fresh = 0
	blank = 0
	next
}

{
	if (incode || ntab) {
		flush()
		fresh = 1
	}
	if (fresh) {
		end_para()
		if (inlist && $0 ~ /^ /)
			print ".IP \"\" 2"
		else {
			inlist = 0
			print ".PP"
		}
	}
	line = $0
	sub(/^ +/, "", line)
	pbuf = pbuf == "" ? line : pbuf " " line
	fresh = 0
	blank = 0
}

END { flush() }
