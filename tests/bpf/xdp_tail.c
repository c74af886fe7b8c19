// SPDX-License-Identifier: GPL-2.0
/*
 * Table-driven BPF_PROG_TEST_RUN tests of tail aggregation (PS jobs,
 * docs/memory.md): claim, hit, duplicate, overlap, collision, complete,
 * flush by age, a collision below carried up, retransmissions and bypasses never aggregated, drops, lend, the blue
 * job taking its lent slot back (eviction flush), and the loader's tail
 * directory. Each test runs in its own (unnamed) network namespace.
 */
#pragma GCC diagnostic ignored "-Wsign-compare"
#include "insns_budget.h"
#include "xdp_tail.h"

TEST_F(tail, claim_hit_complete)
{
	struct ia_slot s;
	__u32 q = seq_to(4, 2, 0), i;

	ASSERT_EQ(0, set_tail(&self->t, 4, 0, 0));
	for (i = 0; i < 4; i++)
		vals_of(i, q, self->v[i]);
	ASSERT_EQ(XDP_DROP, SEND(q, 1, 1, 0, 0, self->v[0]));
	ASSERT_EQ(0, ia_xdp_tail_slot_read(self->t.x, 2, &s));
	ASSERT_EQ(IA_SLOT_TAIL, s.state);
	ASSERT_EQ(PSJ, s.t.job);
	ASSERT_EQ(q, s.t.seq);
	ASSERT_EQ(1, s.t.set);
	ASSERT_EQ(XDP_DROP, SEND(q, 3, 1, 0, 0, self->v[2]));
	/* A flushed partial of the switch below: its trailer says rank 4 only. */
	ASSERT_EQ(XDP_DROP, SEND(q, LOWER, 1, 0, 0x10, self->v[3]));
	ASSERT_EQ(0, ia_xdp_tail_slot_read(self->t.x, 2, &s));
	ASSERT_EQ(0x15, s.t.set);
	ASSERT_EQ(XDP_DROP, SEND(q, LOWER, 1, 0, 0x08, self->v[3]));
	/* The last one completes: the packet leaves as this switch's aggregate. */
	ASSERT_EQ(XDP_REDIRECT, SEND(q, 2, 1, IA_F_MARK, 0, self->v[1]));
	vals_add(self->sum, self->v[0]);
	vals_add(self->sum, self->v[1]);
	vals_add(self->sum, self->v[2]);
	vals_add(self->sum, self->v[3]);
	vals_add(self->sum, self->v[3]);
	EXPECT_OUT(PSJ, q, SELF_ID, 5, IA_F_MARK, 0, self->sum);
	ASSERT_EQ(0, ia_xdp_tail_slot_read(self->t.x, 2, &s));
	ASSERT_EQ(IA_SLOT_EMPTY, s.state);
	ASSERT_EQ(1, jctr(self->t.x, PSJ, IA_C_TAIL_CLAIM));
	ASSERT_EQ(4, jctr(self->t.x, PSJ, IA_C_TAIL_HIT));
	ASSERT_EQ(1, jctr(self->t.x, PSJ, IA_C_TAIL_COMPLETE));
	ASSERT_EQ(5, jctr(self->t.x, PSJ, IA_C_AGGREGATED));
	ASSERT_EQ(1, jctr(self->t.x, PSJ, IA_C_TX));
	ASSERT_EQ(0, jctr(self->t.x, PSJ, IA_C_TAIL_COLL));
}

/*
 * The piece that completes the slot is a flushed partial of the switch
 * below (a trailer): the aggregate still leaves as a complete one, with no
 * trailer, nworkers the whole set's, flags the slot's (issue 32: it left
 * with IA_F_SET and the last piece's own trailer, which the PS refuses).
 */
