# SPDX-License-Identifier: GPL-2.0
# The switch agent inagg-agent (docs/remote.md). Included by the top-level Makefile.
AGENT := $(BUILD)/inagg-agent
AGENT_SRCS := $(wildcard user/agent/*.c)
ALL_TARGETS += $(AGENT)

$(AGENT): $(AGENT_SRCS:%.c=$(BUILD)/%.o) $(LIB)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS)
