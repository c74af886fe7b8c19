// SPDX-License-Identifier: GPL-2.0
/*
 * The simulator's cluster (sim.h, docs/cc.md "Cluster simulation"): leaves
 * under spines, jobs arriving as a Poisson process, each training a model
 * whose gradient sets its chunks, over consecutive leaves of one spine.
 * Selective INA as NetPack allocates, by availability: a job gets a head,
 * all of one size, on each switch it aggregates at where one fits when it
 * arrives (PS where none does), and a running job gets more as soon as a
 * finished job's heads make room (from its next iteration: a PS job becomes
 * INA). Heads are freed at the job's end.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "job.h"
#include "sim_int.h"

/* Parameters of each model's gradient (the published model sizes). */
const struct ia_sim_model ia_sim_models[IA_SIM_MODELS] = {
	{ "resnet50", 25.6e6 },
	{ "vgg16", 138e6 },
	{ "bert-base", 110e6 },
	{ "gpt2", 124e6 },
};

/* A head smaller than this keeps no chunk in flight beside its slot-mate (sim_mix.c's). */
#define MIN_HEAD	2

void ia_sim_cluster_defaults(struct ia_sim_cfg *c)
{
	ia_sim_defaults(c);
	c->spines = 4;
	c->leaves = 32;
	c->hosts = 4;
	c->jobs = 200;
	c->wmin = 2;
	c->wmax = 16;
	c->imin = 2;
	c->imax = 8;
	c->scale = 1024;
	c->rate = 1e6;
	c->leaf_rate = 5e5;
	c->arrival = 2.5e-3;
}

static double uni(uint64_t *rng)
{
	return (ia_splitmix64(rng) >> 11) * (1.0 / 9007199254740992.0);
}

static uint32_t uni_int(uint64_t *rng, uint32_t lo, uint32_t hi)
{
	return lo + (uint32_t)(ia_splitmix64(rng) % (hi - lo + 1));
}

/* The switches job aggregates at: its leaves, and its spine when it spans several. */
static uint32_t switches(const struct sim *s, uint32_t job, uint32_t *sw)
{
	const struct ia_sim_job *p = s->j[job].pub;
	uint32_t n = 0;

	for (uint32_t i = 0; i < p->nleaves; i++)
		sw[n++] = p->leaf + i;
	if (p->nleaves > 1)
		sw[n++] = s->nleaves + p->leaf / (s->nleaves / s->cfg->spines);
	return n;
}

/* The longest run of slots in no head at l, *start its first. */
static uint32_t longest(const struct leaf *l, uint32_t *start)
{
	uint32_t best = 0, run = 0;

	for (uint32_t i = 0; i < l->slots; i++) {
		run = l->own[i] ? 0 : run + 1;
		if (run > best) {
			best = run;
			*start = i + 1 - run;
		}
	}
	return best;
}

/*
 * The size of job's heads: its own once it has any; else the window, or
 * the longest run of free slots on any of its switches if shorter (0: below
 * MIN_HEAD, no head anywhere). A job's heads are all of one size, so that
 * its window fits every one.
 */
static uint32_t head_size(const struct sim *s, uint32_t job, const uint32_t *sw, uint32_t n)
{
	const struct sjob *j = &s->j[job];
	uint32_t h = 0, st;

	if (j->hsize)
		return j->hsize;
	for (uint32_t k = 0; k < n; k++) {
		uint32_t run = longest(&s->leaf[sw[k]], &st);

		h = run > h ? run : h;
	}
	h = h < s->cfg->window ? h : s->cfg->window;
	return h >= MIN_HEAD ? h : 0;
}

/*
 * Gives job (running, or *not to be) a head on each of its switches where
 * one of its size fits and it has none (wait: from its next iteration);
 * returns how many. A job is INA where it has a head; where it has none its
 * pieces pass (a blue switch set chosen by availability).
 */