TEST_F(tail, completed_by_a_flushed_partial_leaves_without_trailer)
{
	__u32 q = seq_to(4, 2, 100), i;
	struct ia_slot s;

	YOUNG_TAIL(q, 5);	/* nothing ages */
	ASSERT_EQ(XDP_DROP, SEND(q, 1, 1, 0, 0, self->v[0]));
	ASSERT_EQ(XDP_DROP, SEND(q, 2, 1, IA_F_MARK, 0, self->v[1]));
	ASSERT_EQ(XDP_DROP, SEND(q, 3, 1, 0, 0, self->v[2]));
	ASSERT_EQ(XDP_DROP, SEND(q, LOWER, 1, 0, 0x08, self->v[3]));
	ASSERT_EQ(XDP_REDIRECT, SEND(q, LOWER, 1, 0, 0x10, self->v[4]));
	for (i = 0; i < 5; i++)
		vals_add(self->sum, self->v[i]);
	EXPECT_OUT(PSJ, q, SELF_ID, 5, IA_F_MARK, 0, self->sum);
	ASSERT_EQ(0, ia_xdp_tail_slot_read(self->t.x, 2, &s));
	ASSERT_EQ(IA_SLOT_EMPTY, s.state);
	ASSERT_EQ(1, jctr(self->t.x, PSJ, IA_C_TAIL_COMPLETE));
	ASSERT_EQ(1, jctr(self->t.x, PSJ, IA_C_EMIT));
	ASSERT_EQ(1, jctr(self->t.x, PSJ, IA_C_TX));
}

TEST_F(tail, duplicate_and_overlap)
{
	__u32 q = seq_to(4, 1, 0);
	struct ia_slot s;

	ASSERT_EQ(0, set_tail(&self->t, 4, 0, 0));
	vals_of(1, q, self->v[0]);
	vals_of(7, q, self->v[1]);
	ASSERT_EQ(XDP_DROP, SEND(q, 1, 1, 0, 0, self->v[0]));
	ASSERT_EQ(XDP_DROP, SEND(q, 1, 1, 0, 0, self->v[0]));	/* network duplicate */
	ASSERT_EQ(1, jctr(self->t.x, PSJ, IA_C_DUP));
	ASSERT_EQ(XDP_DROP, SEND(q, LOWER, 1, 0, 0x08, self->v[1]));
	/* The switch below's whole set overlaps rank 3 in part: to the PS, flagged. */
	ASSERT_EQ(XDP_REDIRECT, SEND(q, LOWER, 2, 0, 0, self->v[1]));
	EXPECT_FWD(q, LOWER, 2, IA_F_COLL, 0, self->v[1]);
	ASSERT_EQ(1, jctr(self->t.x, PSJ, IA_C_TAIL_COLL));
	ASSERT_EQ(0, ia_xdp_tail_slot_read(self->t.x, 1, &s));
	ASSERT_EQ(0x09, s.t.set);
	ASSERT_EQ((__u32)self->v[0][3] + (__u32)self->v[1][3], (__u32)s.sum[3]);
}

TEST_F(tail, collision_young_holder)
{
	__u32 q1 = seq_to(4, 3, 0), q2 = seq_to(4, 3, q1 + 1);
	struct ia_slot s;

	HOLD_FIRST(4, 10ull * 1000000000, q1, q2, 0);
	ASSERT_EQ(XDP_REDIRECT, SEND(q2, 2, 1, 0, 0, self->v[1]));
	EXPECT_FWD(q2, 2, 1, IA_F_COLL, 0, self->v[1]);
	ASSERT_EQ(0, ia_xdp_tail_slot_read(self->t.x, 3, &s));
	ASSERT_EQ(q1, s.t.seq);
	ASSERT_EQ(1, jctr(self->t.x, PSJ, IA_C_TAIL_COLL));
	ASSERT_EQ(1, jctr(self->t.x, PSJ, IA_C_TAIL_CLAIM));
}

