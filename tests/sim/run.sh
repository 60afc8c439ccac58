#!/bin/sh
# mcrepl-sim tests (make check-sim): determinism, conservation, a case
# computed by hand, trace replay with a malformed line, eviction, and the
# library's knobs changing the outcome, and the generated trace's hot spot
# relieved. Usage: run.sh path/to/mcrepl-sim path/to/synthetic.jsonl
# path/to/mcrepl-tracegen (the trace: make's $(BUILD)/traces/synthetic.jsonl)
set -u
USAGE="usage: run.sh path/to/mcrepl-sim path/to/synthetic.jsonl path/to/mcrepl-tracegen"
SIM=${1:?$USAGE}
SYNTH=${2:?$USAGE}
TRACEGEN=${3:?$USAGE}
DIR=$(dirname "$0")
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT INT TERM
. "$DIR/../tap.sh"
# field NAME FILE: a field of the last summary line in FILE
field() {
	grep '^{"summary":' "$2" | tail -n 1 |
		sed -n 's/.*"'"$1"'":\("[^"]*"\|[^,}]*\).*/\1/p'
}
no_wall() { grep '^{"summary":' "$1" | sed 's/,"wall_seconds":[0-9.]*//'; }

SMALL="--nodes 32 --keys 20000 --rate 40000 --duration 8 --seed 7"
FAST="--dynamic_replication_heat_window_seconds 1
      --dynamic_replication_admission_qps_threshold 50
      --dynamic_replication_action_cooldown_seconds 0
      --dynamic_replication_max_memory_replicas 4"

# ---- determinism -----------------------------------------------------------
$SIM $SMALL $FAST --dynamic_replication_mode enforce > "$TMP/a" 2>&1
$SIM $SMALL $FAST --dynamic_replication_mode enforce > "$TMP/b" 2>&1
$SIM $SMALL $FAST --dynamic_replication_mode enforce --seed 8 > "$TMP/c" 2>&1
no_wall "$TMP/a" > "$TMP/a.sum"
no_wall "$TMP/b" > "$TMP/b.sum"
no_wall "$TMP/c" > "$TMP/c.sum"
check "determinism: same seed, byte-identical summary (minus wall_seconds)" \
	cmp -s "$TMP/a.sum" "$TMP/b.sum"
check "determinism: same seed, byte-identical interval rows" \
	cmp -s "$TMP/a" "$TMP/b" -i 0 -n "$(grep -b '^{"summary":' "$TMP/a" | cut -d: -f1)"
check "determinism: another seed gives another run" \
	eval '! cmp -s "$TMP/a.sum" "$TMP/c.sum"'
check "enforce run made dynamic replicas" gt "$(field dynamic_replicas "$TMP/a")" 0

# ---- conservation ------------------------------------------------------------
check "conservation: reads = rate x duration" eq "$(field reads "$TMP/a")" 320000
check "conservation: reads issued = reads served" \
	eq "$(field reads_served "$TMP/a")" "$(field reads "$TMP/a")"
rows=$(awk '$1 ~ /^[0-9.]+$/ && NF == 10 { s += $4 } END { print s }' "$TMP/a")
check "conservation: interval rows add up to the reads" eq "$rows" 320000

# ---- computed by hand ----------------------------------------------------------
# 2 nodes, 1 key, mode off: one node serves every read, the other none:
# max/mean = 2 exactly; the ideal with 2 copies is 1 exactly.
$SIM --nodes 2 --keys 1 --rate 1000 --duration 4 > "$TMP/h" 2>&1
check "by hand: 2 nodes, 1 key, off -> max/mean 2.0000" \
	eq "$(field steady_max_mean "$TMP/h")" 2.0000
check "by hand: ideal with 2 copies -> 1.0000" \
	eq "$(field ideal_max_mean "$TMP/h")" 1.0000
# 4 nodes, 1 key: 2 copies hold it on 2 of 4 nodes (ideal 2); with no
# per-key cap, 4 copies spread it evenly (ideal_nocap 1).
$SIM --nodes 4 --keys 1 --rate 1000 --duration 4 --quiet > "$TMP/h4" 2>&1
check "by hand: 4 nodes, 1 key, ideal capped at 2 copies -> 2.0000" \
	eq "$(field ideal_max_mean "$TMP/h4")" 2.0000
check "by hand: 4 nodes, 1 key, ideal_nocap -> 1.0000 with 4 copies" \
	eq "$(field ideal_nocap "$TMP/h4") $(field ideal_nocap_r "$TMP/h4")" "1.0000 4"
