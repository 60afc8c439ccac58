# The fault suite with an invariant auditor (issue 13; docs/FAULTS.md).
# Included by the top Makefile (mk/*.mk); uses BUILD, ALL_CFLAGS,
# DAEMON_CFLAGS, RPC_LIB, RPC_GEN_H, STLIB, DAEMON_LIBS and ALL_LDFLAGS as
# mk/mbench.mk does. The daemons come from mk/master.mk and mk/worker.mk.
#
#   $(BUILD)/bin/fault_client  tests/faults/fault_client.c: step driver,
#                              case runner and auditor
#   make faults                the full matrix (< 10 min): a table, then
#                              faults=<n> violations=<v> wrong_bytes=<w>
#                              leaked_bytes=<l> stuck_keys=<s>
#   make check-faults-short    a short matrix (< 60 s); fails on any
#                              violation. Not hooked to `make check` yet.

FAULTS_BIN := $(BUILD)/bin/fault_client
FAULTS_OBJ := $(BUILD)/obj/tests/faults/fault_client.o

$(BUILD)/obj/tests/faults/%.o: tests/faults/%.c | $(RPC_GEN_H)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(DAEMON_CFLAGS) -c $< -o $@

$(FAULTS_BIN): $(FAULTS_OBJ) $(RPC_LIB) $(STLIB)
	@mkdir -p $(@D)
	$(CC) $(FAULTS_OBJ) $(RPC_LIB) $(STLIB) -o $@ $(ALL_LDFLAGS) \
		$(DAEMON_LIBS) -lm

FAULTS_DEPS := $(FAULTS_BIN) $(BUILD)/bin/mcrepl-master \
	$(BUILD)/bin/mcrepl-worker

faults: export MCREPL_BIN_DIR := $(abspath $(BUILD)/bin)
faults: $(FAULTS_DEPS)
	sh tests/faults/run.sh --full $(FAULTS_BIN)

check-faults-short: export MCREPL_BIN_DIR := $(abspath $(BUILD)/bin)
check-faults-short: $(FAULTS_DEPS)
	sh tests/faults/run.sh --short --strict $(FAULTS_BIN)

.PHONY: faults check-faults-short
