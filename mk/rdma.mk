# The RDMA copy engine (runtime/rdma/), built when pkg-config finds
# libibverbs and librdmacm; otherwise runtime/rdma_stub/ answers "not built".
# `make WITH_RDMA=no` forces the stub.
#
#   RDMA_OBJ     objects to link into anything that calls
#                copy_engine_rdma_create (the worker, bench_copy, the
#                daemon test runner); plain objects, not an archive: list
#                them once per link line, before $(DAEMON_LIB) (the engine
#                uses netutil and the copy engine interface from it)
#                (runtime/rdma/rdma_create.c holds copy_engine_rdma_create
#                over the real verbs; the test build of the worker,
#                mk/worker.mk, links the rest with the fake fabric's)
#   RDMA_LIBS    libraries those links need (empty for the stub)
#   RDMA_CFLAGS  flags for code that includes runtime/rdma headers (the
#                engine itself and tests/daemons/, mk/tests.mk); it defines
#                MCREPL_HAVE_RDMA when the real engine is built

WITH_RDMA ?= auto
RDMA_PKGS := libibverbs librdmacm

ifeq ($(WITH_RDMA),no)
RDMA_FOUND :=
else
RDMA_FOUND := $(shell $(PKG_CONFIG) --exists $(RDMA_PKGS) 2>/dev/null && echo yes)
endif

ifeq ($(RDMA_FOUND),yes)
RDMA_DIR := runtime/rdma
RDMA_LIBS := $(shell $(PKG_CONFIG) --libs $(RDMA_PKGS))
RDMA_CFLAGS := -Iruntime/rdma -DMCREPL_HAVE_RDMA \
	$(shell $(PKG_CONFIG) --cflags $(RDMA_PKGS))
else
RDMA_DIR := runtime/rdma_stub
RDMA_LIBS :=
RDMA_CFLAGS :=
endif
RDMA_OBJ := $(call objs,$(RDMA_DIR))

CFLAGS.runtime/rdma := $(DAEMON_CFLAGS) $(RDMA_CFLAGS)
CFLAGS.runtime/rdma_stub := $(DAEMON_CFLAGS)
$(RDMA_OBJ): | $(RPC_GEN_H)

rdma: $(RDMA_OBJ)
all: $(RDMA_OBJ)

# tests/rdma/rdma_bench.c: the engine's throughput on hardware, run by
# tests/rdma/hardware-test.sh beside ib_write_bw (real engine only).
ifeq ($(RDMA_FOUND),yes)
RDMA_BENCH := $(BUILD)/bin/mcrepl-rdma-bench
CFLAGS.tests/rdma := $(DAEMON_CFLAGS) $(RDMA_CFLAGS)
RDMA_BENCH_OBJ := $(call objs,tests/rdma)
$(RDMA_BENCH_OBJ): | $(RPC_GEN_H)
$(RDMA_BENCH): $(RDMA_BENCH_OBJ) $(RDMA_OBJ) $(DAEMON_LIB) $(MCREPL_LINK)
	$(call link,$(DAEMON_LIBS) $(RDMA_LIBS) -lm)
rdma: $(RDMA_BENCH)
all: $(RDMA_BENCH)
endif

.PHONY: rdma