# The same with enforce: the key is copied to the other node and every
# reader reads its local replica: one dynamic replica, load close to even.
$SIM --nodes 2 --keys 1 --rate 100000 --duration 6 --quiet \
	--dynamic_replication_mode enforce $FAST > "$TMP/h2" 2>&1
check "by hand: enforce copies the key once" \
	eq "$(field dynamic_replicas "$TMP/h2")" 1
check "by hand: enforce evens the two nodes" \
	lt "$(field steady_max_mean "$TMP/h2")" 1.02

# ---- trace replay --------------------------------------------------------------
# Valid lines read 2 + 3 + 1 + 4 = 10 blocks of 6 distinct ids; line 3 is
# malformed, line 5 is blank.
$SIM --nodes 4 --workload trace "$DIR/tiny_trace.jsonl" --interval 0.1 \
	--dynamic_replication_mode enforce > "$TMP/t" 2> "$TMP/t.err"
check "trace: the malformed line is reported with its number" \
	grep -q 'tiny_trace.jsonl:3: malformed' "$TMP/t.err"
check "trace: only one line reported" eq "$(wc -l < "$TMP/t.err" | tr -d ' ')" 1
check "trace: exact read count" eq "$(field reads "$TMP/t")" 10
check "trace: every read served" eq "$(field reads_served "$TMP/t")" 10
check "trace: distinct blocks" eq "$(field keys "$TMP/t")" 6
check "trace: malformed count" eq "$(field trace_malformed "$TMP/t")" 1
$SIM --workload trace "$TMP/missing.jsonl" > /dev/null 2> "$TMP/t2.err"
check "trace: a missing file is an error" grep -q 'cannot open' "$TMP/t2.err"
# The shared loader (tools/common/trace.c; tests/common/trace_test.c
# checks it in memory) through the simulator: valid requests at 3000,
# 500, 500 and 1000 ms read 3 + 2 + 1 + 1 = 7 blocks of 5 distinct ids
# (id 7 twice in one request, ids past 2^53 and 2^64-1 kept exact); line 2
# is longer than 1 MiB; 150 malformed lines (the first 100 reported, then
# a count); the request at 500 ms after the one at 3000 is out of order:
# the requests are sorted, so the replay lasts 3.001 s (31 rows of 0.1 s).
awk 'BEGIN {
	print "{\"timestamp\": 3000, \"hash_ids\": [7, 7, 18446744073709551615]}"
	printf "{\"timestamp\": 500, \"hash_ids\": [9007199254740993, 8], \"pad\": \""
	for (i = 0; i < 1200; i++) printf "%1024s", "x"
	print "\"}"
	print "{\"timestamp\": 500, \"hash_ids\": [7]}"
	print ""
	for (i = 0; i < 150; i++) print "{\"timestamp\": 9, \"hash_ids\": [1, 2"
	print "{\"timestamp\": 1000, \"hash_ids\": [18446744073709551614]}"
}' > "$TMP/crafted.jsonl"
$SIM --nodes 4 --workload trace "$TMP/crafted.jsonl" --quiet --interval 0.1 \
	> "$TMP/t3" 2> "$TMP/t3.err"
check "trace: crafted file, exact read count" eq "$(field reads "$TMP/t3")" 7
check "trace: crafted file, distinct blocks" eq "$(field keys "$TMP/t3")" 5
check "trace: crafted file, malformed count" \
	eq "$(field trace_malformed "$TMP/t3")" 150
check "trace: crafted file, the first 100 malformed lines reported" \
	eq "$(grep -c ': malformed line (truncated line), skipped$' "$TMP/t3.err")" 100
check "trace: crafted file, then a count" grep -qx \
	"mcrepl-sim: $TMP/crafted.jsonl: 150 malformed lines in all, the first 100 reported" \
	"$TMP/t3.err"
check "trace: crafted file, out-of-order requests sorted" grep -qx \
	"mcrepl-sim: $TMP/crafted.jsonl: 1 request out of time order, sorted by timestamp" \
	"$TMP/t3.err"
check "trace: crafted file, the replay ends at the latest timestamp" \
	eq "$(field sim_seconds "$TMP/t3")" 3.100

