// SPDX-License-Identifier: GPL-2.0
/* Evaluation and random tree generators; see gen.h. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gen.h"
#include "names.h"

void ia_rng_seed(struct ia_rng *r, uint64_t seed)
{
	for (int i = 0; i < 4; i++)
		r->s[i] = ia_splitmix64(&seed);
}

static inline uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

/* xoshiro256** */
uint64_t ia_rng_next(struct ia_rng *r)
{
	uint64_t *s = r->s, res = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return res;
}

uint64_t ia_rng_below(struct ia_rng *r, uint64_t n)
{
	/* Rejection keeps every value equally likely. */
	uint64_t lim = -n % n, x;

	do
		x = ia_rng_next(r);
	while (x < lim);
	return x % n;
}

double ia_rng_double(struct ia_rng *r)
{
	return (ia_rng_next(r) >> 11) * 0x1.0p-53;
}

static const char *const load_names[] = {
	[IA_GEN_LOAD_UNIFORM] = "uniform",
	[IA_GEN_LOAD_POWERLAW] = "powerlaw",
	[IA_GEN_LOAD_CONST] = "const",
};

static const char *const rate_names[] = {
	[IA_GEN_RATE_CONST] = "const",
	[IA_GEN_RATE_LINEAR] = "linear",
	[IA_GEN_RATE_EXP] = "exp",
	[IA_GEN_RATE_RANDOM] = "random",
};

const char *ia_gen_load_name(enum ia_gen_load l)
{
	return ia_name_of(load_names, IA_GEN_LOAD__COUNT, l);
}

const char *ia_gen_rate_name(enum ia_gen_rate r)
{
	return ia_name_of(rate_names, IA_GEN_RATE__COUNT, r);
}

int ia_gen_load_parse(const char *s)
{
	return ia_name_find(load_names, IA_GEN_LOAD__COUNT, s);
}

int ia_gen_rate_parse(const char *s)
{
	return ia_name_find(rate_names, IA_GEN_RATE__COUNT, s);
}

void ia_gen_defaults(struct ia_gen_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->depth = 7;
	o->n = 0;
	o->load = IA_GEN_LOAD_UNIFORM;
	o->load_const = 1;
	o->rate = IA_GEN_RATE_CONST;
	o->capacity = 1;
	o->slots = IA_SLOTS_DEFAULT;
	o->avail_prob = 1.0;
}

#define PL_N (IA_GEN_POWERLAW_MAX - IA_GEN_POWERLAW_MIN + 1)

/* Cumulative distribution of the power law; filled once, same values each time. */
static double pl_cdf[PL_N];
static bool pl_ready;

static void pl_init(void)
{
	double sum = 0;
	int i;

	for (i = 0; i < PL_N; i++) {
		sum += pow(IA_GEN_POWERLAW_MIN + i, -IA_GEN_POWERLAW_ALPHA);
		pl_cdf[i] = sum;
	}
	for (i = 0; i < PL_N; i++)
		pl_cdf[i] /= sum;
	pl_ready = true;
}

uint32_t ia_gen_load_draw(struct ia_rng *r, enum ia_gen_load l, uint32_t c)
{
	double u;
	int i;

	switch (l) {
	case IA_GEN_LOAD_UNIFORM:
		return 1 + ia_rng_below(r, 9);
	case IA_GEN_LOAD_POWERLAW:
		if (!pl_ready)
			pl_init();
		u = ia_rng_double(r);
		for (i = 0; i < PL_N - 1 && pl_cdf[i] <= u; i++)
			;
		return IA_GEN_POWERLAW_MIN + i;
	default:
		return c;
	}
}

void ia_gen_heights(const struct ia_topo *t, int *h)
{
	int i, v, p;

	for (i = 0; i < t->n; i++)
		h[i] = 0;
	/* Children come after parents in BFS order: walk it backwards. */
	for (i = t->n - 1; i >= 0; i--) {
		v = t->order[i];
		p = t->sw[v].parent;
		if (p >= 0 && h[p] < h[v] + 1)
			h[p] = h[v] + 1;
	}
}

void ia_gen_loads(const struct ia_topo *t, struct ia_rng *r, enum ia_gen_load l, uint32_t c,
		  bool all, uint32_t *load)
{
	/* Index order, so the draws do not depend on the BFS order. */
	for (int v = 0; v < t->n; v++) {
		bool leaf = t->child_start[v] == t->child_start[v + 1];

		load[v] = all || leaf ? ia_gen_load_draw(r, l, c) : 0;
	}
}

void ia_gen_rates(struct ia_topo *t, struct ia_rng *r, enum ia_gen_rate s)
{
	int *h = malloc(t->n * sizeof(*h));
	int v;

	if (h)
		ia_gen_heights(t, h);
	for (v = 0; v < t->n; v++) {
		int hv = h ? h[v] : 0;

		switch (s) {
		case IA_GEN_RATE_LINEAR:
			t->sw[v].rate = (struct ia_ratio){ 1 + hv, 1 };
			break;
		case IA_GEN_RATE_EXP:
			/* Exact up to height 9; beyond, rounded like any file rate. */
			t->sw[v].rate = ia_ratio_from_double(pow(1.5, hv));
			break;
		case IA_GEN_RATE_RANDOM:
			t->sw[v].rate = ia_ratio_from_double((2 + ia_rng_below(r, 15)) / 4.0);
			break;
		default:
			t->sw[v].rate = (struct ia_ratio){ 1, 1 };
			break;
		}
	}
	free(h);
}

int ia_gen_tree(const struct ia_gen_opts *o, struct ia_topo **out)
{
	struct ia_topo *t = NULL;
	uint32_t *load = NULL;
	struct ia_rng r;
	char err[IA_ERRLEN];
	int n, v, ret;

	if (o->depth >= 0) {
		if (o->depth > 24)
			return -E2BIG;
		n = (1 << (o->depth + 1)) - 1;
	} else {
		if (o->n < 1 || o->n > (1 << 25))
			return -EINVAL;
		n = o->n;
	}
	ia_rng_seed(&r, o->seed);
	t = ia_topo_new(n);
	load = calloc(n, sizeof(*load));
	if (!t || !load) {
		ret = -ENOMEM;
		goto out;
	}
	for (v = 0; v < n; v++) {
		if (asprintf(&t->sw[v].name, "s%d", v) < 0) {
			t->sw[v].name = NULL;
			ret = -ENOMEM;
			goto out;
		}
		if (v == 0)
			t->sw[v].parent = -1;
		else if (o->depth >= 0)
			t->sw[v].parent = (v - 1) / 2;
		else
			t->sw[v].parent = ia_rng_below(&r, v);
		t->sw[v].capacity = o->capacity;
		t->sw[v].slots = o->slots;
		if (o->avail_prob < 1.0)
			t->sw[v].available = ia_rng_double(&r) < o->avail_prob;
	}
	ret = ia_topo_finalize(t, err, sizeof(err));
	if (ret)
		goto out;
	ia_gen_rates(t, &r, o->rate);
	ia_gen_loads(t, &r, o->load, o->load_const, o->load_all, load);
	/* Loads come after finalize (leaves must be known): number their workers now. */
	for (v = 0; v < n; v++)
		t->sw[v].load = load[v];
	ia_topo_number_workers(t);
	*out = t;
	t = NULL;
out:
	free(load);
	ia_topo_free(t);
	return ret;
}
