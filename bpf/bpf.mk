# SPDX-License-Identifier: GPL-2.0
# XDP datapath: bpf/*.bpf.c -> $(BUILD)/bpf/*.bpf.o -> $(BUILD)/bpf/*.skel.h
# Included by the top-level Makefile.

BPF_SRCS	:= $(wildcard bpf/*.bpf.c)
BPF_OBJS	:= $(BPF_SRCS:%.bpf.c=$(BUILD)/%.bpf.o)
BPF_SKELS	:= $(BPF_SRCS:%.bpf.c=$(BUILD)/%.skel.h)
BPF_ARCH_INC	:= $(shell $(CC) -print-multiarch 2>/dev/null)
# The objects' BTF names their source files, and the skeletons embed the objects in
# the programs: paths relative to the tree, so that a package does not depend on
# where it was built (tests/pkg/repro.sh), as dpkg-buildflags does for the C code.
BPF_CFLAGS	:= -O2 -g -target bpf -Wall -Wno-unused-function -Iinclude \
		   $(if $(BPF_ARCH_INC),-I/usr/include/$(BPF_ARCH_INC)) \
		   -ffile-prefix-map=$(CURDIR)=.
BPFTOOL		?= bpftool

$(BUILD)/bpf/%.bpf.o: bpf/%.bpf.c $(wildcard include/inagg/*.h bpf/*.h)
	@mkdir -p $(@D)
	$(CLANG) $(BPF_CFLAGS) -c -o $@ $<

$(BUILD)/bpf/%.skel.h: $(BUILD)/bpf/%.bpf.o
	$(BPFTOOL) gen skeleton $< name $(notdir $*) > $@.$$$$.tmp && mv $@.$$$$.tmp $@

GEN_DEPS	+= $(BPF_SKELS)
ALL_TARGETS	+= $(BPF_OBJS)

# The bench's same-run baseline of the blue datapath (tests/bench/xdp_bench.c): bpf/ as of
# BENCH_BASE, the last commit before tail aggregation, built against today's include/ (same
# map layouts, so it runs on the bench switch's maps).
BENCH_BASE	:= f776737
$(BUILD)/bpf/base/inagg.bpf.o: $(wildcard include/inagg/*.h)
	@rm -rf $(BUILD)/bpf/base/src && mkdir -p $(BUILD)/bpf/base/src
	git archive $(BENCH_BASE) bpf | tar -x -C $(BUILD)/bpf/base/src
	$(CLANG) $(BPF_CFLAGS) -c -o $@ $(BUILD)/bpf/base/src/bpf/inagg.bpf.c

BENCH_DEPS	+= $(BUILD)/bpf/base/inagg.bpf.o
