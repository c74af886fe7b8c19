// SPDX-License-Identifier: GPL-2.0
/*
 * The paper's applications in the model (docs/apps.md): the word-count
 * corpus against a plain shell count, message volumes against sets built
 * the slow way, SMC with merged outputs against brute force, and Fig. 6.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eval_fig6.h"
#include "gen.h"
#include "kselftest_harness.h"
#include "place.h"
#include "random_tree.h"
#include "wordcount.h"

static uint64_t rnd_state;

static uint64_t rnd(void)
{
	return ia_splitmix64(&rnd_state);
}

static const char *const md[] = { ".md", NULL };

TEST(tokens_are_runs_of_alnum_and_underscore)
{
	static const char text[] = "Hello, hello_world 42x-y\xc3\xa9z\n\tHello";
	static const char *const want[] = { "Hello", "hello_world", "42x", "y", "z", "Hello" };
	struct ia_corpus c;

	ia_corpus_init(&c);
	ASSERT_EQ(0, ia_corpus_add_text(&c, text, sizeof(text) - 1));
	ASSERT_EQ(6u, c.nwords);
	ASSERT_EQ(5u, c.nvocab);
	for (int i = 0; i < 6; i++)
		EXPECT_STREQ(want[i], c.vocab[c.word[i]]);
	EXPECT_EQ(2u, c.count[c.word[0]]);
	EXPECT_EQ(c.word[0], c.word[5]);
	EXPECT_EQ(-1, ia_corpus_find(&c, "hello", 5));
	EXPECT_EQ(1, ia_corpus_find(&c, "hello_world!", 11));
	ia_corpus_free(&c);
}

/* The counts equal what tr | sort | uniq -c says of the same files, word for word. */
TEST(corpus_counts_equal_shell_count)
{
	struct ia_corpus c;
	char err[IA_ERRLEN], word[256];
	unsigned long long n, total = 0;
	int lines = 0;
	FILE *f;

	ia_corpus_init(&c);
	ASSERT_EQ(0, ia_corpus_add_path(&c, "docs", md, err, sizeof(err))) TH_LOG("%s", err);
	ASSERT_GT(c.files, 3);
	f = popen("find docs -type f -name '*.md' | LC_ALL=C sort | xargs cat | "
		  "LC_ALL=C tr -cs 'A-Za-z0-9_' '\\n' | grep . | LC_ALL=C sort | uniq -c", "r");
	ASSERT_NE(NULL, f);
	while (fscanf(f, "%llu %255s", &n, word) == 2) {
		int64_t id = ia_corpus_find(&c, word, strlen(word));

		ASSERT_LE(0, id) TH_LOG("%s missing", word);
		ASSERT_EQ(n, c.count[id]) TH_LOG("%s", word);
		total += n;
		lines++;
	}
	ASSERT_EQ(0, pclose(f));
	ASSERT_EQ((unsigned)lines, c.nvocab);
	ASSERT_EQ(total, c.nwords);
	ia_corpus_free(&c);
}

TEST(missing_corpus_is_an_error_in_words)
{
	struct ia_corpus c;
	char err[IA_ERRLEN];

	ia_corpus_init(&c);
	ASSERT_EQ(-ENOENT, ia_corpus_add_path(&c, "no/such/corpus", NULL, err, sizeof(err)));
	ASSERT_NE(NULL, strstr(err, "no/such/corpus"));
	ia_corpus_free(&c);
}

/* Rates 1 and 1.5 (the first is drawn by an even number). */
static const char *const rates[] = { "1.5", "1" };
static const struct tree_shape shape = {
	.rates = rates, .nrates = 2, .unloaded = 3, .max_load = 4, .unavailable = 5,
};

/* A random text over a small vocabulary with a skewed (Zipf-like) choice of words. */
static void random_corpus(struct ia_corpus *c, int words, int vocab)
{
	char w[16];

	ia_corpus_init(c);
	for (int i = 0; i < words; i++) {
		int id = (int)(rnd() % vocab) % (1 + (int)(rnd() % vocab));

		snprintf(w, sizeof(w), "w%d ", id);
		ia_corpus_add_text(c, w, strlen(w));
	}
}

/* Does mapper m (global number) have a word of block b? */
static bool has_block(const struct ia_corpus *c, uint32_t nmap, uint32_t m, uint32_t b,
		      uint32_t kpm)
{
	for (size_t i = ia_wc_split(c->nwords, nmap, m); i < ia_wc_split(c->nwords, nmap, m + 1);
	     i++)
		if (c->word[i] / kpm == b)
			return true;
	return false;
}

static bool in_subtree(const struct ia_topo *t, int u, int v)
{
	for (; u >= 0; u = t->sw[u].parent)
		if (u == v)
			return true;
	return false;
}