TEST_F(tail, flush_by_age)
{
	__u32 q1 = seq_to(4, 0, 0), q2 = seq_to(4, 0, q1 + 1);
	struct ia_slot s;

	HOLD_FIRST(4, 1, q1, q2, IA_F_MARK);	/* 1 ns: every holder is old */
	/* q2 takes the slot; the frame leaves carrying q1's partial, set in its trailer. */
	ASSERT_EQ(XDP_REDIRECT, SEND(q2, 2, 1, 0, 0, self->v[1]));
	EXPECT_OUT(PSJ, q1, SELF_ID, 1, IA_F_FLUSH | IA_F_MARK, 1, self->v[0]);
	ASSERT_EQ(0, ia_xdp_tail_slot_read(self->t.x, 0, &s));
	ASSERT_EQ(IA_SLOT_TAIL, s.state);
	ASSERT_EQ(q2, s.t.seq);
	ASSERT_EQ(2, s.t.set);
	ASSERT_EQ((__u32)self->v[1][5], (__u32)s.sum[5]);
	ASSERT_EQ(1, jctr(self->t.x, PSJ, IA_C_TAIL_FLUSH));
	ASSERT_EQ(2, jctr(self->t.x, PSJ, IA_C_TAIL_CLAIM));
}

/*
 * A piece that collided in a tail below (it comes up raw, IA_F_COLL) and is
 * aggregated here: its partial keeps the flag, and the aggregate or flush
 * that leaves carries it, so the PS still learns of the collision (it was
 * lost when only IA_F_MARK was kept).
 */
TEST_F(tail, lower_collision_carried_up)
{
	__u32 q1 = seq_to(4, 2, 0), q2 = seq_to(4, 1, 0), q3 = seq_to(4, 0, 0);
	__u32 q4 = seq_to(4, 0, q3 + 1);
	struct ia_slot s;
	int i;

	YOUNG_TAIL(q1, 4);	/* nothing ages */
	/* Claimed by a collided piece: the partial has the flag. */
	ASSERT_EQ(XDP_DROP, SEND(q1, 1, 1, IA_F_COLL, 0, self->v[0]));
	ASSERT_EQ(0, ia_xdp_tail_slot_read(self->t.x, 2, &s));
	ASSERT_EQ(IA_F_COLL, s.flags);
	ASSERT_EQ(XDP_DROP, SEND(q1, 2, 1, 0, 0, self->v[1]));
	ASSERT_EQ(XDP_DROP, SEND(q1, LOWER, 2, 0, 0, self->v[3]));
	ASSERT_EQ(XDP_REDIRECT, SEND(q1, 3, 1, 0, 0, self->v[2]));
	for (i = 0; i < 4; i++)
		vals_add(self->sum, self->v[i]);
	EXPECT_OUT(PSJ, q1, SELF_ID, 5, IA_F_COLL, 0, self->sum);

	/* A hit by one, with a mark: both leave with the aggregate. */
	memset(self->sum, 0, sizeof(self->sum));
	for (i = 0; i < 4; i++)
		vals_of(i + 4, q2, self->v[i]);
	ASSERT_EQ(XDP_DROP, SEND(q2, 1, 1, 0, 0, self->v[0]));
	ASSERT_EQ(XDP_DROP, SEND(q2, 2, 1, IA_F_COLL | IA_F_MARK, 0, self->v[1]));
	ASSERT_EQ(XDP_DROP, SEND(q2, 3, 1, 0, 0, self->v[2]));
	ASSERT_EQ(XDP_REDIRECT, SEND(q2, LOWER, 2, 0, 0, self->v[3]));
	for (i = 0; i < 4; i++)
		vals_add(self->sum, self->v[i]);
	EXPECT_OUT(PSJ, q2, SELF_ID, 5, IA_F_COLL | IA_F_MARK, 0, self->sum);
	ASSERT_EQ(0, jctr(self->t.x, PSJ, IA_C_TAIL_COLL));

	/* A flushed partial carries it too. */
	HOLD_FIRST(4, 1, q3, q4, IA_F_COLL);	/* 1 ns: every holder is old */
	ASSERT_EQ(XDP_REDIRECT, SEND(q4, 2, 1, 0, 0, self->v[1]));
	EXPECT_OUT(PSJ, q3, SELF_ID, 1, IA_F_FLUSH | IA_F_COLL, 1, self->v[0]);
	/* The new holder did not inherit it. */
	ASSERT_EQ(0, ia_xdp_tail_slot_read(self->t.x, 0, &s));
	ASSERT_EQ(q4, s.t.seq);
	ASSERT_EQ(0, s.flags);
}

