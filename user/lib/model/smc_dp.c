// SPDX-License-Identifier: GPL-2.0
/*
 * SMC's tree DP (paper Sec. IV, made fast): the feasibility check for given
 * link budgets and the colouring of a feasible one; the search is in smc.c,
 * which says how the two make SMC exact and fast.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "mem.h"
#include "smc.h"

#define INF IA_SMC_INF

int ia_smc_buf_reserve(struct ia_smc_buf *b, size_t extra)
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

static inline uint32_t beta(const struct ia_smc_buf *b, const struct ia_smc_tab *t, int i)
{
	if (i < t->lo || !t->len)
		return INF;
	if (i >= t->lo + t->len)
		i = t->lo + t->len - 1;
	return b->v[t->off + i - t->lo];
}

static inline bool tab_feasible(const struct ia_smc_tab *t)
{
	return t->len > 0;
}

/*
 * out = a (+) b, the min-plus merge of two tables, limited to budget k.
 * Returns out's lo, or k + 1 when no budget <= k is feasible.
 */
static int merge(struct ia_smc *s, const uint32_t *a, int a_lo, int a_len,
		 const struct ia_smc_buf *bb, const struct ia_smc_tab *b, uint32_t *out, int *out_len)
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
static int push_tab(struct ia_smc *s, struct ia_smc_tab *t, int lo, const uint32_t *v, int len)
{
	if (!s->naive)
		while (len > 1 && v[len - 1] == v[len - 2])
			len--;
	if (ia_smc_buf_reserve(&s->pool, len))
		return -ENOMEM;
	t->lo = lo;
	t->len = len;
	t->off = s->pool.len;
	memcpy(s->pool.v + s->pool.len, v, len * sizeof(*v));
	s->pool.len += len;
	return 0;
}

/* Table of a switch whose value is 'val' from budget lo on. */
static int push_const(struct ia_smc *s, struct ia_smc_tab *t, int lo, uint32_t val)
{
	int len = s->naive ? s->k - lo + 1 : 1;

	if (ia_smc_buf_reserve(&s->acc[0], len))
		return -ENOMEM;
	for (int i = 0; i < len; i++)
		s->acc[0].v[i] = val;
	return push_tab(s, t, lo, s->acc[0].v, len);
}

static int gather_one(struct ia_smc *s, int v)
{
	const struct ia_topo *t = s->t;
	struct ia_smc_tab *tv = &s->tab[v];
	uint32_t *acc, *tmp;
	int lo = 0, len = 1, red_lo;
	int64_t cap = s->cap[v];
	uint32_t merged = ia_problem_merged(s->pb, v);
	bool children_ok = true;

	*tv = (struct ia_smc_tab){ .lo = s->k + 1 };
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
		const struct ia_smc_tab *tc = &s->tab[t->child[c]];
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

	/*
	 * Blue: its merged output (one message in the paper's model), never
	 * more than red sends (ia_place_check()); needs each child feasible on
	 * its own budget.
	 */
	if (ia_problem_avail(s->pb, v) && cap >= merged && lo + 1 <= s->k)
		s->need[v] = lo + 1;

	if (red_lo == len) {	/* red infeasible */
		if (s->need[v] == INT_MAX)
			return 0;
		return push_const(s, tv, s->need[v], merged);
	}
	if (s->need[v] <= lo + red_lo)
		return push_const(s, tv, s->need[v], merged);
	if (s->need[v] != INT_MAX) {
		/* Red below need, the merged output from need on. */
		int upto = s->need[v] - lo;	/* index of need in acc */

		if (upto < len) {
			acc[upto] = merged;
			len = s->naive ? len : upto + 1;
			for (int i = upto + 1; i < len; i++)
				acc[i] = merged;
		} else {
			for (int i = len; i <= upto; i++)
				acc[i] = acc[len - 1];
			acc[upto] = merged;
			len = upto + 1;
		}
	}
	return push_tab(s, tv, lo + red_lo, acc + red_lo, len - red_lo);
}

static bool same_tab(const struct ia_smc *s, const struct ia_smc_tab *a, int need_a, int v)
{
	const struct ia_smc_tab *b = &s->tab[v];

	return need_a == s->need[v] && a->lo == b->lo && a->len == b->len &&
	       !memcmp(s->pool.v + a->off, s->pool.v + b->off, a->len * sizeof(uint32_t));
}

