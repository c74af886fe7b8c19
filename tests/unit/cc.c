// SPDX-License-Identifier: GPL-2.0
/*
 * Window policies (user/lib/cc.c): the window sequence of each policy for
 * given mark / collision / timeout patterns, against values worked out by
 * hand from the formulas of docs/cc.md (the arithmetic is in the comments).
 */
#include <errno.h>
#include <string.h>

#include "kselftest_harness.h"
#include "cc.h"

static void make(struct __test_metadata *_metadata, struct ia_cc *cc, enum ia_cc_policy p,
		 bool ps, uint32_t init, uint32_t wmax)
{
	struct ia_cc_cfg cfg = { .policy = p, .ps = ps, .wmax = wmax, .init = init };

	ASSERT_EQ(0, ia_cc_init(cc, &cfg, 0));
	ASSERT_EQ(init, ia_cc_window(cc));
}

/* n results, the first `marked` of them marked and the first `coll` collided. */
static void results(struct ia_cc *cc, uint32_t n, uint32_t marked, uint32_t coll)
{
	static uint64_t now;

	for (uint32_t i = 0; i < n; i++)
		ia_cc_result(cc, (i < marked ? IA_CC_MARK : 0) | (i < coll ? IA_CC_COLL : 0), ++now);
}

TEST(fixed_is_aimd_on_timeouts)
{
	struct ia_cc cc;

	make(_metadata, &cc, IA_CC_FIXED, false, 4, 8);
	/* +1 per result, marks and collisions ignored, clamped at wmax. */
	results(&cc, 1, 0, 0);
	ASSERT_EQ(5u, ia_cc_window(&cc));
	results(&cc, 2, 2, 2);
	ASSERT_EQ(7u, ia_cc_window(&cc));
	results(&cc, 5, 0, 0);
	ASSERT_EQ(8u, ia_cc_window(&cc));
	ASSERT_EQ(8u, ia_cc_agg_window(&cc));
	/* Halve on a timeout, never below 1. */
	ia_cc_timeout(&cc, 100);
	ASSERT_EQ(4u, ia_cc_window(&cc));
	ASSERT_EQ(100u, cc.t_cut);
	ia_cc_timeout(&cc, 101);
	ia_cc_timeout(&cc, 102);
	ASSERT_EQ(1u, ia_cc_window(&cc));
	ia_cc_timeout(&cc, 103);
	ASSERT_EQ(1u, ia_cc_window(&cc));
	ASSERT_EQ(3u, cc.cuts);
}

TEST(atp_once_per_window)
{
	struct ia_cc cc;

	make(_metadata, &cc, IA_CC_ATP, false, 8, 16);
	/* Round of 8 clean results: 8 + 1. */
	results(&cc, 7, 0, 0);
	ASSERT_EQ(8u, ia_cc_window(&cc));
	results(&cc, 1, 0, 0);
	ASSERT_EQ(9u, ia_cc_window(&cc));
	/* Round of 9: the first mark halves at once (9 / 2 = 4) ... */
	results(&cc, 1, 1, 0);
	ASSERT_EQ(4u, ia_cc_window(&cc));
	/* ... the next marks of the same round do nothing, nor does its end. */
	results(&cc, 8, 3, 0);
	ASSERT_EQ(4u, ia_cc_window(&cc));
	/* Rounds of 4 and 5 clean results: 5, 6. */
	results(&cc, 4, 0, 0);
	ASSERT_EQ(5u, ia_cc_window(&cc));
	results(&cc, 5, 0, 0);
	ASSERT_EQ(6u, ia_cc_window(&cc));
	/* Collisions mean nothing to atp. */
	results(&cc, 6, 0, 6);
	ASSERT_EQ(7u, ia_cc_window(&cc));
	ASSERT_EQ(16u, cc.awnd);
	/* A timeout halves (7 / 2 = 3) and starts a round of 3. */
	results(&cc, 2, 0, 0);
	ia_cc_timeout(&cc, 1000);
	ASSERT_EQ(3u, ia_cc_window(&cc));
	results(&cc, 3, 0, 0);
	ASSERT_EQ(4u, ia_cc_window(&cc));
	ASSERT_EQ(6u, cc.rounds);
}

