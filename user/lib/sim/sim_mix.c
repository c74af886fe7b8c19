// SPDX-License-Identifier: GPL-2.0
/*
 * The simulator's job mix (drawn from the seed, the same for every scheme),
 * selective INA, and the results (sim.h, docs/cc.md "Simulation").
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "job.h"
#include "names.h"
#include "sim_int.h"

static const char *const scheme_names[IA_SIM__COUNT] = {
	[IA_SIM_NETPACK_ATP] = "netpack-atp",
	[IA_SIM_NETPACK_A2TP] = "netpack-a2tp",
	[IA_SIM_FLEXINA] = "flexina",
	[IA_SIM_HT_ATP] = "ht-atp",
	[IA_SIM_FLEXINA_NOTAIL] = "flexina-notail",
};

const char *ia_sim_scheme_name(enum ia_sim_scheme s)
{
	return ia_name_of(scheme_names, IA_SIM__COUNT, s);
}

int ia_sim_scheme_parse(const char *name, enum ia_sim_scheme *s)
{
	int i = ia_name_find(scheme_names, IA_SIM__COUNT, name);

	if (i < 0)
		return -EINVAL;
	*s = i;
	return 0;
}

void ia_sim_defaults(struct ia_sim_cfg *c)
{
	*c = (struct ia_sim_cfg){
		.jobs = 128, .depth = 7, .wmin = 2, .wmax = 8, .cmin = 64, .cmax = 512,
		.iters = 4, .window = 64, .per_leaf = 4, .mem = 0.5, .rate = 2e6, .rtt = 20e-6,
		.spread = 5e-6, .gap = 200e-6, .thresh = 64, .buffer = 1024, .seed = 1,
		/* inaggd's samples as the live evaluation runs it (-m 20, eval_live.h) */
		.lend_period = 20e-3,
	};
}

static double uni(uint64_t *rng)
{
	return (ia_splitmix64(rng) >> 11) * (1.0 / 9007199254740992.0);
}

static uint32_t uni_int(uint64_t *rng, uint32_t lo, uint32_t hi)
{
	return lo + (uint32_t)(ia_splitmix64(rng) % (hi - lo + 1));
}

enum ia_cc_policy ia_sim_scheme_policy(enum ia_sim_scheme s)
{
	switch (s) {
	case IA_SIM_NETPACK_A2TP:
		return IA_CC_A2TP;
	case IA_SIM_FLEXINA:
	case IA_SIM_FLEXINA_NOTAIL:
		return IA_CC_FLEXINA;
	default:
		return IA_CC_ATP;
	}
}

bool ia_sim_scheme_tail(enum ia_sim_scheme s)
{
	return s == IA_SIM_FLEXINA || s == IA_SIM_HT_ATP;
}

bool ia_sim_scheme_shared(enum ia_sim_scheme s)
{
	return s == IA_SIM_NETPACK_A2TP;
}

int ia_sim_check(const struct ia_sim_cfg *c)
{
	if (!c->jobs || c->jobs > 100000 || c->depth > 16 || !c->wmin || c->wmin > c->wmax ||
	    c->wmax > 64 || !c->cmin || c->cmin > c->cmax || c->cmax > 65536 || !c->iters ||
	    !c->window || c->window > IA_MAX_WINDOW || !c->per_leaf || !(c->mem >= 0) ||
	    !(c->rate > 0) || !(c->rtt > 0) || !(c->spread >= 0) || !(c->gap >= 0) || !c->buffer ||
	    !(c->rto >= 0) || !(c->tail_age >= 0) || !(c->lend_period >= 0) || !(c->wake >= 0) ||
	    !(c->noroom >= 0) || c->noroom > 1)
		return -EINVAL;
	/* A cluster: whole spines, a job within one spine's leaves, no given mix. */
	if (c->spines && (c->mix || c->leaves < c->spines || c->leaves % c->spines ||
			  !c->hosts || c->wmax > c->hosts * (c->leaves / c->spines) ||
			  !c->imin || c->imin > c->imax || c->imax > 1000 || !c->scale ||
			  !(c->leaf_rate > 0) || !(c->arrival >= 0)))
		return -EINVAL;
	return 0;
}

