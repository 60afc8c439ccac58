# The C++17 adapter (lib/include/mcrepl/adapter.hpp, adapter_binding.hpp:
# header-only, installed with the C headers) and what runs on it: a
# Mooncake-shaped master (tests/adapter/minimaster.cpp) replaying upstream
# Mooncake's dynamic replication scenarios, and the balance workload on
# that master (bench/adapter/).
#
#   $(ADAPTER_TEST_BIN)   $(BUILD)/tests/check_adapter: tests/adapter/*.cpp,
#                         linked with the shared library $(SHLIB) and an
#                         rpath to $(BUILD), as a user's master links it
#   make check-adapter    runs it (its output in $(TEST_LOGS)/adapter.log);
#                         its last line: upstream_scenarios=<n> passed=<p>
#   make valgrind-adapter the same under valgrind (part of make valgrind)
#   $(ADAPTER_BENCH)      $(BUILD)/bench/bench_adapter_balance (make bench:
#                         steady max/mean of reads per segment, off and auto)

ADAPTER_CXXFLAGS = -std=c++17 -Wall -Wextra -Wpedantic $(WERROR) -MMD -MP \
	-Ilib/include $(SANFLAGS) $(CPPFLAGS) $(CXXFLAGS)
# Link C++ objects with the shared library, found at run time in $(BUILD).
define cxx_link_shlib
@mkdir -p $(@D)
$(call quiet,LD)$(CXX) $(filter %.o,$^) $(SHLIB) -o $@ \
	-Wl,-rpath,$(abspath $(BUILD)) $(ALL_LDFLAGS)
endef

ADAPTER_TEST_OBJ := $(patsubst %.cpp,$(BUILD)/obj/%.o,\
	$(sort $(wildcard tests/adapter/*.cpp)))
ADAPTER_BENCH_OBJ := $(patsubst %.cpp,$(BUILD)/obj/%.o,\
	$(sort $(wildcard bench/adapter/*.cpp)))
ADAPTER_TEST_BIN := $(BUILD)/tests/check_adapter
ADAPTER_BENCH := $(BUILD)/bench/bench_adapter_balance

$(ADAPTER_TEST_OBJ) $(ADAPTER_BENCH_OBJ): $(BUILD)/obj/%.o: %.cpp
	@mkdir -p $(@D)
	$(call quiet,CXX)$(CXX) $(ADAPTER_CXXFLAGS) -Itests/adapter -c $< -o $@

$(ADAPTER_TEST_BIN): $(ADAPTER_TEST_OBJ) $(SHLIB)
	$(cxx_link_shlib)
$(ADAPTER_BENCH): $(ADAPTER_BENCH_OBJ) \
		$(BUILD)/obj/tests/adapter/minimaster.o $(SHLIB)
	$(cxx_link_shlib)

check-adapter: $(ADAPTER_TEST_BIN)
	$(Q)$(QUIET_TEST) $(TEST_LOGS)/adapter.log $(ADAPTER_TEST_BIN)

# After the daemons' runner when both run (they are timing-sensitive).
ifneq ($(filter valgrind,$(MAKECMDGOALS)),)
valgrind-adapter: | valgrind-daemons
endif
valgrind-adapter: $(ADAPTER_TEST_BIN)
	$(VALGRIND) $(ADAPTER_TEST_BIN)

bench-adapter-balance: $(ADAPTER_BENCH)
	$(ADAPTER_BENCH) --segments 8

CHECK_FAST += check-adapter
valgrind: valgrind-adapter
bench: bench-adapter-balance
all: $(ADAPTER_BENCH)

.PHONY: check-adapter valgrind-adapter bench-adapter-balance