# ---- eviction --------------------------------------------------------------------
# Block 1 is hot in the first second and gets a dynamic replica; then 40
# new blocks fill both 10-object nodes past the 0.90 watermark: the
# replica is evicted (least recently read first) and enters the cooldown.
awk 'BEGIN {
	for (i = 0; i < 20; i++) printf "{\"timestamp\": %d, \"hash_ids\": [1]}\n", i * 40
	for (i = 0; i < 40; i++) printf "{\"timestamp\": %d, \"hash_ids\": [%d]}\n", 2000 + i * 10, 100 + i
}' > "$TMP/evict.jsonl"
$SIM --nodes 2 --workload trace "$TMP/evict.jsonl" --node_memory 10M \
	--object_size 1M --interval 0.5 --quiet --dynamic_replication_mode enforce \
	--dynamic_replication_heat_window_seconds 1 \
	--dynamic_replication_admission_qps_threshold 5 \
	--dynamic_replication_policy rfc --default_kv_lease_ttl 500 > "$TMP/e" 2>&1
check "eviction: the dynamic replica was made" eq "$(field copies "$TMP/e")" 1
# covers: R-EVICT-1
check "eviction: and evicted past the watermark" eq "$(field evicted "$TMP/e")" 1
check "eviction: none left" eq "$(field dynamic_replicas "$TMP/e")" 0
# The same under the default policy (auto): the block's replica is retired
# once it has gone cold, before the new blocks fill the nodes.
$SIM --nodes 2 --workload trace "$TMP/evict.jsonl" --node_memory 10M \
	--object_size 1M --interval 0.5 --quiet --dynamic_replication_mode enforce \
	--dynamic_replication_heat_window_seconds 1 \
	--dynamic_replication_admission_qps_threshold 5 > "$TMP/ea" 2>&1
check "auto: the hot block's replica was made" eq "$(field copies "$TMP/ea")" 1
check "auto: and retired when cold, not evicted" \
	eq "$(field retired "$TMP/ea")/$(field evicted "$TMP/ea")" 1/0

# ---- the library's knobs decide ------------------------------------------------
$SIM $SMALL $FAST --quiet --dynamic_replication_mode enforce \
	--dynamic_replication_max_memory_replicas 1 \
	--dynamic_replication_policy rfc > "$TMP/k1" 2>&1
# covers: R-ADMIT-4 R-CONF-4
check "knob: max_memory_replicas 1 -> zero dynamic replicas" \
	eq "$(field dynamic_replicas "$TMP/k1")" 0
check "knob: max_memory_replicas 1 -> zero copy bytes" \
	eq "$(field copy_bytes "$TMP/k1")" 0
$SIM $SMALL $FAST --quiet --dynamic_replication_mode enforce \
	--dynamic_replication_auto_max_replicas 1 > "$TMP/k1a" 2>&1
check "knob: auto_max_replicas 1 -> zero dynamic replicas" \
	eq "$(field dynamic_replicas "$TMP/k1a")/$(field copy_bytes "$TMP/k1a")" 0/0
$SIM $SMALL $FAST --quiet --dynamic_replication_mode observe > "$TMP/k2" 2>&1
# covers: T-4 R-CONF-1
check "knob: mode observe -> zero copies" eq "$(field copies "$TMP/k2")" 0
# covers: R-OBS-1
check "knob: mode observe -> would-propose counted" \
	gt "$(field would_propose "$TMP/k2")" 0
$SIM $SMALL $FAST --quiet > "$TMP/k3" 2>&1
# covers: R-GOAL-7 R-ROLL-1 R-CONF-1
check "knob: mode off -> no heat crossing observed" \
	eq "$(field observed_hot "$TMP/k3")" 0
# covers: R-GOAL-1
check "knob: enforce relieves the hot node" \
	lt "$(field steady_max_mean "$TMP/a")" "$(field steady_max_mean "$TMP/k3")"
check "the binary links libmcrepl's policy symbols" sh -c "nm '$SIM' |
	grep -c ' T mcrepl_\(leases_propose\|heat_cell_record\|order_replicas\|leases_sweep\|leases_replica_removed\|place_target\)$' |
	grep -qx 6"

# ---- domains: cross-domain reads, the reactive floor, a late domain, warmup ------
DOM="--nodes 8 --domains 2 --keys 2000 --rate 20000 --seed 3 $FAST
     --dynamic_replication_mode enforce --read_load_order 1"
$SIM $DOM --quiet --duration 8 --compare "domain_aware=0;domain_aware=1 \
	cross_domain_qps_threshold=2" > "$TMP/d1" 2>&1
s1=$(grep '^{"summary":' "$TMP/d1" | head -n 1 > "$TMP/d1a" && field steady_cross_domain_share "$TMP/d1a")
s2=$(field steady_cross_domain_share "$TMP/d1")
check "domains: first stage leaves reads crossing domains" gt "$s1" 0.05
# covers: R-SCEN-1 R-ADMIT-6
check "domains: domain-aware admission keeps more reads local" lt "$s2" "$s1"
check "domains: no domain-aware run beats the reactive floor" \
	sh -c "awk -v a='$(field cross_domain_share "$TMP/d1")' \
		-v b='$(field reactive_floor_share "$TMP/d1")' \
		'BEGIN { exit !(b > 0 && a + 0 >= b + 0) }'"
