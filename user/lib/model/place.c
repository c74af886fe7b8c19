// SPDX-License-Identifier: GPL-2.0
/*
 * The simple placement strategies of the paper (Top, Max, Level), the
 * all-red / all-blue references, brute force, and the multi-workload online
 * placement. The model is congestion.c, SMC smc.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "names.h"
#include "place.h"
#include "smc.h"

static const char *const algo_names[IA_ALGO__COUNT] = {
	[IA_ALGO_SMC] = "smc",		[IA_ALGO_TOP] = "top",
	[IA_ALGO_MAX] = "max",		[IA_ALGO_LEVEL] = "level",
	[IA_ALGO_ALL_RED] = "all-red",	[IA_ALGO_ALL_BLUE] = "all-blue",
	[IA_ALGO_BRUTE] = "brute",	[IA_ALGO_SMC_NAIVE] = "smc-naive",
};

const char *ia_algo_name(enum ia_algo a)
{
	return ia_name_of(algo_names, IA_ALGO__COUNT, a);
}

int ia_algo_parse(const char *name)
{
	return ia_name_find(algo_names, IA_ALGO__COUNT, name);
}

struct rank {
	int v;
	uint64_t key1, key2;	/* sorted ascending on key1, then key2, then BFS position */
	int pos;
};

static int cmp_rank(const void *a, const void *b)
{
	const struct rank *x = a, *y = b;

	if (x->key1 != y->key1)
		return x->key1 < y->key1 ? -1 : 1;
	if (x->key2 != y->key2)
		return x->key2 < y->key2 ? -1 : 1;
	return (x->pos > y->pos) - (x->pos < y->pos);
}

/* Colours the first k available switches in the order given by the keys. */
static int place_ranked(const struct ia_problem *pb, struct ia_placement *p, bool by_depth)
{
	const struct ia_topo *t = pb->topo;
	uint64_t *sub = malloc(t->n * sizeof(*sub));
	struct rank *r = malloc(t->n * sizeof(*r));
	int *pos = malloc(t->n * sizeof(*pos));
	int cnt = 0;

	if (!sub || !r || !pos) {
		free(sub);
		free(r);
		free(pos);
		return -ENOMEM;
	}
	ia_subtree_load(pb, sub);
	for (int h = 0; h < t->n; h++)
		pos[t->order[h]] = h;
	for (int v = 0; v < t->n; v++) {
		if (!ia_problem_avail(pb, v))
			continue;
		if (by_depth)	/* Top: closest to the root, larger subtree load first */
			r[cnt] = (struct rank){ v, t->depth[v], UINT64_MAX - sub[v], pos[v] };
		else		/* Max: largest L(v), then larger subtree load */
			r[cnt] = (struct rank){ v, UINT64_MAX - ia_problem_load(pb, v),
						UINT64_MAX - sub[v], pos[v] };
		cnt++;
	}
	qsort(r, cnt, sizeof(*r), cmp_rank);
	for (int i = 0; i < cnt && i < pb->k; i++)
		p->blue[r[i].v] = true;
	free(sub);
	free(r);
	free(pos);
	return 0;
}

/* Every available switch of the deepest level holding at most k of them. */
static int place_level(const struct ia_problem *pb, struct ia_placement *p)
{
	const struct ia_topo *t = pb->topo;
	int *count = calloc(t->height + 1, sizeof(int)), best = -1;

	if (!count)
		return -ENOMEM;
	for (int v = 0; v < t->n; v++)
		if (ia_problem_avail(pb, v))
			count[t->depth[v]]++;
	for (int d = 0; d <= t->height; d++)
		if (count[d] > 0 && count[d] <= pb->k)
			best = d;
	for (int v = 0; best >= 0 && v < t->n; v++)
		p->blue[v] = ia_problem_avail(pb, v) && t->depth[v] == best;
	free(count);
	return 0;
}

/* Subsets of at most k of na switches, saturating (a double: only compared to a limit). */
static double brute_subsets(int na, int k)
{
	double sum = 0, c = 1;

	for (int i = 0; i <= k && i <= na; i++) {
		sum += c;
		c = c * (na - i) / (i + 1);
	}
	return sum;
}

static int available_count(const struct ia_problem *pb)
{
	int na = 0;

	for (int v = 0; v < pb->topo->n; v++)
		na += ia_problem_avail(pb, v);
	return na;
}

/*
 * A merged output must be at least one message where anything arrives and
 * never more than the switch would send red, else blue could lose to red
 * and SMC's tables (blue from its budget on) would not be exact.
 */
