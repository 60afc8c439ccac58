# Documentation that runs (make check-docs): scripts/check-docs.sh runs
# the fenced sh blocks of README.md and docs/*.md marked
# <!-- check-docs ... --> as written, in network namespaces (needs root
# and iproute2; says "skipped" and passes where it cannot run; a block
# with etcd= is skipped without the etcd binary). tests/docs/drift.md, a
# block the binaries refuse, must fail first: the runner notices drift.
DOCS_MD := README.md $(sort $(wildcard docs/*.md))
check-docs: $(MASTER_BIN) $(WORKER_BIN) $(CLI_BIN)
	$(Q)$(QUIET_TEST) $(TEST_LOGS)/docs.log sh -c '\
		out=$$(sh scripts/check-docs.sh $(abspath $(BUILD)/bin) \
			tests/docs/drift.md); rc=$$?; \
		case $$out in *skipped:*) echo "$$out"; exit 0;; esac; \
		[ $$rc -ne 0 ] || { echo "check-docs: drift.md passed"; exit 1; }; \
		sh scripts/check-docs.sh $(abspath $(BUILD)/bin) $(DOCS_MD)'
CHECK_TIMED += check-docs
CHECK_TIMED_DEPS += $(MASTER_BIN) $(WORKER_BIN) $(CLI_BIN)
.PHONY: check-docs
