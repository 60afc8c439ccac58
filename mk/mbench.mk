# mcrepl-bench: hot-spot relief measured on real daemons (docs/BENCH.md).
# Included by the top Makefile after mk/daemons.mk (RPC_LIB, RPC_GEN_H,
# DAEMON_CFLAGS, DAEMON_LIBS); the daemons it starts come from
# mk/master.mk and mk/worker.mk.
#
#   $(BUILD)/bin/mcrepl-bench   examples/bench/*.c and the trace loader shared
#                               with mcrepl-sim, examples/common/*.c (built by
#                               `all`)
#   make check-mbench           tests/mbench/run.sh against it (< 40 s;
#                               hooked to check)

MBENCH_SRC := $(sort $(wildcard examples/bench/*.c examples/common/*.c))
MBENCH_OBJ := $(MBENCH_SRC:%.c=$(BUILD)/obj/%.o)
MBENCH_BIN := $(BUILD)/bin/mcrepl-bench

$(BUILD)/obj/examples/bench/%.o: examples/bench/%.c | $(RPC_GEN_H)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(DAEMON_CFLAGS) -c $< -o $@

$(MBENCH_BIN): $(MBENCH_OBJ) $(RPC_LIB) $(STLIB)
	@mkdir -p $(@D)
	$(CC) $(MBENCH_OBJ) $(RPC_LIB) $(STLIB) -o $@ $(ALL_LDFLAGS) \
		$(DAEMON_LIBS) -lm

mbench: $(MBENCH_BIN)

all: $(MBENCH_BIN)

check-mbench: export MCREPL_BIN_DIR := $(abspath $(BUILD)/bin)
check-mbench: $(MBENCH_BIN) $(BUILD)/bin/mcrepl-master $(BUILD)/bin/mcrepl-worker
	sh tests/mbench/run.sh $(MBENCH_BIN)

check: check-mbench

.PHONY: mbench check-mbench
