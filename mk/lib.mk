# libmcrepl: lib/*.c and util/*.c, as a shared library with soname
# symlinks (position-independent objects in $(BUILD)/pic), a static
# archive, the util archive for the daemons, and the .pc file.
#
#   $(SHLIB) $(STLIB)   $(BUILD)/libmcrepl.so.<version>, $(BUILD)/libmcrepl.a
#   $(UTIL_LIB)         $(BUILD)/libmcrepl-util.a (hash map, hashing, strings)
#   $(MCREPL_LINK)      what programs link: $(UTIL_LIB) and the API
#                       ($(STLIB), or $(SHLIB) with LINK=shared)
#   $(HEADERS)          the public API, lib/include/mcrepl/*.h
#   make lib            all of the above and $(PCFILE)

CFLAGS.lib := -fvisibility=hidden
CFLAGS.util := -fvisibility=hidden
CFLAGS.pic := -fPIC

LIB_SRC := $(sort $(wildcard lib/*.c util/*.c))
LIB_PIC := $(LIB_SRC:%.c=$(BUILD)/pic/%.o)
LIB_OBJ := $(LIB_SRC:%.c=$(BUILD)/obj/%.o)
# The ABI rule (version.h): .so.MAJOR, and .so.0.MINOR before 1.0.
SONAME := libmcrepl.so.$(V_MAJOR)$(if $(filter 0,$(V_MAJOR)),.$(V_MINOR))
SHLIB := $(BUILD)/libmcrepl.so.$(VERSION)
STLIB := $(BUILD)/libmcrepl.a
UTIL_LIB := $(BUILD)/libmcrepl-util.a
PCFILE := $(BUILD)/libmcrepl.pc
HEADERS := $(wildcard lib/include/mcrepl/*.h)

$(SHLIB): $(LIB_PIC) lib/libmcrepl.map
	$(call quiet,LD)$(CC) -shared -Wl,-soname,$(SONAME) \
		-Wl,--version-script=lib/libmcrepl.map $(LIB_PIC) -o $@ \
		$(ALL_LDFLAGS) -lm
	$(Q)ln -sf libmcrepl.so.$(VERSION) $(BUILD)/$(SONAME)
	$(Q)ln -sf $(SONAME) $(BUILD)/libmcrepl.so
$(STLIB): $(LIB_OBJ)
	$(archive)
# util is also inside libmcrepl, hidden, so a host can link the .so
# and this archive side by side.
$(UTIL_LIB): $(call objs,util)
	$(archive)
# libdir and includedir are written ${prefix}-relative when they lie under
# PREFIX (so `pkg-config --define-variable=prefix=...` relocates them).
pc_rel = $(patsubst $(PREFIX)/%,$${prefix}/%,$(1))
PC_SED = sed -e 's|@PREFIX@|$(PREFIX)|' \
	-e 's|@LIBDIR@|$(call pc_rel,$(LIBDIR))|' \
	-e 's|@INCLUDEDIR@|$(call pc_rel,$(INCLUDEDIR))|' \
	-e 's|@VERSION@|$(VERSION)|'
$(PCFILE): pkgconfig/libmcrepl.pc.in $(VERSION_H)
	$(call quiet,GEN)mkdir -p $(@D) && $(PC_SED) $< > $@

# What a program outside lib/ links for libmcrepl: the util archive (its
# own copy of util) and the API. LINK=shared links the shared library,
# where only the API is visible, so a program that takes a private symbol
# out of libmcrepl fails to link (a CI build does so; .ci/run).
ifeq ($(LINK),shared)
MCREPL_LINK := $(UTIL_LIB) $(SHLIB)
ALL_LDFLAGS += -Wl,-rpath,$(abspath $(BUILD))
else
MCREPL_LINK := $(UTIL_LIB) $(STLIB)
endif

lib: $(SHLIB) $(STLIB) $(UTIL_LIB) $(PCFILE)
all: lib