/* Volumes against their definition, block by block, mapper by mapper. */
TEST(wordcount_volume_equals_definition)
{
	rnd_state = 5;
	for (int iter = 0; iter < 60; iter++) {
		int n = 1 + rnd() % 12;
		struct ia_topo *t = random_tree(n, &rnd_state, &shape);
		uint32_t kpm = 1 + rnd() % 4, *load = calloc(n, 4), *merged = calloc(n, 4), nmap;
		struct ia_corpus c;

		ASSERT_NE(NULL, t);
		nmap = t->first_worker[n];
		random_corpus(&c, 1 + rnd() % 300, 1 + rnd() % 40);
		if (!nmap) {
			ASSERT_EQ(-EINVAL, ia_wc_volume(&c, t, kpm, load, merged));
			goto next;
		}
		ASSERT_EQ(0, ia_wc_volume(&c, t, kpm, load, merged));
		for (int v = 0; v < n; v++) {
			uint32_t want_load = 0, want_merged = 0;

			for (uint32_t b = 0; b <= c.nvocab / kpm; b++) {
				bool any = false;

				for (int m = t->first_worker[v]; m < t->first_worker[v + 1]; m++)
					want_load += has_block(&c, nmap, m, b, kpm);
				for (int u = 0; u < n && !any; u++)
					for (int m = t->first_worker[u];
					     in_subtree(t, u, v) && m < t->first_worker[u + 1]; m++)
						any |= has_block(&c, nmap, m, b, kpm);
				want_merged += any;
			}
			ASSERT_EQ(want_load, load[v]) TH_LOG("iter %d v %d", iter, v);
			ASSERT_EQ(want_merged, merged[v]) TH_LOG("iter %d v %d", iter, v);
		}
next:
		ia_corpus_free(&c);
		free(load);
		free(merged);
		ia_topo_free(t);
	}
}

static int place(const struct ia_problem *pb, enum ia_algo a, struct ia_placement *p)
{
	ia_placement_init(p, pb->topo->n);
	return ia_place(pb, a, p);
}

/*
 * SMC stays exact with merged outputs of real word-count volumes: brute
 * force and the paper's naive DP agree, and the model counts each blue
 * switch's merged output.
 */
TEST(smc_with_merged_output_equals_brute)
{
	int compared = 0;

	rnd_state = 11;
	for (int iter = 0; iter < 600; iter++) {
		int n = 1 + rnd() % 11;
		struct ia_topo *t = random_tree(n, &rnd_state, &shape);
		uint32_t *load = calloc(n, 4), *merged = calloc(n, 4);
		struct ia_problem pb = { .topo = t, .load = load, .merged = merged,
					 .k = rnd() % (n + 1) };
		struct ia_placement a, b, c;
		struct ia_corpus cp;

		ASSERT_NE(NULL, t);
		random_corpus(&cp, 1 + rnd() % 200, 1 + rnd() % 60);
		if (!t->first_worker[n] || ia_wc_volume(&cp, t, 1 + rnd() % 3, load, merged))
			goto next;
		ASSERT_EQ(0, place(&pb, IA_ALGO_SMC, &a));
		ASSERT_EQ(0, place(&pb, IA_ALGO_SMC_NAIVE, &b));
		ASSERT_EQ(0, place(&pb, IA_ALGO_BRUTE, &c));
		ASSERT_EQ(0, ia_ratio_cmp(a.congestion, c.congestion))
			TH_LOG("iter %d: smc %g brute %g", iter, ia_ratio_double(a.congestion),
			       ia_ratio_double(c.congestion));
		ASSERT_EQ(0, ia_ratio_cmp(b.congestion, c.congestion)) TH_LOG("iter %d", iter);
		ASSERT_LE(a.nblue, pb.k);
		for (int v = 0; v < n; v++)
			if (a.blue[v] && a.msgs[v])
				ASSERT_EQ(merged[v], a.msgs[v]);
		ia_placement_free(&a);
		ia_placement_free(&b);
		ia_placement_free(&c);
		compared++;
next:
		ia_corpus_free(&cp);
		free(load);
		free(merged);
		ia_topo_free(t);
	}
	ASSERT_GE(compared, 300);
}

/* Merged outputs larger than what red would send, or zero, are refused in words. */
TEST(merged_output_beyond_red_refused)
{
	static const char topo[] =
		"{\"switches\": [{\"name\": \"r\", \"parent\": null},"
		"{\"name\": \"a\", \"parent\": \"r\", \"load\": 2},"
		"{\"name\": \"b\", \"parent\": \"r\", \"load\": 3}]}";
	uint32_t load[3] = { 0, 5, 7 }, merged[3] = { 9, 4, 6 };
	struct ia_problem pb = { .load = load, .merged = merged, .k = 1 };
	struct ia_placement p;
	struct ia_topo *t;
	char err[IA_ERRLEN];

	ASSERT_EQ(0, ia_topo_parse(topo, &t, err, sizeof(err)));
	pb.topo = t;
	ASSERT_EQ(0, ia_place_check(&pb, IA_ALGO_SMC, err, sizeof(err))) TH_LOG("%s", err);
	merged[0] = 11;	/* red sends at least 4 + 6 */
	ASSERT_EQ(-EINVAL, ia_place_check(&pb, IA_ALGO_SMC, err, sizeof(err)));
	ASSERT_NE(NULL, strstr(err, "switch r")) TH_LOG("%s", err);
	ASSERT_EQ(-EINVAL, place(&pb, IA_ALGO_SMC, &p));
	ia_placement_free(&p);
	merged[0] = 9;
	merged[1] = 0;
	ASSERT_EQ(-EINVAL, ia_place_check(&pb, IA_ALGO_SMC, err, sizeof(err)));
	ia_topo_free(t);
}

