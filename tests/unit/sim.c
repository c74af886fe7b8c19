// SPDX-License-Identifier: GPL-2.0
/*
 * The multi-tenant simulator (user/lib/sim*.c): every chunk of every job is
 * aggregated exactly once, every scheme sees the same job mix, results repeat
 * for a seed, schemes that coincide by construction give identical runs, and
 * switch-memory use for PS jobs shows where the model says it must; on a
 * given mix (the live experiment's), the PS merges every piece once, tails
 * exist only where something is lent or left over, and a straggler's slots
 * are flushed by the datapath's rules.
 */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "kselftest_harness.h"
#include "sim.h"

static void small(struct ia_sim_cfg *c, double mem)
{
	ia_sim_defaults(c);
	c->jobs = 24;
	c->depth = 4;
	c->iters = 2;
	c->cmin = 16;
	c->cmax = 96;
	c->mem = mem;
}

TEST(every_chunk_aggregated_once)
{
	struct ia_sim_job jobs[24];
	struct ia_sim_res r;
	struct ia_sim_cfg c;

	small(&c, 0.5);
	for (int s = 0; s < IA_SIM__COUNT; s++) {
		ASSERT_EQ(0, ia_sim_run(&c, s, &r, jobs));
		ASSERT_EQ(24u, r.n_ina + r.n_ps);
		ASSERT_LT(0u, r.n_ina);
		ASSERT_LT(0u, r.n_ps);
		for (int i = 0; i < 24; i++) {
			/* workers x chunks x iterations x 1 KiB, each counted at its one result */
			ASSERT_EQ(jobs[i].workers * jobs[i].chunks * c.iters * 1024.0, jobs[i].bytes)
				TH_LOG("%s job %d", ia_sim_scheme_name(s), i);
			ASSERT_LT(0, jobs[i].jct);
		}
		ASSERT_LT(0, r.tput);
		ASSERT_LT(0, r.jain);
		ASSERT_GE(1.0, r.jain);
		ASSERT_GE(1.0, r.util);
	}
}

TEST(same_mix_for_every_scheme_and_repeatable)
{
	struct ia_sim_job a[24], b[24];
	struct ia_sim_res ra, rb;
	struct ia_sim_cfg c;

	small(&c, 0.25);
	ASSERT_EQ(0, ia_sim_run(&c, IA_SIM_NETPACK_ATP, &ra, a));
	ASSERT_EQ(0, ia_sim_run(&c, IA_SIM_FLEXINA, &rb, b));
	for (int i = 0; i < 24; i++) {
		ASSERT_EQ(a[i].leaf, b[i].leaf);
		ASSERT_EQ(a[i].workers, b[i].workers);
		ASSERT_EQ(a[i].chunks, b[i].chunks);
		ASSERT_EQ(a[i].ps, b[i].ps);
	}
	ASSERT_EQ(0, ia_sim_run(&c, IA_SIM_FLEXINA, &ra, a));
	ASSERT_EQ(0, memcmp(&ra, &rb, sizeof(ra)));
	ASSERT_EQ(0, memcmp(a, b, sizeof(a)));
	/* Another seed, another mix. */
	c.seed = 2;
	ASSERT_EQ(0, ia_sim_run(&c, IA_SIM_FLEXINA, &ra, a));
	ASSERT_NE(0, memcmp(a, b, sizeof(a)));
}

/*
 * With memory for every head there are no PS jobs, so the tail changes
 * nothing: flexina runs as flexina-notail and ht-atp as netpack-atp.
 */
TEST(schemes_coincide_without_ps_jobs)
{
	struct ia_sim_res r[IA_SIM__COUNT];
	struct ia_sim_cfg c;

	small(&c, 1.0);
	for (int s = 0; s < IA_SIM__COUNT; s++)
		ASSERT_EQ(0, ia_sim_run(&c, s, &r[s], NULL));
	ASSERT_EQ(0u, r[0].n_ps);
	/* a2tp is A2TP's own rule (alpha from 0), no longer flexina's INA rule. */
	ASSERT_EQ(0, memcmp(&r[IA_SIM_FLEXINA_NOTAIL], &r[IA_SIM_FLEXINA], sizeof(r[0])));
	/* netpack-a2tp's INA jobs share their leaf's memory as A2TP's do: they collide. */
	ASSERT_LT(0, r[IA_SIM_NETPACK_A2TP].coll_rate);
	ASSERT_EQ(0, memcmp(&r[IA_SIM_HT_ATP], &r[IA_SIM_NETPACK_ATP], sizeof(r[0])));
	ASSERT_EQ(0, r[IA_SIM_FLEXINA].coll_rate);
}

