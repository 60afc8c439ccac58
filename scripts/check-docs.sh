#!/bin/sh
# check-docs.sh BIN_DIR FILE.md...: run the documentation's command
# examples as written (make check-docs), so a documented command cannot
# drift from the binaries.
#
# A fenced ```sh block runs when the line before it (blank lines aside) is
#   <!-- check-docs -->                      one host
#   <!-- check-docs hosts="A=10.0.0.1 B=10.0.0.2" etcd=A -->
# Each block runs with `sh -e` in a fresh directory of its own, with the
# programs on PATH and as build/bin/<program>, inside network
# namespaces: one per host named (wired to a bridge, the given address
# on eth0), or one of its own (10.0.0.100) when it names none. A comment line `# host A ...`
# moves the commands below it to host A (the first host before any).
# `etcd=A` starts a one-member etcd on host A's address, port 2379, first.
# mcrepl-master and mcrepl-worker run in the background as they would on
# their hosts; each must print its ready line within 15 s (a worker's
# means its segments mounted) and still run when the block ends; --help
# and --version run in the foreground. Every other command must succeed.
#
# Exits 0 when every block passed, 0 with "skipped: ..." where network
# namespaces cannot be made (not root, no iproute2), 1 on a failure (the
# block, the command and the daemons' log tails are printed).
set -u
BIN=$(cd "${1:?usage: check-docs.sh BIN_DIR FILE.md...}" && pwd)
shift
P=mcd$$
WORK=$(mktemp -d)
say() { echo "check-docs: $*"; }
skip() { say "skipped: $*"; exit 0; }

cleanup_block() {
	[ -f "$WORK/pids" ] && for p in $(cat "$WORK/pids"); do
		kill "$p" 2>/dev/null
	done
	sleep 0.3
	[ -f "$WORK/pids" ] && for p in $(cat "$WORK/pids"); do
		kill -9 "$p" 2>/dev/null
	done
	rm -f "$WORK/pids"
	for ns in $(ip netns list | awk '{print $1}' | grep "^$P"); do
		ip netns del "$ns" 2>/dev/null
	done
}
cleanup() {
	cleanup_block
	rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

[ "$(id -u)" = 0 ] || skip "not root (network namespaces need root)"
command -v ip >/dev/null 2>&1 || skip "iproute2 (ip) not installed"
ip netns add "${P}probe" 2>/dev/null || skip "cannot create network namespaces here"
ip netns del "${P}probe"

# ---- extraction: every marked block to $WORK/b<N>.sh, its marker and
# place to $WORK/b<N>.attr ----
awk -v dir="$WORK" '
	FNR == 1 { armed = 0; inb = 0 }
	inb && /^```/ { inb = 0; close(out); next }
	inb {
		if (match($0, /^# host [A-Za-z0-9_]+/)) {
			h = substr($0, 8, RLENGTH - 7)
			print "check_docs_host " h > out
		}
		print > out
		next
	}
	/^<!-- check-docs( .*)? -->$/ { armed = 1; attr = $0; line = FNR; next }
	armed && /^```sh$/ {
		n++
		out = dir "/b" n ".sh"
		printf "%s:%d %s\n", FILENAME, line, attr > (dir "/b" n ".attr")
		close(dir "/b" n ".attr")
		inb = 1; armed = 0; next
	}
	armed && !/^[[:space:]]*$/ { armed = 0 }
' "$@"

# ---- the wrappers the blocks call through PATH ----
mkdir -p "$WORK/wrap"
for prog in mcrepl-master mcrepl-worker; do
	cat >"$WORK/wrap/$prog" <<EOF
#!/bin/sh
# $prog as the docs start it on \$CHECK_DOCS_NS, in the background
for a in "\$@"; do
	case \$a in --help|-h|--version)
		exec ip netns exec "\$CHECK_DOCS_NS" "$BIN/$prog" "\$@";;
	esac
done
n=\$(ls "$WORK"/daemon-*.log 2>/dev/null | wc -l)
log="$WORK/daemon-\$n.log"
echo "$prog \$* (on \$CHECK_DOCS_HOST)" >"\$log"
ip netns exec "\$CHECK_DOCS_NS" "$BIN/$prog" "\$@" >>"\$log" 2>&1 &
pid=\$!
echo \$pid >>"$WORK/pids"
i=0
until grep -q "^$prog ready" "\$log"; do
	if ! kill -0 \$pid 2>/dev/null; then
		echo "check-docs: $prog exited before it was ready:" >&2
		tail -n 5 "\$log" >&2
		exit 1
	fi
	i=\$((i + 1))
	if [ \$i -gt 150 ]; then
		echo "check-docs: $prog not ready within 15 s:" >&2
		tail -n 5 "\$log" >&2
		exit 1
	fi
	sleep 0.1
done
EOF
done
for prog in mcrepl-cli curl; do
	real=$BIN/$prog
	[ "$prog" = curl ] && real=$(command -v curl || echo curl)
	cat >"$WORK/wrap/$prog" <<EOF
