# mcrepl-worker: daemons/worker/*.c and the RDMA engine (mk/rdma.mk; the
# stub without libibverbs) linked with $(DAEMON_LIB) (whose data plane
# holds the worker's data server) and libmcrepl.

CFLAGS.daemons/worker := $(DAEMON_CFLAGS)
WORKER_OBJ := $(call objs,daemons/worker)
WORKER_BIN := $(BUILD)/bin/mcrepl-worker
$(WORKER_OBJ): | $(RPC_GEN_H)

$(WORKER_BIN): $(WORKER_OBJ) $(RDMA_OBJ) $(DAEMON_LIB) $(STLIB)
	@mkdir -p $(@D)
	$(call quiet,LD)$(CC) $(WORKER_OBJ) $(RDMA_OBJ) $(DAEMON_LIB) \
		$(STLIB) -o $@ $(ALL_LDFLAGS) $(RDMA_LIBS) $(DAEMON_LIBS) -lm

all: $(WORKER_BIN)
worker: $(WORKER_BIN)

.PHONY: worker
