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

/*
 * Replays a trace of results: one character per result ('.' clean, 'M'
 * marked, 'C' collided, 'B' both), '|' where the trace says a window (round)
 * closes. At each '|' the policy must have closed exactly one more round;
 * the windows there are stored in cw[] and aw[] (ia_cc_agg_window()).
 */
static void replay(struct __test_metadata *_metadata, struct ia_cc *cc, const char *trace,
		   uint32_t *cw, uint32_t *aw, uint32_t max, uint32_t *n)
{
	static uint64_t now = 1000;
	uint64_t rounds = cc->rounds;

	*n = 0;
	for (const char *t = trace; *t; t++) {
		if (*t == '|') {
			ASSERT_EQ(rounds + 1, cc->rounds);
			rounds = cc->rounds;
			ASSERT_LT(*n, max);
			cw[*n] = ia_cc_window(cc);
			aw[*n] = ia_cc_agg_window(cc);
			(*n)++;
			continue;
		}
		ASSERT_EQ(rounds, cc->rounds);
		ia_cc_result(cc, (*t == 'M' || *t == 'B' ? IA_CC_MARK : 0) |
				 (*t == 'C' || *t == 'B' ? IA_CC_COLL : 0), ++now);
	}
}

TEST(atp_reacts_on_the_window_closing_result)
{
	/*
	 * ATP's client (in-ATP/ATP, common/CC_manager.h, client/p4ml_manager.cc):
	 * at the result that closes the window, halve if it is marked, else +1500
	 * bytes rounded down to whole packets (one ~1.1 KB chunk); marks on the
	 * other results of the window do nothing. From 8 (wmax 16):
	 *   8: MMM.....   closing clean        -> 9
	 *   9: ........M  closing marked       -> 4
	 *   4: ....                            -> 5
	 *   5: ....M                           -> 2
	 *   2: MM                              -> 1
	 *   1: M          1/2 = 0, at least 1  -> 1 (no cut)
	 *   1: .                               -> 2
	 *   2: .C         collisions ignored   -> 3
	 */
	static const uint32_t want[] = { 9, 4, 5, 2, 1, 1, 2, 3 };
	uint32_t cw[16], aw[16], n;
	struct ia_cc cc;

	make(_metadata, &cc, IA_CC_ATP, false, 8, 16);
	replay(_metadata, &cc, "MMM.....|........M|....|....M|MM|M|.|.C|", cw, aw, 16, &n);
	ASSERT_EQ(8u, n);
	for (uint32_t i = 0; i < n; i++) {
		EXPECT_EQ(want[i], cw[i]);
		EXPECT_EQ(want[i], aw[i]);	/* one window: all may aggregate */
	}
	EXPECT_EQ(3u, cc.cuts);
	/* Clamped at wmax; a timeout halves and restarts the round (our addition). */
	make(_metadata, &cc, IA_CC_ATP, false, 16, 16);
	replay(_metadata, &cc, "................|", cw, aw, 16, &n);
	EXPECT_EQ(16u, cw[0]);
	ia_cc_timeout(&cc, 1);
	EXPECT_EQ(8u, ia_cc_window(&cc));
	replay(_metadata, &cc, ".......M|", cw, aw, 16, &n);
	EXPECT_EQ(4u, cw[0]);
}

TEST(atp_restarts_each_tensor)
{
	uint32_t cw[4], aw[4], n;
	struct ia_cc cc;

	/* ATP's client builds its CC_manager per tensor, at the full window. */
	make(_metadata, &cc, IA_CC_ATP, false, 16, 16);
	replay(_metadata, &cc, "...............M|.......M|", cw, aw, 4, &n);
	EXPECT_EQ(4u, cw[1]);
	/* Half a round counted, then a new tensor: the round is dropped too. */
	replay(_metadata, &cc, "MM", cw, aw, 4, &n);
	ia_cc_iteration(&cc, 5);
	EXPECT_EQ(16u, ia_cc_window(&cc));
	EXPECT_EQ(0u, cc.racked);
	replay(_metadata, &cc, "...............M|", cw, aw, 4, &n);
	EXPECT_EQ(8u, cw[0]);
	/* A2TP's client keeps its windows across tensors. */
	make(_metadata, &cc, IA_CC_A2TP, false, 4, 16);
	replay(_metadata, &cc, "MMMM|", cw, aw, 4, &n);
	ia_cc_iteration(&cc, 6);
	EXPECT_EQ(cw[0], ia_cc_window(&cc));
}