$SIM --nodes 8 --keys 2000 --rate 20000 --duration 2 --quiet > "$TMP/d0" 2>&1
check "domains: one domain has no cross-domain read" \
	eq "$(field cross_domain_share "$TMP/d0")" 0.0000
check "domains: one domain has no reactive floor" \
	eq "$(field reactive_floor_share "$TMP/d0")" 0.0000
# Domain d1 joins at 2 s: before that it reads nothing and holds nothing.
$SIM $DOM --quiet --duration 6 --join_at 2 --join_window 2 \
	--dynamic_replication_domain_aware 1 \
	--dynamic_replication_cross_domain_qps_threshold 2 \
	--compare "warmup=0;warmup=1 warmup_max_copies=50" > "$TMP/j" 2>&1
grep '^{"summary":' "$TMP/j" | head -n 1 > "$TMP/j0"
check "join: no warmup, nothing chosen" eq "$(field warmup_chosen "$TMP/j0")" 0
# covers: T-35 R-SCEN-2
check "join: warmup chose warmup_max_copies objects" \
	eq "$(field warmup_chosen "$TMP/j")" 50
check "join: every warmup proposal was accepted" \
	eq "$(field warmup_accepted "$TMP/j")" 50
check "join: the joined domain read in its first window" \
	gt "$(field join_reads "$TMP/j")" 0
check "join: the same reads with and without warmup" \
	eq "$(field join_reads "$TMP/j")" "$(field join_reads "$TMP/j0")"
# covers: R-SCEN-2
check "join: warmup lowers the joined domain's remote-miss share" \
	lt "$(field join_remote_share "$TMP/j")" "$(field join_remote_share "$TMP/j0")"
$SIM $DOM --duration 4 --join_at 2 --dynamic_replication_domain_aware 1 \
	--interval 1 | awk '$1 ~ /^[0-9.]+$/ && $1 <= 2 { print $10 }' > "$TMP/jrows"
check "join: before joining no read crosses domains" \
	eq "$(sort -u "$TMP/jrows" | tr '\n' ' ')" "0.000% "
$SIM --domains 1 --join_at 5 > /dev/null 2> "$TMP/f3"
check "flags: --join_at needs two domains" grep -q 'join_at needs' "$TMP/f3"
$SIM --domains 2 --warmup 1 > /dev/null 2> "$TMP/f4"
check "flags: --warmup needs domain-aware mode" grep -q 'warmup needs' "$TMP/f4"

# ---- shifting hot set ---------------------------------------------------------
# Zipf whose ranking is redrawn every --shift_period s: deterministic per
# seed; fraction 0 is plain Zipf read for read; each redraw moves the hot
# keys, so enforce copies new keys in every phase (more copies than the
# static ranking over the same reads).
sum_only() {
	no_wall "$1" | sed -E 's/"workload":"[a-z]*"//;
		s/,"shift_phases":[0-9]+(,"phase_max_mean".*"phases_relieved":[0-9]+)?//'
}
SHIFT="$SMALL $FAST --quiet --dynamic_replication_mode enforce"
$SIM $SHIFT --workload shifting --shift_period 2 > "$TMP/s1" 2>&1
$SIM $SHIFT --workload shifting --shift_period 2 > "$TMP/s2" 2>&1
$SIM $SHIFT --workload shifting --shift_period 2 --seed 8 > "$TMP/s3" 2>&1
$SIM $SHIFT --workload shifting --shift_fraction 0 > "$TMP/s4" 2>&1
$SIM $SHIFT --workload zipf > "$TMP/s5" 2>&1
$SIM $SHIFT --workload shifting --shift_period 2 --shift_fraction 0.5 \
	> "$TMP/s6" 2>&1
