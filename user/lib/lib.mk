# SPDX-License-Identifier: GPL-2.0
# libinagg: one folder per subsystem. Included by the top-level Makefile.
#
# LIB_SEES_<folder> lists every folder below it (with the folders those see):
# its sources are compiled with only those and its own on the include path, so
# an include that goes back up does not compile. tests/unit/layers.sh checks the same table against
# the sources and that it has no cycle. Programs and tests see every folder.
LIB_DIRS	:= base ctl model cc ledger dp host job sim apps
LIB_SEES_base	:=
LIB_SEES_ctl	:= base
LIB_SEES_model	:= base
LIB_SEES_cc	:= base
LIB_SEES_ledger	:= base
LIB_SEES_dp	:= base model
LIB_SEES_host	:= base ctl cc model
LIB_SEES_job	:= base ctl cc model ledger dp
LIB_SEES_sim	:= base ctl cc model ledger dp job
LIB_SEES_apps	:= base ctl cc model host

LIB_INC		:= $(addprefix -Iuser/lib/,$(LIB_DIRS))
LIB_SRCS	:= $(foreach d,$(LIB_DIRS),$(wildcard user/lib/$(d)/*.c))
LIB_OBJS	:= $(LIB_SRCS:%.c=$(BUILD)/%.o)
$(foreach d,$(LIB_DIRS),$(eval $(BUILD)/user/lib/$(d)/%.o: private CFLAGS += \
	$(addprefix -Iuser/lib/,$(d) $(LIB_SEES_$(d)))))

# A file left at the top (say, added on a branch from before the folders) would not be built.
ifneq ($(wildcard user/lib/*.c user/lib/*.h),)
$(error $(wildcard user/lib/*.c user/lib/*.h): put each in its subsystem's folder (lib.mk))
endif
