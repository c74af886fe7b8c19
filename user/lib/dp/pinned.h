/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Reading a switch's pinned maps (IA_BPFFS_ROOT/<switch>/) without loading
 * the datapath: what any process may ask of a running switch.
 */
#ifndef INAGG_PINNED_H
#define INAGG_PINNED_H

#include <stddef.h>
#include <linux/types.h>

#include "inagg/maps.h"

/* A job as configured in a switch's ia_jobs map. */
struct ia_pinned_job {
	__u32 id;
	struct ia_job_cfg cfg;
};

/*
 * 0 if switch sw's maps have this build's layout (IA_MAPS_LAYOUT, in their
 * ia_layout), -ESTALE if another version pinned them (its layout, or maps but
 * no ia_layout: an older package), -ENOENT when nothing is pinned. The
 * readers below check it: another layout's values are not theirs to read.
 */
int ia_pinned_layout(const char *sw);

/*
 * The jobs configured at switch sw, sorted by id, into *jobs (malloc'd, free
 * it; NULL when there are none). -ENOENT when the switch has no pinned maps,
 * -ESTALE when another version's, -EINVAL for a name that cannot be a switch.
 */
int ia_pinned_jobs(const char *sw, struct ia_pinned_job **jobs, size_t *n);

/*
 * The counters of port ifindex at switch sw (ia_pstats, summed over CPUs) into
 * *out: what its frames came to since it was attached. -ENOENT when the
 * switch has no pinned maps or the port is not one of its own.
 */
int ia_pinned_port_counters(const char *sw, int ifindex, struct ia_counters *out);

#endif
