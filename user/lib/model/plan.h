/* SPDX-License-Identifier: GPL-2.0 */
/*
 * From a placement to what each switch must do for one job: its role, the
 * senders it accepts per chunk, and where results go back down. A pure
 * function of the topology, the job's workers and the blue set; the daemon
 * turns it into BPF map entries.
 * Sender ids and worker numbers are those of netplan.h.
 */
#ifndef INAGG_PLAN_H
#define INAGG_PLAN_H

#include "netplan.h"
#include "place.h"

struct ia_plan_switch {
	bool on_path;		/* some of the job's workers are in its subtree */
	bool blue;
	uint32_t nmembers;	/* senders arriving per chunk: L(v) + model messages of children */
	struct ia_sender *members;
	uint32_t nworkers;	/* workers in its subtree */
	uint32_t nout;		/* senders leaving by its uplink (model messages) */
	uint32_t ndown;		/* children on the job's path, for results */
	int *down;		/* their switch indexes */
};

struct ia_plan {
	int n;
	struct ia_plan_switch *sw;
	uint32_t nworkers;		/* in the job */
	uint32_t ndest;			/* senders reaching the destination per chunk */
	struct ia_sender *dest;
};

/*
 * load[v] <= topology load: the job uses the first load[v] workers of switch
 * v (NULL: all of them). blue: the placement.
 */
int ia_plan_build(const struct ia_topo *t, const uint32_t *load, const bool *blue,
		  struct ia_plan *out);
void ia_plan_free(struct ia_plan *p);

#endif
