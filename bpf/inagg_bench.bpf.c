// SPDX-License-Identifier: GPL-2.0
/*
 * Test and benchmark helpers, never attached by the datapath: a traffic
 * generator for BPF_F_TEST_XDP_LIVE_FRAMES, a counting XDP_DROP sink and a
 * counting XDP_PASS.
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

#include "inagg/wire.h"
#include "inagg/maps.h"
#include "inagg_bench.h"

char LICENSE[] SEC("license") = "GPL";

const volatile __u32 gen_fanin = 1;	/* senders 0..fanin-1 take turns */
const volatile __u32 gen_job = 1;	/* CPU c sends for job gen_job + c */
/*
 * The frame's Ethernet, IPv4 and UDP headers as the loader built them: where
 * a bound member sends from (its address, UDP port IA_UDP_PORT). Stamped
 * into every frame, as the header is below.
 */
__u8 gen_l2l4[IA_L2L4_LEN];

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
 * Pacing, for a generator on its own CPU. Unpaced, it keeps veth's ring
 * full: the receiver then fights the generator for every ring entry's cache
 * line (a red switch cost twice as much per packet), veth drops what does
 * not fit, and a blue switch never completes a chunk that lost a
 * contribution (its window stalls). With pace_limit set, message n is sent
 * only while fewer than pace_limit messages are ahead of what the receiver
 * has taken, as its own count says (pace_src, inagg_bench.h; per-CPU counts
 * are read on pace_cpu; the loader points gen_pace_ctr and gen_pace_sink at
 * the receiver's maps). Frames go out at the end of each test_run batch:
 * pace_limit must exceed the batch.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct ia_counters);
} gen_pace_ctr SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} gen_pace_sink SEC(".maps");

__u64 pace_limit;	/* 0: no pacing */
__u32 pace_src;
__u32 pace_port;
__u32 pace_cpu;
__u64 pace_done0;	/* the receiver's count when pace_sent was 0 */
__u64 pace_done;	/* PACE_USER */
__u64 pace_sent;
__u64 pace_credit;	/* messages that may go before the next look */
__u64 pace_last;	/* time of the last look */
__u32 pace_stalled;

/*
 * Every look pulls the receiver's counter line away from its CPU, which
 * then pays a cache miss on its next count: look at most every PACE_LOOK_NS.
 * A receiver that took nothing for PACE_NUDGE_NS gets PACE_NUDGE more (its
 * ring has room for them), for a wakeup it may be missing; after
 * PACE_GIVEUP_NS pacing stops and says so (pace_stalled).
 */
#define PACE_LOOK_NS	2000
#define PACE_NUDGE_NS	200000
#define PACE_NUDGE	32
#define PACE_GIVEUP_NS	1000000000ULL
__u64 pace_seen;	/* the receiver's count at the last look */
__u64 pace_moved;	/* when it last changed */

static __always_inline __u64 pace_taken(void)
{
	struct ia_counters *c;
	__u32 zero = 0;
	__u64 *v;

	if (pace_src == PACE_USER)
		return *(volatile __u64 *)&pace_done;
	if (pace_src == PACE_SINK) {
		v = bpf_map_lookup_percpu_elem(&gen_pace_sink, &zero, pace_cpu);
		return v ? *v : 0;
	}
	c = bpf_map_lookup_percpu_elem(&gen_pace_ctr, &pace_port, pace_cpu);
	return c ? c->c[IA_C_RX] : 0;
}

static long pace_look(__u64 i, void *arg)
{
	__u64 taken, limit = pace_limit, t = bpf_ktime_get_ns();
	__s64 ahead;	/* < 0 while the previous run's frames drain */

	if (t - pace_last < PACE_LOOK_NS)
		return 0;
	pace_last = t;
	taken = pace_taken();
	if (taken != pace_seen || !pace_moved) {
		pace_seen = taken;
		pace_moved = t;
	}
	if (t - pace_moved > PACE_NUDGE_NS)
		limit += PACE_NUDGE;
	ahead = pace_sent - (taken - pace_done0);
	if (ahead < (__s64)limit) {
		pace_credit = ahead > 0 ? limit - ahead : limit;
		return 1;
	}
	if (t - pace_moved > PACE_GIVEUP_NS) {
		pace_stalled = 1;
		return 1;
	}
	return 0;
}

