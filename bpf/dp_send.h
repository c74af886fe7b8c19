/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Sending upward: a message forwarded unchanged (red), or the frame
 * rewritten into this switch's aggregate of a chunk (blue), toward the
 * job's parent or parameter server.
 */
#ifndef INAGG_DP_SEND_H
#define INAGG_DP_SEND_H

#include "dp_parse.h"
#include "dp_mark.h"

/* Full recompute of a header without options: cheaper to reason about than incremental. */
static __always_inline void ip_csum(struct iphdr *ip)
{
	__u16 *w = (__u16 *)ip;
	__u32 s = 0;
	int i;

	ip->check = 0;
#pragma clang loop unroll(full)
	for (i = 0; i < (int)(sizeof(*ip) / sizeof(*w)); i++)
		s += w[i];
	s = (s & 0xffff) + (s >> 16);
	s = (s & 0xffff) + (s >> 16);
	ip->check = (__u16)~s;
}

static __always_inline void set_macs(struct ethhdr *eth, const __u8 *src, const __u8 *dst)
{
	__builtin_memcpy(eth->h_source, src, ETH_ALEN);
	__builtin_memcpy(eth->h_dest, dst, ETH_ALEN);
}

/* Counts the message as sent up (flags: the message's) and sends it. */
static __always_inline int send_up(struct ia_pkt *k, __u8 flags)
{
	const struct ia_job_cfg *cfg = k->cfg;
	struct ia_counters *up = pstats(cfg->up_ifindex);

	ctr(k->j, IA_C_TX);
	ctr(up, IA_C_TX);
	if (flags & IA_F_RECOVERY) {
		ctr(k->j, IA_C_RECOVERY_TX);
		ctr(up, IA_C_RECOVERY_TX);
	}
	mark_egress(k->ip, k->udp, k->h, cfg->up_ifindex, cfg->flags);
	if (cfg->flags & IA_JOB_F_KERNEL_FWD)
		return XDP_PASS;	/* routed up by the kernel, through its qdisc */
	set_macs(k->eth, cfg->up_smac, cfg->up_dmac);
	return bpf_redirect(cfg->up_ifindex, 0);
}

/* Red: the message goes on unchanged. */
static __always_inline int forward_up(struct ia_pkt *k)
{
	ctr(k->j, IA_C_FWD);
	return send_up(k, k->h->flags);
}

/*
 * The payload already holds an aggregate of nworkers workers: make the
 * frame this switch's message (type AGG, its sender id, addresses toward
 * the parent) and send it up.
 */
static __always_inline int send_aggregate(struct ia_pkt *k, __u32 nworkers, __u8 flags)
{
	const struct ia_job_cfg *cfg = k->cfg;
	struct ia_hdr *h = k->h;
	struct iphdr *ip = k->ip;

	h->type = IA_MSG_AGG;
	HDR32(h, sender) = bpf_htonl(cfg->self_id);
	HDR32(h, nworkers) = bpf_htonl(nworkers);
	h->flags = flags;
	/* The kernel drops what arrives from one of its own addresses. */
	if (cfg->up_saddr && !(cfg->flags & IA_JOB_F_KERNEL_FWD))
		ip->saddr = cfg->up_saddr;
	if (cfg->up_daddr)
		ip->daddr = cfg->up_daddr;
	ip_csum(ip);
	k->udp->check = 0;	/* payload changed; zero is valid for UDP/IPv4 */
	return send_up(k, flags);
}

#endif /* INAGG_DP_SEND_H */
