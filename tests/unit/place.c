// SPDX-License-Identifier: GPL-2.0
/* Placement engine: the paper's example, SMC against brute force, the model. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "gen.h"
#include "kselftest_harness.h"
#include "place.h"
#include "random_tree.h"

static const char fig1[] =
	"{\"switches\": ["
	"{\"name\": \"s0\", \"parent\": null},"
	"{\"name\": \"s1\", \"parent\": \"s0\"}, {\"name\": \"s2\", \"parent\": \"s0\"},"
	"{\"name\": \"s3\", \"parent\": \"s1\", \"load\": 2},"
	"{\"name\": \"s4\", \"parent\": \"s1\", \"load\": 6},"
	"{\"name\": \"s5\", \"parent\": \"s2\", \"load\": 5},"
	"{\"name\": \"s6\", \"parent\": \"s2\", \"load\": 5}]}";

static uint64_t rnd_state;

static uint64_t rnd(void)
{
	return ia_splitmix64(&rnd_state);
}

/* Rates chosen so that candidate congestion values nearly tie. */
static const char *const rates[] = {
	"1", "1.5", "0.3", "2", "1.000000001", "0.999999999", "11.390625", "2.333333333",
	"7", "0.1", "3",
};

static const struct tree_shape shape = {
	.rates = rates, .nrates = sizeof(rates) / sizeof(rates[0]),
	.unloaded = 3, .max_load = 10, .unavailable = 5,
};

static struct ia_topo *random_topo(int n)
{
	return random_tree(n, &rnd_state, &shape);
}

static int place_congestion(const struct ia_problem *pb, enum ia_algo a, struct ia_placement *p)
{
	ia_placement_init(p, pb->topo->n);
	return ia_place(pb, a, p);
}

TEST(fig1_paper_values)
{
	static const struct {
		enum ia_algo algo;
		uint64_t congestion;
	} want[] = {
		{ IA_ALGO_TOP, 8 },	{ IA_ALGO_MAX, 9 },	  { IA_ALGO_LEVEL, 6 },
		{ IA_ALGO_SMC, 5 },	{ IA_ALGO_SMC_NAIVE, 5 }, { IA_ALGO_BRUTE, 5 },
		{ IA_ALGO_ALL_RED, 18 }, { IA_ALGO_ALL_BLUE, 1 },
	};
	struct ia_topo *t;
	char err[IA_ERRLEN];

	ASSERT_EQ(0, ia_topo_parse(fig1, &t, err, sizeof(err))) TH_LOG("%s", err);
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		struct ia_problem pb = { .topo = t, .k = 2 };
		struct ia_placement p;

		ASSERT_EQ(0, place_congestion(&pb, want[i].algo, &p));
		EXPECT_EQ(want[i].congestion, (uint64_t)p.congestion.num)
			TH_LOG("%s", ia_algo_name(want[i].algo));
		EXPECT_EQ(1u, (unsigned)p.congestion.den);
		if (want[i].algo != IA_ALGO_ALL_BLUE)
			EXPECT_LE(p.nblue, 2);
		ia_placement_free(&p);
	}
	ia_topo_free(t);
}

/* The paper: the optimum is not monotone in k; SMC must still be exact. */
TEST(fig1_every_k)
{
	struct ia_topo *t;

	ASSERT_EQ(0, ia_topo_parse(fig1, &t, NULL, 0));
	for (int k = 0; k <= 8; k++) {
		struct ia_problem pb = { .topo = t, .k = k };
		struct ia_placement a, b;

		ASSERT_EQ(0, place_congestion(&pb, IA_ALGO_SMC, &a));
		ASSERT_EQ(0, place_congestion(&pb, IA_ALGO_BRUTE, &b));
		EXPECT_EQ(0, ia_ratio_cmp(a.congestion, b.congestion)) TH_LOG("k=%d", k);
		ia_placement_free(&a);
		ia_placement_free(&b);
	}
	ia_topo_free(t);
}