sum_only "$TMP/s1" > "$TMP/s1.sum"
sum_only "$TMP/s2" > "$TMP/s2.sum"
sum_only "$TMP/s3" > "$TMP/s3.sum"
sum_only "$TMP/s4" > "$TMP/s4.sum"
sum_only "$TMP/s5" > "$TMP/s5.sum"
sum_only "$TMP/s6" > "$TMP/s6.sum"
check "shifting: workload named in the summary" eq "$(field workload "$TMP/s1")" '"shifting"'
check "shifting: 8 s at period 2 reads 4 rankings" eq "$(field shift_phases "$TMP/s1")" 4
check "shifting: a static workload reports 0 phases" eq "$(field shift_phases "$TMP/s5")" 0
check "shifting: same seed, identical summary" cmp -s "$TMP/s1.sum" "$TMP/s2.sum"
check "shifting: another seed, another run" eval '! cmp -s "$TMP/s1.sum" "$TMP/s3.sum"'
check "shifting: fraction 0 is plain zipf" cmp -s "$TMP/s4.sum" "$TMP/s5.sum"
check "shifting: fraction 0.5 differs from 0 and 1" eval \
	'! cmp -s "$TMP/s6.sum" "$TMP/s1.sum" && ! cmp -s "$TMP/s6.sum" "$TMP/s5.sum"'
check "shifting: new hot keys each phase, more copies than static" \
	gt "$(field copies "$TMP/s1")" "$(( $(field copies "$TMP/s5") * 2 ))"
check "shifting: the reads are all issued" eq "$(field reads "$TMP/s1")" 320000
arr() { grep '^{"summary":' "$2" | sed -n 's/.*"'"$1"'":\[\([^]]*\)\].*/\1/p'; }
pm=$(arr phase_max_mean "$TMP/s1")
check "shifting: one phase_max_mean per phase" eq "$(echo "$pm" | tr ',' '\n' | wc -l)" 4
check "shifting: one phase_dynamic_replicas per phase" \
	eq "$(arr phase_dynamic_replicas "$TMP/s1" | tr ',' '\n' | wc -l)" 4
check "shifting: worst_phase_max_mean is the largest phase" \
	eq "$(field worst_phase_max_mean "$TMP/s1")" \
	"$(echo "$pm" | tr ',' '\n' | sort -g | tail -n 1)"
check "shifting: phases_relieved within 0..4" sh -c \
	"[ $(field phases_relieved "$TMP/s1") -ge 0 ] && [ $(field phases_relieved "$TMP/s1") -le 4 ]"
$SIM $SMALL --quiet --workload shifting --shift_period 2 > "$TMP/s8" 2>&1
check "shifting: mode off relieves no phase" eq "$(field phases_relieved "$TMP/s8")" 0
check "shifting: static runs print no phase fields" \
	eval '! grep -q phase_max_mean "$TMP/s5"'
# Trace puts: least-used segment (the master daemon) by default, uniformly
# random with --random_puts (Mooncake's allocator): the round robin of
# least-used spreads the trace's blocks more evenly than random does. On
# the generator's trace without its hot blocks (no common block, no shared
# prefix), where the spread of the blocks is all max/mean shows.
"$TRACEGEN" --common_blocks 0 --prefix_share 0 > "$TMP/flat.jsonl"
TR="--nodes 16 --workload trace $TMP/flat.jsonl --speedup 10 --interval 10 --quiet"
$SIM $TR > "$TMP/p1" 2>&1
$SIM $TR --random_puts 1 > "$TMP/p2" 2>&1
$SIM $TR --random_puts 1 > "$TMP/p3" 2>&1
check "trace puts: random placement is less even than least-used" \
	gt "$(field steady_max_mean "$TMP/p2")" "$(field steady_max_mean "$TMP/p1")"
check "trace puts: random placement is deterministic per seed" \
	eq "$(field steady_max_mean "$TMP/p2")" "$(field steady_max_mean "$TMP/p3")"
# The generated trace (make's $(BUILD)/traces/synthetic.jsonl): every
# request reads block 0, so its node serves ~1 read per request more than
# the others; off leaves that hot spot, the default policy copies block 0
# and brings max/mean to the noise floor. Reads and blocks counted here.
set -- $(awk '{ s = $0; sub(/.*"hash_ids": \[/, "", s); sub(/\].*/, "", s)
	k = split(s, id, ", "); reads += k
	for (i = 1; i <= k; i++) if (!(id[i] in seen)) { seen[id[i]]; blocks++ } }
	END { print reads + 0, blocks + 0 }' "$SYNTH")
reads=$1 blocks=$2
TR="--nodes 16 --workload trace $SYNTH --speedup 10 --interval 10 --quiet"
$SIM $TR > "$TMP/g0" 2>&1
$SIM $TR --dynamic_replication_mode enforce > "$TMP/g1" 2>&1
check "generated trace: exact reads" eq "$(field reads "$TMP/g0")" "$reads"
check "generated trace: every read served" \
	eq "$(field reads_served "$TMP/g1")" "$reads"
