# The Check runners, one per tree; a suite is a tests/<tree>/check_<name>.c
# exporting make_<name>_suite(), listed in a generated header.
#
#   $(TEST_BIN)          $(BUILD)/tests/check_mcrepl: tests/*.c, the
#                        library's units, linked with libmcrepl.a with
#                        malloc wrapped so tests can make it fail, and
#                        with libcrypto (check_siphash's oracle)
#   $(DAEMON_TEST_BIN)   $(BUILD)/tests/check_daemons: tests/daemons/*.c
#                        (other files than check_*.c are support code),
#                        linked with the master's archive, the RDMA engine,
#                        the tools' archive (process harness), the
#                        worker's flag checks and the daemon archive;
#                        they start the real daemons
#   make check-unit      runs $(TEST_BIN) and the examples
#   make check-daemons   runs $(DAEMON_TEST_BIN) (both hooked to check)
#   make check-stress    the timing-sensitive suites with every core busy
#   make valgrind        both runners under valgrind, one after the other

CHECK_CFLAGS := $(shell $(PKG_CONFIG) --cflags check 2>/dev/null)
CHECK_LIBS := $(shell $(PKG_CONFIG) --libs check 2>/dev/null || echo -lcheck)

# $(call suites_h,header,check_*.c files): MCREPL_SUITE(name) per suite.
suites_h = $(call quiet,GEN)mkdir -p $(@D) && \
	printf '%s\n' $(foreach s,$(patsubst check_%.c,%,$(notdir $(2))),\
	'MCREPL_SUITE($(s))') > $@.tmp && mv $@.tmp $@

# ---- library units -----------------------------------------------------------
TEST_SRC := $(sort $(wildcard tests/check_*.c))
TEST_OBJ := $(call objs,tests)
TEST_BIN := $(BUILD)/tests/check_mcrepl
CFLAGS.tests := $(CHECK_CFLAGS) -I$(BUILD)/tests -Ilib

$(BUILD)/tests/suites.h: $(TEST_SRC) mk/tests.mk
	$(call suites_h,$@,$(TEST_SRC))
$(TEST_OBJ): | $(BUILD)/tests/suites.h
# The unit tests fail allocations on purpose (tests/testutil.c).
TEST_WRAP := -Wl,--wrap=malloc -Wl,--wrap=calloc -Wl,--wrap=realloc
$(TEST_BIN): $(TEST_OBJ) $(STLIB)
	$(call link,$(TEST_WRAP) $(CHECK_LIBS) -lcrypto -lm)

check-unit: $(TEST_BIN) $(EXAMPLES)
	$(Q)$(TEST_BIN)
	$(Q)$(BUILD)/examples/embed_master > /dev/null
	$(Q)$(BUILD)/examples/embed_cpp > /dev/null

# ---- daemons -----------------------------------------------------------------
DAEMON_TEST_SRC := $(sort $(wildcard tests/daemons/check_*.c))
DAEMON_TEST_OBJ := $(call objs,tests/daemons)
DAEMON_TEST_BIN := $(BUILD)/tests/check_daemons
DAEMON_SUITES_H := $(BUILD)/tests/daemons/daemon_suites.h
# Every source there sees testlog.h first: its START_TEST names the test's
# log directory.
CFLAGS.tests/daemons := $(TOOLS_CFLAGS) -Idaemons/master $(RDMA_CFLAGS) \
	$(CHECK_CFLAGS) -I$(BUILD)/tests/daemons \
	-include tests/daemons/testlog.h

$(DAEMON_SUITES_H): $(DAEMON_TEST_SRC) mk/tests.mk
	$(call suites_h,$@,$(DAEMON_TEST_SRC))
$(DAEMON_TEST_OBJ): tests/daemons/testlog.h | $(DAEMON_SUITES_H) $(RPC_GEN_H)
WORKER_FLAGS_OBJ := $(BUILD)/obj/daemons/worker/flags.o
$(DAEMON_TEST_BIN): $(DAEMON_TEST_OBJ) $(RDMA_OBJ) $(WORKER_FLAGS_OBJ) \
		$(MASTER_LIB) $(TOOLS_LIB) $(DAEMON_LIB) $(MCREPL_LINK)
	$(call link,$(RDMA_LIBS) $(DAEMON_LIBS) $(CHECK_LIBS) -lm)

# The integration tests start the real binaries.
DAEMON_TEST_DEPS := $(DAEMON_TEST_BIN) $(MASTER_BIN) $(WORKER_BIN) $(CLI_BIN) \
	$(DEMO_BIN)
# Each test's daemons and its own stderr go to
# $(TEST_LOGS)/daemons/<suite>/<test>/ (tests/daemons/testlog.h; a failed
# test's directory and last lines are printed), the runner's stderr to
# $(TEST_LOGS)/check_daemons.log; Check's report stays on the console.
# MCREPL_TEST_TIMEOUT_SCALE=N stretches every wait's bound and Check's
# timeouts (tests/daemons/wait.h).
# Their temporary directories (auth files, certificates, etcd data) go to
# $(TEST_TMP): a test that fails or is killed leaves them there, not in
# /tmp, and the next run starts clean.
TEST_TMP := $(BUILD)/tmp/daemons
check-daemons: $(DAEMON_TEST_DEPS)
	$(Q)mkdir -p $(TEST_LOGS) && rm -rf $(TEST_LOGS)/mcrepl-*.log \
		$(TEST_LOGS)/check_daemons.log $(TEST_LOGS)/daemons
	$(Q)rm -rf $(TEST_TMP) && mkdir -p $(TEST_TMP)
	$(Q)TMPDIR=$(abspath $(TEST_TMP)) \
		MCREPL_TEST_LOG_DIR=$(abspath $(TEST_LOGS)) $(DAEMON_TEST_BIN) || \
		{ echo "each test's logs: $(TEST_LOGS)/daemons/<suite>/<test>/"; \
		exit 1; }
	$(Q)rm -rf $(TEST_TMP)

CHECK_FAST += check-unit
CHECK_TIMED += check-daemons
CHECK_TIMED_DEPS += $(DAEMON_TEST_DEPS)

VALGRIND := CK_FORK=no valgrind --error-exitcode=1 --leak-check=full \
	--errors-for-leak-kinds=definite,indirect
# One runner after the other: the daemon tests are timing-sensitive.
valgrind: valgrind-daemons $(TEST_BIN)
	$(VALGRIND) $(TEST_BIN)
valgrind-daemons: $(DAEMON_TEST_DEPS)
	$(VALGRIND) $(DAEMON_TEST_BIN)

.PHONY: check-unit check-daemons valgrind-daemons

# ---- the timing-sensitive suites under load ----------------------------------
# make check-stress [STRESS_ROUNDS=3]: the CHECK_TIMED suites, STRESS_ROUNDS
# times, with one busy loop per CPU (tests/common/stress-check.sh); it ends
# "check-stress rounds=<r> passed=<p>". Everything is built first, before
# the loops start. .ci/run runs one round.
STRESS_ROUNDS ?= 3
check-stress:
	$(Q)$(MAKE) --no-print-directory -s $(CHECK_TIMED_DEPS)
	$(Q)MAKEFLAGS="$(filter-out -j% --jobserver%,$(MAKEFLAGS))" \
		sh tests/common/stress-check.sh "$(STRESS_ROUNDS)" $(TEST_LOGS) \
		$(MAKE) --no-print-directory -j1 -k $(CHECK_TIMED)
.PHONY: check-stress
