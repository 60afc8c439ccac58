#!/bin/sh
# make install into a scratch DESTDIR with PREFIX=/usr, then build the C
# example against the installed tree through pkg-config, and run it.
set -eu
MAKE=${1:-make}
BUILD=${2:-build}
dest=$(mktemp -d)
trap 'rm -rf "$dest"' EXIT
$MAKE -s BUILD="$BUILD" install DESTDIR="$dest" PREFIX=/usr >/dev/null
pcdir="$dest/usr/lib/pkgconfig"
flags=$(PKG_CONFIG_SYSROOT_DIR="$dest" PKG_CONFIG_PATH="$pcdir" \
	PKG_CONFIG_ALLOW_SYSTEM_CFLAGS=1 PKG_CONFIG_ALLOW_SYSTEM_LIBS=1 \
	pkg-config --cflags --libs libmcrepl)
cc -std=c11 -Wall -Werror examples/embed_master.c $flags -o "$dest/embed" \
	${SANFLAGS:-}
LD_LIBRARY_PATH="$dest/usr/lib" "$dest/embed" >/dev/null
test -L "$dest/usr/lib/libmcrepl.so.0"
echo "install-test: installed tree builds and runs the example (pkg-config $(PKG_CONFIG_PATH="$pcdir" pkg-config --modversion libmcrepl))"
