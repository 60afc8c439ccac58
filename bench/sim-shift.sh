#!/bin/sh
# The policy's hard cases: mcrepl-sim with only mode=enforce set (the default
# policy) where it falls short, each against mode off and its floor. Not
# part of `make check`: `make bench-shift`, some minutes on 2 cores.
#
#   sh bench/sim-shift.sh [path/to/mcrepl-sim]
#
# Cases, each at seeds SHIFT_SEEDS:
#   shifting  Zipf 0.99 over 100 k keys of 4 KiB, 100 k reads/s, ranking
#             redrawn every 20 s, SHIFT_PHASES phases, 64 and 512 nodes
#   trace     the generated trace (make's $(BUILD)/traces/synthetic.jsonl,
#             found beside the simulator's bin/; traces/README.md) at real
#             speed (--speedup 1), 16 and 128 nodes, 60 s intervals (~67
#             reads/s in all, block 0 in every request); or
#             SHIFT_TRACE=FILE, e.g. the conversation trace of Mooncake's
#             FAST25-release/traces given by its path (~80 reads/s, one
#             block in 4 % of them: the few-reads-per-node case)
#   full      Zipf 0.99, 100 k keys of 4 KiB, 100 k reads/s, 120 s, node
#             memory such that the primaries fill 90 % of it (--node_memory
#             = ceil(keys / nodes) x 4 KiB / 0.9), 8 and 64 nodes
#   flash     Zipf 0.99 over 100 k keys of 4 KiB at 100 k reads/s for 30 s;
#             at 10 s a key nobody read takes half of the reads for 1 s
#             (--workload flash); 8, 64 and 512 nodes. Its figure is the
#             flash second's max/mean (flash_mm)
#   rehot     the same Zipf, the hot keys cold and hot again every 20 s
#             (--workload rehot), SHIFT_PHASES phases; 8, 64 and 512 nodes
# Environment: SHIFT_JOBS=2 runs in parallel, SHIFT_SEEDS="1 2 3",
# SHIFT_PHASES=10, SHIFT_CASES="shifting trace full flash rehot",
# SHIFT_MODES="enforce off", SHIFT_TRACE=FILE.
#
# One line per run (mode enforce, or off: what the policy starts from):
# steady max/mean (median of the last half of the
# intervals), floor_room (full only: the least max/mean of copies placed
# only in room under the fill line, no only copy evicted; "-" elsewhere),
# the floor (noise_floor_max_mean, what an even spread of the same reads
# shows from sampling alone, or floor_room where that is higher: memory
# binds) and their ratio; flash runs the
# flash second's max/mean (flash_mm, against the same floor); shifting and
# rehot runs add the worst
# phase's steady max/mean, the phases within 1.05 x the floor; every run
# the per-key time to relief's p90 in windows (relief_windows_p90: -1 when
# it falls on an episode never relieved) and the episodes never relieved
# of all (unrel/epis); the dynamic replicas, copies (from a primary / from
# a dynamic replica), evictions of dynamic replicas, cold primaries evicted
# for room and later reads of them (room/miss); then the dynamic replicas
# at the end of each phase (do they level off?), for rehot each phase's
# steady max/mean (do the keys hot again get relief again?).
set -eu

SIM=${1:-build/bin/mcrepl-sim}
JOBS=${SHIFT_JOBS:-2}
SEEDS=${SHIFT_SEEDS:-"1 2 3"}
PHASES=${SHIFT_PHASES:-10}
CASES=${SHIFT_CASES:-"shifting trace full flash rehot"}
MODES=${SHIFT_MODES:-"enforce off"}
TRACE=${SHIFT_TRACE:-$(dirname "$SIM")/../traces/synthetic.jsonl}

