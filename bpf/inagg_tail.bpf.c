// SPDX-License-Identifier: GPL-2.0
/*
 * The tail's programs (docs/memory.md), tail-called by ia_xdp through
 * ia_progs: each is verified on its own (in one program the element loops
 * took the verifier past its budget), and the loader loads them, on the
 * switch's maps, only when a switch first uses the tail (ia_xdp_tail_set,
 * a tail job): switches without PS jobs pay nothing for them at load.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include "dp_maps.h"
#include "dp_lookup.h"
#include "dp_parse.h"
#include "dp_send.h"
#include "dp_head.h"
#include "dp_tail.h"
#include "dp_btf.h"

char LICENSE[] SEC("license") = "GPL";

/*
 * Tail-called by ia_xdp (ia_progs) with a PS job's message, before it
 * checked the sender: that happens here, once.
 */
SEC("xdp")
int ia_tail(struct xdp_md *ctx)
{
	struct ia_member *m;
	struct ia_pkt k;
	int v;

	if (parse_tailed(ctx, &k) != IA_OURS)
		return XDP_DROP;
	m = up_member(&k, &v);
	if (!m)
		return v;
	if (k.cfg->role == IA_ROLE_TAIL)
		return tail_up(&k, m);
	return forward_up(&k);
}

/* Tail-called by ia_xdp (ia_progs): a blue job's message whose head slot a PS job holds. */
SEC("xdp")
int ia_evict(struct xdp_md *ctx)
{
	struct ia_member *m;
	struct ia_pkt k;

	if (parse_tailed(ctx, &k) != IA_OURS)
		return XDP_DROP;
	if (k.cfg->role != IA_ROLE_BLUE)
		return forward_up(&k);	/* changed meanwhile */
	m = member(k.cfg, k.job, bpf_ntohl(HDR32(k.h, sender)));
	if (!m)
		return XDP_DROP;
	return head_aggregate(&k, m, 1);
}
