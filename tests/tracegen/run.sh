#!/bin/sh
# mcrepl-tracegen tests (make check-tracegen): the same seed gives the same
# bytes (exact line count and checksum of the default trace), and the
# shape: every request reads the common block, a conversation's turns are
# prefixes of its later turns, a popular shared prefix, ids numbered in
# order of first appearance, Poisson arrivals at the rate, the limits; the
# simulator reads the output without a malformed line.
# Usage: run.sh path/to/mcrepl-tracegen path/to/mcrepl-sim
set -u
USAGE="usage: run.sh path/to/mcrepl-tracegen path/to/mcrepl-sim"
GEN=${1:?$USAGE}
SIM=${2:?$USAGE}
DIR=$(dirname "$0")
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT INT TERM
. "$DIR/../tap.sh"

# ids FILE: per line "conversation turn id id ..." (an --annotate trace)
ids() {
	sed 's/.*"hash_ids": \[//; s/\], "conversation": \([0-9]*\), "turn": \([0-9]*\)}$/ \1 \2/; s/,//g' "$1" |
		awk '{ printf "%s %s", $(NF - 1), $NF; for (i = 1; i < NF - 1; i++) printf " %s", $i; print "" }'
}

# ---- determinism -------------------------------------------------------------
"$GEN" > "$TMP/a"
"$GEN" --seed 1 > "$TMP/b"
"$GEN" --seed 2 > "$TMP/c"
check "determinism: same seed, same bytes" cmp -s "$TMP/a" "$TMP/b"
check "determinism: another seed, another trace" eval '! cmp -s "$TMP/a" "$TMP/c"'
# The default trace, byte for byte (what make's
# $(BUILD)/traces/synthetic.jsonl holds and the documented figures were
# measured on): a change of the model or its defaults shows here.
check "default trace: exact line count" eq "$(wc -l < "$TMP/a" | tr -d ' ')" 4000
check "default trace: exact checksum" eq "$(cksum < "$TMP/a")" "1106176966 691564"

# ---- shape -------------------------------------------------------------------
"$GEN" --annotate > "$TMP/n"
check "--annotate adds the two members and changes nothing else" eval \
	'sed "s/, \"conversation\": [0-9]*, \"turn\": [0-9]*}\$/}/" "$TMP/n" | cmp -s - "$TMP/a"'
ids "$TMP/n" > "$TMP/ids"
check "every request reads the common block first" \
	eq "$(awk '$3 != 0' "$TMP/ids" | wc -l | tr -d ' ')" 0
check "the common block is read nowhere else" \
	eq "$(awk '{ for (i = 4; i <= NF; i++) if ($i == 0) print }' "$TMP/ids" | wc -l | tr -d ' ')" 0
# Each turn after the first: the conversation's previous turn is a proper
# prefix of it, and turns count 1, 2, 3, ...
awk '{
	c = $1; t = $2; s = ""
	for (i = 3; i <= NF; i++) s = s " " $i
	if (t == 1) { if (c in last) bad++; first++ }
	else if (!(c in last) || t != turn[c] + 1 ||
	    index(s, last[c] " ") != 1) bad++
	else later++
	last[c] = s; turn[c] = t
} END { print bad + 0, first + 0, later + 0 }' "$TMP/ids" > "$TMP/turns"
read -r bad first later < "$TMP/turns"
check "each turn extends the conversation's previous turn" eq "$bad" 0
check "conversations grow: most requests are later turns" gt "$later" "$first"
# The most read block after the common one is a shared prefix's: read by
# many conversations (Zipf over 16 prefixes, 3 in 4 conversations
# start with one: about a fifth of them with the most popular).
awk '{ for (i = 4; i <= NF; i++) if (!(($i, $1) in seen)) { seen[$i, $1]; n[$i]++ } }
	END { for (b in n) if (n[b] > m) m = n[b]; print m }' "$TMP/ids" > "$TMP/pop"
check "a shared prefix is read by over 100 of the $first conversations" \
	gt "$(cat "$TMP/pop")" 100
