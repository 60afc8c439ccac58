#!/usr/bin/env bash
# make mooncake-check: upstream Mooncake Store with libmcrepl linked in.
#
#  1. installs libmcrepl into a private prefix ($WORK/prefix, pkg-config);
#  2. builds upstream at the pinned commit with contrib/mooncake/libmcrepl.patch
#     through the shared build script (BUILD_SCRIPT, it takes PATCH=), plus
#     upstream's master_service_test;
#  3. runs upstream's dynamic_replication_test (27 tests + 1 added) and
#     master_service_test (Get/BatchGet, Put, Remove, eviction, copies);
#  4. measures the patched master's enforce/off ratios in-process and over
#     RPC (contrib/mooncake/bench.sh, patched build only, 100 k keys,
#     uniform, 2 threads).
# The last line: upstream_tests=<n> passed=<p> enforce_off_inproc=<x>
# enforce_off_rpc=<y>. Exit status 1 when a test failed.
#
# Inputs (environment): MIRRORS (bare git mirrors, default /work/.mirror) or
# MOONCAKE_GIT/YLT_GIT/PYBIND_GIT/GTEST_GIT; BUILD_SCRIPT; WORK (default
# build/mooncake in this tree); SRC/OUT (default $WORK/src, $WORK/out);
# REPS (bench repetitions, default 3); BENCH=0 skips the bench (tests only). A SRC patched with an older patch
# has it reversed first; ninja then rebuilds only what either patch touches.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
MIRRORS=${MIRRORS:-/work/.mirror}
export MOONCAKE_GIT=${MOONCAKE_GIT:-$MIRRORS/kvcache-ai+Mooncake/repo}
export YLT_GIT=${YLT_GIT:-$MIRRORS/alibaba+yalantinglibs/repo}
export PYBIND_GIT=${PYBIND_GIT:-$MIRRORS/pybind+pybind11/repo}
export GTEST_GIT=${GTEST_GIT:-$MIRRORS/google+googletest/repo}
BUILD_SCRIPT=${BUILD_SCRIPT:-/work/shared/mooncake/build-upstream.sh}
WORK=${WORK:-$ROOT/build/mooncake}
export SRC=${SRC:-$WORK/src}
export OUT=${OUT:-$WORK/out}
export PATCH=$ROOT/contrib/mooncake/libmcrepl.patch
PREFIX=$WORK/prefix
mkdir -p "$WORK"

echo "mooncake-check: libmcrepl into $PREFIX"
# Staged (DESTDIR), then only files whose content changed are copied: a
# reinstall of the same library keeps the headers' times, so ninja does not
# rebuild every Mooncake file that includes them.
rm -rf "$WORK/stage"
make -C "$ROOT" -s install PREFIX="$PREFIX" DESTDIR="$WORK/stage" \
	>"$WORK/install.log" 2>&1 || {
	tail -20 "$WORK/install.log"
	exit 1
}
(cd "$WORK/stage$PREFIX" && find . -type f) | while read -r f; do
	cmp -s "$WORK/stage$PREFIX/$f" "$PREFIX/$f" && continue
	mkdir -p "$(dirname "$PREFIX/$f")"
	cp -p "$WORK/stage$PREFIX/$f" "$PREFIX/$f"
done
export PKG_CONFIG_PATH=$PREFIX/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}

if [ -f "$SRC/.patched" ] && ! cmp -s "$SRC/.patched" "$PATCH"; then
	# Reverse it (rewritten files get new times, so ninja rebuilds them);
	# the build script then applies the current one.
	echo "mooncake-check: $SRC carries another patch; reversing it"
	patch -s -R -p1 -d "$SRC" <"$SRC/.patched"
	rm -f "$SRC/.patched"
fi
echo "mooncake-check: building upstream + patch (log $WORK/build.log)"
bash "$BUILD_SCRIPT" mooncake-store/tests/master_service_test \
	>"$WORK/build.log" 2>&1 || {
	grep -E 'error|FAILED' "$WORK/build.log" | head -20
	exit 1
}

total=0
passed=0
run_tests() { # binary
	local bin=$OUT/build/mooncake-store/tests/$1 log=$WORK/$1.log n p
	(cd "$WORK" && "$bin" --gtest_brief=1 >"$log" 2>&1) || true
	n=$(sed -n 's/^\[==========\] \([0-9]*\) tests\? from .* ran.*/\1/p' "$log")
	p=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) tests\?\..*/\1/p' "$log")
	n=${n:-0}
	p=${p:-0}
	echo "mooncake-check: $1 ran=$n passed=$p (log $log)"
	grep '^\[  FAILED  \] [A-Za-z]' "$log" | sort -u || true
	total=$((total + n))
	passed=$((passed + p))
}
run_tests dynamic_replication_test
run_tests master_service_test

if [ "${BENCH:-1}" != 0 ]; then
	echo "mooncake-check: enforce/off ratios of the patched master"
	KEYS=100000 DISTS=uniform THREADS=2 REPS=${REPS:-3} LOG=$WORK/bench.log \
		bash "$ROOT/contrib/mooncake/bench.sh" patched="$OUT/build" \
		>"$WORK/bench.txt"
	cat "$WORK/bench.txt"
else
	: >"$WORK/bench.txt" # BENCH=0: tests only
fi
inproc=$(sed -n 's/^ratio label=patched inproc_enforce_off=//p' "$WORK/bench.txt")
rpc=$(sed -n 's/^ratio label=patched rpc_enforce_off=//p' "$WORK/bench.txt")
echo "upstream_tests=$total passed=$passed enforce_off_inproc=${inproc:-none}" \
	"enforce_off_rpc=${rpc:-none}"
[ "$total" -gt 0 ] && [ "$passed" = "$total" ]