static uint32_t grant(struct sim *s, uint32_t job, bool wait, bool dry)
{
	uint32_t sw[IA_SIM_MAX_W + 1], n = switches(s, job, sw), h = head_size(s, job, sw, n);
	uint32_t given = 0, st;

	for (uint32_t k = 0; h && k < n; k++) {
		const struct leaf *l = &s->leaf[sw[k]];

		if (ia_sim_hd(&s->leaf[sw[k]], job) || longest(l, &st) < h)
			continue;
		given++;
		if (dry)
			continue;
		s->j[job].hsize = h;
		ia_sim_take(s, sw[k], job, st, h, wait);
		if (l->slots && (double)l->heads / l->slots > s->mem_peak)
			s->mem_peak = (double)l->heads / l->slots;
		if (l->heads > l->slots)
			s->err = -EOVERFLOW;	/* never: the allocator takes free slots only */
	}
	return given;
}

void ia_sim_mem_tick(struct sim *s)
{
	s->idle_time += s->idle_rate * (s->now - s->t_mem);
	s->free_time += s->free_rate * (s->now - s->t_mem);
	s->t_mem = s->now;
}

/*
 * The slots in no head now, and of them those on a switch where a running
 * job without a head there could take one: NetPack would give them, so
 * they must stay 0 (idle_time).
 */
static void rates(struct sim *s)
{
	uint32_t sw[IA_SIM_MAX_W + 1], st;
	bool *usable = calloc(s->nsw, sizeof(*usable));

	s->idle_rate = s->free_rate = 0;
	if (!usable) {
		s->err = -ENOMEM;
		return;
	}
	for (uint32_t i = 0; i < s->cfg->jobs; i++) {
		uint32_t n = switches(s, i, sw), h;

		if (!s->j[i].live)
			continue;
		h = head_size(s, i, sw, n);
		for (uint32_t k = 0; h && k < n; k++)
			if (!ia_sim_hd(&s->leaf[sw[k]], i) && longest(&s->leaf[sw[k]], &st) >= h)
				usable[sw[k]] = true;
	}
	for (uint32_t v = 0; v < s->nsw; v++) {
		uint32_t free = s->leaf[v].slots - s->leaf[v].heads;

		s->free_rate += free;
		s->idle_rate += usable[v] ? free : 0;
	}
	free(usable);
}

static void cc_start(struct sim *s, uint32_t job)
{
	struct sjob *j = &s->j[job];
	/* Workers keep half the head in flight (ia_job_worker_window()). */
	struct ia_cc_cfg cc = { .policy = ia_sim_scheme_policy(s->scheme), .ps = j->pub->ps,
				.wmax = ia_job_worker_window(j->pub->ps ? s->cfg->window :
							     j->hsize) };

	if (ia_cc_init(&j->cc, &cc, (uint64_t)(s->now * 1e9)))
		s->err = -EINVAL;
}

void ia_sim_admit(struct sim *s, uint32_t job)
{
	struct sjob *j = &s->j[job];
	double start = INFINITY;

	ia_sim_mem_tick(s);
	j->live = true;
	j->pub->ps = !grant(s, job, false, false);
	cc_start(s, job);
	for (uint32_t w = 0; w < j->pub->workers; w++)
		start = j->gap[w] < start ? j->gap[w] : start;
	j->t_iter = s->now;
	ia_sim_push(s, s->now + start, EV_SEND, job, 0, 0, 0, 0, 0);
	rates(s);
}

void ia_sim_promoted(struct sim *s, uint32_t job)
{
	struct sjob *j = &s->j[job];
	uint32_t sw[IA_SIM_MAX_W + 1], n = switches(s, job, sw);

	j->promote = false;
	for (uint32_t k = 0; k < n; k++) {
		struct hd *hd = ia_sim_hd(&s->leaf[sw[k]], job);

		if (hd)
			hd->wait = false;
	}
	if (j->pub->ps) {
		j->pub->ps = 0;
		j->pub->promoted = 1;
		cc_start(s, job);
	}
}

