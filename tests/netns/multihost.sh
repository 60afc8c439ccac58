#!/bin/sh
# Multi-host, two-domain integration test in network namespaces.
#
# A hub namespace holds a bridge; the master and one worker per domain each
# get their own namespace and address (10.77.0.0/24). A key stored in
# zone-a and read hot from zone-b's readers gets a replica in zone-b, and
# zone-b's reads then stay in zone-b; a new domain zone-c joining is warmed.
# Everything authenticates: the master serves the network with a
# throwaway --auth_file, each worker is a principal bound to its host and
# domain, the cli an admin client.
#
#   tests/netns/multihost.sh BIN_DIR      (needs root and iproute2)
# Exits 0 when it passes, 0 with "skipped: ..." when namespaces cannot be
# created here, 1 on failure.
set -u
BIN=${1:-build/bin}
P=mcr$$
NS="${P}hub ${P}m ${P}a ${P}b ${P}c"
WORK=$(mktemp -d)
PIDS=""

say() { echo "netns: $*"; }
fail() { say "FAIL: $*"; for f in "$WORK"/*.log; do echo "--- $f"; tail -5 "$f"; done; exit 1; }

cleanup() {
	for p in $PIDS; do kill "$p" 2>/dev/null; done
	sleep 0.3
	for p in $PIDS; do kill -9 "$p" 2>/dev/null; done
	for n in $NS; do ip netns del "$n" 2>/dev/null; done
	rm -rf "$WORK"
}
trap cleanup EXIT INT TERM

skip() { say "skipped: $*"; exit 0; }
[ "$(id -u)" = 0 ] || skip "not root (run as root to create network namespaces)"
command -v ip >/dev/null 2>&1 || skip "iproute2 (ip) not installed"
ip netns add "${P}hub" 2>/dev/null || skip "cannot create network namespaces here"
ip -n "${P}hub" link add br0 type bridge || skip "cannot create a bridge"
ip -n "${P}hub" link set br0 up
ip -n "${P}hub" link set lo up

# host NAME ADDR: a namespace wired to the hub bridge.
host() {
	ip netns add "$P$1" || fail "netns add $1"
	ip -n "${P}hub" link add "v$1" type veth peer name eth0 netns "$P$1" ||
		fail "veth $1"
	ip -n "${P}hub" link set "v$1" master br0 up
	ip -n "$P$1" addr add "$2/24" dev eth0
	ip -n "$P$1" link set eth0 up
	ip -n "$P$1" link set lo up
}
host m 10.77.0.1
host a 10.77.0.2
host b 10.77.0.3
host c 10.77.0.4
MASTER=10.77.0.1:50051

# secret NAME: a random secret in $WORK/NAME.secret, printed
secret() {
	s=$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')
	(umask 077 && echo "$s" >"$WORK/$1.secret")
	echo "$s"
}
(umask 077 && cat >"$WORK/auth.conf" <<EOF
worker wa secret=$(secret wa) hosts=host-a domains=zone-a max_capacity=1G
worker wb secret=$(secret wb) hosts=host-b domains=zone-b max_capacity=1G
worker wc secret=$(secret wc) hosts=host-c domains=zone-c max_capacity=1G
client app secret=$(secret app) tenants=default rights=read,write,remove,admin
EOF
)
cred() { echo "--principal $1 --secret_file $WORK/$1.secret"; }

# run NS NAME CMD...: start in the background, log to $WORK/NAME.log
run() {
	ns=$1 name=$2
	shift 2
	ip netns exec "$P$ns" "$@" >"$WORK/$name.log" 2>&1 &
	PIDS="$PIDS $!"
}
# ready NAME PATTERN: wait up to 10 s for PATTERN in NAME's log
ready() {
	i=0
	while ! grep -q "$2" "$WORK/$1.log" 2>/dev/null; do
		i=$((i + 1))
		[ $i -gt 100 ] && fail "$1 did not start"
		sleep 0.1
	done
}
field() { sed -n "s/.*$2=\([0-9]*\).*/\1/p" "$WORK/$1.log" | head -1; }
cli() { ns=$1; shift; ip netns exec "$P$ns" "$BIN/mcrepl-cli" --master "$MASTER" $(cred app) "$@"; }

run m master "$BIN/mcrepl-master" --rpc_address 10.77.0.1 --rpc_port 50051 \
	--metrics_port 9003 --auth_file "$WORK/auth.conf" \
	--dynamic_replication_mode enforce \
	--dynamic_replication_domain_aware true \
	--dynamic_replication_heat_window_seconds 1 \
	--dynamic_replication_admission_qps_threshold 5 --client_ttl 3
ready master "mcrepl-master ready"
run a worker-a "$BIN/mcrepl-worker" --master "$MASTER" --host_id host-a \
	--domain zone-a --data_address 10.77.0.2 --segment_size 64M $(cred wa)
ready worker-a "mcrepl-worker ready"
MOONCAKE_STORE_DOMAIN=zone-b run b worker-b "$BIN/mcrepl-worker" \
	--master "$MASTER" --host_id host-b --data_address 10.77.0.3 \
	--segment_size 64M $(cred wb)
ready worker-b "mcrepl-worker ready"
say "master 10.77.0.1, worker zone-a 10.77.0.2, worker zone-b 10.77.0.3"

head -c 262144 /dev/urandom >"$WORK/obj"
cli a --domain zone-a put hot "$WORK/obj" >/dev/null 2>&1 || fail "put"
cli a stat hot | grep -q "zone-a" || fail "the object is not in zone-a"

# zone-b's readers make it hot from zone-b
for i in 1 2 3 4 5 6 7 8; do
	cli b --domain zone-b get hot "$WORK/got" >/dev/null 2>&1 ||
		fail "get from zone-b"
done
i=0
# covers: T-28 R-SCEN-1 R-DOM-4
until cli b --domain zone-b stat hot | grep "zone-b" | grep -q dynamic; do
	i=$((i + 1))
	[ $i -gt 50 ] && fail "no dynamic replica in zone-b after 5 s"
	sleep 0.1
done
say "a replica of 'hot' is now in zone-b: $(cli b stat hot | grep zone-b)"
cmp -s "$WORK/obj" "$WORK/got" || fail "bytes differ"

# zone-b's reads now stay in zone-b: zone-a's worker serves none of them
sleep 1.5 # a heartbeat (client_ttl / 4) carries the workers' read counters
before=$(cli a segments | awk '$3 == "zone-a" {print $7}')
for i in 1 2 3 4 5 6 7 8 9 10; do
	cli b --domain zone-b get hot "$WORK/got2" >"$WORK/get.out" 2>&1 ||
		fail "get from zone-b"
	grep -q "host-b" "$WORK/get.out" || fail "read not served in zone-b"
done
cmp -s "$WORK/obj" "$WORK/got2" || fail "bytes differ after replication"
sleep 1.5
after=$(cli a segments | awk '$3 == "zone-a" {print $7}')
# covers: R-SCEN-1
[ "$before" = "$after" ] || fail "zone-a served zone-b reads ($before -> $after)"
say "zone-b's reads stayed in zone-b (zone-a reads $before -> $after)"

# a new domain joins while 'hot' is hot: the master warms it
for i in 1 2 3; do cli a --domain zone-a get hot /dev/null >/dev/null 2>&1; done
run c worker-c "$BIN/mcrepl-worker" --master "$MASTER" --host_id host-c \
	--domain zone-c --data_address 10.77.0.4 --segment_size 64M $(cred wc)
ready worker-c "mcrepl-worker ready"
i=0
# covers: R-SCEN-2
until cli c stat hot | grep "zone-c" | grep -q dynamic; do
	i=$((i + 1))
	[ $i -gt 50 ] && fail "zone-c was not warmed after 5 s"
	sleep 0.1
done
say "zone-c joined and was warmed: $(cli c stat hot | grep zone-c)"
cli m metrics | grep -E '^mcrepl_(dynamic_(cross_domain_copies|proposals)|master_warmup_copies)' | sed 's/^/netns:   /'
say "PASS"
