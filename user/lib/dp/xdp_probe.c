// SPDX-License-Identifier: GPL-2.0
/* The kernel's BPF features the datapath needs, probed before a load (xdp_int.h). */
#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>
#include <sys/utsname.h>
#include <bpf/bpf.h>

#include "xdp_int.h"

/* What the datapath needs, in the order probed: map types, then XDP helpers. */
static const struct need {
	bool helper;		/* id is an enum bpf_func_id, else an enum bpf_map_type */
	int id;
	const char *what;
} needs[] = {
	{ false, BPF_MAP_TYPE_HASH,		"hash maps" },
	{ false, BPF_MAP_TYPE_ARRAY,		"array maps" },
	{ false, BPF_MAP_TYPE_PERCPU_ARRAY,	"per-CPU array maps (Linux 4.6)" },
	{ false, BPF_MAP_TYPE_ARRAY_OF_MAPS,	"array-of-maps maps (Linux 4.12)" },
	{ false, BPF_MAP_TYPE_DEVMAP_HASH,	"devmap-hash maps (Linux 5.4)" },
	{ true, BPF_FUNC_redirect_map,		"bpf_redirect_map() in XDP (Linux 4.14)" },
	{ true, BPF_FUNC_spin_lock,		"bpf_spin_lock() in XDP (Linux 5.1)" },
};

static int missing(const char *what, char *why, size_t whylen)
{
	struct utsname u;

	if (uname(&u))
		strcpy(u.release, "?");
	return ia_fail(why, whylen, -EOPNOTSUPP, "this kernel (%s) lacks %s, which the inagg "
		       "datapath needs (Linux 5.15 or later; Debian 12's 6.1 works)",
		       u.release, what);
}

static int probe_failed(int err, char *why, size_t whylen)
{
	return ia_fail(why, whylen, err, "probing the kernel's BPF features: %s (root, or CAP_BPF "
		       "and CAP_NET_ADMIN, needed)", ia_xdp_errname(err));
}

/* Names what this kernel lacks, instead of an errno from deep inside a load. */
int ia_xdp_probe_features(char *why, size_t whylen)
{
	size_t i;
	int r, fd;

	r = libbpf_probe_bpf_prog_type(BPF_PROG_TYPE_XDP, NULL);
	if (r <= 0)
		return r ? probe_failed(r, why, whylen) :
			   missing("XDP programs (Linux 4.8)", why, whylen);
	for (i = 0; i < sizeof(needs) / sizeof(needs[0]); i++) {
		r = needs[i].helper ? libbpf_probe_bpf_helper(BPF_PROG_TYPE_XDP, needs[i].id, NULL) :
				      libbpf_probe_bpf_map_type(needs[i].id, NULL);
		if (r <= 0)
			return r ? probe_failed(r, why, whylen) :
				   missing(needs[i].what, why, whylen);
	}
	/* Devmap entries that run a program (ia_egress) have a larger value. */
	fd = bpf_map_create(BPF_MAP_TYPE_DEVMAP_HASH, NULL, sizeof(__u32),
			    sizeof(struct bpf_devmap_val), 1, NULL);
	if (fd < 0)
		return fd == -EINVAL ?
		       missing("programs on devmap entries (Linux 5.8)", why, whylen) :
		       probe_failed(fd, why, whylen);
	close(fd);
	return 0;
}

