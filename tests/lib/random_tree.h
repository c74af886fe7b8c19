/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Random trees for the placement tests: switch v's parent is drawn among the
 * switches before it, so every tree of n switches rooted at s0 can come out.
 */
#ifndef INAGG_TESTS_RANDOM_TREE_H
#define INAGG_TESTS_RANDOM_TREE_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "err.h"
#include "ratio.h"
#include "topo.h"

/* What a random tree's switches may be. */
struct tree_shape {
	const char *const *rates;	/* a rate drawn from these; NULL: the default */
	int nrates;
	int unloaded;		/* 1 in unloaded switches has no workers (1: none has) */
	int max_load;		/* the others have 0 .. max_load - 1 workers */
	int unavailable;	/* 1 in unavailable switches cannot aggregate (0: all can) */
};

/*
 * A tree of n switches drawn from the generator at *state (ia_splitmix64),
 * finalized; NULL if the topology is refused. The draws per switch, in
 * order: parent, rate, load, availability.
 */
static inline struct ia_topo *random_tree(int n, uint64_t *state, const struct tree_shape *s)
{
	struct ia_topo *t = ia_topo_new(n);
	char name[16];

	for (int v = 0; v < n; v++) {
		struct ia_switch *sw = &t->sw[v];

		snprintf(name, sizeof(name), "s%d", v);
		sw->name = strdup(name);
		sw->parent = v ? (int)(ia_splitmix64(state) % v) : -1;
		if (s->rates)
			ia_ratio_parse(s->rates[ia_splitmix64(state) % s->nrates], &sw->rate);
		sw->load = ia_splitmix64(state) % s->unloaded ?
			   ia_splitmix64(state) % s->max_load : 0;
		if (s->unavailable)
			sw->available = ia_splitmix64(state) % s->unavailable != 0;
	}
	if (ia_topo_finalize(t, NULL, 0)) {
		ia_topo_free(t);
		return NULL;
	}
	return t;
}

#endif
