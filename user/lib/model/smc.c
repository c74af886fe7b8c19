// SPDX-License-Identifier: GPL-2.0
/*
 * SMC: exact C-BIC placement (paper Sec. IV), made exact for any rates and fast.
 *
 * A feasibility check for a congestion bound X turns X into an integer
 * message budget per link, cap(v) = floor(X * rate(v)) - base(v), and runs the
 * tree DP: beta_v(i) = least messages on v's uplink using at most i blue
 * switches in v's subtree with every link within its cap.
 *
 * Fast version (default):
 *  - beta_v is stored only over [lo, lo + len): below lo it is infinite, past
 *    the end it is constant. The length is bounded by the subtree's available
 *    switches (beyond that more budget cannot help) and by k, so merging the
 *    children is a tree knapsack costing O(n k) per check, not O(n k^2).
 *  - A blue switch only needs its children feasible: it needs
 *    1 + sum(lo_c) blue switches, no convolution.
 *  - Incremental checks: a table depends only on the switch's budget and its
 *    children's tables, and a budget only matters below the subtree's load.
 *    Budgets are clamped to [-1, load]; a switch whose clamped budget can no
 *    longer move within the search's bracket is settled and left alone, and
 *    a check recomputes only the switches whose budget moved and their
 *    ancestors while tables change (smc_dp.c). On a million-switch tree the
 *    first check computes every table, the other two dozen a few hundred.
 *  - A feasible check's placement is coloured and evaluated from the root
 *    down through the switches that received budget, and the blue switches'
 *    ancestors (the rest of the tree sends its subtree load, whose largest
 *    congestion is known per subtree beforehand).
 * Naive version: full k + 1 tables and an O(k^2) min-plus merge per child,
 * recomputed whole at every check, as written in the paper; kept as the
 * benchmark baseline.
 *
 * Search: the optimum is one of the finite set of values (base + m) / rate.
 * A bisection on doubles narrows it down, each feasible probe lowering the
 * upper bound to the exact congestion of the placement it found; then exact
 * checks of "strictly below the best found" (in 128-bit integers) run until
 * one fails, which proves optimality whatever rounding the bisection did.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mem.h"
#include "smc.h"

#define CAP_MAX ((int64_t)UINT32_MAX - 1)
/* Relative slack that covers the rounding of a double bound times a rate. */
#define SLACK 1e-9

/*
 * A budget is only ever compared with message counts, which never exceed the
 * subtree's load: every budget from that load up gives the same table, and
 * every negative one the same infeasibility.
 */
static int64_t clamp_cap(const struct ia_smc *s, int v, int64_t cap)
{
	cap -= s->pb->base ? (int64_t)s->pb->base[v] : 0;
	if (cap > (int64_t)s->sub[v])
		cap = (int64_t)s->sub[v];
	return cap < -1 ? -1 : cap;
}

static int64_t cap_of_double(const struct ia_smc *s, int v, double x)
{
	double m = floor(x * s->rate[v]);

	return clamp_cap(s, v, m > (double)CAP_MAX ? CAP_MAX : (int64_t)m);
}

/* Caps for "congestion <= x", x a double (bisection probes). */
static void caps_le_double(struct ia_smc *s, double x)
{
	for (int i = 0; i < s->nact; i++)
		s->cap[s->act[i]] = cap_of_double(s, s->act[i], x);
}

/* Caps for "congestion < c", exact: largest m with m / rate < c. */
static void caps_lt_exact(struct ia_smc *s, struct ia_ratio c)
{
	for (int i = 0; i < s->nact; i++) {
		int v = s->act[i];
		struct ia_ratio r = s->t->sw[v].rate;
		unsigned __int128 num = (unsigned __int128)c.num * r.num;
		unsigned __int128 den = (unsigned __int128)c.den * r.den;
		unsigned __int128 m;

		if (!num) {
			s->cap[v] = -1;
			continue;
		}
		m = (num - 1) / den;
		s->cap[v] = clamp_cap(s, v, m > (unsigned __int128)CAP_MAX ? CAP_MAX : (int64_t)m);
	}
}

