#!/bin/sh
# mcrepl-bench tests (make check-mbench): a short Zipf run on a local
# cluster that must replicate, a shifting run whose hot key moves with the
# ranking, an exact tiny-trace replay with a malformed line, bad flags, a
# mode comparison with a chart, cross-domain reads with --domains (local)
# and with --master, and Ctrl-C / kill -9 taking the daemons down.
# Flash and rehot runs, and the ranking both tools draw for a seed
# (mcrepl-sim's summary names the same one).
# Usage: run.sh path/to/mcrepl-bench path/to/mcrepl-sim
# MCREPL_BIN_DIR must name the directory of mcrepl-master and mcrepl-worker.
set -u
BENCH=${1:?usage: run.sh path/to/mcrepl-bench path/to/mcrepl-sim}
SIM=${2:?usage: run.sh path/to/mcrepl-bench path/to/mcrepl-sim}
DIR=$(dirname "$0")
TMP=$(mktemp -d)
own= # daemons this script started itself (the --master test)
trap 'kill $own 2> /dev/null; rm -rf "$TMP"' EXIT INT TERM
# the benches' throwaway auth files: a bench killed -9 below leaves its
# directory here, removed with $TMP
export TMPDIR="$TMP"
. "$DIR/../tap.sh"
# field NAME FILE [MODE]: a field of the (MODE's) summary line in FILE
field() {
	grep '^{"summary":' "$2" | grep "\"mode\":\"${3:-}" | tail -n 1 |
		sed -n 's/.*"'"$1"'":\("[^"]*"\|[^,}]*\).*/\1/p'
}
# children PID: the daemons a bench process started
children() { ps -o pid= --ppid "$1" 2>/dev/null | tr -d ' '; }
all_gone() {
	for p in $1; do kill -0 "$p" 2>/dev/null && return 1; done
	return 0
}
# wait_for COMMAND...: polls until COMMAND succeeds; the bound (20 s times
# $MCREPL_TEST_TIMEOUT_SCALE) only ends a hang, so a loaded machine makes
# this slower, never red. Its status: COMMAND's last.
wait_for() {
	i=$((200 * ${MCREPL_TEST_TIMEOUT_SCALE:-1}))
	until "$@"; do
		[ $i -gt 0 ] || return 1
		i=$((i - 1))
		sleep 0.1
	done
}
# show FILE: its last lines, into this log, when a check on it failed
show() { echo "#   last lines of $1:" >&2; tail -n 15 "$1" | sed 's/^/#   | /' >&2; }

FAST="--dynamic_replication_heat_window_seconds=1
      --dynamic_replication_admission_qps_threshold=5"
# The daemons' stderr, a file per case: $MCREPL_TEST_LOG_DIR/mbench/<case>.log
# (make check-mbench: build/test-logs/mbench/), else in $TMP. A case with a
# failed check ends with that file's path and last lines.
LOGS=${MCREPL_TEST_LOG_DIR:-$TMP}/mbench
unset MCREPL_TEST_LOG_DIR # else the harness sends the daemons' stderr there
rm -rf "$LOGS"
mkdir -p "$LOGS"
case_failed=0
failed_cases=
begin() { # begin CASE: the daemon log flag of this case in $LOG
	case_name=$1
	case_failed=$failed
	LOG="--daemon_log $LOGS/$1.log"
}
end() { # after a case's checks
	[ "$failed" -eq "$case_failed" ] || failed_cases="$failed_cases $case_name"
}
# the failed cases' daemon logs: their last lines, then where they are
# (what make check shows is the end of this output)
logs_of_failed() {
	for c in $failed_cases; do
		echo "# last lines of $c's daemon log:"
		tail -n 8 "$LOGS/$c.log" 2> /dev/null | sed 's/^/#   | /'
	done
	for c in $failed_cases; do
		echo "# $c failed: its daemons' log is $LOGS/$c.log"
	done
}

