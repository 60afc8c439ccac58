# One template for a program: its objects and archives, linked with the
# one link rule (Makefile), and built by `all`.
#
#   $(call program,BIN,PREREQUISITES,SYSTEM LIBRARIES)
#       BIN links PREREQUISITES (objects first, then archives in link
#       order) and then the system libraries; `all` builds it.
#   $(call bench_program,SOURCE,MORE,SYSTEM LIBRARIES)
#       the bench SOURCE (bench/.../NAME.c) as $(BUILD)/bench/NAME, from
#       its object, the flag parser every bench parses its flags with
#       ($(FLAGS_OBJ)) and MORE; listed in BENCH_BINS (make bench-bins).
#
# A directory's sources compile with its CFLAGS.<dir> (Makefile); a
# program needs no more than a line.

define program_rule
$(1): $(2)
	$$(call link,$(3))
all: $(1)
endef
program = $(eval $(call program_rule,$(1),$(2),$(3)))

bench_bin = $(BUILD)/bench/$(basename $(notdir $(1)))
bench_program = $(eval BENCH_BINS += $(call bench_bin,$(1)))$(call program,\
	$(call bench_bin,$(1)),$(patsubst %.c,$(BUILD)/obj/%.o,$(1)) $(FLAGS_OBJ) $(2),$(3))