void ia_sim_release(struct sim *s, uint32_t job)
{
	uint32_t sw[IA_SIM_MAX_W + 1], n = switches(s, job, sw);

	ia_sim_mem_tick(s);
	s->j[job].live = false;
	for (uint32_t k = 0; k < n; k++) {
		struct leaf *l = &s->leaf[sw[k]];
		struct hd *hd = ia_sim_hd(l, job);

		if (!hd)
			continue;
		for (uint32_t i = 0; i < l->slots; i++) {
			if (l->own[i] == job + 1) {
				l->own[i] = 0;
				l->slot[i].hstate = HS_EMPTY;	/* a PS partial there stays */
				l->heads--;
			}
		}
		*hd = l->ina[--l->nina];
		ia_sim_pool(l);
	}
	/*
	 * The freed slots go to the running jobs that fit a head there, the
	 * largest benefit ((workers - 1) x chunks) first, from their next
	 * iteration (a head that appears mid-chunk would wait for pieces that
	 * already passed).
	 */
	for (;;) {
		uint64_t best = 0;
		uint32_t pick = UINT32_MAX;

		for (uint32_t i = 0; i < s->cfg->jobs; i++) {
			const struct sjob *j = &s->j[i];
			uint64_t b = (uint64_t)(j->pub->workers - 1) * j->pub->chunks + 1;

			if (j->live && b > best && grant(s, i, true, true)) {
				best = b;
				pick = i;
			}
		}
		if (pick == UINT32_MAX)
			break;
		grant(s, pick, true, false);
		s->j[pick].promote = true;
	}
	rates(s);
}

int ia_sim_cluster_build(struct sim *s, struct ia_sim_job *pub)
{
	const struct ia_sim_cfg *c = s->cfg;
	uint32_t lps = c->leaves / c->spines, leaf_slots, spine_slots;
	uint64_t rng = c->seed;
	double t = 0;
	int err;

	s->nleaves = c->leaves;
	s->nsw = c->leaves + c->spines;
	s->j = calloc(c->jobs, sizeof(*s->j));
	s->leaf = calloc(s->nsw, sizeof(*s->leaf));
	s->link = calloc(s->nsw, sizeof(*s->link));
	if (!s->j || !s->leaf || !s->link)
		return -ENOMEM;
	/*
	 * Memory: a leaf has mem x the heads of per_leaf jobs, a spine a third
	 * of its leaves' together (most jobs span 2-4 leaves: one spine head
	 * for several leaf heads).
	 */
	leaf_slots = c->leaf_slots ? c->leaf_slots :
				     (uint32_t)floor(c->mem * c->window * c->per_leaf);
	spine_slots = c->spine_slots ? c->spine_slots : leaf_slots * lps / 3;
	for (uint32_t v = 0; v < s->nsw; v++) {
		s->leaf[v].slots = v < c->leaves ? leaf_slots : spine_slots;
		err = ia_sim_switch_alloc(&s->leaf[v], c->jobs);
		if (err)
			return err;
		s->link[v].rate = v < c->leaves ? c->leaf_rate : c->rate;
	}
	for (uint32_t i = 0; i < c->jobs; i++) {
		struct sjob *j = &s->j[i];
		struct ia_sim_job *p = &pub[i];
		uint32_t spine, w;
		double gap;

		j->pub = p;
		*p = (struct ia_sim_job){ .workers = uni_int(&rng, c->wmin, c->wmax),
					  .model = uni_int(&rng, 0, IA_SIM_MODELS - 1),
					  .iters = uni_int(&rng, c->imin, c->imax) };
		p->chunks = (uint32_t)ceil(ia_sim_models[p->model].params / 256 / c->scale);
		p->nleaves = (p->workers + c->hosts - 1) / c->hosts;
		spine = uni_int(&rng, 0, c->spines - 1);
		p->leaf = spine * lps + uni_int(&rng, 0, lps - p->nleaves);
		j->spread = calloc(p->workers, sizeof(double));
		j->gap = calloc(p->workers, sizeof(double));
		j->ch = calloc(p->chunks, sizeof(*j->ch));
		if (!j->spread || !j->gap || !j->ch)
			return -ENOMEM;
		for (w = 1; w < p->workers; w++)
			j->spread[w] = uni(&rng) * c->spread;
		gap = uni(&rng) * c->gap;
		for (w = 0; w < p->workers; w++)
			j->gap[w] = gap;
		/* Poisson arrivals: exponential gaps of mean c->arrival. */
		j->t0 = p->arrival = t;
		t += -log(1 - uni(&rng)) * c->arrival;
		ia_sim_push(s, j->t0, EV_ADMIT, i, 0, 0, 0, 0, 0);
	}
	s->left = c->jobs;
	ia_sim_push(s, s->lend_period, EV_SAMPLE, 0, 0, 0, 0, 0, 0);
	return s->err;
}