# ---- Zipf on 3 workers, enforce: something gets replicated -----------------
begin zipf
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
# covers: R-GOAL-1
check "zipf: replicated_keys >= 1" ge "$(field replicated_keys "$TMP/zipf")" 1
check "zipf: reads >= 1000" ge "$(field reads "$TMP/zipf")" 1000
check "zipf: no errors, no wrong bytes" \
	eq "$(field errors "$TMP/zipf"),$(field corrupt "$TMP/zipf")" "0,0"
check "zipf: a reaction was measured" ge "$(field reaction_ms "$TMP/zipf")" 0
check "zipf: steady max/mean measured" \
	ge "$(field steady_max_mean "$TMP/zipf")" 1
check "zipf: daemons' stderr went to --daemon_log" \
	grep -q 'mcrepl-worker' "$LOGS/zipf.log"
check "zipf: one domain, no cross-domain bytes" \
	eq "$(field domains "$TMP/zipf"),$(field cross_domain_read_bytes "$TMP/zipf"),$(field cross_domain_share "$TMP/zipf"),$(field steady_cross_domain_share "$TMP/zipf")" \
	"1,0,0.000000,0.000000"
check "zipf: read_bytes = reads x 4K" \
	eq "$(field read_bytes "$TMP/zipf")" "$(($(field reads "$TMP/zipf") * 4096))"
end

# ---- shifting: the hot key moves at each redraw -------------------------------
begin shifting
# 3 keys, Zipf theta 3 (the hottest gets 86 % of the reads), mode off, 4 s
# in 1 s rows: the keys are put round robin, one per worker, so each row's
# busiest worker holds that phase's hottest key. Static Zipf keeps it on
# one worker; shifting (period 1 s, seed 7) redraws the ranking each
# second, and the busiest worker follows (the sequence is fixed by the
# seed: the redraws are tools/common/popgen.c's, mcrepl-sim's too; its
# unit test pins the hot object of each phase, 0 1 0 2).
# hottest FILE: the busiest worker's column (1-3) in each interval row,
# a run of rows with the same one said once: on a loaded machine a row
# may close late and span two phases (its busiest is the one with more of
# it), or a short last row be added
hottest() {
	awk '$1 == "[off]" && $2 ~ /^[0-9.]+$/ && NF > 8 {
		b = 3; for (i = 4; i <= 5; i++) if ($(i + 1) > $(b + 1)) b = i
		if (b != last) printf "%d ", b - 2; last = b }' "$1"
}
rows() { awk '$1 == "[off]" && $2 ~ /^[0-9.]+$/ && NF > 8' "$1" | wc -l; }
KEYS3="--local 3 --duration 4 --modes off --keys 3 --theta 3 --object_size 4K
       --clients 2 --rate 2000 --seed 7 $LOG"
$BENCH zipf $KEYS3 > "$TMP/static" 2>&1
rc=$?
check "shifting: the static run's exit status 0" eq "$rc" 0
[ "$rc" = 0 ] || show "$TMP/static"
$BENCH shifting $KEYS3 --shift_period 1 > "$TMP/shift" 2>&1
rc=$?
check "shifting: exit status 0" eq "$rc" 0
[ "$rc" = 0 ] || show "$TMP/shift"
check "shifting: workload named, 4 phases, 0 errors" \
	eq "$(field workload "$TMP/shift"),$(field shift_phases "$TMP/shift"),$(field errors "$TMP/shift")" \
	'"shifting",4,0'
check "shifting: a row a second (4 s)" ge "$(rows "$TMP/static")" 4
h=$(hottest "$TMP/static")
check "shifting: static zipf keeps the hot key on one worker" eq "$h" "1 "
[ "$h" = "1 " ] || show "$TMP/static"
h=$(hottest "$TMP/shift")
check "shifting: the hot key moves with the ranking" eq "$h" "1 3 1 2 "
[ "$h" = "1 3 1 2 " ] || show "$TMP/shift"
# the simulator reads the same four rankings for the same seed: the same
# last one (digest of its top keys)
SIM3="--nodes 3 --keys 3 --theta 3 --shift_period 1 --duration 4 --seed 7
      --quiet"