/* Job i of the mix: cfg->mix's, or drawn (the same draws whatever the scheme). */
static int mix_job(struct sim *s, struct ia_sim_job *pub, uint32_t i, uint32_t leaves,
		   uint64_t *rng)
{
	const struct ia_sim_cfg *c = s->cfg;
	const struct ia_sim_mixjob *m = c->mix ? &c->mix[i] : NULL;
	struct sjob *j = &s->j[i];
	double gap;
	uint32_t w;

	j->pub = &pub[i];
	if (m)
		pub[i] = (struct ia_sim_job){ .leaf = m->leaf, .workers = m->workers,
					      .chunks = m->chunks };
	else
		pub[i] = (struct ia_sim_job){
			.leaf = uni_int(rng, 0, leaves - 1),
			.workers = uni_int(rng, c->wmin, c->wmax),
			.chunks = uni_int(rng, c->cmin, c->cmax),
		};
	pub[i].nleaves = 1;
	pub[i].iters = c->iters;
	if (pub[i].leaf >= s->nleaves || !pub[i].workers || pub[i].workers > IA_SIM_MAX_W ||
	    !pub[i].chunks)
		return -EINVAL;
	j->spread = calloc(pub[i].workers, sizeof(double));
	j->gap = calloc(pub[i].workers, sizeof(double));
	j->ch = calloc(pub[i].chunks, sizeof(*j->ch));
	if (!j->spread || !j->gap || !j->ch)
		return -ENOMEM;
	for (w = 1; w < pub[i].workers; w++)
		j->spread[w] = uni(rng) * c->spread;
	gap = uni(rng) * c->gap;
	j->t0 = uni(rng) * 10 * c->rtt;
	for (w = 0; w < pub[i].workers; w++)
		j->gap[w] = m ? m->gap[w] : gap;
	if (m)
		j->t0 = 0;	/* the live experiment starts every job at once */
	return 0;
}

/* A head smaller than this keeps no chunk in flight beside its slot-mate. */
#define MIN_HEAD	2

struct cand {
	uint32_t leaf, job;
	uint64_t benefit;
};

/* By leaf, then the largest benefit first, then submission order. */
static int cand_cmp(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;

	if (x->leaf != y->leaf)
		return x->leaf < y->leaf ? -1 : 1;
	if (x->benefit != y->benefit)
		return x->benefit > y->benefit ? -1 : 1;
	return x->job < y->job ? -1 : x->job > y->job;
}

/*
 * NetPack's selective INA gives memory by availability: on each leaf, the
 * jobs that would save the most messages ((workers - 1) x chunks) first,
 * each a head of the window or, for the last, of what is left (at least
 * MIN_HEAD), so no slot stays idle that a job could use. A job of a given
 * mix that asks for class PS gets none (a labelled scenario, not fair).
 */
static int select_ina(struct sim *s, struct ia_sim_job *pub)
{
	const struct ia_sim_cfg *c = s->cfg;
	struct cand *o = calloc(c->jobs, sizeof(*o));
	uint32_t i;

	if (!o)
		return -ENOMEM;
	for (i = 0; i < c->jobs; i++)
		o[i] = (struct cand){ .leaf = pub[i].leaf, .job = i,
				      .benefit = (uint64_t)(pub[i].workers - 1) * pub[i].chunks };
	qsort(o, c->jobs, sizeof(*o), cand_cmp);
	for (i = 0; i < c->jobs; i++) {
		uint32_t k = o[i].job;
		struct leaf *l = &s->leaf[pub[k].leaf];
		struct sjob *j = &s->j[k];
		uint32_t left = l->slots - l->heads;

		if ((c->mix && c->mix[k].ps) || left < MIN_HEAD) {
			pub[k].ps = 1;
			continue;
		}
		j->hsize = left < c->window ? left : c->window;
		ia_sim_take(s, pub[k].leaf, k, l->heads, j->hsize, false);
		l->ina[l->nina - 1].lend.lent = c->lent_start < j->hsize ? c->lent_start : j->hsize;
	}
	free(o);
	return 0;
}

