// SPDX-License-Identifier: GPL-2.0
/* Per-switch roles and member sets of a job (see plan.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "plan.h"

void ia_plan_free(struct ia_plan *p)
{
	for (int v = 0; p->sw && v < p->n; v++) {
		free(p->sw[v].members);
		free(p->sw[v].down);
	}
	free(p->sw);
	free(p->dest);
	memset(p, 0, sizeof(*p));
}

/* Appends to *arr the senders that leave switch u by its uplink. */
static int add_outgoing(const struct ia_plan *p, int u, struct ia_sender *arr, uint32_t *cnt)
{
	const struct ia_plan_switch *s = &p->sw[u];

	if (!s->on_path)
		return 0;
	if (s->blue) {
		arr[(*cnt)++] = (struct ia_sender){ ia_switch_id(u), s->nworkers };
		return 0;
	}
	memcpy(arr + *cnt, s->members, s->nmembers * sizeof(*arr));
	*cnt += s->nmembers;
	return 0;
}

int ia_plan_build(const struct ia_topo *t, const uint32_t *load, const bool *blue,
		  struct ia_plan *p)
{
	memset(p, 0, sizeof(*p));
	p->n = t->n;
	p->sw = calloc(t->n, sizeof(*p->sw));
	if (!p->sw)
		goto nomem;
	for (int v = 0; v < t->n; v++) {
		uint32_t l = load ? load[v] : t->sw[v].load;

		if (l > t->sw[v].load) {
			ia_plan_free(p);
			return -ERANGE;
		}
	}

	/* Children before parents: members are what the children send up. */
	for (int h = t->n - 1; h >= 0; h--) {
		int v = t->order[h];
		struct ia_plan_switch *s = &p->sw[v];
		uint32_t l = load ? load[v] : t->sw[v].load, cap = l;

		s->nworkers = l;
		for (int c = t->child_start[v]; c < t->child_start[v + 1]; c++) {
			const struct ia_plan_switch *cs = &p->sw[t->child[c]];

			s->nworkers += cs->nworkers;
			cap += cs->nout;
			s->ndown += cs->on_path;
		}
		s->on_path = s->nworkers > 0;
		if (!s->on_path)
			continue;
		s->blue = blue[v];
		s->members = malloc(cap * sizeof(*s->members));
		s->down = malloc((s->ndown ? s->ndown : 1) * sizeof(int));
		if (!s->members || !s->down)
			goto nomem;
		for (uint32_t j = 0; j < l; j++)
			s->members[s->nmembers++] =
				(struct ia_sender){ ia_worker_id(ia_net_worker_index(t, v, j)), 1 };
		s->ndown = 0;
		for (int c = t->child_start[v]; c < t->child_start[v + 1]; c++) {
			int u = t->child[c];

			add_outgoing(p, u, s->members, &s->nmembers);
			if (p->sw[u].on_path)
				s->down[s->ndown++] = u;
		}
		s->nout = s->blue ? 1 : s->nmembers;
	}
	p->nworkers = p->sw[t->root].nworkers;
	p->dest = malloc((p->sw[t->root].nout ? p->sw[t->root].nout : 1) * sizeof(*p->dest));
	if (!p->dest)
		goto nomem;
	add_outgoing(p, t->root, p->dest, &p->ndest);
	return 0;
nomem:
	ia_plan_free(p);
	return -ENOMEM;
}
