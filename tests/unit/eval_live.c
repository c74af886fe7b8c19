// SPDX-License-Identifier: GPL-2.0
/*
 * The live multi-tenant experiment's job mix (user/lib/eval_live.h): drawn
 * from the seed alone (every scheme of a round runs the same jobs), within
 * the configured ranges, the requested INA:PS mix, one straggler per job;
 * configurations out of range are refused.
 */
#include <string.h>

#include "kselftest_harness.h"
#include "eval_live.h"

static struct ia_live_cfg cfg(void)
{
	struct ia_live_cfg c;

	ia_live_defaults(&c);
	c.bindir = "/nonexistent";
	c.workdir = "/nonexistent";
	return c;
}

TEST(same_seed_same_mix_other_seed_other_mix)
{
	struct ia_live_mixjob a[IA_LIVE_MAX_JOBS], b[IA_LIVE_MAX_JOBS];
	struct ia_live_cfg c = cfg();

	ia_live_mix(&c, a);
	ia_live_mix(&c, b);
	EXPECT_EQ(0, memcmp(a, b, c.jobs * sizeof(a[0])));
	c.seed++;
	ia_live_mix(&c, b);
	EXPECT_NE(0, memcmp(a, b, c.jobs * sizeof(a[0])));
}

TEST(mix_within_ranges_with_one_straggler_per_job)
{
	struct ia_live_mixjob m[IA_LIVE_MAX_JOBS];
	struct ia_live_cfg c = cfg();

	for (c.seed = 1; c.seed < 50; c.seed++) {
		ia_live_mix(&c, m);
		for (uint32_t i = 0; i < c.jobs; i++) {
			int stragglers = 0;

			EXPECT_EQ(i % c.leaves, m[i].leaf);
			EXPECT_LE(c.wmin, m[i].workers);
			EXPECT_GE(c.wmax, m[i].workers);
			EXPECT_LE(c.cmin, m[i].chunks);
			EXPECT_GE(c.cmax, m[i].chunks);
			for (uint32_t w = 0; w < m[i].workers; w++) {
				EXPECT_LE(0, m[i].gap_ms[w]);
				EXPECT_GE(c.gap_ms, m[i].gap_ms[w]);
				stragglers += m[i].gap_ms[w] >= 0.5 * c.gap_ms;
			}
			EXPECT_EQ(1, stragglers) TH_LOG("seed %llu job %u",
							(unsigned long long)c.seed, i);
		}
	}
}

TEST(requested_mix)
{
	struct ia_live_mixjob m[IA_LIVE_MAX_JOBS];
	struct ia_live_cfg c = cfg();
	static const uint32_t share[] = { 0, 1, 3 };
	static const int want_ps[] = { 0, 4, 6 };	/* of 8 jobs */

	for (int k = 0; k < 3; k++) {
		int ps = 0;

		c.ps_per_ina = share[k];
		ia_live_mix(&c, m);
		for (uint32_t i = 0; i < c.jobs; i++)
			ps += m[i].want_ps;
		EXPECT_EQ(want_ps[k], ps) TH_LOG("1:%u", share[k]);
		EXPECT_FALSE(m[0].want_ps);	/* the first job asks for a head */
	}
}

TEST(bad_configurations_refused)
{
	struct ia_live_cfg c = cfg();

	EXPECT_EQ(0, ia_live_check(&c));
	c.jobs = IA_LIVE_MAX_JOBS + 1;
	EXPECT_NE(0, ia_live_check(&c));
	c = cfg();
	c.wmax = IA_LIVE_MAX_W + 1;
	EXPECT_NE(0, ia_live_check(&c));
	c = cfg();
	c.wmin = 5;
	c.wmax = 4;
	EXPECT_NE(0, ia_live_check(&c));
	c = cfg();
	c.cross = 1;
	EXPECT_NE(0, ia_live_check(&c));
	c = cfg();
	c.bindir = NULL;
	EXPECT_NE(0, ia_live_check(&c));
}

TEST_HARNESS_MAIN