static int check_merged(const struct ia_problem *pb, char *err, size_t errlen)
{
	const struct ia_topo *t = pb->topo;
	uint64_t *sub;
	int ret = 0;

	if (!pb->merged)
		return 0;
	sub = malloc(t->n * sizeof(*sub));
	if (!sub)
		return -ENOMEM;
	ia_subtree_load(pb, sub);
	for (int v = 0; v < t->n && !ret; v++) {
		uint64_t red = ia_problem_load(pb, v);

		for (int c = t->child_start[v]; c < t->child_start[v + 1]; c++)
			if (sub[t->child[c]])
				red += pb->merged[t->child[c]];
		if (sub[v] && (!pb->merged[v] || pb->merged[v] > red))
			ret = ia_fail(err, errlen, -EINVAL,
				      "merged output of switch %s: %u messages, must be 1 to %llu (what it would forward red)",
				      t->sw[v].name, pb->merged[v], (unsigned long long)red);
	}
	free(sub);
	return ret;
}

int ia_place_check(const struct ia_problem *pb, enum ia_algo algo, char *err, size_t errlen)
{
	int na;
	double work;

	if (pb->k < 0)
		return ia_fail(err, errlen, -EINVAL, "k: must be >= 0");
	na = check_merged(pb, err, errlen);
	if (na)
		return na;
	if (algo != IA_ALGO_BRUTE)
		return 0;
	na = available_count(pb);
	work = brute_subsets(na, pb->k) * pb->topo->n;
	if (work > IA_BRUTE_MAX_WORK)
		return ia_fail(err, errlen, -E2BIG,
			       "brute: too large for brute force: %d available switches and k=%d give %.3g subsets, each evaluated over %d switches: %.3g switch evaluations, the limit is %.3g (smc is exact and fast)",
			       na, pb->k, work / pb->topo->n, pb->topo->n, work,
			       (double)IA_BRUTE_MAX_WORK);
	return 0;
}

/*
 * Exhaustive search over subsets of at most k available switches, smallest
 * first and in increasing order of their bit masks within a size, so the
 * fewest blue switches win ties.
 */
static int place_brute(const struct ia_problem *pb, struct ia_placement *p)
{
	const struct ia_topo *t = pb->topo;
	struct ia_placement cur;
	int *av = malloc(t->n * sizeof(int)), *pick = malloc((pb->k + 1) * sizeof(int));
	int *best = malloc((pb->k + 1) * sizeof(int)), na = 0, nbest = 0, ret = -ENOMEM;
	struct ia_ratio best_c = { 0, 0 };

	if (!av || !pick || !best)
		goto out;
	ret = ia_place_check(pb, IA_ALGO_BRUTE, NULL, 0);
	if (ret)
		goto out;
	for (int v = 0; v < t->n; v++)
		if (ia_problem_avail(pb, v))
			av[na++] = v;
	ret = ia_placement_init(&cur, t->n);
	if (ret)
		goto out;
	for (int size = 0; size <= pb->k && size <= na; size++) {
		for (int i = 0; i < size; i++)
			pick[i] = i;
		for (;;) {
			int j;

			for (int i = 0; i < size; i++)
				cur.blue[av[pick[i]]] = true;
			ia_model_eval(pb, &cur);
			if (!best_c.den || ia_ratio_cmp(cur.congestion, best_c) < 0) {
				best_c = cur.congestion;
				memcpy(best, pick, size * sizeof(int));
				nbest = size;
			}
			for (int i = 0; i < size; i++)
				cur.blue[av[pick[i]]] = false;
			/* Next subset in colex order: raise the lowest index that can rise. */
			for (j = 0; j < size && pick[j] + 1 == (j + 1 < size ? pick[j + 1] : na); j++)
				;
			if (j == size)
				break;
			pick[j]++;
			for (int i = 0; i < j; i++)
				pick[i] = i;
		}
	}
	for (int i = 0; i < nbest; i++)
		p->blue[av[best[i]]] = true;
	ia_placement_free(&cur);
out:
	free(av);
	free(pick);
	free(best);
	return ret;
}

