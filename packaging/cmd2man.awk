# SPDX-License-Identifier: GPL-2.0
# Renders one command's -h (made from the option table that parses it) as a
# subsection of man(7) COMMANDS: the usage lines as synopsis, the description
# as paragraphs, each option as a tagged paragraph, the text after the options
# as paragraphs. Used by packaging/mkman.sh (cmds:PROGRAM).
# Usage: awk -v title="inagg job submit" -f cmd2man.awk HELP
function esc(s) {
	gsub(/\\/, "\\e", s)
	gsub(/-/, "\\-", s)
	return s
}
# A line of running text: man(7) takes a leading "." or "'" as a request.
function text(s) {
	s = esc(s)
	return (s ~ /^[.\x27]/ ? "\\&" : "") s
}
function indent(s) {
	match(s, /^ */)
	return RLENGTH
}
function flush_opt() {
	if (tag == "")
		return
	print ".TP"
	print tag
	if (desc != "")
		print text(desc)
	tag = desc = ""
}
BEGIN { state = "usage"; printf ".SS \"%s\"\n", title }
state == "usage" && NR == 1 { sub(/^Usage: */, ""); print ".nf"; print text($0); next }
state == "usage" && /^ +[^ ]/ { sub(/^ +/, "    "); print text($0); next }
state == "usage" { print ".fi"; state = "about" }
state == "about" && /^Options:$/ { state = "opts"; next }
state == "about" { print text($0); next }
state == "opts" && /^ +-/ && indent($0) <= 8 {
	flush_opt()
	line = $0
	sub(/^ +/, "", line)
	# "-k, --k K    text": the option's names and value, then two spaces or more.
	if (match(line, /  +/)) {
		names = substr(line, 1, RSTART - 1)
		desc = substr(line, RSTART + RLENGTH)
	} else {
		names = line
		desc = ""
	}
	tag = "\\fB" esc(names) "\\fR"
	next
}
state == "opts" && /^ +[^ ]/ && indent($0) > 8 { sub(/^ +/, ""); desc = desc (desc == "" ? "" : " ") $0; next }
state == "opts" { flush_opt(); state = "after"; print ".PP" }
state == "after" { print text($0); next }
END {
	if (state == "usage")
		print ".fi"
	flush_opt()
}
