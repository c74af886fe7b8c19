# SPDX-License-Identifier: GPL-2.0
# Install, man pages and Debian packages. Included by the top-level Makefile.
#   make install [PREFIX=/usr/local] [DESTDIR=]  inagg, inaggd, units, /etc/inagg,
#                                   man pages, bash completion, docs, libinagg.so.1
#                                   and its header, the Python package
#   make uninstall                  removes them (configuration the operator
#                                   changed stays)
#   make install-dkms               the module's source for DKMS, modules-load.d
#   make deb                        the packages of debian/ (dpkg-buildpackage -b in a copy
#                                   of the tree, $(BUILD)/pkg/inagg-V): inagg, libinagg1,
#                                   libinagg-dev, python3-inagg, inagg-dkms in $(BUILD)/pkg/
#        [DKMS_PREBUILT=KO]         inagg-dkms also carries KO (make modules' inagg.ko) prebuilt
#                                   for its kernel, for DKMS to install there without compiling
#                                   (a local convenience; an archive's build has none)
#   make progs                      what the packages hold: the programs, library, man pages
#   make man                        $(BUILD)/man/inagg.8, inaggd.8, inagg-agent.8, from docs/
#   make check-routers              the layer tests/routers: tests/kmod/routers.sh on router
#                                   VMs that install the packages (ROUTERS_BOOT=package; about
#                                   13 min under TCG; CI's second stage, not in make check,
#                                   which boots them from an initramfs)
#   make check-routers-dkms         the same with inagg-dkms made without the prebuilt
#                                   module, so that DKMS compiles it in each VM (longer)
# Where every file goes is the table "Installed files" of docs/router-vm.md,
# which the man pages carry; tests/pkg/install.sh holds the two to each other.
PREFIX	?= /usr/local
# inagg is run by users (as ip is); the daemons are the administrator's.
BINDIR	?= $(PREFIX)/bin
SBINDIR	?= $(PREFIX)/sbin
MANDIR	?= $(PREFIX)/share/man
DOCDIR	?= $(PREFIX)/share/doc/inagg
COMPLDIR ?= $(PREFIX)/share/bash-completion/completions
MODLOADDIR ?= $(PREFIX)/lib/modules-load.d
# Debian's multiarch folder, which ld and ld.so search under /usr and /usr/local alike.
MULTIARCH ?= $(shell $(CC) -print-multiarch 2>/dev/null)
LIBDIR	?= $(PREFIX)/lib$(if $(MULTIARCH),/$(MULTIARCH))
INCLUDEDIR ?= $(PREFIX)/include
# Where Debian's /usr/bin/python3 looks: packages in /usr/lib/python3/dist-packages, the
# local administrator's in /usr/local/lib/python3.N/dist-packages.
PYTHON	?= python3
PYTHONDIR ?= $(if $(filter /usr,$(PREFIX)),/usr/lib/python3/dist-packages,$(PREFIX)/lib/python$(shell \
	$(PYTHON) -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null)/dist-packages)
# Run after (un)installing the library on this system itself (no DESTDIR).
LDCONFIG ?= ldconfig
# systemd-sysusers reads /usr/lib/sysusers.d and /usr/local/lib/sysusers.d alike; run after
# installing on this system itself, it makes inaggd's group (Debian's postinst runs it there).
SYSUSERSDIR ?= $(PREFIX)/lib/sysusers.d
SYSUSERS ?= systemd-sysusers
# Debian 12 keeps its units in /lib; elsewhere they follow the prefix.
UNITDIR	?= $(if $(filter /usr,$(PREFIX)),/lib/systemd/system,$(PREFIX)/lib/systemd/system)
# Configuration and DKMS sources are where the services and dkms look for them.
CONFDIR	:= /etc/inagg
DKMSDIR	:= /usr/src
INSTALL	?= install

