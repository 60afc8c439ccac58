# make install / make uninstall (PREFIX, DESTDIR, LIBDIR, INCLUDEDIR,
# BINDIR, MANDIR, PKGCONFIGDIR: Makefile).
#
#   the library       .so with soname links, .a, headers, libmcrepl.pc
#   the programs      mcrepl-master, mcrepl-worker, mcrepl-cli in BINDIR
#   man pages         $(BUILD)/man/<program>.1, generated from each
#                     program's --help by scripts/gen-man.sh (sh + awk),
#                     into MANDIR/man1; `make man` builds them only
#   docs              docs/SECURITY.md and docs/HA.md (the man pages cite
#                     them) into DOCDIR
# Example systemd units and a Grafana dashboard are in contrib/ (not
# installed). uninstall removes exactly what install put there.

INSTALL_PROGS := $(MASTER_BIN) $(WORKER_BIN) $(CLI_BIN)
MAN_PAGES := $(patsubst $(BUILD)/bin/%,$(BUILD)/man/%.1,$(INSTALL_PROGS))
INSTALL_DOCS := docs/SECURITY.md docs/HA.md

man_desc.mcrepl-master := metadata master of libmcrepl dynamic hot replication
man_desc.mcrepl-worker := memory segments, data port and replica copies for mcrepl-master
man_desc.mcrepl-cli := put, get and inspect objects of an mcrepl-master cluster

$(BUILD)/man/%.1: $(BUILD)/bin/% scripts/gen-man.sh
	$(call quiet,GEN)mkdir -p $(@D) && \
	sh scripts/gen-man.sh $< "$(man_desc.$*)" $(VERSION) > $@.tmp && \
	mv $@.tmp $@

man: $(MAN_PAGES)

install: lib $(INSTALL_PROGS) $(MAN_PAGES)
	install -d $(DESTDIR)$(LIBDIR) $(DESTDIR)$(INCLUDEDIR)/mcrepl \
		$(DESTDIR)$(PKGCONFIGDIR) $(DESTDIR)$(BINDIR) \
		$(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(DOCDIR)
	install -m 644 $(HEADERS) $(wildcard lib/include/mcrepl/*.hpp) \
		$(DESTDIR)$(INCLUDEDIR)/mcrepl/
	install -m 755 $(SHLIB) $(DESTDIR)$(LIBDIR)/
	ln -sf libmcrepl.so.$(VERSION) $(DESTDIR)$(LIBDIR)/$(SONAME)
	ln -sf $(SONAME) $(DESTDIR)$(LIBDIR)/libmcrepl.so
	install -m 644 $(STLIB) $(DESTDIR)$(LIBDIR)/
	$(PC_SED) pkgconfig/libmcrepl.pc.in > \
		$(DESTDIR)$(PKGCONFIGDIR)/libmcrepl.pc
	install -m 755 $(INSTALL_PROGS) $(DESTDIR)$(BINDIR)/
	install -m 644 $(MAN_PAGES) $(DESTDIR)$(MANDIR)/man1/
	install -m 644 $(INSTALL_DOCS) $(DESTDIR)$(DOCDIR)/

uninstall:
	rm -rf $(DESTDIR)$(INCLUDEDIR)/mcrepl
	rm -f $(DESTDIR)$(LIBDIR)/libmcrepl.so* $(DESTDIR)$(LIBDIR)/libmcrepl.a
	rm -f $(DESTDIR)$(PKGCONFIGDIR)/libmcrepl.pc
	rm -f $(addprefix $(DESTDIR)$(BINDIR)/,$(notdir $(INSTALL_PROGS)))
	rm -f $(addprefix $(DESTDIR)$(MANDIR)/man1/,$(notdir $(MAN_PAGES)))
	rm -f $(addprefix $(DESTDIR)$(DOCDIR)/,$(notdir $(INSTALL_DOCS)))

.PHONY: install uninstall man
