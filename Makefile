# libmcrepl — one plain, non-recursive Makefile.
#   make [all]        library (.so with soname + .a), examples, benches
#   make check        deps check, unit tests, examples, install test
#   make bench        benchmarks (figures beside a same-run baseline)
#   make install      PREFIX=/usr/local DESTDIR=
#   make SANITIZER=address|undefined check   sanitizer build in build/<san>
#   make fuzz         libFuzzer runs of tests/fuzz/ (clang; mk/fuzz.mk)
# User CFLAGS / LDFLAGS / CPPFLAGS are honoured; WERROR= turns off -Werror.

# `make`, `make check` and `make demo` first make sure the build
# dependencies are there (scripts/deps.sh installs them as root on Debian,
# else names them), before any pkg-config query below runs.
ifneq ($(filter all check demo bench fuzz,$(or $(MAKECMDGOALS),all)),)
DEPS_STATUS := $(shell sh scripts/deps.sh 1>&2; echo $$?)
ifneq ($(DEPS_STATUS),0)
$(error missing build dependencies: see the lines above)
endif
endif

PREFIX ?= /usr/local
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
BINDIR ?= $(PREFIX)/bin
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
	-Wimplicit-fallthrough -Wno-missing-field-initializers
FEATURES := -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE
BASE_CFLAGS := -std=c11 $(WARN) $(WERROR) $(FEATURES) -pthread -MMD -MP \
	-Ilib/include -Ilib/util $(SANFLAGS)
ALL_CFLAGS = $(BASE_CFLAGS) $(CPPFLAGS) $(CFLAGS)
ALL_LDFLAGS = $(SANFLAGS) -pthread $(LDFLAGS)

