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
 *    children's tables. Between two checks of a narrowing search most budgets
 *    do not move, so only switches whose budget or a child's table changed
 *    are recomputed (the first check, and any after the pool has grown too
 *    much, recompute all).
 *  - Colouring gives a red switch's children budgets by undoing its merges;
 *    with no budget left there is nothing to undo.
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

#define INF UINT32_MAX
#define CAP_MAX ((int64_t)UINT32_MAX - 1)

struct tab {
	int lo;		/* beta(i) = INF for i < lo */
	int len;	/* stored values; beta(i) = last value for i >= lo + len */
	size_t off;	/* into pool */
};

struct buf {
	uint32_t *v;
	size_t len, cap;
};

struct smc {
	const struct ia_problem *pb;
	const struct ia_topo *t;
	int n, k;
	bool naive;
	uint64_t *sub;		/* subtree load */
	int64_t *cap;		/* message budget of each uplink for the bound checked */
	int64_t *prev_cap;	/* the budgets the current tables were computed for */
	bool *dirty;		/* to recompute in this check */
	bool have_tabs;		/* tab[] holds every switch's table for prev_cap */
	size_t full_pool;	/* pool size of the last full computation */
	double *rate;
	struct tab *tab;
	int *need;		/* blue switches v needs to be blue; INT_MAX if it cannot */
	int *budget;		/* colouring: blue switches allowed in v's subtree */
	struct buf pool;	/* every beta table of one check */
	struct buf acc[2];	/* merge accumulators */
	struct buf prefix;	/* colouring: prefix merges of one switch's children */
	struct tab *ptab;
	int checks;
};

static int buf_reserve(struct buf *b, size_t extra)
{
	if (b->len + extra <= b->cap)
		return 0;
	size_t cap = b->cap ? b->cap : 1024;

	while (cap < b->len + extra)
		cap *= 2;
	uint32_t *v = ia_realloc_big(b->v, cap * sizeof(*v));

	if (!v)
		return -ENOMEM;
	b->v = v;
	b->cap = cap;
	return 0;
}

static inline uint32_t beta(const struct buf *b, const struct tab *t, int i)
{
	if (i < t->lo || !t->len)
		return INF;
	if (i >= t->lo + t->len)
		i = t->lo + t->len - 1;
	return b->v[t->off + i - t->lo];
}

static inline bool tab_feasible(const struct tab *t)
{
	return t->len > 0;
}

/*
 * out = a (+) b, the min-plus merge of two tables, limited to budget k.
 * Returns out's lo, or k + 1 when no budget <= k is feasible.
 */
static int merge(struct smc *s, const uint32_t *a, int a_lo, int a_len, const struct buf *bb,
		 const struct tab *b, uint32_t *out, int *out_len)
{
	int lo = a_lo + b->lo, len;
	const uint32_t *bv = bb->v + b->off;

	if (lo > s->k)
		return s->k + 1;
	len = s->naive ? s->k - lo + 1 : a_len + b->len - 1;
	if (len > s->k - lo + 1)
		len = s->k - lo + 1;
	for (int t = 0; t < len; t++)
		out[t] = INF;
	for (int x = 0; x < a_len && x < len; x++) {
		uint32_t ax = a[x];

		if (ax == INF)
			continue;
		for (int y = 0; y < b->len && x + y < len; y++) {
			if (bv[y] != INF && ax + bv[y] < out[x + y])
				out[x + y] = ax + bv[y];
		}
	}
	/* "At most i" blue switches: never worse with more budget. */
	for (int t = 1; t < len; t++)
		if (out[t - 1] < out[t])
			out[t] = out[t - 1];
	*out_len = len;
	return lo;
}

/* Appends a table to the pool, trimming its constant tail (fast mode). */
static int push_tab(struct smc *s, struct tab *t, int lo, const uint32_t *v, int len)
{
	if (!s->naive)
		while (len > 1 && v[len - 1] == v[len - 2])
			len--;
	if (buf_reserve(&s->pool, len))
		return -ENOMEM;
	t->lo = lo;
	t->len = len;
	t->off = s->pool.len;
	memcpy(s->pool.v + s->pool.len, v, len * sizeof(*v));
	s->pool.len += len;
	return 0;
}

/* Table of a switch whose value is 'val' from budget lo on. */
static int push_const(struct smc *s, struct tab *t, int lo, uint32_t val)
{
	int len = s->naive ? s->k - lo + 1 : 1;

	if (buf_reserve(&s->acc[0], len))
		return -ENOMEM;
	for (int i = 0; i < len; i++)
		s->acc[0].v[i] = val;
	return push_tab(s, t, lo, s->acc[0].v, len);
}

