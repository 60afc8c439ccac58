# mcrepl-demo: README's main job (make demo).
DEMO_BIN := $(BUILD)/bin/mcrepl-demo
$(DEMO_BIN): $(BUILD)/obj/examples/demo/mcrepl_demo.o $(RPC_LIB) $(STLIB)
	@mkdir -p $(@D)
	$(CC) $^ -o $@ $(ALL_LDFLAGS) $(DAEMON_LIBS) -lm
$(BUILD)/obj/examples/demo/%.o: examples/demo/%.c | $(RPC_GEN_H)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(DAEMON_CFLAGS) -c $< -o $@

all: $(DEMO_BIN)