/* Every reported congestion equals a recomputation from the blue set. */
static void check_consistent(struct __test_metadata *_metadata, const struct ia_problem *pb,
			     enum ia_algo a, const struct ia_placement *p)
{
	const struct ia_topo *t = pb->topo;
	struct ia_ratio worst = { 0, 1 };
	uint64_t *msgs = calloc(t->n, sizeof(*msgs));
	int nblue = 0;

	/* Independent recursion-free recomputation: repeat relaxation n times. */
	for (int round = 0; round < t->n; round++) {
		for (int v = 0; v < t->n; v++) {
			uint64_t m = pb->load ? pb->load[v] : t->sw[v].load;

			for (int u = 0; u < t->n; u++)
				if (t->sw[u].parent == v)
					m += msgs[u];
			msgs[v] = p->blue[v] ? m > 0 : m;
		}
	}
	for (int v = 0; v < t->n; v++) {
		uint64_t m = msgs[v] + (pb->base ? pb->base[v] : 0);
		/* m / rate compared as m * den vs worst * num, exactly */
		struct ia_ratio c = { m * t->sw[v].rate.den, t->sw[v].rate.num };

		ASSERT_EQ(msgs[v], p->msgs[v]);
		if (ia_ratio_cmp(c, worst) > 0)
			worst = c;
		nblue += p->blue[v];
		if (p->blue[v])
			ASSERT_TRUE(pb->avail ? pb->avail[v] : t->sw[v].available);
	}
	ASSERT_EQ(0, ia_ratio_cmp(worst, p->congestion)) TH_LOG("%s", ia_algo_name(a));
	ASSERT_EQ(nblue, p->nblue);
	if (a != IA_ALGO_ALL_BLUE)
		ASSERT_LE(nblue, pb->k);
	free(msgs);
}

/* SMC's placement of pb is consistent and as congested as that of the exact algorithm ref. */
static void smc_equals(struct __test_metadata *_metadata, const struct ia_problem *pb,
		       enum ia_algo ref, int iter)
{
	struct ia_placement a, b;

	ASSERT_EQ(0, place_congestion(pb, IA_ALGO_SMC, &a));
	ASSERT_EQ(0, place_congestion(pb, ref, &b));
	check_consistent(_metadata, pb, IA_ALGO_SMC, &a);
	ASSERT_EQ(0, ia_ratio_cmp(a.congestion, b.congestion)) TH_LOG("iter %d", iter);
	ia_placement_free(&a);
	ia_placement_free(&b);
}

TEST(smc_equals_brute_2000_random_trees)
{
	int compared = 0;

	rnd_state = 42;
	for (int iter = 0; iter < 2400; iter++) {
		int n = 1 + rnd() % 12;
		struct ia_topo *t = random_topo(n);
		struct ia_problem pb = { .topo = t, .k = rnd() % (n + 2) };
		struct ia_placement best, p;

		ASSERT_NE(NULL, t);
		ASSERT_EQ(0, place_congestion(&pb, IA_ALGO_BRUTE, &best));
		for (int a = 0; a < IA_ALGO__COUNT; a++) {
			ASSERT_EQ(0, place_congestion(&pb, a, &p));
			check_consistent(_metadata, &pb, a, &p);
			if (a == IA_ALGO_SMC || a == IA_ALGO_SMC_NAIVE) {
				ASSERT_EQ(0, ia_ratio_cmp(p.congestion, best.congestion))
					TH_LOG("iter %d n %d k %d %s: %g vs brute %g", iter, n, pb.k,
					       ia_algo_name(a), ia_ratio_double(p.congestion),
					       ia_ratio_double(best.congestion));
			} else if (a != IA_ALGO_ALL_BLUE) {
				ASSERT_LE(0, ia_ratio_cmp(p.congestion, best.congestion));
			}
			ia_placement_free(&p);
		}
		ia_placement_free(&best);
		ia_topo_free(t);
		compared++;
	}
	ASSERT_GE(compared, 2000);
}