check "generated trace: distinct blocks" eq "$(field keys "$TMP/g0")" "$blocks"
check "generated trace: off makes no copy" eq "$(field copies "$TMP/g0")" 0
check "generated trace: off is above 1.3 x the noise floor" \
	gt "$(field steady_max_mean "$TMP/g0")" \
	"$(awk -v f="$(field noise_floor_max_mean "$TMP/g0")" 'BEGIN { print 1.3 * f }')"
check "generated trace: the default policy copies" gt "$(field copies "$TMP/g1")" 0
check "generated trace: the default policy is within 1.05 x the noise floor" \
	lt "$(field steady_max_mean "$TMP/g1")" \
	"$(awk -v f="$(field noise_floor_max_mean "$TMP/g1")" 'BEGIN { print 1.05 * f }')"
$SIM $SHIFT --workload shifting --shift_fraction 1.5 > "$TMP/s7" 2>&1
check "shifting: --shift_fraction above 1 is refused" grep -q 'out of range' "$TMP/s7"
$SIM $SMALL --quiet > "$TMP/n1" 2>&1
check "noise_floor_max_mean: above 1" gt "$(field noise_floor_max_mean "$TMP/n1")" 1
check "noise_floor_max_mean: below off's max/mean" \
	lt "$(field noise_floor_max_mean "$TMP/n1")" "$(field steady_max_mean "$TMP/n1")"

# ---- per-key time to relief ------------------------------------------------------
# 4 nodes, 8 keys, Zipf 0.99, 10 k reads/s: the hottest key carries 36.8 %
# of the reads, 1.47 x a node's mean; the second 18.4 %, under it. So the
# hottest key alone is over its fair share from the first window. Off: it
# stays over, one episode never relieved (every figure -1). Enforce, with
# 64 MiB objects copied at half of 1 Gbit/s: its first copy takes 1.07 s,
# so in 0.25 s windows it is over in windows 0-3 and relieved in window 4
# (4 windows); in 1 s windows, relieved in window 1 (1 window).
relief() {
	for k in episodes unrelieved windows_p50 windows_p90 windows_p99 \
		windows_max; do
		printf '%s ' "$(field relief_$k "$1")"
	done
}
RL="--nodes 4 --keys 8 --rate 10000 --duration 4 --object_size 64M
    --nic_gbps 1 --quiet $FAST"
$SIM $RL --interval 0.25 > "$TMP/r1" 2>&1
$SIM $RL --interval 0.25 --dynamic_replication_mode enforce > "$TMP/r2" 2>&1
$SIM $RL --dynamic_replication_mode enforce > "$TMP/r3" 2>&1
check "relief: off, one episode never relieved" \
	eq "$(relief "$TMP/r1")" "1 1 -1 -1 -1 -1 "
check "relief: enforce, 0.25 s windows, relieved in 4" \
	eq "$(relief "$TMP/r2")" "1 0 4 4 4 4 "
check "relief: enforce, 1 s windows, relieved in 1" \
	eq "$(relief "$TMP/r3")" "1 0 1 1 1 1 "
# Shifting, period 5 s, 20 s, off: each phase's hottest key is over for
# its 5 windows and ends when the ranking moves (relieved by the redraw,
# not by a copy); the last phase's is open at the end: 4 episodes, p50 5,
# p90 on the open one (seed 4: each redraw moves the hottest key).
# Enforce copies each new hot key within its first window; the second
# phase's key already holds a copy from the first (8 keys on 4 nodes, each
# half a node's share: the gate's mean is capped at the reads served), so
# it is never over: 2 episodes. Memory of 512 MiB a node (8 objects of the
# 4 nodes' 32): the copies fit under the target watermark.
$SIM $RL --duration 20 --workload shifting --shift_period 5 --seed 4 \
	> "$TMP/r4" 2>&1
$SIM $RL --duration 20 --workload shifting --shift_period 5 --seed 4 \
	--node_memory 512M --dynamic_replication_mode enforce > "$TMP/r5" 2>&1
check "relief: shifting, off, relieved only by the redraws" \
	eq "$(relief "$TMP/r4")" "4 1 5 -1 -1 -1 "
check "relief: shifting, enforce, relieved in 1 window" \
	eq "$(relief "$TMP/r5")" "2 0 1 1 1 1 "
# The same with memory for twice the primaries (the default): after the
# first phase's copies a node has room for no more under the watermark,
# and the earlier phase's copies are under read lease, so room is refused
# and handed back (mcrepl_engine_room_refused()): no copy goes over the
# watermark. One phase's hot key stays over (before the hand-back it
# was copied over the watermark: 6 copies, relieved in 1 window).
$SIM $RL --duration 20 --workload shifting --shift_period 5 --seed 4 \
	--dynamic_replication_mode enforce > "$TMP/r6" 2>&1