run_one() {
	case=$1 n=$2 seed=$3 mode=$4
	base="--nodes $n --seed $seed --quiet --dynamic_replication_mode $mode"
	zipf="--keys 100000 --object_size 4K --rate 100000 --theta 0.99"
	case $case in
	shifting)
		args="$zipf --workload shifting --shift_period 20 --duration $((20 * PHASES))" ;;
	trace)
		args="--workload trace $TRACE --speedup 1 --interval 60" ;;
	full)
		mem=$(( ((100000 + n - 1) / n * 4096 * 10 + 8) / 9 ))
		args="$zipf --workload zipf --duration 120 --node_memory $mem" ;;
	flash)
		args="$zipf --workload flash --duration 30 --flash_at 10" ;;
	rehot)
		args="$zipf --workload rehot --shift_period 20 --duration $((20 * PHASES))" ;;
	esac
	out=$("$SIM" $base $args 2>&1 | grep '^{"summary"') ||
		{ echo "case=$case nodes=$n seed=$seed mode=$mode error=1"; return; }
	echo "$out" | awk -v c="$case" -v n="$n" -v s="$seed" -v m="$mode" '
	function num(k,    i, v) {
		i = index($0, "\"" k "\":"); if (!i) return "-";
		v = substr($0, i + length(k) + 3); sub(/[,}].*/, "", v); return v
	}
	function arr(k,    i, v) {
		i = index($0, "\"" k "\":["); if (!i) return "-";
		v = substr($0, i + length(k) + 4); sub(/\].*/, "", v); return v
	}
	{
		mm = num("steady_max_mean"); nf = num("noise_floor_max_mean")
		fr = num("floor_room") # bounded node memory only
		if (fr != "-" && fr + 0 > nf + 0) nf = fr # memory binds
		fl = c == "flash" ? num("flash_max_mean") : "-"
		printf "%-8s %5s %4s %-7s %8s %8s %8s %6.3f %8s %8s %4s %5s %11s %6s %11s %7s %9s  %s\n",
		    c, n, s, m, mm, fr, nf, (nf + 0 > 0 ? mm / nf : 0), fl,
		    num("worst_phase_max_mean"), num("phases_relieved"),
		    num("relief_windows_p90"),
		    num("relief_unrelieved") "/" num("relief_episodes"),
		    num("dynamic_replicas"),
		    num("copies") "(" num("copies_from_primary") "/" \
		    num("copies_from_replica") ")", num("evicted"),
		    num("room_evicted") "/" num("evicted_reads"),
		    arr(c == "rehot" ? "phase_max_mean" : \
		    "phase_dynamic_replicas")
	}'
}

if [ -n "${SHIFT_RUN:-}" ]; then # one run, by xargs below
	shift
	run_one "$@"
	exit 0
fi

[ -x "$SIM" ] || { echo "sim-shift: $SIM: not built (make)" >&2; exit 2; }
case " $CASES " in
*" trace "*) [ -r "$TRACE" ] || { echo "sim-shift: $TRACE: no such trace" \
	"(make traces, or SHIFT_TRACE=FILE)" >&2; exit 2; } ;;
esac
for c in $CASES; do
	case $c in
	shifting) nodes="64 512" ;;
	trace) nodes="16 128" ;;
	full) nodes="8 64" ;;
	flash | rehot) nodes="8 64 512" ;;
	*) echo "sim-shift: unknown case $c" >&2; exit 2 ;;
	esac
	for n in $nodes; do
		for s in $SEEDS; do
			for m in $MODES; do
				echo "$c $n $s $m"
			done
		done
	done
done | {
	printf "%-8s %5s %4s %-7s %8s %8s %8s %6s %8s %8s %4s %5s %11s %6s %11s %7s %9s  %s\n" \
		case nodes seed mode max/mean fl_room floor ratio flash_mm worst_ph \
		relv p90 unrel/epis dyn "copies(p/r)" evicted room/miss \
		"dyn at each phase end (rehot: max/mean of each phase)"
	export SIM PHASES TRACE
	SHIFT_RUN=1 xargs -P "$JOBS" -L 1 sh "$0" "$SIM" |
		sort -k1,1 -k2,2n -k3,3n -k4,4
}
