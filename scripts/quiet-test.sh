#!/bin/sh
# quiet-test.sh LOG COMMAND [ARG]...
# Runs one test suite (a TAP script or program) with all its output in
# LOG, and prints one line: its last line (its "N passed, N failed" or
# PASS/skipped summary). On failure it also prints the "not ok" lines, the
# tail of the log and where the full log is, and exits with its status.
# `make check` uses it so the console shows one line per suite.
set -u
log=$1
shift
mkdir -p "$(dirname "$log")"
"$@" >"$log" 2>&1
rc=$?
if [ "$rc" -eq 0 ]; then
	tail -n 1 "$log"
	exit 0
fi
grep '^not ok' "$log"
echo "--- last lines of $log:"
tail -n 15 "$log"
echo "FAILED (exit $rc): $*; full output in $log"
exit "$rc"
