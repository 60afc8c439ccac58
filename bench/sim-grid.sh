#!/bin/sh
# The self-tuning grid: mcrepl-sim with only mode=enforce set, against mode
# off and against the oracle at the same memory, over nodes x read rate x
# object size x workload. Not part of `make check`: `make bench-grid`.
#
#   sh bench/sim-grid.sh [path/to/mcrepl-sim]
#
# Environment:
#   GRID_JOBS=2          cells simulated in parallel
#   GRID_NODES, GRID_RATES, GRID_SIZES, GRID_WORKLOADS   subsample, e.g.
#       GRID_NODES="8 64" GRID_WORKLOADS="zipf:0.99 uniform"
#   GRID_KEYS=100000     keys (zipf, uniform)
#   GRID_MIN_S=120       shortest simulated run (12 heat windows: the
#       1,024-node 1 M reads/s cells' fan-out takes 40-70 s to settle, so a
#       60 s run's last third was not a steady state)
#   GRID_MAX_S=240       longest simulated run
#   GRID_TRACE=FILE      the trace cell's trace; default the generated
#       one beside the simulator's bin/ (make's
#       $(BUILD)/traces/synthetic.jsonl; traces/README.md), or a
#       published Mooncake trace by its path ("" = no trace cell)
#   GRID_SKIP="rate:size ..."  cells left out, e.g. "1000000:1M" (the
#       costliest; the policy sees the object size only through copy time
#       and memory). Default: none; the whole grid takes about 7 minutes
#       of CPU (10 minutes on 2 busy cores).
#
# Per cell: one `mcrepl-sim --compare "mode=off;mode=enforce"` (the same
# reads for both). The interval is long enough for a node to serve about
# 2,000 reads in it (at most 1/8 of the run), the run 16 intervals and at
# least GRID_MIN_S (at most GRID_MAX_S), so the steady max/mean (median of the
# last half) carries little sampling noise; the noise left is estimated
# (noise_floor: the max/mean an even spread of the same reads shows) and
# divided out before comparing with the noise-free oracle.
#
# Targets per cell: enforce <= off; steady max/mean <= 1.10 when
# the oracle reaches 1.05 with the same memory, else <= 1.05 x the
# oracle's; dynamic replicas <= 2 x what the oracle needs for the same
# max/mean; copies completed in the last third <= 1 % of all copies.
# Column `new`: of those late copies, the ones of keys whose heat was below
# the trigger threshold when the last third began (their popularity moved,
# as in the trace); a second count of late-copy misses leaves them out.
set -eu

SIM=${1:-build/bin/mcrepl-sim}
JOBS=${GRID_JOBS:-2}
NODES=${GRID_NODES:-"8 64 128 1024"}
RATES=${GRID_RATES:-"5000 100000 1000000"}
SIZES=${GRID_SIZES:-"4K 1M"}
WORKLOADS=${GRID_WORKLOADS:-"zipf:0.8 zipf:0.99 zipf:1.2 uniform"}
KEYS=${GRID_KEYS:-100000}
MAX_S=${GRID_MAX_S:-240}
MIN_S=${GRID_MIN_S:-120}
TRACE=${GRID_TRACE-$(dirname "$SIM")/../traces/synthetic.jsonl}
SKIP=${GRID_SKIP-}

# one cell -> one line of "key=value" fields
run_cell() {
	wl=$1 theta=$2 n=$3 rate=$4 size=$5
	if [ "$wl" = trace ]; then
		# the generated trace: 67,200 reads over 100 s at speed-up 10
		# (672 reads/s; another trace only moves the interval)
		iv=$(awk -v n="$n" 'BEGIN { i = int(n * 2000 / 672 + 0.999);
			if (i < 1) i = 1; if (i > 12) i = 12; print i }')
		args="--workload trace $TRACE --speedup 10 --interval $iv"
	else
		set -- $(awk -v n="$n" -v r="$rate" -v max="$MAX_S" -v MIN="$MIN_S" 'BEGIN {
			i = int(n * 2000 / r + 0.999); if (i < 1) i = 1;
			if (i * 8 > max) i = int(max / 8);
			d = 16 * i; if (d < MIN) d = MIN; if (d > max) d = max;
			print i, d }')
		args="--workload $wl --keys $KEYS --rate $rate --interval $1 --duration $2"
		[ "$wl" = zipf ] && args="$args --theta $theta"
	fi
	out=$("$SIM" $args --nodes "$n" --object_size "$size" --seed 1 \
		--quiet --compare "mode=off;mode=enforce" 2>&1 |
		grep '^{"summary"') || { echo "cell=$wl:$theta:$n:$rate:$size error=1"; return; }
	echo "$out" | awk -v cell="$wl:$theta:$n:$rate:$size" '
	function num(line, k,    i, s) {
		i = index(line, "\"" k "\":"); if (!i) return "nan";
		s = substr(line, i + length(k) + 3); sub(/[,}].*/, "", s);
		return s
	}
	NR == 1 { off = num($0, "steady_max_mean") }
	NR == 2 {
		printf "cell=%s off=%s enf=%s nf=%s at_mem=%s mem_for=%s " \
		    "best_mem=%s keys=%s dyn=%s share=%s copies=%s late=%s " \
		    "retired=%s wall=%s late_new=%s\n", cell, off,
		    num($0, "steady_max_mean"), num($0, "noise_floor"),
		    num($0, "oracle_at_mem_max_mean"),
		    num($0, "oracle_mem_for_max_mean"),
		    num($0, "oracle_best_mem"), num($0, "replicated_keys"),
		    num($0, "dynamic_replicas"),
		    num($0, "dynamic_bytes_share"), num($0, "copies"),
		    num($0, "late_copies"), num($0, "retired"),
		    num($0, "wall_seconds"), num($0, "late_new_copies")
	}'
}

