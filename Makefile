# libmcrepl — one plain, non-recursive Makefile.
#   make [all]        library (.so with soname + .a), daemons, tools, benches
#   make check        deps check, unit and daemon tests, tools, install test
#   make bench        benchmarks (figures beside a same-run baseline)
#   make stress       the master under flood (mk/stress.mk; minutes)
#   make demo         a local master + 4 workers; a hot key gets replicas
#   make deps         check (as root on Debian: install) build dependencies
#   make install      PREFIX=/usr/local DESTDIR= (library, daemons, cli,
#                     man pages; mk/install.mk); make uninstall
#   make SANITIZER=address|undefined|thread check   build in build/<san>
#   make fuzz         libFuzzer runs of tests/fuzz/ (clang; mk/fuzz.mk)
#   make V=1          full command lines instead of one line per target
# User CFLAGS / LDFLAGS / CPPFLAGS are honoured; WERROR= turns off -Werror.
#
# Layout of the build: this file holds the configuration, the one compile
# rule and the top-level targets; mk/<part>.mk adds each part, included in
# the explicit order below (a fragment may use what an earlier one defines).
# Flags for a source directory are CFLAGS.<dir>, set by the fragment that
# owns the directory; a new .c file in a known directory needs no edit.

.DEFAULT_GOAL := all

# ---- set-up at target time ---------------------------------------------------
# all, check, demo, bench and fuzz first run scripts/deps.sh (installs the
# build dependencies as root on Debian, else names them), then re-invoke
# make for the real work, whose pkg-config queries now see the packages.
# Nothing runs while this file is parsed; `make -n check` runs nothing.
SETUP_GOALS := all check demo bench fuzz
ifeq ($(MCREPL_SETUP)$(filter $(SETUP_GOALS),$(or $(MAKECMDGOALS),all)),)
MCREPL_SETUP := skip
endif

ifeq ($(MCREPL_SETUP),)
$(or $(MAKECMDGOALS),all): setup
	@:
setup:
	@sh scripts/deps.sh
	+@$(MAKE) --no-print-directory MCREPL_SETUP=done $(MAKECMDGOALS)
.PHONY: setup $(or $(MAKECMDGOALS),all)
else

PREFIX ?= /usr/local
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
BINDIR ?= $(PREFIX)/bin
MANDIR ?= $(PREFIX)/share/man
DOCDIR ?= $(PREFIX)/share/doc/libmcrepl
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
DESTDIR ?=

CC ?= cc
CXX ?= c++
CFLAGS ?= -O2 -g
CXXFLAGS ?= -O2 -g
WERROR ?= -Werror
PKG_CONFIG ?= pkg-config

VERSION_H := lib/include/mcrepl/version.h
V_MAJOR := $(shell sed -n 's/^\#define MCREPL_VERSION_MAJOR \([0-9]*\)/\1/p' $(VERSION_H))
V_MINOR := $(shell sed -n 's/^\#define MCREPL_VERSION_MINOR \([0-9]*\)/\1/p' $(VERSION_H))
V_PATCH := $(shell sed -n 's/^\#define MCREPL_VERSION_PATCH \([0-9]*\)/\1/p' $(VERSION_H))
VERSION := $(V_MAJOR).$(V_MINOR).$(V_PATCH)

ifeq ($(SANITIZER),)
BUILD ?= build
SANFLAGS :=
else ifeq ($(SANITIZER),address)
BUILD ?= build/asan
SANFLAGS := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
else ifeq ($(SANITIZER),undefined)
BUILD ?= build/ubsan
SANFLAGS := -fsanitize=undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
else ifeq ($(SANITIZER),thread)
BUILD ?= build/tsan
SANFLAGS := -fsanitize=thread -fno-omit-frame-pointer
else
$(error SANITIZER must be address, undefined or thread)
endif

WARN := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
	-Wpointer-arith -Wtype-limits -Wwrite-strings -Wformat=2 -Wundef \
	-Wcast-qual -Wvla -Wold-style-definition -Wnull-dereference \
	-Wimplicit-fallthrough
FEATURES := -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE
# Everything sees the public headers and the tree root, where a shared
# module is named by its folder ("util/map.h"); more per directory.
BASE_CFLAGS := -std=c11 $(WARN) $(WERROR) $(FEATURES) -pthread -MMD -MP \
	-Ilib/include -I. $(SANFLAGS)
ALL_CFLAGS = $(BASE_CFLAGS) $(CPPFLAGS) $(CFLAGS)
ALL_LDFLAGS = $(SANFLAGS) -pthread $(LDFLAGS)

# Integration tests, benches and the demo start the daemons from here.
export MCREPL_BIN_DIR := $(abspath $(BUILD)/bin)

