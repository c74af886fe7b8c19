# SPDX-License-Identifier: GPL-2.0
# The switch agent inagg-agent (docs/remote.md). Included by the top-level Makefile.
AGENT := $(BUILD)/inagg-agent
AGENT_SRCS := $(wildcard user/agent/*.c)
ALL_TARGETS += $(AGENT)

# The agent's code is its own, not libinagg's; tests/unit/agent.c and site_check.c link it.
AGENT_TESTS := $(BUILD)/tests/unit/agent $(BUILD)/tests/unit/site_check
AGENT_OBJS := $(patsubst %.c,$(BUILD)/%.o,$(filter-out user/agent/main.c,$(AGENT_SRCS)))
$(AGENT_SRCS:%.c=$(BUILD)/%.o) $(AGENT_TESTS): private CFLAGS += -Iuser/agent
$(AGENT_TESTS): TEST_OBJS = $(AGENT_OBJS)
$(AGENT_TESTS): $(AGENT_OBJS)

$(AGENT): $(AGENT_SRCS:%.c=$(BUILD)/%.o) $(LIB)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS)
