#!/bin/sh
# scripts/check-layers.sh passes on this tree and fails on a small tree
# that breaks each rule in turn: the gate can fail.
set -u
. tests/tap.sh
gate=$(pwd)/scripts/check-layers.sh
objdir=${1:-}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

check "this tree keeps its layers" sh "$gate" . $objdir

t=$work/t
fresh() {
	rm -rf "$t" && mkdir -p "$t/docs" "$t/util" "$t/lib/include/mcrepl" \
		"$t/lib" "$t/runtime/common" "$t/daemons/master" \
		"$t/daemons/worker" "$t/tests" "$t/obj/lib" &&
		cat > "$t/docs/README.md" <<'TABLE'
<!-- layers -->
| folder | includes only |
|---|---|
| `util/` | - |
| `lib/` | `lib/include/`, `util/` |
| `runtime/common/` | `util/` |
| `daemons/*/` | `runtime/common/`, `lib/include/`, `util/` |
<!-- end of layers -->
TABLE
	printf 'int u(void);\n' > "$t/util/u.h"
	printf 'int api(void);\n' > "$t/lib/include/mcrepl/api.h"
	printf '#include "util/u.h"\n#include <mcrepl/api.h>\nint a(void);\n' > "$t/lib/a.c"
	printf 'int c(void);\n' > "$t/runtime/common/c.h"
	printf 'int w(void);\n' > "$t/daemons/worker/w.h"
	printf '#include "c.h"\n#include "util/u.h"\n#include "mcrepl/api.h"\n' > "$t/daemons/master/m.c"
	printf '#include "w.h"\n#include "c.h"\n#include "../lib/a.c"\n' > "$t/tests/t.c"
}
fails() { # fails "what the message names" [OBJDIR]
	out=$(sh "$gate" "$t" ${2:-}) && { echo "#   the gate passed" >&2; return 1; }
	case $out in *"$1"*) return 0 ;; esac
	echo "#   got '$out', want it to name '$1'" >&2
	return 1
}
fresh
check "a tree that keeps its layers passes (tests may include anything)" sh "$gate" "$t"
fresh && printf '#include "c.h"\n' >> "$t/lib/a.c"
check "lib including the runtime fails" fails "lib/a.c:4: includes c.h from runtime/common/, which lib/ may not"
fresh && printf '#include "w.h"\n' >> "$t/daemons/master/m.c"
check "a daemon including the other daemon fails" fails "daemons/master/m.c:4: includes w.h from daemons/worker/"
fresh && printf '#include "mcrepl/api.h"\n' >> "$t/runtime/common/c.h"
check "the runtime including what its row does not name fails" fails "runtime/common/c.h:2: includes mcrepl/api.h from lib/include/"
fresh && printf 'int a(void) { return (int)time(0); }\n' >> "$t/lib/a.c"
check "a clock read in lib fails" fails "lib/a.c:4: calls time()"
fresh && printf 'static void g(void) { getenv("X"); }\n' >> "$t/util/u.h"
check "an environment read in util fails" fails "util/u.h:2: calls getenv()"
fresh && printf '/* the host calls time() */\nconst char *s = "sleep(1)";\n' >> "$t/lib/a.c"
check "a call named in a comment or a string passes" sh "$gate" "$t"
fresh && printf '__attribute__((constructor)) static void init(void) {}\n' >> "$t/daemons/master/m.c"
check "a load-time constructor fails" fails "daemons/master/m.c:4: runs code at load time (constructor)"
fresh && printf '__attribute__((constructor)) static void init(void) {}\n' >> "$t/tests/t.c"
check "a constructor in a test passes" sh "$gate" "$t"
fresh && sed -i '/layers -->/,$d' "$t/docs/README.md"
check "a README without the table fails" fails "has no layers table"
if command -v cc >/dev/null && command -v objdump >/dev/null; then
	fresh && printf 'static int n;\nint a(void) { return n++; }\n' |
		cc -c -x c - -o "$t/obj/lib/a.o"
	check "a writable global in a lib object fails" fails "holds writable state: n" "$t/obj"
	fresh && printf 'int a(void) { static int k; return k++; }\n' |
		cc -c -x c - -o "$t/obj/lib/a.o"
	check "a static local in a lib object fails" fails "holds writable state: k" "$t/obj"
	fresh && printf 'static const char *const s[] = {"a", "b"};\nconst char *a(int i) { return s[i]; }\n' |
		cc -fPIC -c -x c - -o "$t/obj/lib/a.o"
	check "a constant table passes" sh "$gate" "$t" "$t/obj"
fi
tap_done layers
