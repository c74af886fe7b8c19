/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What a switch's aggregator memory holds right now, read from its BPF maps
 * for the daemon's memory statistics (docs/memory.md).
 */
#ifndef INAGG_XDP_MEM_H
#define INAGG_XDP_MEM_H

#include <linux/types.h>

#include "xdp.h"

/* A blue job's head at one switch. */
struct ia_xdp_head_use {
	__u32	slots;		/* its BPF slot map's size: the head */
	__u32	open;		/* holding a live aggregation (collecting contributions) */
	__u32	done;		/* holding a sent aggregate, kept for re-emission */
};

/* -ENOENT if the job is not configured here, or holds no head (red). */
int ia_xdp_head_use(struct ia_xdp *x, __u32 job, struct ia_xdp_head_use *out);

#endif