/* Congestion-aware placement: exact also with load already on the links. */
TEST(smc_with_base_load_equals_brute)
{
	rnd_state = 7;
	for (int iter = 0; iter < 1000; iter++) {
		int n = 1 + rnd() % 10;
		struct ia_topo *t = random_topo(n);
		uint64_t *base = calloc(n, sizeof(*base));
		struct ia_problem pb = { .topo = t, .k = rnd() % (n + 1), .base = base };

		for (int v = 0; v < n; v++)
			base[v] = rnd() % 4 ? 0 : rnd() % 12;
		smc_equals(_metadata, &pb, IA_ALGO_BRUTE, iter);
		free(base);
		ia_topo_free(t);
	}
}

/* Larger trees than brute force can take: the two SMC versions agree. */
TEST(smc_fast_equals_naive_large)
{
	rnd_state = 99;
	for (int iter = 0; iter < 150; iter++) {
		int n = 20 + rnd() % 300;
		struct ia_topo *t = random_topo(n);
		struct ia_problem pb = { .topo = t, .k = rnd() % 40 };

		smc_equals(_metadata, &pb, IA_ALGO_SMC_NAIVE, iter);
		ia_topo_free(t);
	}
}

/* Near-tie rates: 7 / 1.000000001 is below 7 / 1; a float step would miss it. */
TEST(smc_exact_near_ties)
{
	static const char topo[] =
		"{\"switches\": ["
		"{\"name\": \"r\", \"parent\": null, \"rate\": 100},"
		"{\"name\": \"a\", \"parent\": \"r\", \"rate\": 1, \"load\": 7},"
		"{\"name\": \"b\", \"parent\": \"r\", \"rate\": 1.000000001, \"load\": 7}]}";
	struct ia_topo *t;
	struct ia_problem pb;
	struct ia_placement p;
	char buf[64];

	ASSERT_EQ(0, ia_topo_parse(topo, &t, NULL, 0));
	pb = (struct ia_problem){ .topo = t, .k = 1 };
	ASSERT_EQ(0, place_congestion(&pb, IA_ALGO_SMC, &p));
	/* Best is aggregating at a: then b's 7 / 1.000000001 is the maximum. */
	ASSERT_TRUE(p.blue[ia_topo_find(t, "a")]);
	ASSERT_EQ(ia_topo_find(t, "b"), p.bottleneck);
	ia_ratio_format(t->sw[p.bottleneck].rate, buf, sizeof(buf));
	ASSERT_STREQ("1.000000001", buf);
	ia_placement_free(&p);
	ia_topo_free(t);
}

TEST(multi_workload_consumes_capacity)
{
	struct ia_topo *t;
	struct ia_multi_result r;
	uint32_t load[7] = { 0, 0, 0, 2, 6, 5, 5 };
	struct ia_workload w[3] = {
		{ "w0", load, 2 }, { "w1", load, 2 }, { "w2", load, 2 },
	};

	ASSERT_EQ(0, ia_topo_parse(fig1, &t, NULL, 0));
	/* Capacity 1 everywhere: the second workload cannot reuse the first's. */
	for (int v = 0; v < t->n; v++)
		t->sw[v].capacity = 1;
	ASSERT_EQ(0, ia_multi_place(t, w, 3, IA_ALGO_SMC, false, &r));
	EXPECT_EQ(5u, (unsigned)r.per[0].congestion.num);
	for (int v = 0; v < t->n; v++) {
		int used = r.per[0].blue[v] + r.per[1].blue[v] + r.per[2].blue[v];
		uint64_t sum = r.per[0].msgs[v] + r.per[1].msgs[v] + r.per[2].msgs[v];

		EXPECT_LE(used, 1);
		EXPECT_EQ(1 - used, (int)r.residual[v]);
		EXPECT_EQ(sum, r.total_msgs[v]);
	}
	/* Each later workload can do no better than the first. */
	EXPECT_GE(ia_ratio_cmp(r.per[1].congestion, r.per[0].congestion), 0);
	EXPECT_GE(ia_ratio_cmp(r.per[2].congestion, r.per[1].congestion), 0);
	ia_multi_free(&r);
	ia_topo_free(t);
}

