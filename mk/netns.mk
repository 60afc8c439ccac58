# Multi-host, two-domain integration test in network namespaces (needs
# root and iproute2; says "skipped" and passes where it cannot run).
check-netns: $(MASTER_BIN) $(WORKER_BIN) $(CLI_BIN)
	$(Q)$(QUIET_TEST) $(TEST_LOGS)/netns.log sh tests/netns/multihost.sh \
		$(abspath $(BUILD)/bin)
CHECK_TIMED += check-netns
CHECK_TIMED_DEPS += $(MASTER_BIN) $(WORKER_BIN) $(CLI_BIN)
.PHONY: check-netns
