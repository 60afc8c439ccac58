#!/bin/sh
# scripts/check-statics.sh passes on this tree and fails on a small tree
# with a function extern for nothing: the gate can fail.
# Usage: run.sh [OBJDIR] (this tree's objects; build/obj).
set -u
. tests/tap.sh
gate=$(pwd)/scripts/check-statics.sh
objdir=${1:-build/obj}
cc=${CC:-cc}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
t=$work/t

check "this tree has no function extern for nothing" sh "$gate" . "$objdir"

# A tree of two library files and a test, each built to t/obj.
build() {
	for c in lib/a.c lib/b.c tests/t.c; do
		mkdir -p "$t/obj/$(dirname "$c")" &&
			(cd "$t" && $cc -c -o "obj/${c%.c}.o" "$c") || return 1
	done
}
fresh() {
	rm -rf "$t" && mkdir -p "$t/lib" "$t/tests" "$t/tools/fuzz" &&
		printf 'MCREPL_0 {\n\tglobal:\n\t\tmcrepl_*;\n\tlocal:\n\t\t*;\n};\n' > "$t/lib/libmcrepl.map" &&
		printf 'int used(void);\nint used(void) { return 1; }\nint mcrepl_api(void);\nint mcrepl_api(void) { return 2; }\n' > "$t/lib/a.c" &&
		printf 'int used(void);\nint b(void);\nint b(void) { return used(); }\n' > "$t/lib/b.c" &&
		printf 'int b(void);\nint main(void) { return b(); }\n' > "$t/tests/t.c"
}
fails() { # fails "what the message names"
	out=$(sh "$gate" "$t" obj) && { echo "#   the gate passed" >&2; return 1; }
	case $out in *"$1"*) return 0 ;; esac
	echo "#   got '$out', want it to name '$1'" >&2
	return 1
}
fresh && build
check "a tree whose externs are all used passes (main, the API, a test's call)" sh "$gate" "$t" obj
fresh && printf 'int lonely(void);\nint lonely(void) { return 3; }\nint twice(void);\nint twice(void) { return 2 * lonely(); }\n' >> "$t/lib/a.c" &&
	printf 'int used(void);\nint twice(void);\nint b(void);\nint b(void) { return used() + twice(); }\n' > "$t/lib/b.c" && build
check "a function only its own file calls fails" fails "lib/a.c: lonely() is extern but only its own file uses it"
fresh && printf 'static int lonely(void) { return 3; }\nint twice(void);\nint twice(void) { return 2 * lonely(); }\n' >> "$t/lib/a.c" &&
	printf 'int used(void);\nint twice(void);\nint b(void);\nint b(void) { return used() + twice(); }\n' > "$t/lib/b.c" && build
check "the same function made static passes" sh "$gate" "$t" obj
fresh && printf 'int for_fuzz(void);\nint for_fuzz(void) { return 4; }\n' >> "$t/lib/a.c" &&
	printf 'int for_fuzz(void);\nint f(void) { return for_fuzz(); }\n' > "$t/tools/fuzz/f.c" && build
check "a function a source not built calls passes" sh "$gate" "$t" obj
fresh && printf 'int method_ping(void);\nint method_ping(void) { return 5; }\n' >> "$t/lib/a.c" && build
check "an allowed name passes (method_*: the master's handlers)" sh "$gate" "$t" obj
fresh && rm -rf "$t/obj"
check "no object fails, saying to build first" fails "no object under"
tap_done statics
