# mcrepl-master: daemons/master/*.c linked with the RPC layer and libmcrepl.
MASTER_SRC := $(sort $(wildcard daemons/master/*.c))
MASTER_OBJ := $(MASTER_SRC:%.c=$(BUILD)/obj/%.o)
MASTER_BIN := $(BUILD)/bin/mcrepl-master

$(MASTER_BIN): $(MASTER_OBJ) $(RPC_LIB) $(STLIB)
	@mkdir -p $(@D)
	$(CC) $(MASTER_OBJ) $(RPC_LIB) $(STLIB) -o $@ $(ALL_LDFLAGS) \
		$(DAEMON_LIBS) -lm

all: $(MASTER_BIN)

# Integration tests start the real daemons from $(BUILD)/bin.
check-daemons valgrind-daemons: $(MASTER_BIN)
check-daemons valgrind-daemons: export MCREPL_BIN_DIR := $(abspath $(BUILD)/bin)
