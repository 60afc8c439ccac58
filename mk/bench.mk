# Benchmarks (make bench; figures in BENCHMARKS.md). Every bench parses
# its flags with the daemons' parser: --help lists them, a bad value or an
# unknown flag is refused with one line naming it (exit 2).
#
#   bench/bench_*.c        the library's, linked with libmcrepl.a
#   bench/daemons/*.c      one binary each, on the daemon code:
#     bench_master         mode off vs enforce read throughput of real
#                          masters (make bench-master); --compare auth:
#                          without vs with --auth_file (make
#                          bench-master-auth)
#     bench_copy           TCP copy engine vs a raw loopback stream, on an
#                          in-process data server (make bench-copy)
#     bench_client         store_client_get latency of a 64 KiB object on
#                          a real master + worker (make bench-client)
#     bench-checks         the read path with the data-plane checks (grants
#                          and stamp tags) vs without, in one run: 64 KiB
#                          get latency ratio (bench_client --grants) and
#                          master CPU per GetReplicaList ratio
#                          (bench_master --grants)
#     bench_stall          the longest loop turn while segments holding
#                          1 M objects leave, on the master's store in
#                          process (make bench-stall)
#     bench_failover       master failover under read/write load: kill -9
#                          the leader; then a 3-member etcd losing one
#                          member (make bench-failover; docs/HA.md)
#     bench_drain          rolling restart of 4 of 8 workers under reads,
#                          each draining on SIGTERM (make bench-drain;
#                          --no-drain: the baseline)
#     bench_hedge          hedged reads: 3 workers, 2 replicas per object;
#                          throughput and hedged share vs a never-hedging
#                          client, then read latency with one worker
#                          SIGSTOPped (make bench-hedge)
#     bench_integrity      get latency with payload digests vs without,
#                          64 KiB and 4 MiB (make bench-integrity)
#   bench/master/*.c       our master's store in-process (end of this file):
#                          bench_store_read, bench_store_balance,
#                          bench_store_mem

# Every bench is one $(call bench_program,...) line (mk/program.mk): its
# object, the flag parser ($(FLAGS_OBJ); --help, checked values) and
# what it links besides.
CFLAGS.bench := -Itools/common -Iruntime/common
BENCHES := $(patsubst bench/%.c,$(BUILD)/bench/%,\
	$(sort $(wildcard bench/bench_*.c)))
# The library's benches draw Zipf keys with the tools' one sampler.
BENCH_ZIPF_OBJ := $(BUILD)/obj/tools/common/zipf.o
$(foreach b,$(sort $(wildcard bench/bench_*.c)),\
	$(call bench_program,$(b),$(BENCH_ZIPF_OBJ) $(MCREPL_LINK),-lm))

