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

# The read path of our own master in-process (bench/master/): the driver
# shape of contrib/mooncake/inproc_bench.cpp on store_get under the store
# lock (figures in BENCHMARKS.md).
#   make bench-store-read   100 k keys uniform, then 1,000 hot keys
CFLAGS.bench/master := $(TOOLS_CFLAGS) -Idaemons/master
STORE_READ_BENCH := $(BUILD)/bench/bench_store_read
$(BUILD)/obj/bench/master/bench_store_read.o: | $(RPC_GEN_H)
STORE_BENCH_LOAD := $(BUILD)/obj/bench/master/bench_store_load.o
$(STORE_BENCH_LOAD): | $(RPC_GEN_H)
$(STORE_READ_BENCH): $(BUILD)/obj/bench/master/bench_store_read.o \
		$(STORE_BENCH_LOAD) \
		$(MASTER_LIB) $(DAEMON_LIB) $(STLIB)
	@mkdir -p $(@D)
	$(call quiet,LD)$(CC) $^ -o $@ $(ALL_LDFLAGS) $(DAEMON_LIBS) -lm
all: $(STORE_READ_BENCH)

# The same store under contrib/mooncake/balance_bench.cpp's workload (read
# balance; figures in BENCHMARKS.md and contrib/mooncake/README.md).
STORE_BALANCE_BENCH := $(BUILD)/bench/bench_store_balance
$(BUILD)/obj/bench/master/bench_store_balance.o: | $(RPC_GEN_H)
$(STORE_BALANCE_BENCH): $(BUILD)/obj/bench/master/bench_store_balance.o \
		$(STORE_BENCH_LOAD) \
		$(MASTER_LIB) $(TOOLS_LIB) $(DAEMON_LIB) $(STLIB)
	@mkdir -p $(@D)
	$(call quiet,LD)$(CC) $^ -o $@ $(ALL_LDFLAGS) $(DAEMON_LIBS) -lm
all: $(STORE_BALANCE_BENCH)

#   make bench-store-balance   read balance of our store, 8 and 64 segments
bench-store-balance: $(STORE_BALANCE_BENCH)
	$(STORE_BALANCE_BENCH) --segments 8
	$(STORE_BALANCE_BENCH) --segments 64

.PHONY: bench-store-balance

# The master's heap per object at 1 M objects (bench/master/bench_store_mem.c).
#   make bench-store-mem
STORE_MEM_BENCH := $(BUILD)/bench/bench_store_mem
$(BUILD)/obj/bench/master/bench_store_mem.o: | $(RPC_GEN_H)
$(STORE_MEM_BENCH): $(BUILD)/obj/bench/master/bench_store_mem.o \
		$(MASTER_LIB) $(DAEMON_LIB) $(STLIB)
	@mkdir -p $(@D)
	$(call quiet,LD)$(CC) $^ -o $@ $(ALL_LDFLAGS) $(DAEMON_LIBS) -lm
all: $(STORE_MEM_BENCH)

bench-store-mem: $(STORE_MEM_BENCH)
	$(STORE_MEM_BENCH) --keys 1000000

bench-store-read: $(STORE_READ_BENCH)
	$(STORE_READ_BENCH) --keys 100000
	$(STORE_READ_BENCH) --keys 100000 --hot 1000

.PHONY: bench-store-read bench-store-mem