check "ids are numbered in order of first appearance" eq "$(awk '{
	for (i = 3; i <= NF; i++) if ($i > max) { if ($i != max + 1) bad++; max = $i }
} END { print bad + 0 }' "$TMP/ids")" 0
sed 's/^{"timestamp": \([0-9]*\),.*/\1/' "$TMP/a" > "$TMP/ts"
check "timestamps never decrease" eq "$(awk '$1 < p { b++ } { p = $1 } END { print b + 0 }' "$TMP/ts")" 0
# 3,999 gaps of mean 250 ms (rate 4): within 5 % (sd of the mean 1.6 %)
check "Poisson arrivals: mean gap within 5 % of 1 / rate" sh -c \
	"awk 'END { g = \$1 / (NR - 1); exit !(g > 237.5 && g < 262.5) }' '$TMP/ts'"
check "input_length fits its blocks (512 tokens each)" eq "$(sed 's/.*"input_length": \([0-9]*\), .*"hash_ids": \[\(.*\)\]}$/\1 \2/; s/,//g' "$TMP/a" |
	awk '{ n = NF - 1; if ($1 <= (n - 1) * 512 || $1 > n * 512) b++ } END { print b + 0 }')" 0
"$GEN" --rate 8 > "$TMP/r8"
check "--rate moves only the timestamps" eval \
	'[ "$(sed "s/^{\"timestamp\": [0-9]*,//" "$TMP/r8" | cksum)" = "$(sed "s/^{\"timestamp\": [0-9]*,//" "$TMP/a" | cksum)" ]'

# ---- limits and flags ----------------------------------------------------------
"$GEN" --requests 0 --duration 60 > "$TMP/d"
check "--duration 60: every arrival before 60 s" eq "$(awk -F'[:,]' '$2 >= 60000' "$TMP/d" | wc -l | tr -d ' ')" 0
check "--duration 60: about rate x 60 requests" sh -c \
	"n=\$(wc -l < '$TMP/d'); [ \$n -gt 180 ] && [ \$n -lt 300 ]"
"$GEN" --requests 1000 --max_blocks 20 --annotate > "$TMP/m"
check "--max_blocks 20: no request reads more" eq "$(ids "$TMP/m" | awk 'NF - 2 > 20' | wc -l | tr -d ' ')" 0
"$GEN" --requests 0 > /dev/null 2> "$TMP/e1"
check "--requests 0 without --duration is refused" grep -q 'needs a --duration' "$TMP/e1"
"$GEN" --common_blocks 4 --prefix_blocks 16 --max_blocks 20 > /dev/null 2> "$TMP/e2"
check "--max_blocks below common + prefix + 1 is refused" grep -q 'no room' "$TMP/e2"
"$GEN" --prefix_share 2 > /dev/null 2> "$TMP/e3"
check "--prefix_share above 1 is refused" grep -q 'prefix_share' "$TMP/e3"
check "--help exits 0" sh -c "'$GEN' --help > /dev/null"
"$GEN" --common_blocks 0 --prefix_share 0 --annotate > "$TMP/z"
check "no common block, no prefix: no block read by two conversations" \
	eq "$(ids "$TMP/z" | awk '{ for (i = 3; i <= NF; i++) {
		if ($i in conv && conv[$i] != $1) b++; conv[$i] = $1 } }
		END { print b + 0 }')" 0

# ---- read by the simulator ---------------------------------------------------
"$SIM" --nodes 4 --workload trace "$TMP/a" --speedup 100 --quiet > "$TMP/s" 2>&1
sfield() { grep '^{"summary":' "$TMP/s" | sed -n 's/.*"'"$1"'":\([^,}]*\).*/\1/p'; }
check "mcrepl-sim reads it: no malformed line" eq "$(sfield trace_malformed)" 0
check "mcrepl-sim reads it: every block read" eq "$(sfield reads)" \
	"$(sed 's/.*"hash_ids": \[//' "$TMP/a" | tr -cd ',]' | wc -c | tr -d ' ')"

tap_done check-tracegen
