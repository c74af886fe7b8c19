// SPDX-License-Identifier: GPL-2.0
/* Experiment loops of the paper's evaluation; see eval.h. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "eval.h"

const enum ia_algo ia_eval_algos[IA_EVAL_NALGO] = {
	IA_ALGO_SMC, IA_ALGO_TOP, IA_ALGO_MAX, IA_ALGO_LEVEL, IA_ALGO_ALL_RED, IA_ALGO_ALL_BLUE,
};

const enum ia_algo ia_eval_multi_algos[IA_EVAL_NMULTI] = {
	IA_ALGO_SMC, IA_ALGO_TOP, IA_ALGO_MAX, IA_ALGO_LEVEL, IA_ALGO_SMC,
};

const enum ia_gen_rate ia_eval_rates[IA_EVAL_NRATE] = {
	IA_GEN_RATE_CONST, IA_GEN_RATE_LINEAR, IA_GEN_RATE_EXP,
};

const enum ia_gen_load ia_eval_loads[IA_EVAL_NLOAD] = {
	IA_GEN_LOAD_UNIFORM, IA_GEN_LOAD_POWERLAW,
};

const char *ia_eval_multi_name(int col)
{
	return col == IA_EVAL_SMC_AWARE ? "smc-aware" : ia_algo_name(ia_eval_multi_algos[col]);
}

void ia_eval_defaults(struct ia_eval_opts *o)
{
	static const int ks[] = { 1, 2, 4, 8, 16, 32 }, caps[] = { 4, 8, 16, 32 };

	memset(o, 0, sizeof(*o));
	o->depth = 7;
	o->seeds = 10;
	o->seed = 1;
	memcpy(o->ks, ks, sizeof(ks));
	o->nk = 6;
	memcpy(o->nws, ks, sizeof(ks));
	o->nnw = 6;
	memcpy(o->caps, caps, sizeof(caps));
	o->ncap = 4;
	o->multi_k = 16;
	o->multi_cap = 4;
	o->cap_nw = 32;
	o->metric = IA_MULTI_SUM;
}

void ia_eval_add_sample(double *row, const double *x, int k)
{
	for (int m = 0; m < IA_EVAL_NMEAN; m++) {
		double d = x[m] - row[m];

		row[m] += d / k;
		row[IA_EVAL_SD(m)] += d * (x[m] - row[m]);
	}
}

void ia_eval_finish_rows(double (*res)[IA_EVAL_NMETRIC], long rows, int seeds)
{
	for (long i = 0; i < rows; i++)
		for (int m = 0; m < IA_EVAL_NMEAN; m++)
			res[i][IA_EVAL_SD(m)] = seeds > 1 ? sqrt(res[i][IA_EVAL_SD(m)] / (seeds - 1)) : 0;
}

uint64_t ia_eval_mix(uint64_t a, uint64_t b)
{
	return a * 0x9e3779b97f4a7c15ull ^ (b + 0x632be59bd9b4e019ull + (a << 6) + (a >> 2));
}

static int tree(const struct ia_eval_opts *o, enum ia_gen_rate r, enum ia_gen_load l,
		uint32_t cap, uint64_t seed, struct ia_topo **t)
{
	struct ia_gen_opts g;

	ia_gen_defaults(&g);
	g.depth = o->depth;
	g.rate = r;
	g.load = l;
	g.capacity = cap;
	g.seed = seed;
	return ia_gen_tree(&g, t);
}

int ia_eval_k(const struct ia_eval_opts *o, double (*res)[IA_EVAL_NMETRIC])
{
	long done = 0, total = (long)IA_EVAL_NRATE * IA_EVAL_NLOAD * o->nk * o->seeds;
	struct ia_placement p[IA_EVAL_NALGO] = { 0 };
	int r, l, ki, s, a, ret = 0;
	struct ia_topo *t = NULL;

	memset(res, 0, sizeof(*res) * IA_EVAL_NRATE * IA_EVAL_NLOAD * o->nk * IA_EVAL_NALGO);
	for (r = 0; r < IA_EVAL_NRATE; r++)
	for (l = 0; l < IA_EVAL_NLOAD; l++)
	for (s = 0; s < o->seeds; s++) {
		ret = tree(o, ia_eval_rates[r], ia_eval_loads[l], 1,
			   ia_eval_mix(o->seed + s, r * 8 + l), &t);
		if (ret)
			goto out;
		for (a = 0; a < IA_EVAL_NALGO; a++) {
			ret = ia_placement_init(&p[a], t->n);
			if (ret)
				goto out;
		}
		for (ki = 0; ki < o->nk; ki++) {
			struct ia_problem pb = { .topo = t, .k = o->ks[ki] };
			double smc, red;

			for (a = 0; a < IA_EVAL_NALGO; a++) {
				ret = ia_place(&pb, ia_eval_algos[a], &p[a]);
				if (ret)
					goto out;
			}
			smc = ia_ratio_double(p[0].congestion);
			red = ia_ratio_double(p[4].congestion);
			for (a = 0; a < IA_EVAL_NALGO; a++) {
				double c = ia_ratio_double(p[a].congestion);
				double x[IA_EVAL_NMEAN] = {
					[IA_EVAL_ABS] = c,
					[IA_EVAL_VS_SMC] = smc > 0 ? c / smc : 1,
					[IA_EVAL_VS_RED] = red > 0 ? c / red : 1,
				};

				ia_eval_add_sample(res[ia_eval_k_idx(o, r, l, ki, a)], x, s + 1);
			}
			if (o->progress)
				o->progress(o->arg, ++done, total);
		}
		for (a = 0; a < IA_EVAL_NALGO; a++)
			ia_placement_free(&p[a]);
		ia_topo_free(t);
		t = NULL;
	}
	ia_eval_finish_rows(res, (long)IA_EVAL_NRATE * IA_EVAL_NLOAD * o->nk * IA_EVAL_NALGO,
			    o->seeds);
out:
	for (a = 0; a < IA_EVAL_NALGO; a++)
		ia_placement_free(&p[a]);
	ia_topo_free(t);
	return ret;
}

/*
 * The score (o->metric) of nw workloads placed online on a tree with rate
 * scheme r and capacity cap, for each column algorithm (cols of them) and all-red.
 * Each workload is uniform or power-law with probability 1/2, on the leaves.
 */
