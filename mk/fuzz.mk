# Fuzz targets: tests/fuzz/fuzz_<name>.c, each one LLVMFuzzerTestOneInput,
# with a seed corpus in tests/fuzz/corpus/<name>/. A target links what it
# uses from the master's archive (fuzz_master), the tools' archive
# (fuzz_jsonl), the daemon archive and libmcrepl.
#
#   make check-fuzz   (hooked to check) links each target with
#                     tests/fuzz/driver.c using $(CC) and the build's flags
#                     (so SANITIZER=address replays under ASan+UBSan) and
#                     replays its corpus once: seconds, no libFuzzer
#   make fuzz         builds each target with $(FUZZ_CC) -fsanitize=fuzzer,
#                     address,undefined (a build of its own in $(FUZZ_DIR),
#                     build/fuzz, made by re-invoking make with
#                     BUILD=$(FUZZ_DIR) CC=$(FUZZ_CC)) and runs it for
#                     FUZZ_SECONDS (60) on a copy of its corpus in
#                     $(FUZZ_DIR)/corpus/<name>/ (new inputs stay there;
#                     crashes are written as $(FUZZ_DIR)/crash-<name>-*);
#                     skipped, saying so, when $(FUZZ_CC) lacks libFuzzer.
#                     FUZZ_TARGETS=<names> runs a subset.
#
# A crash found by `make fuzz` is minimised (fuzz_<name> -minimize_crash=1
# -runs=10000 CRASH) and copied into tests/fuzz/corpus/<name>/, so the
# replay keeps it fixed.

FUZZ_NAMES := $(sort $(patsubst tests/fuzz/fuzz_%.c,%,\
	$(wildcard tests/fuzz/fuzz_*.c)))
FUZZ_TARGETS ?= $(FUZZ_NAMES)
FUZZ_SECONDS ?= 60
FUZZ_CC ?= clang
FUZZ_DIR ?= build/fuzz

CFLAGS.tests/fuzz := $(TOOLS_CFLAGS) -Idaemons/master
$(call objs,tests/fuzz): | $(RPC_GEN_H)
FUZZ_ARCHIVES := $(MASTER_LIB) $(TOOLS_LIB) $(DAEMON_LIB) $(MCREPL_LINK)
FUZZ_LINK = $(FUZZ_ARCHIVES) $(ALL_LDFLAGS) $(DAEMON_LIBS) -lm

# ---- corpus replay (make check) --------------------------------------------
FUZZ_REPLAY := $(FUZZ_NAMES:%=$(BUILD)/tests/fuzz/fuzz_%)

$(BUILD)/tests/fuzz/fuzz_%: $(BUILD)/obj/tests/fuzz/fuzz_%.o \
		$(BUILD)/obj/tests/fuzz/driver.o $(FUZZ_ARCHIVES)
	@mkdir -p $(@D)
	$(call quiet,LD)$(CC) $(filter %.o,$^) -o $@ $(FUZZ_LINK)

# What the targets print (the in-process master logs refusals) goes to
# $(TEST_LOGS)/fuzz.log; the console gets one line.
check-fuzz: $(FUZZ_REPLAY)
	$(Q)$(QUIET_TEST) $(TEST_LOGS)/fuzz.log sh -c 'for n in $(FUZZ_NAMES); do \
		$(BUILD)/tests/fuzz/fuzz_$$n tests/fuzz/corpus/$$n || exit 1; \
	done; echo "fuzz: corpora of $(FUZZ_NAMES) replayed"'

CHECK_FAST += check-fuzz

# ---- libFuzzer (make fuzz) -------------------------------------------------
# fuzz-run is made by the inner make, where BUILD is $(FUZZ_DIR).
FUZZ_SAN := -fsanitize=address,undefined -fno-sanitize-recover=all \
	-fno-omit-frame-pointer

$(BUILD)/libfuzzer/fuzz_%: $(BUILD)/obj/tests/fuzz/fuzz_%.o $(FUZZ_ARCHIVES)
	@mkdir -p $(@D)
	$(call quiet,LD)$(CC) -fsanitize=fuzzer $(filter %.o,$^) -o $@ \
		$(FUZZ_LINK)

# The probe: can $(FUZZ_CC) link a libFuzzer target at all?
FUZZ_PROBE = printf 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n)\
	{ (void)d; (void)n; return 0; }\n' | $(FUZZ_CC) -fsanitize=fuzzer \
	-x c - -o $(FUZZ_DIR)/probe >/dev/null 2>&1

fuzz:
	@mkdir -p $(FUZZ_DIR)
	@if ! $(FUZZ_PROBE); then \
		echo "fuzz: skipped: $(FUZZ_CC) cannot link -fsanitize=fuzzer" \
		     "(libFuzzer missing; set FUZZ_CC=clang-NN)"; \
		exit 0; \
	fi; \
	$(MAKE) --no-print-directory BUILD=$(FUZZ_DIR) FUZZ_DIR=$(FUZZ_DIR) \
		CC=$(FUZZ_CC) CFLAGS="-g -O1" WERROR= SANITIZER= \
		SANFLAGS="$(FUZZ_SAN) -fsanitize=fuzzer-no-link" fuzz-run

fuzz-run: $(FUZZ_TARGETS:%=$(BUILD)/libfuzzer/fuzz_%)
	@for n in $(FUZZ_TARGETS); do \
		rm -rf $(FUZZ_DIR)/corpus/$$n; \
		mkdir -p $(FUZZ_DIR)/corpus; \
		cp -r tests/fuzz/corpus/$$n $(FUZZ_DIR)/corpus/$$n || exit 1; \
		echo "== fuzz_$$n: $(FUZZ_SECONDS) s"; \
		$(BUILD)/libfuzzer/fuzz_$$n -max_total_time=$(FUZZ_SECONDS) \
			-print_final_stats=1 \
			-artifact_prefix=$(FUZZ_DIR)/crash-$$n- \
			$(FUZZ_DIR)/corpus/$$n 2>$(FUZZ_DIR)/fuzz_$$n.log; \
		rc=$$?; \
		grep -E '^#[0-9]+[[:space:]]+DONE|^stat::number_of_executed_units|ERROR|SUMMARY' \
			$(FUZZ_DIR)/fuzz_$$n.log; \
		if [ $$rc -ne 0 ]; then \
			echo "fuzz_$$n: FAILED (log $(FUZZ_DIR)/fuzz_$$n.log)"; \
			exit 1; \
		fi; \
	done
	@echo "fuzz: $(FUZZ_TARGETS): no crash in $(FUZZ_SECONDS) s each"

.PHONY: check-fuzz fuzz fuzz-run