check "relief: shifting, enforce, no room: no copy over the watermark" \
	eq "$(relief "$TMP/r6") $(field copies "$TMP/r6")" "3 1 5 -1 -1 -1  4"

# ---- flash and rehot -----------------------------------------------------------
# Flash by hand: 2 nodes, 2 keys (one per node), theta 0, 1000 reads/s for
# 4 s, off. The background reads draw one rank, so they all go to key 0's
# node (max/mean 2); the flash key, read by nobody before, takes half of
# the reads of [1 s, 2 s): 500 reads, both nodes even in that row
# (flash_max_mean 1). Share 1: all 1000, its node alone (2). Share 0: none.
FL="--nodes 2 --keys 2 --theta 0 --rate 1000 --duration 4 --quiet
    --workload flash --flash_at 1"
$SIM $FL > "$TMP/f1" 2>&1
$SIM $FL --flash_share 1 > "$TMP/f2" 2>&1
$SIM $FL --flash_share 0 > "$TMP/f3" 2>&1
check "flash: by hand, 500 flash reads, even in the flash second" \
	eq "$(field workload "$TMP/f1") $(field reads "$TMP/f1") $(field flash_reads "$TMP/f1") $(field flash_max_mean "$TMP/f1")" \
	'"flash" 4000 500 1.0000'
check "flash: by hand, the other seconds on one node" \
	eq "$(field steady_max_mean "$TMP/f1")" 2.0000
check "flash: share 1 takes the second's 1000 reads to one node" \
	eq "$(field flash_reads "$TMP/f2") $(field flash_max_mean "$TMP/f2")" \
	"1000 2.0000"
check "flash: share 0, no flash read" eq "$(field flash_reads "$TMP/f3")" 0
$SIM --nodes 4 --keys 1 --workload flash --quiet > "$TMP/f4" 2>&1
check "flash: one key is refused (the flash key needs another)" \
	eq "$? $(grep -c 'out of range' "$TMP/f4")" "1 1"
# Rehot: phases 0 and 2 read the first ranking, 1 and 3 one redraw; the
# ranking digest (the top keys) at the end of phase 2 is zipf's, at the end
# of phase 1 it is not.
RH="--nodes 4 --keys 1000 --rate 1000 --shift_period 1 --quiet --seed 5"
$SIM $RH --duration 2.5 > "$TMP/z1" 2>&1
$SIM $RH --duration 2.5 --workload rehot > "$TMP/h1" 2>&1
$SIM $RH --duration 1.5 --workload rehot > "$TMP/h2" 2>&1
check "rehot: three phases, the last one hot again" \
	eq "$(field shift_phases "$TMP/h1") $(field ranking_digest "$TMP/h1")" \
	"3 $(field ranking_digest "$TMP/z1")"
check "rehot: the cold phase reads another ranking" \
	eq "$(field shift_phases "$TMP/h2") $( [ "$(field ranking_digest "$TMP/h2")" != "$(field ranking_digest "$TMP/z1")" ] && echo moved)" \
	"2 moved"

# ---- compare, plot, flags --------------------------------------------------------
$SIM --nodes 8 --keys 1000 --rate 5000 --duration 4 --quiet \
	--compare "mode=off;mode=enforce max_memory_replicas=4" > "$TMP/cmp" 2>&1
check "compare: one summary per configuration" \
	eq "$(grep -c '^{"summary":' "$TMP/cmp")" 2
check "compare: a table row per configuration" \
	grep -q '^2 .*mode=enforce max_memory_replicas=4' "$TMP/cmp"
# Full clusters: 8 nodes, primaries at 90 % of memory, so no
# node has room under the 0.85 target watermark. Room for a hot copy comes
# from copies whose object stays readable; with the default room_miss_cost
# (0) an only copy is never evicted for it, so here (nothing duplicated)
# auto makes no room and no miss. At room_miss_cost=100 (a miss worth 100
# reads) auto swaps cold objects for hot copies and the hot spot is
# relieved, each swap a miss.
$SIM --nodes 8 --keys 20000 --object_size 4K --node_memory 11377778 \
	--rate 20000 --duration 30 --quiet \
	--compare "mode=off;mode=enforce;mode=enforce room_miss_cost=100" \
	> "$TMP/full" 2>&1
