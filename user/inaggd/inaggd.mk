# SPDX-License-Identifier: GPL-2.0
# The daemon inaggd. Included by the top-level Makefile.
INAGGD := $(BUILD)/inaggd
INAGGD_SRCS := $(wildcard user/inaggd/*.c)
ALL_TARGETS += $(INAGGD)

$(INAGGD): $(INAGGD_SRCS:%.c=$(BUILD)/%.o) $(LIB)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS)
