# mcrepl-worker and mcrepl-cli, linked with the RPC layer and libmcrepl.
# Included by the top Makefile after mk/daemons.mk and mk/rdma.mk (RPC_LIB,
# DAEMON_LIBS, RDMA_OBJ, RDMA_LIBS and the daemons/<dir>/*.c pattern rule
# come from there).
#
#   $(BUILD)/bin/mcrepl-worker   daemons/worker/*.c (+ the rdma engine)
#   $(BUILD)/bin/mcrepl-cli      examples/cli/mcrepl_cli.c
#
# The daemon tests link the worker's data server (check_copy_tcp runs it
# in-process) and start the real binaries (check_worker), so check-daemons
# builds them first; MCREPL_BIN_DIR is exported by mk/master.mk.
WORKER_SRC := $(sort $(wildcard daemons/worker/*.c))
WORKER_OBJ := $(WORKER_SRC:%.c=$(BUILD)/obj/%.o)
WORKER_BIN := $(BUILD)/bin/mcrepl-worker
CLI_OBJ := $(BUILD)/obj/examples/cli/mcrepl_cli.o
CLI_BIN := $(BUILD)/bin/mcrepl-cli
WORKER_TEST_OBJ := $(BUILD)/obj/daemons/worker/data_server.o

$(WORKER_BIN): $(WORKER_OBJ) $(RDMA_OBJ) $(RPC_LIB) $(STLIB)
	@mkdir -p $(@D)
	$(CC) $(WORKER_OBJ) $(RDMA_OBJ) $(RPC_LIB) $(STLIB) -o $@ \
		$(ALL_LDFLAGS) $(RDMA_LIBS) $(DAEMON_LIBS) -lm

$(CLI_OBJ): examples/cli/mcrepl_cli.c | $(BUILD)/gen/mcrepl.pb-c.h
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(DAEMON_CFLAGS) -c $< -o $@

$(CLI_BIN): $(CLI_OBJ) $(RPC_LIB) $(STLIB)
	@mkdir -p $(@D)
	$(CC) $(CLI_OBJ) $(RPC_LIB) $(STLIB) -o $@ $(ALL_LDFLAGS) \
		$(DAEMON_LIBS) -lm

all: $(WORKER_BIN) $(CLI_BIN)

# Target-specific, so the order in which mk/*.mk are read does not matter.
$(BUILD)/tests/check_daemons: $(WORKER_TEST_OBJ)
$(BUILD)/tests/check_daemons: DAEMON_TEST_OBJ += $(WORKER_TEST_OBJ)
check-daemons valgrind-daemons: $(WORKER_BIN) $(CLI_BIN)

worker: $(WORKER_BIN) $(CLI_BIN)

.PHONY: worker

# bench_copy: TCP copy engine vs a raw loopback stream (make bench).
BENCH_COPY := $(BUILD)/bench/bench_copy
$(BENCH_COPY): $(BUILD)/obj/bench/daemons/bench_copy.o \
		$(BUILD)/obj/daemons/worker/data_server.o $(RDMA_OBJ) \
		$(RPC_LIB) $(STLIB)
	@mkdir -p $(@D)
	$(CC) $^ -o $@ $(ALL_LDFLAGS) $(RDMA_LIBS) $(DAEMON_LIBS) -lm
all: $(BENCH_COPY)
bench: bench-copy
bench-copy: $(BENCH_COPY)
	$(BENCH_COPY)
.PHONY: bench-copy

# bench_client: store_client_get latency of a 64 KiB object on a real
# master + worker (make bench).
BENCH_CLIENT := $(BUILD)/bench/bench_client
$(BENCH_CLIENT): $(BUILD)/obj/bench/daemons/bench_client.o $(RPC_LIB) \
		$(STLIB)
	@mkdir -p $(@D)
	$(CC) $^ -o $@ $(ALL_LDFLAGS) $(DAEMON_LIBS) -lm
all: $(BENCH_CLIENT)
bench: bench-client
bench-client: export MCREPL_BIN_DIR := $(abspath $(BUILD)/bin)
bench-client: $(BENCH_CLIENT) $(WORKER_BIN) $(BUILD)/bin/mcrepl-master
	$(BENCH_CLIENT)
.PHONY: bench-client