if [ -n "${GRID_CELL:-}" ]; then # one cell, run by xargs below
	shift
	run_cell "$@"
	exit 0
fi

[ -x "$SIM" ] || { echo "sim-grid: $SIM: not built (make)" >&2; exit 2; }
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT INT TERM

# cells: workload theta nodes rate size
for n in $NODES; do
	for size in $SIZES; do
		for w in $WORKLOADS; do
			for rate in $RATES; do
				case " $SKIP " in
				*" $rate:$size "*) continue ;;
				esac
				echo "${w%%:*} ${w#*:} $n $rate $size"
			done
		done
		if [ -n "$TRACE" ] && [ -r "$TRACE" ]; then
			echo "trace 0 $n 0 $size"
		fi
	done
done >"$TMP/cells"

export SIM KEYS MIN_S MAX_S TRACE
GRID_CELL=1 xargs -P "$JOBS" -L 1 sh "$0" "$SIM" <"$TMP/cells" \
	>"$TMP/results" || true

sort -t: -k3,3n -k4,4n "$TMP/results" | awk '
function v(k) { return k in f ? f[k] : "" }
BEGIN {
	printf "%-16s %5s %8s %4s %7s %7s %6s %7s %7s %6s %6s %7s %9s %4s %6s  %s\n",
	    "workload", "nodes", "rate", "size", "off", "enforce", "noise",
	    "oracle", "target", "keys", "repl", "extra%", "late/cps",
	    "new", "mem_x", "missed"
}
{
	delete f
	for (i = 1; i <= NF; i++) { j = index($i, "="); f[substr($i, 1, j - 1)] = substr($i, j + 1) }
	split(v("cell"), c, ":")
	wl = c[1] == "zipf" ? "zipf " c[2] : c[1]
	if (v("error") != "") { printf "%-16s %5s %8s %4s  error\n", wl, c[3],
		c[4], c[5]; err++; next }
	off = v("off") + 0; enf = v("enf") + 0; nf = v("nf") + 0
	at = v("at_mem") + 0; memfor = v("mem_for") + 0; dyn = v("dyn") + 0
	copies = v("copies") + 0; late = v("late") + 0
	lnew = v("late_new") + 0
	tgt = at <= 1.05 ? 1.10 : 1.05 * at
	net = enf / (nf > 0 ? nf : 1); if (net < 1) net = 1
	if (memfor < 0) memfor = v("best_mem") + 0
	ratio = dyn == 0 ? 0 : dyn / (memfor > 0 ? memfor : 1)
	miss = ""
	if (enf > off) { miss = miss "worse_than_off,"; worse++ }
	if (net > tgt) { miss = miss "max/mean,"; mm++ }
	if (enf > tgt) raw++
	if (ratio > 2) { miss = miss "memory,"; mem++ }
	if (copies > 0 && late > 0.01 * copies) { miss = miss "late_copies,";
		lat++ }
	# the same count without the copies of keys that were not hot when
	# the last third began (popularity moved: the trace)
	if (copies > 0 && late - lnew > 0.01 * copies) lat_stay++
	if (lnew > 0) newcells++
	if (miss ~ /max\/mean|memory|late/) over++
	if (ratio > maxr) maxr = ratio
	cells++
	printf "%-16s %5s %8s %4s %7.3f %7.3f %6.3f %7.3f %7.3f %6d %6d %6.2f%% %4d/%-4d %4d %6.2f  %s\n",
	    wl, c[3], c[4] == 0 ? "trace" : c[4], c[5], off, enf, nf, at, tgt,
	    v("keys"), dyn, 100 * v("share"), late, copies, lnew, ratio, miss
}
END {
	printf "\nmissed: worse_than_off=%d max/mean=%d (measured, noise " \
	    "included: %d) memory=%d late_copies=%d errors=%d\n", worse, mm,
	    raw, mem, lat, err
	printf "late copies of keys already hot when the last third began: " \
	    "missed in %d cells (cells with late copies of newly hot keys: " \
	    "%d)\n", lat_stay, newcells
	printf "grid_cells=%d worse_than_off=%d over_target=%d max_mem_ratio=%.2f\n",
	    cells, worse, over, maxr
}'