static void small_fig6(struct ia_fig6_opts *o, const struct ia_corpus *c)
{
	ia_fig6_defaults(o);
	o->depth = 5;
	o->seeds = 3;
	o->corpus = c;
}

/*
 * Fig. 6 on the repository's own docs: the PS curve is the paper's model
 * (dense blocks scale every link alike), the word-count curve falls with k
 * no lower than all-blue, and a sparse key space aggregates less.
 */
TEST(fig6_curves)
{
	double (*res)[IA_EVAL_NMETRIC];
	struct ia_fig6_opts o;
	struct ia_corpus c;
	char err[IA_ERRLEN];

	ia_corpus_init(&c);
	ASSERT_EQ(0, ia_corpus_add_path(&c, "docs", md, err, sizeof(err))) TH_LOG("%s", err);
	small_fig6(&o, &c);
	res = calloc(IA_APP__COUNT * o.nk * IA_FIG6_NCOL, sizeof(*res));
	ASSERT_EQ(0, ia_eval_fig6(&o, res));
	for (int s = 0; s < o.seeds; s++) {
		struct ia_gen_opts g;
		struct ia_topo *t;

		ia_gen_defaults(&g);
		g.depth = o.depth;
		g.seed = ia_eval_mix(o.seed + s, 0x600);
		ASSERT_EQ(0, ia_gen_tree(&g, &t));
		/* Generated loads number their workers too (ia_wc_volume() splits by them). */
		ASSERT_EQ(ia_topo_total_load(t), (uint64_t)t->first_worker[t->n]);
		ASSERT_LT(0, t->first_worker[t->n]);
		ia_topo_free(t);
	}
	for (int ki = 0; ki < o.nk; ki++) {
		double ps = res[ia_fig6_idx(&o, IA_APP_PS, ki, IA_FIG6_SMC)][IA_EVAL_VS_RED];
		double wc = res[ia_fig6_idx(&o, IA_APP_WC, ki, IA_FIG6_SMC)][IA_EVAL_VS_RED];
		double wcb = res[ia_fig6_idx(&o, IA_APP_WC, ki, IA_FIG6_ALL_BLUE)][IA_EVAL_VS_RED];
		double psred = res[ia_fig6_idx(&o, IA_APP_PS, ki, IA_FIG6_ALL_RED)][IA_EVAL_ABS];

		ASSERT_GT(wc, 0);
		ASSERT_LE(wc, 1);
		ASSERT_GE(wc + 1e-12, wcb);
		/* Constant rates, uniform loads: the PS's all-red root carries 40 blocks a worker. */
		ASSERT_GT(psred, 40.0 * 32);
		if (ki) {
			ASSERT_LE(wc, res[ia_fig6_idx(&o, IA_APP_WC, ki - 1, IA_FIG6_SMC)][IA_EVAL_VS_RED] + 1e-12);
			ASSERT_LE(ps, res[ia_fig6_idx(&o, IA_APP_PS, ki - 1, IA_FIG6_SMC)][IA_EVAL_VS_RED] + 1e-12);
		}
		/* Word count's keys overlap only in part: it gains less than the PS. */
		ASSERT_GE(wc, ps) TH_LOG("k=%d wc %g ps %g", o.ks[ki], wc, ps);
	}
	free(res);
	ia_corpus_free(&c);
}

/* The PS's dense blocks: the same SMC optimum as the paper's one-message model. */
TEST(ps_volume_is_the_paper_model_scaled)
{
	rnd_state = 3;
	for (int iter = 0; iter < 40; iter++) {
		struct ia_gen_opts g;
		struct ia_topo *t;
		uint32_t *load, *merged;

		ia_gen_defaults(&g);
		g.depth = 4;
		g.seed = rnd();
		ASSERT_EQ(0, ia_gen_tree(&g, &t));
		load = calloc(t->n, 4);
		merged = calloc(t->n, 4);
		ASSERT_EQ(0, ia_ps_volume(t, 10000, 256, load, merged));
		for (int k = 0; k <= 8; k++) {
			struct ia_problem a = { .topo = t, .k = k };
			struct ia_problem b = { .topo = t, .load = load, .merged = merged, .k = k };
			struct ia_placement pa, pbl;

			ASSERT_EQ(0, place(&a, IA_ALGO_SMC, &pa));
			ASSERT_EQ(0, place(&b, IA_ALGO_SMC, &pbl));
			ASSERT_EQ(40 * ia_ratio_double(pa.congestion),
				  ia_ratio_double(pbl.congestion));
			ia_placement_free(&pa);
			ia_placement_free(&pbl);
		}
		ASSERT_EQ(-EINVAL, ia_ps_volume(t, 0, 256, load, merged));
		free(load);
		free(merged);
		ia_topo_free(t);
	}
}

TEST_HARNESS_MAIN
