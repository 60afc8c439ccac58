#!/bin/sh
# The house rules that are checked, not only written down (make
# check-budgets, part of make check):
#   README.md at most 300 lines, BENCHMARKS.md at most 400 (dated figures
#   go to docs/benchmarks-archive.md);
#   no code cites an issue number (issues end; code and its comments stay:
#   say what the code does and why, history goes to NEWS and git log);
#   no installed header carries history (a "X.Y.Z:" release entry; NEWS);
#   every header's include guard ends with its file's name (foo_bar.h:
#   ..._FOO_BAR_H) and no two headers share one (a copied or moved header
#   keeps a guard that no longer says what it guards);
#   no positional initializer of a project struct outside tests/ (a field
#   added or moved would shift every value silently): every initializer
#   of a struct type the tree defines (struct NAME { or a typedef of one)
#   names its fields, `{.a = 1}`; `{0}` and `{}` are allowed. Checked in
#   C sources and headers, with perl: declarations (arrays of rows too,
#   #define'd rows inside them included) and compound literals. Not
#   checked: structs without a tag or typedef name (local row tables),
#   and a struct nested in a field, `.id = {1}`. The files in
#   POSITIONAL_KNOWN may keep at most their count (other work in them);
#   one function derives the thresholds (lib/threshold.c): the layers
#   lib/threshold.c, lib/policy.c, lib/admit.c call one way (none calls a
#   function a later one defines: admission uses the policy, never the
#   reverse); no lib/*.c but threshold.c and config.c calls the config's
#   counts (mcrepl_config_threshold(),
#   mcrepl_config_cross_domain_threshold()); no host (daemons/, tools/,
#   examples/, bench/) writes a threshold field: the engine owns the read
#   path's threshold (mcrepl_engine_heat_params()).
# Usage: check-budgets.sh [ROOT]  (default: the tree this script is in).
# Prints one line per broken rule; exits 1 when any is broken.
set -u
root=${1:-$(dirname "$0")/..}
cd "$root" || exit 2
bad=0
say() { printf 'check-budgets: %s\n' "$*"; bad=1; }

