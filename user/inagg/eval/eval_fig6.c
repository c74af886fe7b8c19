// SPDX-License-Identifier: GPL-2.0
/* The paper's Fig. 6 experiment; see eval_fig6.h and docs/apps.md. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "eval_fig6.h"
#include "inagg/wire.h"

static const char *const app_names[IA_APP__COUNT] = {
	[IA_APP_WC] = "wordcount",
	[IA_APP_PS] = "ps",
};

static const enum ia_algo fig6_algos[IA_FIG6_NCOL] = {
	[IA_FIG6_SMC] = IA_ALGO_SMC,
	[IA_FIG6_ALL_BLUE] = IA_ALGO_ALL_BLUE,
	[IA_FIG6_ALL_RED] = IA_ALGO_ALL_RED,
};

const char *ia_app_name(enum ia_app a)
{
	return a >= 0 && a < IA_APP__COUNT ? app_names[a] : "?";
}

void ia_fig6_defaults(struct ia_fig6_opts *o)
{
	struct ia_eval_opts e;

	/* The trees, seeds and k of Figs. 2-3. */
	ia_eval_defaults(&e);
	memset(o, 0, sizeof(*o));
	o->depth = e.depth;
	o->seeds = e.seeds;
	o->seed = e.seed;
	memcpy(o->ks, e.ks, sizeof(o->ks));
	o->nk = e.nk;
	o->wc_keys = 1;
	o->ps_features = IA_FIG6_PS_FEATURES;
	o->ps_elems = IA_CHUNK_DEFAULT;
}

int ia_ps_volume(const struct ia_topo *t, uint32_t nfeat, uint32_t elems, uint32_t *load,
		 uint32_t *merged)
{
	uint64_t blocks;

	if (!nfeat || !elems)
		return -EINVAL;
	blocks = (nfeat + (uint64_t)elems - 1) / elems;
	for (int v = 0; v < t->n; v++) {
		uint64_t l = blocks * t->sw[v].load;

		if (l > UINT32_MAX)
			return -EOVERFLOW;
		load[v] = l;
		merged[v] = blocks;	/* summed blocks: one worker's worth */
	}
	return 0;
}

/* One tree: every app's volume, every k, every column, into res as sample s + 1. */
static int one_tree(const struct ia_fig6_opts *o, const struct ia_topo *t, uint32_t *load,
		    uint32_t *merged, struct ia_placement *p, double (*res)[IA_EVAL_NMETRIC],
		    int s)
{
	int ret;

	for (int a = 0; a < IA_APP__COUNT; a++) {
		if (a == IA_APP_WC)
			ret = ia_wc_volume(o->corpus, t, o->wc_keys, load, merged);
		else
			ret = ia_ps_volume(t, o->ps_features, o->ps_elems, load, merged);
		if (ret)
			return ret;
		for (int ki = 0; ki < o->nk; ki++) {
			struct ia_problem pb = {
				.topo = t, .load = load, .merged = merged, .k = o->ks[ki],
			};
			double c[IA_FIG6_NCOL];

			for (int col = 0; col < IA_FIG6_NCOL; col++) {
				ret = ia_place(&pb, fig6_algos[col], &p[col]);
				if (ret)
					return ret;
				c[col] = ia_ratio_double(p[col].congestion);
			}
			for (int col = 0; col < IA_FIG6_NCOL; col++) {
				double x[IA_EVAL_NMEAN] = {
					[IA_EVAL_ABS] = c[col],
					[IA_EVAL_VS_SMC] = c[0] > 0 ? c[col] / c[0] : 1,
					[IA_EVAL_VS_RED] = c[IA_FIG6_ALL_RED] > 0 ?
						c[col] / c[IA_FIG6_ALL_RED] : 1,
				};

				ia_eval_add_sample(res[ia_fig6_idx(o, a, ki, col)], x, s + 1);
			}
		}
	}
	return 0;
}

int ia_eval_fig6(const struct ia_fig6_opts *o, double (*res)[IA_EVAL_NMETRIC])
{
	struct ia_placement p[IA_FIG6_NCOL] = { 0 };
	uint32_t *load = NULL, *merged = NULL;
	long rows = (long)IA_APP__COUNT * o->nk * IA_FIG6_NCOL;
	struct ia_topo *t = NULL;
	int ret = 0;

	if (!o->corpus || !o->corpus->nwords || !o->wc_keys || !o->ps_features ||
	    !o->ps_elems || o->seeds < 1 || o->nk < 1 || o->nk > IA_EVAL_MAXPTS)
		return -EINVAL;
	memset(res, 0, sizeof(*res) * rows);
	for (int s = 0; s < o->seeds; s++) {
		struct ia_gen_opts g;

		ia_gen_defaults(&g);
		g.depth = o->depth;
		g.rate = IA_GEN_RATE_CONST;
		g.load = IA_GEN_LOAD_UNIFORM;
		g.seed = ia_eval_mix(o->seed + s, 0x600);
		ret = ia_gen_tree(&g, &t);
		if (ret)
			goto out;
		load = calloc(t->n, sizeof(*load));
		merged = calloc(t->n, sizeof(*merged));
		if (!load || !merged) {
			ret = -ENOMEM;
			goto out;
		}
		for (int col = 0; col < IA_FIG6_NCOL && !ret; col++)
			ret = ia_placement_init(&p[col], t->n);
		if (!ret)
			ret = one_tree(o, t, load, merged, p, res, s);
		if (ret)
			goto out;
		for (int col = 0; col < IA_FIG6_NCOL; col++)
			ia_placement_free(&p[col]);
		free(load);
		free(merged);
		ia_topo_free(t);
		load = merged = NULL;
		t = NULL;
		if (o->progress)
			o->progress(o->arg, s + 1, o->seeds);
	}
	ia_eval_finish_rows(res, rows, o->seeds);
out:
	for (int col = 0; col < IA_FIG6_NCOL; col++)
		ia_placement_free(&p[col]);
	free(load);
	free(merged);
	ia_topo_free(t);
	return ret;
}
