/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Topology model of libinagg: a tree of switches whose root's uplink leads to
 * the destination. Rates are kept as exact rationals so that congestion values
 * (messages / rate) compare exactly.
 */
#ifndef INAGG_TOPO_H
#define INAGG_TOPO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "err.h"
#include "ratio.h"

struct ia_switch {
	char *name;
	int parent;		/* index of the parent, -1 for the root */
	struct ia_ratio rate;	/* uplink rate in messages per unit time */
	uint32_t load;		/* workers attached: L(v) */
	bool available;		/* may aggregate (member of Lambda) */
	uint32_t capacity;	/* concurrent jobs it may aggregate */
};

struct ia_topo {
	int n;
	struct ia_switch *sw;
	/* Derived by ia_topo_finalize(). */
	int root;
	int *child_start;	/* children of v: child[child_start[v] .. child_start[v + 1]) */
	int *child;
	int *order;		/* BFS order from the root: parents before children */
	int *depth;		/* root has depth 0 */
	int *child_pos;		/* position of v among its parent's children, -1 for the root */
	int *first_worker;	/* global number of v's first worker (netplan.h); [n] = all */
	int height;		/* largest depth */
};

/* Empty topology of n switches with default fields; names must be set. */
struct ia_topo *ia_topo_new(int n);
void ia_topo_free(struct ia_topo *t);
/* Checks names, parents, a single root, no cycle; builds the derived arrays. */
int ia_topo_finalize(struct ia_topo *t, char *err, size_t errlen);

/* Parse a topology from JSON text or a file ("-" is stdin). 0 or -errno. */
int ia_topo_parse(const char *json, struct ia_topo **out, char *err, size_t errlen);
int ia_topo_load(const char *path, struct ia_topo **out, char *err, size_t errlen);
int ia_topo_write_json(const struct ia_topo *t, FILE *f);

int ia_topo_find(const struct ia_topo *t, const char *name);
/* Position of switch u among its parent's children (its downlink's number), -1 for the root. */
static inline int ia_topo_child_pos(const struct ia_topo *t, int u)
{
	return t->child_pos[u];
}
uint64_t ia_topo_total_load(const struct ia_topo *t);

#endif
