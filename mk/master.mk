# mcrepl-master: daemons/master/*.c (with its segment allocator, alloc.c)
# linked with $(DAEMON_LIB) and libmcrepl.
#
#   $(MASTER_LIB)   $(BUILD)/libmcrepl-master.a: every daemons/master/*.c
#                   but main.c, for the fuzz target and the daemon tests
#                   (check_alloc) to link what they use
#   $(MASTER_BIN)   $(BUILD)/bin/mcrepl-master

CFLAGS.daemons/master := $(DAEMON_CFLAGS)
MASTER_OBJ := $(call objs,daemons/master)
MASTER_MAIN := $(BUILD)/obj/daemons/master/main.o
MASTER_LIB := $(BUILD)/libmcrepl-master.a
MASTER_BIN := $(BUILD)/bin/mcrepl-master
$(MASTER_OBJ): | $(RPC_GEN_H)

$(MASTER_LIB): $(filter-out $(MASTER_MAIN),$(MASTER_OBJ))
	$(archive)

$(MASTER_BIN): $(MASTER_MAIN) $(MASTER_LIB) $(DAEMON_LIB) $(MCREPL_LINK)
	$(call link,$(DAEMON_LIBS) -lm)

all: $(MASTER_BIN)