static __always_inline void pace(void)
{
	int i;

	if (!pace_limit)
		return;
	for (i = 0; i < 8 && !pace_credit && !pace_stalled; i++)
		bpf_loop(1 << 23, pace_look, NULL, 0);
	if (pace_credit)
		pace_credit--;
	else
		pace_limit = 0;	/* stalled: give up pacing */
	pace_sent++;
}

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
	 * (a blue switch turns the last contribution into an aggregate, from
	 * its own address): stamp the addresses, ports and the whole header
	 * every time. Left as the aggregate left them, a frame came back from
	 * the switch's address: a bound member's id from there is drop_port,
	 * the chunk never completed, and blue's window stalled.
	 */
	__builtin_memcpy(data, gen_l2l4, IA_L2L4_LEN);
	h->ver = IA_VERSION;
	h->type = IA_MSG_CONTRIB;
	h->nworkers = bpf_htonl(1);
	h->nelem = bpf_htons(IA_CHUNK_DEFAULT);
	h->flags = 0;
	h->job = bpf_htonl(gen_job + bpf_get_smp_processor_id());
	h->seq = bpf_htonl((__u32)(n / gen_fanin));
	h->sender = bpf_htonl((__u32)(n % gen_fanin));
	pace();
	return XDP_TX;
}

static __always_inline void sink_inc(void)
{
	__u32 k = 0;
	__u64 *c = bpf_map_lookup_elem(&sink_count, &k);

	if (c)
		(*c)++;
}

SEC("xdp")
int ia_sink(struct xdp_md *ctx)
{
	sink_inc();
	return XDP_DROP;
}

/* Counts and passes to the kernel: in front of a user-space receiver. */
SEC("xdp")
int ia_count_pass(struct xdp_md *ctx)
{
	sink_inc();
	return XDP_PASS;
}

/*
 * Floors for the per-packet cost of a blue switch, measured in the same rig:
 * the least any XDP aggregator does, and that plus the one cross-CPU
 * operation per message that exactly-once aggregation on several CPUs needs
 * (the slot's lock, or, with per-CPU sums, an atomic on the chunk's member
 * bitmap). They count, add a message's 256 elements into a chunk slot (64
 * per job), and drop it: no validation, no counters by reason, nothing sent.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 128);
	__type(key, __u32);
	__type(value, __u32[IA_CHUNK_DEFAULT]);
} floor_sums SEC(".maps");

struct floor_locked {
	struct bpf_spin_lock lock;
	__u32 sum[IA_CHUNK_DEFAULT];
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 128);
	__type(key, __u32);
	__type(value, struct floor_locked);
} floor_locked SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 128);
	__type(key, __u32);
	__type(value, __u64);
} floor_seen SEC(".maps");

enum { FLOOR_ADD, FLOOR_LOCK, FLOOR_ATOMIC };

static __always_inline int add_floor(struct xdp_md *ctx, int kind)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	struct ia_hdr *h = data + IA_L2L4_LEN;
	__u32 *pl = (void *)(h + 1), *sum, k, i;
	struct floor_locked *l = NULL;
	__u64 *seen;

	sink_inc();
	if ((void *)(pl + IA_CHUNK_DEFAULT) > end)
		return XDP_DROP;
	/* As blue's per-CPU jobs: ia_gen on CPU c sends job gen_job + c. */
	k = bpf_ntohl(*(__be32 *)((void *)h + __builtin_offsetof(struct ia_hdr, seq))) % 64 +
	    64 * (bpf_ntohl(*(__be32 *)((void *)h + __builtin_offsetof(struct ia_hdr, job))) & 1);
	if (kind == FLOOR_LOCK) {
		l = bpf_map_lookup_elem(&floor_locked, &k);
		if (!l)
			return XDP_DROP;
		sum = l->sum;
		bpf_spin_lock(&l->lock);
	} else {
		sum = bpf_map_lookup_elem(&floor_sums, &k);
		if (!sum)
			return XDP_DROP;
	}
	if (kind == FLOOR_ATOMIC) {
		seen = bpf_map_lookup_elem(&floor_seen, &k);
		if (!seen)
			return XDP_DROP;
		/* Low byte of the big-endian sender: 0..FANIN-1 here. */
		__sync_fetch_and_or(seen, 1ULL << ((*(__u32 *)((void *)h +
			__builtin_offsetof(struct ia_hdr, sender)) >> 24) & 63));
	}
#pragma clang loop unroll_count(8)
	for (i = 0; i < IA_CHUNK_DEFAULT; i++)
		sum[i] += pl[i];
	if (l)
		bpf_spin_unlock(&l->lock);
	return XDP_DROP;
}

SEC("xdp")
int ia_add_floor(struct xdp_md *ctx)
{
	return add_floor(ctx, FLOOR_ADD);
}

SEC("xdp")
int ia_lock_floor(struct xdp_md *ctx)
{
	return add_floor(ctx, FLOOR_LOCK);
}

SEC("xdp")
int ia_atomic_floor(struct xdp_md *ctx)
{
	return add_floor(ctx, FLOOR_ATOMIC);
}
