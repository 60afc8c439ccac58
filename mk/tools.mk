# The tools (tools/): what they share and the cli. mcrepl-sim, mcrepl-bench
# and mcrepl-demo are in mk/sim.mk, mk/mbench.mk and mk/demo.mk.
#
#   $(TOOLS_LIB)     $(BUILD)/libmcrepl-tools.a: tools/common/*.c, what
#                    the tools share (trace reader, Zipf sampler, the
#                    shifting workload's ranking redraw and per-phase
#                    figures, process harness that starts real daemons);
#                    an archive, so a tool that never starts a daemon
#                    (mcrepl-sim) pulls no RPC code. Link it before
#                    $(DAEMON_LIB).
#   $(CLI_BIN)       $(BUILD)/bin/mcrepl-cli, tools/cli/*.c


TOOLS_CFLAGS := $(DAEMON_CFLAGS) -Itools/common
CFLAGS.tools/common := $(TOOLS_CFLAGS)
TOOLS_LIB := $(BUILD)/libmcrepl-tools.a
$(TOOLS_LIB): $(call objs,tools/common)
	$(archive)

CFLAGS.tools/cli := $(TOOLS_CFLAGS)
CLI_OBJ := $(call objs,tools/cli)
CLI_BIN := $(BUILD)/bin/mcrepl-cli
$(CLI_BIN): $(CLI_OBJ) $(DAEMON_LIB) $(MCREPL_LINK)
	$(call link,$(DAEMON_LIBS) -lm)

$(call objs,tools/common tools/cli): | $(RPC_GEN_H)

all: $(TOOLS_LIB) $(CLI_BIN)
worker: $(CLI_BIN)
