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

# The guarantee of docs/HA.md (scripts/check-claims.sh): each numbered
# sentence names the tests or make targets that check it, and each
# exists; tests/docs/claims-bad.md (a sentence naming none, one naming a
# test that does not exist) must fail first.
HA_CLAIMS := What a client sees (the guarantee)
check-claims:
	$(Q)$(QUIET_TEST) $(TEST_LOGS)/claims.log sh -c '\
		if sh scripts/check-claims.sh tests/docs/claims-bad.md Claims; \
		then echo "check-claims: claims-bad.md passed"; exit 1; fi; \
		sh scripts/check-claims.sh docs/HA.md "$(HA_CLAIMS)"'
CHECK_FAST += check-claims
.PHONY: check-claims
