#!/bin/sh
# stress-check.sh ROUNDS LOGDIR COMMAND...: runs COMMAND (make check-stress
# gives the timing-sensitive suites, CHECK_TIMED) ROUNDS times while one
# busy loop per CPU keeps every core busy, as on a shared CI runner; a
# round that fails keeps a copy of LOGDIR as LOGDIR-stress-<round>. The
# loops are this script's children, killed by their ids when it ends (also
# on Ctrl-C). The last line: "check-stress rounds=<r> passed=<p>"; the
# status is 0 when every round passed.
set -u
rounds=${1:?usage: stress-check.sh ROUNDS LOGDIR COMMAND...}
logdir=${2:?usage: stress-check.sh ROUNDS LOGDIR COMMAND...}
shift 2
cpus=$(nproc 2> /dev/null || echo 2)
loops=
stop_loops() {
	[ -n "$loops" ] && kill $loops 2> /dev/null
	loops=
}
trap stop_loops EXIT
trap 'stop_loops; exit 130' INT TERM
for i in $(seq "$cpus"); do
	sh -c 'while :; do :; done' &
	loops="$loops $!"
done
echo "check-stress: $rounds round(s) of: $*"
echo "check-stress: $cpus busy loop(s) (pids$loops), load $(cut -d' ' -f1-3 /proc/loadavg)"
passed=0
r=0
while [ "$r" -lt "$rounds" ]; do
	r=$((r + 1))
	start=$(date +%s)
	echo "check-stress: round $r of $rounds"
	if "$@"; then
		passed=$((passed + 1))
		echo "check-stress: round $r passed in $(($(date +%s) - start)) s"
	else
		rm -rf "$logdir-stress-$r"
		cp -r "$logdir" "$logdir-stress-$r" 2> /dev/null
		echo "check-stress: round $r FAILED after $(($(date +%s) - start)) s; its logs: $logdir-stress-$r/"
	fi
done
stop_loops
echo "check-stress rounds=$rounds passed=$passed"
[ "$passed" -eq "$rounds" ]
