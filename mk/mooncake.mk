# Upstream Mooncake with libmcrepl linked in (contrib/mooncake/; not part of
# make check or .ci/run: it builds upstream Mooncake, about 15 minutes on 2
# cores, from bare git mirrors of four public repositories, with a build
# script for upstream Mooncake given as BUILD_SCRIPT; the repository carries
# none).
#
#   make mooncake-check   BUILD_SCRIPT=<script> MIRRORS=<dir> (or
#                         MOONCAKE_GIT= YLT_GIT= PYBIND_GIT= GTEST_GIT=):
#                         build upstream + contrib/mooncake/libmcrepl.patch,
#                         run upstream's dynamic_replication_test and
#                         master_service_test, the enforce/off and balance
#                         benches; print upstream_tests=<n> passed=<p>
#                         enforce_off_inproc=<x> enforce_off_rpc=<y>
#                         balance_off=<a> balance_auto=<b> balance_ours=<c>
#                         patch_added=<lines>
#   make mooncake-bench   the side-by-side benchmark, upstream vs patched
#                         (MOONCAKE_UPSTREAM=<ninja dir of an unpatched
#                         build>, MOONCAKE_PATCHED=<... of a patched one>)

mooncake-check:
	bash contrib/mooncake/check.sh

MOONCAKE_UPSTREAM ?= build/mooncake/upstream/build
MOONCAKE_PATCHED ?= build/mooncake/out/build
mooncake-bench:
	bash contrib/mooncake/bench.sh upstream=$(MOONCAKE_UPSTREAM) \
		patched=$(MOONCAKE_PATCHED)

.PHONY: mooncake-check mooncake-bench
