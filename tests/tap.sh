# TAP helpers shared by the shell test scripts (sourced, POSIX sh):
# check "description" command... records one numbered ok / not ok line;
# eq/gt/lt/ge compare and say what they got on failure; tap_done NAME
# prints the plan and the verdict and exits non-zero on any failure.
n=0
failed=0

pass() { n=$((n + 1)); echo "ok $n - $1"; }
fail() { n=$((n + 1)); echo "not ok $n - $1"; failed=$((failed + 1)); }
check() { # check "description" command...
	desc=$1
	shift
	if "$@"; then pass "$desc"; else fail "$desc"; fi
}
eq() { [ "$1" = "$2" ] || { echo "#   got '$1', want '$2'" >&2; return 1; }; }
gt() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a + 0 > b + 0) }' ||
	{ echo "#   got '$1', want > '$2'" >&2; return 1; }; }
lt() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a + 0 < b + 0) }' ||
	{ echo "#   got '$1', want < '$2'" >&2; return 1; }; }
ge() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a != "" && a + 0 >= b + 0) }' ||
	{ echo "#   got '$1', want >= '$2'" >&2; return 1; }; }
tap_done() { # tap_done NAME
	echo "1..$n"
	if [ "$failed" -ne 0 ]; then
		echo "$1: $failed of $n tests failed"
		exit 1
	fi
	echo "$1: all $n tests passed"
}
