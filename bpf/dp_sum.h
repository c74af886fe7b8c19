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
 * Whole blocks of IA_SUM_BLOCK elements take one packet bounds check each,
 * the rest one per element: a chunk of 256, 512 or 768 elements runs the
 * fast loop only (full unrolling halves the rate, so unroll_count). The
 * element index must come from a constant-bounded loop for the verifier,
 * hence blocks rather than a loop up to n.
 */
#define IA_SUM_BLOCK	256

static __always_inline void sum_apply(__u32 *sum, __u32 *pl, void *end, __u32 n, int op)
{
	__u32 b, i;

	for (b = 0; b < IA_MAX_ELEMS / IA_SUM_BLOCK; b++) {
		__u32 *p = pl + b * IA_SUM_BLOCK, *s = sum + b * IA_SUM_BLOCK;

		if (n < (b + 1) * IA_SUM_BLOCK || (void *)(p + IA_SUM_BLOCK) > end)
			break;
#pragma clang loop unroll_count(8)
		for (i = 0; i < IA_SUM_BLOCK; i++)
			elem_apply(s, p, i, op);
	}
	for (i = b * IA_SUM_BLOCK; i < IA_MAX_ELEMS; i++) {
		if (i >= n || (void *)(pl + i + 1) > end)
			break;
		elem_apply(sum, pl, i, op);
	}
}

#endif /* INAGG_DP_SUM_H */
