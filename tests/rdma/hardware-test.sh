#!/bin/sh
# The RDMA copy engine on hardware: what it moves, how fast, and whether
# the bytes arrive. For hosts with an RDMA NIC (or Soft-RoCE:
#     sudo modprobe rdma_rxe
#     sudo rdma link add rxe0 type rxe netdev eth0
# ) and perftest installed:
#     make && ulimit -l unlimited && tests/rdma/hardware-test.sh
#
# 1. Checks first and says everything that is missing: a device with an
#    address, the locked-memory limit (ulimit -l), perftest's ib_write_bw,
#    the binaries.
# 2. Measures: mcrepl-rdma-bench (two engines on the device, looped back)
#    copies OBJECTS objects of 4 MiB round-robin for SECONDS and compares
#    every object byte for byte; ib_write_bw -R -d DEV -s 4M -D SECONDS
#    --report_gbits runs beside it on the same device. Both are printed
#    with their ratio; below MIN_RATIO (0.90) fails.
# 3. End to end: mcrepl-master (dynamic replication enforced) and two
#    mcrepl-workers with --transport=rdma on one host (rdma_cm ports
#    RDMA_PORT and RDMA_PORT+1; each advertises its own through the
#    master), KEYS hot keys read until each has a dynamic replica (copied
#    by one-sided RDMA WRITE), then every key read back and compared.
#
# Exit status: 0 passed, 1 failed or something missing, 77 skipped (no
# RDMA device at all).
#
# Environment:
#   MCREPL_BIN_DIR  binaries (default build/bin)
#   RDMA_DEVICE     device to use (default: the first ibv_devices lists)
#   RDMA_ADDR       IPv4 address of the device's netdev (default: looked up
#                   with `rdma link` and `ip addr`)
#   RPC_PORT        master RPC port (default 50151)
#   RDMA_PORT       rdma_cm port of the first worker and of the bench's
#                   target; +1 for the second (default 20886)
#   SECONDS_BW      seconds per bandwidth run (default 10)
#   OBJECTS         bench objects of 4 MiB (default 64: 512 MiB pinned)
#   KEYS            hot keys in the end-to-end part (default 8)
#   MIN_RATIO       engine / ib_write_bw to pass (default 0.90)
#   TRANSPORT       rdma (default); tcp runs part 3 without RDMA, to check
#                   this script itself on any host
#   FABRIC=fake     part 3 over rdma with the test build of the worker
#                   (build/tests/mcrepl-worker-fakerdma: the real engine
#                   over the fake fabric between processes, no device);
#                   checks this script's rdma path on any host, measures
#                   nothing
#
# Across two hosts the same end-to-end part works with workers on each
# (every worker advertises host:rdma_port); the bandwidth part measures
# one NIC looped back, the figure to compare with ib_write_bw on it.
set -u
cd "$(dirname "$0")/../.." || exit 1

BIN=${MCREPL_BIN_DIR:-build/bin}
FABRIC=${FABRIC:-}
FAB_DIR=""
WORKER=$BIN/mcrepl-worker
RPC_PORT=${RPC_PORT:-50151}
RDMA_PORT=${RDMA_PORT:-20886}
TRANSPORT=${TRANSPORT:-rdma}
SECONDS_BW=${SECONDS_BW:-10}
OBJECTS=${OBJECTS:-64}
KEYS=${KEYS:-8}
MIN_RATIO=${MIN_RATIO:-0.90}
SIZE=4194304
KEY=hot-rdma-key
PIDS=""
TMP=$(mktemp -d "${TMPDIR:-/tmp}/mcrepl-rdma.XXXXXX") || exit 1

# shellcheck disable=SC2317 # invoked by the trap
cleanup() {
	for p in $PIDS; do
		kill "$p" 2>/dev/null
	done
	for p in $PIDS; do
		wait "$p" 2>/dev/null
	done
	rm -rf "$TMP" ${FAB_DIR:+"$FAB_DIR"}
}
trap cleanup EXIT
trap 'exit 1' INT TERM

