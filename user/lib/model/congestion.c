// SPDX-License-Identifier: GPL-2.0
/* The congestion model (congestion.h): a placement's messages per link and its congestion. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "congestion.h"
#include "mem.h"

int ia_placement_init(struct ia_placement *p, int n)
{
	memset(p, 0, sizeof(*p));
	p->n = n;
	p->bottleneck = -1;
	p->congestion = (struct ia_ratio){ 0, 1 };
	p->blue = ia_calloc_big(n ? n : 1, sizeof(*p->blue));
	p->msgs = ia_calloc_big(n ? n : 1, sizeof(*p->msgs));
	if (!p->blue || !p->msgs) {
		ia_placement_free(p);
		return -ENOMEM;
	}
	return 0;
}

void ia_placement_free(struct ia_placement *p)
{
	free(p->blue);
	free(p->msgs);
	p->blue = NULL;
	p->msgs = NULL;
}

uint32_t ia_problem_load(const struct ia_problem *pb, int v)
{
	return pb->load ? pb->load[v] : pb->topo->sw[v].load;
}

bool ia_problem_avail(const struct ia_problem *pb, int v)
{
	return pb->avail ? pb->avail[v] : pb->topo->sw[v].available;
}

/* Subtree loads, children before parents (reverse BFS). */
void ia_subtree_load(const struct ia_problem *pb, uint64_t *sub)
{
	const struct ia_topo *t = pb->topo;

	for (int h = t->n - 1; h >= 0; h--) {
		int v = t->order[h];

		sub[v] = ia_problem_load(pb, v);
		for (int c = t->child_start[v]; c < t->child_start[v + 1]; c++)
			sub[v] += sub[t->child[c]];
	}
}

void ia_model_eval(const struct ia_problem *pb, struct ia_placement *p)
{
	const struct ia_topo *t = pb->topo;

	p->nblue = 0;
	p->bottleneck = -1;
	p->congestion = (struct ia_ratio){ 0, 1 };
	for (int h = t->n - 1; h >= 0; h--) {
		int v = t->order[h];
		uint64_t m = ia_problem_load(pb, v);

		for (int c = t->child_start[v]; c < t->child_start[v + 1]; c++)
			m += p->msgs[t->child[c]];
		/* A blue switch sends its merged output (one message), none if nothing reached it. */
		if (p->blue[v]) {
			p->nblue++;
			m = m ? ia_problem_merged(pb, v) : 0;
		}
		p->msgs[v] = m;
	}
	/* Compared unreduced (m * den / num), reduced once at the end. */
	for (int v = 0; v < t->n; v++) {
		uint64_t m = p->msgs[v] + (pb->base ? pb->base[v] : 0);
		struct ia_ratio c = { m * t->sw[v].rate.den, t->sw[v].rate.num };

		if (m && (p->bottleneck < 0 || ia_ratio_cmp(c, p->congestion) > 0)) {
			p->congestion = c;
			p->bottleneck = v;
		}
	}
	if (p->bottleneck >= 0)
		p->congestion = ia_congestion(p->msgs[p->bottleneck] +
					      (pb->base ? pb->base[p->bottleneck] : 0),
					      t->sw[p->bottleneck].rate);
}
