/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Classification and validation of a received frame: what is not inagg's
 * is passed to the kernel, what is inagg's but malformed or not for a job
 * configured here is dropped and counted by reason (docs/datapath.md, the
 * table under "Switch behaviour"), in that order. What remains is a
 * struct ia_pkt, which every handler of the datapath takes.
 */
#ifndef INAGG_DP_PARSE_H
#define INAGG_DP_PARSE_H

#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/udp.h>
#include <bpf/bpf_endian.h>

#include "inagg/wire.h"
#include "dp_lookup.h"

/*
 * ia_hdr is packed (alignment 1), so its fields would be loaded byte by
 * byte; its 32-bit fields are 4-byte aligned in the frame (wire.h).
 */
#define HDR32(h, f)	(*(__be32 *)((void *)(h) + __builtin_offsetof(struct ia_hdr, f)))
#define HDR16(h, f)	(*(__be16 *)((void *)(h) + __builtin_offsetof(struct ia_hdr, f)))

/* IPv4 frag_off bits: more fragments, fragment offset (only DF may be set). */
#define IP_MF		0x2000
#define IP_OFFSET	0x1fff

/* A valid message of a job configured on this switch. */
struct ia_pkt {
	struct xdp_md *ctx;
	struct ethhdr *eth;
	struct iphdr *ip;
	struct udphdr *udp;
	struct ia_hdr *h;
	__u32 *pl;		/* nelem elements, all inside the frame */
	void *end;
	__u32 nelem;
	__u32 job;
	struct ia_job_cfg *cfg;
	struct ia_counters *p;	/* the ingress port's counters (NULL: not a port) */
	struct ia_counters *j;	/* the job's */
};

/* parse()'s "go on": any value that is not an XDP verdict. */
#define IA_OURS		(-1)

/*
 * Fills k from a frame; IA_OURS if it is a message of a configured job,
 * else the verdict for the frame (XDP_PASS: not inagg's; XDP_DROP: counted).
 */
static __always_inline int parse(struct xdp_md *ctx, struct ia_pkt *k)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	struct iphdr *ip = data + sizeof(*eth);
	struct udphdr *udp = (void *)(ip + 1);
	struct ia_hdr *h = (void *)(udp + 1);
	__u32 *pl = (void *)(h + 1);
	struct ia_counters *p;
	__u32 n, t;

	/* Classify without side effects: only UDP/IPv4 to our port is ours. */
	if ((void *)(udp + 1) > end || eth->h_proto != bpf_htons(ETH_P_IP) ||
	    ip->protocol != IPPROTO_UDP || ip->version != 4)
		goto pass;
	if (ip->ihl == 5) {
		if (udp->dest != bpf_htons(IA_UDP_PORT))
			goto pass;
	} else {
		/* UDP header elsewhere: ours only if it says so. */
		struct udphdr *u = data + sizeof(*eth) + ip->ihl * 4;

		if (ip->ihl < 5 || (void *)(u + 1) > end || u->dest != bpf_htons(IA_UDP_PORT))
			goto pass;
	}

	p = pstats(ctx->ingress_ifindex);
	ctr(p, IA_C_RX);
	/* Ours but unparsed: options move the header, later fragments carry none. */
	if (ip->ihl != 5 || (ip->frag_off & bpf_htons(IP_MF | IP_OFFSET)))
		return drop(p, NULL, IA_C_DROP_SHORT);
	if ((void *)pl > end)
		return drop(p, NULL, IA_C_DROP_SHORT);
	if (h->ver != IA_VERSION)
		return drop(p, NULL, IA_C_DROP_VERSION);
	n = bpf_ntohs(HDR16(h, nelem));
	/* A member set trailer adds IA_SET_LEN = IA_F_SET bytes (wire.h). */
	t = h->flags & IA_F_SET;
	if (n == 0 || n > IA_MAX_ELEMS || bpf_ntohs(udp->len) != IA_UDP_LEN(n) + t ||
	    bpf_ntohs(ip->tot_len) != sizeof(*ip) + IA_UDP_LEN(n) + t)
		return drop(p, NULL, IA_C_DROP_NELEM);
	if ((void *)pl + 4 * n + t > end)
		return drop(p, NULL, IA_C_DROP_SHORT);

	k->job = bpf_ntohl(HDR32(h, job));
	k->cfg = job_cfg(k->job);
	if (!k->cfg)
		return drop(p, NULL, IA_C_DROP_JOB);
	k->j = jstats(k->cfg);
	ctr(k->j, IA_C_RX);

	k->ctx = ctx;
	k->eth = eth;
	k->ip = ip;
	k->udp = udp;
	k->h = h;
	k->pl = pl;
	k->end = end;
	k->nelem = n;
	k->p = p;
	return IA_OURS;
