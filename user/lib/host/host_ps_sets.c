// SPDX-License-Identifier: GPL-2.0
/*
 * The pieces a PS job's open chunk merged, kept so that a later piece
 * overlapping them can still be merged (docs/memory.md, "Tail aggregation
 * and exactly-once"). A tail switch flushes a partial of the members it
 * holds; when the PS already merged one of them raw (its retransmission,
 * which never aggregates), the partial overlaps. If every piece merged so
 * far lies wholly inside or wholly outside the partial, subtracting the ones
 * inside leaves exactly the sum of its new members: sums are modulo 2^32, so
 * the subtraction is exact. Dropped whole, its other members' contributions
 * wait for their own timers.
 */
#include <errno.h>
#include <stdlib.h>

#include "host_ps_int.h"

struct ps_pieces {
	uint32_t n, cap;
	uint64_t *set;
	int32_t *v;		/* n pieces of the chunk's nelem values */
};

int ia_ps_pieces_keep(struct pchunk *c, uint64_t set, const int32_t *v, uint32_t nelem)
{
	struct ps_pieces *p = c->pieces;
	uint32_t e;

	if (!p) {
		p = calloc(1, sizeof(*p));
		if (!p)
			return -ENOMEM;
		c->pieces = p;
	}
	if (p->n == p->cap) {
		uint32_t cap = p->cap ? 2 * p->cap : 4;
		uint64_t *s = realloc(p->set, cap * sizeof(*s));
		int32_t *w;

		if (!s)
			return -ENOMEM;
		p->set = s;
		w = realloc(p->v, (size_t)cap * nelem * sizeof(*w));
		if (!w)
			return -ENOMEM;
		p->v = w;
		p->cap = cap;
	}
	p->set[p->n] = set;
	for (e = 0; e < nelem; e++)
		p->v[(size_t)p->n * nelem + e] = v[e];
	p->n++;
	return 0;
}

bool ia_ps_pieces_split(const struct pchunk *c, uint64_t *set, int32_t *v, uint32_t nelem)
{
	const struct ps_pieces *p = c->pieces;
	uint32_t i, e;

	if (!p)
		return false;
	for (i = 0; i < p->n; i++)
		if ((p->set[i] & *set) && (p->set[i] & ~*set))
			return false;
	for (i = 0; i < p->n; i++)
		if (p->set[i] & *set)
			for (e = 0; e < nelem; e++)
				v[e] = (int32_t)((uint32_t)v[e] -
						 (uint32_t)p->v[(size_t)i * nelem + e]);
	*set &= ~c->uset;
	return true;
}

void ia_ps_pieces_free(struct pchunk *c)
{
	if (!c->pieces)
		return;
	free(c->pieces->set);
	free(c->pieces->v);
	free(c->pieces);
	c->pieces = NULL;
}