CFLAGS.bench/daemons := $(TOOLS_CFLAGS) -Idaemons/master -Ibench
$(call objs,bench/daemons): | $(RPC_GEN_H)
# bench_stress pins its busy loops (sched_setaffinity, cpu_set_t: GNU).
$(BUILD)/obj/bench/daemons/bench_stress.o: CPPFLAGS += -D_GNU_SOURCE
DAEMON_BENCHES := $(patsubst bench/daemons/%.c,$(BUILD)/bench/%,\
	$(sort $(wildcard bench/daemons/*.c)))
$(foreach b,$(sort $(wildcard bench/daemons/*.c)),\
	$(call bench_program,$(b),$(RDMA_OBJ) $(MASTER_LIB) $(TOOLS_LIB) \
		$(DAEMON_LIB) $(MCREPL_LINK),$(RDMA_LIBS) $(DAEMON_LIBS) -lm))

bench: all bench-master bench-master-auth bench-copy bench-client bench-stall \
		bench-store-mem bench-checks bench-hedge bench-integrity
	$(Q)for b in $(BENCHES); do echo "== $$b"; $$b || exit 1; done
bench-master: $(BUILD)/bench/bench_master $(MASTER_BIN)
	$(BUILD)/bench/bench_master
bench-master-auth: $(BUILD)/bench/bench_master $(MASTER_BIN)
	$(BUILD)/bench/bench_master --compare auth
bench-master-tls: $(BUILD)/bench/bench_master $(MASTER_BIN)
	$(BUILD)/bench/bench_master --compare tls
bench-copy: $(BUILD)/bench/bench_copy
	$(BUILD)/bench/bench_copy
bench-client: $(BUILD)/bench/bench_client $(MASTER_BIN) $(WORKER_BIN)
	$(BUILD)/bench/bench_client
bench-client-tls: $(BUILD)/bench/bench_client $(MASTER_BIN) $(WORKER_BIN)
	$(BUILD)/bench/bench_client --tls
bench-checks: $(BUILD)/bench/bench_client $(BUILD)/bench/bench_master \
		$(MASTER_BIN) $(WORKER_BIN)
	$(BUILD)/bench/bench_client --grants
	$(BUILD)/bench/bench_master --grants
bench-stall: $(BUILD)/bench/bench_stall
	$(BUILD)/bench/bench_stall $(STALL_ARGS)
bench-hedge: $(BUILD)/bench/bench_hedge $(MASTER_BIN) $(WORKER_BIN)
	$(BUILD)/bench/bench_hedge
bench-integrity: $(BUILD)/bench/bench_integrity $(MASTER_BIN) $(WORKER_BIN)
	$(BUILD)/bench/bench_integrity --runs 7

bench-failover: $(BUILD)/bench/bench_failover $(MASTER_BIN) $(WORKER_BIN)
	$(BUILD)/bench/bench_failover --etcd3
	$(BUILD)/bench/bench_failover
# Leader changes on a busy machine (docs/HA.md): three kills under four
# busy loops, every acknowledged put read back after the load and after
# the orphans' release; fails on a lost or wrong object, a failover over
# 5 s or a step-down without a kill (about 3 minutes).
check-failover-load: $(BUILD)/bench/bench_failover $(MASTER_BIN) $(WORKER_BIN)
	$(BUILD)/bench/bench_failover --kills 3 --busy 4 --settle-ms 62000 \
		--strict
.PHONY: check-failover-load

bench-drain: $(BUILD)/bench/bench_drain $(MASTER_BIN) $(WORKER_BIN)
	$(BUILD)/bench/bench_drain --no-drain
	$(BUILD)/bench/bench_drain

.PHONY: bench-drain
.PHONY: bench bench-master bench-master-auth bench-master-tls bench-copy bench-client bench-client-tls bench-checks \
	bench-stall bench-failover bench-hedge bench-integrity

# bench/master/: our own master's store in-process. The read path: the
# driver shape of a Mooncake master's GetReplicaList: store_get under the store
# lock (figures in BENCHMARKS.md).
#   make bench-store-read   100 k keys uniform, then 1,000 hot keys
CFLAGS.bench/master := $(TOOLS_CFLAGS) -Idaemons/master -Ibench
$(call objs,bench/master): | $(RPC_GEN_H)
STORE_READ_BENCH := $(BUILD)/bench/bench_store_read
STORE_BALANCE_BENCH := $(BUILD)/bench/bench_store_balance
STORE_MEM_BENCH := $(BUILD)/bench/bench_store_mem
STORE_BENCH_LOAD := $(BUILD)/obj/bench/master/bench_store_load.o
STORE_BENCH_LIBS := $(MASTER_LIB) $(TOOLS_LIB) $(DAEMON_LIB) $(MCREPL_LINK)
$(call bench_program,bench/master/bench_store_read.c,\
	$(STORE_BENCH_LOAD) $(STORE_BENCH_LIBS),$(DAEMON_LIBS) -lm)
# The same store under the balance workload the adapter's test host runs
# (read balance, bench/adapter/; figures in BENCHMARKS.md).
$(call bench_program,bench/master/bench_store_balance.c,\
	$(STORE_BENCH_LOAD) $(STORE_BENCH_LIBS),$(DAEMON_LIBS) -lm)
# The master's heap per object at 1 M objects (make bench-store-mem).
$(call bench_program,bench/master/bench_store_mem.c,\
	$(STORE_BENCH_LIBS),$(DAEMON_LIBS) -lm)

#   make bench-store-balance   read balance of our store, 8 and 64 segments
bench-store-balance: $(STORE_BALANCE_BENCH)
	$(STORE_BALANCE_BENCH) --segments 8
	$(STORE_BALANCE_BENCH) --segments 64

.PHONY: bench-store-balance

bench-store-mem: $(STORE_MEM_BENCH)
	$(STORE_MEM_BENCH) --keys 1000000

bench-store-read: $(STORE_READ_BENCH)
	$(STORE_READ_BENCH) --keys 100000
	$(STORE_READ_BENCH) --keys 100000 --hot 1000

.PHONY: bench-store-read bench-store-mem

# Every bench program, built (also by `all`), none run.
bench-bins: $(BENCH_BINS)
.PHONY: bench-bins