/* Aware placement never ends with more total congestion on the next workload. */
TEST(multi_workload_aware_is_optimal_per_step)
{
	rnd_state = 5;
	for (int iter = 0; iter < 200; iter++) {
		int n = 2 + rnd() % 9;
		struct ia_topo *t = random_topo(n);
		uint32_t *l1 = calloc(n, 4), *l2 = calloc(n, 4);
		struct ia_workload w[2] = { { "a", l1, 2 }, { "b", l2, 2 } };
		struct ia_multi_result aware, blind;

		for (int v = 0; v < n; v++) {
			l1[v] = rnd() % 6;
			l2[v] = rnd() % 6;
			t->sw[v].capacity = 1 + rnd() % 2;
		}
		ASSERT_EQ(0, ia_multi_place(t, w, 2, IA_ALGO_SMC, true, &aware));
		ASSERT_EQ(0, ia_multi_place(t, w, 2, IA_ALGO_SMC, false, &blind));
		/* Same first step; the aware second step minimises the total exactly. */
		ASSERT_LE(ia_ratio_cmp(aware.congestion, blind.congestion), 0) TH_LOG("iter %d", iter);
		ia_multi_free(&aware);
		ia_multi_free(&blind);
		free(l1);
		free(l2);
		ia_topo_free(t);
	}
}

/*
 * With capacity for every workload, nothing constrains one by another: the
 * paper's metric is the sum of each workload's own optimum (Sec. V).
 */
TEST(multi_sum_metric_is_sum_of_optima_with_enough_capacity)
{
	rnd_state = 13;
	for (int iter = 0; iter < 300; iter++) {
		int n = 2 + rnd() % 40, nw = 1 + rnd() % 6;
		struct ia_topo *t = random_topo(n);
		uint32_t *loads = calloc((size_t)n * nw, 4);
		struct ia_workload w[6];
		struct ia_multi_result r;
		double sum = 0;

		ASSERT_NE(NULL, t);
		for (int v = 0; v < n; v++)
			t->sw[v].capacity = nw + rnd() % 3;	/* >= workloads */
		for (int i = 0; i < nw; i++) {
			for (int v = 0; v < n; v++)
				loads[i * n + v] = rnd() % 3 ? rnd() % 9 : 0;
			w[i] = (struct ia_workload){ "w", loads + i * n, (int)(rnd() % 5) };
		}
		ASSERT_EQ(0, ia_multi_place(t, w, nw, IA_ALGO_SMC, false, &r));
		for (int i = 0; i < nw; i++) {
			struct ia_problem pb = { .topo = t, .load = w[i].load, .k = w[i].k };
			struct ia_placement alone;

			ASSERT_EQ(0, place_congestion(&pb, IA_ALGO_SMC, &alone));
			ASSERT_EQ(0, ia_ratio_cmp(alone.congestion, r.per[i].congestion))
				TH_LOG("iter %d workload %d", iter, i);
			sum += ia_ratio_double(alone.congestion);
			ia_placement_free(&alone);
		}
		ASSERT_EQ(sum, ia_multi_metric(&r, IA_MULTI_SUM));
		ASSERT_EQ(ia_ratio_double(r.congestion), ia_multi_metric(&r, IA_MULTI_LINK));
		/* Each workload alone is no worse than the links they all share. */
		for (int i = 0; i < nw; i++) {
			ASSERT_LE(ia_ratio_cmp(r.per[i].congestion, r.congestion), 0);
		}
		ia_multi_free(&r);
		free(loads);
		ia_topo_free(t);
	}
	for (int m = 0; m < IA_MULTI__COUNT; m++)
		ASSERT_EQ(m, ia_multi_metric_parse(ia_multi_metric_name(m)));
}

