# The fault suite with an invariant auditor (docs/FAULTS.md).
# Built like mcrepl-bench (mk/mbench.mk); the daemons come from
# mk/master.mk and mk/worker.mk.
#
#   $(BUILD)/bin/fault_client  tests/faults/fault_client.c: step driver,
#                              case runner and auditor
#   make faults                the full matrix (< 10 min): a table, then
#                              faults=<n> violations=<v> wrong_bytes=<w>
#                              leaked_bytes=<l> stuck_keys=<s>
#   make check-faults-short    a short matrix (< 60 s); fails on any
#                              violation (hooked to check)

CFLAGS.tests/faults := $(TOOLS_CFLAGS)
FAULTS_BIN := $(BUILD)/bin/fault_client
FAULTS_OBJ := $(call objs,tests/faults)
$(FAULTS_OBJ): | $(RPC_GEN_H)

$(FAULTS_BIN): $(FAULTS_OBJ) $(TOOLS_LIB) $(DAEMON_LIB) $(MCREPL_LINK)
	$(call link,$(DAEMON_LIBS) -lm)

FAULTS_DEPS := $(FAULTS_BIN) $(BUILD)/bin/mcrepl-master \
	$(BUILD)/bin/mcrepl-worker

faults: $(FAULTS_DEPS)
	$(Q)sh tests/faults/run.sh --full $(FAULTS_BIN)

check-faults-short: $(FAULTS_DEPS)
	$(Q)$(QUIET_TEST) $(TEST_LOGS)/faults.log sh tests/faults/run.sh \
		--short --strict $(FAULTS_BIN)

CHECK_TIMED += check-faults-short
CHECK_TIMED_DEPS += $(FAULTS_DEPS)

.PHONY: faults check-faults-short
