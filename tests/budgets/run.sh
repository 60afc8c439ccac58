#!/bin/sh
# scripts/check-budgets.sh passes on this tree and fails on a copy that
# breaks each rule in turn: the gate can fail.
set -u
. tests/tap.sh
gate=$(pwd)/scripts/check-budgets.sh
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

check "this tree keeps every budget" sh "$gate" .

# A tree of its own (not a git checkout): the rules read files directly.
fresh() {
	rm -rf "$work/t" && mkdir -p "$work/t/lib/include/mcrepl" "$work/t/lib" &&
		printf 'x\n' > "$work/t/README.md" &&
		printf 'x\n' > "$work/t/BENCHMARKS.md" &&
		printf '#ifndef MCREPL_VERSION_H\n#define MCREPL_VERSION_H\n#define V 1\n#endif\n' \
			> "$work/t/lib/include/mcrepl/version.h" &&
		printf 'int f(void);\n' > "$work/t/lib/a.c"
}
fails() { # fails "what the message names"
	out=$(sh "$gate" "$work/t") && { echo "#   the gate passed" >&2; return 1; }
	case $out in *"$1"*) return 0 ;; esac
	echo "#   got '$out', want it to name '$1'" >&2
	return 1
}
fresh
check "a tree that keeps every budget passes" sh "$gate" "$work/t"
fresh && seq 301 > "$work/t/README.md"
check "README over 300 lines fails" fails "README.md has 301 lines"
fresh && seq 401 > "$work/t/BENCHMARKS.md"
check "BENCHMARKS over 400 lines fails" fails "BENCHMARKS.md has 401 lines"
fresh && printf '/* as iss%s 12 asked */\n' ue >> "$work/t/lib/a.c"
check "a comment citing an issue fails" fails "code cites an issue number"
fresh && printf '# the iss%s-7 grid\n' ue > "$work/t/lib/x.mk"
check "a make comment citing an issue fails" fails "lib/x.mk:1"
fresh && printf '/*\n * 0.6.5: an addition.\n */\n' >> \
	"$work/t/lib/include/mcrepl/version.h"
check "release history in an installed header fails" fails "release history"
fresh && printf 'iss%s 12 fixed this\n' ue > "$work/t/NEWS"
check "NEWS may name issues" sh "$gate" "$work/t"
fresh && printf '#ifndef EXAMPLES_ZIPF_H\n#endif\n' > "$work/t/lib/zipf_draw.h"
check "a guard that does not name its file fails, named with its file" \
	fails "EXAMPLES_ZIPF_H lib/zipf_draw.h"
fresh && printf '#ifndef A_MAP_H\n#endif\n' > "$work/t/lib/map.h" &&
	mkdir -p "$work/t/util" &&
	printf '#ifndef A_MAP_H\n#endif\n' > "$work/t/util/map.h"
check "two headers with one guard fail" \
	fails "include guards used by more than one header: A_MAP_H"
# Positional initializers of the tree's own structs, outside tests/.
struct_p='struct p {\n\tint a, b;\n};\n'
fresh && printf "$struct_p"'struct p x = {1, 2};\n' > "$work/t/lib/b.c"
check "a positional initializer of a project struct fails, with its line" \
	fails "lib/b.c:4: struct p x = {1, 2};"
fresh && printf "$struct_p"'struct p x = {.a = 1, .b = 2}, y = {0};\n' \
	> "$work/t/lib/b.c"
check "designated and {0} initializers pass" sh "$gate" "$work/t"
fresh && printf "$struct_p"'struct p f(void)\n{\n\treturn (struct p){1, 2};\n}\n' \
	> "$work/t/lib/b.c"
check "a positional compound literal fails" fails "lib/b.c:6:"
fresh && printf "$struct_p"'static const struct p rows[] = {\n\t{.a = 1},\n\t{2, 3},\n};\n' \
	> "$work/t/lib/b.c"
check "a positional row in an array of structs fails" fails "lib/b.c:6:"
fresh && printf 'typedef struct {\n\tint v;\n} seg_id;\nseg_id s = {3};\n' \
	> "$work/t/lib/b.c"
check "a positional initializer of a typedef'd struct fails" \
	fails "lib/b.c:4: seg_id s = {3};"
fresh && printf '#include <time.h>\nstruct timespec ts = {1, 0};\n' \
	> "$work/t/lib/b.c"
check "a struct the tree does not define is not checked" sh "$gate" "$work/t"
fresh && mkdir -p "$work/t/tests" &&
	printf "$struct_p"'struct p x = {1, 2};\n' > "$work/t/tests/b.c"
check "tests/ may initialize by position" sh "$gate" "$work/t"
# The known-file list (empty in this tree) through the fixture known.c:
# two positional initializers.
fresh && cp tests/budgets/known.c "$work/t/lib/known.c"
check "the fixture fails where no file is known" \
	fails "(2 in lib/known.c, at most 0)"
known() { MCREPL_POSITIONAL_KNOWN="lib/known.c 2" sh "$gate" "$work/t"; }
check "a known file at its count passes" known
printf 'struct p y = {3, 4};\n' >> "$work/t/lib/known.c"
known_over() { # fails, naming the file and its count
	out=$(known) && return 1
	case $out in *"(3 in lib/known.c, at most 2)"*) return 0 ;; esac
	echo "#   got '$out'" >&2
	return 1
}
check "a known file over its count fails, named" known_over
# Thresholds: the layers call one way; no other lib file reads the
# config's counts; no host writes a threshold field.
fresh && printf 'int f_admit(int x)\n{\n\treturn x;\n}\n' > "$work/t/lib/admit.c" &&
	printf 'int g(void)\n{\n\treturn f_admit(1);\n}\n' > "$work/t/lib/policy.c"
check "the policy calling admission fails, naming the call" \
	fails "lib/policy.c calls f_admit(), which lib/admit.c defines"
fresh && printf 'int f_pol(int x)\n{\n\treturn x;\n}\n' > "$work/t/lib/policy.c" &&
	printf 'static int f_admit(void)\n{\n\treturn f_pol(1);\n}\n' > "$work/t/lib/admit.c" &&
	printf 'int t(void)\n{\n\treturn 1; /* not f_pol() */\n}\n' > "$work/t/lib/threshold.c"
check "admission calling the policy passes" sh "$gate" "$work/t"
printf 'int u(void)\n{\n\treturn f_pol(2);\n}\n' >> "$work/t/lib/threshold.c"
check "the thresholds calling the policy fail" \
	fails "lib/threshold.c calls f_pol(), which lib/policy.c defines"
fresh && printf '/* mcrepl_config_threshold() */\nint t = mcrepl_config_threshold(c);\n' \
	> "$work/t/lib/heat.c"
check "a lib file deriving a threshold fails, with its line" \
	fails "lib/heat.c:2"
fresh && printf 'int t = mcrepl_config_cross_domain_threshold(c);\n' \
	> "$work/t/lib/threshold.c"
check "lib/threshold.c derives the thresholds" sh "$gate" "$work/t"
fresh && mkdir -p "$work/t/tools/sim" &&
	printf 'void f(void)\n{\n\tif (hp.threshold == 3)\n\t\thp.threshold = t.threshold;\n}\n' \
	> "$work/t/tools/sim/engine.c"
check "a host writing a threshold field fails, with its line" \
	fails "tools/sim/engine.c:4"
tap_done check-budgets