lines() { [ -f "$1" ] && wc -l < "$1" || echo 0; }
for rule in README.md:300 BENCHMARKS.md:400; do
	f=${rule%%:*} max=${rule#*:}
	n=$(lines "$f")
	[ "$n" -le "$max" ] ||
		say "$f has $n lines, the budget is $max (move dated figures and detail to docs/)"
done

# The files that are code: every file but prose (*.md, NEWS, LICENSE).
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	files=$(git ls-files --cached --others --exclude-standard)
else
	files=$(find . -type f ! -path './build/*' ! -path './.git/*' |
		sed 's|^\./||')
fi
code=$(printf '%s\n' "$files" | grep -Ev '(\.md|^NEWS|^LICENSE|\.json|\.jsonl)$' |
	while IFS= read -r f; do [ -f "$f" ] && printf '%s\n' "$f"; done)
if [ -n "$code" ]; then
	hits=$(printf '%s\n' "$code" | tr '\n' '\0' |
		xargs -0 grep -nIiE 'issue[- #]?[0-9]+' 2>/dev/null | head -20)
	[ -z "$hits" ] || say "code cites an issue number:
$hits"
fi

hist=$(grep -nE '^[ /*]*[0-9]+\.[0-9]+\.[0-9]+:' lib/include/mcrepl/*.h \
	lib/include/mcrepl/*.hpp 2>/dev/null | head -5)
[ -z "$hist" ] || say "an installed header carries release history (NEWS):
$hist"
guards=$(printf '%s\n' "$files" | grep -E '\.h$' |
	while IFS= read -r f; do
		[ -f "$f" ] || continue
		g=$(grep -m1 -E '^#ifndef [A-Za-z0-9_]+$' "$f" | cut -d' ' -f2)
		b=$(basename "$f" .h | tr 'a-z.-' 'A-Z__')
		case "$g" in
		*"${b}_H") printf '%s %s\n' "$g" "$f" ;;
		*) printf 'WRONG %s %s\n' "${g:-none}" "$f" ;;
		esac
	done)
wrong=$(printf '%s\n' "$guards" | grep '^WRONG ' | cut -d' ' -f2- | head -5)
[ -z "$wrong" ] || say "include guards that do not end with their file's name (guard, file):
$wrong"
twice=$(printf '%s\n' "$guards" | grep -v '^WRONG ' | cut -d' ' -f1 | sort |
	uniq -d | head -5)
[ -z "$twice" ] || say "include guards used by more than one header: $twice"
# THRESHOLDS. The layers, lowest first: each calls none of the functions a
# later one defines (non-static, defined at the start of a line).
THRESHOLD_LAYERS="lib/threshold.c lib/policy.c lib/admit.c"
# Reads C files named in @ARGV (mode "layers": in layer order) or on
# stdin (mode "counts": calls of the config's counts; mode "hosts":
# threshold fields written); prints FILE:LINE or FILE calls NAME().
thresholds_pl=$(cat <<'EOF'
use strict;
use warnings;
my $mode = shift @ARGV;
my @files = @ARGV ? @ARGV : grep { length } map { chomp; $_ } <STDIN>;
my (@f, %t);
for my $f (@files) {
	open(my $fh, "<", $f) or next;
	local $/;
	my $t = <$fh>;
	close $fh;
	# comments and strings blanked, lines kept
	$t =~ s{(/\*.*?\*/|//[^\n]*|"(?:\\.|[^"\\\n])*")}{$1 =~ s/[^\n]/ /gr}gse;
	push @f, $f;
	$t{$f} = $t;
}
my %want = (counts => qr/\bmcrepl_config_(?:cross_domain_)?threshold\s*\(/,
	    hosts => qr/(?:\.|->)threshold\s*=(?!=)/);
if ($mode eq "layers") {
	for my $i (0 .. $#f) {
		for my $j ($i + 1 .. $#f) {
			my $u = $t{$f[$j]};
			while ($u =~ /^(?!static\b)[A-Za-z_][\w \t*]*?\b(\w+)\s*\([^;{}]*\)\s*\{/mg) {
				my $n = $1;
				print "$f[$i] calls $n(), which $f[$j] defines\n"
					if $t{$f[$i]} =~ /\b\Q$n\E\s*\(/;
			}
		}
	}
	exit 0;
}
my $re = $want{$mode} or die "mode $mode\n";
for my $f (@f) {
	my $l = 0;
	for (split /\n/, $t{$f}, -1) {
		$l++;
		print "$f:$l\n" if $_ =~ $re;
	}
}
EOF
)
if command -v perl >/dev/null 2>&1; then
	# shellcheck disable=SC2086 # the layers are words
	up=$(perl -e "$thresholds_pl" layers $THRESHOLD_LAYERS) ||
		say "the threshold layer scan failed"
	[ -z "$up" ] || say "the threshold layers call upwards (lib/threshold.h):
$up"
	up=$(printf '%s\n' "$code" | grep -E '^lib/[^/]*\.c$' |
		grep -vxE 'lib/(threshold|config)\.c' |
		perl -e "$thresholds_pl" counts) ||
		say "the threshold scan failed"
	[ -z "$up" ] || say "a threshold derived outside lib/threshold.c (call mcr_threshold()):
$up"
	up=$(printf '%s\n' "$code" |
		grep -E '^(daemons|tools|examples|bench)/.*\.(c|h|cpp|hpp)$' |
		perl -e "$thresholds_pl" hosts) ||
		say "the host threshold scan failed"
	[ -z "$up" ] || say "a host writes a threshold field (read mcrepl_engine_heat_params(): the engine owns it):
$up"
fi

# FILE COUNT: positional initializers left in files being reworked: none
# now (MCREPL_POSITIONAL_KNOWN sets the list, for the gate's own tests).
POSITIONAL_KNOWN=${MCREPL_POSITIONAL_KNOWN-}
# Reads file names on stdin; prints FILE:LINE: TEXT for each positional
# initializer of a struct type the files define.
positional_pl=$(cat <<'EOF'
use strict;
use warnings;
my @files = grep { length } map { chomp; $_ } <STDIN>;
my (%src, %raw, %types);
for my $f (@files) {
	open(my $fh, "<", $f) or next;
	local $/;
	my $t = <$fh>;
	close $fh;
	$raw{$f} = $t;
	# comments, strings and characters blanked, lines kept
	$t =~ s{(/\*.*?\*/|//[^\n]*|"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*')}{
		my $m = $1; my $c = substr($m, 0, 1);
		$c eq '"' ? '""' : $c eq "'" ? "' '" : $m =~ s/[^\n]/ /gr
	}gse;
	$src{$f} = $t;
	$types{"struct $1"} = 1 while $t =~ /\bstruct\s+(\w+)\s*\{/g;
	$types{$1} = 1 while $t =~ /\btypedef\s+struct\s*(?:\w+\s*)?\{[^{}]*(?:\{[^{}]*\}[^{}]*)*\}\s*(\w+)\s*;/g;
	$types{$1} = 1 while $t =~ /\btypedef\s+struct\s+\w+\s+(\w+)\s*;/g;
}
my $ty = join "|", map { s/ /\\s+/r } sort { length $b <=> length $a } keys %types;
exit 0 unless $ty;
# The first token of the brace at $p: designated, empty or {0}?
sub named {
	my ($t, $p) = @_;
	return substr($t, $p) =~ /^\{\s*(?:[.\[]|\}|0\s*\})/;
}
# The closing brace of the one at $p.
sub close_of {
	my ($t, $p) = @_;
	my $d = 0;
	for (my $i = $p; $i < length $t; $i++) {
		my $c = substr($t, $i, 1);
		$d++ if $c eq "{";
		$d-- if $c eq "}";
		return $i if $d == 0;
	}
	return length $t;
}
# The braces of each element of the array initializer at $p.
sub rows {
	my ($t, $p) = @_;
	my ($e, @r) = (close_of($t, $p));
	my $d = 0;
	for (my $i = $p + 1; $i < $e; $i++) {
		my $c = substr($t, $i, 1);
		push @r, $i if $c eq "{" && $d == 0;
		$d++ if $c eq "{" || $c eq "(";
		$d-- if $c eq "}" || $c eq ")";
	}
	return @r;
}
for my $f (@files) {
	my $t = $src{$f} // next;
	my @hits;
	while ($t =~ /(?<![\w.>])(?:$ty)\b[\s*]*(?:const\s+)?\w+\s*((?:\[[^\]]*\]\s*)*)=\s*(?=\{)/g) {
		my ($arr, $p) = ($1, pos $t);
		push @hits, $arr ? grep { !named($t, $_) } rows($t, $p)
				 : named($t, $p) ? () : $p;
	}
	while ($t =~ /\(\s*(?:const\s+)?(?:$ty)\s*((?:\[[^\]]*\]\s*)*)\)\s*(?=\{)/g) {
		my ($arr, $p) = ($1, pos $t);
		push @hits, $arr ? grep { !named($t, $_) } rows($t, $p)
				 : named($t, $p) ? () : $p;
	}
	my %seen;
	for my $p (sort { $a <=> $b } @hits) {
		my $line = 1 + (substr($t, 0, $p) =~ tr/\n//);
		next if $seen{$line}++;
		my $text = (split /\n/, $raw{$f})[$line - 1] // "";
		$text =~ s/^\s+|\s+$//g;
		print "$f:$line: $text\n";
	}
}
EOF
)
if ! command -v perl >/dev/null 2>&1; then
	say "perl is missing: positional initializers not checked"
else
	found=$(printf '%s\n' "$code" | grep -E '\.[ch]$' | grep -v '^tests/' |
		perl -e "$positional_pl") ||
		say "the positional initializer scan failed"
	pos=$(printf '%s\n' "$found" | awk -v known="$POSITIONAL_KNOWN" '
		BEGIN { n = split(known, k, "\n")
			for (i = 1; i <= n; i++) { split(k[i], w, " "); max[w[1]] = w[2] } }
		/./ { file = $0; sub(/:.*/, "", file); hit[file] = hit[file] $0 "\n"; cnt[file]++ }
		END { for (f in cnt) if (cnt[f] > max[f] + 0)
			printf "%s(%d in %s, at most %d)\n", hit[f], cnt[f], f, max[f] + 0 }')
	[ -z "$pos" ] || say "positional initializers of project structs (name the fields: {.a = 1}):
$pos"
fi
[ "$bad" -eq 0 ] && echo "check-budgets: README $(lines README.md)/300, BENCHMARKS $(lines BENCHMARKS.md)/400 lines; no issue numbers in code; no history in installed headers; include guards named for their files; thresholds derived in lib/threshold.c, layers called one way, none written by hosts; no positional initializers of project structs but $(printf '%s\n' "$POSITIONAL_KNOWN" | awk '{ n += $2 } END { print n + 0 }') known"
exit "$bad"