static int gather_one(struct smc *s, int v)
{
	const struct ia_topo *t = s->t;
	struct tab *tv = &s->tab[v];
	uint32_t *acc, *tmp;
	int lo = 0, len = 1, red_lo;
	int64_t cap = s->cap[v];
	bool children_ok = true;

	*tv = (struct tab){ .lo = s->k + 1 };
	s->need[v] = INT_MAX;
	if (cap < 0)
		return 0;
	if (!s->sub[v]) {
		/* Nothing to send, but earlier workloads' load must fit below. */
		for (int c = t->child_start[v]; c < t->child_start[v + 1]; c++)
			if (!tab_feasible(&s->tab[t->child[c]]))
				return 0;
		return push_const(s, tv, 0, 0);
	}

	/* Red: L(v) plus the best split of the budget among the children. */
	acc = s->acc[0].v;
	tmp = s->acc[1].v;
	acc[0] = ia_problem_load(s->pb, v);
	if (s->naive) {
		len = s->k + 1;
		for (int i = 1; i < len; i++)
			acc[i] = acc[0];
	}
	for (int c = t->child_start[v]; c < t->child_start[v + 1]; c++) {
		const struct tab *tc = &s->tab[t->child[c]];
		int nlen;

		if (!tab_feasible(tc)) {
			children_ok = false;
			break;
		}
		lo = merge(s, acc, lo, len, &s->pool, tc, tmp, &nlen);
		if (lo > s->k) {
			children_ok = false;
			break;
		}
		len = nlen;
		uint32_t *sw = acc;

		acc = tmp;
		tmp = sw;
	}
	if (!children_ok)
		return 0;
	/* acc holds sum of children + L(v) from budget lo; drop what exceeds cap. */
	red_lo = 0;
	while (red_lo < len && acc[red_lo] > cap)
		red_lo++;

	/* Blue: one message, needs each child feasible on its own budget. */
	if (ia_problem_avail(s->pb, v) && cap >= 1 && lo + 1 <= s->k)
		s->need[v] = lo + 1;

	if (red_lo == len) {	/* red infeasible */
		if (s->need[v] == INT_MAX)
			return 0;
		return push_const(s, tv, s->need[v], 1);
	}
	if (s->need[v] <= lo + red_lo)
		return push_const(s, tv, s->need[v], 1);
	if (s->need[v] != INT_MAX) {
		/* Red below need, one message from need on. */
		int upto = s->need[v] - lo;	/* index of need in acc */

		if (upto < len) {
			acc[upto] = 1;
			len = s->naive ? len : upto + 1;
			for (int i = upto + 1; i < len; i++)
				acc[i] = 1;
		} else {
			for (int i = len; i <= upto; i++)
				acc[i] = acc[len - 1];
			acc[upto] = 1;
			len = upto + 1;
		}
	}
	return push_tab(s, tv, lo + red_lo, acc + red_lo, len - red_lo);
}

static bool same_tab(const struct smc *s, const struct tab *a, int need_a, int v)
{
	const struct tab *b = &s->tab[v];

	return need_a == s->need[v] && a->lo == b->lo && a->len == b->len &&
	       !memcmp(s->pool.v + a->off, s->pool.v + b->off, a->len * sizeof(uint32_t));
}

/* Recomputes the switches whose budget changed, and up the tree while tables change. */
static int gather_changed(struct smc *s)
{
	const struct ia_topo *t = s->t;
	int ret;

	for (int v = 0; v < s->n; v++) {
		s->dirty[v] = s->cap[v] != s->prev_cap[v];
		s->prev_cap[v] = s->cap[v];
	}
	for (int h = t->n - 1; h >= 0; h--) {
		int v = t->order[h], need = s->need[v];
		struct tab old = s->tab[v];

		if (!s->dirty[v])
			continue;
		ret = gather_one(s, v);
		if (ret)
			return ret;
		if (t->sw[v].parent >= 0 && !s->dirty[t->sw[v].parent] && !same_tab(s, &old, need, v))
			s->dirty[t->sw[v].parent] = true;
	}
	return 0;
}

/* One feasibility check with the caps already set. */
static int gather(struct smc *s, bool *feasible)
{
	const struct ia_topo *t = s->t;
	int ret;

	s->checks++;
	/* Stale tables pile up in the pool: start afresh when they outweigh the live ones. */
	if (!s->naive && s->have_tabs && s->pool.len < 2 * s->full_pool + (1u << 20)) {
		ret = gather_changed(s);
	} else {
		s->pool.len = 0;
		for (int h = t->n - 1; h >= 0; h--) {
			ret = gather_one(s, t->order[h]);
			if (ret)
				return ret;
		}
		memcpy(s->prev_cap, s->cap, s->n * sizeof(*s->cap));
		s->have_tabs = true;
		s->full_pool = s->pool.len;
	}
	if (ret)
		return ret;
	*feasible = tab_feasible(&s->tab[t->root]) && s->tab[t->root].lo <= s->k;
	return 0;
}

