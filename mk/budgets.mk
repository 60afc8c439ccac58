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

# The layering of docs/README.md ("How the parts fit",
# scripts/check-layers.sh): each folder includes only what its row of the
# table names; lib/ and util/ call no clock, socket, thread, file or
# environment function, and their objects hold no writable data.
#   make check-layers    the rules on this tree and its objects, then
#                        tests/layers/run.sh (the gate fails on a tree
#                        that breaks each rule)
check-layers: $(STLIB)
	$(Q)sh scripts/check-layers.sh . $(BUILD)/obj
	$(Q)$(QUIET_TEST) $(TEST_LOGS)/layers.log sh tests/layers/run.sh $(BUILD)/obj
CHECK_FAST += check-layers
.PHONY: check-layers

# The source habits (scripts/check-style.sh): no preprocessor conditional
# inside a function body, feature macros only in the Makefile and mk/, no
# function over 80 lines outside tests/, cleanup labels named for what
# they undo.
#   make check-style     the rules on this tree, then tests/style/run.sh
check-style:
	$(Q)sh scripts/check-style.sh
	$(Q)$(QUIET_TEST) $(TEST_LOGS)/style.log sh tests/style/run.sh
CHECK_FAST += check-style
.PHONY: check-style

# Functions extern for nothing (scripts/check-statics.sh): a global
# function of lib/, util/, runtime/, daemons/ or tools/ that no other
# object refers to and no other source names must be static (not in a
# header). Read from the objects `all` and the test runners build.
#   make check-statics   the rule on this tree's objects, then
#                        tests/statics/run.sh (the gate fails on a tree
#                        with such a function)
check-statics: all $(TEST_BIN) $(DAEMON_TEST_BIN)
	$(Q)sh scripts/check-statics.sh . $(BUILD)/obj
	$(Q)$(QUIET_TEST) $(TEST_LOGS)/statics.log sh tests/statics/run.sh $(BUILD)/obj
CHECK_FAST += check-statics
.PHONY: check-statics
