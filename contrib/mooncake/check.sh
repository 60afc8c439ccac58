#!/usr/bin/env bash
# make mooncake-check: upstream Mooncake Store with libmcrepl linked in.
#
#  1. installs libmcrepl into a private prefix ($WORK/prefix, pkg-config);
#  2. builds upstream at the pinned commit with contrib/mooncake/libmcrepl.patch
#     through the build script given as BUILD_SCRIPT (it takes PATCH=), plus
#     upstream's master_service_test;
#  3. runs upstream's dynamic_replication_test (27 tests + 1 added) and
#     master_service_test (Get/BatchGet, Put, Remove, eviction, copies);
#  4. measures the patched master's enforce/off ratios in-process and over
#     RPC (contrib/mooncake/bench.sh, patched build only, 100 k keys,
#     uniform, 2 threads);
#  5. measures read balance (contrib/mooncake/balance_bench.cpp: modes off,
#     rfc, auto side by side in one process, 8 and 64 segments, 100 k keys,
#     Zipf 0.99, 100 k reads/s, 30 s) and the same workload on our master's
#     store (bench/master/bench_store_balance.c) and in mcrepl-sim.
# The last line: upstream_tests=<n> passed=<p> enforce_off_inproc=<x>
# enforce_off_rpc=<y> balance_off=<a> balance_auto=<b> balance_ours=<c>
# patch_added=<lines> (balance_*: steady max/mean of reads per segment at 8
# segments: Mooncake off, Mooncake auto, our master auto; patch_added: the
# patch's added lines). A bench that failed reads "failed", one skipped
# "none". Exit status 1 when a test failed (never for a bench).
#
# Inputs (environment, none has a default outside this tree):
#   BUILD_SCRIPT  a build script for upstream Mooncake at the pinned commit;
#                 it reads MOONCAKE_GIT/YLT_GIT/PYBIND_GIT/GTEST_GIT, SRC, OUT
#                 and PATCH and takes extra ninja targets as arguments
#   MIRRORS       a directory of bare git mirrors named <owner>+<name>/repo,
#                 or each of MOONCAKE_GIT, YLT_GIT, PYBIND_GIT, GTEST_GIT
#   WORK (default build/mooncake in this tree); SRC/OUT (default $WORK/src,
#   $WORK/out); REPS (bench repetitions, default 5: one repetition's
#   enforce/off swings by +-0.05 on a shared 2-core machine, the median of
#   five by about half that); BAL_KEYS, BAL_RATE, BAL_SECONDS (the balance
#   workload of both masters, default 100000 keys, 100000 reads/s, 30 s);
#   BENCH=0 skips the
#   enforce/off bench, BALANCE=0 the balance runs. A SRC patched with an
#   older patch has it reversed first; ninja then rebuilds only what either
#   patch touches.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
mirror() { # variable owner+name
	if [ -n "${!1:-}" ]; then
		echo "${!1}"
	elif [ -n "${MIRRORS:-}" ]; then
		echo "$MIRRORS/$2/repo"
	fi
}
MOONCAKE_GIT=$(mirror MOONCAKE_GIT kvcache-ai+Mooncake)
YLT_GIT=$(mirror YLT_GIT alibaba+yalantinglibs)
PYBIND_GIT=$(mirror PYBIND_GIT pybind+pybind11)
GTEST_GIT=$(mirror GTEST_GIT google+googletest)
missing=
for v in BUILD_SCRIPT MOONCAKE_GIT YLT_GIT PYBIND_GIT GTEST_GIT; do
	[ -n "${!v:-}" ] || missing="$missing $v"
done
if [ -n "$missing" ]; then
	echo "mooncake-check: set BUILD_SCRIPT and MIRRORS (or MOONCAKE_GIT YLT_GIT PYBIND_GIT GTEST_GIT); missing:$missing" >&2
	exit 2
fi
export MOONCAKE_GIT YLT_GIT PYBIND_GIT GTEST_GIT
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
# and the library's links (libmcrepl.so -> .so.0.6 -> .so.0.6.4): without
# them the linker finds only libmcrepl.a, and Mooncake would be checked
# linked statically where a user's `make install` links the shared one
(cd "$WORK/stage$PREFIX" && find . -type l) | while read -r f; do
	[ "$(readlink "$PREFIX/$f" 2>/dev/null)" = \
		"$(readlink "$WORK/stage$PREFIX/$f")" ] && continue
	cp -P "$WORK/stage$PREFIX/$f" "$PREFIX/$f.new"
	mv -T "$PREFIX/$f.new" "$PREFIX/$f"
