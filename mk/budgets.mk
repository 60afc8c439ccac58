# The house rules checked by make check, not only written down
# (scripts/check-budgets.sh): README.md at most 300 lines, BENCHMARKS.md
# at most 400, no issue numbers in code, no release history in installed
# headers (NEWS holds it), include guards named for their files, no
# positional initializer of a project struct outside tests/.
#   make check-budgets   the rules on this tree, then tests/budgets/run.sh
#                        (the gate fails on a tree that breaks each rule)
check-budgets:
	$(Q)sh scripts/check-budgets.sh
	$(Q)$(QUIET_TEST) $(TEST_LOGS)/budgets.log sh tests/budgets/run.sh
CHECK_FAST += check-budgets
.PHONY: check-budgets
