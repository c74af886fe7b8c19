// SPDX-License-Identifier: GPL-2.0
/*
 * Test and benchmark helpers, never attached by the datapath: a traffic
 * generator for BPF_F_TEST_XDP_LIVE_FRAMES and a counting XDP_DROP sink.
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

#include "inagg/wire.h"

char LICENSE[] SEC("license") = "GPL";

const volatile __u32 gen_fanin = 1;	/* senders 0..fanin-1 take turns */
const volatile __u32 gen_job = 1;	/* CPU c sends for job gen_job + c */

/*
 * One sequence per CPU: a shared one would let a descheduled generator fall
 * a window behind the other, and its chunks would never complete.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} gen_next SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} sink_count SEC(".maps");

/*
 * Stamps the next (job, chunk, sender) into a template frame and sends it back
 * out of the test_run device: message n is sender n % fanin of chunk
 * n / fanin, so chunks complete in order.
 */
SEC("xdp")
int ia_gen(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	struct ia_hdr *h = data + IA_L2L4_LEN;
	__u32 k = 0;
	__u64 *next = bpf_map_lookup_elem(&gen_next, &k), n;

	if ((void *)(h + 1) > end || !next)
		return XDP_DROP;
	n = (*next)++;
	/*
	 * Live frames are recycled with whatever the receiver wrote into them
	 * (a blue switch turns the last contribution into an aggregate):
	 * stamp the whole header every time.
	 */
	h->ver = IA_VERSION;
	h->type = IA_MSG_CONTRIB;
	h->nworkers = bpf_htonl(1);
	h->nelem = bpf_htons(IA_MAX_ELEMS);
	h->flags = 0;
	h->job = bpf_htonl(gen_job + bpf_get_smp_processor_id());
	h->seq = bpf_htonl((__u32)(n / gen_fanin));
	h->sender = bpf_htonl((__u32)(n % gen_fanin));
	return XDP_TX;
}

SEC("xdp")
int ia_sink(struct xdp_md *ctx)
{
	__u32 k = 0;
	__u64 *c = bpf_map_lookup_elem(&sink_count, &k);

	if (c)
		(*c)++;
	return XDP_DROP;
}
