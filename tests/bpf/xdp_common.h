/* SPDX-License-Identifier: GPL-2.0 */
/* Helpers shared by the XDP datapath tests and benchmarks: frames, values, netns. */
#ifndef INAGG_TESTS_XDP_COMMON_H
#define INAGG_TESTS_XDP_COMMON_H

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/udp.h>
#include <net/if.h>
#include <endian.h>

#include "inagg/wire.h"
#include "host.h"
#include "../nstest.h"

struct frame_spec {
	__u8	smac[6], dmac[6];
	__be32	saddr, daddr;
	__u16	sport, dport;	/* host order; dport 0 = IA_UDP_PORT */
	__u8	ver, type, flags;
	__u32	job, seq, sender, nworkers;
	__u16	nelem;
	const __s32 *vals;	/* nelem values, or NULL for zeros */
};

static inline __u16 csum_ip(const struct iphdr *ip)
{
	const __u16 *w = (const __u16 *)ip;
	__u32 s = 0;
	int i;

	for (i = 0; i < 10; i++)
		if (i != 5)
			s += w[i];
	s = (s & 0xffff) + (s >> 16);
	s = (s & 0xffff) + (s >> 16);
	return (__u16)~s;
}

/* Builds Ethernet/IPv4/UDP/ia_hdr/payload into buf; returns the frame length. */
static inline int build_frame(void *buf, const struct frame_spec *f)
{
	struct ethhdr *eth = buf;
	struct iphdr *ip = (void *)(eth + 1);
	struct udphdr *udp = (void *)(ip + 1);
	struct ia_hdr *h = (void *)(udp + 1);
	__s32 *pl = (void *)(h + 1);
	int i;

	memset(buf, 0, IA_FRAME_LEN(f->nelem));
	memcpy(eth->h_source, f->smac, 6);
	memcpy(eth->h_dest, f->dmac, 6);
	eth->h_proto = htons(ETH_P_IP);
	ip->version = 4;
	ip->ihl = 5;
	ip->ttl = 64;
	ip->protocol = IPPROTO_UDP;
	ip->tot_len = htons(20 + IA_UDP_LEN(f->nelem));
	ip->saddr = f->saddr;
	ip->daddr = f->daddr;
	ip->check = csum_ip(ip);
	udp->source = htons(f->sport ? f->sport : 40000);
	udp->dest = htons(f->dport ? f->dport : IA_UDP_PORT);
	udp->len = htons(IA_UDP_LEN(f->nelem));
	ia_hdr_fill(h, f->type, f->job, f->seq, f->sender, f->nworkers, f->nelem, f->flags);
	if (f->ver)
		h->ver = f->ver;
	for (i = 0; i < f->nelem && f->vals; i++)
		pl[i] = (__s32)htole32((__u32)f->vals[i]);
	return IA_FRAME_LEN(f->nelem);
}

/* Contribution of sender s to chunk q, element e: large, so sums wrap. */
static inline __s32 contrib_val(__u32 s, __u32 q, __u32 e)
{
	return (__s32)((s + 1) * 2654435761u + q * 40503u + e * e * 7919u);
}

/* The calling thread's namespace, to come back to with setns(fd, CLONE_NEWNET). */
static inline int netns_save(void)
{
	return open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
}

static inline void parse_mac(const char *s, __u8 *mac)
{
	unsigned int b[6];
	int i;

	if (sscanf(s, "%x:%x:%x:%x:%x:%x", &b[0], &b[1], &b[2], &b[3], &b[4], &b[5]) != 6)
		memset(b, 0, sizeof(b));
	for (i = 0; i < 6; i++)
		mac[i] = b[i];
}

#endif /* INAGG_TESTS_XDP_COMMON_H */