$SIM $SIM3 --workload shifting > "$TMP/shift.sim" 2>&1
check "shifting: mcrepl-sim draws the same rankings for the seed" \
	eq "$(field ranking_digest "$TMP/shift")" \
	"$(grep '^{"summary":' "$TMP/shift.sim" | sed -n 's/.*"ranking_digest":\("[^"]*"\).*/\1/p')"
arr() { grep '^{"summary":' "$2" | sed -n 's/.*"'"$1"'":\[\([^]]*\)\].*/\1/p'; }
pm=$(arr phase_max_mean "$TMP/shift")
check "shifting: one phase_max_mean and dynamic count per phase" \
	eq "$(echo "$pm" | tr ',' '\n' | wc -l),$(arr phase_dynamic_replicas "$TMP/shift" | tr ',' '\n' | wc -l)" \
	"4,4"
check "shifting: worst_phase_max_mean is the largest phase" \
	eq "$(field worst_phase_max_mean "$TMP/shift")" \
	"$(echo "$pm" | tr ',' '\n' | sort -g | tail -n 1)"
check "shifting: mode off relieves no phase" \
	eq "$(field phases_relieved "$TMP/shift")" 0
check "shifting: a static run prints no phase fields" \
	eval '! grep -q phase_max_mean "$TMP/static"'
end

# ---- rehot: the hot key goes cold and comes back --------------------------------
begin rehot
# The same 3 keys and seed: phases 0 and 2 read the first ranking, 1 and 3
# its one redraw (whose hottest is object 1), so the busiest worker goes
# back and forth.
$BENCH rehot $KEYS3 --shift_period 1 > "$TMP/rehot" 2>&1
rc=$?
check "rehot: exit status 0" eq "$rc" 0
h=$(hottest "$TMP/rehot")
check "rehot: the hot key leaves and comes back" eq "$h" "1 3 1 3 "
[ "$h" = "1 3 1 3 " ] || show "$TMP/rehot"
check "rehot: workload named, 4 phases, 0 errors" \
	eq "$(field workload "$TMP/rehot"),$(field shift_phases "$TMP/rehot"),$(field errors "$TMP/rehot")" \
	'"rehot",4,0'
$SIM $SIM3 --workload rehot > "$TMP/rehot.sim" 2>&1
check "rehot: mcrepl-sim draws the same rankings for the seed" \
	eq "$(field ranking_digest "$TMP/rehot")" \
	"$(grep '^{"summary":' "$TMP/rehot.sim" | sed -n 's/.*"ranking_digest":\("[^"]*"\).*/\1/p')"
end

# ---- flash: a key nobody read takes the reads of one second ---------------------
begin flash
# 3 keys, theta 0: the background reads draw 2 ranks, so the third key's
# worker serves nothing until the flash (1 s from 1 s, share 1) sends it
# every read of that second (how many depends on the machine's speed; the
# simulator's tests count them exactly), and its row is that one worker's
# (max/mean near 3).
$BENCH flash --local 3 --duration 3 --modes off --keys 3 --theta 0 \
	--object_size 4K --clients 2 --rate 2000 --flash_at 1 \
	--flash_share 1 $LOG > "$TMP/flash" 2>&1
rc=$?
check "flash: exit status 0" eq "$rc" 0
check "flash: workload named, 0 errors, nothing evicted" \
	eq "$(field workload "$TMP/flash"),$(field errors "$TMP/flash"),$(field evicted_reads "$TMP/flash")" \
	'"flash",0,0'
check "flash: the flash key was read, not every read was it" \
	sh -c "[ $(field flash_reads "$TMP/flash") -ge 1 ] &&
	       [ $(field flash_reads "$TMP/flash") -lt $(field reads "$TMP/flash") ]"