pass:
	ctr(pstats(ctx->ingress_ifindex), IA_C_PASS);
	return XDP_PASS;
}

/*
 * In a program ia_xdp tail-called (ia_progs): the frame ia_xdp validated
 * and counted, unchanged since, read again without the checks and the
 * counting: its pointers, the bounds the verifier needs, and the job's
 * lookups. IA_OURS, or XDP_DROP if the job left meanwhile. k->p and k->j
 * are never NULL here (a frame from no port counts in ia_pstats' entry 0,
 * which nothing reads): every ctr() on them is then one path for the
 * verifier, not two for every state after it.
 */
static __always_inline int parse_tailed(struct xdp_md *ctx, struct ia_pkt *k)
{
	void *data = (void *)(long)ctx->data;
	__u32 n;

	k->ctx = ctx;
	k->end = (void *)(long)ctx->data_end;
	k->eth = data;
	k->ip = data + sizeof(struct ethhdr);
	k->udp = (void *)(k->ip + 1);
	k->h = (void *)(k->udp + 1);
	k->pl = (void *)(k->h + 1);
	if ((void *)k->pl > k->end)
		return XDP_DROP;
	n = bpf_ntohs(HDR16(k->h, nelem));
	if (n == 0 || n > IA_MAX_ELEMS || (void *)k->pl + 4 * n + (k->h->flags & IA_F_SET) > k->end)
		return XDP_DROP;
	k->nelem = n;
	k->job = bpf_ntohl(HDR32(k->h, job));
	k->cfg = job_cfg(k->job);
	if (!k->cfg)
		return XDP_DROP;
	k->j = jstats(k->cfg);
	n = port_index(ctx->ingress_ifindex);
	k->p = bpf_map_lookup_elem(&ia_pstats, &n);
	if (!k->j || !k->p)
		return XDP_DROP;
	return IA_OURS;
}

/*
 * An upward message (CONTRIB or AGG, not from the up port) from a member
 * of the job with the member's nworkers: the member entry, else NULL with
 * the drop counted and *verdict set.
 */
static __always_inline struct ia_member *up_member(struct ia_pkt *k, int *verdict)
{
	struct ia_hdr *h = k->h;
	struct ia_member *m;

	if ((h->type != IA_MSG_CONTRIB && h->type != IA_MSG_AGG) ||
	    k->ctx->ingress_ifindex == k->cfg->up_ifindex) {
		*verdict = drop(k->p, k->j, IA_C_DROP_TYPE);
		return NULL;
	}
	m = member(k->cfg, k->job, bpf_ntohl(HDR32(h, sender)));
	/* A tail job's partial aggregate carries its own set (dp_tail.h checks it). */
	if (!m || (m->nworkers != bpf_ntohl(HDR32(h, nworkers)) &&
		   !((h->flags & IA_F_SET) && k->cfg->role == IA_ROLE_TAIL))) {
		*verdict = drop(k->p, k->j, IA_C_DROP_MEMBER);
		return NULL;
	}
	/*
	 * A member is a place, not a number: its id from another port, or on a
	 * host's port from another address or UDP port, is a tenant's forgery.
	 * Checked here, before any role's work, so the drop ends the path early.
	 */
	if ((m->ifindex && m->ifindex != k->ctx->ingress_ifindex) ||
	    (m->saddr && (m->saddr != k->ip->saddr ||
			  k->udp->source != bpf_htons(IA_UDP_PORT)))) {
		*verdict = drop(k->p, k->j, IA_C_DROP_PORT);
		return NULL;
	}
	if (h->flags & IA_F_RECOVERY) {
		ctr(k->p, IA_C_RECOVERY_RX);
		ctr(k->j, IA_C_RECOVERY_RX);
	}
	return m;
}

/*
 * A downward message (RESULT) of the job: IA_OURS if it came in by the
 * job's up port (else drop_type) and, where the loader gave the PS's
 * address, from that address and IA_UDP_PORT, a port an unprivileged
 * process cannot bind while the PS holds it (else drop_port). Checked
 * before anything holds it.
 */
static __always_inline int result_from_up(struct ia_pkt *k)
{
	__be32 ps = k->cfg->ps_addr;

	if (k->ctx->ingress_ifindex != k->cfg->up_ifindex)
		return drop(k->p, k->j, IA_C_DROP_TYPE);
	if (ps && (k->ip->saddr != ps || k->udp->source != bpf_htons(IA_UDP_PORT)))
		return drop(k->p, k->j, IA_C_DROP_PORT);
	return IA_OURS;
}

#endif /* INAGG_DP_PARSE_H */
