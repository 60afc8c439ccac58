# mcrepl-bench: hot-spot relief measured on real daemons (docs/BENCH.md).
#
#   $(BUILD)/bin/mcrepl-bench   tools/bench/*.c with the tools' shared
#                               code, $(TOOLS_LIB) (built by `all`)
#   make check-mbench           tests/mbench/run.sh against it and
#                               mcrepl-sim (about a minute; hooked to check)

CFLAGS.tools/bench := $(TOOLS_CFLAGS)
MBENCH_OBJ := $(call objs,tools/bench)
MBENCH_BIN := $(BUILD)/bin/mcrepl-bench
$(MBENCH_OBJ): | $(RPC_GEN_H)

$(call program,$(MBENCH_BIN),$(MBENCH_OBJ) $(TOOLS_LIB) $(DAEMON_LIB) \
	$(MCREPL_LINK),$(DAEMON_LIBS) -lm)

mbench: $(MBENCH_BIN)

# The daemons' stderr: $(TEST_LOGS)/mbench/<case>.log.
# mcrepl-sim: the rankings the bench draws must be the simulator's (its
# path spelled out: mk/sim.mk, which names it SIM_BIN, comes later).
MBENCH_SIM := $(BUILD)/bin/mcrepl-sim
check-mbench: $(MBENCH_BIN) $(MASTER_BIN) $(WORKER_BIN) $(MBENCH_SIM)
	$(Q)MCREPL_TEST_LOG_DIR=$(abspath $(TEST_LOGS)) $(QUIET_TEST) \
		$(TEST_LOGS)/mbench.log sh tests/mbench/run.sh $(MBENCH_BIN) \
		$(MBENCH_SIM)
CHECK_TIMED += check-mbench
CHECK_TIMED_DEPS += $(MBENCH_BIN) $(MASTER_BIN) $(WORKER_BIN) $(MBENCH_SIM)

.PHONY: mbench check-mbench