# make check prints one line per suite: a shell suite runs under
# $(QUIET_TEST) $(TEST_LOGS)/<suite>.log ... (its summary line, the full
# output in the log); the daemons the Check runner starts log to
# $(TEST_LOGS)/<program>.log.
TEST_LOGS := $(BUILD)/test-logs
QUIET_TEST := sh scripts/quiet-test.sh

# ---- quiet output ------------------------------------------------------------
# $(call quiet,TAG) prints "  TAG     target" unless V=1; recipes start with
# $(Q) so the command itself is shown only with V=1.
ifeq ($(V),1)
Q :=
quiet =
else
Q := @
quiet = @printf '  %-7s %s\n' '$(1)' '$@';
endif

# ---- the link rule ---------------------------------------------------------
# Every program links the same way: its prerequisites (objects first, then
# archives in link order) into $@, then the system libraries given:
#   $(BIN): $(OBJ) $(DAEMON_LIB) $(STLIB)
#   	$(call link,$(DAEMON_LIBS) -lm)
define link
@mkdir -p $(@D)
$(call quiet,LD)$(CC) $^ -o $@ $(ALL_LDFLAGS) $(1)
endef

# ---- the compile rule ------------------------------------------------------
# One recipe. An object gets the flags of its source directory,
# CFLAGS.<dir> (and CFLAGS.pic for position-independent library objects).
# Objects go to $(BUILD)/obj/<path>.o; generated sources in $(BUILD)/gen
# to $(BUILD)/obj/gen/.
srcdir = $(patsubst %/,%,$(dir $<))
COMPILE = $(call quiet,CC)$(CC) $(ALL_CFLAGS) $(CFLAGS.$(srcdir)) \
	$(CFLAGS.$(OBJKIND)) -c $< -o $@

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(@D)
	$(COMPILE)
$(BUILD)/pic/%.o: OBJKIND := pic
$(BUILD)/pic/%.o: %.c
	@mkdir -p $(@D)
	$(COMPILE)
$(BUILD)/obj/gen/%.o: $(BUILD)/gen/%.c
	@mkdir -p $(@D)
	$(COMPILE)

# Static archives: $(call archive) in a recipe whose prerequisites are the
# members.
archive = $(call quiet,AR)rm -f $@ && ar rcs $@ $(filter %.o,$^)

# $(call objs,dirs...): the object of every .c file in those directories.
objs = $(patsubst %.c,$(BUILD)/obj/%.o,$(sort $(wildcard $(addsuffix /*.c,$(1)))))

# ---- the parts, in order -----------------------------------------------------
include mk/program.mk
include mk/lib.mk
include mk/daemons.mk
include mk/rdma.mk
include mk/master.mk
include mk/worker.mk
include mk/examples.mk
include mk/tools.mk
include mk/demo.mk
include mk/mbench.mk
include mk/sim.mk
include mk/tests.mk
include mk/adapter.mk
include mk/rfc.mk
include mk/budgets.mk
include mk/fuzz.mk
include mk/netns.mk
include mk/docs.mk
include mk/bench.mk
include mk/faults.mk
include mk/install.mk
include mk/stress.mk
include mk/history.mk

# ---- top-level targets -------------------------------------------------------
deps:
	@sh scripts/deps.sh

# scripts/install-test.sh runs make install, serially. MAKE is read here,
# at parse time, so that `make -n check` does not run the script.
INSTALL_TEST_MAKE := $(MAKE)
# The suites register themselves in mk/*.mk: CHECK_FAST run in parallel
# under -j; CHECK_TIMED (real daemons on loopback and in network
# namespaces, the fault suite, the docs' commands: timing-sensitive) run
# after them one at a time whatever -j says, once everything they need
# is built in parallel.
check: $(CHECK_FAST) check-timed
check-timed: $(CHECK_TIMED_DEPS) $(CHECK_FAST)
	$(Q)MAKEFLAGS="$(filter-out -j% --jobserver%,$(MAKEFLAGS))" \
		$(MAKE) --no-print-directory -j1 $(CHECK_TIMED)
.PHONY: check-timed
check: all
	$(Q)MAKEFLAGS="$(filter-out -j% --jobserver%,$(MAKEFLAGS))" \
		SANFLAGS="$(SANFLAGS)" $(QUIET_TEST) $(TEST_LOGS)/install.log \
		sh scripts/install-test.sh "$(INSTALL_TEST_MAKE)" "$(BUILD)"
	@echo "check: all tests passed"

demo: all
	$(DEMO_BIN)
valgrind: all

# Every C source of the tree.
FORMAT_SRC = $(shell find lib daemons examples tools bench tests -name '*.[ch]' \
	-not -path '*/corpus/*')
format:
	clang-format -i $(FORMAT_SRC)

clean:
	rm -rf build

# No object, archive or generated file is an intermediate to delete.
.SECONDARY:
.PHONY: all lib check bench demo clean deps valgrind format
-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)

endif