int ia_sim_build(struct sim *s, struct ia_sim_job *pub)
{
	const struct ia_sim_cfg *c = s->cfg;
	uint64_t rng = c->seed;
	uint32_t i, w, leaves, *need;
	int err = -ENOMEM;

	if (c->spines)
		return ia_sim_cluster_build(s, pub);
	s->nleaves = s->nsw = 1u << c->depth;
	/* Jobs share leaves: per_leaf of them on each of the first leaves. */
	leaves = (c->jobs + c->per_leaf - 1) / c->per_leaf;
	leaves = leaves < s->nleaves ? leaves : s->nleaves;
	s->j = calloc(c->jobs, sizeof(*s->j));
	s->leaf = calloc(s->nleaves, sizeof(*s->leaf));
	s->link = calloc(1, sizeof(*s->link));
	need = calloc(s->nleaves, sizeof(*need));
	if (!s->j || !s->leaf || !s->link || !need)
		goto out;
	s->link->rate = c->rate;
	for (i = 0; i < c->jobs; i++) {
		err = mix_job(s, pub, i, leaves, &rng);
		if (err)
			goto out;
		need[pub[i].leaf] += c->window;
	}
	err = -ENOMEM;
	for (i = 0; i < s->nleaves; i++) {
		struct leaf *l = &s->leaf[i];

		l->slots = (uint32_t)floor(c->mem * need[i]);
		err = ia_sim_switch_alloc(l, c->jobs);
		if (err)
			goto out;
	}
	/* Selective INA by availability (NetPack), the same for every scheme. */
	err = select_ina(s, pub);
	if (err)
		goto out;
	for (i = 0; i < s->nleaves; i++)
		ia_sim_pool(&s->leaf[i]);
	for (i = 0; i < c->jobs; i++) {
		struct sjob *j = &s->j[i];
		/* Workers keep half the head in flight (ia_job_worker_window()). */
		struct ia_cc_cfg cc = { .policy = ia_sim_scheme_policy(s->scheme),
					.wmax = ia_job_worker_window(pub[i].ps ? c->window :
								      j->hsize) };
		double start = INFINITY;

		cc.ps = pub[i].ps;
		err = ia_cc_init(&j->cc, &cc, 0);
		if (err)
			goto out;
		for (w = 0; w < pub[i].workers; w++)
			start = j->gap[w] < start ? j->gap[w] : start;
		j->t_iter = j->t0;
		ia_sim_push(s, j->t0 + start, EV_SEND, i, 0, 0, 0, 0, 0);
	}
	s->left = c->jobs;
	ia_sim_push(s, s->lend_period, EV_SAMPLE, 0, 0, 0, 0, 0, 0);
	err = s->err;
out:
	free(need);
	return err;
}

int ia_sim_switch_alloc(struct leaf *l, uint32_t jobs)
{
	l->congested = -1;
	l->slot = calloc(l->slots ? l->slots : 1, sizeof(*l->slot));
	l->own = calloc(l->slots ? l->slots : 1, sizeof(*l->own));
	l->pool = calloc(l->slots ? l->slots : 1, sizeof(*l->pool));
	l->ina = calloc(jobs, sizeof(*l->ina));
	if (!l->slot || !l->own || !l->pool || !l->ina)
		return -ENOMEM;
	ia_sim_pool(l);
	return 0;
}

void ia_sim_teardown(struct sim *s)
{
	for (uint32_t i = 0; s->j && i < s->cfg->jobs; i++) {
		free(s->j[i].spread);
		free(s->j[i].gap);
		free(s->j[i].ch);
	}
	for (uint32_t i = 0; s->leaf && i < s->nsw; i++) {
		free(s->leaf[i].slot);
		free(s->leaf[i].own);
		free(s->leaf[i].pool);
		free(s->leaf[i].ina);
	}
	free(s->j);
	free(s->leaf);
	free(s->link);
	free(s->heap);
}

