#!/bin/sh
# mcrepl-bench tests (make check-mbench): a short Zipf run on a local
# cluster that must replicate, an exact tiny-trace replay with a malformed
# line, bad flags, a mode comparison with a chart, and Ctrl-C / kill -9
# taking the daemons down. Usage: run.sh path/to/mcrepl-bench
# MCREPL_BIN_DIR must name the directory of mcrepl-master and mcrepl-worker.
set -u
BENCH=${1:?usage: run.sh path/to/mcrepl-bench}
DIR=$(dirname "$0")
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT INT TERM
n=0
failed=0

pass() { n=$((n + 1)); echo "ok $n - $1"; }
fail() { n=$((n + 1)); echo "not ok $n - $1"; failed=$((failed + 1)); }
check() { # check "description" command...
	desc=$1
	shift
	if "$@"; then pass "$desc"; else fail "$desc"; fi
}
# field NAME FILE [MODE]: a field of the (MODE's) summary line in FILE
field() {
	grep '^{"summary":' "$2" | grep "\"mode\":\"${3:-}" | tail -n 1 |
		sed -n 's/.*"'"$1"'":\("[^"]*"\|[^,}]*\).*/\1/p'
}
eq() { [ "$1" = "$2" ] || { echo "#   got '$1', want '$2'" >&2; return 1; }; }
ge() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a != "" && a + 0 >= b + 0) }' ||
	{ echo "#   got '$1', want >= '$2'" >&2; return 1; }; }
# children PID: the daemons a bench process started
children() { ps -o pid= --ppid "$1" 2>/dev/null | tr -d ' '; }
all_gone() {
	for p in $1; do kill -0 "$p" 2>/dev/null && return 1; done
	return 0
}

FAST="--dynamic_replication_heat_window_seconds=1
      --dynamic_replication_admission_qps_threshold=5"
LOG="--daemon_log $TMP/daemons.log"

# ---- Zipf on 3 workers, enforce: something gets replicated -----------------
$BENCH zipf --local 3 --duration 4 --modes enforce --keys 2000 \
	--object_size 4K --clients 3 $LOG --master_flags "$FAST" \
	> "$TMP/zipf" 2> "$TMP/zipf.err"
rc=$?
check "zipf: exit status 0" eq "$rc" 0
check "zipf: one summary line" eq "$(grep -c '^{"summary":' "$TMP/zipf")" 1
check "zipf: the summary line is JSON" \
	sh -c "grep '^{\"summary\":' '$TMP/zipf' | jq -e .summary > /dev/null"
check "zipf: mode enforce, 3 workers" \
	eq "$(field mode "$TMP/zipf"),$(field workers "$TMP/zipf")" '"enforce",3'
check "zipf: replicated_keys >= 1" ge "$(field replicated_keys "$TMP/zipf")" 1
check "zipf: reads >= 1000" ge "$(field reads "$TMP/zipf")" 1000
check "zipf: no errors, no wrong bytes" \
	eq "$(field errors "$TMP/zipf"),$(field corrupt "$TMP/zipf")" "0,0"
check "zipf: a reaction was measured" ge "$(field reaction_ms "$TMP/zipf")" 0
check "zipf: steady max/mean measured" \
	ge "$(field steady_max_mean "$TMP/zipf")" 1
check "zipf: daemons' stderr went to --daemon_log" \
	grep -q 'mcrepl-worker' "$TMP/daemons.log"

# ---- tiny trace: exact reads, misses and the malformed-line report ---------
$BENCH trace "$DIR/tiny_trace.jsonl" --local 2 --clients 2 --speedup 2 \
	$LOG > "$TMP/trace" 2> "$TMP/trace.err"
rc=$?
check "trace: exit status 0" eq "$rc" 0
check "trace: 8 block reads, 4 misses, 4 requests" \
	eq "$(field reads "$TMP/trace"),$(field misses "$TMP/trace"),$(field requests "$TMP/trace")" \
	"8,4,4"
