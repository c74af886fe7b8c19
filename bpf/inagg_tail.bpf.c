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

char LICENSE[] SEC("license") = "GPL";

/*
 * Tail-called by ia_xdp (ia_progs): a PS job's upward message.
 */
SEC("xdp")
int ia_tail(struct xdp_md *ctx)
{
	struct ia_member *m;
	struct ia_pkt k;
	int v;

	v = parse_again(ctx, &k);
	if (v != IA_OURS)
		return v;
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
	int v;

	v = parse_again(ctx, &k);
	if (v != IA_OURS)
		return v;
	m = up_member(&k, &v);
	if (!m)
		return v;
	if (k.cfg->role == IA_ROLE_BLUE)
		return head_aggregate(&k, m, 1);
	return forward_up(&k);
}


/* As in inagg.bpf.c: the inner maps' value types whole in BTF (never loaded). */
SEC("?xdp")
int ia_btf_types(struct xdp_md *ctx)
{
	volatile __u32 id = __builtin_btf_type_id(*(struct ia_slot *)0, 0);

	id = __builtin_btf_type_id(*(struct ia_job_ent *)0, 0);
	id = __builtin_btf_type_id(*(struct ia_mslot *)0, 0);
	id = __builtin_btf_type_id(*(struct ia_tail_dir *)0, 0);
	(void)id;
	return XDP_PASS;
}
