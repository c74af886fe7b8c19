// SPDX-License-Identifier: GPL-2.0
/*
 * Table-driven BPF_PROG_TEST_RUN tests of a PS job removed and added again
 * with its old partials still in the tail (docs/memory.md, generations): the
 * new job never adds into them nor gets them flushed, and each one dropped
 * counts as a discard, in a claim and in a blue job's eviction.
 */
#pragma GCC diagnostic ignored "-Wsign-compare"
#include "xdp_tail.h"

/*
 * A PS job removed and added again (same id) within the flush age: its
 * former self's partial is another generation's, never added into; the
 * new job's first message takes the slot at once.
 */
TEST_F(tail, readded_job_never_adds_into_old_partials)
{
	__u32 q = seq_to(4, 1, 0), i;
	struct ia_slot s;

	YOUNG_TAIL(q, 4);	/* nothing ages */
	vals_of(9, q, self->v[4]);
	ASSERT_EQ(XDP_DROP, SEND(q, 1, 1, 0, 0, self->v[4]));	/* the old job's rank 0 */
	ASSERT_EQ(0, ia_xdp_job_del(self->t.x, PSJ));
	ASSERT_EQ(0, add_ps_job(&self->t));
	ASSERT_EQ(XDP_DROP, SEND(q, 2, 1, 0, 0, self->v[1]));
	ASSERT_EQ(1, jctr(self->t.x, PSJ, IA_C_TAIL_CLAIM));
	ASSERT_EQ(1, jctr(self->t.x, PSJ, IA_C_TAIL_DISCARD));
	ASSERT_EQ(0, jctr(self->t.x, PSJ, IA_C_TAIL_HIT));
	ASSERT_EQ(0, ia_xdp_tail_slot_read(self->t.x, 1, &s));
	ASSERT_EQ(2, s.t.set);
	/* Rank 0 again, of the new job: added, not a duplicate; the sum is the new job's. */
	ASSERT_EQ(XDP_DROP, SEND(q, 1, 1, 0, 0, self->v[0]));
	ASSERT_EQ(XDP_DROP, SEND(q, 3, 1, 0, 0, self->v[2]));
	ASSERT_EQ(XDP_REDIRECT, SEND(q, LOWER, 2, 0, 0, self->v[3]));
	for (i = 0; i < 4; i++)
		vals_add(self->sum, self->v[i]);
	EXPECT_OUT(PSJ, q, SELF_ID, 5, 0, 0, self->sum);
	ASSERT_EQ(0, jctr(self->t.x, PSJ, IA_C_DUP));
	ASSERT_EQ(1, jctr(self->t.x, PSJ, IA_C_TAIL_COMPLETE));
}

/* Nor is an old generation's partial flushed to the job added again: it is lost. */
TEST_F(tail, readded_job_gets_no_flush_of_old_partials)
{
	__u32 q1 = seq_to(4, 0, 0), q2 = seq_to(4, 0, q1 + 1);
	struct ia_slot s;

	HOLD_FIRST(4, 1, q1, q2, 0);	/* 1 ns: every holder is old */
	ASSERT_EQ(0, ia_xdp_job_del(self->t.x, PSJ));
	ASSERT_EQ(0, add_ps_job(&self->t));
	ASSERT_EQ(XDP_DROP, SEND(q2, 2, 1, 0, 0, self->v[1]));
	ASSERT_EQ(0, jctr(self->t.x, PSJ, IA_C_TAIL_FLUSH));
	ASSERT_EQ(0, jctr(self->t.x, PSJ, IA_C_TX));
	ASSERT_EQ(1, jctr(self->t.x, PSJ, IA_C_TAIL_CLAIM));
	ASSERT_EQ(0, ia_xdp_tail_slot_read(self->t.x, 0, &s));
	ASSERT_EQ(q2, s.t.seq);
	ASSERT_EQ(2, s.t.set);
	ASSERT_EQ((__u32)self->v[1][5], (__u32)s.sum[5]);
}

/*
 * The old generation's partial, old and of the same length, is swapped out
 * of the slot and then dropped by send_flush(): it is a discard, counted
 * (tail_discards), as when it is young (issue 32). A pool of one slot.
 */
TEST_F(tail, readded_job_old_partial_counted_discarded)
{
	HOLD_FIRST(1, 1, 200, 201, 0);	/* 1 ns: every holder is old */
	ASSERT_EQ(0, ia_xdp_job_del(self->t.x, PSJ));
	ASSERT_EQ(0, add_ps_job(&self->t));
	ASSERT_EQ(XDP_DROP, SEND(201, 2, 1, 0, 0, self->v[1]));
	ASSERT_EQ(1, jctr(self->t.x, PSJ, IA_C_TAIL_CLAIM));
	ASSERT_EQ(1, jctr(self->t.x, PSJ, IA_C_TAIL_DISCARD));
	ASSERT_EQ(0, jctr(self->t.x, PSJ, IA_C_TAIL_FLUSH));
	ASSERT_EQ(0, jctr(self->t.x, PSJ, IA_C_TX));
}

/* The same in the eviction path: a blue chunk takes back a lent slot from a gone generation. */
TEST_F(tail, eviction_of_old_generation_counted_discarded)
{
	__u32 q = seq_to(2, 1, 0);
	__s32 a[NE];
	struct ia_slot s;
	int e;

	ASSERT_EQ(0, add_ina_job(&self->t));
	ASSERT_EQ(0, set_tail(&self->t, 0, 0, 2));	/* no pool: head slots 2, 3 */
	vals_of(1, q, self->v[0]);
	ASSERT_EQ(XDP_DROP, SEND(q, 1, 1, 0, 0, self->v[0]));
	ASSERT_EQ(0, ia_xdp_job_del(self->t.x, PSJ));
	ASSERT_EQ(0, add_ps_job(&self->t));
	for (e = 0; e < NE; e++)
		a[e] = 1000 + e;
	ASSERT_EQ(XDP_DROP, run(self->t.x, self->t.port[1], self->in,
				piece(self->in, INA, 3, 11, 1, 0, 0, a, false), self->out,
				&self->olen));
	ASSERT_EQ(1, jctr(self->t.x, INA, IA_C_TAIL_EVICT));
	ASSERT_EQ(1, jctr(self->t.x, INA, IA_C_TAIL_DISCARD));
	ASSERT_EQ(1, jctr(self->t.x, INA, IA_C_AGGREGATED));
	ASSERT_EQ(0, jctr(self->t.x, INA, IA_C_TX));
	ASSERT_EQ(0, jctr(self->t.x, PSJ, IA_C_TAIL_FLUSH));
	ASSERT_EQ(0, ia_xdp_slot_read(self->t.x, INA, 3, &s));
	ASSERT_EQ(IA_SLOT_OPEN, s.state);
	ASSERT_EQ(3, s.seq);
	ASSERT_EQ(a[4], s.sum[4]);
}

TEST_HARNESS_MAIN
