#!/bin/sh
# make install into a scratch DESTDIR with PREFIX=/usr, then check what it
# installed: the C example builds against the tree through pkg-config and
# runs; the .pc is ${prefix}-relative (absolute when LIBDIR lies outside
# PREFIX); the programs run from BINDIR; their man pages are there and
# list their flags; docs/SECURITY.md and docs/HA.md are in DOCDIR;
# make uninstall leaves no file behind.
set -eu
MAKE=${1:-make}
BUILD=${2:-build}
. tests/tap.sh
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
dest=$work/root
$MAKE -s BUILD="$BUILD" install DESTDIR="$dest" PREFIX=/usr >/dev/null
pcdir="$dest/usr/lib/pkgconfig"
pc="$pcdir/libmcrepl.pc"
flags=$(PKG_CONFIG_SYSROOT_DIR="$dest" PKG_CONFIG_PATH="$pcdir" \
	PKG_CONFIG_ALLOW_SYSTEM_CFLAGS=1 PKG_CONFIG_ALLOW_SYSTEM_LIBS=1 \
	pkg-config --cflags --libs libmcrepl)
example() {
	cc -std=c11 -Wall -Werror examples/embed_master.c $flags \
		-o "$work/embed" ${SANFLAGS:-} &&
		LD_LIBRARY_PATH="$dest/usr/lib" "$work/embed" >/dev/null
}
check "the example builds with pkg-config and runs" example
adapter() {
	printf '%s\n' '#include <mcrepl/adapter.hpp>' \
		'#include <mcrepl/adapter_binding.hpp>' \
		'int main() { mcrepl::Options o; o.mode = "enforce";' \
		'  auto e = mcrepl::Engine::Create(o);' \
		'  return e && e->IsAuto() ? 0 : 1; }' > "$work/adapter.cpp" &&
		c++ -std=c++17 -Wall -Wextra -Wpedantic -Werror \
			"$work/adapter.cpp" $flags -o "$work/adapter" \
			${SANFLAGS:-} &&
		LD_LIBRARY_PATH="$dest/usr/lib" "$work/adapter"
}
check "the C++ adapter (installed .hpp) builds with pkg-config and runs" adapter
soname=$(sed -n 's/^#define MCREPL_VERSION_\(MAJOR\|MINOR\) //p' \
	lib/include/mcrepl/version.h | paste -sd.)
check "soname link (libmcrepl.so.$soname)" test -L "$dest/usr/lib/libmcrepl.so.$soname"
check "soname recorded" sh -c "objdump -p '$dest/usr/lib/libmcrepl.so' |
	grep -q 'SONAME *libmcrepl.so.$soname\$'"
check "the engine is exported" sh -c "nm -D --defined-only '$dest/usr/lib/libmcrepl.so' | sed 's/@.*//' | grep -q ' mcrepl_engine_create\$'"
check "the policy rules are private (no mcrepl_policy_* but _name)" sh -c \
	"! nm -D --defined-only '$dest/usr/lib/libmcrepl.so' |
	sed 's/@.*//' | grep ' mcrepl_policy_' | grep -qv ' mcrepl_policy_name\$'"
check "only mcrepl_ symbols are exported" sh -c \
	"! nm -D --defined-only '$dest/usr/lib/libmcrepl.so' | awk '{print \$3}' | sed 's/@.*//' |
	grep -v '^mcrepl_' | grep -v '^MCREPL_0\$' | grep -q ."
check "no private function carries the public prefix (every mcrepl_ symbol of the .a is exported)" sh -c \
	"nm -g --defined-only '$dest/usr/lib/libmcrepl.a' 2>/dev/null |
	awk '\$2 ~ /^[TDRB]\$/ {print \$3}' | grep '^mcrepl_' | sort -u > '$work/a.sym' &&
	nm -D --defined-only '$dest/usr/lib/libmcrepl.so' | awk '{print \$3}' |
	sed 's/@.*//' | sort -u > '$work/so.sym' &&
	test -z \"\$(comm -23 '$work/a.sym' '$work/so.sym')\""
check ".pc: libdir=\${prefix}/lib" grep -qx 'libdir=${prefix}/lib' "$pc"
check ".pc: includedir=\${prefix}/include" \
	grep -qx 'includedir=${prefix}/include' "$pc"
check ".pc: relocates with --define-variable" eq "$(PKG_CONFIG_PATH="$pcdir" \
	pkg-config --define-variable=prefix=/opt/m --variable=libdir libmcrepl)" \
	/opt/m/lib
for p in mcrepl-master mcrepl-worker mcrepl-cli; do
	check "$p installed and runs --version" sh -c \
		"'$dest/usr/bin/$p' --version | grep -q '^$p (libmcrepl '"
	man="$dest/usr/share/man/man1/$p.1"
	check "$p.1 installed" grep -q "^\.TH $(echo "$p" |
		tr a-z A-Z) 1" "$man"
done
man="$dest/usr/share/man/man1"
check "mcrepl-worker.1 lists --advertise_address" \
	grep -q 'advertise_address' "$man/mcrepl-worker.1"
check "mcrepl-master.1 lists the knobs" \
	grep -q 'dynamic_replication_mode' "$man/mcrepl-master.1"
check "mcrepl-cli.1 lists the commands" \
	grep -q '^\\fBput KEY' "$man/mcrepl-cli.1"
for d in SECURITY.md HA.md; do
	check "docs/$d installed (the man pages cite it)" \
		cmp -s "docs/$d" "$dest/usr/share/doc/libmcrepl/$d"
done
$MAKE -s BUILD="$BUILD" uninstall DESTDIR="$dest" PREFIX=/usr >/dev/null
check "make uninstall leaves no file" eq "$(find "$dest" ! -type d | wc -l)" 0
lib64="$work/lib64"
$MAKE -s BUILD="$BUILD" install DESTDIR="$lib64" PREFIX=/usr \
	LIBDIR=/opt/lib64 >/dev/null
check ".pc: a LIBDIR outside PREFIX stays absolute" \
	grep -qx 'libdir=/opt/lib64' "$lib64/opt/lib64/pkgconfig/libmcrepl.pc"
echo "1..$n"
echo "install-test: $((n - failed)) passed, $failed failed"
[ "$failed" -eq 0 ]