/*
 * Every later probe, exact ones included, lies in (lo, hi] and a budget only
 * grows with the bound: a switch whose clamped budget is the same at both
 * ends, widened by the slack, keeps it for the rest of the search. It is
 * settled at that budget (compared once more by the next check, through
 * pend[]), and has no candidate value inside the bracket.
 */
static void settle(struct ia_smc *s, double lo, double hi)
{
	int kept = 0;

	if (s->naive)
		return;
	for (int i = 0; i < s->nact; i++) {
		int v = s->act[i];
		int64_t c = cap_of_double(s, v, lo * (1 - SLACK));

		if (c != cap_of_double(s, v, hi * (1 + SLACK))) {
			s->act[kept++] = v;
			continue;
		}
		s->cap[v] = c;
		s->pend[s->npend++] = v;
	}
	s->nact = kept;
}

/* Candidate values (base + m) / rate strictly inside (lo, hi), roughly (of active switches). */
static double candidates_between(struct ia_smc *s, double lo, double hi)
{
	double count = 0;

	for (int i = 0; i < s->nact; i++) {
		int v = s->act[i];
		double b = s->pb->base ? (double)s->pb->base[v] : 0;
		double first = floor(lo * s->rate[v] - b) + 1;
		double last = ceil(hi * s->rate[v] - b) - 1;

		if (first < 0)
			first = 0;
		if (last > (double)s->sub[v])
			last = (double)s->sub[v];
		if (last >= first)
			count += last - first + 1;
	}
	return count;
}

/* Unreduced (base + m) / rate of v's uplink, for exact comparisons. */
static struct ia_ratio link_value(const struct ia_smc *s, int v, uint64_t m)
{
	uint64_t b = s->pb->base ? s->pb->base[v] : 0;

	return (struct ia_ratio){ (m + b) * s->t->sw[v].rate.den, s->t->sw[v].rate.num };
}

/*
 * redmax[v]: the switch of v's subtree whose uplink is the most congested
 * when nothing in the subtree is blue (each sends its subtree load), -1 if
 * none carries anything.
 */
static void red_maxima(struct ia_smc *s, int *redmax)
{
	const struct ia_topo *t = s->t;

	for (int h = t->n - 1; h >= 0; h--) {
		int v = t->order[h], best = -1;
		uint64_t b = s->pb->base ? s->pb->base[v] : 0;

		if (s->sub[v] + b)
			best = v;
		for (int c = t->child_start[v]; c < t->child_start[v + 1]; c++) {
			int u = redmax[t->child[c]];

			if (u >= 0 && (best < 0 || ia_ratio_cmp(link_value(s, u, s->sub[u]),
								link_value(s, best, s->sub[best])) > 0))
				best = u;
		}
		redmax[v] = best;
	}
}

static int cmp_deeper(const void *a, const void *b, void *arg)
{
	const int *depth = arg;

	return depth[*(const int *)b] - depth[*(const int *)a];
}

static void consider(const struct ia_smc *s, int u, uint64_t m, int *best, uint64_t *best_m)
{
	if (u >= 0 && (*best < 0 ||
		       ia_ratio_cmp(link_value(s, u, m), link_value(s, *best, *best_m)) > 0)) {
		*best = u;
		*best_m = m;
	}
}

/*
 * The exact congestion of the blue set in s->blue_list: only the blue
 * switches and their ancestors send other than their subtree load; every
 * other subtree's worst link is redmax of its top. Messages of the touched
 * switches go to cur->msgs (the rest of it is not maintained).
 */
static void eval_coloured(struct ia_smc *s, const int *redmax, bool *touched, int *list,
			  struct ia_placement *cur)
{
	const struct ia_topo *t = s->t;
	int n = 0, best = -1;
	uint64_t best_m = 0;

