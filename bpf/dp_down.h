/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Down-tree replication of results: a RESULT from the job's up port is
 * broadcast over the switch's ports (ia_dports); the egress program on
 * each keeps it only where the job has workers below, rewritten for the
 * next hop there.
 */
#ifndef INAGG_DP_DOWN_H
#define INAGG_DP_DOWN_H

#include "dp_send.h"

/* A result result_from_up() let in: counted and broadcast. */
static __always_inline int result_in(struct ia_pkt *k)
{
	ctr(k->p, IA_C_RESULT);
	ctr(k->j, IA_C_RESULT);
	/* Results minus these are the chunks the job completed (inagg stats show). */
	if (k->h->flags & (IA_F_RETX | IA_F_NACK)) {
		ctr(k->p, IA_C_RESULT_EXTRA);
		ctr(k->j, IA_C_RESULT_EXTRA);
	}
	return bpf_redirect_map(&ia_dports, 0, BPF_F_BROADCAST | BPF_F_EXCLUDE_INGRESS);
}

/*
 * A blue switch answers a member's resend of a chunk whose result it holds
 * (dp_head.h): the frame, whose payload is now that result, goes back out
 * of the port it came in by as a RESULT flagged sent again (IA_F_RETX),
 * rewritten as result_out() would for that port. Below, a red switch
 * replicates it to its workers like any result.
 */
static __always_inline int send_answer(struct ia_pkt *k, __u32 nworkers, __u8 flags)
{
	struct ia_down_key dk = { .job = k->job, .ifindex = k->ctx->ingress_ifindex };
	struct iphdr *ip = k->ip;
	struct ia_hdr *h = k->h;
	struct ia_down *d;
	__be32 from = ip->saddr;

	d = bpf_map_lookup_elem(&ia_down, &dk);
	if (!d)
		return drop(k->p, k->j, IA_C_DROP_TYPE);	/* a member where no result goes */
	/* Only now: a frame has one outcome, and a drop is not an answer. */
	ctr(k->j, IA_C_ANSWER);
	h->type = IA_MSG_RESULT;
	HDR32(h, sender) = bpf_htonl(k->cfg->self_id);
	HDR32(h, nworkers) = bpf_htonl(nworkers);
	h->flags = flags | IA_F_RETX;
	set_macs(k->eth, d->smac, d->dmac);
	ip->saddr = ip->daddr;
	ip->daddr = d->daddr ? d->daddr : from;
	ip_csum(ip);
	k->udp->check = 0;
	mark_egress(ip, k->udp, h, dk.ifindex, k->cfg->flags);
	ctr(k->j, IA_C_TX);
	ctr(k->p, IA_C_TX);
	return XDP_TX;
}

static __always_inline int result_out(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	struct iphdr *ip = data + sizeof(*eth);
	struct udphdr *udp = (void *)(ip + 1);
	struct ia_hdr *h = (void *)(udp + 1);
	struct ia_job_cfg *cfg;
	struct ia_down_key k;
	struct ia_down *d;

	if ((void *)(h + 1) > end || h->type != IA_MSG_RESULT)
		return XDP_PASS;
	k.job = bpf_ntohl(HDR32(h, job));
	k.ifindex = ctx->egress_ifindex;
	d = bpf_map_lookup_elem(&ia_down, &k);
	if (!d)
		return XDP_DROP;	/* no worker of this job behind this port */
	set_macs(eth, d->smac, d->dmac);
	if (d->daddr) {
		ip->daddr = d->daddr;
		ip_csum(ip);
		udp->check = 0;
	}
	cfg = job_cfg(k.job);
	mark_egress(ip, udp, h, k.ifindex, cfg ? cfg->flags : 0);
	ctr(pstats(k.ifindex), IA_C_TX);
	if (cfg)
		ctr(jstats(cfg), IA_C_TX);
	return XDP_PASS;
}

#endif /* INAGG_DP_DOWN_H */
