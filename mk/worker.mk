# mcrepl-worker: daemons/worker/*.c and the RDMA engine (mk/rdma.mk; the
# stub without libibverbs) linked with $(DAEMON_LIB) (whose data plane
# holds the worker's data server) and libmcrepl.

CFLAGS.daemons/worker := $(DAEMON_CFLAGS)
WORKER_OBJ := $(call objs,daemons/worker)
WORKER_BIN := $(BUILD)/bin/mcrepl-worker
$(WORKER_OBJ): | $(RPC_GEN_H)

$(WORKER_BIN): $(WORKER_OBJ) $(RDMA_OBJ) $(DAEMON_LIB) $(MCREPL_LINK)
	$(call link,$(RDMA_LIBS) $(DAEMON_LIBS) -lm)

all: $(WORKER_BIN)
worker: $(WORKER_BIN)

.PHONY: worker

# The test build of the worker: the same objects and the real RDMA engine,
# its verbs calls going to the fake fabric between processes
# (tests/rdma/fabric/fabric_verbs.c, which provides copy_engine_rdma_create
# in place of runtime/rdma/rdma_create.c). For tests/daemons/check_rdma_fabric.c
# only; never installed.
ifeq ($(RDMA_FOUND),yes)
FAKE_WORKER_BIN := $(BUILD)/tests/mcrepl-worker-fakerdma
FAKEFAB_OBJ := $(call objs,tests/rdma/fabric)
CFLAGS.tests/rdma/fabric := $(DAEMON_CFLAGS) $(RDMA_CFLAGS)
$(FAKEFAB_OBJ): | $(RPC_GEN_H)
RDMA_ENGINE_OBJ := $(filter-out %/rdma_create.o %/rdma_verbs_real.o,$(RDMA_OBJ))
$(FAKE_WORKER_BIN): $(WORKER_OBJ) $(RDMA_ENGINE_OBJ) $(FAKEFAB_OBJ) \
		$(DAEMON_LIB) $(MCREPL_LINK)
	$(call link,$(RDMA_LIBS) $(DAEMON_LIBS) -lm)
check-daemons valgrind-daemons: $(FAKE_WORKER_BIN)
endif