#!/bin/sh
exec ip netns exec "\$CHECK_DOCS_NS" "$real" "\$@"
EOF
done
chmod +x "$WORK/wrap"/*

# host NAME ADDR: a namespace wired to the block's bridge
host() {
	ip netns add "$P$1" || return 1
	ip -n "${P}hub" link add "v$1" type veth peer name eth0 netns "$P$1" ||
		return 1
	ip -n "${P}hub" link set "v$1" master br0 up
	ip -n "$P$1" addr add "$2/24" dev eth0
	ip -n "$P$1" link set eth0 up
	ip -n "$P$1" link set lo up
}

# etcd_on NAME: a one-member etcd on host NAME's address, port 2379
etcd_on() {
	addr=$(ip -n "$P$1" -4 -o addr show dev eth0 | awk '{print $4}' |
		cut -d/ -f1)
	ip netns exec "$P$1" etcd --name docs --data-dir "$WORK/etcd" \
		--listen-client-urls "http://$addr:2379" \
		--advertise-client-urls "http://$addr:2379" \
		--listen-peer-urls http://127.0.0.1:2380 \
		--initial-advertise-peer-urls http://127.0.0.1:2380 \
		--initial-cluster docs=http://127.0.0.1:2380 \
		>"$WORK/etcd.log" 2>&1 &
	echo $! >>"$WORK/pids"
	i=0
	until grep -q "ready to serve client requests" "$WORK/etcd.log" \
		2>/dev/null; do
		i=$((i + 1))
		[ $i -gt 100 ] && return 1
		sleep 0.1
	done
}

# run_block N: 0 passed, 1 failed, 2 skipped (the reason printed)
run_block() {
	attr=$(cut -d' ' -f2- "$WORK/b$1.attr")
	hosts=$(echo "$attr" | sed -n 's/.*hosts="\([^"]*\)".*/\1/p')
	etcd=$(echo "$attr" | sed -n 's/.*etcd=\([A-Za-z0-9_]*\).*/\1/p')
	# one host of its own, with an address besides loopback (getaddrinfo's
	# AI_ADDRCONFIG finds no address family on loopback alone)
	[ -n "$hosts" ] || hosts="H=10.0.0.100"
	if [ -n "$etcd" ] && ! command -v etcd >/dev/null 2>&1; then
		echo "no etcd binary (Debian: etcd-server)"
		return 2
	fi
	ip netns add "${P}hub" || return 1
	ip -n "${P}hub" link set lo up
	ip -n "${P}hub" link add br0 type bridge || return 1
	ip -n "${P}hub" link set br0 up
	first=hub
	for h in $hosts; do
		name=${h%%=*}
		host "$name" "${h#*=}" || return 1
		[ "$first" = hub ] && first=$name
	done
	if [ -n "$etcd" ] && ! etcd_on "$etcd"; then
		echo "etcd did not start on host $etcd"
		return 1
	fi
	d=$WORK/run$1
	mkdir -p "$d/build"
	ln -s "$WORK/wrap" "$d/build/bin"
	cat >"$WORK/prelude$1.sh" <<EOF
check_docs_host() {
	CHECK_DOCS_HOST=\$1 CHECK_DOCS_NS=$P\$1
	export CHECK_DOCS_HOST CHECK_DOCS_NS
}
check_docs_host $first
PATH="$WORK/wrap:$BIN:\$PATH"
EOF
	cat "$WORK/prelude$1.sh" "$WORK/b$1.sh" >"$d/block.sh"
	(cd "$d" && sh -e block.sh >"$WORK/out$1" 2>&1) || return 1
	# the daemons it started still run
	[ -f "$WORK/pids" ] && for p in $(cat "$WORK/pids"); do
		kill -0 "$p" 2>/dev/null || {
			echo "a daemon it started has exited" >>"$WORK/out$1"
			return 1
		}
	done
	return 0
}

n=0
failed=0
for a in "$WORK"/b*.attr; do
	[ -e "$a" ] || break
	k=${a##*/b}
	k=${k%.attr}
	where=$(cut -d' ' -f1 "$a")
	n=$((n + 1))
	why=$(run_block "$k")
	rc=$?
	case $rc in
	0) echo "ok $n - $where" ;;
	2) echo "ok $n - $where # skip $why" ;;
	*)
		failed=$((failed + 1))
		echo "not ok $n - $where"
		[ -n "$why" ] && echo "# $why"
		sed 's/^/#   /' "$WORK/b$k.sh"
		echo "# output:"
		sed 's/^/#   /' "$WORK/out$k" 2>/dev/null
		for l in "$WORK"/daemon-*.log; do
			[ -e "$l" ] || continue
			echo "# $(head -n 1 "$l"):"
			tail -n 5 "$l" | sed 's/^/#   /'
		done
		;;
	esac
	cleanup_block
	rm -f "$WORK"/daemon-*.log "$WORK/etcd.log"
	rm -rf "$WORK/etcd"
done
echo "1..$n"
[ "$n" -gt 0 ] || { say "no marked block in $*"; exit 1; }
say "$((n - failed)) of $n documented blocks ran as written"
[ "$failed" -eq 0 ]
