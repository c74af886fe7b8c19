/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Internal to libinagg: SMC, and its state shared by its search (smc.c)
 * and its tree DP (smc_dp.c). It sees the congestion model, not the
 * strategies of place.h that call it.
 */
#ifndef INAGG_SMC_H
#define INAGG_SMC_H

#include "congestion.h"

/* SMC into p->blue. naive selects the paper's O(n k^2)-per-check DP. */
int ia_smc(const struct ia_problem *pb, struct ia_placement *p, bool naive);

#define IA_SMC_INF UINT32_MAX

/* beta_v: infinite below lo, stored over [lo, lo + len), constant after. */
struct ia_smc_tab {
	int lo;
	int len;
	size_t off;	/* into the pool */
};

struct ia_smc_buf {
	uint32_t *v;
	size_t len, cap;
};

struct ia_smc {
	const struct ia_problem *pb;
	const struct ia_topo *t;
	int n, k;
	bool naive;
	uint64_t *sub;		/* subtree load */
	double *rate;
	int64_t *cap;		/* message budget of each uplink for the bound checked */
	int64_t *prev_cap;	/* the budgets the current tables were computed for */
	bool have_tabs;		/* tab[] holds every switch's table for prev_cap */
	size_t full_pool;	/* pool size of the last full computation */
	/*
	 * Switches whose budget may still move within the search's bracket;
	 * the others are settled (saturated or infeasible for good) and those
	 * settled since the last check wait in pend[] to be compared once.
	 */
	int *act, nact;
	int *pend, npend;
	bool *queued;		/* in the heap of switches to recompute */
	int *heap, nheap;	/* deepest first */
	struct ia_smc_tab *tab;
	int *need;		/* blue switches v needs to be blue; INT_MAX if it cannot */
	int *budget;		/* colouring: blue switches allowed in v's subtree */
	int *stack;		/* colouring: switches with budget left to hand down */
	int *blue_list, nblue;	/* the blue set of the last colouring */
	struct ia_smc_buf pool;	/* every beta table */
	struct ia_smc_buf acc[2];	/* merge accumulators */
	struct ia_smc_buf prefix;	/* colouring: prefix merges of one switch's children */
	struct ia_smc_tab *ptab;
	int checks;
};

int ia_smc_buf_reserve(struct ia_smc_buf *b, size_t extra);
/*
 * One feasibility check for the budgets in s->cap: every table the first
 * time (and when stale tables outweigh live ones), else only the switches
 * among act[] and pend[] whose budget moved and, while tables change, their
 * ancestors. 0 or -ENOMEM.
 */
int ia_smc_gather(struct ia_smc *s, bool *feasible);
/* After a feasible check: the blue set into blue[] (cleared first) and blue_list. */
int ia_smc_colour(struct ia_smc *s, bool *blue);

#endif