TEST(atp_clamped)
{
	struct ia_cc cc;

	make(_metadata, &cc, IA_CC_ATP, false, 16, 16);
	results(&cc, 16, 0, 0);
	ASSERT_EQ(16u, ia_cc_window(&cc));
	make(_metadata, &cc, IA_CC_ATP, false, 1, 16);
	results(&cc, 1, 1, 0);
	ASSERT_EQ(1u, ia_cc_window(&cc));
	ASSERT_EQ(0u, cc.cuts);
}

TEST(a2tp_two_windows)
{
	struct ia_cc cc;

	make(_metadata, &cc, IA_CC_A2TP, false, 16, 32);
	ASSERT_EQ(IA_CC_ONE, cc.alpha);
	/*
	 * Round of 16, 4 marked: alpha = 1024 - 1024/8 + 128 * 4/16 = 928;
	 * cwnd = 16 - floor(16 * 928 / 2048) = 16 - 7 = 9. No collision:
	 * awnd + 1, clamped at 32. Nothing happens before the round's end.
	 */
	results(&cc, 15, 4, 0);
	ASSERT_EQ(16u, ia_cc_window(&cc));
	results(&cc, 1, 0, 0);
	ASSERT_EQ(928u, cc.alpha);
	ASSERT_EQ(9u, ia_cc_window(&cc));
	ASSERT_EQ(32u, cc.awnd);
	ASSERT_EQ(9u, ia_cc_agg_window(&cc));
	/* Round of 9 clean: alpha = 928 - 116 = 812; cwnd 10. */
	results(&cc, 9, 0, 0);
	ASSERT_EQ(812u, cc.alpha);
	ASSERT_EQ(10u, ia_cc_window(&cc));
	/*
	 * Round of 10, all marked, 5 collided: alpha = 812 - 101 + 128 = 839;
	 * cwnd = 10 - floor(8390 / 2048) = 6; awnd = 32 - floor(32 * 5/20) = 24.
	 */
	results(&cc, 10, 10, 5);
	ASSERT_EQ(839u, cc.alpha);
	ASSERT_EQ(6u, ia_cc_window(&cc));
	ASSERT_EQ(24u, cc.awnd);
	/* Round of 6, 3 collided: alpha = 839 - 104 = 735; cwnd 7; awnd = 24 - 24 * 3/12 = 18. */
	results(&cc, 6, 0, 3);
	ASSERT_EQ(735u, cc.alpha);
	ASSERT_EQ(7u, ia_cc_window(&cc));
	ASSERT_EQ(18u, cc.awnd);
	ASSERT_EQ(7u, ia_cc_agg_window(&cc));
	/* Round of 7 clean: alpha = 735 - 91 = 644; cwnd 8; awnd 19. */
	results(&cc, 7, 0, 0);
	ASSERT_EQ(644u, cc.alpha);
	ASSERT_EQ(8u, ia_cc_window(&cc));
	ASSERT_EQ(19u, cc.awnd);
	ASSERT_EQ(2u, cc.cuts);
	ASSERT_EQ(2u, cc.acuts);
}

TEST(a2tp_cuts_at_least_one)
{
	struct ia_cc cc;

	/* Round of 2, 1 marked: alpha = 896 + 64 = 960; 2 * 960 / 2048 = 0, cut 1 anyway. */
	make(_metadata, &cc, IA_CC_A2TP, false, 2, 32);
	results(&cc, 2, 1, 0);
	ASSERT_EQ(960u, cc.alpha);
	ASSERT_EQ(1u, ia_cc_window(&cc));
	/* Round of 1 with a collision: awnd = 32 - max(1, 32 * 1/2) = 16. */
	results(&cc, 1, 0, 1);
	ASSERT_EQ(16u, cc.awnd);
	ASSERT_EQ(2u, ia_cc_window(&cc));
	/* At wmin a marked round stays at 1. */
	make(_metadata, &cc, IA_CC_A2TP, false, 1, 32);
	results(&cc, 1, 1, 0);
	ASSERT_EQ(1u, ia_cc_window(&cc));
}

TEST(a2tp_timeout_restarts_the_round)
{
	struct ia_cc cc;

	make(_metadata, &cc, IA_CC_A2TP, false, 16, 32);
	/* 5 marked results, then a timeout: 8, and the marks of the cut round are dropped. */
	results(&cc, 5, 5, 0);
	ia_cc_timeout(&cc, 7);
	ASSERT_EQ(8u, ia_cc_window(&cc));
	ASSERT_EQ(7u, cc.t_cut);
	/* A clean round of 8: alpha = 1024 - 128 = 896, cwnd 9. */
	results(&cc, 8, 0, 0);
	ASSERT_EQ(896u, cc.alpha);
	ASSERT_EQ(9u, ia_cc_window(&cc));
}