	for (int b = 0; b < s->nblue; b++)
		for (int u = s->blue_list[b]; u >= 0 && !touched[u]; u = t->sw[u].parent) {
			touched[u] = true;
			list[n++] = u;
		}
	qsort_r(list, n, sizeof(*list), cmp_deeper, t->depth);
	for (int i = 0; i < n; i++) {
		int v = list[i];
		uint64_t m = ia_problem_load(s->pb, v);

		for (int c = t->child_start[v]; c < t->child_start[v + 1]; c++) {
			int u = t->child[c];

			if (touched[u]) {
				m += cur->msgs[u];
			} else {
				m += s->sub[u];
				if (redmax[u] >= 0)
					consider(s, redmax[u], s->sub[redmax[u]], &best, &best_m);
			}
		}
		if (cur->blue[v])
			m = m ? ia_problem_merged(s->pb, v) : 0;
		cur->msgs[v] = m;
		if (m + (s->pb->base ? s->pb->base[v] : 0))
			consider(s, v, m, &best, &best_m);
	}
	if (!touched[t->root] && redmax[t->root] >= 0)
		consider(s, redmax[t->root], s->sub[redmax[t->root]], &best, &best_m);
	for (int i = 0; i < n; i++)
		touched[list[i]] = false;
	cur->nblue = s->nblue;
	cur->bottleneck = best;
	cur->congestion = best < 0 ? (struct ia_ratio){ 0, 1 }
		: ia_congestion(best_m + (s->pb->base ? s->pb->base[best] : 0), t->sw[best].rate);
}

/* Per-search scratch of eval_coloured(). */
struct eval_scratch {
	int *redmax;
	bool *touched;
	int *list;
};

static void smc_free(struct ia_smc *s, struct eval_scratch *e)
{
	free(s->sub);
	free(s->rate);
	free(s->cap);
	free(s->prev_cap);
	free(s->act);
	free(s->pend);
	free(s->queued);
	free(s->heap);
	free(s->tab);
	free(s->need);
	free(s->budget);
	free(s->stack);
	free(s->blue_list);
	free(s->ptab);
	free(s->pool.v);
	free(s->acc[0].v);
	free(s->acc[1].v);
	free(s->prefix.v);
	free(e->redmax);
	free(e->touched);
	free(e->list);
}

/* Runs a check; when feasible, colours and evaluates into cur. */
static int probe(struct ia_smc *s, struct eval_scratch *e, struct ia_placement *cur,
		 bool *feasible)
{
	int ret = ia_smc_gather(s, feasible);

	if (ret || !*feasible)
		return ret;
	ret = ia_smc_colour(s, cur->blue);
	if (ret)
		return ret;
	if (s->naive)
		ia_model_eval(s->pb, cur);	/* the paper's way: the whole tree */
	else
		eval_coloured(s, e->redmax, e->touched, e->list, cur);
	return cur->nblue <= s->k ? 0 : -EFAULT;
}

static int smc_alloc(struct ia_smc *s, struct eval_scratch *e)
{
	const struct ia_topo *t = s->t;
	size_t n = t->n;
	int maxdeg = 1;

	for (int v = 0; v < t->n; v++)
		if (t->child_start[v + 1] - t->child_start[v] > maxdeg)
			maxdeg = t->child_start[v + 1] - t->child_start[v];
	s->sub = ia_alloc_big(n * sizeof(*s->sub));
	s->rate = ia_alloc_big(n * sizeof(*s->rate));
	s->cap = ia_alloc_big(n * sizeof(*s->cap));
	s->prev_cap = ia_alloc_big(n * sizeof(*s->prev_cap));
	s->act = ia_alloc_big(n * sizeof(*s->act));
	s->pend = ia_alloc_big(n * sizeof(*s->pend));
	s->queued = ia_calloc_big(n, sizeof(*s->queued));
	s->heap = ia_alloc_big(n * sizeof(*s->heap));
	s->tab = ia_alloc_big(n * sizeof(*s->tab));
	s->need = ia_alloc_big(n * sizeof(*s->need));
	s->budget = ia_alloc_big(n * sizeof(*s->budget));
	s->stack = ia_alloc_big(n * sizeof(*s->stack));
	s->blue_list = ia_alloc_big(n * sizeof(*s->blue_list));
	s->ptab = malloc(maxdeg * sizeof(*s->ptab));
	e->redmax = ia_alloc_big(n * sizeof(*e->redmax));
	e->touched = ia_calloc_big(n, sizeof(*e->touched));
	e->list = ia_alloc_big(n * sizeof(*e->list));
	if (!s->sub || !s->rate || !s->cap || !s->prev_cap || !s->act || !s->pend || !s->queued ||
	    !s->heap || !s->tab || !s->need || !s->budget || !s->stack || !s->blue_list ||
	    !s->ptab || !e->redmax || !e->touched || !e->list ||
	    ia_smc_buf_reserve(&s->acc[0], s->k + 2) || ia_smc_buf_reserve(&s->acc[1], s->k + 2) ||
	    /* Tables average a few entries a switch; incremental checks add to them. */
	    ia_smc_buf_reserve(&s->pool, n * (s->naive ? s->k + 1 : 8)))
		return -ENOMEM;
	for (int v = 0; v < t->n; v++)
		s->act[v] = v;
	s->nact = t->n;
	return 0;
}