# ---- library -------------------------------------------------------------
LIB_SRC := $(wildcard lib/*.c lib/util/*.c)
LIB_PIC := $(LIB_SRC:%.c=$(BUILD)/pic/%.o)
LIB_OBJ := $(LIB_SRC:%.c=$(BUILD)/obj/%.o)
SONAME := libmcrepl.so.$(V_MAJOR)
SHLIB := $(BUILD)/libmcrepl.so.$(VERSION)
STLIB := $(BUILD)/libmcrepl.a
PCFILE := $(BUILD)/libmcrepl.pc
HEADERS := $(wildcard lib/include/mcrepl/*.h)

$(BUILD)/pic/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -fPIC -fvisibility=hidden -c $< -o $@
$(BUILD)/obj/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -fvisibility=hidden -c $< -o $@

$(SHLIB): $(LIB_PIC) lib/libmcrepl.map Makefile
	$(CC) -shared -Wl,-soname,$(SONAME) -Wl,--version-script=lib/libmcrepl.map \
		$(LIB_PIC) -o $@ $(ALL_LDFLAGS) -lm
	ln -sf libmcrepl.so.$(VERSION) $(BUILD)/$(SONAME)
	ln -sf $(SONAME) $(BUILD)/libmcrepl.so
$(STLIB): $(LIB_OBJ)
	rm -f $@
	ar rcs $@ $^
# lib/util (hash map, hashing, strings) for the daemons: also inside libmcrepl,
# hidden, so a host can link the .so and this archive side by side.
UTIL_LIB := $(BUILD)/libmcrepl-util.a
$(UTIL_LIB): $(filter $(BUILD)/obj/lib/util/%,$(LIB_OBJ))
	rm -f $@
	ar rcs $@ $^
$(PCFILE): pkgconfig/libmcrepl.pc.in $(VERSION_H)
	@mkdir -p $(@D)
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' \
	    -e 's|@INCLUDEDIR@|$(INCLUDEDIR)|' -e 's|@VERSION@|$(VERSION)|' $< > $@

lib: $(SHLIB) $(STLIB) $(UTIL_LIB) $(PCFILE)

# ---- examples ------------------------------------------------------------
EXAMPLES := $(BUILD)/examples/embed_master $(BUILD)/examples/embed_cpp
# Examples include <mcrepl/mcrepl.h> as an installed user would.
$(BUILD)/examples/%: $(BUILD)/obj/examples/%.o $(STLIB)
	@mkdir -p $(@D)
	$(CC) $< $(STLIB) -o $@ $(ALL_LDFLAGS) -lm
$(BUILD)/examples/embed_cpp: examples/embed_cpp.cpp $(HEADERS) $(STLIB)
	@mkdir -p $(@D)
	$(CXX) -std=c++17 -Wall -Wextra -Wpedantic $(WERROR) -Ilib/include \
		$(SANFLAGS) $(CPPFLAGS) $(CXXFLAGS) $< $(STLIB) -o $@ $(ALL_LDFLAGS)

# ---- tests ---------------------------------------------------------------
CHECK_CFLAGS := $(shell $(PKG_CONFIG) --cflags check 2>/dev/null)
CHECK_LIBS := $(shell $(PKG_CONFIG) --libs check 2>/dev/null || echo -lcheck)
TEST_SRC := $(sort $(wildcard tests/check_*.c))
SUITES := $(patsubst tests/check_%.c,%,$(TEST_SRC))
TEST_OBJ := $(TEST_SRC:%.c=$(BUILD)/obj/%.o) $(BUILD)/obj/tests/main.o \
	$(BUILD)/obj/tests/testutil.o
TEST_BIN := $(BUILD)/tests/check_mcrepl

$(BUILD)/tests/suites.h: $(TEST_SRC) Makefile
	@mkdir -p $(@D)
	printf '%s\n' $(foreach s,$(SUITES),'MCREPL_SUITE($(s))') > $@.tmp
	mv $@.tmp $@
$(BUILD)/obj/tests/%.o: tests/%.c
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(CHECK_CFLAGS) -I$(BUILD)/tests -c $< -o $@
$(TEST_OBJ): $(BUILD)/tests/suites.h
# Tests link the static library; malloc is wrapped so tests can make it fail.
$(TEST_BIN): $(TEST_OBJ) $(STLIB)
	$(CC) $(TEST_OBJ) $(STLIB) -o $@ -Wl,--wrap=malloc -Wl,--wrap=calloc \
		-Wl,--wrap=realloc $(ALL_LDFLAGS) $(CHECK_LIBS) -lm

# ---- benches ---------------------------------------------------------------
BENCH_SRC := $(wildcard bench/bench_*.c)
BENCHES := $(BENCH_SRC:bench/%.c=$(BUILD)/bench/%)
$(BUILD)/bench/%: $(BUILD)/obj/bench/%.o $(STLIB)
	@mkdir -p $(@D)
	$(CC) $< $(STLIB) -o $@ $(ALL_LDFLAGS) -lm

all: lib $(EXAMPLES) $(BENCHES)

deps:
	@sh scripts/deps.sh

check: all $(TEST_BIN)
	$(TEST_BIN)
	$(BUILD)/examples/embed_master > /dev/null
	$(BUILD)/examples/embed_cpp > /dev/null
	@SANFLAGS="$(SANFLAGS)" sh scripts/install-test.sh "$(MAKE)" "$(BUILD)"
	@echo "check: all tests passed"

valgrind: all $(TEST_BIN)
	CK_FORK=no valgrind --error-exitcode=1 --leak-check=full \
		--errors-for-leak-kinds=definite,indirect $(TEST_BIN)

bench: all
	@for b in $(BENCHES); do echo "== $$b"; $$b || exit 1; done

demo: all
	MCREPL_BIN_DIR=$(abspath $(BUILD)/bin) $(BUILD)/bin/mcrepl-demo

install: lib
	install -d $(DESTDIR)$(LIBDIR) $(DESTDIR)$(INCLUDEDIR)/mcrepl $(DESTDIR)$(PKGCONFIGDIR)
	install -m 644 $(HEADERS) $(DESTDIR)$(INCLUDEDIR)/mcrepl/
	install -m 755 $(SHLIB) $(DESTDIR)$(LIBDIR)/
	ln -sf libmcrepl.so.$(VERSION) $(DESTDIR)$(LIBDIR)/$(SONAME)
	ln -sf $(SONAME) $(DESTDIR)$(LIBDIR)/libmcrepl.so
	install -m 644 $(STLIB) $(DESTDIR)$(LIBDIR)/
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' \
	    -e 's|@INCLUDEDIR@|$(INCLUDEDIR)|' -e 's|@VERSION@|$(VERSION)|' \
	    pkgconfig/libmcrepl.pc.in > $(DESTDIR)$(PKGCONFIGDIR)/libmcrepl.pc

uninstall:
	rm -rf $(DESTDIR)$(INCLUDEDIR)/mcrepl
	rm -f $(DESTDIR)$(LIBDIR)/libmcrepl.so* $(DESTDIR)$(LIBDIR)/libmcrepl.a
	rm -f $(DESTDIR)$(PKGCONFIGDIR)/libmcrepl.pc

format:
	clang-format -i lib/*.c lib/*.h lib/include/mcrepl/*.h tests/*.c \
		tests/fuzz/*.[ch] examples/*.c bench/*.c

clean:
	rm -rf build

.PHONY: all lib check bench demo install uninstall clean deps valgrind format
.DEFAULT_GOAL := all
-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
-include $(wildcard mk/*.mk)
