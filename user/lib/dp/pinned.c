// SPDX-License-Identifier: GPL-2.0
/* Reading a switch's pinned maps; see pinned.h. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "pinned.h"

static int by_id(const void *a, const void *b)
{
	const struct ia_pinned_job *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

int ia_pinned_layout(const char *sw)
{
	__u32 key = 0, val = 0;
	char path[PATH_MAX];
	int fd, err;

	if (!sw || !*sw || strchr(sw, '/') || !strcmp(sw, ".") || !strcmp(sw, ".."))
		return -EINVAL;
	if ((size_t)snprintf(path, sizeof(path), "%s/%s/ia_layout", IA_BPFFS_ROOT, sw) >=
	    sizeof(path))
		return -ENAMETOOLONG;
	fd = bpf_obj_get(path);
	if (fd < 0) {
		err = -errno;
		/* Maps but no ia_layout: an older package's set. */
		if (err == -ENOENT && (size_t)snprintf(path, sizeof(path), "%s/%s/ia_jobs",
						       IA_BPFFS_ROOT, sw) < sizeof(path) &&
		    !access(path, F_OK))
			err = -ESTALE;
		return err;
	}
	/* ia_layout is an ARRAY[1] of __u32 in every version (xdp_pin.c). */
	err = bpf_map_lookup_elem(fd, &key, &val) ? -errno : 0;
	close(fd);
	return err ?: val == IA_MAPS_LAYOUT ? 0 : -ESTALE;
}

int ia_pinned_jobs(const char *sw, struct ia_pinned_job **jobs, size_t *n)
{
	struct ia_pinned_job *v = NULL, *nv;
	char path[PATH_MAX];
	size_t cap = 0;
	__u32 key, *prev = NULL;
	int fd, ret = 0;

	*jobs = NULL;
	*n = 0;
	if (!sw || !*sw || strchr(sw, '/') || !strcmp(sw, ".") || !strcmp(sw, ".."))
		return -EINVAL;
	if ((size_t)snprintf(path, sizeof(path), "%s/%s/ia_jobs", IA_BPFFS_ROOT, sw) >=
	    sizeof(path))
		return -ENAMETOOLONG;
	/* Another version's ia_job_cfg is not ours to read (nor, if larger, to copy). */
	ret = ia_pinned_layout(sw);
	if (ret)
		return ret;
	fd = bpf_obj_get(path);
	if (fd < 0)
		return -errno;
	while (!bpf_map_get_next_key(fd, prev, &key)) {
		if (*n == cap) {
			cap = cap ? 2 * cap : 16;
			nv = realloc(v, cap * sizeof(*v));
			if (!nv) {
				ret = -ENOMEM;
				break;
			}
			v = nv;
		}
		/* A job deleted between the two calls is simply not listed. */
		if (!bpf_map_lookup_elem(fd, &key, &v[*n].cfg))
			v[(*n)++].id = key;
		prev = &key;
	}
	close(fd);
	if (ret) {
		free(v);
		*n = 0;
		return ret;
	}
	/* No job: v may be NULL, which qsort() must not get even for 0 elements. */
	if (*n)
		qsort(v, *n, sizeof(*v), by_id);
	*jobs = v;
	return 0;
}
