# The linearizability history test of the HA store (tests/history/,
# docs/HA.md "Checking it: the history test").
#
#   $(BUILD)/tests/history_selftest  the checker on hand-made histories
#   $(BUILD)/bin/mcrepl-history      the runner: etcd, two HA masters with
#                                    --auth_file, three workers, concurrent
#                                    clients, faults; then the check
#   make check-history-selftest      the self-test (hooked to check)
#   make check-history-short         the runner for 30 s (hooked to check)
#   make check-history               the runner, HISTORY_SECONDS of faults
#                                    (90); its last line is
#                                    history ops=... linearizable_keys=...
#                                    (not in check: see docs/HA.md); the
#                                    run's ops.log and daemon logs in
#                                    $(TEST_LOGS)/history/

CFLAGS.tests/history := $(TOOLS_CFLAGS)
# The runner enters network namespaces (setns: GNU).
$(BUILD)/obj/tests/history/netns.o: CPPFLAGS += -D_GNU_SOURCE
HISTORY_CHECKER_OBJ := $(patsubst %,$(BUILD)/obj/tests/history/%.o,\
	lincheck histprint payload)
HISTORY_SELFTEST := $(BUILD)/tests/history_selftest
HISTORY_BIN := $(BUILD)/bin/mcrepl-history
HISTORY_RUN_OBJ := $(patsubst %,$(BUILD)/obj/tests/history/%.o,\
	runner cluster clients faults netns)
$(HISTORY_RUN_OBJ): | $(RPC_GEN_H)

$(HISTORY_SELFTEST): $(BUILD)/obj/tests/history/selftest.o \
		$(HISTORY_CHECKER_OBJ)
	$(call link,)

$(HISTORY_BIN): $(HISTORY_RUN_OBJ) $(HISTORY_CHECKER_OBJ) $(TOOLS_LIB) \
		$(DAEMON_LIB) $(MCREPL_LINK)
	$(call link,$(DAEMON_LIBS) -lm)

check-history-selftest: $(HISTORY_SELFTEST)
	$(Q)$(QUIET_TEST) $(TEST_LOGS)/history-selftest.log $(HISTORY_SELFTEST)

HISTORY_SECONDS ?= 90
check-history: $(HISTORY_BIN) $(BUILD)/bin/mcrepl-master \
		$(BUILD)/bin/mcrepl-worker
	$(Q)rm -rf $(TEST_LOGS)/history && mkdir -p $(BUILD)/tmp \
		$(TEST_LOGS)/history
	$(Q)TMPDIR=$(abspath $(BUILD)/tmp) \
		MCREPL_TEST_LOG_DIR=$(abspath $(TEST_LOGS)/history) \
		$(HISTORY_BIN) --seconds $(HISTORY_SECONDS) $(HISTORY_ARGS)

CHECK_FAST += check-history-selftest

# The short form, in make check (docs/HA.md): 30 s of faults, every kind
# (partitions where it can), seed 1. Its last line and the run's logs in
# $(TEST_LOGS)/history-short/.
check-history-short: $(HISTORY_BIN) $(BUILD)/bin/mcrepl-master \
		$(BUILD)/bin/mcrepl-worker
	$(Q)rm -rf $(TEST_LOGS)/history-short && mkdir -p $(BUILD)/tmp \
		$(TEST_LOGS)/history-short
	$(Q)TMPDIR=$(abspath $(BUILD)/tmp) \
		MCREPL_TEST_LOG_DIR=$(abspath $(TEST_LOGS)/history-short) \
		$(QUIET_TEST) $(TEST_LOGS)/history-short.log \
		$(HISTORY_BIN) --seconds 30 --seed 1
CHECK_TIMED += check-history-short
CHECK_TIMED_DEPS += $(HISTORY_BIN)
all: $(HISTORY_SELFTEST)

.PHONY: check-history check-history-selftest check-history-short
