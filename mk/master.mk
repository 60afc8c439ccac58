# mcrepl-master: daemons/master/*.c linked with the RPC layer and libmcrepl.
MASTER_SRC := $(sort $(wildcard daemons/master/*.c))
MASTER_OBJ := $(MASTER_SRC:%.c=$(BUILD)/obj/%.o)
MASTER_BIN := $(BUILD)/bin/mcrepl-master

$(MASTER_BIN): $(MASTER_OBJ) $(RPC_LIB) $(STLIB)
	@mkdir -p $(@D)
	$(CC) $(MASTER_OBJ) $(RPC_LIB) $(STLIB) -o $@ $(ALL_LDFLAGS) \
		$(DAEMON_LIBS) -lm

all: $(MASTER_BIN)
