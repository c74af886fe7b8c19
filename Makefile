# SPDX-License-Identifier: GPL-2.0
# inagg: in-network aggregation for Linux software switches.
#   make          build everything that exists
#   make check    install what is missing, run every test layer
#   make demo     the main job (see README.md)
#   make bench    benchmarks, with baselines measured in the same run
#   make fuzz     the datapath against its reference model, 10 million frames (tests/model/)
#   make corpus   word count's text for `inagg eval fig6` (docs/apps.md)
#   make memory-plot  head and tail over time (docs/memory.md) from a live run's history
# CPPFLAGS, CFLAGS and LDFLAGS from the environment are used (debian/rules: dpkg-buildflags').

BUILD	?= build
CC	?= gcc
CLANG	?= clang
CFLAGS	?= -O2 -g
CFLAGS	+= -std=gnu11 -Wall -Wextra -Wno-unused-parameter -Wno-missing-field-initializers \
	   -D_GNU_SOURCE -Iinclude -I$(BUILD)
LDLIBS	+= -ljson-c -lbpf -lelf -lz -lmnl -lpthread -lm
TEST_LAYERS := unit bpf net sec py kmod

include user/lib/lib.mk
LIB	 := $(BUILD)/libinagg.a
# libinagg.so: the stable API (include/inagg/api.h) and the host endpoint under it.
SO	 := $(BUILD)/libinagg.so
SO_OBJS	 := $(filter-out $(BUILD)/user/lib/host/host_share.o,$(patsubst %.c,$(BUILD)/%.o,\
	      $(wildcard user/lib/host/*.c))) \
	    $(patsubst %,$(BUILD)/user/lib/%.o,ctl/ctl ctl/ctl_check base/err cc/cc cc/cc_job)
# The evaluation harness (user/inagg/eval/) is the CLI's alone.
CLI_SRCS := $(wildcard user/inagg/*.c user/inagg/eval/*.c)
CLI	 := $(BUILD)/inagg

# Test programs: tests/<layer>/*.c, each one kselftest binary.
TEST_SRCS := $(foreach l,$(TEST_LAYERS),$(wildcard tests/$(l)/*.c))
TEST_BINS := $(TEST_SRCS:%.c=$(BUILD)/%)
# Programs that run only inside the 6.1 guest of tests/kmod/vm.sh (docs/vm-tests.md).
VM_TEST_BINS := $(patsubst %.c,$(BUILD)/%,$(wildcard tests/vm/*.c))
BENCH_SRCS := $(wildcard tests/bench/*.c)
BENCH_BINS := $(BENCH_SRCS:%.c=$(BUILD)/%)
KSELFTEST := $(BUILD)/kselftest/kselftest_harness.h

.DEFAULT_GOAL := all

# Parts add themselves to these from their own fragment.
ALL_TARGETS := $(LIB) $(SO) $(CLI)
GEN_DEPS :=
-include bpf/bpf.mk
-include kmod/kmod.mk
-include user/inaggd/inaggd.mk
-include user/agent/agent.mk
-include packaging/packaging.mk
-include tests/model/model.mk

# Test-only tc impairment of host links (tests/impair/): object and skeleton.
IMPAIR_SKEL := $(BUILD)/tests/impair/impair.skel.h
$(BUILD)/tests/impair/impair.bpf.o: tests/impair/impair.bpf.c include/inagg/wire.h
	@mkdir -p $(@D)
	$(CLANG) $(BPF_CFLAGS) -c -o $@ $<
$(IMPAIR_SKEL): $(BUILD)/tests/impair/impair.bpf.o
	$(BPFTOOL) gen skeleton $< name impair_bpf > $@.tmp && mv $@.tmp $@
$(BUILD)/tests/net/live $(BUILD)/tests/net/tenants $(BUILD)/tests/net/host $(BUILD)/tests/bench/loss_bench: $(IMPAIR_SKEL)

# tests/bench/stack_cost's AF_XDP receiver (a redirect to an XSKMAP): object and skeleton.
SC_XSK_SKEL := $(BUILD)/tests/bench/bpf/stack_cost_xsk.skel.h
$(BUILD)/tests/bench/bpf/stack_cost_xsk.bpf.o: tests/bench/bpf/stack_cost_xsk.bpf.c
	@mkdir -p $(@D)
	$(CLANG) $(BPF_CFLAGS) -c -o $@ $<
$(SC_XSK_SKEL): $(BUILD)/tests/bench/bpf/stack_cost_xsk.bpf.o
	$(BPFTOOL) gen skeleton $< name stack_cost_xsk > $@.tmp && mv $@.tmp $@
$(BUILD)/tests/bench/stack_cost: $(SC_XSK_SKEL)

# Only what includes generated headers (BPF skeletons) waits for them.
$(filter $(BUILD)/user/lib/dp/xdp%,$(LIB_OBJS)) $(filter $(BUILD)/tests/bpf/% $(BUILD)/tests/bench/xdp%,\
	$(TEST_BINS) $(BENCH_BINS)): $(GEN_DEPS)

.PHONY: all deps check demo bench clean corpus memory-plot
all: $(ALL_TARGETS)

deps:
	@scripts/deps.sh build

$(BUILD)/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -MMD -MP -c -o $@ $<

# Made anew: a member whose source moved away must not stay behind.
$(LIB): $(LIB_OBJS)
	@rm -f $@
	$(AR) rcs $@ $^

# The library's objects are position-independent, so the shared one can reuse them.
$(LIB_OBJS): private CFLAGS += -fPIC
# The float codec's loops are written for the vectoriser; it needs the dynamic cost model and
# compares free of traps (inagg never reads floating-point exceptions).
$(BUILD)/user/lib/host/api_float.o: private CFLAGS += -ftree-vectorize -fvect-cost-model=dynamic \
	-fno-trapping-math
$(SO): $(SO_OBJS) user/lib/host/api.map
	$(CC) $(CFLAGS) $(LDFLAGS) -shared -Wl,--version-script=user/lib/host/api.map -Wl,-soname,libinagg.so.1 \
		-o $@ $(SO_OBJS) -ljson-c -lm

# Programs and tests see every folder of the library (private: not passed on to the
# library's objects they depend on, which see only what lib.mk allows).
$(BUILD)/user/inagg/%.o $(BUILD)/user/inaggd/%.o $(BUILD)/user/agent/%.o $(BUILD)/tests/%: \
	private CFLAGS += $(LIB_INC)
$(CLI_SRCS:%.c=$(BUILD)/%.o): CFLAGS += -Iuser/inagg/eval
$(CLI): $(CLI_SRCS:%.c=$(BUILD)/%.o) $(LIB)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(KSELFTEST):
	scripts/kselftest.sh $(@D)

# docs/memory.md's picture, from the history tests/net/tenants.c leaves (or MEMORY_HISTORY).
MEMORY_HISTORY ?= $(BUILD)/test-logs/memory-history.json
memory-plot:
	@scripts/deps.sh demo
	scripts/memory-plot.sh $(MEMORY_HISTORY) docs/memory-history.svg s2 s0

# Word count's corpus (docs/apps.md): extracted once, never committed.
corpus: $(BUILD)/corpus/Documentation
$(BUILD)/corpus/Documentation:
	scripts/corpus.sh $(BUILD)/corpus

# Fixtures the tests share are headers in tests/lib/.
$(BUILD)/tests/%: tests/%.c $(LIB) $(KSELFTEST)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -Itests/lib -I$(BUILD)/kselftest -MMD -MP -o $@ $< $(TEST_OBJS) $(LIB) $(LDLIBS)

# The evaluation harness is the CLI's code; its tests link it.
EVAL_OBJS := $(patsubst %.c,$(BUILD)/%.o,$(wildcard user/inagg/eval/*.c))
EVAL_TESTS := $(BUILD)/tests/unit/eval_live $(BUILD)/tests/unit/apps
$(EVAL_TESTS): TEST_OBJS = $(EVAL_OBJS)
$(EVAL_TESTS): private CFLAGS += -Iuser/inagg/eval
$(EVAL_TESTS): $(EVAL_OBJS)

# The pinned maps' layout is checked against the BPF objects' own BTF (tests/unit/maps_layout.c).
$(BUILD)/tests/unit/maps_layout: $(GEN_DEPS)
# The CLI's option tables are tested on their own (tests/unit/cli_opt.c).
$(BUILD)/tests/unit/cli_opt: TEST_OBJS = $(BUILD)/user/inagg/opt.o $(BUILD)/user/inagg/out.o
$(BUILD)/tests/unit/cli_opt: $(BUILD)/user/inagg/opt.o $(BUILD)/user/inagg/out.o

check:
	@scripts/deps.sh check
	@$(MAKE) --no-print-directory all $(TEST_BINS) $(VM_TEST_BINS) $(CHECK_DEPS)
	@scripts/run-tests.sh $(BUILD) $(TEST_LAYERS)

demo:
	@scripts/deps.sh demo
	@$(MAKE) --no-print-directory all
	@scripts/demo.sh $(BUILD)

bench:
	@scripts/deps.sh bench
	@$(MAKE) --no-print-directory all $(BENCH_BINS) $(BENCH_DEPS)
	@for b in $(BENCH_BINS); do echo "== $$b"; $$b || exit 1; done
	@for b in $(wildcard tests/bench/*.sh); do echo "== $$b"; BUILD=$(BUILD) bash $$b || exit 1; done

clean:
	rm -rf $(BUILD)

# (build/pkg holds a Debian root: not searched.)
-include $(shell find $(BUILD) -path $(BUILD)/pkg -prune -o -name '*.d' -type f -print 2>/dev/null)