static int multi_point(const struct ia_eval_opts *o, int r, uint32_t cap, int nw, int cols,
		       uint64_t seed, double *cong, double *red)
{
	struct ia_multi_result mr;
	struct ia_workload *w = NULL;
	uint32_t *loads = NULL;
	struct ia_topo *t = NULL;
	struct ia_rng rng;
	int i, c, ret;

	ret = tree(o, ia_eval_rates[r], IA_GEN_LOAD_UNIFORM, cap, seed, &t);
	if (ret)
		return ret;
	w = calloc(nw, sizeof(*w));
	loads = calloc((size_t)nw * t->n, sizeof(*loads));
	if (!w || !loads) {
		ret = -ENOMEM;
		goto out;
	}
	ia_rng_seed(&rng, ia_eval_mix(seed, 0x776c));
	for (i = 0; i < nw; i++) {
		enum ia_gen_load l = ia_rng_below(&rng, 2) ? IA_GEN_LOAD_POWERLAW : IA_GEN_LOAD_UNIFORM;

		ia_gen_loads(t, &rng, l, 1, false, loads + (size_t)i * t->n);
		w[i].load = loads + (size_t)i * t->n;
		w[i].k = o->multi_k;
	}
	for (c = -1; c < cols; c++) {
		enum ia_algo a = c < 0 ? IA_ALGO_ALL_RED : ia_eval_multi_algos[c];

		ret = ia_multi_place(t, w, nw, a, c == IA_EVAL_SMC_AWARE, &mr);
		if (ret)
			goto out;
		if (c < 0)
			*red = ia_multi_metric(&mr, o->metric);
		else
			cong[c] = ia_multi_metric(&mr, o->metric);
		ia_multi_free(&mr);
	}
out:
	free(w);
	free(loads);
	ia_topo_free(t);
	return ret;
}

/* Adds the k-th instance's values into rows [base, base + cols) of res. */
static void accumulate(double (*res)[IA_EVAL_NMETRIC], int base, int cols, const double *cong,
		       double red, int k)
{
	for (int c = 0; c < cols; c++) {
		double x[IA_EVAL_NMEAN] = {
			[IA_EVAL_ABS] = cong[c],
			[IA_EVAL_VS_SMC] = cong[0] > 0 ? cong[c] / cong[0] : 1,
			[IA_EVAL_VS_RED] = red > 0 ? cong[c] / red : 1,
		};

		ia_eval_add_sample(res[base + c], x, k);
	}
}

int ia_eval_workloads(const struct ia_eval_opts *o, double (*res)[IA_EVAL_NMETRIC])
{
	long done = 0, total = (long)IA_EVAL_NRATE * o->nnw * o->seeds;
	double cong[IA_EVAL_NMULTI], red;
	int r, i, s, ret;

	memset(res, 0, sizeof(*res) * IA_EVAL_NRATE * o->nnw * IA_EVAL_NMULTI);
	for (r = 0; r < IA_EVAL_NRATE; r++)
	for (i = 0; i < o->nnw; i++)
	for (s = 0; s < o->seeds; s++) {
		ret = multi_point(o, r, o->multi_cap, o->nws[i], IA_EVAL_NMULTI,
				  ia_eval_mix(o->seed + s, 0x400 + r), cong, &red);
		if (ret)
			return ret;
		accumulate(res, ia_eval_m_idx(o->nnw, r, i, 0), IA_EVAL_NMULTI, cong, red, s + 1);
		if (o->progress)
			o->progress(o->arg, ++done, total);
	}
	ia_eval_finish_rows(res, (long)IA_EVAL_NRATE * o->nnw * IA_EVAL_NMULTI, o->seeds);
	return 0;
}

int ia_eval_capacity(const struct ia_eval_opts *o, double (*res)[IA_EVAL_NMETRIC])
{
	long done = 0, total = (long)IA_EVAL_NRATE * o->ncap * o->seeds;
	double cong[IA_EVAL_NMULTI], red;
	int r, i, s, ret;

	memset(res, 0, sizeof(*res) * IA_EVAL_NRATE * o->ncap * IA_EVAL_NMULTI);
	for (r = 0; r < IA_EVAL_NRATE; r++)
	for (i = 0; i < o->ncap; i++)
	for (s = 0; s < o->seeds; s++) {
		ret = multi_point(o, r, o->caps[i], o->cap_nw, IA_EVAL_NMULTI,
				  ia_eval_mix(o->seed + s, 0x500 + r), cong, &red);
		if (ret)
			return ret;
		accumulate(res, ia_eval_m_idx(o->ncap, r, i, 0), IA_EVAL_NMULTI, cong, red, s + 1);
		if (o->progress)
			o->progress(o->arg, ++done, total);
	}
	ia_eval_finish_rows(res, (long)IA_EVAL_NRATE * o->ncap * IA_EVAL_NMULTI, o->seeds);
	return 0;
}
