# Examples: hosts of the library a user copies.
#
#   $(EXAMPLES)      embed_master (C) and embed_cpp (C++): hosts of the
#                    library, including <mcrepl/mcrepl.h> as an installed
#                    user would, linked with libmcrepl.a only

EXAMPLES := $(BUILD)/examples/embed_master $(BUILD)/examples/embed_cpp

$(BUILD)/examples/embed_master: $(BUILD)/obj/examples/embed_master.o $(STLIB)
	$(call link,-lm)
$(BUILD)/examples/embed_cpp: examples/embed_cpp.cpp $(HEADERS) $(STLIB)
	@mkdir -p $(@D)
	$(call quiet,CXX)$(CXX) -std=c++17 -Wall -Wextra -Wpedantic $(WERROR) \
		-Ilib/include $(SANFLAGS) $(CPPFLAGS) $(CXXFLAGS) $< $(STLIB) \
		-o $@ $(ALL_LDFLAGS)

all: $(EXAMPLES)
