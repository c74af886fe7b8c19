// SPDX-License-Identifier: GPL-2.0
/* A port's counters from a switch's pinned maps; see pinned.h. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "pinned.h"

static int pinned_map(const char *sw, const char *name)
{
	char path[PATH_MAX];
	int fd;

	if (!sw || !*sw || strchr(sw, '/') || !strcmp(sw, ".") || !strcmp(sw, ".."))
		return -EINVAL;
	if ((size_t)snprintf(path, sizeof(path), "%s/%s/%s", IA_BPFFS_ROOT, sw, name) >=
	    sizeof(path))
		return -ENAMETOOLONG;
	fd = bpf_obj_get(path);
	return fd < 0 ? -errno : fd;
}

/* The port index the loader gave ifindex (ia_ports, or ia_ports_far above it). */
static int port_index(const char *sw, __u32 ifindex, __u32 *idx)
{
	int fd = pinned_map(sw, ifindex < IA_PORT_DIRECT ? "ia_ports" : "ia_ports_far");
	int err;

	if (fd < 0)
		return fd;
	err = bpf_map_lookup_elem(fd, &ifindex, idx) ? -errno : 0;
	close(fd);
	/* ia_ports holds 0 for an ifindex that is no port of the switch. */
	return err ?: *idx ? 0 : -ENOENT;
}

int ia_pinned_port_counters(const char *sw, int ifindex, struct ia_counters *out)
{
	int ncpus = libbpf_num_possible_cpus(), fd, err, cpu, i;
	struct ia_counters *v;
	__u32 idx;

	if (ifindex <= 0)
		return -EINVAL;
	if (ncpus < 0)
		return ncpus;
	err = ia_pinned_layout(sw) ?: port_index(sw, ifindex, &idx);
	if (err)
		return err;
	fd = pinned_map(sw, "ia_pstats");
	if (fd < 0)
		return fd;
	/* A per-CPU map's value: one ia_counters per possible CPU, summed here. */
	v = calloc(ncpus, sizeof(*v));
	if (!v) {
		close(fd);
		return -ENOMEM;
	}
	err = bpf_map_lookup_elem(fd, &idx, v) ? -errno : 0;
	close(fd);
	if (!err) {
		memset(out, 0, sizeof(*out));
		for (cpu = 0; cpu < ncpus; cpu++)
			for (i = 0; i < IA_C__COUNT; i++)
				out->c[i] += v[cpu].c[i];
	}
	free(v);
	return err;
}
