#!/bin/sh
# End-to-end hot replication over RDMA, for hosts with an RDMA NIC or
# Soft-RoCE:
#     sudo modprobe rdma_rxe
#     sudo rdma link add rxe0 type rxe netdev eth0
#     make && tests/rdma/hardware-test.sh
#
# Starts mcrepl-master (dynamic replication enforced) and two mcrepl-workers
# with --transport=rdma, puts a key, reads it until the master has made a
# dynamic replica (copied by one-sided RDMA WRITE), checks the bytes and
# prints an ib_write_bw (perftest) command to compare the raw bandwidth.
#
# Exit status: 0 passed, 1 failed, 77 skipped (no RDMA device).
#
# Environment:
#   MCREPL_BIN_DIR  binaries (default build/bin)
#   RDMA_DEVICE     device to use (default: the first ibv_devices lists)
#   RDMA_ADDR       IPv4 address of the device's netdev (default: looked up
#                   with `rdma link` and `ip addr`)
#   RPC_PORT        master RPC port (default 50151)
#   RDMA_PORT       rdma_cm port of the first worker; the second listens on
#                   RDMA_PORT+1 (default 20886)
#   TRANSPORT       rdma (default); tcp runs the same scenario without RDMA,
#                   to check this script itself on any host
#
# Two workers on one host cannot share an rdma_cm port, so a copy reaches
# the right worker only when the worker hands the engine the target's port
# ("host:data_port/rdma_port", see daemons/rdma/copy_engine_rdma.h). Across
# hosts, every worker uses the same --rdma_port.
set -u
cd "$(dirname "$0")/../.." || exit 1

BIN=${MCREPL_BIN_DIR:-build/bin}
RPC_PORT=${RPC_PORT:-50151}
RDMA_PORT=${RDMA_PORT:-20886}
TRANSPORT=${TRANSPORT:-rdma}
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
	rm -rf "$TMP"
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

# ---- preconditions ----------------------------------------------------------
if [ "$TRANSPORT" = rdma ]; then
	DEV=${RDMA_DEVICE:-$(list_devices | head -n 1)}
	if [ -z "$DEV" ]; then
		say "skipped: no RDMA device (ibv_devices lists none; for Soft-RoCE: rdma link add rxe0 type rxe netdev eth0)"
		exit 77
	fi
	ADDR=${RDMA_ADDR:-$(device_addr "$DEV")}
	[ -n "$ADDR" ] || fail "no IPv4 address for $DEV's netdev; set RDMA_ADDR"
	DEV_FLAGS="--rdma_device $DEV"
else
	DEV="(none)"
	ADDR=${RDMA_ADDR:-127.0.0.1}
	DEV_FLAGS=""
fi
for b in mcrepl-master mcrepl-worker mcrepl-cli; do
	[ -x "$BIN/$b" ] || fail "$BIN/$b missing: run make first"
done
say "transport $TRANSPORT, device $DEV, address $ADDR"

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
	"$BIN/mcrepl-worker" --master "127.0.0.1:$RPC_PORT" \
		--transport="$TRANSPORT" $DEV_FLAGS --rdma_port "$2" \
		--data_address "$ADDR" --host_id "$1" --segment_size 64M \
		>"$TMP/$1.log" 2>&1 &
	PIDS="$PIDS $!"
	wait_for 15 grep -q "mcrepl-worker ready" "$TMP/$1.log" ||
		fail "worker $1 did not come up"
	grep -q "transport $TRANSPORT" "$TMP/$1.log" ||
		fail "worker $1 is not using $TRANSPORT"
}
start_worker worker-a "$RDMA_PORT"
start_worker worker-b $((RDMA_PORT + 1))
cli segments

# ---- hot key ------------------------------------------------------------------
head -c 4194304 /dev/urandom >"$TMP/object" || fail "cannot make test data"
cli put "$KEY" "$TMP/object" || fail "put"
has_dynamic() { cli stat "$KEY" | grep -q dynamic; }
reads=0
while [ "$reads" -lt 600 ] && ! has_dynamic; do
	cli get "$KEY" "$TMP/read" >/dev/null || fail "get"
	reads=$((reads + 1))
done
# covers: R-GOAL-1 R-GOAL-5
has_dynamic || fail "no dynamic replica after $reads reads"
cli stat "$KEY"
for i in 1 2 3 4 5 6 7 8; do
	cli get "$KEY" "$TMP/read" || fail "get after replication"
	cmp -s "$TMP/object" "$TMP/read" || fail "read $i returned other bytes"
done
for p in $PIDS; do
	alive "$p" || fail "a daemon exited"
done
say "PASSED: dynamic replica made after $reads reads, bytes match"

# ---- raw RDMA for comparison --------------------------------------------------
if [ "$TRANSPORT" = rdma ]; then
	say "compare with the raw RDMA WRITE bandwidth of this device (perftest):"
	echo "    ib_write_bw -d $DEV -s 4194304 -n 2000 --report_gbits &"
	echo "    ib_write_bw -d $DEV -s 4194304 -n 2000 --report_gbits $ADDR"
fi
exit 0
