# Examples and the tools' shared code.
#
#   $(EXAMPLES)      embed_master (C) and embed_cpp (C++): hosts of the
#                    library, including <mcrepl/mcrepl.h> as an installed
#                    user would, linked with libmcrepl.a only
#   $(TOOLS_LIB)     $(BUILD)/libmcrepl-tools.a: examples/common/*.c, what
#                    the tools share (trace reader, Zipf sampler, the
#                    shifting workload's ranking redraw and per-phase
#                    figures, process harness that starts real daemons);
#                    an archive, so a tool that never starts a daemon
#                    (mcrepl-sim) pulls no RPC code. Link it before
#                    $(DAEMON_LIB).
#   $(CLI_BIN)       $(BUILD)/bin/mcrepl-cli, examples/cli/*.c

EXAMPLES := $(BUILD)/examples/embed_master $(BUILD)/examples/embed_cpp

$(BUILD)/examples/embed_master: $(BUILD)/obj/examples/embed_master.o $(STLIB)
	$(call link,-lm)
$(BUILD)/examples/embed_cpp: examples/embed_cpp.cpp $(HEADERS) $(STLIB)
	@mkdir -p $(@D)
	$(call quiet,CXX)$(CXX) -std=c++17 -Wall -Wextra -Wpedantic $(WERROR) \
		-Ilib/include $(SANFLAGS) $(CPPFLAGS) $(CXXFLAGS) $< $(STLIB) \
		-o $@ $(ALL_LDFLAGS)

TOOLS_CFLAGS := $(DAEMON_CFLAGS) -Iexamples/common
CFLAGS.examples/common := $(TOOLS_CFLAGS)
TOOLS_LIB := $(BUILD)/libmcrepl-tools.a
$(TOOLS_LIB): $(call objs,examples/common)
	$(archive)

CFLAGS.examples/cli := $(TOOLS_CFLAGS)
CLI_OBJ := $(call objs,examples/cli)
CLI_BIN := $(BUILD)/bin/mcrepl-cli
$(CLI_BIN): $(CLI_OBJ) $(DAEMON_LIB) $(STLIB)
	$(call link,$(DAEMON_LIBS) -lm)

$(call objs,examples/common examples/cli): | $(RPC_GEN_H)

all: $(EXAMPLES) $(TOOLS_LIB) $(CLI_BIN)
worker: $(CLI_BIN)
