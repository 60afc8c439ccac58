# mcrepl-master: daemons/master/*.c linked with the RPC layer and libmcrepl.
MASTER_SRC := $(sort $(wildcard daemons/master/*.c))
MASTER_OBJ := $(MASTER_SRC:%.c=$(BUILD)/obj/%.o)
MASTER_BIN := $(BUILD)/bin/mcrepl-master

$(MASTER_BIN): $(MASTER_OBJ) $(RPC_LIB) $(STLIB)
	@mkdir -p $(@D)
	$(CC) $(MASTER_OBJ) $(RPC_LIB) $(STLIB) -o $@ $(ALL_LDFLAGS) \
		$(DAEMON_LIBS) -lm

all: $(MASTER_BIN)

# Integration tests start the real daemons from $(BUILD)/bin.
check-daemons valgrind-daemons: $(MASTER_BIN)
check-daemons valgrind-daemons: export MCREPL_BIN_DIR := $(abspath $(BUILD)/bin)

# bench_master: mode off vs enforce read throughput of real masters.
BENCH_MASTER := $(BUILD)/bench/bench_master
$(BENCH_MASTER): $(BUILD)/obj/bench/daemons/bench_master.o $(RPC_LIB) \
		$(STLIB)
	@mkdir -p $(@D)
	$(CC) $^ -o $@ $(ALL_LDFLAGS) $(DAEMON_LIBS) -lm
$(BUILD)/obj/bench/daemons/%.o: bench/daemons/%.c | $(RPC_GEN_H)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(DAEMON_CFLAGS) -c $< -o $@

all: $(BENCH_MASTER)
bench: bench-master
bench-master: $(BENCH_MASTER) $(MASTER_BIN)
	MCREPL_BIN_DIR=$(abspath $(BUILD)/bin) $(BENCH_MASTER)
.PHONY: bench-master
