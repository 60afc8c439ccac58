#!/bin/sh
# The read path's cost of read holds and the reply window (docs/SECURITY.md,
# "A reader that stalls its reply"): bench_data_read (one client, one READ
# at a time, 4 KiB, 64 KiB and 1 MiB regions of an in-process data port)
# built with the change and without it, run alternately (ABBA, so neither
# side always goes first on a busy machine). Not part of `make check`;
# figures in BENCHMARKS.md ("Read holds").
#
#   sh bench/read-holds.sh WITH WITHOUT [RUNS] [READS]
#
# WITH and WITHOUT are the two bench_data_read binaries; RUNS runs of
# each (9), READS READs a round (20000). Prints each run's figures and,
# last, per size the median of each side's runs and their ratio
# (with/without): cpu_* is the server thread's CPU per READ (the
# figure to judge on a busy machine), wall_* the client's wall time.
set -eu
with=$1
without=$2
runs=${3:-9}
reads=${4:-20000}

median() {
	sort -n | awk '{v[NR] = $1}
		END {print NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'
}

one() { # side binary
	"$2" --reads "$reads" | tail -1 | tr ' ' '\n' |
		sed -n 's/^\(cpu\|wall\)_us_\([a-z0-9]*\)=/\1_\2 /p' |
		while read -r size us; do echo "$us" >>"$out/$1.$size"; done
}

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
i=0
while [ "$i" -lt "$runs" ]; do
	if [ $((i % 2)) -eq 0 ]; then
		one with "$with"
		one without "$without"
	else
		one without "$without"
		one with "$with"
	fi
	for f in cpu_4k cpu_64k cpu_1m; do
		printf '%s ' "$f=$(tail -n1 "$out/with.$f")/$(tail -n1 \
			"$out/without.$f")"
	done
	echo "(run $i, with/without)"
	i=$((i + 1))
done
line="runs=$runs reads=$reads"
for size in cpu_4k cpu_64k cpu_1m wall_4k wall_64k wall_1m; do
	w=$(median <"$out/with.$size")
	n=$(median <"$out/without.$size")
	r=$(awk -v w="$w" -v n="$n" 'BEGIN {printf "%.3f", w / n}')
	line="$line ${size}_us_with=$w without=$n ratio=$r"
done
echo "$line"
