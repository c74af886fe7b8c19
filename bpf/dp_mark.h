/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Congestion marks for traffic that bypasses the qdisc (docs/cc.md): each
 * port has a virtual egress queue (ia_vq, struct ia_vq in maps.h) that every
 * inagg message leaving by the port fills with its frame's bytes and that
 * drains at the port's configured rate. A message that leaves while more
 * than the threshold is queued is marked: IA_F_MARK in its header, and IP CE
 * if its IP header says ECT. The same account serves XDP-redirected
 * messages and those forwarded by the kernel (it is kept before the verdict).
 * Blue and tail switches OR marks into aggregates; the PS into results.
 */
#ifndef INAGG_DP_MARK_H
#define INAGG_DP_MARK_H

#include <linux/ip.h>
#include <linux/udp.h>
#include <linux/if_ether.h>
#include <bpf/bpf_endian.h>

#include "dp_lookup.h"

#define IA_ECN_MASK	0x3	/* low bits of the IP TOS: Not-ECT 0, ECT 1 or 2, CE 3 */
#define IA_ECN_CE	0x3

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, IA_MAX_PORTS + 1);	/* by port index; 0 is no port */
	__type(key, __u32);
	__type(value, struct ia_vq);
} ia_vq SEC(".maps");

/*
 * Accounts len bytes leaving by ifindex; 1 if the message finds the queue
 * above threshold: K, or K >> IA_VQ_EARLY_SHIFT for a job that yields early
 * (IA_JOB_F_MARK_EARLY: flexina's PS jobs).
 */
static __always_inline int vq_over(__u32 ifindex, __u64 len, int early)
{
	__u32 idx = port_index(ifindex);
	__u64 now, fin, cost;
	struct ia_vq *q;
	int over;

	if (!idx)
		return 0;
	q = bpf_map_lookup_elem(&ia_vq, &idx);
	if (!q || !q->ps_per_byte)
		return 0;
	now = bpf_ktime_get_ns();
	bpf_spin_lock(&q->lock);
	fin = q->finish > now ? q->finish : now;
	if (fin - now < q->limit_ns) {
		cost = q->rem_ps + len * q->ps_per_byte;
		fin += cost / 1000;
		q->rem_ps = cost % 1000;
		q->finish = fin;
	} else {
		q->full++;	/* a real buffer would drop it: the backlog stays bounded */
	}
	over = fin - now > (early ? q->thresh_ns >> IA_VQ_EARLY_SHIFT : q->thresh_ns);
	q->msgs++;
	q->bytes += len;
	q->marked += over;
	bpf_spin_unlock(&q->lock);
	return over;
}

/*
 * A frame that is not inagg's leaving by ifindex (ia_other): queued like a
 * message, so that cross traffic congests inagg's as a real queue would;
 * never marked here. Apart from vq_over() so that ia_xdp's code stays as
 * verified.
 */
static __always_inline void vq_other(__u32 ifindex, __u64 len)
{
	__u32 idx = port_index(ifindex);
	__u64 now, fin, cost;
	struct ia_vq *q;

	if (!idx)
		return;
	q = bpf_map_lookup_elem(&ia_vq, &idx);
	if (!q || !q->ps_per_byte)
		return;
	now = bpf_ktime_get_ns();
	bpf_spin_lock(&q->lock);
	fin = q->finish > now ? q->finish : now;
	if (fin - now < q->limit_ns) {
		cost = q->rem_ps + len * q->ps_per_byte;
		q->finish = fin + cost / 1000;
		q->rem_ps = cost % 1000;
	} else {
		q->other_full++;
	}
	q->other++;
	q->other_bytes += len;
	bpf_spin_unlock(&q->lock);
}

/* IA_F_MARK, and CE where the sender asked for ECN (RFC 1624 checksum update). */
static __always_inline void mark_msg(struct iphdr *ip, struct udphdr *udp, struct ia_hdr *h)
{
	__u16 *w = (__u16 *)ip, old = w[0];
	__u32 s;

	h->flags |= IA_F_MARK;
	udp->check = 0;		/* the header changed; zero is valid for UDP/IPv4 */
	if (!(ip->tos & IA_ECN_MASK))
		return;
	ip->tos |= IA_ECN_CE;
	s = (__u16)~ip->check + (__u16)~old + w[0];
	s = (s & 0xffff) + (s >> 16);
	s = (s & 0xffff) + (s >> 16);
	ip->check = (__u16)~s;
}

/* The hook of every send path: a message about to leave by ifindex. */
static __always_inline void mark_egress(struct iphdr *ip, struct udphdr *udp, struct ia_hdr *h,
					__u32 ifindex, __u32 jflags)
{
	if (vq_over(ifindex, sizeof(struct ethhdr) + bpf_ntohs(ip->tot_len),
		    jflags & IA_JOB_F_MARK_EARLY))
		mark_msg(ip, udp, h);
}

#endif /* INAGG_DP_MARK_H */
