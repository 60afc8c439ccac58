#!/bin/sh
# rfc-coverage.sh: which RFC rules and Test Plan items have a test.
#
# Reads the ids defined in docs/RFC.md ([R-<SECTION>-<n>] rules, [T-<n>]
# Test Plan items) and the `covers:` tags in tests/ (a comment line right
# above a test: `/* covers: T-7 R-PROP-13 */` above START_TEST in C,
# `# covers: ...` above a `check "..."` line or a command in shell), then
# prints each id with the tests that cover it (one "ID<TAB>file:test" line
# per pair, ids in the RFC's order), the ids no test covers (with the start
# of their text), and last a line `rfc_ids=<n> covered=<c> uncovered=<u>`.
#
#   sh scripts/rfc-coverage.sh [--strict | --strict-tags] [--quiet]
#
#   (default)      report; exit 0 (1 only if docs/RFC.md is unreadable)
#   --strict-tags  exit 1 when a tag names an id docs/RFC.md does not
#                  define, an id is defined twice, or a tag has no test
#                  after it (make check runs this)
#   --strict       as --strict-tags, and exit 1 when a Test Plan item (T-*)
#                  has no test
#   --quiet        print only the problems and the last line
#
# POSIX sh, find, sort and awk; run from anywhere in the tree.
set -u

strict=0
quiet=0
for arg in "$@"; do
	case $arg in
	--strict) strict=2 ;;
	--strict-tags) [ "$strict" -eq 2 ] || strict=1 ;;
	--quiet | -q) quiet=1 ;;
	-h | --help)
		sed -n '2,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'
		exit 0
		;;
	*)
		echo "rfc-coverage: unknown argument '$arg' (try --help)" >&2
		exit 2
		;;
	esac
done

cd "$(dirname "$0")/.." || exit 1
RFC=docs/RFC.md
[ -r "$RFC" ] || {
	echo "rfc-coverage: cannot read $RFC" >&2
	exit 1
}

# Test sources, in a stable order.
files=$(find tests -type f \( -name '*.c' -o -name '*.h' -o -name '*.sh' \) |
	LC_ALL=C sort)

# shellcheck disable=SC2086 # $files: paths without blanks, one per word
awk -v rfc="$RFC" -v strict="$strict" -v quiet="$quiet" '
function err(msg) {
	print "rfc-coverage: " msg > "/dev/stderr"
	errors++
}
function trim(s) {
	sub(/^[ \t]+/, "", s)
	sub(/[ \t]+$/, "", s)
	return s
}
# The test a covers: block names: called with the first line after it.
function test_name(line,    s) {
	if (line ~ /START_TEST[ \t]*\(/) {
		s = line
		sub(/.*START_TEST[ \t]*\([ \t]*/, "", s)
		if (match(s, /^[A-Za-z_][A-Za-z0-9_]*/))
			return substr(s, 1, RLENGTH)
		return ""	# the name is on the next line
	}
	if (line ~ /^[ \t]*check[ \t]+"/) {
		s = line
		sub(/^[ \t]*check[ \t]+"/, "", s)
		sub(/".*/, "", s)
		return "\"" s "\""
	}
	if (match(line, /^[ \t]*[A-Za-z_][A-Za-z0-9_]*[ \t]*\(\)/)) {
		s = substr(line, 1, RLENGTH)
		sub(/[ \t]*\(\)$/, "", s)
		return trim(s) "()"
	}
	if (FILENAME ~ /\.[ch]$/ &&
	    match(line, /[A-Za-z_][A-Za-z0-9_]*[ \t]*\(/)) {
		s = substr(line, RSTART, RLENGTH)
		sub(/[ \t]*\($/, "", s)
		return s
	}
	return "line " FNR
}
function attach(name,    i) {
	for (i = 1; i <= npend; i++) {
		ncov[pend_id[i]]++
		cov[pend_id[i], ncov[pend_id[i]]] = FILENAME ":" name
	}
	npend = 0
	want_name = 0
}
function flush_dangling() {
	if (npend > 0)
		err(pend_where ": covers: tag with no test after it")
	npend = 0
	want_name = 0
	tagged = 0
}

FILENAME == rfc {
	s = $0
	while (match(s, /\[(R-[A-Z]+-[0-9]+|T-[0-9]+)\]/)) {
		id = substr(s, RSTART + 1, RLENGTH - 2)
		before = substr(s, 1, RSTART - 1)
		rest = substr(s, RSTART + RLENGTH)
		s = rest
		if (id in defined) {
			err(rfc ":" FNR ": " id " is defined twice")
			continue
		}
		defined[id] = 1
		order[++nids] = id
		# its text: up to the next id or the end of the line; an id
		# written after its clause ("..., already in-flight [R-PROP-9],")
		# names the text before it
		sub(/\[(R-[A-Z]+-[0-9]+|T-[0-9]+)\].*/, "", rest)
		if (rest ~ /^[,.;]/) {
			rest = before
			sub(/^.*proposals that are /, "", rest)
			sub(/^[ ,]+(or )?/, "", rest)
		}
		rest = trim(rest)
		if (length(rest) > 72)
			rest = substr(rest, 1, 69) "..."
		text[id] = rest
	}
	next
}

FNR == 1 { flush_dangling() }

/^[ \t]*(\/\*|#)[ \t]*covers:/ {
	if (want_name)
		flush_dangling()
	if (npend == 0)
		pend_where = FILENAME ":" FNR
	s = $0
	sub(/.*covers:/, "", s)
	sub(/\*\/.*/, "", s)
	n = split(s, w, /[ \t,]+/)
	for (i = 1; i <= n; i++) {
		if (w[i] == "")
			continue
		if (!(w[i] in defined)) {
			err(FILENAME ":" FNR ": unknown id \"" w[i] "\" (not in " rfc ")")
			continue
		}
		pend_id[++npend] = w[i]
	}
	if (npend == 0)	# only unknown ids: still expect a test
		pend_where = FILENAME ":" FNR
	tagged = 1
	next
}

want_name {
	if (match($0, /[A-Za-z_][A-Za-z0-9_]*/))
		attach(substr($0, RSTART, RLENGTH))
	else
		flush_dangling()
	tagged = 0
	next
}

tagged {
	tagged = 0
	name = test_name($0)
	if (name == "")
		want_name = 1
	else
		attach(name)
	next
}

END {
	flush_dangling()
	covered = 0
	if (!quiet)
		print "# RFC ids (" rfc ") and the tests that cover them"
	for (i = 1; i <= nids; i++) {
		id = order[i]
		if (ncov[id] > 0)
			covered++
		if (quiet)
			continue
		for (j = 1; j <= ncov[id]; j++)
			print id "\t" cov[id, j]
	}
	if (!quiet)
		print "# ids with no test"
	t_missing = 0
	for (i = 1; i <= nids; i++) {
		id = order[i]
		if (ncov[id] > 0)
			continue
		if (id ~ /^T-/)
			t_missing++
		if (!quiet)
			print id "\t" text[id]
	}
	if (strict == 2 && t_missing > 0)
		print "rfc-coverage: " t_missing " Test Plan item(s) have no test" > "/dev/stderr"
	print "rfc_ids=" nids " covered=" covered " uncovered=" nids - covered
	if (nids == 0) {
		print "rfc-coverage: no ids found in " rfc > "/dev/stderr"
		exit 1
	}
	if (strict >= 1 && errors > 0)
		exit 1
	if (strict == 2 && t_missing > 0)
		exit 1
	exit 0
}
' "$RFC" $files
