# mcrepl-sim: the cluster simulator, tools/sim/*.c with the tools'
# shared code ($(TOOLS_LIB): it pulls the trace reader, the Zipf sampler,
# the shifting ranking and the per-phase figures) and the flag parser of
# every program ($(FLAGS_OBJ), no other daemon code), linked with
# libmcrepl.a.
#
#   $(BUILD)/bin/mcrepl-sim     the simulator (built by `all`)
#   make check-sim              tests/common/trace_test (the trace reader of
#                               tools/common) and tests/sim/run.sh
#                               (hooked to check)

CFLAGS.tools/sim := -Idaemons/runtime/common
SIM_OBJ := $(call objs,tools/sim)
SIM_BIN := $(BUILD)/bin/mcrepl-sim
FLAGS_OBJ := $(patsubst %,$(BUILD)/obj/daemons/runtime/common/%.o,\
	flagparse flagvalue)

$(SIM_BIN): $(SIM_OBJ) $(FLAGS_OBJ) $(TOOLS_LIB) $(STLIB)
	$(call link,-lm)

TRACE_TEST := $(BUILD)/tests/trace_test
$(TRACE_TEST): $(call objs,tests/common) $(TOOLS_LIB)
	$(call link,-lm)

sim: $(SIM_BIN)
all: $(SIM_BIN)

check-sim: $(SIM_BIN) $(TRACE_TEST)
	$(Q)$(QUIET_TEST) $(TEST_LOGS)/trace.log $(TRACE_TEST)
	$(Q)$(QUIET_TEST) $(TEST_LOGS)/sim.log sh tests/sim/run.sh $(SIM_BIN)
CHECK_FAST += check-sim

.PHONY: sim check-sim

# The issue-14 grid (bench/sim-grid.sh): minutes of CPU, not in check.
bench-grid: $(SIM_BIN)
	sh bench/sim-grid.sh $(SIM_BIN)
.PHONY: bench-grid

# The issue-29 cases (bench/sim-shift.sh): shifting hot sets, the trace at
# real speed, 90 %-full clusters; a few minutes, not in check.
bench-shift: $(SIM_BIN)
	sh bench/sim-shift.sh $(SIM_BIN)
.PHONY: bench-shift