/* PS jobs aggregate in the tail only where the scheme gives them one. */
TEST(tail_only_for_head_tail_schemes)
{
	struct ia_sim_job jobs[24];
	struct ia_sim_res r;
	struct ia_sim_cfg c;
	uint64_t msgs[IA_SIM__COUNT] = {};

	small(&c, 0.25);
	/* The heads fill the leaves: the tail is what they lent while set up. */
	c.lent_start = 16;
	for (int s = 0; s < IA_SIM__COUNT; s++) {
		ASSERT_EQ(0, ia_sim_run(&c, s, &r, jobs));
		for (int i = 0; i < 24; i++)
			msgs[s] += jobs[i].msgs;
		/* netpack-a2tp: its INA jobs' shared pool (PS jobs still have none). */
		if (s == IA_SIM_FLEXINA || s == IA_SIM_HT_ATP || s == IA_SIM_NETPACK_A2TP) {
			ASSERT_LT(0, r.coll_rate);
		} else {
			ASSERT_EQ(0, r.coll_rate);
		}
	}
	/* Aggregating in the tail, PS jobs put fewer messages on the bottleneck. */
	ASSERT_LT(msgs[IA_SIM_FLEXINA], msgs[IA_SIM_FLEXINA_NOTAIL]);
	ASSERT_LT(msgs[IA_SIM_HT_ATP], msgs[IA_SIM_NETPACK_ATP]);
}

TEST(config_checked)
{
	struct ia_sim_res r;
	struct ia_sim_cfg c;
	enum ia_sim_scheme s;

	small(&c, 0.5);
	c.jobs = 0;
	ASSERT_EQ(-EINVAL, ia_sim_run(&c, IA_SIM_FLEXINA, &r, NULL));
	small(&c, 0.5);
	c.wmin = 9;
	ASSERT_EQ(-EINVAL, ia_sim_run(&c, IA_SIM_FLEXINA, &r, NULL));
	small(&c, 0.5);
	c.rate = 0;
	ASSERT_EQ(-EINVAL, ia_sim_run(&c, IA_SIM_FLEXINA, &r, NULL));
	small(&c, 0.5);
	c.wake = -1e-3;
	ASSERT_EQ(-EINVAL, ia_sim_run(&c, IA_SIM_FLEXINA, &r, NULL));
	small(&c, 0.5);
	c.tail_age = -1;
	ASSERT_EQ(-EINVAL, ia_sim_run(&c, IA_SIM_FLEXINA, &r, NULL));
	small(&c, 0.5);
	ASSERT_EQ(-EINVAL, ia_sim_run(&c, IA_SIM__COUNT, &r, NULL));
	for (int i = 0; i < IA_SIM__COUNT; i++) {
		ASSERT_EQ(0, ia_sim_scheme_parse(ia_sim_scheme_name(i), &s));
		ASSERT_EQ(i, (int)s);
	}
	ASSERT_EQ(-EINVAL, ia_sim_scheme_parse("netpack", &s));
}

/*
 * The live experiment's shape: 8 jobs of 3 workers, 4 on each of 2 leaves,
 * memory 0.5: two heads fill each leaf (no tail pool), the other two jobs
 * are PS. straggle: worker 0 of every job computes 10 ms before each
 * iteration (the others 0).
 */
static void given(struct ia_sim_cfg *c, struct ia_sim_mixjob *mix, double straggle)
{
	ia_sim_defaults(c);
	c->jobs = 8;
	c->depth = 1;
	c->iters = 3;
	c->mem = 0.5;
	c->rate = 5000;
	c->thresh = 29;
	c->buffer = 5000;
	c->rtt = 100e-6;
	c->rto = 50e-3;
	c->mix = mix;
	for (uint32_t i = 0; i < 8; i++) {
		mix[i] = (struct ia_sim_mixjob){ .leaf = i % 2, .workers = 3,
						 .chunks = 48 + 8 * i };
		mix[i].gap[0] = straggle;
	}
}

