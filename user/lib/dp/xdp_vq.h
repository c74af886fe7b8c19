/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Ports' virtual queues (bpf/dp_mark.h, docs/cc.md): the congestion signal
 * of traffic the qdisc never sees. Each port of a switch may be given a
 * drain rate and a threshold; every inagg message leaving by the port adds
 * its frame to the port's queue, and one that finds more than the threshold
 * queued is marked (IA_F_MARK; IP CE if the sender set ECT); other traffic
 * forwarded by the kernel fills the queue too (cross traffic). Functions
 * return 0 or a negative errno, like the rest of xdp.h.
 */
#ifndef INAGG_XDP_VQ_H
#define INAGG_XDP_VQ_H

#include "xdp.h"

struct ia_xdp_vq {
	__u64	rate_bps;	/* drain rate, bit/s of whole frames; 0: no queue, no marks */
	__u32	thresh;		/* bytes queued above which a message is marked */
	__u64	limit;		/* bytes queued at most (0: max(4 thresh, thresh + 64 KiB)) */
};

struct ia_xdp_vq_info {
	struct ia_xdp_vq cfg;	/* as set (limit with its default applied) */
	__u64	backlog;	/* bytes queued now */
	__u64	msgs;		/* messages accounted since the rate was set */
	__u64	bytes;
	__u64	marked;		/* of which marked */
	__u64	full;		/* of which found the queue at its limit */
	/* Frames not inagg's the kernel forwarded by the port (cross traffic, queued only). */
	__u64	other;
	__u64	other_bytes;
	__u64	other_full;	/* of which found the queue at its limit */
};

#define IA_VQ_RATE_MAX	8000000000000ull	/* 8 Tbit/s: one picosecond per byte */

/*
 * Sets ifindex's queue, empty and with its counters at zero (the port must
 * be added): -EINVAL for a rate above IA_VQ_RATE_MAX or a limit not above
 * the threshold, -ENOENT for a port the switch does not have. The first
 * queue of a switch loads ia_other (bpf/inagg_other.bpf.c): from then on the
 * frames the switch passes to the kernel fill the queue of the port the
 * kernel forwards them by.
 */
/* why, whylen: the caller's error buffer (xdp.h). */
int ia_xdp_vq_set(struct ia_xdp *x, int ifindex, const struct ia_xdp_vq *q, char *why,
		  size_t whylen);
int ia_xdp_vq_get(struct ia_xdp *x, int ifindex, struct ia_xdp_vq_info *out);

#endif
