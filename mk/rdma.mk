# The RDMA copy engine (daemons/rdma/), built when pkg-config finds
# libibverbs and librdmacm; otherwise daemons/rdma_stub/ answers "not built".
# `make WITH_RDMA=no` forces the stub.
#
#   RDMA_OBJ     objects to link into anything that calls
#                copy_engine_rdma_create (the worker: mk/worker.mk; the
#                daemon test runner: added below)
#   RDMA_LIBS    libraries those links need (empty for the stub)
#   RDMA_CFLAGS  flags for code that includes daemons/rdma headers
#                (the engine itself, tests/daemons/check_rdma.c and its
#                fake device tests/daemons/rdma_fake.c); it
#                defines MCREPL_HAVE_RDMA when the real engine is built
#
# Objects build with the pattern rule of mk/daemons.mk. RDMA_OBJ holds plain
# objects, not an archive: list it once per link line, before $(RPC_LIB)
# (the engine uses netutil from it).

WITH_RDMA ?= auto
RDMA_PKGS := libibverbs librdmacm

ifeq ($(WITH_RDMA),no)
RDMA_FOUND :=
else
RDMA_FOUND := $(shell $(PKG_CONFIG) --exists $(RDMA_PKGS) 2>/dev/null && echo yes)
endif

ifeq ($(RDMA_FOUND),yes)
RDMA_SRC := $(sort $(wildcard daemons/rdma/*.c))
RDMA_LIBS := $(shell $(PKG_CONFIG) --libs $(RDMA_PKGS))
RDMA_CFLAGS := -Idaemons/rdma -DMCREPL_HAVE_RDMA \
	$(shell $(PKG_CONFIG) --cflags $(RDMA_PKGS))
else
RDMA_SRC := daemons/rdma_stub/copy_engine_rdma_stub.c
RDMA_LIBS :=
RDMA_CFLAGS :=
endif
RDMA_OBJ := $(RDMA_SRC:%.c=$(BUILD)/obj/%.o)

# Target-specific: only these objects see the RDMA flags.
$(RDMA_OBJ) $(BUILD)/obj/tests/daemons/check_rdma.o \
	$(BUILD)/obj/tests/daemons/rdma_fake.o: \
	DAEMON_CFLAGS += $(RDMA_CFLAGS)

# The daemon test runner (tests/daemons/check_rdma.c) links the engine.
# Target-specific, like mk/worker.mk, so the order in which mk/*.mk are
# read does not matter and mk/daemons.mk needs no edit.
$(BUILD)/tests/check_daemons: $(RDMA_OBJ)
$(BUILD)/tests/check_daemons: DAEMON_TEST_OBJ += $(RDMA_OBJ)
$(BUILD)/tests/check_daemons: DAEMON_LIBS += $(RDMA_LIBS)

rdma: $(RDMA_OBJ)
all: $(RDMA_OBJ)

# tests/rdma/rdma_bench.c: the engine's throughput on hardware, run by
# tests/rdma/hardware-test.sh beside ib_write_bw (real engine only).
ifeq ($(RDMA_FOUND),yes)
RDMA_BENCH := $(BUILD)/bin/mcrepl-rdma-bench
$(BUILD)/obj/tests/rdma/rdma_bench.o: tests/rdma/rdma_bench.c | $(RPC_GEN_H)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(DAEMON_CFLAGS) $(RDMA_CFLAGS) -c $< -o $@
$(RDMA_BENCH): $(BUILD)/obj/tests/rdma/rdma_bench.o $(RDMA_OBJ) $(RPC_LIB) \
		$(STLIB)
	@mkdir -p $(@D)
	$(CC) $^ -o $@ $(ALL_LDFLAGS) $(DAEMON_LIBS) $(RDMA_LIBS)
rdma: $(RDMA_BENCH)
all: $(RDMA_BENCH)
endif

.PHONY: rdma