/* Walks the tables top-down, colouring blue where the DP chose it. */
static int colour(struct smc *s, bool *blue)
{
	const struct ia_topo *t = s->t;

	memset(blue, 0, t->n * sizeof(*blue));
	s->budget[t->root] = s->k;
	for (int h = 0; h < t->n; h++) {
		int v = t->order[h], i = s->budget[v];
		int c0 = t->child_start[v], c1 = t->child_start[v + 1];

		if (!s->sub[v] || c0 == c1) {
			for (int c = c0; c < c1; c++)
				s->budget[t->child[c]] = 0;
			blue[v] = s->sub[v] && s->need[v] <= i;
			continue;
		}
		if (s->need[v] <= i) {
			blue[v] = true;
			for (int c = c0; c < c1; c++)
				s->budget[t->child[c]] = s->tab[t->child[c]].lo;
			continue;
		}
		if (i == 0) {	/* red with no budget: nothing below is blue */
			for (int c = c0; c < c1; c++)
				s->budget[t->child[c]] = 0;
			continue;
		}
		/* Red: redo the prefix merges, then undo them from the last child. */
		s->prefix.len = 0;
		for (int c = c0; c < c1; c++) {
			const struct tab *tc = &s->tab[t->child[c]];
			struct tab *pt = &s->ptab[c - c0];
			int len;

			if (buf_reserve(&s->prefix, s->k + 2))
				return -ENOMEM;
			pt->off = s->prefix.len;
			if (c == c0) {
				pt->lo = tc->lo;
				pt->len = tc->len;
				memcpy(s->prefix.v + pt->off, s->pool.v + tc->off,
				       tc->len * sizeof(uint32_t));
			} else {
				const struct tab *pp = &s->ptab[c - c0 - 1];

				pt->lo = merge(s, s->prefix.v + pp->off, pp->lo, pp->len, &s->pool, tc,
					       s->prefix.v + pt->off, &len);
				pt->len = pt->lo > s->k ? 0 : len;
			}
			s->prefix.len += pt->len;
		}
		for (int c = c1 - 1; c > c0; c--) {
			const struct tab *tc = &s->tab[t->child[c]];
			const struct tab *pp = &s->ptab[c - c0 - 1];
			uint32_t want = beta(&s->prefix, &s->ptab[c - c0], i);
			int j;

			for (j = tc->lo; j <= i - pp->lo; j++) {
				uint32_t a = beta(&s->prefix, pp, i - j), b = beta(&s->pool, tc, j);

				if (a != INF && b != INF && a + b == want)
					break;
			}
			if (j > i - pp->lo)
				return -EFAULT;	/* the tables disagree: a bug */
			s->budget[t->child[c]] = j;
			i -= j;
		}
		s->budget[t->child[c0]] = i;
	}
	return 0;
}

/* Caps for "congestion <= x", x a double (bisection probes). */
static void caps_le_double(struct smc *s, double x)
{
	for (int v = 0; v < s->n; v++) {
		double m = floor(x * s->rate[v]);
		int64_t cap = m > (double)CAP_MAX ? CAP_MAX : (int64_t)m;

		cap -= s->pb->base ? (int64_t)s->pb->base[v] : 0;
		s->cap[v] = cap;
	}
}

/* Caps for "congestion < c", exact: largest m with m / rate < c. */
static void caps_lt_exact(struct smc *s, struct ia_ratio c)
{
	for (int v = 0; v < s->n; v++) {
		struct ia_ratio r = s->t->sw[v].rate;
		unsigned __int128 num = (unsigned __int128)c.num * r.num;
		unsigned __int128 den = (unsigned __int128)c.den * r.den;
		int64_t cap;

		if (!num) {
			s->cap[v] = -1;
			continue;
		}
		unsigned __int128 m = (num - 1) / den;

		cap = m > (unsigned __int128)CAP_MAX ? CAP_MAX : (int64_t)m;
		cap -= s->pb->base ? (int64_t)s->pb->base[v] : 0;
		s->cap[v] = cap;
	}
}

