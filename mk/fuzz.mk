# Fuzz targets: tests/fuzz/fuzz_<name>.c, each one LLVMFuzzerTestOneInput,
# with a seed corpus in tests/fuzz/corpus/<name>/. Included by the top
# Makefile after mk/daemons.mk (RPC_LIB, RPC_GEN_C, RPC_GEN_H,
# DAEMON_CFLAGS, DAEMON_LIBS).
#
#   make check-fuzz   (hooked to check) links each target with
#                     tests/fuzz/driver.c using $(CC) and the build's flags
#                     (so SANITIZER=address replays under ASan+UBSan) and
#                     replays its corpus once: seconds, no libFuzzer
#   make fuzz         builds each target with $(FUZZ_CC) -fsanitize=fuzzer,
#                     address,undefined into $(BUILD)/fuzz/ and runs it for
#                     FUZZ_SECONDS (60) on a copy of its corpus in
#                     $(BUILD)/fuzz/corpus/<name>/ (new inputs stay there;
#                     crashes are written as $(BUILD)/fuzz/crash-<name>-*);
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

# What each target links besides its own file, the RPC archive and
# libmcrepl: the master without its main(), or the trace reader.
FUZZ_MASTER_SRC := $(filter-out daemons/master/main.c,\
	$(sort $(wildcard daemons/master/*.c)))
FUZZ_TRACE_SRC := $(sort $(wildcard examples/common/*.c))
FUZZ_SRC_master := $(FUZZ_MASTER_SRC)
FUZZ_SRC_jsonl := $(FUZZ_TRACE_SRC)
FUZZ_EXTRA = $(patsubst %.c,$(1)/%.o,$(FUZZ_SRC_$(2)))
FUZZ_LINK = $(RPC_LIB) $(STLIB) $(ALL_LDFLAGS) $(DAEMON_LIBS) -lm

# ---- corpus replay (make check) --------------------------------------------
FUZZ_REPLAY := $(FUZZ_NAMES:%=$(BUILD)/tests/fuzz/fuzz_%)

$(BUILD)/obj/tests/fuzz/%.o: tests/fuzz/%.c | $(RPC_GEN_H)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(DAEMON_CFLAGS) -Idaemons/master -c $< -o $@

.SECONDEXPANSION:
$(BUILD)/tests/fuzz/fuzz_%: $(BUILD)/obj/tests/fuzz/fuzz_%.o \
		$(BUILD)/obj/tests/fuzz/driver.o \
		$$(call FUZZ_EXTRA,$(BUILD)/obj,$$*) \
		$(RPC_LIB) $(STLIB)
	@mkdir -p $(@D)
	$(CC) $(filter %.o,$^) -o $@ $(FUZZ_LINK)

check-fuzz: $(FUZZ_REPLAY)
	@for n in $(FUZZ_NAMES); do \
		$(BUILD)/tests/fuzz/fuzz_$$n tests/fuzz/corpus/$$n || exit 1; \
	done

check: check-fuzz

# ---- libFuzzer (make fuzz) -------------------------------------------------
FUZZ_DIR := $(BUILD)/fuzz
FUZZ_SAN := -fsanitize=address,undefined -fno-sanitize-recover=all \
	-fno-omit-frame-pointer
FUZZ_CFLAGS := -std=c11 $(WARN) $(FEATURES) -pthread -g -O1 -Ilib/include \
	-Ilib $(FUZZ_SAN) -fsanitize=fuzzer-no-link $(DAEMON_CFLAGS) \
	-Idaemons/master
FUZZ_LIB_SRC := $(LIB_SRC)
FUZZ_RPC_SRC := $(RPC_SRC)
FUZZ_LIBS := $(FUZZ_DIR)/librpc.a $(FUZZ_DIR)/libmcrepl.a

$(FUZZ_DIR)/obj/%.o: %.c | $(RPC_GEN_H)
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -c $< -o $@
$(FUZZ_DIR)/obj/gen/mcrepl.pb-c.o: $(RPC_GEN_C) $(RPC_GEN_H)
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -Wno-cast-qual -c $< -o $@
$(FUZZ_DIR)/libmcrepl.a: $(FUZZ_LIB_SRC:%.c=$(FUZZ_DIR)/obj/%.o)
	rm -f $@
	ar rcs $@ $^
$(FUZZ_DIR)/librpc.a: $(FUZZ_DIR)/obj/gen/mcrepl.pb-c.o \
		$(FUZZ_RPC_SRC:%.c=$(FUZZ_DIR)/obj/%.o)
	rm -f $@
	ar rcs $@ $^

$(FUZZ_DIR)/fuzz_%: $(FUZZ_DIR)/obj/tests/fuzz/fuzz_%.o \
		$$(call FUZZ_EXTRA,$(FUZZ_DIR)/obj,$$*) \
		$(FUZZ_LIBS)
	$(FUZZ_CC) -fsanitize=fuzzer $(FUZZ_SAN) $(filter %.o,$^) \
		$(FUZZ_LIBS) -o $@ -pthread $(DAEMON_LIBS) -lm

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
	$(MAKE) --no-print-directory fuzz-run

fuzz-run: $(FUZZ_TARGETS:%=$(FUZZ_DIR)/fuzz_%)
	@for n in $(FUZZ_TARGETS); do \
		rm -rf $(FUZZ_DIR)/corpus/$$n; \
		mkdir -p $(FUZZ_DIR)/corpus; \
		cp -r tests/fuzz/corpus/$$n $(FUZZ_DIR)/corpus/$$n || exit 1; \
		echo "== fuzz_$$n: $(FUZZ_SECONDS) s"; \
		$(FUZZ_DIR)/fuzz_$$n -max_total_time=$(FUZZ_SECONDS) \
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