TEST(a2tp_replays_its_two_windows)
{
	/*
	 * A2TP's client (CSU-NetLab/A2TP-Eurosys2023, common/CC_manager.h), at the
	 * window-closing result, alpha and beta from 0, in 1/1024 (thr 0.1 = 102):
	 *   alpha = alpha - alpha/8 + 128 m/n
	 *   beta  = beta - beta/8 + 128 c/aw
	 *   aw = c && beta > 102 ? floor(aw (2048 - beta) / 1946) : aw + 1
	 *   cw = m ? floor(cw (2048 - alpha) / 2048) : cw + 1;  aw <= cw
	 * From cw 16 (aw 16), wmax 32:
	 *   n=16 m=4  c=0 : alpha 32,  beta 0,   aw 17,  cw floor(16*2016/2048)=15 -> aw 15
	 *   n=15 m=0  c=6 : alpha 28,  beta 51,  aw 16 (51 <= 102), cw 16
	 *   n=16 m=0  c=16: alpha 25,  beta 173, aw floor(16*1875/1946)=15, cw 17
	 *   n=17 m=17 c=15: alpha 150, beta 280, aw floor(15*1768/1946)=13,
	 *                   cw floor(17*1898/2048)=15
	 *   n=15 m=0  c=1 : alpha 132, beta 254 (128/13 = 9), aw floor(13*1794/1946)=11, cw 16
	 *   n=16 clean    : alpha 116, beta 223, aw 12, cw 17
	 */
	static const uint32_t want_cw[] = { 15, 16, 17, 15, 16, 17 };
	static const uint32_t want_aw[] = { 15, 16, 15, 13, 11, 12 };
	static const uint32_t want_alpha[] = { 32, 28, 25, 150, 132, 116 };
	static const uint32_t want_beta[] = { 0, 51, 173, 280, 254, 223 };
	static const char *const round[] = {
		"MMMM............|",
		"CCCCCC.........|",
		"CCCCCCCCCCCCCCCC|",
		"BBBBBBBBBBBBBBBMM|",
		"C..............|",
		"................|",
	};
	uint32_t cw[4], aw[4], n;
	struct ia_cc cc;

	make(_metadata, &cc, IA_CC_A2TP, false, 16, 32);
	ASSERT_EQ(0u, cc.alpha);
	ASSERT_EQ(0u, cc.beta);
	ASSERT_EQ(16u, ia_cc_agg_window(&cc));
	for (int i = 0; i < 6; i++) {
		replay(_metadata, &cc, round[i], cw, aw, 4, &n);
		ASSERT_EQ(1u, n);
		EXPECT_EQ(want_alpha[i], cc.alpha);
		EXPECT_EQ(want_beta[i], cc.beta);
		EXPECT_EQ(want_cw[i], cw[0]);
		EXPECT_EQ(want_aw[i], aw[0]);
	}
	EXPECT_EQ(2u, cc.cuts);
	EXPECT_EQ(3u, cc.acuts);
}

