#!/bin/sh
# scripts/check-style.sh passes on this tree and fails on a small tree
# that breaks each rule in turn: the gate can fail.
set -u
. tests/tap.sh
gate=$(pwd)/scripts/check-style.sh
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
t=$work/t

check "this tree keeps the house style" sh "$gate" .

fresh() {
	rm -rf "$t" && mkdir -p "$t/lib" "$t/tests" &&
		printf 'static int f(int x)\n{\n\treturn x;\n}\n' > "$t/lib/a.c"
}
fails() { # fails "what the message names"
	out=$(sh "$gate" "$t") && { echo "#   the gate passed" >&2; return 1; }
	case $out in *"$1"*) return 0 ;; esac
	echo "#   got '$out', want it to name '$1'" >&2
	return 1
}
body() { # body N: a function of N lines, braces included
	printf 'int g(void)\n{\n'
	i=2
	while [ "$i" -lt "$(($1 - 1))" ]; do printf '\t(void)0;\n'; i=$((i + 1)); done
	printf '\treturn 0;\n}\n'
}
fresh
check "a tree in the house style passes" sh "$gate" "$t"
fresh && printf 'int h(void)\n{\n#ifdef X\n\treturn 1;\n#endif\n\treturn 0;\n}\n' >> "$t/lib/a.c"
check "a conditional inside a body fails" fails "lib/a.c:7: #ifdef inside h()"
fresh && printf '#ifdef X\nint h(void)\n{\n\treturn 1;\n}\n#endif\n' >> "$t/lib/a.c"
check "a conditional around whole definitions passes" sh "$gate" "$t"
fresh && printf '#ifdef __cplusplus\nextern "C" {\n#endif\nint h(void);\n#ifdef __cplusplus\n}\n#endif\n' > "$t/lib/a.h"
check "a C++ guard in a header passes" sh "$gate" "$t"
fresh && printf '#define _GNU_SOURCE\n' | cat - "$t/lib/a.c" > "$t/lib/b.c"
check "a feature macro in a source fails" fails "lib/b.c:1: defines _GNU_SOURCE"
fresh && printf '/* #define _GNU_SOURCE would do */\n' >> "$t/lib/a.c"
check "a feature macro named in a comment passes" sh "$gate" "$t"
fresh && body 81 > "$t/lib/c.c"
check "an 81-line function fails" fails "lib/c.c:2: g() has 81 lines, the budget is 80"
fresh && body 80 > "$t/lib/c.c"
check "an 80-line function passes" sh "$gate" "$t"
fresh && body 120 > "$t/tests/c.c"
check "a long test function passes" sh "$gate" "$t"
fresh && printf 'int k(void)\n{\n\tgoto err1;\nerr1:\n\treturn 1;\n}\n' >> "$t/lib/a.c"
check "a numbered cleanup label fails" fails "lib/a.c:8: label err1"
fresh && printf 'int k(void)\n{\n\tgoto out_free;\nout_free:\n\treturn 1;\n}\n' >> "$t/lib/a.c"
check "a named cleanup label passes" sh "$gate" "$t"
tap_done style
