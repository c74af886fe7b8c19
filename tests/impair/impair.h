/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Loss and duplication on a host's link for tests and benchmarks, by the tc
 * programs of tests/impair/impair.bpf.c on the host's interface (both
 * directions). Rates can change between runs without reattaching.
 */
#ifndef INAGG_TESTS_IMPAIR_H
#define INAGG_TESTS_IMPAIR_H

#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <sched.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "tests/impair/impair.skel.h"

struct impair {
	struct impair_bpf *skel;
};

struct impair_counts {
	uint64_t seen, dropped, cloned;		/* inagg frames, both directions */
};

/* Sets drop and duplication probabilities (parts per million) of both directions. */
static inline void impair_set(struct impair *im, uint32_t loss_ppm, uint32_t dup_ppm)
{
	for (int d = 0; d < 2; d++) {
		im->skel->bss->loss_ppm[d] = loss_ppm;
		im->skel->bss->dup_ppm[d] = dup_ppm;
	}
}

static inline void impair_counts(const struct impair *im, struct impair_counts *c)
{
	memset(c, 0, sizeof(*c));
	for (int d = 0; d < 2; d++) {
		c->seen += im->skel->bss->seen[d];
		c->dropped += im->skel->bss->dropped[d];
		c->cloned += im->skel->bss->cloned[d];
	}
}

/* clsact on ifindex with prog_fd at both hooks, egress first. */
static inline int impair_hooks(int ifindex, int egress_fd, int ingress_fd)
{
	DECLARE_LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = ifindex,
			    .attach_point = BPF_TC_INGRESS | BPF_TC_EGRESS);
	DECLARE_LIBBPF_OPTS(bpf_tc_opts, opts, .handle = 1, .priority = 1, .prog_fd = egress_fd);
	int ret = bpf_tc_hook_create(&hook);

	if (ret && ret != -EEXIST)
		return ret;
	hook.attach_point = BPF_TC_EGRESS;
	ret = bpf_tc_attach(&hook, &opts);
	if (ret)
		return ret;
	hook.attach_point = BPF_TC_INGRESS;
	opts.prog_fd = ingress_fd;
	opts.prog_id = 0;
	return bpf_tc_attach(&hook, &opts);
}

/*
 * Attaches to interface ifname of namespace ns (a name under /run/netns; the
 * calling thread returns to its own namespace). Frames pass unharmed until
 * impair_set(). The programs stay attached until the namespace is deleted or
 * impair_destroy(). 0 or -errno.
 */
static inline int impair_attach(struct impair *im, const char *ns, const char *ifname,
				uint64_t seed)
{
	char path[256];
	int self, fd, ifindex, ret;

	im->skel = impair_bpf__open_and_load();
	if (!im->skel)
		return -errno ? -errno : -EINVAL;
	im->skel->bss->seed = seed;
	self = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	snprintf(path, sizeof(path), "/run/netns/%s", ns);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (self < 0 || fd < 0 || setns(fd, CLONE_NEWNET)) {
		ret = -errno;
		goto out;
	}
	ifindex = if_nametoindex(ifname);
	ret = ifindex ? 0 : -errno;
	if (!ret)
		ret = impair_hooks(ifindex, bpf_program__fd(im->skel->progs.impair_egress),
				   bpf_program__fd(im->skel->progs.impair_ingress));
	if (setns(self, CLONE_NEWNET) && !ret)
		ret = -errno;
out:
	if (fd >= 0)
		close(fd);
	if (self >= 0)
		close(self);
	if (ret) {
		impair_bpf__destroy(im->skel);
		im->skel = NULL;
	}
	return ret;
}

/* Frees the programs (the filters go with the namespace). */
static inline void impair_destroy(struct impair *im)
{
	impair_bpf__destroy(im->skel);
	im->skel = NULL;
}

/* Stops and frees im[0..n-1]; what they dropped and cloned is added to *sum. */
static inline void impair_destroy_all(struct impair *im, int n, struct impair_counts *sum)
{
	struct impair_counts c;

	for (int i = 0; i < n; i++) {
		impair_counts(&im[i], &c);
		sum->dropped += c.dropped;
		sum->cloned += c.cloned;
		impair_set(&im[i], 0, 0);
		impair_destroy(&im[i]);
	}
}

#endif