off=$(grep '"config":"defaults"' "$TMP/full" | sed 's/.*"steady_max_mean":\([0-9.]*\).*/\1/')
on=$(grep '"config":"mode=enforce room_miss_cost=100"' "$TMP/full" | sed 's/.*"steady_max_mean":\([0-9.]*\).*/\1/')
grep '"config":"mode=enforce"' "$TMP/full" > "$TMP/full.def"
check "full cluster, default room rule: no only copy evicted, no miss" \
	eq "$(field room_evicted "$TMP/full.def") $(field room_dropped "$TMP/full.def") $(field evicted_reads "$TMP/full.def")" \
	"0 0 0"
# the same run at room_miss_cost=100: 7 cold primaries evicted for the 7
# hot copies (6 from a primary, 1 from a dynamic replica), each read
# again later (a miss, written back)
grep '"config":"mode=enforce room_miss_cost=100"' "$TMP/full" > "$TMP/full.on"
check "full cluster: room evictions, misses, copies by source" \
	eq "$(field copies "$TMP/full.on") $(field room_evicted "$TMP/full.on") $(field evicted_reads "$TMP/full.on") $(field copies_from_primary "$TMP/full.on") $(field copies_from_replica "$TMP/full.on")" \
	"7 7 7 6 1"
check "full cluster: relieved (room_miss_cost=100 under 0.75 x off)" \
	awk -v a="$on" -v b="$off" 'BEGIN { exit !(a < 0.75 * b) }'
# Headroom: primaries at 88 % of memory (over the 0.85 watermark, under
# the 0.90 room_fill_limit): the hot copies go where they fit under the
# fill line with nothing evicted (6 copies, no miss: each onto a node it
# leaves under the busiest, for a key on the busiest node), relieved as
# off is not (before the fill line: 1 copy, max/mean 1.600 as off's)
$SIM --nodes 8 --keys 20000 --object_size 4K --node_memory 11636364 \
	--rate 20000 --duration 30 --quiet \
	--compare "mode=off;mode=enforce" > "$TMP/head" 2>&1
off=$(grep '"config":"defaults"' "$TMP/head" | sed 's/.*"steady_max_mean":\([0-9.]*\).*/\1/')
grep '"config":"mode=enforce"' "$TMP/head" > "$TMP/head.on"
on=$(sed 's/.*"steady_max_mean":\([0-9.]*\).*/\1/' "$TMP/head.on")
check "full cluster, headroom: copies, room_headroom, room_evicted, misses" \
	eq "$(field copies "$TMP/head.on") $(field room_headroom "$TMP/head.on") $(field room_evicted "$TMP/head.on") $(field evicted_reads "$TMP/head.on")" \
	"6 6 0 0"
check "full cluster, headroom: relieved (under 0.75 x off)" \
	awk -v a="$on" -v b="$off" 'BEGIN { exit !(a < 0.75 * b) }'
# A shifting hot set on the same full cluster: dynamic replicas of keys
# no longer hot are room's first source (dropped, no miss), before any
# only copy; 3 copies go where eviction left headroom under the fill line
# (before it: 53 only copies evicted, 50 misses; before headroom went to
# the busiest node's keys only: 4 dropped, 50 evicted, 45 misses)
$SIM --nodes 8 --keys 20000 --object_size 4K --node_memory 11377778 \
	--rate 20000 --duration 60 --workload shifting --shift_period 10 \
	--quiet --dynamic_replication_mode enforce \
	--dynamic_replication_room_miss_cost 100 > "$TMP/fullshift" 2>&1
check "full cluster, shifting: dynamic replicas dropped, headroom, only copies evicted, misses" \
	eq "$(field room_dropped "$TMP/fullshift") $(field room_headroom "$TMP/fullshift") $(field room_evicted "$TMP/fullshift") $(field evicted_reads "$TMP/fullshift")" \
	"5 3 47 45"

if command -v gnuplot > /dev/null 2>&1; then
	$SIM --nodes 8 --keys 1000 --rate 5000 --duration 4 --quiet \
		--plot "$TMP/p.png" > /dev/null 2>&1
	check "plot: a PNG is written" sh -c "head -c 4 '$TMP/p.png' | grep -q PNG"
else
	pass "plot: gnuplot missing, skipped # SKIP"
fi
$SIM --no_such_flag 1 > /dev/null 2> "$TMP/f1"
check "flags: an unknown flag is refused" eq "$?" 2
$SIM --dynamic_replication_mode sideways > /dev/null 2> "$TMP/f2"
check "flags: a bad knob value is refused" grep -q 'mode' "$TMP/f2"
check "flags: --help lists the library knobs" sh -c \
	"'$SIM' --help | grep -q dynamic_replication_read_load_aware_placement"

tap_done check-sim
