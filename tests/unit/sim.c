// SPDX-License-Identifier: GPL-2.0
/*
 * The multi-tenant simulator (user/lib/sim*.c): every chunk of every job is
 * aggregated exactly once, every scheme sees the same job mix, results repeat
 * for a seed, schemes that coincide by construction give identical runs, and
 * switch-memory use for PS jobs shows where the model says it must.
 */
#include <errno.h>
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
 * nothing: flexina runs as netpack-a2tp (INA jobs cut cwnd(1 - alpha/2) in
 * both) and ht-atp as netpack-atp.
 */
TEST(schemes_coincide_without_ps_jobs)
{
	struct ia_sim_res r[IA_SIM__COUNT];
	struct ia_sim_cfg c;

	small(&c, 1.0);
	for (int s = 0; s < IA_SIM__COUNT; s++)
		ASSERT_EQ(0, ia_sim_run(&c, s, &r[s], NULL));
	ASSERT_EQ(0u, r[0].n_ps);
	ASSERT_EQ(0, memcmp(&r[IA_SIM_FLEXINA], &r[IA_SIM_NETPACK_A2TP], sizeof(r[0])));
	ASSERT_EQ(0, memcmp(&r[IA_SIM_FLEXINA_NOTAIL], &r[IA_SIM_NETPACK_A2TP], sizeof(r[0])));
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
	for (int s = 0; s < IA_SIM__COUNT; s++) {
		ASSERT_EQ(0, ia_sim_run(&c, s, &r, jobs));
		for (int i = 0; i < 24; i++)
			msgs[s] += jobs[i].msgs;
		if (s == IA_SIM_FLEXINA || s == IA_SIM_HT_ATP) {
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
	ASSERT_EQ(-EINVAL, ia_sim_run(&c, IA_SIM__COUNT, &r, NULL));
	for (int i = 0; i < IA_SIM__COUNT; i++) {
		ASSERT_EQ(0, ia_sim_scheme_parse(ia_sim_scheme_name(i), &s));
		ASSERT_EQ(i, (int)s);
	}
	ASSERT_EQ(-EINVAL, ia_sim_scheme_parse("netpack", &s));
}

TEST_HARNESS_MAIN
