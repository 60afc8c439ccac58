#!/usr/bin/env bash
# Side-by-side benchmark of Mooncake's master builds, alternating.
#
#   contrib/mooncake/bench.sh LABEL=BUILD_DIR [LABEL=BUILD_DIR ...]
#
# BUILD_DIR is the ninja directory of a Mooncake build ($OUT/build of the
# build script). For each build the drivers (inproc_bench.cpp,
# balance_bench.cpp) are compiled and linked with master_bench's own
# command lines, so every build gets the same flags. Then, REPS times, for
# every build in turn:
#   inproc  (INPROC=1) KEYS x DISTS, THREADS, modes off/observe/enforce
#           (MasterService::GetReplicaList loop; WARMUP s of unmeasured
#           reads per mode first, default 3). With ROUNDS=n (default 10) one
#           process per build, keys and dist holds all three modes' masters
#           and they take turns, SECS/n s each, n times (a paired design:
#           on this kind of VM a whole process runs 1.5x faster or slower
#           than the next, whatever its mode). ROUNDS=0: one process per
#           mode, the mode order rotating with the repetition.
#   rpc     (RPC=1) mooncake_master --dynamic_replication_mode=off|enforce
#           on a private port, upstream's master_bench --operation=Get
#           (RPC_CLIENTS clients, RPC_KEYS keys each, RPC_SECONDS s). A
#           master_bench that fails (it aborts with "Cannot connect to
#           master server" when the master is slow to answer on a loaded
#           machine) is run again, RPC_TRIES times in all (default 3) with
#           a fresh master each time; if every try fails the cell is
#           reported failed (ops_per_s=failed, its ratio "failed") and the
#           script goes on.
# and once, after the repetitions:
#   balance (BALANCE=1) balance_bench.cpp for each of BAL_SEGMENTS (default
#           "8 64"): modes off, rfc and auto side by side, BAL_KEYS keys
#           (100000), Zipf 0.99 at BAL_RATE reads/s (100000) for
#           BAL_SECONDS (30); steady max/mean of reads per segment.
# Raw lines go to $LOG (default /tmp/mooncake-bench.$$.log); the summary
# (medians over REPS, ratios enforce/off and observe/off) to stdout; the
# last lines are `ratio label=<l> inproc_enforce_off=<x>`,
# `ratio label=<l> rpc_enforce_off=<y>` and `balance label=<l>
# segments=<n> off=<a> rfc=<b> auto=<c>` per build (2 threads, first KEYS,
# first DIST). In-process cells also show the readers' CPU time per read
# (read_cpu_ns) and its off/mode ratio: the read path's own cost, apart
# from the CPU the admission thread takes on a small machine. A driver
# that fails is reported (its cell is missing, the ratio reads "failed")
# and the script goes on; the exit status is 1 when anything failed.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
REPS=${REPS:-3}
SECS=${SECS:-2}
export ROUNDS=${ROUNDS:-10}
export WARMUP=${WARMUP:-3} # s of unmeasured reads per mode (inproc_bench.cpp)
KEYS=${KEYS:-"100000 1000000"}
DISTS=${DISTS:-"uniform zipf"}
THREADS=${THREADS:-"1 2"}
INPROC=${INPROC:-1}
RPC=${RPC:-1}
RPC_TRIES=${RPC_TRIES:-3}
BALANCE=${BALANCE:-1}
BAL_SEGMENTS=${BAL_SEGMENTS:-"8 64"}
BAL_KEYS=${BAL_KEYS:-100000}
BAL_RATE=${BAL_RATE:-100000}
BAL_SECONDS=${BAL_SECONDS:-30}
RPC_SECONDS=${RPC_SECONDS:-8}
RPC_CLIENTS=${RPC_CLIENTS:-2}
RPC_KEYS=${RPC_KEYS:-50000}
LOG=${LOG:-/tmp/mooncake-bench.$$.log}
[ $# -ge 1 ] || {
	echo "usage: $0 LABEL=BUILD_DIR..." >&2
	exit 2
}
: >"$LOG"

