/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The paper's evaluation (Sec. V, Figs. 2-5) as pure experiment loops over
 * generated trees: each figure's mean congestion per algorithm, normalised
 * per instance to SMC and to all-red, averaged over seeds, each with its
 * standard deviation over the seeds.
 */
#ifndef INAGG_EVAL_H
#define INAGG_EVAL_H

#include <stdint.h>

#include "gen.h"
#include "place.h"

#define IA_EVAL_MAXPTS 16
#define IA_EVAL_NRATE 3		/* const, linear, exp */
#define IA_EVAL_NLOAD 2		/* uniform, powerlaw */

/* Figs. 2-3 columns. */
#define IA_EVAL_NALGO 6
extern const enum ia_algo ia_eval_algos[IA_EVAL_NALGO];
/* Figs. 4-5 columns: the paper's strategies, then the congestion-aware SMC. */
#define IA_EVAL_NMULTI 5
#define IA_EVAL_SMC_AWARE 4
extern const enum ia_algo ia_eval_multi_algos[IA_EVAL_NMULTI];
const char *ia_eval_multi_name(int col);

extern const enum ia_gen_rate ia_eval_rates[IA_EVAL_NRATE];
extern const enum ia_gen_load ia_eval_loads[IA_EVAL_NLOAD];

/* A result row: three means, then their standard deviations over the seeds. */
enum {
	IA_EVAL_ABS,		/* mean congestion */
	IA_EVAL_VS_SMC,		/* mean of congestion / SMC's */
	IA_EVAL_VS_RED,		/* mean of congestion / all-red's */
	IA_EVAL_ABS_SD,		/* sample standard deviations of the same */
	IA_EVAL_VS_SMC_SD,
	IA_EVAL_VS_RED_SD,
	IA_EVAL_NMETRIC,
};

#define IA_EVAL_NMEAN IA_EVAL_ABS_SD
/* Where the standard deviation of mean m is. */
#define IA_EVAL_SD(m) ((m) + IA_EVAL_NMEAN)

struct ia_eval_opts {
	int depth;		/* complete binary tree depth (paper: 7) */
	int seeds;		/* instances averaged per point (paper: 10) */
	uint64_t seed;		/* first seed */
	int ks[IA_EVAL_MAXPTS], nk;		/* Figs. 2-3: k values */
	int nws[IA_EVAL_MAXPTS], nnw;		/* Fig. 4: workload counts */
	int caps[IA_EVAL_MAXPTS], ncap;		/* Fig. 5: capacities */
	int multi_k;		/* budget per workload, Figs. 4-5 (16) */
	int multi_cap;		/* capacity in Fig. 4 (4) */
	int cap_nw;		/* workloads in Fig. 5 (32) */
	enum ia_multi_metric metric;	/* Figs. 4-5 score (default the paper's, IA_MULTI_SUM) */
	/* Called after each instance; done counts up to total. */
	void (*progress)(void *arg, long done, long total);
	void *arg;
};

void ia_eval_defaults(struct ia_eval_opts *o);

/* res[ia_eval_k_idx(o, r, l, ki, a)][metric]; res holds 3*2*nk*NALGO rows. */
static inline int ia_eval_k_idx(const struct ia_eval_opts *o, int r, int l, int ki, int a)
{
	return ((r * IA_EVAL_NLOAD + l) * o->nk + ki) * IA_EVAL_NALGO + a;
}

/* res[ia_eval_m_idx(npts, r, i, col)][metric]; 3*npts*NMULTI rows. */
static inline int ia_eval_m_idx(int npts, int r, int i, int col)
{
	return (r * npts + i) * IA_EVAL_NMULTI + col;
}

/*
 * Adds the k-th value (k from 1) of each mean of a row, Welford's way: the
 * standard deviation slots hold the sum of squared deviations until
 * ia_eval_finish_rows() turns them into sample standard deviations.
 */
void ia_eval_add_sample(double *row, const double *x, int k);
void ia_eval_finish_rows(double (*res)[IA_EVAL_NMETRIC], long rows, int seeds);
/* A distinct, reproducible seed per (experiment, instance). */
uint64_t ia_eval_mix(uint64_t a, uint64_t b);

/* Figs. 2-3: congestion vs k. 0 or -errno. */
int ia_eval_k(const struct ia_eval_opts *o, double (*res)[IA_EVAL_NMETRIC]);
/* Fig. 4: o->metric vs number of workloads (capacity multi_cap). */
int ia_eval_workloads(const struct ia_eval_opts *o, double (*res)[IA_EVAL_NMETRIC]);
/* Fig. 5: o->metric of cap_nw workloads vs capacity. */
int ia_eval_capacity(const struct ia_eval_opts *o, double (*res)[IA_EVAL_NMETRIC]);

#endif