int ia_smc(const struct ia_problem *pb, struct ia_placement *p, bool naive)
{
	const struct ia_topo *t = pb->topo;
	struct ia_smc s = { .pb = pb, .t = t, .n = t->n, .k = pb->k, .naive = naive };
	struct eval_scratch e = { 0 };
	struct ia_placement cur;
	struct ia_ratio hi;
	double lo_d, hi_d;
	bool feasible;
	int ret;

	if (s.k > t->n)
		s.k = t->n;	/* more budget than switches changes nothing */
	ret = ia_placement_init(&cur, t->n);
	if (ret)
		return ret;
	ret = smc_alloc(&s, &e);
	if (ret)
		goto out;
	ia_subtree_load(pb, s.sub);
	for (int v = 0; v < t->n; v++)
		s.rate[v] = ia_ratio_double(t->sw[v].rate);
	red_maxima(&s, e.redmax);

	/* Upper bound: all red. Lower bound: every available switch blue. */
	ia_model_eval(pb, p);
	hi = p->congestion;
	for (int v = 0; v < t->n; v++)
		cur.blue[v] = ia_problem_avail(pb, v);
	ia_model_eval(pb, &cur);
	memset(cur.blue, 0, t->n * sizeof(*cur.blue));
	lo_d = ia_ratio_double(cur.congestion) * (1 - SLACK);
	hi_d = ia_ratio_double(hi);

	/* Counting candidates costs a pass: only once the bracket is narrow. */
	while (hi_d - lo_d > hi_d * 1e-12 &&
	       (hi_d - lo_d > hi_d * 1e-3 || candidates_between(&s, lo_d, hi_d) > 0)) {
		double x = (lo_d + hi_d) / 2;

		caps_le_double(&s, x);
		ret = probe(&s, &e, &cur, &feasible);
		if (ret)
			goto out;
		if (!feasible) {
			lo_d = x;
		} else {
			if (ia_ratio_cmp(cur.congestion, hi) < 0) {
				hi = cur.congestion;
				memcpy(p->blue, cur.blue, t->n * sizeof(*p->blue));
			}
			hi_d = ia_ratio_double(hi);
			if (hi_d > x)	/* rounding: keep the bracket consistent */
				hi_d = x;
		}
		settle(&s, lo_d, hi_d);
	}
	/* Exact: nothing strictly below the best found is feasible. */
	for (;;) {
		caps_lt_exact(&s, hi);
		ret = probe(&s, &e, &cur, &feasible);
		if (ret)
			goto out;
		if (!feasible)
			break;
		if (ia_ratio_cmp(cur.congestion, hi) >= 0) {
			ret = -EFAULT;	/* a feasible set must beat the bound */
			goto out;
		}
		hi = cur.congestion;
		memcpy(p->blue, cur.blue, t->n * sizeof(*p->blue));
		settle(&s, lo_d, ia_ratio_double(hi));
	}
	ret = 0;
out:
	p->checks = s.checks;
	smc_free(&s, &e);
	ia_placement_free(&cur);
	return ret;
}