TEST_F(tail, retransmission_never_aggregated)
{
	__u32 q = seq_to(4, 2, 0);
	struct ia_slot s;

	ASSERT_EQ(0, set_tail(&self->t, 4, 0, 0));
	vals_of(1, q, self->v[0]);
	ASSERT_EQ(XDP_REDIRECT, SEND(q, 1, 1, IA_F_RETX, 0, self->v[0]));
	EXPECT_FWD(q, 1, 1, IA_F_RETX, 0, self->v[0]);
	ASSERT_EQ(0, ia_xdp_tail_slot_read(self->t.x, 2, &s));
	ASSERT_EQ(IA_SLOT_EMPTY, s.state);
	ASSERT_EQ(1, jctr(self->t.x, PSJ, IA_C_TAIL_RETX));
	ASSERT_EQ(0, jctr(self->t.x, PSJ, IA_C_TAIL_CLAIM));
	/* Without a tail the job is red here: forwarded as it came. */
	ASSERT_EQ(0, set_tail(&self->t, 0, 0, 0));
	ASSERT_EQ(XDP_REDIRECT, SEND(q, 1, 1, 0, 0, self->v[0]));
	EXPECT_FWD(q, 1, 1, 0, 0, self->v[0]);
}

/*
 * Beyond its sender's aggregator window (IA_F_BYPASS, docs/cc.md): passed
 * unchanged, flag kept, even past a partial of its own chunk; the PS merges
 * it by set as it does a collision.
 */
TEST_F(tail, bypass_never_aggregated)
{
	__u32 q = seq_to(4, 2, 0);
	struct ia_slot s;

	ASSERT_EQ(0, set_tail(&self->t, 4, 0, 0));
	vals_of(1, q, self->v[0]);
	vals_of(2, q, self->v[1]);
	ASSERT_EQ(XDP_REDIRECT, SEND(q, 1, 1, IA_F_BYPASS, 0, self->v[0]));
	EXPECT_FWD(q, 1, 1, IA_F_BYPASS, 0, self->v[0]);
	ASSERT_EQ(0, ia_xdp_tail_slot_read(self->t.x, 2, &s));
	ASSERT_EQ(IA_SLOT_EMPTY, s.state);
	ASSERT_EQ(XDP_DROP, SEND(q, 2, 1, 0, 0, self->v[1]));
	ASSERT_EQ(XDP_REDIRECT, SEND(q, 3, 1, IA_F_BYPASS | IA_F_MARK, 0, self->v[0]));
	EXPECT_FWD(q, 3, 1, IA_F_BYPASS | IA_F_MARK, 0, self->v[0]);
	ASSERT_EQ(0, ia_xdp_tail_slot_read(self->t.x, 2, &s));
	ASSERT_EQ(IA_SLOT_TAIL, s.state);
	ASSERT_EQ(2, s.t.set);
	ASSERT_EQ(2, jctr(self->t.x, PSJ, IA_C_TAIL_BYPASS));
	ASSERT_EQ(1, jctr(self->t.x, PSJ, IA_C_TAIL_CLAIM));
	ASSERT_EQ(0, jctr(self->t.x, PSJ, IA_C_TAIL_COLL));
}

TEST_F(tail, drops)
{
	__u32 q = seq_to(4, 2, 0);

	ASSERT_EQ(0, set_tail(&self->t, 4, 0, 0));
	vals_of(1, q, self->v[0]);
	/* A worker's trailer naming another rank, a set of the wrong size, an empty one. */
	ASSERT_EQ(XDP_DROP, SEND(q, 1, 1, 0, 2, self->v[0]));
	ASSERT_EQ(XDP_DROP, SEND(q, LOWER, 1, 0, 0x18, self->v[0]));
	ASSERT_EQ(XDP_DROP, SEND(q, LOWER, 0, 0, 0, self->v[0]));	/* nworkers 0: member */
	ASSERT_EQ(2, jctr(self->t.x, PSJ, IA_C_DROP_SET));
	ASSERT_EQ(1, jctr(self->t.x, PSJ, IA_C_DROP_MEMBER));
	ASSERT_EQ(XDP_DROP, SEND(q, 9, 1, 0, 0, self->v[0]));		/* not a member */
	ASSERT_EQ(2, jctr(self->t.x, PSJ, IA_C_DROP_MEMBER));
	ASSERT_EQ(0, jctr(self->t.x, PSJ, IA_C_TAIL_CLAIM));
	/* A blue job takes no member set trailer. */
	ASSERT_EQ(0, add_ina_job(&self->t));
	ASSERT_EQ(XDP_DROP, run(self->t.x, self->t.port[1], self->in,
				piece(self->in, INA, 0, 11, 1, 0, 1, self->v[0], false),
				self->out, &self->olen));
	ASSERT_EQ(1, jctr(self->t.x, INA, IA_C_DROP_SET));
}

