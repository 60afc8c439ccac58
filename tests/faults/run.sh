#!/bin/sh
# The fault matrix (docs/FAULTS.md): runs each case of fault_client on
# fresh daemons, prints a table and the totals; the last line is
#   faults=<n> violations=<v> wrong_bytes=<w> leaked_bytes=<l> stuck_keys=<s>
#
#   sh tests/faults/run.sh [--short|--full] [--strict] [FAULT_CLIENT] [CASE...]
#
# --strict: exit 1 when any violation was found (check-faults-short).
# Each case's daemon and auditor log: $FAULTS_LOG_DIR (build/faults).
# MCREPL_BIN_DIR names the daemons' directory (the Makefile sets it).
set -u
mode=full
strict=0
bin=build/bin/fault_client
while [ $# -gt 0 ]; do
	case "$1" in
	--short) mode=short ;;
	--full) mode=full ;;
	--strict) strict=1 ;;
	-*) echo "run.sh: unknown option $1" >&2; exit 2 ;;
	*) bin=$1; shift; break ;;
	esac
	shift
done
[ -x "$bin" ] || { echo "run.sh: $bin not built" >&2; exit 2; }
logdir=${FAULTS_LOG_DIR:-$(dirname "$bin")/../faults}
mkdir -p "$logdir"
if [ $# -gt 0 ]; then cases="$*"; else cases=$("$bin" list "$mode"); fi

rows=$logdir/rows.$$
: > "$rows"
start=$(date +%s)
printf '%-42s %-6s %-9s %-9s %-6s %-5s %-4s %s\n' case fault wrong_b \
	leaked_b stuck tasks viol note
for c in $cases; do
	line=$("$bin" case "$c" 2> "$logdir/$c.log" | grep '^ROW ' | tail -1)
	[ -n "$line" ] || line="ROW $c - - ? - - - - ERROR no result (see $logdir/$c.log)"
	echo "$line" >> "$rows"
	echo "$line" | awk '{
		note = ""; for (i = 11; i <= NF; i++) note = note (i > 11 ? " " : "") $i
		printf "%-42s %-6s %-9s %-9s %-6s %-5s %-4s %s\n",
			$2, $5, $6, $7, $8, $9, $10, note }'
done
awk -v secs=$(( $(date +%s) - start )) '
	{ n++ }
	$10 == "n/a" { na++; next }
	$10 == "ERROR" { err++; v++; next }
	{ w += $6; l += $7; s += $8; v += $10 }
	END {
		printf "# %d cases (%d n/a, %d errors) in %d s\n", n, na, err, secs
		printf "faults=%d violations=%d wrong_bytes=%d leaked_bytes=%d stuck_keys=%d\n",
			n - na, v, w, l, s
	}' "$rows" | tee "$logdir/summary.$$"
viol=$(sed -n 's/.*violations=\([0-9]*\).*/\1/p' "$logdir/summary.$$")
rm -f "$rows" "$logdir/summary.$$"
if [ "$strict" = 1 ] && [ "${viol:-1}" != 0 ]; then
	exit 1
fi
exit 0