TEST(given_mix_run_as_given)
{
	struct ia_sim_mixjob mix[8];
	struct ia_sim_job jobs[8];
	struct ia_sim_res r;
	struct ia_sim_cfg c;

	given(&c, mix, 10e-3);
	for (int s = 0; s < IA_SIM__COUNT; s++) {
		ASSERT_EQ(0, ia_sim_run(&c, s, &r, jobs));
		ASSERT_EQ(4u, r.n_ina);
		ASSERT_EQ(4u, r.n_ps);
		ASSERT_EQ(2u * 2 * 64, r.slots);
		ASSERT_EQ(0u, r.idle);
		for (uint32_t i = 0; i < 8; i++) {
			ASSERT_EQ(mix[i].leaf, jobs[i].leaf);
			ASSERT_EQ(mix[i].workers, jobs[i].workers);
			ASSERT_EQ(mix[i].chunks, jobs[i].chunks);
			/* Largest benefit first: the two longest of each leaf have heads. */
			ASSERT_EQ(i < 4, jobs[i].ps);
			ASSERT_EQ(3 * jobs[i].chunks * c.iters * 1024.0, jobs[i].bytes);
		}
	}
	/* A leaf of the mix beyond the tree is refused. */
	mix[3].leaf = 2;
	ASSERT_EQ(-EINVAL, ia_sim_run(&c, IA_SIM_FLEXINA, &r, NULL));
}

/*
 * Without tails, with a buffer and timers nothing outgrows, the PS merges
 * each piece once and nothing in vain: an INA chunk's one aggregate, a PS
 * chunk's one message per worker.
 */
TEST(ps_merges_every_piece_once)
{
	struct ia_sim_mixjob mix[8];
	struct ia_sim_res r;
	struct ia_sim_cfg c;
	double ina = 0, ps = 0;

	given(&c, mix, 0);
	c.buffer = 100000;
	c.rto = 10;
	ASSERT_EQ(0, ia_sim_run(&c, IA_SIM_NETPACK_ATP, &r, NULL));
	for (uint32_t i = 0; i < 8; i++) {
		if (i >= 4)
			ina += mix[i].chunks * c.iters;
		else
			ps += mix[i].chunks * c.iters;
	}
	ASSERT_EQ(0, r.waste);
	ASSERT_EQ(0, r.retx_rate);
	ASSERT_LT(fabs(r.up - (ina + 3 * ps) / (ina + ps)), 1e-12);
}

/*
 * Here the heads fill the leaves: PS jobs have only what INA jobs lend, and
 * a head lends only once the daemon's samples saw it idle for lend_hold of
 * them. Never lending, flexina is flexina-notail to the bit; lending, its
 * PS jobs aggregate (fewer messages merged per chunk).
 */
TEST(lent_slots_are_the_only_tail)
{
	struct ia_sim_res r, notail;
	struct ia_sim_mixjob mix[8];
	struct ia_sim_cfg c;

	given(&c, mix, 10e-3);
	c.lend_hold = 100000;
	ASSERT_EQ(0, ia_sim_run(&c, IA_SIM_FLEXINA, &r, NULL));
	ASSERT_EQ(0, ia_sim_run(&c, IA_SIM_FLEXINA_NOTAIL, &notail, NULL));
	ASSERT_EQ(0, memcmp(&r, &notail, sizeof(r)));
	ASSERT_EQ(0, r.coll_rate);
	c.lend_hold = 0;
	ASSERT_EQ(0, ia_sim_run(&c, IA_SIM_FLEXINA, &r, NULL));
	ASSERT_LT(r.up, notail.up);
	ASSERT_LT(0, r.coll_rate);
	/* What the heads lent before the start (the daemon's samples while set up) is a tail. */
	c.lend_hold = 100000;
	c.lent_start = 24;
	ASSERT_EQ(0, ia_sim_run(&c, IA_SIM_FLEXINA, &r, NULL));
	ASSERT_LT(r.up, notail.up);
	ASSERT_LT(0, r.coll_rate);
}

/*
 * A partial taken out by a claim (or an eviction) leaves in the claiming
 * frame only if the frame can grow by the member set's trailer; where none
 * can, every such partial is dropped: nothing is flushed, its members'
 * contributions come again by RACK or timer (raw), and every chunk still
 * completes exactly once.
 */