# Compile and link each driver (inproc_bench, balance_bench) with
# master_bench's command lines.
build_driver() {
	local dir=$1 cmds cc0 ld0 src cc ld name
	cmds=$(cd "$dir" && ninja -t commands mooncake-store/benchmarks/master_bench)
	cc0=$(printf '%s\n' "$cmds" | grep -F 'master_bench.cpp.o -c' | tail -1)
	ld0=$(printf '%s\n' "$cmds" | tail -1)
	src=$(printf '%s\n' "$cc0" | grep -o '[^ ]*/master_bench\.cpp$')
	[ -n "$cc0" ] && [ -n "$src" ] || {
		echo "no master_bench compile line in $dir" >&2
		return 1
	}
	for name in inproc_bench balance_bench; do
		cc=${cc0//$src/$HERE/$name.cpp}
		cc=${cc//master_bench.dir\/master_bench.cpp.o/mcrepl_$name.o}
		ld=${ld0//master_bench.dir\/master_bench.cpp.o/mcrepl_$name.o}
		ld=${ld//-o mooncake-store\/benchmarks\/master_bench /-o mooncake-store/benchmarks/mcrepl_$name }
		(cd "$dir" && nice sh -c "$cc" && nice sh -c "$ld") || return 1
	done
}

failed=0
port=$((40000 + $$ % 5000 * 4))
# master_bench against a fresh master, up to RPC_TRIES times; prints the
# operations per second, or nothing when every try failed.
rpc_ops() { # dir mode
	local dir=$1 mode=$2 pid ops try
	for try in $(seq "$RPC_TRIES"); do
		port=$((port + 2))
		"$dir/mooncake-store/src/mooncake_master" --port=$port \
			--metrics_port=$((port + 1)) --rpc_address=127.0.0.1 \
			--dynamic_replication_mode="$mode" --logtostderr=false \
			--minloglevel=2 >/dev/null 2>&1 &
		pid=$!
		for _ in $(seq 50); do
			(exec 3<>/dev/tcp/127.0.0.1/$port) 2>/dev/null && break
			sleep 0.2
		done
		ops=$("$dir/mooncake-store/benchmarks/master_bench" \
			--master_server=127.0.0.1:$port --operation=Get \
			--num_segments=2 --segment_size=$((4 << 30)) \
			--num_clients="$RPC_CLIENTS" --num_threads=1 \
			--num_keys="$RPC_KEYS" --value_size=1024 \
			--duration="$RPC_SECONDS" 2>/dev/null |
			awk '/Operations per second/{print $4}') || ops=
		kill "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
		if [ -n "$ops" ]; then
			echo "$ops"
			return 0
		fi
		echo "bench: master_bench try $try of $RPC_TRIES failed (mode $mode)" >&2
		sleep 1
	done
}

rpc_once() { # label dir mode rep
	local ops
	ops=$(rpc_ops "$2" "$3")
	[ -n "$ops" ] || failed=1
	echo "rpc label=$1 rep=$4 mode=$3 clients=$RPC_CLIENTS" \
		"keys=$((RPC_CLIENTS * RPC_KEYS)) ops_per_s=${ops:-failed}" | tee -a "$LOG"
}

# rotate N A B C...: the words rotated left by N-1 (rep 1: A B C, rep 2: B C A).
rotate() {
	local n=$((($1 - 1) % ($# - 1)))
	shift
	local w=("$@")
	echo "${w[@]:n}" "${w[@]:0:n}"
}

labels=()
dirs=()
for arg in "$@"; do
	labels+=("${arg%%=*}")
	dirs+=("${arg#*=}")
	[ "$INPROC$BALANCE" = 00 ] || build_driver "${arg#*=}" || exit 1
done

for rep in $(seq "$REPS"); do
	for keys in $([ "$INPROC" = 1 ] && echo "$KEYS"); do
		for dist in $DISTS; do
			modes="off,observe,enforce"
			[ "$ROUNDS" -gt 0 ] || modes=$(rotate "$rep" off observe enforce)
			for mode in $modes; do
				for i in "${!labels[@]}"; do
					MODES=$mode "${dirs[$i]}/mooncake-store/benchmarks/mcrepl_inproc_bench" \
						"$keys" "$dist" "$SECS" $THREADS >"$LOG.cell" || {
						echo "bench: inproc_bench failed (${labels[$i]} $keys $dist $mode)" >&2
						failed=1
					}
					sed "s/^/inproc label=${labels[$i]} rep=$rep /" "$LOG.cell" |
						tee -a "$LOG"
				done
			done
		done
	done
	if [ "$RPC" = 1 ]; then
		for mode in $(rotate "$rep" off enforce); do
			for i in "${!labels[@]}"; do
				rpc_once "${labels[$i]}" "${dirs[$i]}" "$mode" "$rep"
			done
		done
	fi
done

if [ "$BALANCE" = 1 ]; then
	for segs in $BAL_SEGMENTS; do
		for i in "${!labels[@]}"; do
			"${dirs[$i]}/mooncake-store/benchmarks/mcrepl_balance_bench" \
				"$segs" "$BAL_KEYS" "$BAL_RATE" "$BAL_SECONDS" >"$LOG.cell" || {
				echo "bench: balance_bench failed (${labels[$i]} $segs segments)" >&2
				failed=1
			}
			sed "s/^balance /balance label=${labels[$i]} /" "$LOG.cell" |
				tee -a "$LOG"
		done
	done
fi
rm -f "$LOG.cell"

# Medians per cell; the ratios in brackets are medians over the repetitions
# of mode/off in the same repetition (same build and cell).
awk -v first_keys="${KEYS%% *}" -v first_dist="${DISTS%% *}" '
function kv(s, k,   n, i, a) {
	n = split(s, a, " ")
	for (i = 1; i <= n; i++) if (index(a[i], k "=") == 1) return substr(a[i], length(k) + 2)
	return ""
}
function median(list,   n, a, i, j, t) {
	n = split(list, a, " ")
	if (n == 0) return 0
	for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j-1] + 0 > a[j] + 0; j--) { t = a[j]; a[j] = a[j-1]; a[j-1] = t }
	return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
function ratio(x) { return x == "" ? "failed" : sprintf("%.3f", x) }
$1 == "balance" {
	key = kv($0, "label") SUBSEP kv($0, "segments")
	if (!(key in seenb)) { seenb[key] = 1; bal[++nb] = key }
	b[key SUBSEP kv($0, "mode")] = kv($0, "steady_max_mean")
	next
}
{
	kind = $1; l = kv($0, "label"); m = kv($0, "mode"); ops = kv($0, "ops_per_s")
	if (kind == "inproc") cell = "inproc keys=" kv($0, "keys") " dist=" kv($0, "dist") " threads=" kv($0, "threads")
	else cell = "rpc keys=" kv($0, "keys") " clients=" kv($0, "clients")
	if (!(cell in seen)) { seen[cell] = 1; cells[++nc] = cell }
	if (!(l in seenl)) { seenl[l] = 1; labels[++nl] = l }
	if (ops !~ /^[0-9.]+$/) next # a failed cell: in no median, no pair
	v[l SUBSEP cell SUBSEP m] = v[l SUBSEP cell SUBSEP m] " " ops
	one[l SUBSEP cell SUBSEP m SUBSEP kv($0, "rep")] = ops
	if (kv($0, "rep") + 0 > reps) reps = kv($0, "rep") + 0
	if (kind == "inproc") cpu[l SUBSEP cell SUBSEP m] = cpu[l SUBSEP cell SUBSEP m] " " kv($0, "read_cpu_ns")
}
END {
	for (c = 1; c <= nc; c++) for (bl = 1; bl <= nl; bl++) {
		l = labels[bl]; cell = cells[c]; off = median(v[l SUBSEP cell SUBSEP "off"])
		line = sprintf("%-52s %-9s off=%9.0f", cell, l, off)
		for (mi = 1; mi <= 2; mi++) {
			m = mi == 1 ? "observe" : "enforce"
			# paired: the median over repetitions of mode/off within one
			pr = ""
			for (k = 1; k <= reps; k++) {
				o0 = one[l SUBSEP cell SUBSEP "off" SUBSEP k]
				o1 = one[l SUBSEP cell SUBSEP m SUBSEP k]
				if (o0 > 0 && o1 != "") pr = pr " " o1 / o0
			}
			x = pr == "" ? "" : median(pr)
			if (m == "enforce") r[l SUBSEP cell] = x
			if (v[l SUBSEP cell SUBSEP m] == "") continue
			line = line sprintf(" %s=%9.0f (%s)", m, median(v[l SUBSEP cell SUBSEP m]), ratio(x))
		}
		if (cell ~ /^inproc/) {
			coff = median(cpu[l SUBSEP cell SUBSEP "off"])
			cobs = median(cpu[l SUBSEP cell SUBSEP "observe"])
			cenf = median(cpu[l SUBSEP cell SUBSEP "enforce"])
			line = line sprintf(" | read cpu ns off=%.0f observe=%.0f (%.3f) enforce=%.0f (%.3f)", coff, cobs, cobs > 0 ? coff / cobs : 0, cenf, cenf > 0 ? coff / cenf : 0)
		}
		print line
	}
	first = "inproc keys=" first_keys " dist=" first_dist " threads=2"
	for (bl = 1; bl <= nl; bl++)
		if (first in seen) printf "ratio label=%s inproc_enforce_off=%s\n", labels[bl], ratio(r[labels[bl] SUBSEP first])
	for (bl = 1; bl <= nl; bl++)
		for (c = 1; c <= nc; c++) if (cells[c] ~ /^rpc/) printf "ratio label=%s rpc_enforce_off=%s\n", labels[bl], ratio(r[labels[bl] SUBSEP cells[c]])
	for (k = 1; k <= nb; k++) {
		split(bal[k], lb, SUBSEP)
		printf "balance label=%s segments=%s off=%s rfc=%s auto=%s\n", lb[1], lb[2], b[bal[k] SUBSEP "off"], b[bal[k] SUBSEP "rfc"], b[bal[k] SUBSEP "auto"]
	}
}' "$LOG"
[ "$failed" = 0 ]
