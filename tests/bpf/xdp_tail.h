/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The switch, jobs and frames of the tail's BPF_PROG_TEST_RUN tables
 * (xdp_tail.c, xdp_tail_gen.c): a PS job with a tail switch below, a blue
 * job that lends, the fixture and the send/expect macros.
 */
#ifndef INAGG_TESTS_XDP_TAIL_H
#define INAGG_TESTS_XDP_TAIL_H

#include <linux/if_link.h>
#include <bpf/bpf.h>

#include "kselftest_harness.h"
#include "xdp_switch.h"

#define NPORTS	3	/* 0: up, 1..2: down */
#define SELF_ID	900
#define PSJ	50	/* the PS job */
#define INA	60	/* a blue job that lends */
#define NE	8	/* elements per chunk */
#define LOWER	700	/* a tail switch below, ranks 3 and 4 */
#define FULL	0x1full	/* ranks 0..4: workers 1..3 (ranks 0..2) and LOWER */

struct tctx {
	struct ia_xdp *x;
	int port[NPORTS];
};

static inline int setup_ports(struct tctx *t)
{
	return switch_ports(NPORTS, t->port, NULL);
}

/* A message of sender to chunk seq; set != 0: with that member set trailer. */
static inline int piece(void *buf, __u32 job, __u32 seq, __u32 sender, __u32 nw, __u8 flags, __u64 set,
		 const __s32 *vals, bool up)
{
	struct frame_spec f = {
		.saddr = up ? IP_SW : IP(10, 9, 0, 10), .daddr = IP_PS,
		.type = sender >= LOWER ? IA_MSG_AGG : IA_MSG_CONTRIB, .job = job, .seq = seq,
		.sender = sender, .nworkers = nw, .nelem = NE, .vals = vals,
		.flags = flags | (set ? IA_F_SET : 0),
	};
	struct iphdr *ip = (void *)((__u8 *)buf + 14);
	struct udphdr *udp = (void *)(ip + 1);
	__u32 t[2];
	int len;

	memcpy(f.smac, up ? mac_up_s : mac_w, 6);
	memcpy(f.dmac, up ? mac_up_d : mac_sw, 6);
	len = build_frame(buf, &f);
	if (!set)
		return len;
	t[0] = htonl(set >> 32);
	t[1] = htonl((__u32)set);
	memcpy((__u8 *)buf + len, t, 8);
	ip->tot_len = htons(ntohs(ip->tot_len) + 8);
	udp->len = htons(ntohs(udp->len) + 8);
	ip->check = csum_ip(ip);
	return len + 8;
}

static inline void vals_of(__u32 s, __u32 q, __s32 *v)
{
	int e;

	for (e = 0; e < NE; e++)
		v[e] = contrib_val(s, q, e);
}

static inline void vals_add(__s32 *sum, const __s32 *v)
{
	int e;

	for (e = 0; e < NE; e++)
		sum[e] = (__s32)((__u32)sum[e] + (__u32)v[e]);
}

/* The PS job: workers 1..3 (ranks 0..2) and LOWER (ranks 3, 4). */
static inline int add_ps_job(struct tctx *t)
{
	static const struct ia_sender m[4] = { { 1, 1 }, { 2, 1 }, { 3, 1 }, { LOWER, 2 } };
	static const __u64 sets[4] = { 1, 2, 4, 0x18 };
	struct ia_xdp_job j = {
		.id = PSJ, .role = IA_ROLE_TAIL, .self_id = SELF_ID, .nmembers = 4,
		.members = m, .sets = sets,
		.up = { .ifindex = t->port[0], .saddr = IP_SW, .daddr = IP_PS },
	};

	memcpy(j.up.smac, mac_up_s, 6);
	memcpy(j.up.dmac, mac_up_d, 6);
	return ia_xdp_job_add(t->x, &j, NULL, 0);
}

