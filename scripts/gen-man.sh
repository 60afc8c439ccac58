#!/bin/sh
# gen-man.sh BINARY "one-line description" VERSION > NAME.1
# A man page (roff, section 1) from the program's --help, so the page and
# the flags cannot drift: "usage: ..." becomes the synopsis, a line ending
# in ':' a subsection, an indented "TERM  text" line a tagged paragraph
# (TERM alone when there is no text), any other line a paragraph.
# Needs only sh and awk (no help2man).
set -eu
bin=$1
desc=$2
version=$3
name=$(basename "$bin")
"$bin" --help | awk -v name="$name" -v desc="$desc" -v version="$version" '
function esc(s) {
	gsub(/\\/, "\\e", s)
	gsub(/-/, "\\-", s)
	if (s ~ /^[.]/ || substr(s, 1, 1) == "\047")
		s = "\\&" s
	return s
}
BEGIN {
	printf ".TH %s 1 \"\" \"libmcrepl %s\" \"User Commands\"\n", toupper(name), version
	printf ".SH NAME\n%s \\- %s\n", esc(name), esc(desc)
}
NR == 1 && /^usage: / {
	sub(/^usage: /, "")
	printf ".SH SYNOPSIS\n.nf\n%s\n.fi\n.SH OPTIONS\n", esc($0)
	next
}
/^[ \t]*$/ { next }
/^[^ ].*:$/ { printf ".SS %s\n", esc(substr($0, 1, length($0) - 1)); next }
/^  / {
	line = substr($0, 3)
	if (match(line, /   *|\t/)) {
		term = substr(line, 1, RSTART - 1)
		text = substr(line, RSTART + RLENGTH)
	} else {
		term = line
		text = ""
	}
	printf ".TP\n\\fB%s\\fR\n", esc(term)
	if (text != "")
		print esc(text)
	next
}
{ printf ".PP\n%s\n", esc($0) }
END {
	print ".SH SEE ALSO"
	print "mcrepl\\-master(1), mcrepl\\-worker(1), mcrepl\\-cli(1); the README of libmcrepl."
}'