TEST(flexina_ps_jobs_cut_harder)
{
	struct ia_cc ina, ps;

	make(_metadata, &ina, IA_CC_FLEXINA, false, 16, 32);
	make(_metadata, &ps, IA_CC_FLEXINA, true, 16, 32);
	/*
	 * The same round of 16, 4 marked, 4 collided: alpha = 928 for both.
	 * INA: 16 - floor(16 * 928 / 2048) = 9, its head untouched (awnd 32).
	 * PS: 16 - floor(16 * 928 / 1024) = 16 - 14 = 2; awnd = 32 - 32 * 4/32 = 28.
	 */
	results(&ina, 16, 4, 4);
	results(&ps, 16, 4, 4);
	ASSERT_EQ(928u, ina.alpha);
	ASSERT_EQ(928u, ps.alpha);
	ASSERT_EQ(9u, ia_cc_window(&ina));
	ASSERT_EQ(32u, ina.awnd);
	ASSERT_EQ(2u, ia_cc_window(&ps));
	ASSERT_EQ(28u, ps.awnd);
	ASSERT_EQ(2u, ia_cc_agg_window(&ps));
	/*
	 * A round all marked: alpha = 928 - 116 + 128 = 940.
	 * INA (9): 9 - floor(8460 / 2048) = 5. PS (2): 2 - floor(1880 / 1024) = 1.
	 */
	results(&ina, 9, 9, 0);
	results(&ps, 2, 2, 0);
	ASSERT_EQ(940u, ina.alpha);
	ASSERT_EQ(5u, ia_cc_window(&ina));
	ASSERT_EQ(940u, ps.alpha);
	ASSERT_EQ(1u, ia_cc_window(&ps));
	ASSERT_EQ(29u, ps.awnd);
	/* Clean rounds: both grow by one per window of results. */
	results(&ina, 5, 0, 0);
	results(&ps, 1, 0, 0);
	ASSERT_EQ(6u, ia_cc_window(&ina));
	ASSERT_EQ(2u, ia_cc_window(&ps));
	ASSERT_EQ(30u, ps.awnd);
}

TEST(config_checked)
{
	struct ia_cc_cfg cfg = { .policy = IA_CC_ATP, .wmax = 8 };
	enum ia_cc_policy p;
	struct ia_cc cc;

	ASSERT_EQ(0, ia_cc_init(&cc, &cfg, 5));
	ASSERT_EQ(8u, ia_cc_window(&cc));
	ASSERT_EQ(1u, cc.cfg.wmin);
	ASSERT_EQ(5u, cc.t_change);
	cfg.wmax = 0;
	ASSERT_EQ(-EINVAL, ia_cc_init(&cc, &cfg, 0));
	cfg = (struct ia_cc_cfg){ .policy = IA_CC_ATP, .wmin = 9, .wmax = 8 };
	ASSERT_EQ(-EINVAL, ia_cc_init(&cc, &cfg, 0));
	cfg = (struct ia_cc_cfg){ .policy = IA_CC_ATP, .wmin = 2, .wmax = 8, .init = 1 };
	ASSERT_EQ(-EINVAL, ia_cc_init(&cc, &cfg, 0));
	cfg = (struct ia_cc_cfg){ .policy = IA_CC__COUNT, .wmax = 8 };
	ASSERT_EQ(-EINVAL, ia_cc_init(&cc, &cfg, 0));
	for (int i = 0; i < IA_CC__COUNT; i++) {
		ASSERT_EQ(0, ia_cc_policy_parse(ia_cc_policy_name(i), &p));
		ASSERT_EQ(i, (int)p);
	}
	ASSERT_STREQ("flexina", ia_cc_policy_name(IA_CC_FLEXINA));
	ASSERT_EQ(-EINVAL, ia_cc_policy_parse("dctcp", &p));
}

/* Only flexina's PS jobs are marked at the switches' lower threshold. */
TEST(only_flexina_ps_jobs_marked_early)
{
	for (int i = 0; i < IA_CC__COUNT; i++) {
		ASSERT_FALSE(ia_cc_marks_early(i, false)) TH_LOG("%s", ia_cc_policy_name(i));
		ASSERT_EQ(i == IA_CC_FLEXINA, ia_cc_marks_early(i, true));
	}
}

TEST_HARNESS_MAIN
