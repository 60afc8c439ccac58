# mcrepl-sim: the cluster simulator, examples/sim/*.c and the trace loader
# shared with mcrepl-bench (examples/common/*.c), linked with libmcrepl.a.
# Included by the top Makefile (BUILD, ALL_CFLAGS, ALL_LDFLAGS, STLIB).
#
#   $(BUILD)/bin/mcrepl-sim     the simulator (built by `all`)
#   make check-sim              tests/common/trace_test (the trace loader
#                               shared with mcrepl-bench, examples/common)
#                               and tests/sim/run.sh (hooked to check)
#
# Objects are built by the top Makefile's $(BUILD)/obj/%.o rule, i.e. with
# $(ALL_CFLAGS): -std=c11, the full warning list and -Werror.

SIM_SRC := $(sort $(wildcard examples/sim/*.c examples/common/*.c))
SIM_OBJ := $(SIM_SRC:%.c=$(BUILD)/obj/%.o)
SIM_BIN := $(BUILD)/bin/mcrepl-sim

$(SIM_BIN): $(SIM_OBJ) $(STLIB)
	@mkdir -p $(@D)
	$(CC) $(SIM_OBJ) $(STLIB) -o $@ $(ALL_LDFLAGS) -lm

TRACE_TEST_OBJ := $(BUILD)/obj/tests/common/trace_test.o \
	$(patsubst %.c,$(BUILD)/obj/%.o,$(wildcard examples/common/*.c))
TRACE_TEST := $(BUILD)/tests/trace_test

$(TRACE_TEST): $(TRACE_TEST_OBJ)
	@mkdir -p $(@D)
	$(CC) $(TRACE_TEST_OBJ) -o $@ $(ALL_LDFLAGS) -lm

sim: $(SIM_BIN)

all: $(SIM_BIN)

check-sim: $(SIM_BIN) $(TRACE_TEST)
	$(TRACE_TEST)
	sh tests/sim/run.sh $(SIM_BIN)

check: check-sim

.PHONY: sim check-sim

# The issue-14 grid (bench/sim-grid.sh): minutes of CPU, not in check.
bench-grid: $(SIM_BIN)
	sh bench/sim-grid.sh $(SIM_BIN)
.PHONY: bench-grid
