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
#   keeps a guard that no longer says what it guards).
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
[ "$bad" -eq 0 ] && echo "check-budgets: README $(lines README.md)/300, BENCHMARKS $(lines BENCHMARKS.md)/400 lines; no issue numbers in code; no history in installed headers; include guards named for their files"
exit "$bad"
