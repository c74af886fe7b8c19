// SPDX-License-Identifier: GPL-2.0
/*
 * Test-only link impairment for a host's interface (the kernel here has no
 * netem): a tc program on egress and one on ingress drop or duplicate inagg
 * frames (IPv4/UDP to port 9430) with the probabilities user space sets in
 * the mmapped globals, at any time. Frame n of a direction is judged by a hash
 * of (seed, direction, n), so a seed gives the same loss pattern every run.
 * A duplicate is a clone redirected to the same place, marked so that it
 * passes unjudged. See tests/impair/impair.h.
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/pkt_cls.h>
#include <linux/udp.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#include "inagg/wire.h"

#define IMPAIR_CLONE_MARK	0x1a9e0001
#define PPM			1000000

enum { DIR_EGRESS, DIR_INGRESS, DIR__COUNT };

/* Set by user space; all zero: every frame passes. */
__u32 loss_ppm[DIR__COUNT];
__u32 dup_ppm[DIR__COUNT];
__u64 seed;
/* Read by user space. */
__u64 seen[DIR__COUNT];
__u64 dropped[DIR__COUNT];
__u64 cloned[DIR__COUNT];

static __always_inline __u64 mix64(__u64 z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static __always_inline int is_inagg(struct __sk_buff *skb)
{
	void *data, *end;
	struct ethhdr *eth;
	struct iphdr *ip;
	struct udphdr *udp;

	if (skb->len < sizeof(*eth) + sizeof(*ip) + sizeof(*udp))
		return 0;
	if (bpf_skb_pull_data(skb, sizeof(*eth) + sizeof(*ip) + sizeof(*udp)))
		return 0;
	data = (void *)(long)skb->data;
	end = (void *)(long)skb->data_end;
	eth = data;
	ip = (void *)(eth + 1);
	udp = (void *)(ip + 1);
	if ((void *)(udp + 1) > end)
		return 0;
	return eth->h_proto == bpf_htons(ETH_P_IP) && ip->ihl == 5 &&
	       ip->protocol == IPPROTO_UDP && udp->dest == bpf_htons(IA_UDP_PORT);
}

static __always_inline int impair(struct __sk_buff *skb, int dir, __u64 redirect_flags)
{
	__u64 n, r;

	if (skb->mark == IMPAIR_CLONE_MARK) {
		skb->mark = 0;
		return TC_ACT_OK;
	}
	if (!is_inagg(skb))
		return TC_ACT_OK;
	n = __sync_fetch_and_add(&seen[dir], 1);
	r = mix64(seed + 0x9e3779b97f4a7c15ull * (2 * n + dir + 1));
	if ((r & 0xffffffff) % PPM < loss_ppm[dir]) {
		__sync_fetch_and_add(&dropped[dir], 1);
		return TC_ACT_SHOT;
	}
	if ((r >> 32) % PPM < dup_ppm[dir]) {
		__u32 mark = skb->mark;

		skb->mark = IMPAIR_CLONE_MARK;
		if (!bpf_clone_redirect(skb, skb->ifindex, redirect_flags))
			__sync_fetch_and_add(&cloned[dir], 1);
		skb->mark = mark;
	}
	return TC_ACT_OK;
}

SEC("tc")
int impair_egress(struct __sk_buff *skb)
{
	return impair(skb, DIR_EGRESS, 0);
}

SEC("tc")
int impair_ingress(struct __sk_buff *skb)
{
	return impair(skb, DIR_INGRESS, BPF_F_INGRESS);
}

char _license[] SEC("license") = "GPL";
