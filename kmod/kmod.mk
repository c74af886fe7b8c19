# SPDX-License-Identifier: GPL-2.0
# Make fragment for the kernel module, included by the top-level Makefile.
#   make modules            build kmod/inagg.ko (copied to $(BUILD)/kmod/)
#   make modules KDIR=...   against another kernel build or headers folder
#
# KDIR defaults to the headers of Debian's default kernel: the version that
# linux-headers-amd64 (or else linux-image-amd64) depends on. The kernel
# release the module was built for goes to $(BUILD)/kmod/kver, for the VM
# runner (tests/kmod/vm.sh) to boot the same kernel.
ifeq ($(origin KDIR),undefined)
KVER := $(shell { dpkg-query -W -f='$${Depends}\n' linux-headers-amd64 2>/dev/null; \
	apt-cache depends linux-image-amd64 2>/dev/null; } | \
	grep -oE 'linux-(headers|image)-[0-9][^ ,()]*-amd64' | head -n 1 | \
	sed -E 's/^linux-(headers|image)-//')
KDIR := /usr/src/linux-headers-$(KVER)
endif
KMOD := $(BUILD)/kmod/inagg.ko

.PHONY: modules modules_clean
modules:
	@test -f $(KDIR)/Makefile || { echo "modules: no kernel headers in '$(KDIR)'" \
		"(install linux-headers-amd64 or set KDIR=)" >&2; exit 1; }
	$(MAKE) -C $(KDIR) M=$(CURDIR)/kmod modules
	@mkdir -p $(BUILD)/kmod
	cp kmod/inagg.ko $(KMOD)
	@/sbin/modinfo -F vermagic $(KMOD) | cut -d' ' -f1 >$(BUILD)/kmod/kver

modules_clean:
	-$(MAKE) -C $(KDIR) M=$(CURDIR)/kmod clean

CHECK_DEPS += modules
ifneq ($(wildcard $(KDIR)/Makefile),)
ALL_TARGETS += modules
endif