/* Too many subsets: refused with a reason, not attempted. */
TEST(brute_refuses_large_instances)
{
	struct ia_gen_opts g;
	struct ia_topo *t;
	struct ia_problem pb;
	struct ia_placement p, q;
	char err[IA_ERRLEN] = "";

	ia_gen_defaults(&g);
	g.depth = 5;	/* 63 switches */
	ASSERT_EQ(0, ia_gen_tree(&g, &t));
	pb = (struct ia_problem){ .topo = t, .k = 10 };
	ASSERT_EQ(-E2BIG, ia_place_check(&pb, IA_ALGO_BRUTE, err, sizeof(err)));
	ASSERT_NE(NULL, strstr(err, "too large for brute force")) TH_LOG("%s", err);
	ASSERT_NE(NULL, strstr(err, "63 available")) TH_LOG("%s", err);
	ASSERT_EQ(-E2BIG, place_congestion(&pb, IA_ALGO_BRUTE, &p));
	ia_placement_free(&p);
	/* Small k on the same tree is fine, and exact. */
	pb.k = 2;
	ASSERT_EQ(0, ia_place_check(&pb, IA_ALGO_BRUTE, err, sizeof(err)));
	ASSERT_EQ(0, place_congestion(&pb, IA_ALGO_BRUTE, &p));
	ASSERT_EQ(0, place_congestion(&pb, IA_ALGO_SMC, &q));
	ASSERT_EQ(0, ia_ratio_cmp(p.congestion, q.congestion));
	ia_placement_free(&q);
	ia_placement_free(&p);
	ASSERT_EQ(0, ia_place_check(&pb, IA_ALGO_SMC, err, sizeof(err)));
	ia_topo_free(t);
}

/* Tests of the paper's DP on large trees: seconds on a quiet machine, 30 s and more on a loaded one. */
FIXTURE(slow) {};
FIXTURE_SETUP(slow) {}
FIXTURE_TEARDOWN(slow) {}

/* The paper's trees with every rate scheme: incremental SMC agrees with the paper's DP. */
TEST_F_TIMEOUT(slow, smc_incremental_equals_naive_on_generated_trees, 300)
{
	for (int iter = 0; iter < 24; iter++) {
		struct ia_gen_opts g;
		struct ia_topo *t;
		struct ia_problem pb;

		ia_gen_defaults(&g);
		g.depth = 6 + iter % 4;
		g.rate = iter % IA_GEN_RATE__COUNT;
		g.load = iter % 2 ? IA_GEN_LOAD_POWERLAW : IA_GEN_LOAD_UNIFORM;
		g.load_all = iter % 3 == 0;
		g.avail_prob = iter % 5 ? 1.0 : 0.7;
		g.seed = 100 + iter;
		ASSERT_EQ(0, ia_gen_tree(&g, &t));
		pb = (struct ia_problem){ .topo = t, .k = 1 + iter * 3 % 40 };
		smc_equals(_metadata, &pb, IA_ALGO_SMC_NAIVE, iter);
		ia_topo_free(t);
	}
}

TEST(algo_names_round_trip)
{
	for (int a = 0; a < IA_ALGO__COUNT; a++)
		ASSERT_EQ(a, ia_algo_parse(ia_algo_name(a)));
	ASSERT_EQ(-1, ia_algo_parse("nope"));
}

TEST(negative_k_refused)
{
	struct ia_topo *t;
	struct ia_problem pb;
	struct ia_placement p;

	ASSERT_EQ(0, ia_topo_parse(fig1, &t, NULL, 0));
	pb = (struct ia_problem){ .topo = t, .k = -1 };
	ia_placement_init(&p, t->n);
	ASSERT_NE(0, ia_place(&pb, IA_ALGO_SMC, &p));
	ia_placement_free(&p);
	ia_topo_free(t);
}

TEST_HARNESS_MAIN