/* Candidate values (base + m) / rate strictly inside (lo, hi), roughly. */
static double candidates_between(struct smc *s, double lo, double hi)
{
	double count = 0;

	for (int v = 0; v < s->n; v++) {
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

static void smc_free(struct smc *s)
{
	free(s->sub);
	free(s->cap);
	free(s->prev_cap);
	free(s->dirty);
	free(s->rate);
	free(s->tab);
	free(s->need);
	free(s->budget);
	free(s->ptab);
	free(s->pool.v);
	free(s->acc[0].v);
	free(s->acc[1].v);
	free(s->prefix.v);
}

/* Runs a check; when feasible, colours and evaluates into cur. */
static int probe(struct smc *s, struct ia_placement *cur, bool *feasible)
{
	int ret = gather(s, feasible);

	if (ret || !*feasible)
		return ret;
	ret = colour(s, cur->blue);
	if (ret)
		return ret;
	ia_model_eval(s->pb, cur);
	return cur->nblue <= s->k ? 0 : -EFAULT;
}

int ia_smc(const struct ia_problem *pb, struct ia_placement *p, bool naive)
{
	const struct ia_topo *t = pb->topo;
	struct smc s = { .pb = pb, .t = t, .n = t->n, .k = pb->k, .naive = naive };
	struct ia_placement cur;
	struct ia_ratio hi;
	double lo_d, hi_d;
	bool feasible;
	int ret = -ENOMEM, maxdeg = 1;

	if (s.k > t->n)
		s.k = t->n;	/* more budget than switches changes nothing */
	for (int v = 0; v < t->n; v++)
		if (t->child_start[v + 1] - t->child_start[v] > maxdeg)
			maxdeg = t->child_start[v + 1] - t->child_start[v];
	s.sub = ia_alloc_big(t->n * sizeof(*s.sub));
	s.cap = ia_alloc_big(t->n * sizeof(*s.cap));
	s.prev_cap = ia_alloc_big(t->n * sizeof(*s.prev_cap));
	s.dirty = ia_alloc_big(t->n * sizeof(*s.dirty));
	s.rate = ia_alloc_big(t->n * sizeof(*s.rate));
	s.tab = ia_alloc_big(t->n * sizeof(*s.tab));
	s.need = ia_alloc_big(t->n * sizeof(*s.need));
	s.budget = ia_alloc_big(t->n * sizeof(*s.budget));
	s.ptab = malloc(maxdeg * sizeof(*s.ptab));
	if (!s.sub || !s.cap || !s.prev_cap || !s.dirty || !s.rate || !s.tab || !s.need || !s.budget || !s.ptab ||
	    buf_reserve(&s.acc[0], s.k + 2) || buf_reserve(&s.acc[1], s.k + 2))
		goto out;
	if (ia_placement_init(&cur, t->n))
		goto out;
	/* Tables average a few entries a switch; incremental checks add to them. */
	if (buf_reserve(&s.pool, (size_t)t->n * (naive ? s.k + 1 : 8)))
		goto out_cur;
	ia_subtree_load(pb, s.sub);
	for (int v = 0; v < t->n; v++)
		s.rate[v] = ia_ratio_double(t->sw[v].rate);

	/* Upper bound: all red. Lower bound: every available switch blue. */
	ia_model_eval(pb, p);
	hi = p->congestion;
	for (int v = 0; v < t->n; v++)
		cur.blue[v] = ia_problem_avail(pb, v);
	ia_model_eval(pb, &cur);
	lo_d = ia_ratio_double(cur.congestion) * (1 - 1e-9);
	hi_d = ia_ratio_double(hi);

	/* Counting candidates costs a pass: only once the bracket is narrow. */
	while (hi_d - lo_d > hi_d * 1e-12 &&
	       (hi_d - lo_d > hi_d * 1e-3 || candidates_between(&s, lo_d, hi_d) > 0)) {
		double x = (lo_d + hi_d) / 2;

		caps_le_double(&s, x);
		ret = probe(&s, &cur, &feasible);
		if (ret)
			goto out_cur;
		if (!feasible) {
			lo_d = x;
			continue;
		}
		if (ia_ratio_cmp(cur.congestion, hi) < 0) {
			hi = cur.congestion;
			memcpy(p->blue, cur.blue, t->n * sizeof(*p->blue));
		}
		hi_d = ia_ratio_double(hi);
		if (hi_d > x)	/* rounding: keep the bracket consistent */
			hi_d = x;
	}
	/* Exact: nothing strictly below the best found is feasible. */
	for (;;) {
		caps_lt_exact(&s, hi);
		ret = probe(&s, &cur, &feasible);
		if (ret)
			goto out_cur;
		if (!feasible)
			break;
		if (ia_ratio_cmp(cur.congestion, hi) >= 0) {
			ret = -EFAULT;	/* a feasible set must beat the bound */
			goto out_cur;
		}
		hi = cur.congestion;
		memcpy(p->blue, cur.blue, t->n * sizeof(*p->blue));
	}
	ret = 0;
out_cur:
	ia_placement_free(&cur);
out:
	p->checks = s.checks;
	smc_free(&s);
	return ret;
}