check "flash: its second's row is one worker's (max/mean > 2.5)" \
	gt "$(field flash_max_mean "$TMP/flash")" 2.5
[ "$rc" = 0 ] || show "$TMP/flash"
end

# ---- tiny trace: exact reads, misses and the malformed-line report ---------
begin trace
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
	"mcrepl-bench: $DIR/tiny_trace.jsonl:3: malformed line (truncated line), skipped"
end

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
bad "shift fraction above 1" 2 shifting --local 1 --shift_fraction 1.5
bad "zero shift period" 2 shifting --local 1 --shift_period 0
bad "missing trace file" 1 trace "$TMP/none.jsonl" --local 1
bad "unreachable master" 1 zipf --master 127.0.0.1:1 --duration 1
bad_domains() { # bad_domains "description" args...: exit 2, says why
	what=$1
	shift
	bad "$what" 2 "$@"
	check "$what: names --domains" grep -q -- '--domains' "$TMP/bad.err"
}
bad_domains "zero domains" zipf --local 4 --domains 0
bad_domains "more domains than workers" zipf --local 4 --domains 5
bad_domains "domains not a number" zipf --local 4 --domains two
bad_domains "--domains with --master" zipf --master 127.0.0.1:1 --domains 2
check "more domains than workers: the message, exactly" eq "$(
	$BENCH zipf --local 2 --domains 3 2>&1)" \
	"mcrepl-bench: --domains 3 is more than the 2 --local workers (each domain needs a worker)"

# ---- off vs enforce side by side, with a chart ----------------------------
begin compare
$BENCH zipf --local 2 --duration 2 --modes off,enforce --keys 500 \
	--object_size 1K --clients 2 --quiet true --plot "$TMP/chart.png" \
	$LOG --master_flags "$FAST" > "$TMP/cmp" 2> "$TMP/cmp.err"
rc=$?
check "compare: exit status 0" eq "$rc" 0
check "compare: a summary per mode" \
	eq "$(field mode "$TMP/cmp" off),$(field mode "$TMP/cmp" enforce)" \
	'"off","enforce"'
# covers: R-CONF-1
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
end

# ---- 2 domains on 4 workers: off vs domain-aware enforce -------------------
begin domains
# Worker i in d<i % 2>, reader j in d<j % 2>. Off: each key has one copy, so
# about half the bytes cross; domain-aware enforce puts hot keys' replicas
# in the readers' domains.
$BENCH zipf --local 4 --domains 2 --duration 3 --modes off,domain \
	--keys 500 --object_size 1K --clients 4 --quiet true $LOG \
	--master_flags "$FAST" > "$TMP/dom" 2> "$TMP/dom.err"
rc=$?
check "domains: exit status 0" eq "$rc" 0
check "domains: a summary per mode, 2 domains each" \
	eq "$(field mode "$TMP/dom" off),$(field domains "$TMP/dom" off),$(field mode "$TMP/dom" domain),$(field domains "$TMP/dom" domain)" \
	'"off",2,"domain",2'
for w in 1 2 3 4; do
	check "domains: host-$w in d$(((w - 1) % 2))" \
		grep -q "host-$w (d$(((w - 1) % 2)))" "$TMP/dom"
done
check "domains: readers in d0..d1" \
	grep -q '4 client threads in 2 domains (reader j in d0..d1' "$TMP/dom"
for m in off domain; do
	check "domains: $m read_bytes = reads x 1K" eq \
		"$(field read_bytes "$TMP/dom" $m)" \
		"$(($(field reads "$TMP/dom" $m) * 1024))"
	check "domains: $m cross share = cross bytes / read bytes, in [0,1]" \
		awk -v x="$(field cross_domain_read_bytes "$TMP/dom" $m)" \
		-v b="$(field read_bytes "$TMP/dom" $m)" \
		-v s="$(field cross_domain_share "$TMP/dom" $m)" \
		-v t="$(field steady_cross_domain_share "$TMP/dom" $m)" \
		'BEGIN { exit !(b > 0 && x % 1024 == 0 && x <= b &&
			s >= 0 && s <= 1 && t >= 0 && t <= 1 &&
			s - x / b < 1e-6 && x / b - s < 1e-6) }'
	check "domains: $m no errors" eq "$(field errors "$TMP/dom" $m)" 0
