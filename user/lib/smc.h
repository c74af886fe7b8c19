/* SPDX-License-Identifier: GPL-2.0 */
/* Internal to libinagg: shared by place.c and smc.c. */
#ifndef INAGG_SMC_H
#define INAGG_SMC_H

#include "place.h"

uint32_t ia_problem_load(const struct ia_problem *pb, int v);
bool ia_problem_avail(const struct ia_problem *pb, int v);
void ia_subtree_load(const struct ia_problem *pb, uint64_t *sub);

/* SMC into p->blue. naive selects the paper's O(n k^2)-per-check DP. */
int ia_smc(const struct ia_problem *pb, struct ia_placement *p, bool naive);

#endif
