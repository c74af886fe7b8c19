// SPDX-License-Identifier: GPL-2.0
/*
 * Cross traffic in the ports' virtual queues (docs/cc.md): ia_xdp passes
 * frames that are not inagg's to the kernel, which forwards them by some
 * port; ia_other, tail-called first, finds that port by the kernel's FIB
 * and queues the frame in its virtual queue (vq_other(), dp_mark.h), so
 * that UDP cross traffic through a port congests inagg's messages as it
 * would in a real queue. The frame itself is passed unchanged. Loaded on
 * the switch's maps when a port is first given a queue (ia_xdp_vq_set()).
 */
#include <linux/bpf.h>
#include <linux/ip.h>
#include <linux/if_ether.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

#include "dp_maps.h"
#include "dp_lookup.h"
#include "dp_mark.h"
#include "dp_btf.h"

#define IA_AF_INET	2

char LICENSE[] SEC("license") = "GPL";

SEC("xdp")
int ia_other(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	struct iphdr *ip = data + sizeof(*eth);
	struct bpf_fib_lookup f = {};
	int rc;

	if ((void *)(ip + 1) > end || eth->h_proto != bpf_htons(ETH_P_IP) || ip->version != 4)
		return XDP_PASS;
	f.family = IA_AF_INET;
	f.tos = ip->tos;
	f.l4_protocol = ip->protocol;
	f.tot_len = bpf_ntohs(ip->tot_len);
	f.ipv4_src = ip->saddr;
	f.ipv4_dst = ip->daddr;
	f.ifindex = ctx->ingress_ifindex;
	rc = bpf_fib_lookup(ctx, &f, sizeof(f), 0);
	/* Forwarded (a neighbour to resolve first still leaves by that port). */
	if (rc == BPF_FIB_LKUP_RET_SUCCESS || rc == BPF_FIB_LKUP_RET_NO_NEIGH)
		vq_other(f.ifindex, end - data);
	return XDP_PASS;
}