done
check "domains: off reads across domains" \
	awk -v s="$(field cross_domain_share "$TMP/dom" off)" 'BEGIN { exit !(s > 0) }'
# covers: R-SCEN-1
check "domains: domain-aware enforce crosses less than off (last half)" \
	awk -v a="$(field steady_cross_domain_share "$TMP/dom" domain)" \
	-v b="$(field steady_cross_domain_share "$TMP/dom" off)" \
	'BEGIN { exit !(a != "" && a + 0 < b + 0) }'
check "domains: domain mode replicated" \
	ge "$(field dynamic_replicas "$TMP/dom" domain)" 1
check "domains: every completed copy counted by its source kind" \
	eq "$(($(field copies_from_primary "$TMP/dom" domain) + $(field copies_from_replica "$TMP/dom" domain)))" \
	"$(field tasks_completed "$TMP/dom" domain)"
check "domains: the side-by-side cross-domain rows" \
	grep -q '^cross-domain read share ' "$TMP/dom"
end

# ---- --master: the readers take the domains of the master's segments ------
begin master
"$MCREPL_BIN_DIR/mcrepl-master" --rpc_port=0 --metrics_port=0 \
	> "$TMP/m.out" 2>> "$LOGS/master.log" &
mpid=$!
own=$mpid
wait_for grep -qs 'ready rpc_port=' "$TMP/m.out"
port=$(sed -n 's/.*rpc_port=\([0-9]*\).*/\1/p' "$TMP/m.out")
wpids=
for d in zb za; do
	"$MCREPL_BIN_DIR/mcrepl-worker" --master="127.0.0.1:$port" \
		--host_id="w-$d" --segment_size=16M --domain=$d \
		> "$TMP/w-$d.out" 2>> "$LOGS/master.log" &
	wpids="$wpids $!"
	own="$own $!"
done
workers_ready() {
	[ "$(cat "$TMP"/w-*.out 2> /dev/null | grep -c 'mcrepl-worker ready')" -ge 2 ]
}
wait_for workers_ready
$BENCH zipf --master "127.0.0.1:$port" --duration 1 --keys 100 \
	--object_size 1K --clients 2 --quiet true > "$TMP/rem" 2> "$TMP/rem.err"
rc=$?
kill $wpids $mpid 2> /dev/null
wait $wpids $mpid 2> /dev/null
own=
check "--master domains: exit status 0" eq "$rc" 0
check "--master domains: 2 domains from the segments" \
	eq "$(field domains "$TMP/rem"),$(field mode "$TMP/rem")" '2,"remote"'
check "--master domains: readers in za..zb (by name)" \
	grep -q '2 client threads in 2 domains (reader j in za..zb' "$TMP/rem"
end

# ---- Ctrl-C and kill -9: the daemons die with the bench -------------------
stop_test() { # stop_test SIGNAL want-status
	begin "sig$1"
	# Not the previous run's output: the child truncates it only later.
	rm -f "$TMP/sig"
	$BENCH zipf --local 2 --duration 30 --keys 200 --object_size 1K \
		--quiet true $LOG > "$TMP/sig" 2>&1 &
	pid=$!
	wait_for grep -qs 'put 200 keys' "$TMP/sig"
	kids=$(children $pid)
	kill -"$1" $pid
	wait $pid
	rc=$?
	wait_for all_gone "$kids"
	check "SIG$1: 3 daemons were running" eq "$(echo $kids | wc -w)" 3
	check "SIG$1: exit status $2" eq "$rc" "$2"
	check "SIG$1: the daemons are gone" all_gone "$kids"
	end
}
stop_test INT 130
stop_test KILL 137

logs_of_failed
tap_done check-mbench