TEST(a2tp_small_windows)
{
	uint32_t cw[4], aw[4], n;
	struct ia_cc cc;

	/* 2, one marked: alpha 64, floor(2 * 1984 / 2048) = 1: a mark costs at least one. */
	make(_metadata, &cc, IA_CC_A2TP, false, 2, 32);
	replay(_metadata, &cc, "M.|", cw, aw, 4, &n);
	EXPECT_EQ(64u, cc.alpha);
	EXPECT_EQ(1u, cw[0]);
	/* 1, collided: beta 128 > 102, aw floor(1 * 1920 / 1946) = 0 -> wmin 1; cw 2. */
	replay(_metadata, &cc, "C|", cw, aw, 4, &n);
	EXPECT_EQ(128u, cc.beta);
	EXPECT_EQ(2u, cw[0]);
	EXPECT_EQ(1u, aw[0]);
	/* At wmin a marked round stays at 1. */
	make(_metadata, &cc, IA_CC_A2TP, false, 1, 32);
	replay(_metadata, &cc, "M|", cw, aw, 4, &n);
	EXPECT_EQ(1u, cw[0]);
}

TEST(a2tp_timeout_restarts_the_round)
{
	uint32_t cw[4], aw[4], n;
	struct ia_cc cc;

	make(_metadata, &cc, IA_CC_A2TP, false, 16, 32);
	/* 5 marked results, then a timeout: 8, and the marks of the cut round are dropped. */
	replay(_metadata, &cc, "MMMMM", cw, aw, 4, &n);
	ia_cc_timeout(&cc, 7);
	ASSERT_EQ(8u, ia_cc_window(&cc));
	ASSERT_EQ(7u, cc.t_cut);
	/* A clean round of 8: alpha stays 0, cwnd 9. */
	replay(_metadata, &cc, "........|", cw, aw, 4, &n);
	EXPECT_EQ(0u, cc.alpha);
	EXPECT_EQ(9u, cw[0]);
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

/*
 * One decision per chunk (docs/cc.md): two workers of a flexina PS job with
 * different histories (one has every chunk's result back, the other a full
 * aggregator window in memory) and windows 20 / 21 with aggregator window
 * 15 decide every chunk alike: ceil(16 * 15 / 20) = 12 = ceil(16 * 15 / 21) ranks
 * of 16 use memory for both. The rule that counts chunks in flight in
 * memory (a2tp's) decides the same chunks apart.
 */
TEST(flexina_one_decision_per_chunk)
{
	struct ia_cc a, b, c;
	uint32_t in = 0;

	make(_metadata, &a, IA_CC_FLEXINA, true, 20, 32);
	make(_metadata, &b, IA_CC_FLEXINA, true, 21, 32);
	a.awnd = b.awnd = 15;
	for (uint32_t seq = 1000; seq < 1000 + 256; seq++) {
		bool ma = ia_cc_in_memory(&a, seq, 0), mb = ia_cc_in_memory(&b, seq, 15);

		ASSERT_EQ(ma, mb) TH_LOG("chunk %u", seq);
		in += ma;
	}
	EXPECT_EQ(256u / 16 * 12, in);
	/* Of any 16 consecutive chunks, 12 use memory: at most the window's 15 of 20. */
	for (uint32_t s0 = 0; s0 < 32; s0++) {
		in = 0;
		for (uint32_t seq = s0; seq < s0 + 16; seq++)
			in += ia_cc_in_memory(&a, seq, 0);
		EXPECT_EQ(12u, in);
	}
	/* A full aggregator window: every chunk uses memory, whatever is in flight. */
	a.awnd = 32;
	for (uint32_t seq = 0; seq < 64; seq++)
		ASSERT_TRUE(ia_cc_in_memory(&a, seq, 1000));
	/* The smallest aggregator window still puts one chunk of 16 in memory (rank 0). */
	a.awnd = 1;
	a.cwnd = 32;
	EXPECT_TRUE(ia_cc_in_memory(&a, 16, 0));
	EXPECT_FALSE(ia_cc_in_memory(&a, 8, 0));
	/* a2tp counts its chunks in flight in memory (A2TP's client). */
	make(_metadata, &c, IA_CC_A2TP, true, 20, 32);
	c.awnd = 15;
	EXPECT_TRUE(ia_cc_in_memory(&c, 1, 14));
	EXPECT_FALSE(ia_cc_in_memory(&c, 1, 15));
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