TEST(partials_dropped_without_room)
{
	struct ia_sim_mixjob mix[8];
	struct ia_sim_job jobs[8];
	struct ia_sim_res r, some;
	struct ia_sim_cfg c;

	given(&c, mix, 10e-3);
	ASSERT_EQ(0, ia_sim_run(&c, IA_SIM_HT_ATP, &some, NULL));
	c.noroom = 1;
	ASSERT_EQ(0, ia_sim_run(&c, IA_SIM_HT_ATP, &r, jobs));
	TH_LOG("flushes %.3f / %.3f, dropped %.3f / %.3f, retx %.3f / %.3f", some.flushes,
	       r.flushes, some.discards, r.discards, some.retx_rate, r.retx_rate);
	ASSERT_LT(0, some.flushes);
	ASSERT_EQ(0, some.discards);
	ASSERT_EQ(0, r.flushes);
	ASSERT_LT(0, r.discards);
	ASSERT_LT(some.retx_rate, r.retx_rate);
	for (uint32_t i = 0; i < 8; i++)
		ASSERT_EQ(3 * jobs[i].chunks * c.iters * 1024.0, jobs[i].bytes);
	c.noroom = 1.5;
	ASSERT_EQ(-EINVAL, ia_sim_run(&c, IA_SIM_HT_ATP, &r, NULL));
}

/*
 * At the start every window queues at once, and the first results come
 * after the workers' timers fired for the first chunk: a result then
 * answers its first send, and the next chunk's timer has long run out.
 * Taking in results one by one, the worker resends that chunk before its
 * result, which comes one message later, and so on through the window
 * (each resend lengthening the queue); taking in what came meanwhile, as a
 * worker does that runs only now and then, its later results restart the
 * timer first.
 */
TEST(results_taken_in_batches_spare_the_queue)
{
	struct ia_sim_res one, batch;
	struct ia_sim_mixjob mix[8];
	struct ia_sim_cfg c;

	given(&c, mix, 10e-3);
	c.rate = 2000;		/* the first windows' queue outlasts the timer */
	c.buffer = 100000;
	ASSERT_EQ(0, ia_sim_run(&c, IA_SIM_NETPACK_ATP, &one, NULL));
	c.wake = 1e-3;
	ASSERT_EQ(0, ia_sim_run(&c, IA_SIM_NETPACK_ATP, &batch, NULL));
	TH_LOG("timer resends per result %.3f / %.3f, waste %.2f / %.2f", one.tmo_rate,
	       batch.tmo_rate, one.waste, batch.waste);
	ASSERT_LT(2 * batch.tmo_rate, one.tmo_rate);
	ASSERT_LT(2 * batch.waste, one.waste);
	ASSERT_LT(one.tput, batch.tput);
}

/*
 * A chunk that collided leaves a partial that never completes when a later
 * member claims the slot; other chunks collide with it until it is older
 * than the flush age, and the next claim then flushes it (one message up).
 * Partials that are never flushed block their slots for good; flushed at
 * once, they block none but cost a message each. In this mix a collided
 * partial's slot is claimed again 60-90 ms later: 80 ms flushes some.
 */
TEST(stale_partials_flushed_by_age)
{
	struct ia_sim_res r[3];
	struct ia_sim_mixjob mix[8];
	static const double age[3] = { 10, 80e-3, 1e-6 };
	struct ia_sim_cfg c;

	for (int a = 0; a < 3; a++) {
		given(&c, mix, 10e-3);
		/* Jobs 4-7 asked as PS: the shorter jobs hold the heads, the timing above. */
		for (int i = 4; i < 8; i++)
			mix[i].ps = true;
		c.tail_age = age[a];
		ASSERT_EQ(0, ia_sim_run(&c, IA_SIM_HT_ATP, &r[a], NULL));
		TH_LOG("age %g s: colls %.3f, flushes %.3f, up %.2f", age[a], r[a].coll_rate,
		       r[a].flushes, r[a].up);
	}
	ASSERT_LT(r[1].coll_rate, r[0].coll_rate);
	ASSERT_LT(r[2].coll_rate, r[1].coll_rate);
	ASSERT_LT(r[0].flushes, r[1].flushes);
	ASSERT_LT(r[1].flushes, r[2].flushes);
}

TEST_HARNESS_MAIN