/* PS chunks in lent head slots; the blue job takes its slot back with its next chunk. */
TEST_F(tail, lend_and_eviction_flush)
{
	__u32 q = seq_to(2, 1, 0), e, olen;
	__s32 a[NE], b[NE], sum[NE] = {};
	struct ia_slot s;

	ASSERT_EQ(0, add_ina_job(&self->t));
	ASSERT_EQ(0, set_tail(&self->t, 0, 0, 2));	/* no pool: head slots 2, 3 */
	vals_of(1, q, self->v[0]);
	ASSERT_EQ(XDP_DROP, SEND(q, 1, 1, 0, 0, self->v[0]));
	ASSERT_EQ(1, jctr(self->t.x, PSJ, IA_C_TAIL_LENT));
	ASSERT_EQ(0, ia_xdp_slot_read(self->t.x, INA, 3, &s));
	ASSERT_EQ(IA_SLOT_TAIL, s.state);
	ASSERT_EQ(PSJ, s.t.job);
	ASSERT_EQ(IA_SLOT_EMPTY, s.t.hstate);
	/* The blue job's chunk 3 needs slot 3: the PS partial leaves in this frame. */
	for (e = 0; e < NE; e++) {
		a[e] = 1000 + e;
		b[e] = 2000 + 3 * e;
		sum[e] = a[e] + b[e];
	}
	ASSERT_EQ(XDP_REDIRECT, run(self->t.x, self->t.port[1], self->in,
				    piece(self->in, INA, 3, 11, 1, 0, 0, a, false), self->out,
				    &self->olen));
	EXPECT_OUT(PSJ, q, SELF_ID, 1, IA_F_FLUSH, 1, self->v[0]);
	ASSERT_EQ(1, jctr(self->t.x, INA, IA_C_TAIL_EVICT));
	ASSERT_EQ(1, jctr(self->t.x, PSJ, IA_C_TAIL_FLUSH));
	ASSERT_EQ(0, ia_xdp_slot_read(self->t.x, INA, 3, &s));
	ASSERT_EQ(IA_SLOT_OPEN, s.state);
	ASSERT_EQ(3, s.seq);
	/* Its contribution is in the slot: the chunk completes with the exact sum. */
	ASSERT_EQ(XDP_REDIRECT, run(self->t.x, self->t.port[1], self->in,
				    piece(self->in, INA, 3, 12, 1, 0, 0, b, false), self->out,
				    &olen));
	self->olen = olen;
	EXPECT_OUT(INA, 3, SELF_ID, 2, 0, 0, sum);
	/* Slot 3 is DONE with chunk 3: not free while chunk 5 (3 + H - k) was not seen. */
	ASSERT_EQ(XDP_REDIRECT, SEND(q, 2, 1, 0, 0, self->v[1]));
	ASSERT_EQ(1, jctr(self->t.x, PSJ, IA_C_TAIL_COLL));
}

