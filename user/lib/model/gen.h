/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Generators of the paper's evaluation trees (Sec. V) and of random trees.
 * Pure functions: the same options and seed give the same tree everywhere,
 * since they use their own PRNG (xoshiro256**, seeded by splitmix64).
 */
#ifndef INAGG_GEN_H
#define INAGG_GEN_H

#include <stdbool.h>
#include <stdint.h>

#include "topo.h"

struct ia_rng {
	uint64_t s[4];
};

void ia_rng_seed(struct ia_rng *r, uint64_t seed);
uint64_t ia_rng_next(struct ia_rng *r);
/* Uniform in [0, n), n > 0, without modulo bias. */
uint64_t ia_rng_below(struct ia_rng *r, uint64_t n);
/* Uniform in [0, 1). */
double ia_rng_double(struct ia_rng *r);

enum ia_gen_load {
	IA_GEN_LOAD_UNIFORM,	/* integer u.a.r. in [1, 9]: mean 5 */
	IA_GEN_LOAD_POWERLAW,	/* integer in (1, 63), P(x) ~ x^-IA_GEN_POWERLAW_ALPHA */
	IA_GEN_LOAD_CONST,	/* a given constant */
	IA_GEN_LOAD__COUNT,
};

/*
 * Exponent of the discrete power law on 2..62 whose mean is 5 (the paper asks
 * for mean 5 in (1,63); its quoted variance 97.1 does not fit that mean, ours
 * is about 43).
 */
#define IA_GEN_POWERLAW_ALPHA 2.19
#define IA_GEN_POWERLAW_MIN 2
#define IA_GEN_POWERLAW_MAX 62

enum ia_gen_rate {
	IA_GEN_RATE_CONST,	/* 1 on every link */
	IA_GEN_RATE_LINEAR,	/* 1 + height: 1 at leaf uplinks, +1 per level up */
	IA_GEN_RATE_EXP,	/* 1.5^height, rounded to IA_RATE_MAX_DIGITS decimals */
	IA_GEN_RATE_RANDOM,	/* u.a.r. in {0.5, 0.75, ..., 4} */
	IA_GEN_RATE__COUNT,
};

const char *ia_gen_load_name(enum ia_gen_load l);
int ia_gen_load_parse(const char *s);	/* -1 if unknown */
const char *ia_gen_rate_name(enum ia_gen_rate r);
int ia_gen_rate_parse(const char *s);

struct ia_gen_opts {
	int depth;		/* complete binary tree: levels 0..depth */
	int n;			/* random tree: number of switches (when depth < 0) */
	enum ia_gen_load load;
	uint32_t load_const;	/* for IA_GEN_LOAD_CONST */
	bool load_all;		/* load on every switch, not only on leaves */
	enum ia_gen_rate rate;
	uint32_t capacity;
	uint32_t slots;		/* every switch's aggregator slots (IA_SLOTS_DEFAULT) */
	double avail_prob;	/* probability a switch is available; 1 for all */
	uint64_t seed;
};

/* Sane defaults: depth 7 (255 switches), uniform leaf loads, constant rates. */
void ia_gen_defaults(struct ia_gen_opts *o);

/*
 * A complete binary tree (o->depth >= 0) with switches s0..s(2^(d+1)-2) in BFS
 * order, or a random tree of o->n switches where switch i > 0 hangs below a
 * parent drawn u.a.r. among 0..i-1. Returns 0 or -errno.
 */
int ia_gen_tree(const struct ia_gen_opts *o, struct ia_topo **out);

/* One load drawn from the distribution. */
uint32_t ia_gen_load_draw(struct ia_rng *r, enum ia_gen_load l, uint32_t c);
/* Draws a load for every leaf (or every switch with all) into load[]. */
void ia_gen_loads(const struct ia_topo *t, struct ia_rng *r, enum ia_gen_load l, uint32_t c,
		  bool all, uint32_t *load);
/* Sets every switch's rate by the scheme from its height (leaves 0). */
void ia_gen_rates(struct ia_topo *t, struct ia_rng *r, enum ia_gen_rate s);
/* Height of every switch's subtree (a leaf has 0) into h[]. */
void ia_gen_heights(const struct ia_topo *t, int *h);

#endif
