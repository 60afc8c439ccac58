# mcrepl-sim: the cluster simulator, tools/sim/*.c with the tools'
# shared code ($(TOOLS_LIB): it pulls the trace reader, the Zipf sampler,
# the shifting ranking and the per-phase figures) and the flag parser of
# every program ($(FLAGS_OBJ), no other daemon code), linked with
# libmcrepl.a.
#
#   $(BUILD)/bin/mcrepl-sim     the simulator (built by `all`)
#   $(BUILD)/bin/mcrepl-tracegen  the trace generator, tools/tracegen/*.c
#                               with the simulator's random streams
#                               (tools/sim/rng.c) and the Zipf sampler
#   $(SYNTH_TRACE)              $(BUILD)/traces/synthetic.jsonl, the trace
#                               the tests, benches and docs replay: the
#                               generator's defaults, seed 1 (built by
#                               `all`; traces/README.md)
#   make check-sim              tests/common/trace_test (the trace reader of
#                               tools/common), tests/sim/random_test (the
#                               RNG and Zipf sampler), tests/sim/popgen_test
#                               (the rankings both tools share) and
#                               tests/sim/run.sh
#                               (hooked to check)
#   make check-tracegen         tests/tracegen/run.sh (hooked to check)

CFLAGS.tools/sim := -Iruntime/common
SIM_OBJ := $(call objs,tools/sim)
SIM_BIN := $(BUILD)/bin/mcrepl-sim
FLAGS_OBJ := $(patsubst %,$(BUILD)/obj/runtime/common/%.o,\
	flagparse flagvalue)

$(SIM_BIN): $(SIM_OBJ) $(FLAGS_OBJ) $(TOOLS_LIB) $(MCREPL_LINK)
	$(call link,-lm)

# The tools' random numbers: xoshiro256** and its seeding (tools/sim/rng.c)
# and the Zipf sampler (tools/common/zipf.c), against published outputs.
RANDOM_TEST := $(BUILD)/tests/random_test
$(RANDOM_TEST): $(BUILD)/obj/tests/sim/random_test.o \
		$(BUILD)/obj/tools/sim/rng.o $(TOOLS_LIB)
	$(call link,-lm)

# The popularity generator both tools share (tools/common/popgen.c).
POPGEN_TEST := $(BUILD)/tests/popgen_test
$(POPGEN_TEST): $(BUILD)/obj/tests/sim/popgen_test.o $(TOOLS_LIB)
	$(call link,-lm)

TRACE_TEST := $(BUILD)/tests/trace_test
$(TRACE_TEST): $(call objs,tests/common) $(TOOLS_LIB)
	$(call link,-lm)

sim: $(SIM_BIN)
all: $(SIM_BIN)

CFLAGS.tools/tracegen := -Iruntime/common
TRACEGEN_OBJ := $(call objs,tools/tracegen)
TRACEGEN_BIN := $(BUILD)/bin/mcrepl-tracegen
$(TRACEGEN_BIN): $(TRACEGEN_OBJ) $(BUILD)/obj/tools/sim/rng.o $(FLAGS_OBJ) \
		$(TOOLS_LIB) $(MCREPL_LINK)
	$(call link,-lm)

# The generated trace: a fixed seed, so its contents (and the figures
# measured on it) change only when the generator does.
SYNTH_TRACE := $(BUILD)/traces/synthetic.jsonl
$(SYNTH_TRACE): $(TRACEGEN_BIN)
	@mkdir -p $(@D)
	$(call quiet,GEN)$(TRACEGEN_BIN) --seed 1 > $@.tmp && mv $@.tmp $@

tracegen: $(TRACEGEN_BIN)
traces: $(SYNTH_TRACE)
all: $(TRACEGEN_BIN) $(SYNTH_TRACE)

check-sim: $(SIM_BIN) $(TRACE_TEST) $(RANDOM_TEST) $(POPGEN_TEST) \
		$(SYNTH_TRACE) $(TRACEGEN_BIN)
	$(Q)$(QUIET_TEST) $(TEST_LOGS)/trace.log $(TRACE_TEST)
	$(Q)$(QUIET_TEST) $(TEST_LOGS)/random.log $(RANDOM_TEST)
	$(Q)$(QUIET_TEST) $(TEST_LOGS)/popgen.log $(POPGEN_TEST)
	$(Q)$(QUIET_TEST) $(TEST_LOGS)/sim.log sh tests/sim/run.sh $(SIM_BIN) \
		$(SYNTH_TRACE) $(TRACEGEN_BIN)
CHECK_FAST += check-sim

check-tracegen: $(TRACEGEN_BIN) $(SIM_BIN)
	$(Q)$(QUIET_TEST) $(TEST_LOGS)/tracegen.log sh tests/tracegen/run.sh \
		$(TRACEGEN_BIN) $(SIM_BIN)
CHECK_FAST += check-tracegen

.PHONY: sim check-sim tracegen traces check-tracegen

# The self-tuning grid (bench/sim-grid.sh): minutes of CPU, not in check.
# Both benches replay $(SYNTH_TRACE) (found beside the simulator's
# bin/; GRID_TRACE= / SHIFT_TRACE= name another).
bench-grid: $(SIM_BIN) $(SYNTH_TRACE)
	sh bench/sim-grid.sh $(SIM_BIN)
.PHONY: bench-grid

# The policy's hard cases (bench/sim-shift.sh): shifting hot sets, the trace at
# real speed, 90 %-full clusters; a few minutes, not in check.
bench-shift: $(SIM_BIN) $(SYNTH_TRACE)
	sh bench/sim-shift.sh $(SIM_BIN)
.PHONY: bench-shift