/* The blue job: members 11, 12, a head of 4 slots. */
static inline int add_ina_job(struct tctx *t)
{
	static const struct ia_sender m[2] = { { 11, 1 }, { 12, 1 } };
	struct ia_xdp_job j = {
		.id = INA, .role = IA_ROLE_BLUE, .window = 4, .self_id = SELF_ID,
		.nmembers = 2, .members = m,
		.up = { .ifindex = t->port[0], .saddr = IP_SW, .daddr = IP_PS },
	};

	memcpy(j.up.smac, mac_up_s, 6);
	memcpy(j.up.dmac, mac_up_d, 6);
	return ia_xdp_job_add(t->x, &j, NULL, 0);
}

static inline int set_tail(struct tctx *t, __u32 slots, __u64 age, __u32 lend)
{
	struct ia_xdp_lend l = { .job = INA, .count = lend };
	struct ia_xdp_tail tail = { .slots = slots, .age_ns = age, .nlend = !!lend, .lend = &l };

	return ia_xdp_tail_set(t->x, &tail, NULL, 0);
}

/* The first chunk from `from` that the directory of total slots maps to v. */
static inline __u32 seq_to(__u32 total, __u32 v, __u32 from)
{
	while (ia_tail_hash(PSJ, from) % total != v)
		from++;
	return from;
}

FIXTURE(tail) {
	struct tctx t;
	__u8 in[4096], out[4096], want[4096];
	__s32 v[8][NE], sum[NE];
	__u32 olen;
};

FIXTURE_SETUP(tail)
{
	int i;

	ASSERT_EQ(0, setup_ports(&self->t));
	ASSERT_EQ(0, ia_xdp_open(NULL, &self->t.x, NULL, 0));
	for (i = 0; i < NPORTS; i++)
		ASSERT_EQ(0, ia_xdp_port_add(self->t.x, self->t.port[i]));
	ASSERT_EQ(0, add_ps_job(&self->t));
	memset(self->sum, 0, sizeof(self->sum));
}

FIXTURE_TEARDOWN(tail)
{
	ia_xdp_close(self->t.x);
}

/* Sends sender's message; returns the verdict. */
#define SEND(q, sender, nw, flags, set, vals)					\
	run(self->t.x, self->t.port[1], self->in,				\
	    piece(self->in, PSJ, q, sender, nw, flags, set, vals, false),	\
	    self->out, &self->olen)

/* The output frame is exactly the one piece() builds going up. */
#define EXPECT_OUT(job, q, sender, nw, flags, set, vals)				\
	do {									\
		int wl_ = piece(self->want, job, q, sender, nw, flags, set, vals, true); \
		ASSERT_EQ(wl_, self->olen);						\
		ASSERT_EQ(0, memcmp(self->want, self->out, wl_));			\
	} while (0)

/* The same frame forwarded unchanged but for the up MACs (and flags). */
#define EXPECT_FWD(q, sender, nw, flags, set, vals)					\
	do {									\
		int wl_ = piece(self->want, PSJ, q, sender, nw, flags, set, vals, false); \
		memcpy(self->want, mac_up_d, 6);					\
		memcpy(self->want + 6, mac_up_s, 6);					\
		ASSERT_EQ(wl_, self->olen);						\
		ASSERT_EQ(0, memcmp(self->want, self->out, wl_));			\
	} while (0)

/* A tail pool of 4 where nothing ages, and the values of chunk q of senders 0..n-1. */
#define YOUNG_TAIL(q, n)								\
	do {										\
		ASSERT_EQ(0, set_tail(&self->t, 4, 10ull * 1000000000, 0));		\
		for (int i_ = 0; i_ < (n); i_++)					\
			vals_of(i_, q, self->v[i_]);					\
	} while (0)

/*
 * The start of a test where a second chunk meets a holder: the tail pool
 * of slots set to flush after age ns, sender 1's message of chunk q1 (with
 * flags) held there, and the values of q1 and q2 in v[0] and v[1].
 */
#define HOLD_FIRST(slots, age, q1, q2, flags)						\
	do {										\
		ASSERT_EQ(0, set_tail(&self->t, slots, age, 0));			\
		vals_of(1, q1, self->v[0]);						\
		vals_of(2, q2, self->v[1]);						\
		ASSERT_EQ(XDP_DROP, SEND(q1, 1, 1, flags, 0, self->v[0]));		\
	} while (0)

#endif /* INAGG_TESTS_XDP_TAIL_H */
