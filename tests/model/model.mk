# SPDX-License-Identifier: GPL-2.0
# The datapath's reference model and differential fuzzer (tests/model/, docs/datapath.md
# "Reference model"). Included by the top-level Makefile.
#   tests/bpf/xdp_fuzz   make check: fixed seeds, a few seconds, and the mutant found
#   make fuzz            clean runs over a tree of three switches (fuzz_tree.c, 3 seeds),
#                        then >= 10 million frames over varied seeds, coverage table

MODEL_OBJS := $(patsubst %.c,$(BUILD)/%.o,tests/model/model.c tests/model/model_tail.c \
	      tests/model/fuzz_gen.c tests/model/fuzz_cmp.c tests/model/fuzz_run.c \
	      tests/model/fuzz_tree.c)
$(MODEL_OBJS): CFLAGS += -Itests/model

# A deliberately wrong datapath: the tail's programs with a duplicate left uncounted
# (dp_tail.h's TV_DUP case), built from a copy; the fuzzer must find it.
FUZZ_MUTANT := $(BUILD)/bpf/mutant/inagg_tail.bpf.o
$(FUZZ_MUTANT): bpf/inagg_tail.bpf.c $(wildcard include/inagg/*.h bpf/*.h)
	@rm -rf $(@D)/src && mkdir -p $(@D)/src
	cp bpf/*.h bpf/inagg_tail.bpf.c $(@D)/src/
	sed -i '/case TV_DUP:/{n;s|ctr(k->j, IA_C_DUP);|/* mutant: not counted */|}' $(@D)/src/dp_tail.h
	grep -q 'mutant: not counted' $(@D)/src/dp_tail.h
	$(CLANG) $(BPF_CFLAGS) -c -o $@ $(@D)/src/inagg_tail.bpf.c

$(BUILD)/tests/bpf/xdp_fuzz: TEST_OBJS = $(MODEL_OBJS)
$(BUILD)/tests/bpf/xdp_fuzz: CFLAGS += -Itests/model
$(BUILD)/tests/bpf/xdp_fuzz: $(MODEL_OBJS) $(FUZZ_MUTANT)
CHECK_DEPS += $(FUZZ_MUTANT)

FUZZ := $(BUILD)/tests/model/fuzz
$(FUZZ): tests/model/fuzz_main.c $(MODEL_OBJS) $(LIB) $(GEN_DEPS)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -Itests/model -o $@ $< $(MODEL_OBJS) $(LIB) $(LDLIBS)

FUZZ_FRAMES ?= 10000000
.PHONY: fuzz
fuzz: $(FUZZ)
	$(FUZZ) -n $(FUZZ_FRAMES)
