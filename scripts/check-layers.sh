#!/bin/sh
# The layering rules of docs/README.md ("How the parts fit"), checked
# (make check-layers, part of make check):
#   each folder includes only the folders its row of the table under
#   <!-- layers --> names (tests/ and bench/ may include anything);
#   lib/ and util/ call no clock, socket, thread, sleep, file, process or
#   environment function (the library is pure: time and inputs are
#   arguments);
#   no code outside tests/ and bench/ runs at load time (a constructor or
#   destructor attribute);
#   with OBJDIR given, no object built from lib/ or util/ holds writable
#   data (a .data or .bss symbol: global or static state).
# An include is resolved as the compiler would: beside the including file,
# then as a path from the tree root ("util/map.h"), <mcrepl/...> and
# "mcrepl/..." as lib/include/, "*.pb-c.h" as proto/, and a bare name as
# the one tracked header of that name (a name two folders share must sit
# beside its includer, or be an allowed folder's).
# Usage: check-layers.sh [ROOT [OBJDIR]]. Prints one line per broken rule;
# exits 1 when any is broken.
set -u
root=${1:-$(dirname "$0")/..}
objdir=${2:-}
cd "$root" || exit 2
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	files=$(git ls-files --cached --others --exclude-standard)
else
	files=$(find . -type f ! -path './build/*' | sed 's|^\./||')
fi
bad=0
printf '%s\n' "$files" | perl -e '
use strict; use warnings;
my (@src, %where);
while (my $f = <STDIN>) {
	chomp $f;
	next unless -f $f && $f =~ /\.(c|h|cc|cpp|hpp)$/;
	push @src, $f;
	my ($d, $b) = $f =~ m{^(?:(.*)/)?([^/]+)$};
	push @{$where{$b}}, $d // ".";
}
# the table
open my $doc, "<", "docs/README.md" or do { print "check-layers: no docs/README.md\n"; exit 1 };
my ($in, @rows) = (0);
while (<$doc>) {
	$in = 1, next if /<!-- layers/;
	last if /<!-- end of layers/;
	next unless $in && /^\|\s*`/;
	my (undef, $who, $may) = split /\|/;
	my @may = $may =~ /`([^`]+)`/g;
	s{/$}{} for @may;
	for my $w ($who =~ /`([^`]+)`/g) {
		$w =~ s{/$}{};
		push @rows, [$w, {map { $_ => 1 } @may}];
	}
}
unless (@rows) { print "check-layers: docs/README.md has no layers table\n"; exit 1 }
sub row_of {
	my $d = shift;
	my ($best, $len) = (undef, -1);
	for my $r (@rows) {
		my $re = quotemeta $r->[0];
		$re =~ s{\\\*}{[^/]+}g;
		if ($d =~ m{^($re)(/|$)} && length($1) > $len) {
			($best, $len) = ([$r->[0], $r->[1], $1], length $1);
		}
	}
	return $best;
}
sub allowed {	# the includer folder, or one its row names
	my ($row, $to) = @_;
	my $mine = $row->[2];
	return 1 if $to eq $mine || index($to, "$mine/") == 0;
	for my $m (keys %{$row->[1]}) {
		return 1 if $to eq $m || index($to, "$m/") == 0;
	}
	return 0;
}
my $bad = 0;
for my $f (@src) {
	my ($d) = $f =~ m{^(.*)/[^/]+$};
	$d //= ".";
	my $row = row_of($d) or next;
	open my $fh, "<", $f or next;
	while (<$fh>) {
		my ($q, $inc) = /^\s*#\s*include\s*([<"])([^">]+)[">]/ or next;
		my @to;
		if ($inc =~ m{^mcrepl/}) { @to = ("lib/include") }
		elsif ($q eq "<") { next }
		elsif (-e "$d/$inc") { (my $t = "$d/$inc") =~ s{/[^/]+$}{}; @to = ($t) }
		elsif ($inc =~ m{/} && -e $inc) { (my $t = $inc) =~ s{/[^/]+$}{}; @to = ($t) }
		elsif ($inc =~ /\.pb-c\.h$/) { @to = ("proto") }
		else {
			my ($b) = $inc =~ m{([^/]+)$};
			@to = @{$where{$b} // []};
			next unless @to;	# a system or generated header
		}
		next if grep { allowed($row, $_) } @to;
		print "check-layers: $f:$.: includes $inc from ",
		    join(" or ", map { "$_/" } @to), ", which $row->[0]/ may not",
		    " (docs/README.md, How the parts fit)\n";
		$bad = 1;
	}
}
# lib/ and util/ are pure
my $calls = qr/\b(clock_gettime|gettimeofday|time|clock|timespec_get|socket|connect|accept4?|pthread_create|thrd_create|fork|exec[lv]p?e?|sleep|usleep|nanosleep|thrd_sleep|getenv|secure_getenv|setenv|rand|srand|random|fopen|freopen|open|openat|getpid|epoll_wait|poll|select|signal|sigaction|syslog|printf|puts)\s*\(/;
for my $f (grep { m{^(lib|util)/.*\.[ch]$} } @src) {
	open my $fh, "<", $f or next;
	local $/;
	my $text = <$fh>;
	$text =~ s{/\*.*?\*/}{ my $c = $&; $c =~ tr/\n//cd; $c }gse;
	$text =~ s{//[^\n]*}{}g;
	$text =~ s{"(?:\\.|[^"\\\n])*"}{""}g;
	my $n = 0;
	for my $line (split /\n/, $text, -1) {
		$n++;
		next unless $line =~ $calls;
		next if $line =~ /^\s*(static\s+)?\w[\w\s\*]*\b\Q$1\E\s*\(/ && $line !~ /;/;
		print "check-layers: $f:$n: calls $1(), which lib/ and util/ may not",
		    " (pure: time and inputs are arguments; the host owns I/O)\n";
		$bad = 1;
	}
}
# nothing runs at load time: work starts when a program or host calls it
for my $f (grep { !m{^(tests|bench)/} } @src) {
	open my $fh, "<", $f or next;
	while (<$fh>) {
		next unless /__attribute__\s*\(\(\s*(__)?(constructor|destructor)/;
		print "check-layers: $f:$.: runs code at load time ($2): ",
		    "initialize in a create or main, or statically\n";
		$bad = 1;
	}
}
exit $bad;
' || bad=1

# writable state in the objects of lib/ and util/
if [ -n "$objdir" ]; then
	for c in $(printf '%s\n' "$files" | grep -E '^(lib|util)/[^/]*\.c$'); do
		o=$objdir/${c%.c}.o
		[ -f "$o" ] || continue
		objdump -t "$o" | awk -v o="$o" '
			$0 ~ / O \.(data|bss)(\.[^r][^ \t]*)?[ \t]/ {
				printf "check-layers: %s holds writable state: %s (lib/ and util/ keep none; pass it in a handle)\n", o, $NF
				bad = 1
			}
			END { exit bad }' || bad=1
	done
fi
exit $bad