/* A lent DONE slot is claimed once the head moved H - k chunks on; reclaim ends lending. */
TEST_F(tail, lent_done_slot_and_reclaim)
{
	__u32 q = seq_to(2, 0, 0), c;
	struct ia_xdp_tail_info info;
	__s32 a[NE] = { 1 };
	struct ia_slot s;

	ASSERT_EQ(0, add_ina_job(&self->t));
	ASSERT_EQ(0, set_tail(&self->t, 0, 0, 2));
	/* Chunks 2 and 4 of the blue job: slot 2 DONE with 2, slot 0 seen chunk 4. */
	for (c = 0; c <= 4; c += 2) {
		ASSERT_EQ(XDP_DROP, run(self->t.x, self->t.port[1], self->in,
					piece(self->in, INA, c, 11, 1, 0, 0, a, false), self->out,
					&self->olen));
		ASSERT_EQ(XDP_REDIRECT, run(self->t.x, self->t.port[1], self->in,
					    piece(self->in, INA, c, 12, 1, 0, 0, a, false),
					    self->out, &self->olen));
	}
	vals_of(1, q, self->v[0]);
	ASSERT_EQ(XDP_DROP, SEND(q, 1, 1, 0, 0, self->v[0]));
	ASSERT_EQ(0, ia_xdp_slot_read(self->t.x, INA, 2, &s));
	ASSERT_EQ(IA_SLOT_TAIL, s.state);
	ASSERT_EQ(IA_SLOT_DONE, s.t.hstate);
	ASSERT_EQ(2, s.seq);
	/* Chunk 6 (2 + H) takes it back; a re-emission of 2 is refused now. */
	ASSERT_EQ(XDP_REDIRECT, run(self->t.x, self->t.port[1], self->in,
				    piece(self->in, INA, 6, 11, 1, 0, 0, a, false), self->out,
				    &self->olen));
	ASSERT_EQ(1, jctr(self->t.x, PSJ, IA_C_TAIL_FLUSH));
	/* Reclaim: the directory lends nothing; PS chunks go on red. */
	ASSERT_EQ(0, set_tail(&self->t, 0, 0, 0));
	ASSERT_EQ(0, ia_xdp_tail_info(self->t.x, &info));
	ASSERT_EQ(0, info.slots);
	ASSERT_EQ(0, info.lent);
	ASSERT_EQ(2, info.lends);
	ASSERT_EQ(2, info.reclaims);
	ASSERT_EQ(2, info.gen);
	ASSERT_EQ(1, info.c.c[IA_C_TAIL_CLAIM]);
	ASSERT_EQ(1, info.c.c[IA_C_TAIL_EVICT]);
	ASSERT_EQ(XDP_REDIRECT, SEND(q, 2, 1, 0, 0, self->v[1]));
	ASSERT_EQ(1, jctr(self->t.x, PSJ, IA_C_TAIL_CLAIM));
}

/* Blue job member's message to chunk c. */
#define INA_SEND(c, sender, flags, vals)						\
	run(self->t.x, self->t.port[1], self->in,				\
	    piece(self->in, INA, c, sender, 1, flags, 0, vals, false), self->out,	\
	    &self->olen)

/*
 * Two workers' windows together span more than H - k: head 8, 3 lent (the
 * lender's figures for worker window 4: need 4 + 1). Worker 12 lost the
 * result of chunk 5 (lent slot 5), so its window stays [5, 9); worker 11
 * has every result up to 8 and sends 9..12, past 5 + (H - k) = 10. Slot 5
 * must still re-emit chunk 5 to worker 12; it is free once every worker
 * has moved on (the slot of 10 done).
 */
