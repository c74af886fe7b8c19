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

/*
 * A switch name: 1 to IA_NAME_MAX of [A-Za-z0-9_.], and not "dest". Names
 * become namespace and file names, so they are checked once, when a
 * topology is finalised, and hold everywhere after.
 */
#define IA_NAME_MAX 64

/*
 * A switch's aggregator memory when the topology does not say: the kernel
 * module's default (INAGG_DEFAULT_MAX_SLOTS), one full window. One slot is
 * one full-size chunk (docs/memory.md); at most INAGG_SLOTS_LIMIT.
 */
#define IA_SLOTS_DEFAULT 4096u
#define IA_SLOTS_MAX (1u << 24)

struct ia_switch {
	char *name;
	int parent;		/* index of the parent, -1 for the root */
	struct ia_ratio rate;	/* uplink rate in messages per unit time */
	uint32_t load;		/* workers attached: L(v) */
	bool available;		/* may aggregate (member of Lambda) */
	uint32_t capacity;	/* concurrent jobs it may aggregate */
	uint32_t slots;		/* aggregator slots (heads plus tail), IA_SLOTS_DEFAULT */
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
	/* Name -> index hash table (open addressing), built with the arrays above. */
	struct ia_name_slot *index;
	uint32_t index_mask;
	struct ia_name_chunk *names;	/* storage of names made by ia_topo_strdup() */
};

/* Empty topology of n switches with default fields; names must be set. */
struct ia_topo *ia_topo_new(int n);
void ia_topo_free(struct ia_topo *t);
/*
 * Checks names (valid, unique), parents, a single root, no cycle; builds the
 * name index and the derived arrays. Names must not change afterwards.
 */
int ia_topo_finalize(struct ia_topo *t, char *err, size_t errlen);
/*
 * Numbers the workers switch by switch in index order (first_worker,
 * netplan.h); finalize does it, call it again after changing loads.
 */
void ia_topo_number_workers(struct ia_topo *t);
/* Builds the name index alone (finalize does it too); checks the names. For parsers. */
int ia_topo_index(struct ia_topo *t, char *err, size_t errlen);
/* 0 if s may name a switch, else -EINVAL with the reason in err. */
int ia_topo_name_check(const char *s, int i, char *err, size_t errlen);

/* Parse a topology from JSON text or a file ("-" is stdin). 0 or -errno. */
int ia_topo_parse(const char *json, struct ia_topo **out, char *err, size_t errlen);
int ia_topo_load(const char *path, struct ia_topo **out, char *err, size_t errlen);
int ia_topo_write_json(const struct ia_topo *t, FILE *f);

/* Index of the switch called name, or -1; O(1) once indexed (linear before). */
int ia_topo_find(const struct ia_topo *t, const char *name);
/* The same for name[0..len), which need not be NUL-terminated. */
int ia_topo_find_n(const struct ia_topo *t, const char *name, size_t len);
/*
 * A copy of s[0..len) kept with the topology and freed with it (no per-name
 * allocation); for a switch name that ia_topo_free() must then not free alone.
 */
char *ia_topo_strdup(struct ia_topo *t, const char *s, size_t len);
/* Position of switch u among its parent's children (its downlink's number), -1 for the root. */
static inline int ia_topo_child_pos(const struct ia_topo *t, int u)
{
	return t->child_pos[u];
}
uint64_t ia_topo_total_load(const struct ia_topo *t);

#endif
