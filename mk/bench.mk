# Benchmarks (make bench; figures in BENCHMARKS.md).
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
#   bench/master/*.c       our master's store in-process (end of this file):
#                          bench_store_read, bench_store_balance,
#                          bench_store_mem

BENCHES := $(patsubst bench/%.c,$(BUILD)/bench/%,\
	$(sort $(wildcard bench/bench_*.c)))
# The library's benches draw Zipf keys with the tools' one sampler.
CFLAGS.bench := -Itools/common
BENCH_ZIPF_OBJ := $(BUILD)/obj/tools/common/zipf.o
$(BENCHES): $(BUILD)/bench/%: $(BUILD)/obj/bench/%.o $(BENCH_ZIPF_OBJ) $(MCREPL_LINK)
	$(call link,-lm)

CFLAGS.bench/daemons := $(TOOLS_CFLAGS) -Idaemons/master
$(call objs,bench/daemons): | $(RPC_GEN_H)
DAEMON_BENCHES := $(patsubst bench/daemons/%.c,$(BUILD)/bench/%,\
	$(sort $(wildcard bench/daemons/*.c)))
$(DAEMON_BENCHES): $(BUILD)/bench/%: $(BUILD)/obj/bench/daemons/%.o \
		$(RDMA_OBJ) $(MASTER_LIB) $(TOOLS_LIB) $(DAEMON_LIB) $(MCREPL_LINK)
	$(call link,$(RDMA_LIBS) $(DAEMON_LIBS) -lm)

all: $(BENCHES) $(DAEMON_BENCHES)

bench: all bench-master bench-master-auth bench-copy bench-client bench-stall \
		bench-store-mem bench-checks bench-hedge
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
	bench-stall bench-failover bench-hedge

# bench/master/: our own master's store in-process. The read path: the
# driver shape of a Mooncake master's GetReplicaList: store_get under the store
# lock (figures in BENCHMARKS.md).
#   make bench-store-read   100 k keys uniform, then 1,000 hot keys
CFLAGS.bench/master := $(TOOLS_CFLAGS) -Idaemons/master
STORE_READ_BENCH := $(BUILD)/bench/bench_store_read
$(BUILD)/obj/bench/master/bench_store_read.o: | $(RPC_GEN_H)
STORE_BENCH_LOAD := $(BUILD)/obj/bench/master/bench_store_load.o
$(STORE_BENCH_LOAD): | $(RPC_GEN_H)
$(STORE_READ_BENCH): $(BUILD)/obj/bench/master/bench_store_read.o \
		$(STORE_BENCH_LOAD) \
		$(MASTER_LIB) $(DAEMON_LIB) $(MCREPL_LINK)
	$(call link,$(DAEMON_LIBS) -lm)
all: $(STORE_READ_BENCH)

# The same store under the balance workload the adapter's test host runs
# (read balance, bench/adapter/; figures in BENCHMARKS.md).
STORE_BALANCE_BENCH := $(BUILD)/bench/bench_store_balance
$(BUILD)/obj/bench/master/bench_store_balance.o: | $(RPC_GEN_H)
$(STORE_BALANCE_BENCH): $(BUILD)/obj/bench/master/bench_store_balance.o \
		$(STORE_BENCH_LOAD) \
		$(MASTER_LIB) $(TOOLS_LIB) $(DAEMON_LIB) $(MCREPL_LINK)
	$(call link,$(DAEMON_LIBS) -lm)
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
		$(MASTER_LIB) $(DAEMON_LIB) $(MCREPL_LINK)
	$(call link,$(DAEMON_LIBS) -lm)
all: $(STORE_MEM_BENCH)

bench-store-mem: $(STORE_MEM_BENCH)
	$(STORE_MEM_BENCH) --keys 1000000

bench-store-read: $(STORE_READ_BENCH)
	$(STORE_READ_BENCH) --keys 100000
	$(STORE_READ_BENCH) --keys 100000 --hot 1000

.PHONY: bench-store-read bench-store-mem
