# RFC traceability: docs/RFC.md gives every rule and Test Plan item an id;
# tests carry `covers:` tags naming them (see the header of docs/RFC.md).
#   make check-rfc      fails when a tag names an id docs/RFC.md does not
#                       define (a typo), an id is defined twice or a tag
#                       has no test after it (hooked to check)
#   make rfc-coverage   the full report: each id with its tests, the ids
#                       no test covers (--strict is not run by check: T-36,
#                       the ACK validation, has no test in this tree)
check-rfc:
	$(Q)sh scripts/rfc-coverage.sh --strict-tags --quiet

rfc-coverage:
	sh scripts/rfc-coverage.sh

CHECK_FAST += check-rfc

.PHONY: check-rfc rfc-coverage
