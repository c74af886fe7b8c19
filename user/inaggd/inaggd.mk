# SPDX-License-Identifier: GPL-2.0
# The daemon inaggd. Included by the top-level Makefile.
INAGGD := $(BUILD)/inaggd
ALL_TARGETS += $(INAGGD)

$(INAGGD): $(BUILD)/user/inaggd/inaggd.o $(LIB)
	$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS)
