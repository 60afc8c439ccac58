# mcrepl-demo: README's main job (make demo, in the Makefile).
CFLAGS.tools/demo := $(TOOLS_CFLAGS)
DEMO_OBJ := $(call objs,tools/demo)
DEMO_BIN := $(BUILD)/bin/mcrepl-demo
$(DEMO_OBJ): | $(RPC_GEN_H)
$(DEMO_BIN): $(DEMO_OBJ) $(TOOLS_LIB) $(DAEMON_LIB) $(MCREPL_LINK)
	$(call link,$(DAEMON_LIBS) -lm)

all: $(DEMO_BIN)
