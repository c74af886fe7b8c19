/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The element loop shared by every kind of aggregator slot: copy a
 * payload into a slot's sums, add it, add and write the result back into
 * the packet, or write the stored sums into the packet. Sums wrap
 * (unsigned arithmetic, see wire.h).
 */
#ifndef INAGG_DP_SUM_H
#define INAGG_DP_SUM_H

#include <linux/types.h>
#include <bpf/bpf_helpers.h>

#include "inagg/wire.h"

enum sum_op {
	OP_COPY,	/* first contribution: slot = pkt */
	OP_ADD,		/* slot += pkt */
	OP_ADD_OUT,	/* last contribution: slot += pkt, pkt = slot */
	OP_OUT,		/* re-emission: pkt = slot */
	OP_SWAP,	/* a slot changes hands (a flush): slot <-> pkt */
};

static __always_inline void elem_apply(__u32 *sum, __u32 *pl, __u32 i, int op)
{
	if (op == OP_COPY)
		sum[i] = pl[i];
	else if (op == OP_ADD)
		sum[i] += pl[i];
	else if (op == OP_ADD_OUT)
		pl[i] = sum[i] += pl[i];
	else if (op == OP_OUT)
		pl[i] = sum[i];
	else {
		__u32 t = sum[i];

		sum[i] = pl[i];
		pl[i] = t;
	}
}

/*
 * A plain bounded loop: full unrolling halves the rate, and the 256-element
 * case needs one packet bounds check instead of one per element.
 */
static __always_inline void sum_apply(__u32 *sum, __u32 *pl, void *end, __u32 n, int op)
{
	__u32 i;

	if (n == IA_MAX_ELEMS && (void *)(pl + IA_MAX_ELEMS) <= end) {
#pragma clang loop unroll_count(8)
		for (i = 0; i < IA_MAX_ELEMS; i++)
			elem_apply(sum, pl, i, op);
		return;
	}
	for (i = 0; i < IA_MAX_ELEMS; i++) {
		if (i >= n || (void *)(pl + i + 1) > end)
			break;
		elem_apply(sum, pl, i, op);
	}
}

#endif /* INAGG_DP_SUM_H */