TEST_F(tail, lent_done_slot_kept_while_a_worker_lags)
{
	static const struct ia_sender m[2] = { { 11, 1 }, { 12, 1 } };
	struct ia_xdp_job j = {
		.id = INA, .role = IA_ROLE_BLUE, .window = 8, .self_id = SELF_ID,
		.nmembers = 2, .members = m,
		.up = { .ifindex = self->t.port[0], .saddr = IP_SW, .daddr = IP_PS },
	};
	__u32 q = seq_to(3, 0, 0), c;
	__s32 a[NE], b[NE], sum[NE] = {};
	struct ia_slot s;

	memcpy(j.up.smac, mac_up_s, 6);
	memcpy(j.up.dmac, mac_up_d, 6);
	ASSERT_EQ(0, ia_xdp_job_add(self->t.x, &j, NULL, 0));
	ASSERT_EQ(0, set_tail(&self->t, 0, 0, 3));	/* no pool: head slots 5, 6, 7 */
	for (c = 0; c <= 8; c++) {
		vals_of(11, c, a);
		vals_of(12, c, b);
		ASSERT_EQ(XDP_DROP, INA_SEND(c, 11, 0, a));
		ASSERT_EQ(XDP_REDIRECT, INA_SEND(c, 12, 0, b));
	}
	for (c = 9; c <= 12; c++) {
		vals_of(11, c, a);
		ASSERT_EQ(XDP_DROP, INA_SEND(c, 11, 0, a));
	}
	/* A PS chunk of lent slot 5 finds it still the blue job's. */
	vals_of(1, q, self->v[0]);
	ASSERT_EQ(XDP_REDIRECT, SEND(q, 1, 1, 0, 0, self->v[0]));
	ASSERT_EQ(0, jctr(self->t.x, PSJ, IA_C_TAIL_LENT));
	ASSERT_EQ(0, ia_xdp_slot_read(self->t.x, INA, 5, &s));
	ASSERT_EQ(IA_SLOT_DONE, s.state);
	/* Worker 12's retransmission of chunk 5 gets the result again. */
	vals_of(11, 5, a);
	vals_of(12, 5, b);
	vals_add(sum, a);
	vals_add(sum, b);
	ASSERT_EQ(XDP_REDIRECT, INA_SEND(5, 12, IA_F_RETX, b));
	EXPECT_OUT(INA, 5, SELF_ID, 2, IA_F_REEMIT, 0, sum);
	/* Worker 12 moves on: once chunk 10 is done, slot 5 is lent. */
	for (c = 9; c <= 10; c++) {
		vals_of(12, c, b);
		ASSERT_EQ(XDP_REDIRECT, INA_SEND(c, 12, 0, b));
	}
	vals_of(2, q, self->v[1]);
	ASSERT_EQ(XDP_DROP, SEND(q, 2, 1, 0, 0, self->v[1]));
	ASSERT_EQ(1, jctr(self->t.x, PSJ, IA_C_TAIL_LENT));
	ASSERT_EQ(0, ia_xdp_slot_read(self->t.x, INA, 5, &s));
	ASSERT_EQ(IA_SLOT_TAIL, s.state);
	ASSERT_EQ(IA_SLOT_DONE, s.t.hstate);
}

TEST_F(tail, directory_api)
{
	struct ia_xdp_lend l[2] = { { INA, 5 }, { PSJ, 1 } };
	struct ia_xdp_tail t = { .slots = 8, .nlend = 1, .lend = l };
	struct ia_xdp_tail_info info;
	__u32 k;

	ASSERT_EQ(-ENOENT, ia_xdp_tail_set(self->t.x, &t, NULL, 0));	/* no such job yet */
	ASSERT_EQ(0, add_ina_job(&self->t));
	ASSERT_EQ(-EINVAL, ia_xdp_tail_set(self->t.x, &t, NULL, 0));	/* 5 of a head of 4 */
	l[0].count = 3;
	t.nlend = 2;
	ASSERT_EQ(-EINVAL, ia_xdp_tail_set(self->t.x, &t, NULL, 0));	/* a PS job lends nothing */
	t.nlend = 1;
	t.slots = IA_MAX_TAIL + 1;
	ASSERT_EQ(-EINVAL, ia_xdp_tail_set(self->t.x, &t, NULL, 0));
	t.slots = 8;
	ASSERT_EQ(0, ia_xdp_tail_set(self->t.x, &t, NULL, 0));
	ASSERT_EQ(0, ia_xdp_tail_info(self->t.x, &info));
	ASSERT_EQ(8, info.slots);
	ASSERT_EQ(3, info.lent);
	ASSERT_EQ(1, info.nlend);
	ASSERT_EQ(IA_TAIL_AGE_NS, info.age_ns);
	ASSERT_EQ(0, ia_xdp_tail_lent(self->t.x, INA, &k));
	ASSERT_EQ(3, k);
	/* Deleting the lending job withdraws its lend. */
	ASSERT_EQ(0, ia_xdp_job_del(self->t.x, INA));
	ASSERT_EQ(0, ia_xdp_tail_info(self->t.x, &info));
	ASSERT_EQ(0, info.lent);
	ASSERT_EQ(3, info.reclaims);
	ASSERT_EQ(8, info.slots);
}

