#!/bin/sh
# Functions extern for nothing (make check-statics, part of make check): a
# global function (nm type T) defined by an object built from lib/, util/,
# runtime/, daemons/ or tools/ that no object under OBJDIR refers to
# (nm type U), and that no other C or C++ source of the tree names (a
# test, a fuzz target or a tool not built in OBJDIR counts as a user), is
# used only in its own file: it should be static, and its declaration
# leave the header. Not counted: main(), the public API (the patterns of
# lib/libmcrepl.map's global: list), C++ symbols, and the names in ALLOWED
# below with why.
# Usage: check-statics.sh [ROOT [OBJDIR]] (OBJDIR: ROOT/build/obj). Prints
# one line per such function; exits 1 when there is any, 2 when OBJDIR
# holds no object.
set -u -f # -f: the patterns below are not file names
root=${1:-$(dirname "$0")/..}
objdir=${2:-build/obj}
cd "$root" || exit 2
case $objdir in /*) ;; *) objdir=$(pwd)/$objdir ;; esac

# Extern on purpose though one file uses them:
#   method_*: the master's RPC handlers, declared together in
#     daemons/master/methods.h in the service's order, so the compiler
#     checks each one's shape against protobuf-c's table, whichever file
#     defines it;
ALLOWED='method_*'

objs=$(find "$objdir" -name '*.o' 2>/dev/null | sort)
[ -n "$objs" ] || { echo "check-statics: no object under $objdir (build first)"; exit 2; }
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	files=$(git ls-files --cached --others --exclude-standard)
else
	files=$(find . -type f ! -path './build/*' | sed 's|^\./||')
fi
sources=$(printf '%s\n' "$files" | grep -E '\.(c|cc|cpp)$')
api=$(sed -n '/global:/,/local:/p' lib/libmcrepl.map 2>/dev/null |
	tr -d ' \t;' | grep -v -e 'global:' -e 'local:' -e '^$')

# "name source" for each candidate: defined by a checked object, used by
# no object.
candidates=$(printf '%s\n' "$objs" | xargs nm -A 2>/dev/null | awk -v dir="$objdir/" '
{
	f = $1; sub(/:[^:]*$/, "", f)	# nm -A: "file.o:" then the rest
	t = $(NF - 1); s = $NF
	if (t == "U") { used[s] = 1; next }
	if (t != "T") next
	rel = substr(f, length(dir) + 1)
	if (rel !~ /^(lib|util|runtime|daemons|tools)\//) next
	sub(/\.o$/, "", rel)
	def[s] = rel
}
END { for (s in def) if (!(s in used)) print s, def[s] }' | sort)

bad=0
printf '%s\n' "$candidates" | {
	while read -r name stem; do
		[ -n "$name" ] || continue
		case $name in main | _Z*) continue ;; esac
		skip=0
		for p in $api $ALLOWED; do
			case $name in $p) skip=1 ;; esac
		done
		[ "$skip" = 0 ] || continue
		own=
		for ext in c cc cpp; do
			[ -f "$stem.$ext" ] && own=$stem.$ext && break
		done
		[ -n "$own" ] || continue # generated: not ours to change
		others=$(printf '%s\n' "$sources" | grep -v -x -F "$own")
		if [ -n "$others" ] &&
			printf '%s\n' "$others" | xargs grep -l -w -F -- "$name" \
				>/dev/null 2>&1; then
			continue
		fi
		echo "$own: $name() is extern but only its own file uses it (make it static, drop its declaration)"
		bad=1
	done
	exit $bad
}
