# SPDX-License-Identifier: GPL-2.0
# The switch agent inagg-agent (docs/remote.md). Included by the top-level Makefile.
AGENT := $(BUILD)/inagg-agent
AGENT_SRCS := $(wildcard user/agent/*.c)
ALL_TARGETS += $(AGENT)

# The agent's code is its own, not libinagg's; tests/unit/agent.c links it too.
AGENT_OBJS := $(patsubst %.c,$(BUILD)/%.o,$(filter-out user/agent/main.c,$(AGENT_SRCS)))
$(AGENT_SRCS:%.c=$(BUILD)/%.o) $(BUILD)/tests/unit/agent: private CFLAGS += -Iuser/agent
$(BUILD)/tests/unit/agent: TEST_OBJS = $(AGENT_OBJS)
$(BUILD)/tests/unit/agent: $(AGENT_OBJS)

$(AGENT): $(AGENT_SRCS:%.c=$(BUILD)/%.o) $(LIB)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS)
