/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The paper's Fig. 6: SMC's congestion normalised to all-red against k for
 * its two applications, word count and a parameter server, on complete
 * binary trees with constant rates and uniform loads (docs/apps.md).
 */
#ifndef INAGG_EVAL_FIG6_H
#define INAGG_EVAL_FIG6_H

#include "eval.h"
#include "wordcount.h"

enum ia_app {
	IA_APP_WC,		/* word count: (word, count) records */
	IA_APP_PS,		/* parameter server: dense gradient blocks */
	IA_APP__COUNT,
};

const char *ia_app_name(enum ia_app a);

/* Columns of a point: SMC, and the two references, all with budget k. */
enum {
	IA_FIG6_SMC,
	IA_FIG6_ALL_BLUE,
	IA_FIG6_ALL_RED,
	IA_FIG6_NCOL,
};

#define IA_FIG6_PS_FEATURES	10000	/* the paper's model size */

struct ia_fig6_opts {
	int depth;		/* complete binary tree depth (paper: 7) */
	int seeds;		/* trees averaged per point (paper: 10) */
	uint64_t seed;		/* first seed */
	int ks[IA_EVAL_MAXPTS], nk;
	const struct ia_corpus *corpus;	/* word count's text */
	uint32_t wc_keys;	/* keys per word-count message (1: one record each) */
	uint32_t ps_features;	/* gradient length */
	uint32_t ps_elems;	/* gradient elements per message */
	void (*progress)(void *arg, long done, long total);
	void *arg;
};

/* Depth 7, 10 seeds, k = 1..32, one record per message, 10K features in blocks of 256. */
void ia_fig6_defaults(struct ia_fig6_opts *o);

/* res[ia_fig6_idx(o, app, ki, col)][metric]: IA_APP__COUNT * nk * IA_FIG6_NCOL rows. */
static inline int ia_fig6_idx(const struct ia_fig6_opts *o, int app, int ki, int col)
{
	return (app * o->nk + ki) * IA_FIG6_NCOL + col;
}

/*
 * Parameter server volume: every worker sends its gradient of nfeat
 * features as dense blocks of elems elements, one message each; a blue
 * switch sends the summed blocks, as many messages as one worker.
 */
int ia_ps_volume(const struct ia_topo *t, uint32_t nfeat, uint32_t elems, uint32_t *load,
		 uint32_t *merged);

/* Runs the experiment. 0 or -errno (-EINVAL: no corpus or a zero size). */
int ia_eval_fig6(const struct ia_fig6_opts *o, double (*res)[IA_EVAL_NMETRIC]);

#endif