/*
 * Chunks go to the tail in runs (ia_tail_hash(), wire.h): a job's
 * IA_TAIL_RUN consecutive chunks take consecutive slots, where the hosts
 * and the simulator compute them, and two switches with the same pool put
 * every chunk in the same slot.
 */
TEST_F(tail, a_run_of_chunks_takes_consecutive_slots_on_every_switch)
{
	const __u32 q0 = 3 * IA_TAIL_RUN, total = 64, v0 = ia_tail_hash(PSJ, q0) % total;
	__u32 q1 = q0 + IA_TAIL_RUN, i, k;
	struct tctx t2 = { .x = NULL };
	struct ia_xdp *sw[2];
	struct ia_slot s;

	memcpy(t2.port, self->t.port, sizeof(t2.port));
	ASSERT_EQ(0, ia_xdp_open(NULL, &t2.x, NULL, 0));
	for (i = 0; i < NPORTS; i++)
		ASSERT_EQ(0, ia_xdp_port_add(t2.x, t2.port[i]));
	ASSERT_EQ(0, add_ps_job(&t2));
	ASSERT_EQ(0, set_tail(&self->t, total, 10ull * 1000000000, 0));	/* nothing ages */
	ASSERT_EQ(0, set_tail(&t2, total, 10ull * 1000000000, 0));
	sw[0] = self->t.x;
	sw[1] = t2.x;
	/* A pool of a power of 2 slots holds whole runs: two runs share all slots or none. */
	ASSERT_EQ(0, v0 % IA_TAIL_RUN);
	/* A later run elsewhere in the pool. */
	while (ia_tail_hash(PSJ, q1) % total == v0)
		q1 += IA_TAIL_RUN;
	for (k = 0; k < 2; k++) {
		for (i = 0; i <= IA_TAIL_RUN; i++) {
			__u32 q = i < IA_TAIL_RUN ? q0 + i : q1;

			vals_of(1, q, self->v[0]);
			ASSERT_EQ(XDP_DROP, run(sw[k], self->t.port[1], self->in,
						piece(self->in, PSJ, q, 1, 1, 0, 0, self->v[0], false),
						self->out, &self->olen));
		}
		for (i = 0; i < IA_TAIL_RUN; i++) {
			ASSERT_EQ(0, ia_xdp_tail_slot_read(sw[k], (v0 + i) % total, &s));
			ASSERT_EQ(IA_SLOT_TAIL, s.state);
			ASSERT_EQ(q0 + i, s.t.seq);
			ASSERT_EQ(1, s.t.set);
		}
		/* The later run's first chunk: where the hash put that run. */
		ASSERT_EQ(0, ia_xdp_tail_slot_read(sw[k], ia_tail_hash(PSJ, q1) % total, &s));
		ASSERT_EQ(q1, s.t.seq);
		ASSERT_EQ(IA_TAIL_RUN + 1, jctr(sw[k], PSJ, IA_C_TAIL_CLAIM));
		ASSERT_EQ(0, jctr(sw[k], PSJ, IA_C_TAIL_COLL));
	}
	ia_xdp_close(t2.x);
}

/* The tail's programs, each within its budget (insns_budget.h; logged: 6.1's in the guest). */
TEST_F(tail, verifier_accepts_the_tail)
{
	static const char *const names[] = { "ia_xdp", "ia_tail", "ia_evict" };
	struct bpf_prog_info info;
	__u32 i;

	for (i = 0; i < 3; i++) {
		ASSERT_EQ(0, switch_prog(self->t.x, names[i], &info));
		TH_LOG("%s: %u instructions, %u processed by the verifier (budget %lu)",
		       names[i], info.xlated_prog_len / 8, info.verified_insns,
		       insns_budget(names[i]));
		ASSERT_LE(info.verified_insns, insns_budget(names[i]));
	}
}

TEST_HARNESS_MAIN
