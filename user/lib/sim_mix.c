// SPDX-License-Identifier: GPL-2.0
/*
 * The simulator's job mix (drawn from the seed, the same for every scheme),
 * selective INA, and the results (sim.h, docs/cc.md "Simulation").
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

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
	return (unsigned int)s < IA_SIM__COUNT ? scheme_names[s] : "?";
}

int ia_sim_scheme_parse(const char *name, enum ia_sim_scheme *s)
{
	for (int i = 0; i < IA_SIM__COUNT; i++) {
		if (!strcmp(name, scheme_names[i])) {
			*s = i;
			return 0;
		}
	}
	return -EINVAL;
}

void ia_sim_defaults(struct ia_sim_cfg *c)
{
	*c = (struct ia_sim_cfg){
		.jobs = 128, .depth = 7, .wmin = 2, .wmax = 8, .cmin = 64, .cmax = 512,
		.iters = 4, .window = 64, .per_leaf = 4, .mem = 0.5, .rate = 2e6, .rtt = 20e-6,
		.spread = 5e-6, .gap = 200e-6, .thresh = 64, .buffer = 1024, .seed = 1,
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

int ia_sim_check(const struct ia_sim_cfg *c)
{
	if (!c->jobs || c->jobs > 100000 || c->depth > 16 || !c->wmin || c->wmin > c->wmax ||
	    c->wmax > 64 || !c->cmin || c->cmin > c->cmax || c->cmax > 65536 || !c->iters ||
	    !c->window || c->window > IA_MAX_WINDOW || !c->per_leaf || !(c->mem >= 0) || !(c->rate > 0) ||
	    !(c->rtt > 0) || !(c->spread >= 0) || !(c->gap >= 0) || !c->buffer)
		return -EINVAL;
	return 0;
}

/* The job mix: the same draws whatever the scheme. */
int ia_sim_build(struct sim *s, struct ia_sim_job *pub)
{
	const struct ia_sim_cfg *c = s->cfg;
	uint64_t rng = c->seed;
	uint32_t i, w, leaves, *need;

	s->nleaves = 1u << c->depth;
	/* Jobs share leaves: per_leaf of them on each of the first leaves. */
	leaves = (c->jobs + c->per_leaf - 1) / c->per_leaf;
	leaves = leaves < s->nleaves ? leaves : s->nleaves;
	s->j = calloc(c->jobs, sizeof(*s->j));
	s->leaf = calloc(s->nleaves, sizeof(*s->leaf));
	need = calloc(s->nleaves, sizeof(*need));
	if (!s->j || !s->leaf || !need)
		goto nomem;
	for (i = 0; i < c->jobs; i++) {
		struct sjob *j = &s->j[i];

		j->pub = &pub[i];
		pub[i] = (struct ia_sim_job){
			.leaf = uni_int(&rng, 0, leaves - 1),
			.workers = uni_int(&rng, c->wmin, c->wmax),
			.chunks = uni_int(&rng, c->cmin, c->cmax),
		};
		j->spread = calloc(pub[i].workers, sizeof(double));
		j->ch = calloc(pub[i].chunks, sizeof(*j->ch));
		if (!j->spread || !j->ch)
			goto nomem;
		for (w = 1; w < pub[i].workers; w++) {
			j->spread[w] = uni(&rng) * c->spread;
			if (j->spread[w] > j->maxspread)
				j->maxspread = j->spread[w];
		}
		j->gap = uni(&rng) * c->gap;
		j->t0 = uni(&rng) * 10 * c->rtt;
		need[pub[i].leaf] += c->window;
	}
	for (i = 0; i < s->nleaves; i++) {
		struct leaf *l = &s->leaf[i];

		l->slots = (uint32_t)floor(c->mem * need[i]);
		l->hold = calloc(l->slots ? l->slots : 1, sizeof(*l->hold));
		l->ina = calloc(c->jobs, sizeof(*l->ina));
		if (!l->hold || !l->ina)
			goto nomem;
	}
	/* Selective INA, in submission order. */
	for (i = 0; i < c->jobs; i++) {
		struct leaf *l = &s->leaf[pub[i].leaf];
		struct sjob *j = &s->j[i];
		struct ia_cc_cfg cc = { .policy = ia_sim_scheme_policy(s->scheme), .wmax = c->window };

		if (l->heads + c->window <= l->slots) {
			j->head = l->heads;
			l->heads += c->window;
			l->ina[l->nina++] = i;
		} else {
			pub[i].ps = 1;
		}
		cc.ps = pub[i].ps;
		if (ia_cc_init(&j->cc, &cc, 0))
			goto inval;
		j->last_cut = -1;
		ia_sim_push(s, j->t0, EV_SEND, i, 0, 0, 0, 0);
	}
	free(need);
	return s->err;
inval:
	free(need);
	return -EINVAL;
nomem:
	free(need);
	return -ENOMEM;
}

void ia_sim_teardown(struct sim *s)
{
	for (uint32_t i = 0; s->j && i < s->cfg->jobs; i++) {
		free(s->j[i].spread);
		free(s->j[i].ch);
	}
	for (uint32_t i = 0; s->leaf && i < s->nleaves; i++) {
		free(s->leaf[i].hold);
		free(s->leaf[i].ina);
	}
	free(s->j);
	free(s->leaf);
	free(s->heap);
}

void ia_sim_summarise(struct sim *s, const struct ia_sim_job *pub, struct ia_sim_res *r)
{
	double bytes = 0, x, sx = 0, sxx = 0, slots = 0;
	uint32_t i;

	memset(r, 0, sizeof(*r));
	for (i = 0; i < s->cfg->jobs; i++) {
		const struct ia_sim_job *j = &pub[i];
		double end = s->j[i].t0 + j->jct;

		bytes += j->bytes;
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
	for (i = 0; i < s->nleaves; i++)
		slots += s->leaf[i].slots;
	r->tput = r->makespan > 0 ? bytes / r->makespan : 0;
	r->jct_ina = r->n_ina ? r->jct_ina / r->n_ina : 0;
	r->jct_ps = r->n_ps ? r->jct_ps / r->n_ps : 0;
	r->util = slots > 0 && r->makespan > 0 ? s->slot_time / (slots * r->makespan) : 0;
	r->mark_rate = s->results ? (double)s->marked / s->results : 0;
	r->coll_rate = s->tried ? (double)s->collided / s->tried : 0;
	r->jain = sxx > 0 ? sx * sx / (s->cfg->jobs * sxx) : 0;
}

