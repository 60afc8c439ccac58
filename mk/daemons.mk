# Daemons: the RPC layer shared by mcrepl-master, mcrepl-worker and the tools.
# Included by the top Makefile (which defines BUILD, ALL_CFLAGS, ALL_LDFLAGS,
# CHECK_CFLAGS, CHECK_LIBS, STLIB and PKG_CONFIG).
#
#   $(BUILD)/gen/mcrepl.pb-c.{c,h}    generated from proto/mcrepl.proto
#   $(BUILD)/libmcrepl-rpc.a          generated code + daemons/common/*.c
#   $(BUILD)/tests/check_daemons      tests/daemons/check_*.c + main.c
#   make check-daemons                runs the daemon test runner
#
# Daemon code compiles with $(ALL_CFLAGS) $(DAEMON_CFLAGS) and links
# $(RPC_LIB) $(STLIB) $(DAEMON_LIBS); the pattern rule below builds any
# daemons/<dir>/<file>.c into $(BUILD)/obj/daemons/<dir>/<file>.o that way.
#
# protobuf-c 1.4's MCREPL__*__INIT macros cast away const from
# protobuf_c_empty_string, which -Wcast-qual reports at every expansion site
# (-isystem does not help for macros). Daemon code therefore initialises
# messages with the generated functions: mcrepl_rpc__exist_request__init(&req).
# The generated .c is built with the same flags plus -Wno-cast-qual only.

DAEMON_PKGS := libevent libprotobuf-c
DAEMON_PKG_CFLAGS := $(shell $(PKG_CONFIG) --cflags $(DAEMON_PKGS) 2>/dev/null)
DAEMON_LIBS := $(shell $(PKG_CONFIG) --libs $(DAEMON_PKGS) 2>/dev/null || \
	echo -levent -lprotobuf-c)
DAEMON_CFLAGS = -I$(BUILD)/gen -Idaemons/common $(DAEMON_PKG_CFLAGS)

RPC_GEN_C := $(BUILD)/gen/mcrepl.pb-c.c
RPC_GEN_H := $(BUILD)/gen/mcrepl.pb-c.h
RPC_GEN_OBJ := $(BUILD)/obj/gen/mcrepl.pb-c.o
RPC_SRC := $(sort $(wildcard daemons/common/*.c))
RPC_OBJ := $(RPC_SRC:%.c=$(BUILD)/obj/%.o)
RPC_LIB := $(BUILD)/libmcrepl-rpc.a

# A multi-target pattern rule: protoc-c runs once for both outputs.
$(BUILD)/gen/%.pb-c.c $(BUILD)/gen/%.pb-c.h: proto/%.proto
	@mkdir -p $(@D)
	protoc-c --proto_path=proto --c_out=$(@D) $<

$(RPC_GEN_OBJ): $(RPC_GEN_C) $(RPC_GEN_H)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(DAEMON_CFLAGS) -Wno-cast-qual -c $< -o $@

# Every daemon object waits for the generated header (order-only; -MMD
# records the real dependency once it has been built).
$(BUILD)/obj/daemons/%.o: daemons/%.c | $(RPC_GEN_H)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(DAEMON_CFLAGS) -c $< -o $@

$(RPC_LIB): $(RPC_GEN_OBJ) $(RPC_OBJ)
	rm -f $@
	ar rcs $@ $^

# ---- daemon tests ----------------------------------------------------------
DAEMON_TEST_SRC := $(sort $(wildcard tests/daemons/check_*.c))
DAEMON_SUITES := $(patsubst tests/daemons/check_%.c,%,$(DAEMON_TEST_SRC))
# Every other tests/daemons/*.c (main.c, harness.c, ...) is support code.
DAEMON_TEST_OBJ := $(patsubst %.c,$(BUILD)/obj/%.o,$(wildcard tests/daemons/*.c))
DAEMON_TEST_BIN := $(BUILD)/tests/check_daemons
DAEMON_SUITES_H := $(BUILD)/tests/daemons/daemon_suites.h

$(DAEMON_SUITES_H): $(DAEMON_TEST_SRC) mk/daemons.mk
	@mkdir -p $(@D)
	printf '%s\n' $(foreach s,$(DAEMON_SUITES),'MCREPL_SUITE($(s))') > $@.tmp
	mv $@.tmp $@

$(BUILD)/obj/tests/daemons/%.o: tests/daemons/%.c | $(RPC_GEN_H)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(DAEMON_CFLAGS) $(CHECK_CFLAGS) \
		-I$(BUILD)/tests/daemons -c $< -o $@
$(DAEMON_TEST_OBJ): $(DAEMON_SUITES_H)

$(DAEMON_TEST_BIN): $(DAEMON_TEST_OBJ) $(RPC_LIB) $(STLIB)
	@mkdir -p $(@D)
	$(CC) $(DAEMON_TEST_OBJ) $(RPC_LIB) $(STLIB) -o $@ $(ALL_LDFLAGS) \
		$(DAEMON_LIBS) $(CHECK_LIBS) -lm

rpc: $(RPC_LIB)

# Like the top Makefile's own runner, the test binary is built by check.
all: $(RPC_LIB)

check-daemons: $(DAEMON_TEST_BIN)
	$(DAEMON_TEST_BIN)

check: check-daemons
valgrind: valgrind-daemons

valgrind-daemons: $(DAEMON_TEST_BIN)
	CK_FORK=no valgrind --error-exitcode=1 --leak-check=full \
		--errors-for-leak-kinds=definite,indirect $(DAEMON_TEST_BIN)

.PHONY: rpc check-daemons valgrind-daemons