/* Heap of switches to recompute, deepest first: a switch after all its children. */
static void heap_push(struct ia_smc *s, int v)
{
	const int *depth = s->t->depth;
	int i = s->nheap++;

	s->queued[v] = true;
	while (i > 0 && depth[s->heap[(i - 1) / 2]] < depth[v]) {
		s->heap[i] = s->heap[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	s->heap[i] = v;
}

static int heap_pop(struct ia_smc *s)
{
	const int *depth = s->t->depth;
	int top = s->heap[0], last = s->heap[--s->nheap], i = 0;

	for (;;) {
		int c = 2 * i + 1;

		if (c >= s->nheap)
			break;
		if (c + 1 < s->nheap && depth[s->heap[c + 1]] > depth[s->heap[c]])
			c++;
		if (depth[s->heap[c]] <= depth[last])
			break;
		s->heap[i] = s->heap[c];
		i = c;
	}
	if (s->nheap)
		s->heap[i] = last;
	s->queued[top] = false;
	return top;
}

static void note_moved(struct ia_smc *s, int v)
{
	if (s->cap[v] != s->prev_cap[v] && !s->queued[v])
		heap_push(s, v);
	s->prev_cap[v] = s->cap[v];
}

/* Recomputes the switches whose budget moved, and up the tree while tables change. */
static int gather_changed(struct ia_smc *s)
{
	const struct ia_topo *t = s->t;
	int ret;

	for (int i = 0; i < s->nact; i++)
		note_moved(s, s->act[i]);
	for (int i = 0; i < s->npend; i++)
		note_moved(s, s->pend[i]);
	s->npend = 0;
	while (s->nheap) {
		int v = heap_pop(s), need = s->need[v], p = t->sw[v].parent;
		struct ia_smc_tab old = s->tab[v];

		ret = gather_one(s, v);
		if (ret)
			return ret;
		if (p >= 0 && !s->queued[p] && !same_tab(s, &old, need, v))
			heap_push(s, p);
	}
	return 0;
}

int ia_smc_gather(struct ia_smc *s, bool *feasible)
{
	const struct ia_topo *t = s->t;
	int ret = 0;

	s->checks++;
	/* Stale tables pile up in the pool: start afresh when they outweigh the live ones. */
	if (!s->naive && s->have_tabs && s->pool.len < 2 * s->full_pool + (1u << 20)) {
		ret = gather_changed(s);
	} else {
		s->pool.len = 0;
		for (int h = t->n - 1; h >= 0 && !ret; h--)
			ret = gather_one(s, t->order[h]);
		memcpy(s->prev_cap, s->cap, s->n * sizeof(*s->cap));
		s->npend = 0;
		s->have_tabs = true;
		s->full_pool = s->pool.len;
	}
	if (ret)
		return ret;
	*feasible = tab_feasible(&s->tab[t->root]) && s->tab[t->root].lo <= s->k;
	return 0;
}

/* Splits red switch v's budget i among its children by undoing its prefix merges. */
static int split_budget(struct ia_smc *s, int v, int i)
{
	const struct ia_topo *t = s->t;
	int c0 = t->child_start[v], c1 = t->child_start[v + 1];

	s->prefix.len = 0;
	for (int c = c0; c < c1; c++) {
		const struct ia_smc_tab *tc = &s->tab[t->child[c]];
		struct ia_smc_tab *pt = &s->ptab[c - c0];
		int len;

		if (ia_smc_buf_reserve(&s->prefix, s->k + 2))
			return -ENOMEM;
		pt->off = s->prefix.len;
		if (c == c0) {
			pt->lo = tc->lo;
			pt->len = tc->len;
			memcpy(s->prefix.v + pt->off, s->pool.v + tc->off, tc->len * sizeof(uint32_t));
		} else {
			const struct ia_smc_tab *pp = &s->ptab[c - c0 - 1];

			pt->lo = merge(s, s->prefix.v + pp->off, pp->lo, pp->len, &s->pool, tc,
				       s->prefix.v + pt->off, &len);
			pt->len = pt->lo > s->k ? 0 : len;
		}
		s->prefix.len += pt->len;
	}
	for (int c = c1 - 1; c > c0; c--) {
		const struct ia_smc_tab *tc = &s->tab[t->child[c]];
		const struct ia_smc_tab *pp = &s->ptab[c - c0 - 1];
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
	return 0;
}

/*
 * Walks the tables top-down from the root, colouring blue where the DP chose
 * it. Only switches with budget left are visited: a subtree with none holds
 * no blue switch.
 */
int ia_smc_colour(struct ia_smc *s, bool *blue)
{
	const struct ia_topo *t = s->t;
	int sp = 0, ret;

	for (int b = 0; b < s->nblue; b++)
		blue[s->blue_list[b]] = false;
	s->nblue = 0;
	s->budget[t->root] = s->k;
	s->stack[sp++] = t->root;
	while (sp) {
		int v = s->stack[--sp], i = s->budget[v];
		int c0 = t->child_start[v], c1 = t->child_start[v + 1];

		if (s->sub[v] && s->need[v] <= i) {
			blue[v] = true;
			s->blue_list[s->nblue++] = v;
			/* Each child on the least budget that keeps it feasible. */
			for (int c = c0; c < c1; c++)
				s->budget[t->child[c]] = s->tab[t->child[c]].lo;
		} else if (!s->sub[v] || c0 == c1 || i == 0) {
			continue;
		} else {
			ret = split_budget(s, v, i);
			if (ret)
				return ret;
		}
		for (int c = c0; c < c1; c++)
			if (s->budget[t->child[c]] > 0)
				s->stack[sp++] = t->child[c];
	}
	return 0;
}