int ia_place(const struct ia_problem *pb, enum ia_algo algo, struct ia_placement *p)
{
	double start;
	int ret = 0;

	if (pb->k < 0)
		return -EINVAL;
	if (p->n != pb->topo->n)
		return -EINVAL;
	if (pb->merged) {
		ret = check_merged(pb, NULL, 0);
		if (ret)
			return ret;
	}
	memset(p->blue, 0, p->n * sizeof(*p->blue));
	p->checks = 0;
	start = ia_now_seconds();
	switch (algo) {
	case IA_ALGO_SMC:
		ret = ia_smc(pb, p, false);
		break;
	case IA_ALGO_SMC_NAIVE:
		ret = ia_smc(pb, p, true);
		break;
	case IA_ALGO_TOP:
		ret = place_ranked(pb, p, true);
		break;
	case IA_ALGO_MAX:
		ret = place_ranked(pb, p, false);
		break;
	case IA_ALGO_LEVEL:
		ret = place_level(pb, p);
		break;
	case IA_ALGO_ALL_RED:
		break;
	case IA_ALGO_ALL_BLUE:
		/* A reference bound: every available switch, whatever k. */
		for (int v = 0; v < p->n; v++)
			p->blue[v] = ia_problem_avail(pb, v);
		break;
	case IA_ALGO_BRUTE:
		ret = place_brute(pb, p);
		break;
	default:
		return -EINVAL;
	}
	p->solve_seconds = ia_now_seconds() - start;
	if (!ret)
		ia_model_eval(pb, p);
	return ret;
}

void ia_multi_free(struct ia_multi_result *r)
{
	for (int i = 0; r->per && i < r->nw; i++)
		ia_placement_free(&r->per[i]);
	free(r->per);
	free(r->total_msgs);
	free(r->residual);
	memset(r, 0, sizeof(*r));
}

int ia_multi_place(const struct ia_topo *t, const struct ia_workload *w, int nw,
		   enum ia_algo algo, bool aware, struct ia_multi_result *r)
{
	bool *avail = calloc(t->n, sizeof(bool));
	int ret = -ENOMEM;

	memset(r, 0, sizeof(*r));
	r->nw = nw;
	r->per = calloc(nw ? nw : 1, sizeof(*r->per));
	r->total_msgs = calloc(t->n, sizeof(*r->total_msgs));
	r->residual = calloc(t->n, sizeof(*r->residual));
	if (!avail || !r->per || !r->total_msgs || !r->residual)
		goto out;
	for (int v = 0; v < t->n; v++)
		r->residual[v] = t->sw[v].capacity;
	for (int i = 0; i < nw; i++) {
		struct ia_problem pb = {
			.topo = t, .load = w[i].load, .avail = avail, .k = w[i].k,
			.base = aware ? r->total_msgs : NULL,
		};
		struct ia_placement *p = &r->per[i];

		ret = ia_placement_init(p, t->n);
		if (ret)
			goto out;
		for (int v = 0; v < t->n; v++)
			avail[v] = t->sw[v].available && r->residual[v] > 0;
		ret = ia_place(&pb, algo, p);
		if (ret)
			goto out;
		/* Report each workload's own congestion, without earlier load. */
		pb.base = NULL;
		ia_model_eval(&pb, p);
		for (int v = 0; v < t->n; v++) {
			if (p->blue[v])
				r->residual[v]--;
			r->total_msgs[v] += p->msgs[v];
			if (r->total_msgs[v] > UINT32_MAX) {
				ret = -EOVERFLOW;
				goto out;
			}
		}
	}
	r->bottleneck = -1;
	r->congestion = (struct ia_ratio){ 0, 1 };
	for (int v = 0; v < t->n; v++) {
		struct ia_ratio c = ia_congestion(r->total_msgs[v], t->sw[v].rate);

		if (r->total_msgs[v] && (r->bottleneck < 0 || ia_ratio_cmp(c, r->congestion) > 0)) {
			r->congestion = c;
			r->bottleneck = v;
		}
	}
	ret = 0;
out:
	free(avail);
	if (ret)
		ia_multi_free(r);
	return ret;
}

static const char *const metric_names[IA_MULTI__COUNT] = {
	[IA_MULTI_SUM] = "sum",
	[IA_MULTI_LINK] = "link",
};

const char *ia_multi_metric_name(enum ia_multi_metric m)
{
	return ia_name_of(metric_names, IA_MULTI__COUNT, m);
}

int ia_multi_metric_parse(const char *name)
{
	return ia_name_find(metric_names, IA_MULTI__COUNT, name);
}

double ia_multi_metric(const struct ia_multi_result *r, enum ia_multi_metric m)
{
	double sum = 0;

	if (m == IA_MULTI_LINK)
		return ia_ratio_double(r->congestion);
	for (int i = 0; i < r->nw; i++)
		sum += ia_ratio_double(r->per[i].congestion);
	return sum;
}
