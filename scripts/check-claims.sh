#!/bin/sh
# check-claims.sh FILE.md SECTION: every numbered sentence of the section
# titled SECTION ("## SECTION") names, in backquotes, the tests that check
# it: a Check test (`test_...`, a START_TEST of tests/) or a make target
# (`make check-...`, a target of the makefiles). Exits 1 naming each
# sentence that names none, or a test or target that does not exist.
set -u
FILE=${1:?usage: check-claims.sh FILE.md SECTION}
SECTION=${2:?usage: check-claims.sh FILE.md SECTION}
DIR=$(dirname "$0")/..
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# the section's numbered items, one per line: "<n>\t<text>"
awk -v sec="## $SECTION" '
	$0 == sec { on = 1; next }
	on && /^## / { on = 0 }
	!on { next }
	/^[0-9]+\. / { if (n) print n "\t" item; n = $1; sub(/\.$/, "", n);
		       item = $0; next }
	/^   / && n { item = item " " $0; next }
	/^$/ && n { print n "\t" item; n = 0; item = "" }
	END { if (n) print n "\t" item }
' "$FILE" >"$TMP/items"
[ -s "$TMP/items" ] || { echo "check-claims: no numbered sentence under '## $SECTION' in $FILE"; exit 1; }

grep -rhoE 'START_TEST\(test_[a-z0-9_]+' "$DIR/tests" |
	sed 's/START_TEST(//' | sort -u >"$TMP/tests"
grep -hoE '^[a-z][a-z0-9-]*:' "$DIR/Makefile" "$DIR"/mk/*.mk |
	tr -d : | sort -u >"$TMP/targets"

bad=0
while IFS="$(printf '\t')" read -r n text; do
	names=$(printf '%s\n' "$text" | grep -oE '`(test_[a-z0-9_]+|make check-[a-z0-9-]+)`' | tr -d '`')
	if [ -z "$names" ]; then
		echo "check-claims: $FILE '$SECTION' sentence $n names no test"
		bad=1
		continue
	fi
	printf '%s\n' "$names" | while read -r t; do
		case $t in
		make\ *) grep -qx "${t#make }" "$TMP/targets" ||
			echo "check-claims: $FILE '$SECTION' sentence $n: no make target ${t#make }" ;;
		*) grep -qx "$t" "$TMP/tests" ||
			echo "check-claims: $FILE '$SECTION' sentence $n: no test $t" ;;
		esac
	done >>"$TMP/missing"
done <"$TMP/items"
if [ -s "$TMP/missing" ]; then
	cat "$TMP/missing"
	bad=1
fi
[ $bad = 0 ] && echo "check-claims: $FILE '$SECTION': $(wc -l <"$TMP/items") sentences, each checked by a named test"
exit $bad
