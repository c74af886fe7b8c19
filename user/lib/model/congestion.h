/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The congestion model of the paper: a red switch forwards L(v) plus its
 * children's messages, a blue one sends one message (none when its subtree
 * has no load); link congestion is messages / rate and network congestion
 * the largest link congestion. Below every strategy (place.h) and SMC.
 */
#ifndef INAGG_CONGESTION_H
#define INAGG_CONGESTION_H

#include <stdbool.h>
#include <stdint.h>

#include "ratio.h"
#include "topo.h"

/*
 * One placement problem. load and avail are indexed by switch; NULL means the
 * topology's own load / available fields. base, when set, is link load already
 * carried by earlier workloads: congestion is then (base + messages) / rate
 * (the congestion-aware variant of multi-workload placement).
 *
 * merged, when set, is what a blue switch sends when its subtree sends
 * anything: an application whose merged output is more than one message
 * (word count: the distinct keys of the subtree; docs/apps.md). It must not
 * depend on the colouring below and must never exceed what the switch
 * would send red, merged[v] <= load(v) + sum of merged[c] over its loaded
 * children (ia_place_check() refuses it otherwise); then SMC stays exact.
 * NULL means one message, the paper's model.
 */
struct ia_problem {
	const struct ia_topo *topo;
	const uint32_t *load;
	const bool *avail;
	const uint64_t *base;
	const uint32_t *merged;
	int k;
};

struct ia_placement {
	int n;
	bool *blue;		/* per switch */
	uint64_t *msgs;		/* messages on each switch's uplink */
	int nblue;
	struct ia_ratio congestion;	/* max over links of (base + msgs) / rate */
	int bottleneck;		/* switch whose uplink attains it, -1 if none */
	double solve_seconds;	/* time of the algorithm alone */
	int checks;		/* feasibility checks (SMC variants) */
};

int ia_placement_init(struct ia_placement *p, int n);
void ia_placement_free(struct ia_placement *p);

/* Fills msgs, nblue, congestion and bottleneck from p->blue. */
void ia_model_eval(const struct ia_problem *pb, struct ia_placement *p);

uint32_t ia_problem_load(const struct ia_problem *pb, int v);
bool ia_problem_avail(const struct ia_problem *pb, int v);
/* Messages blue switch v sends when its subtree sends anything (ia_problem.merged). */
static inline uint32_t ia_problem_merged(const struct ia_problem *pb, int v)
{
	return pb->merged ? pb->merged[v] : 1;
}
void ia_subtree_load(const struct ia_problem *pb, uint64_t *sub);

#endif