void ia_sim_summarise(struct sim *s, const struct ia_sim_job *pub, struct ia_sim_res *r)
{
	double bytes = 0, x, sx = 0, sxx = 0, slots = 0, chunks = 0, ps_chunks = 0;
	double tmo = 0, racks = 0;
	uint64_t tries = s->claims + s->hits + s->collided;
	uint32_t i;

	memset(r, 0, sizeof(*r));
	for (i = 0; i < s->cfg->jobs; i++) {
		const struct ia_sim_job *j = &pub[i];
		double end = s->j[i].t0 + j->jct;

		bytes += j->bytes;
		tmo += j->timeouts;
		r->first += s->j[i].first / s->cfg->jobs;
		racks += j->racks;
		chunks += (double)j->chunks * j->iters;
		ps_chunks += j->ps ? (double)j->chunks * j->iters : 0;
		r->jct_mean += j->jct / s->cfg->jobs;
		if (s->cfg->spines && j->model < IA_SIM_MODELS) {
			r->jct_model[j->model] += j->jct;
			r->n_model[j->model]++;
		}
		if (end > r->makespan)
			r->makespan = end;
		if (j->ps) {
			r->n_ps++;
			r->jct_ps += j->jct;
		} else {
			r->n_ina++;
			r->jct_ina += j->jct;
		}
		x = j->jct > 0 ? j->bytes / j->jct : 0;
		sx += x;
		sxx += x * x;
	}
	for (i = 0; i < IA_SIM_MODELS; i++)
		r->jct_model[i] = r->n_model[i] ? r->jct_model[i] / r->n_model[i] : 0;
	for (i = 0; i < s->nsw; i++) {
		const struct leaf *l = &s->leaf[i];
		bool ps = false;

		slots += l->slots;
		r->slots += l->slots;
		if (s->cfg->spines)
			continue;	/* heads come and go: idle_time below */
		for (uint32_t k = 0; k < s->cfg->jobs && ia_sim_scheme_tail(s->scheme) && !ps; k++)
			ps = pub[k].ps && pub[k].leaf <= i && i < pub[k].leaf + pub[k].nleaves;
		/* Beside the heads: a tail for the leaf's PS jobs, or nobody's. */
		if (ia_sim_scheme_shared(s->scheme))
			r->idle += l->nina ? 0 : l->slots;	/* the INA jobs' pool */
		else if (!ps)
			r->idle += l->slots - l->heads;
	}
	r->tput = r->makespan > 0 ? bytes / r->makespan : 0;
	r->tput_all = s->t_first_end > 0 ? s->bytes_first_end / s->t_first_end : 0;
	r->sum = sx;
	r->jct_ina = r->n_ina ? r->jct_ina / r->n_ina : 0;
	r->jct_ps = r->n_ps ? r->jct_ps / r->n_ps : 0;
	r->util = slots > 0 && r->makespan > 0 ? s->slot_time / (slots * r->makespan) : 0;
	r->mark_rate = s->results ? (double)s->marked / s->results : 0;
	r->coll_rate = tries ? (double)s->collided / tries : 0;
	r->up = chunks > 0 ? s->accepted / chunks : 0;
	r->waste = chunks > 0 ? s->wasted / chunks : 0;
	r->flushes = ps_chunks > 0 ? s->flushes / ps_chunks : 0;
	r->discards = ps_chunks > 0 ? s->discards / ps_chunks : 0;
	r->retx_rate = s->results ? (tmo + racks) / s->results : 0;
	r->tmo_rate = s->results ? tmo / s->results : 0;
	r->jain = sxx > 0 ? sx * sx / (s->cfg->jobs * sxx) : 0;
	if (s->cfg->spines) {
		ia_sim_mem_tick(s);
		r->idle_time = s->idle_time;
		r->free_frac = slots > 0 && s->t_mem > 0 ? s->free_time / (slots * s->t_mem) : 0;
		r->mem_peak = s->mem_peak;
	}
}