VERSION := $(shell sed -n 's/^\#define INAGG_VERSION "\(.*\)"$$/\1/p' user/inagg/cli.h)
MANS	:= $(BUILD)/man/inagg.8 $(BUILD)/man/inaggd.8 $(BUILD)/man/inagg-agent.8
UNITS	:= packaging/inaggd.service packaging/inagg-attach@.service \
	   packaging/inagg-prometheus.service packaging/inagg-prometheus.timer
CONFS	:= packaging/etc/inaggd.conf packaging/etc/attach.conf
# The API of libinagg.so: api.h and whatever of include/inagg it includes (nothing today).
API_HEADERS := include/inagg/api.h $(addprefix include/,$(shell \
	sed -n 's/^\#include [<"]\(inagg\/[^>"]*\)[>"].*/\1/p' include/inagg/api.h))
PY_SRCS	:= $(wildcard python/inagg/*.py)
# What the pages show ([...](memory-history.svg)), installed beside them.
DOC_PICTURES := $(wildcard docs/*.png docs/*.svg)
# The module: Kbuild, its sources (not the build's inagg.mod.c), the ABI header and the
# ledger's rules (shared with user space).
DKMS_SRCS := kmod/Kbuild $(filter-out %.mod.c,$(wildcard kmod/*.c)) $(wildcard kmod/*.h) \
	include/inagg/netlink.h include/inagg/ledger_rules.h
PKG_DIR	:= $(BUILD)/pkg
# DKMS installs this prebuilt module on its kernel instead of compiling it (docs/router-vm.md).
DKMS_PREBUILT ?=
ALL_TARGETS += $(MANS)
CHECK_DEPS += deb
TEST_LAYERS += pkg
MKMAN	= packaging/mkman.sh $@ $(basename $(@F)) 8 $(VERSION)

.PHONY: man progs install uninstall install-dkms uninstall-dkms deb check-routers check-routers-dkms
man: $(MANS)
progs: $(CLI) $(INAGGD) $(AGENT) $(SO) $(MANS)

# inagg(8)'s COMMANDS are each command's -h, made from the option table that parses it.
$(BUILD)/man/inagg.8: $(CLI) docs/cli.md docs/router-vm.md packaging/mkman.sh \
		packaging/md2man.awk packaging/cmd2man.awk
	@mkdir -p $(@D)
	$(MKMAN) "in-network aggregation: placement, datapath, jobs" \
		"skip:COMMANDS|EXAMPLES|ADDING A COMMAND|NOTES FOR DEVELOPERS|SEE ALSO" md:docs/cli.md cmds:$(CLI) \
		"md:docs/cli.md:COMMANDS:PLACEMENT AND EVALUATION" md:docs/cli.md:EXAMPLES \
		"md:docs/router-vm.md:Installed files" \
		"see:inaggd(8), inagg-agent(8), ip(8), bpftool(8), dkms(8), /usr/share/doc/inagg/"

$(BUILD)/man/inaggd.8: $(INAGGD) docs/inaggd.md docs/router-vm.md packaging/mkman.sh \
		packaging/md2man.awk
	@mkdir -p $(@D)
	$(MKMAN) "the inagg job daemon: placement, admission, configuration" \
		help:$(INAGGD) md:docs/inaggd.md:DESCRIPTION "md:docs/inaggd.md:EXIT STATUS" \
		md:docs/inaggd.md:ENVIRONMENT \
		"md:docs/router-vm.md:Services" "md:docs/router-vm.md:Installed files" \
		"see:inagg(8), inagg-agent(8), systemd.service(5), /usr/share/doc/inagg/"

$(BUILD)/man/inagg-agent.8: $(AGENT) docs/remote.md packaging/mkman.sh packaging/md2man.awk
	@mkdir -p $(@D)
	$(MKMAN) "the agent of one inagg switch, run by inaggd" \
		help:$(AGENT) "md:docs/remote.md:The agent on a router:DESCRIPTION" \
		"see:inaggd(8), inagg(8), ssh(1), /usr/share/doc/inagg/remote.md"

install: $(CLI) $(INAGGD) $(AGENT) $(SO) $(MANS)
	$(INSTALL) -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(SBINDIR) $(DESTDIR)$(UNITDIR) $(DESTDIR)$(CONFDIR) \
		$(DESTDIR)$(MANDIR)/man8 $(DESTDIR)$(COMPLDIR) $(DESTDIR)$(DOCDIR)/examples \
		$(DESTDIR)$(LIBDIR) $(DESTDIR)$(INCLUDEDIR)/inagg $(DESTDIR)$(PYTHONDIR)/inagg \
		$(DESTDIR)$(SYSUSERSDIR)
	$(INSTALL) -m 0755 $(CLI) $(DESTDIR)$(BINDIR)/
	$(INSTALL) -m 0755 $(INAGGD) $(AGENT) $(DESTDIR)$(SBINDIR)/
	for u in $(UNITS); do \
		sed -e 's|/usr/sbin/|$(SBINDIR)/|g' -e 's|/usr/bin/inagg |$(BINDIR)/inagg |g' $$u >$(DESTDIR)$(UNITDIR)/$${u##*/} && \
		chmod 0644 $(DESTDIR)$(UNITDIR)/$${u##*/} || exit 1; done
	@# An operator's configuration is never overwritten.
	for c in $(CONFS); do [ -e $(DESTDIR)$(CONFDIR)/$${c##*/} ] || \
		$(INSTALL) -m 0644 $$c $(DESTDIR)$(CONFDIR)/ || exit 1; done
	for m in $(MANS); do gzip -9n <$$m >$(DESTDIR)$(MANDIR)/man8/$${m##*/}.gz || exit 1; done
	$(INSTALL) -m 0644 packaging/inagg.bash $(DESTDIR)$(COMPLDIR)/inagg
	ln -sf inagg $(DESTDIR)$(COMPLDIR)/inaggd
	$(INSTALL) -m 0644 docs/*.md $(DOC_PICTURES) $(DESTDIR)$(DOCDIR)/
	$(INSTALL) -m 0644 docs/fig1.json $(DESTDIR)$(DOCDIR)/examples/topo.json
	@# Installed under its soname, which programs and python/inagg load; the .so link is -linagg's.
	$(INSTALL) -m 0644 $(SO) $(DESTDIR)$(LIBDIR)/libinagg.so.1
	ln -sf libinagg.so.1 $(DESTDIR)$(LIBDIR)/libinagg.so
	$(INSTALL) -m 0644 $(API_HEADERS) $(DESTDIR)$(INCLUDEDIR)/inagg/
	$(INSTALL) -m 0644 $(PY_SRCS) $(DESTDIR)$(PYTHONDIR)/inagg/
	$(INSTALL) -m 0644 packaging/sysusers.conf $(DESTDIR)$(SYSUSERSDIR)/inagg.conf
	[ -n "$(DESTDIR)" ] || $(LDCONFIG) || echo "install: $(LDCONFIG) failed: run it as root"
	[ -n "$(DESTDIR)" ] || $(SYSUSERS) $(SYSUSERSDIR)/inagg.conf || \
		echo "install: $(SYSUSERS) failed: run it as root, or groupadd --system inagg"

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/inagg $(DESTDIR)$(SBINDIR)/inaggd $(DESTDIR)$(SBINDIR)/inagg-agent \
		$(foreach u,$(UNITS),$(DESTDIR)$(UNITDIR)/$(notdir $(u))) \
		$(foreach m,$(MANS),$(DESTDIR)$(MANDIR)/man8/$(notdir $(m)).gz) \
		$(DESTDIR)$(COMPLDIR)/inagg $(DESTDIR)$(COMPLDIR)/inaggd \
		$(DESTDIR)$(SYSUSERSDIR)/inagg.conf
	@# The group stays, as Debian leaves a removed package's groups: files may still carry it.
	-rmdir $(DESTDIR)$(SYSUSERSDIR) 2>/dev/null
	rm -rf $(DESTDIR)$(DOCDIR)
	for c in $(CONFS); do f=$(DESTDIR)$(CONFDIR)/$${c##*/}; \
		if cmp -s $$c $$f; then rm -f $$f; \
		elif [ -e $$f ]; then echo "uninstall: $$f changed, kept"; fi; done
	-rmdir $(DESTDIR)$(CONFDIR) 2>/dev/null
	rm -f $(DESTDIR)$(LIBDIR)/libinagg.so.1 $(DESTDIR)$(LIBDIR)/libinagg.so \
		$(addprefix $(DESTDIR)$(INCLUDEDIR)/,$(API_HEADERS:include/%=%))
	rmdir $(DESTDIR)$(INCLUDEDIR)/inagg 2>/dev/null || true
	@# With the byte code python3 left beside the sources.
	rm -rf $(DESTDIR)$(PYTHONDIR)/inagg
	[ -n "$(DESTDIR)" ] || $(LDCONFIG) || echo "uninstall: $(LDCONFIG) failed: run it as root"

install-dkms:
	$(INSTALL) -d $(DESTDIR)$(DKMSDIR)/inagg-$(VERSION)/kmod \
		$(DESTDIR)$(DKMSDIR)/inagg-$(VERSION)/include/inagg $(DESTDIR)$(MODLOADDIR)
	sed 's/#MODULE_VERSION#/$(VERSION)/' packaging/dkms.conf \
		>$(DESTDIR)$(DKMSDIR)/inagg-$(VERSION)/dkms.conf
	for f in $(DKMS_SRCS); do \
		$(INSTALL) -m 0644 $$f $(DESTDIR)$(DKMSDIR)/inagg-$(VERSION)/$$f || exit 1; done
	$(INSTALL) -m 0644 packaging/modules-load.conf $(DESTDIR)$(MODLOADDIR)/inagg.conf

uninstall-dkms:
	rm -rf $(DESTDIR)$(DKMSDIR)/inagg-$(VERSION)
	rm -f $(DESTDIR)$(MODLOADDIR)/inagg.conf

# The packages of debian/, built as an archive would build them (dpkg-buildpackage, which
# takes the build flags from dpkg-buildflags), in a copy of the tree: the files git knows,
# so that neither $(BUILD) nor the .debs land in or beside the working tree.
PKG_SRC	:= $(PKG_DIR)/inagg-$(VERSION)
deb: $(if $(DKMS_PREBUILT),modules)
	@rm -rf $(PKG_SRC) $(PKG_DIR)/stage $(PKG_DIR)/*.deb $(PKG_DIR)/*.buildinfo \
		$(PKG_DIR)/*.changes
	@mkdir -p $(PKG_SRC)
	{ git ls-files -co --exclude-standard 2>/dev/null || \
		find . -path ./$(BUILD) -prune -o -type f -print; } | \
		while read -r f; do [ -e "$$f" ] && printf '%s\n' "$$f"; done | \
		tar -cf - -T - | tar -C $(PKG_SRC) -xf -
	cd $(PKG_SRC) && $(if $(DKMS_PREBUILT),INAGG_DKMS_PREBUILT=$(abspath $(DKMS_PREBUILT))) \
		dpkg-buildpackage -b -us -uc -J$(shell nproc) >../build.log 2>&1 || \
		{ tail -n 30 ../build.log; exit 1; }
	@ls $(PKG_DIR)/*.deb

# The routers' test makes the packages itself (docs/routers.md's command 1). The caller holds
# /tmp/ia-net.lock, as for make check. check-routers runs the layer tests/routers as make check
# runs its layers (a timeout, logs in $(BUILD)/test-logs, "N passed, N failed" last): CI runs it
# as a stage of its own after make check (.ci/run).
check-routers: all
	@DKMS_PREBUILT=$(KMOD) scripts/run-tests.sh $(BUILD) routers

check-routers-dkms: all
	ROUTERS_BOOT=package ROUTERS_DKMS=build BUILD=$(BUILD) bash tests/kmod/routers.sh
