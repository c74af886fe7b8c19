// SPDX-License-Identifier: GPL-2.0
/*
 * inagg XDP datapath: one program attached to every port of a switch.
 *
 * Upward messages (CONTRIB, AGG) of a job are forwarded to the parent
 * unchanged on a red switch, and summed into the job's aggregator slot on a
 * blue one, which sends exactly one aggregate up when all members are in.
 * Results coming down from the parent are broadcast to the switch's ports;
 * ia_egress keeps them only on the job's down-tree ports. Anything that is
 * not UDP/IPv4 to IA_UDP_PORT is passed to the kernel untouched (after
 * ia_other, inagg_other.bpf.c, counted it in its egress port's queue).
 * Layouts and semantics: include/inagg/{wire,maps}.h, docs/datapath.md.
 *
 * This file holds the programs and the dispatch only; each job of the
 * datapath is a header of its own, included here once:
 *   dp_maps.h    the maps (one set per switch, pinned by the loader)
 *   dp_lookup.h  counters; port, job and member lookups
 *   dp_parse.h   classification and validation into a struct ia_pkt
 *   dp_send.h    forwarding up, rewriting into an aggregate
 *   dp_sum.h     the element loop of every slot kind
 *   dp_flush.h   a PS partial aggregate flushed toward its PS (a swap)
 *   dp_head.h    blue: aggregation into the job's own slots
 *   dp_sparse.h  blue, sparse participation (word count's key blocks): the
 *                program ia_sparse, tail-called
 *   dp_tail.h    PS jobs: aggregation in the tail and lent head slots, in
 *                inagg_tail.bpf.c (ia_tail, ia_evict: tail-called, loaded only
 *                by switches that use the tail)
 *   dp_down.h    results: broadcast and per-port egress rewrite, and a blue
 *                switch's answer from a result it holds (ia_hold, tail-called)
 *   dp_btf.h     the inner maps' value types whole in BTF (never loaded)
 *
 * Adding a way of handling a job's messages (a role, e.g. an application's
 * own aggregation): a header bpf/dp_<what>.h with one handler
 *   static __always_inline int <what>_up(struct ia_pkt *k, const struct ia_member *m)
 * returning the XDP verdict, its role in enum ia_role and its maps' layouts
 * in include/inagg/maps.h, and one case in up_dispatch() below.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include "dp_maps.h"
#include "dp_lookup.h"
#include "dp_parse.h"
#include "dp_send.h"
#include "dp_head.h"
#include "dp_sparse.h"
#include "dp_down.h"
#include "dp_btf.h"

char LICENSE[] SEC("license") = "GPL";

/* A validated upward message from a member: handled by the job's role here. */
static __always_inline int up_dispatch(struct ia_pkt *k, const struct ia_member *m)
{
	switch (k->cfg->role) {
	case IA_ROLE_BLUE:
		if (k->cfg->flags & IA_JOB_F_SPARSE)
			return sparse_dispatch(k);
		return head_aggregate(k, m, 0);
	default:	/* red, and a PS job on a switch without ia_tail */
		return forward_up(k);
	}
}

SEC("xdp")
int ia_xdp(struct xdp_md *ctx)
{
	struct ia_member *m;
	struct ia_pkt k;
	int v;

	v = parse(ctx, &k);
	/* Not inagg's: counted in its egress port's queue (ia_other, if loaded), then passed. */
	if (v == XDP_PASS)
		bpf_tail_call(ctx, &ia_progs, IA_PROGS_OTHER);
	if (v != IA_OURS)
		return v;
	if (k.h->type == IA_MSG_RESULT) {
		/* Checked before a blue switch holds it: a forged result is never served. */
		v = result_from_up(&k);
		if (v != IA_OURS)
			return v;
		/* A blue switch keeps it for its members' resends first (ia_hold). */
		if (k.cfg->role == IA_ROLE_BLUE)
			bpf_tail_call(ctx, &ia_progs, IA_PROGS_HOLD);
		return result_in(&k);
	}
	/*
	 * A PS job's message: ia_tail (loaded with the tail, inagg_tail.bpf.c)
	 * checks the sender, once; without it the job is red here.
	 */
	if (k.cfg->role == IA_ROLE_TAIL)
		bpf_tail_call(ctx, &ia_progs, IA_PROGS_TAIL);
	m = up_member(&k, &v);
	if (!m)
		return v;
	return up_dispatch(&k, m);
}

/*
 * Tail-called by ia_xdp (ia_progs) with a result for a blue job, from where
 * results come (result_from_up(), checked there): held in
 * its chunk's slot (head_hold()), then sent down. Its own program: on 6.1
 * the element loop took ia_xdp past the verifier's budget.
 */
SEC("xdp")
int ia_hold(struct xdp_md *ctx)
{
	struct ia_pkt k;

	if (parse_tailed(ctx, &k) != IA_OURS || k.h->type != IA_MSG_RESULT)
		return XDP_DROP;
	head_hold(&k);
	return result_in(&k);
}

/*
 * Runs on each port a result is broadcast to: keeps it only on the job's
 * down-tree ports, rewritten for the next hop there.
 */
SEC("xdp/devmap")
int ia_egress(struct xdp_md *ctx)
{
	return result_out(ctx);
}

/* XDP_PASS for a host-side veth that receives redirected frames (a veth peer needs a program). */
SEC("xdp")
int ia_pass(struct xdp_md *ctx)
{
	return XDP_PASS;
}