check "trace: 1 malformed line, 0 errors" \
	eq "$(field malformed "$TMP/trace"),$(field errors "$TMP/trace")" "1,0"
check "trace: the malformed line reported with its number, exactly" \
	eq "$(cat "$TMP/trace.err")" \
	"mcrepl-bench: $DIR/tiny_trace.jsonl:3: truncated line; skipped"

# ---- bad input: one error line, exit 2 (flags) or 1 (files) ----------------
bad() { # bad "description" want-status args...
	desc=$1
	want=$2
	shift 2
	$BENCH "$@" > "$TMP/bad" 2> "$TMP/bad.err"
	rc=$?
	check "$desc: exit $want" eq "$rc" "$want"
	check "$desc: one error line" eq "$(wc -l < "$TMP/bad.err")" 1
}
bad "no workload" 2
bad "unknown workload" 2 scan --local 1
bad "unknown flag" 2 zipf --local 1 --bogus 1
bad "bad number" 2 zipf --local 1 --keys 12x
bad "zero keys" 2 zipf --local 1 --keys 0
bad "bad size suffix" 2 zipf --local 1 --object_size 4Q
bad "bad mode" 2 zipf --local 1 --modes off,on
bad "repeated mode" 2 zipf --local 1 --modes off,off
bad "neither --local nor --master" 2 zipf
bad "both --local and --master" 2 zipf --local 1 --master 127.0.0.1:1
bad "--modes with --master" 2 zipf --master 127.0.0.1:1 --modes off
bad "missing value" 2 zipf --local 1 --keys
bad "trace without a file" 2 trace --local 1
bad "missing trace file" 1 trace "$TMP/none.jsonl" --local 1
bad "unreachable master" 1 zipf --master 127.0.0.1:1 --duration 1

# ---- off vs enforce side by side, with a chart ----------------------------
$BENCH zipf --local 2 --duration 2 --modes off,enforce --keys 500 \
	--object_size 1K --clients 2 --quiet true --plot "$TMP/chart.png" \
	$LOG --master_flags "$FAST" > "$TMP/cmp" 2> "$TMP/cmp.err"
rc=$?
check "compare: exit status 0" eq "$rc" 0
check "compare: a summary per mode" \
	eq "$(field mode "$TMP/cmp" off),$(field mode "$TMP/cmp" enforce)" \
	'"off","enforce"'
check "compare: off replicates nothing" \
	eq "$(field replicated_keys "$TMP/cmp" off),$(field dynamic_replicas "$TMP/cmp" off)" "0,0"
check "compare: the side-by-side table" grep -q '^side by side .* off .* enforce' "$TMP/cmp"
if command -v gnuplot > /dev/null; then
	check "compare: chart written (PNG)" \
		sh -c "head -c 8 '$TMP/chart.png' | grep -q PNG"
else
	check "compare: no gnuplot, how to install it said" \
		grep -q 'apt-get install -y gnuplot-nox' "$TMP/cmp.err"
fi

# ---- Ctrl-C and kill -9: the daemons die with the bench -------------------
stop_test() { # stop_test SIGNAL want-status
	$BENCH zipf --local 2 --duration 30 --keys 200 --object_size 1K \
		--quiet true $LOG > "$TMP/sig" 2>&1 &
	pid=$!
	i=0
	while ! grep -q 'put 200 keys' "$TMP/sig" && [ $i -lt 100 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	kids=$(children $pid)
	kill -"$1" $pid
	wait $pid
	rc=$?
	i=0
	while ! all_gone "$kids" && [ $i -lt 50 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	check "SIG$1: 3 daemons were running" eq "$(echo $kids | wc -w)" 3
	check "SIG$1: exit status $2" eq "$rc" "$2"
	check "SIG$1: the daemons are gone" all_gone "$kids"
}
stop_test INT 130
stop_test KILL 137

echo "1..$n"
if [ "$failed" -ne 0 ]; then
	echo "check-mbench: $failed of $n failed"
	exit 1
fi
echo "check-mbench: all $n passed"