say() { echo "hardware-test: $*"; }
fail() {
	say "FAILED: $*"
	for f in "$TMP"/*.log; do
		[ -f "$f" ] && { echo "---- $f"; tail -n 20 "$f"; }
	done
	exit 1
}

list_devices() {
	if command -v ibv_devices >/dev/null 2>&1; then
		ibv_devices 2>/dev/null | awk 'NR > 2 && NF { print $1 }'
	else
		ls /sys/class/infiniband 2>/dev/null
	fi
}

# IPv4 address of the netdev under $1 (Soft-RoCE and RoCE NICs).
device_addr() {
	netdev=$(rdma link show 2>/dev/null |
		awk -v d="$1" '$2 ~ "^" d "/" { for (i = 1; i < NF; i++)
			if ($i == "netdev") { print $(i + 1); exit } }')
	[ -n "$netdev" ] || return 1
	ip -4 -o addr show dev "$netdev" 2>/dev/null |
		awk '{ split($4, a, "/"); print a[1]; exit }'
}

cli() { "$BIN/mcrepl-cli" --master "127.0.0.1:$RPC_PORT" "$@"; }

wait_for() { # seconds command...
	n=$(($1 * 10))
	shift
	while [ "$n" -gt 0 ]; do
		"$@" >/dev/null 2>&1 && return 0
		sleep 0.1
		n=$((n - 1))
	done
	return 1
}

alive() { kill -0 "$1" 2>/dev/null; }

# ---- preconditions: say everything that is missing, then stop -------------
MISSING=""
missing() { MISSING="$MISSING
    - $*"; }

if [ "$TRANSPORT" = rdma ] && [ "$FABRIC" = fake ]; then
	DEV="fakefab0 (the fake fabric between processes)"
	ADDR=127.0.0.1
	DEV_FLAGS=""
	WORKER=$BIN/../tests/mcrepl-worker-fakerdma
	shm=/dev/shm
	[ -w "$shm" ] || shm=$TMP
	FAB_DIR=$(mktemp -d "$shm/mcrepl-hwfab.XXXXXX") || exit 1
	MCREPL_FAKE_RDMA_DIR=$FAB_DIR
	export MCREPL_FAKE_RDMA_DIR
elif [ "$TRANSPORT" = rdma ]; then
	DEV=${RDMA_DEVICE:-$(list_devices | head -n 1)}
	if [ -z "$DEV" ]; then
		say "skipped: no RDMA device (ibv_devices lists none, /sys/class/infiniband is empty)."
		say "  load the NIC's driver, or for Soft-RoCE: sudo modprobe rdma_rxe && sudo rdma link add rxe0 type rxe netdev eth0"
		exit 77
	fi
	list_devices | grep -qx "$DEV" ||
		missing "device $DEV: ibv_devices lists only: $(list_devices | tr '\n' ' ')"
	ADDR=${RDMA_ADDR:-$(device_addr "$DEV")}
	[ -n "$ADDR" ] ||
		missing "an IPv4 address on $DEV's netdev (rdma link show; ip addr), or set RDMA_ADDR"
	DEV_FLAGS="--rdma_device $DEV"
	# Pinned per process: the bench registers 2 x OBJECTS x 4 MiB, each
	# worker its 64 MiB segment.
	need_kib=$((2 * OBJECTS * SIZE / 1024 + 1024))
	lim=$(awk '/^Max locked memory/ { print $4 }' /proc/self/limits 2>/dev/null)
	case "$lim" in
	unlimited) ;;
	'' | *[!0-9]*) missing "locked memory: cannot read the limit from /proc/self/limits" ;;
	*)
		if [ $((lim / 1024)) -lt "$need_kib" ]; then
			missing "locked memory: ulimit -l is $((lim / 1024)) KiB, the bench pins $need_kib KiB; run 'ulimit -l unlimited' (limits.conf: '* - memlock unlimited'; systemd: LimitMEMLOCK=infinity)"
		fi
		;;
	esac
	command -v ib_write_bw >/dev/null 2>&1 ||
		missing "ib_write_bw (perftest): apt-get install perftest / dnf install perftest"
	[ -x "$BIN/mcrepl-rdma-bench" ] ||
		missing "$BIN/mcrepl-rdma-bench: run make (it is built when libibverbs is found)"
else
	DEV="(none)"
	ADDR=${RDMA_ADDR:-127.0.0.1}
	DEV_FLAGS=""
fi
for b in mcrepl-master mcrepl-cli; do
	[ -x "$BIN/$b" ] || missing "$BIN/$b: run make first"
done
[ -x "$WORKER" ] || missing "$WORKER: run make first (the fake fabric's: make check-daemons)"
if [ -n "$MISSING" ]; then
	say "FAILED: missing:$MISSING"
	exit 1
fi
say "transport $TRANSPORT, device $DEV, address $ADDR"

# ---- bandwidth: the engine beside ib_write_bw ----------------------------------
if [ "$TRANSPORT" = rdma ] && [ "$FABRIC" != fake ]; then
	"$BIN/mcrepl-rdma-bench" "$ADDR" "$DEV" "$RDMA_PORT" "$SIZE" \
		"$OBJECTS" "$SECONDS_BW" >"$TMP/bench.out" 2>"$TMP/bench.log" ||
		fail "mcrepl-rdma-bench: $(cat "$TMP/bench.log")"
	cat "$TMP/bench.out"
	engine=$(sed -n 's/.*engine_gbits=\([0-9.]*\).*/\1/p' "$TMP/bench.out")
	ib_write_bw -R -d "$DEV" -s "$SIZE" -D "$SECONDS_BW" --report_gbits \
		>"$TMP/ibw-server.log" 2>&1 &
	IBW=$!
	PIDS="$IBW"
	sleep 1
	ib_write_bw -R -d "$DEV" -s "$SIZE" -D "$SECONDS_BW" --report_gbits \
		"$ADDR" >"$TMP/ibw.log" 2>&1 || fail "ib_write_bw client"
	wait "$IBW"
	PIDS=""
	# The result row: #bytes #iterations BW-peak BW-average MsgRate.
	raw=$(awk -v s="$SIZE" '$1 == s { print $4; exit }' "$TMP/ibw.log")
	if [ -z "$engine" ] || [ -z "$raw" ]; then
		fail "no bandwidth figure (see $TMP/ibw.log)"
	fi
	ratio=$(awk -v a="$engine" -v b="$raw" 'BEGIN { printf "%.3f", a / b }')
	say "engine $engine Gbit/s, ib_write_bw $raw Gbit/s: ratio $ratio (target >= $MIN_RATIO)"
	awk -v r="$ratio" -v m="$MIN_RATIO" 'BEGIN { exit !(r >= m) }' ||
		fail "the engine reaches $ratio of ib_write_bw, below $MIN_RATIO"
fi

# ---- cluster ----------------------------------------------------------------
"$BIN/mcrepl-master" --rpc_port "$RPC_PORT" --metrics_port 0 \
	--dynamic_replication_mode enforce \
	--dynamic_replication_heat_window_seconds 2 \
	--dynamic_replication_admission_qps_threshold 2 \
	>"$TMP/master.log" 2>&1 &
MASTER=$!
PIDS="$MASTER"
wait_for 10 cli segments || fail "master did not answer on port $RPC_PORT"

start_worker() { # name rdma_port
	# shellcheck disable=SC2086 # DEV_FLAGS is empty or two words
	"$WORKER" --master "127.0.0.1:$RPC_PORT" \
		--transport="$TRANSPORT" $DEV_FLAGS --rdma_port "$2" \
		--data_address "$ADDR" --host_id "$1" --segment_size 64M \
		>"$TMP/$1.log" 2>&1 &
	PIDS="$PIDS $!"
	wait_for 15 grep -q "mcrepl-worker ready" "$TMP/$1.log" ||
		fail "worker $1 did not come up"
	grep -q "transport $TRANSPORT" "$TMP/$1.log" ||
		fail "worker $1 is not using $TRANSPORT"
	if [ "$TRANSPORT" = rdma ]; then
		grep -q "rdma peers dial $ADDR:$2" "$TMP/$1.log" ||
			fail "worker $1 does not advertise $ADDR:$2"
	fi
}
start_worker worker-a "$RDMA_PORT"
start_worker worker-b $((RDMA_PORT + 1))
cli segments

# ---- hot keys ----------------------------------------------------------------
n=1
while [ "$n" -le "$KEYS" ]; do
	head -c "$SIZE" /dev/urandom >"$TMP/object.$n" || fail "cannot make test data"
	cli put "$KEY.$n" "$TMP/object.$n" || fail "put $KEY.$n"
	n=$((n + 1))
done
# covers: R-GOAL-1 R-GOAL-5
has_dynamic() { cli stat "$1" | grep -q dynamic; }
n=1
total_reads=0
while [ "$n" -le "$KEYS" ]; do
	reads=0
	while [ "$reads" -lt 600 ] && ! has_dynamic "$KEY.$n"; do
		cli get "$KEY.$n" "$TMP/read" >/dev/null || fail "get $KEY.$n"
		reads=$((reads + 1))
	done
	has_dynamic "$KEY.$n" || fail "no dynamic replica of $KEY.$n after $reads reads"
	total_reads=$((total_reads + reads))
	n=$((n + 1))
done
for round in 1 2 3; do
	n=1
	while [ "$n" -le "$KEYS" ]; do
		cli get "$KEY.$n" "$TMP/read" >/dev/null || fail "get after replication"
		cmp -s "$TMP/object.$n" "$TMP/read" ||
			fail "round $round: $KEY.$n returned other bytes"
		n=$((n + 1))
	done
done
for p in $PIDS; do
	alive "$p" || fail "a daemon exited"
done
grep -h "copy to .* failed" "$TMP"/worker-*.log && fail "a copy failed"
if [ "$TRANSPORT" = rdma ]; then
	grep -h "copying over tcp" "$TMP"/worker-*.log &&
		fail "a copy went over tcp: the master did not hand out rdma endpoints"
fi
say "PASSED: $KEYS keys replicated dynamically ($total_reads reads), bytes match"
exit 0
