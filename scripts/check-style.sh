#!/bin/sh
# The source habits of the house, checked (make check-style, part of make
# check; docs/CONTRIBUTING.md):
#   no preprocessor conditional inside a function body: a variant is a
#   function of its own, chosen at file scope (#if around whole
#   definitions), so every body reads straight;
#   no feature-test macro (_GNU_SOURCE, _POSIX_C_SOURCE, ...) defined in a
#   source: the Makefile sets them once (FEATURES), mk/ per program where
#   one needs more;
#   no function longer than 80 lines outside tests/ (the tree's median is
#   11, its 99th percentile under 60: a longer one is several functions);
#   cleanup labels say what they undo (out_free_buf:), never a number
#   (err1:, fail2:).
# C sources and headers; comments, strings and character constants are
# blanked first. A function is a definition whose opening brace stands
# alone on the line after its closing parenthesis (the kernel style the
# tree's .clang-format writes).
# Usage: check-style.sh [ROOT]. Prints one line per broken rule; exits 1
# when any is broken.
set -u
root=${1:-$(dirname "$0")/..}
cd "$root" || exit 2
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	files=$(git ls-files --cached --others --exclude-standard)
else
	files=$(find . -type f ! -path './build/*' | sed 's|^\./||')
fi
printf '%s\n' "$files" | grep -E '\.(c|h)$' | perl -e '
use strict; use warnings;
my $MAX = 80;
my $bad = 0;
sub say { print "check-style: @_\n"; $bad = 1 }
while (my $f = <STDIN>) {
	chomp $f;
	open my $fh, "<", $f or next;
	local $/;
	my $t = <$fh>;
	$t =~ s{/\*.*?\*/}{ my $c = $&; $c =~ tr/\n//cd; $c }gse;
	$t =~ s{//[^\n]*}{}g;
	$t =~ s{"(?:\\.|[^"\\\n])*"}{""}g;
	$t =~ s{\x27(?:\\.|[^\x27\\\n])*\x27}{0}g;
	$t =~ s{extern\s+""\s*\{}{}g;	# a C++ guard is not a body
	my ($depth, $n, $start, $name, $prev, $sig) = (0, 0, 0, "", "", "?");
	for my $l (split /\n/, $t, -1) {
		$n++;
		if ($start && $l =~ /^\s*#\s*(if|ifdef|ifndef|elif|else|endif)\b/) {
			say "$f:$n: #$1 inside $name(): make the variant a function",
			    "of its own, chosen at file scope";
		}
		if ($l =~ /^\s*#\s*define\s+(_GNU_SOURCE|_DEFAULT_SOURCE|_BSD_SOURCE|_SVID_SOURCE|_XOPEN_SOURCE\w*|_POSIX_C_SOURCE|_POSIX_SOURCE|_ISOC\w+_SOURCE|_LARGEFILE\w*|_FILE_OFFSET_BITS)\b/) {
			say "$f:$n: defines $1: feature macros are set once,",
			    "in the Makefile (FEATURES) or per program in mk/";
		}
		if ($l =~ /^\s*((?:err|error|fail|out|bad|done|cleanup)_?\d+)\s*:(?!:)/) {
			say "$f:$n: label $1: name a cleanup label for what it",
			    "undoes (out_free_buf)";
		}
		$sig = $1 if $depth == 0 && $l =~ /(\w+)\s*\(/;
		if ($depth == 0 && $l =~ /^\{\s*$/ && $prev =~ /\)\s*$/) {
			($name, $start) = ($sig, $n);
		}
		my $o = () = $l =~ /\{/g;
		my $c = () = $l =~ /\}/g;
		$depth += $o - $c;
		$depth = 0 if $depth < 0;
		if ($start && $depth == 0) {
			my $len = $n - $start + 1;
			say "$f:$start: $name() has $len lines, the budget is",
			    "$MAX: split it into named steps"
			    if $len > $MAX && $f !~ m{^tests/};
			$start = 0;
		}
		$prev = $l;
	}
}
exit $bad;
'