done
export PKG_CONFIG_PATH=$PREFIX/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}
# A tree configured while the prefix had no links (check.sh before
# 2026-12-04) keeps libmcrepl.a in CMake's cache: mark the entry not
# found, and the next configure looks again and finds the shared one.
cache=$OUT/build/CMakeCache.txt
if [ -f "$cache" ]; then
	sed -i 's|^\(pkgcfg_lib_MCREPL_mcrepl:FILEPATH=\).*\.a$|\1pkgcfg_lib_MCREPL_mcrepl-NOTFOUND|' \
		"$cache"
fi

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

# The benches never end the check: a failed one reads "failed" (or "none"
# when skipped) in the last line, and the exit status is the tests'.
INPROC=1 RPC=1
[ "${BENCH:-1}" != 0 ] || INPROC=0 RPC=0
[ "${BALANCE:-1}" = 0 ] || BALANCE=1
export BAL_KEYS=${BAL_KEYS:-100000} BAL_RATE=${BAL_RATE:-100000}
export BAL_SECONDS=${BAL_SECONDS:-30}
: >"$WORK/bench.txt"
if [ "$INPROC$BALANCE" != 00 ]; then
	echo "mooncake-check: the patched master's enforce/off ratios and balance"
	KEYS=100000 DISTS=uniform THREADS=2 REPS=${REPS:-5} LOG=$WORK/bench.log \
		INPROC=$INPROC RPC=$RPC BALANCE=$BALANCE BAL_SEGMENTS="8 64" \
		bash "$ROOT/contrib/mooncake/bench.sh" patched="$OUT/build" \
		>"$WORK/bench.txt" 2>"$WORK/bench.err" ||
		echo "mooncake-check: bench incomplete (see $WORK/bench.err)"
	cat "$WORK/bench.err" "$WORK/bench.txt"
fi
field() { # regex of a bench.txt line prefix; prints its value or none/failed
	local v
	v=$(sed -n "s/^$1//p" "$WORK/bench.txt" | head -1)
	echo "${v:-$2}"
}
bal_of() { # segments mode
	sed -n "s/^balance label=patched segments=$1 .*$2=\([^ ]*\).*/\1/p" \
		"$WORK/bench.txt" | head -1
}
skipped() { [ "$1" = 1 ] && echo failed || echo none; }
inproc=$(field 'ratio label=patched inproc_enforce_off=' "$(skipped $INPROC)")
rpc=$(field 'ratio label=patched rpc_enforce_off=' "$(skipped $RPC)")
bal_off=$(bal_of 8 off)
bal_auto=$(bal_of 8 auto)
bal_ours=
if [ "$BALANCE" = 1 ]; then
	# The same workload on our master's store and in mcrepl-sim.
	make -s -C "$ROOT" --no-print-directory BUILD=build \
		build/bench/bench_store_balance build/bin/mcrepl-sim \
		>"$WORK/tools.log" 2>&1 || tail -5 "$WORK/tools.log"
	: >"$WORK/ours.txt"
	for segs in 8 64; do
		"$ROOT/build/bench/bench_store_balance" --segments $segs \
			--keys "$BAL_KEYS" --rate "$BAL_RATE" --seconds "$BAL_SECONDS" |
			sed 's/^balance /balance host=ours /' | tee -a "$WORK/ours.txt" || true
		for mode in off enforce; do
			"$ROOT/build/bin/mcrepl-sim" --nodes $segs --keys "$BAL_KEYS" \
				--theta 0.99 --rate "$BAL_RATE" --object_size 1K \
				--duration "$BAL_SECONDS" --dynamic_replication_mode $mode 2>/dev/null |
				grep -o '"steady_max_mean":[0-9.]*' |
				sed "s/.*:/balance host=sim segments=$segs mode=$mode steady_max_mean=/" || true
		done
	done
	bal_ours=$(sed -n 's/^balance host=ours mode=auto segments=8 .*steady_max_mean=\([^ ]*\).*/\1/p' \
		"$WORK/ours.txt" 2>/dev/null | tail -1)
fi
added=$(grep '^+' "$PATCH" | grep -vc '^+++' || true)
echo "upstream_tests=$total passed=$passed enforce_off_inproc=$inproc" \
	"enforce_off_rpc=$rpc balance_off=${bal_off:-$(skipped $BALANCE)}" \
	"balance_auto=${bal_auto:-$(skipped $BALANCE)}" \
	"balance_ours=${bal_ours:-$(skipped $BALANCE)} patch_added=$added"
[ "$total" -gt 0 ] && [ "$passed" = "$total" ]
