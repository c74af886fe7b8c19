// SPDX-License-Identifier: GPL-2.0
/*
 * The simulator's cluster (user/lib/sim/sim_cluster.c, docs/cc.md "Cluster
 * simulation") on a small instance: every job completes with every chunk
 * counted once, heads never hold more than a switch's memory, arrivals are
 * a seeded Poisson process (the same for every scheme, repeatable, another
 * seed another), no slot stays free that a running job could take a head
 * in, and with memory for every head a chunk reaches its PS as one message
 * (aggregation at the leaves and at the spine).
 */
#include <math.h>
#include <string.h>

#include "kselftest_harness.h"
#include "sim.h"

#define JOBS	48

/* 8 leaves under 2 spines, 2 hosts a leaf: jobs of 2-8 workers span 1-4 leaves. */
static void small(struct ia_sim_cfg *c, double mem)
{
	ia_sim_cluster_defaults(c);
	c->jobs = JOBS;
	c->leaves = 8;
	c->spines = 2;
	c->hosts = 2;
	c->wmax = 8;
	c->imax = 3;
	c->scale = 8192;	/* 13-66 chunks an iteration */
	c->arrival = 0.2e-3;
	c->rate = 2e5;
	c->leaf_rate = 1e5;
	c->mem = mem;
}

TEST(every_job_completes_within_memory)
{
	struct ia_sim_job jobs[JOBS];
	struct ia_sim_res r;
	struct ia_sim_cfg c;

	small(&c, 0.5);
	for (int s = 0; s < IA_SIM__COUNT; s++) {
		uint32_t multi = 0, ps = 0;

		ASSERT_EQ(0, ia_sim_run(&c, s, &r, jobs));
		for (int i = 0; i < JOBS; i++) {
			/* workers x chunks x iterations x 1 KiB, each counted at its one result */
			ASSERT_EQ(jobs[i].workers * jobs[i].chunks * jobs[i].iters * 1024.0,
				  jobs[i].bytes)
				TH_LOG("%s job %d", ia_sim_scheme_name(s), i);
			ASSERT_LT(0, jobs[i].jct);
			ASSERT_LE(jobs[i].arrival + jobs[i].jct, r.makespan);
			multi += jobs[i].nleaves > 1;
			ps += jobs[i].ps || jobs[i].promoted;
		}
		ASSERT_LT(0u, multi);
		/* Loaded: some jobs found no head at their arrival... */
		ASSERT_LT(0u, ps) TH_LOG("%s", ia_sim_scheme_name(s));
		/* ...yet no switch's heads ever held more than its slots. */
		ASSERT_LT(0, r.mem_peak);
		ASSERT_GE(1.0, r.mem_peak);
		/* NetPack-style selection keeps up: no slot a running job could use stays free. */
		ASSERT_EQ(0, r.idle_time) TH_LOG("%s", ia_sim_scheme_name(s));
		ASSERT_LT(0, r.free_frac);
	}
}

TEST(poisson_arrivals_seeded_and_repeatable)
{
	struct ia_sim_job a[JOBS], b[JOBS];
	struct ia_sim_res ra, rb;
	struct ia_sim_cfg c;
	double sum = 0, sq = 0, mean, cv;

	small(&c, 0.25);
	ASSERT_EQ(0, ia_sim_run(&c, IA_SIM_NETPACK_ATP, &ra, a));
	ASSERT_EQ(0, ia_sim_run(&c, IA_SIM_FLEXINA, &rb, b));
	ASSERT_EQ(0, a[0].arrival);
	for (int i = 0; i < JOBS; i++) {
		/* the same jobs, at the same times, for every scheme */
		ASSERT_EQ(a[i].arrival, b[i].arrival);
		ASSERT_EQ(a[i].leaf, b[i].leaf);
		ASSERT_EQ(a[i].model, b[i].model);
		ASSERT_EQ(a[i].iters, b[i].iters);
		ASSERT_EQ(a[i].workers, b[i].workers);
		ASSERT_EQ(a[i].chunks, b[i].chunks);
		if (i) {
			double g = a[i].arrival - a[i - 1].arrival;

			ASSERT_LT(0, g);
			sum += g;
			sq += g * g;
		}
	}
	/* Exponential gaps: mean near c.arrival, standard deviation near the mean. */
	mean = sum / (JOBS - 1);
	cv = sqrt(sq / (JOBS - 1) - mean * mean) / mean;
	ASSERT_LT(0.6 * c.arrival, mean);
	ASSERT_GT(1.4 * c.arrival, mean);
	ASSERT_LT(0.6, cv);
	ASSERT_GT(1.4, cv);
	/* Repeatable to the bit for a seed; another seed, other arrivals. */
	ASSERT_EQ(0, ia_sim_run(&c, IA_SIM_FLEXINA, &ra, a));
	ASSERT_EQ(0, memcmp(&ra, &rb, sizeof(ra)));
	ASSERT_EQ(0, memcmp(a, b, sizeof(a)));
	c.seed = 2;
	ASSERT_EQ(0, ia_sim_run(&c, IA_SIM_FLEXINA, &ra, a));
	ASSERT_NE(a[1].arrival, b[1].arrival);
}

/*
 * Memory for every head: every job is INA on each switch it aggregates at,
 * so each chunk reaches its PS as one message, whatever its leaves.
 */
TEST(aggregated_at_both_levels)
{
	struct ia_sim_job jobs[JOBS];
	struct ia_sim_res r;
	struct ia_sim_cfg c;

	small(&c, 8.0);
	c.spine_slots = 64 * JOBS;
	ASSERT_EQ(0, ia_sim_run(&c, IA_SIM_NETPACK_ATP, &r, jobs));
	ASSERT_EQ(0u, r.n_ps);
	ASSERT_EQ(1.0, r.up);
	/* With no memory at all, every worker's piece reaches the PS on its own. */
	c.leaf_slots = c.spine_slots = 1;
	ASSERT_EQ(0, ia_sim_run(&c, IA_SIM_NETPACK_ATP, &r, jobs));
	ASSERT_EQ(0u, r.n_ina);
	ASSERT_LT(2.0, r.up);
}

TEST(cluster_config_checked)
{
	struct ia_sim_res r;
	struct ia_sim_cfg c;

	small(&c, 0.5);
	c.leaves = 9;		/* not whole spines */
	ASSERT_EQ(-EINVAL, ia_sim_run(&c, IA_SIM_FLEXINA, &r, NULL));
	small(&c, 0.5);
	c.wmax = 17;		/* more workers than one spine's hosts */
	ASSERT_EQ(-EINVAL, ia_sim_run(&c, IA_SIM_FLEXINA, &r, NULL));
	small(&c, 0.5);
	c.imin = 4;
	c.imax = 3;
	ASSERT_EQ(-EINVAL, ia_sim_run(&c, IA_SIM_FLEXINA, &r, NULL));
}

TEST_HARNESS_MAIN
