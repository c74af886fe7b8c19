/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Discrete-event simulator of many jobs sharing switch memory and one
 * bottleneck link (issue 12 point 5, docs/cc.md "Simulation"): the window
 * policies are those of cc.h, called exactly as the live worker calls them,
 * and switch memory follows docs/memory.md (INA heads, a shared tail, lent
 * head slots, collisions). Pure computation: no I/O, no clock.
 */
#ifndef INAGG_SIM_H
#define INAGG_SIM_H

#include <stdbool.h>
#include <stdint.h>

#include "cc.h"

/* The schemes of the evaluation (issue 12 point 3). */
enum ia_sim_scheme {
	IA_SIM_NETPACK_ATP,	/* selective INA: PS jobs never use switch memory; atp */
	IA_SIM_NETPACK_A2TP,	/* same memory; a2tp */
	IA_SIM_FLEXINA,		/* head/tail (and lent heads); flexina */
	IA_SIM_HT_ATP,		/* ablation: head/tail with atp windows */
	IA_SIM_FLEXINA_NOTAIL,	/* ablation: flexina windows, PS jobs without tail */
	IA_SIM__COUNT,
};

struct ia_sim_cfg {
	uint32_t jobs;		/* concurrent jobs */
	uint32_t depth;		/* complete binary tree of 2^(depth+1) - 1 switches */
	uint32_t per_leaf;	/* jobs per leaf switch (the first jobs/per_leaf leaves) */
	uint32_t wmin, wmax;	/* workers per job, uniform */
	uint32_t cmin, cmax;	/* chunks per iteration (vector size / 256 elements), uniform */
	uint32_t iters;		/* iterations per job */
	uint32_t window;	/* largest window = an INA job's head, slots */
	double mem;		/* each leaf switch's memory / the heads its jobs would need */
	double rate;		/* bottleneck: messages per second */
	double rtt;		/* base round trip, s */
	double spread;		/* workers' arrival spread at the switch, at most, s */
	double gap;		/* compute time between iterations, at most, s */
	uint32_t thresh;	/* bottleneck marking threshold, messages queued */
	uint32_t buffer;	/* bottleneck buffer, messages (more are dropped) */
	uint64_t seed;
};

struct ia_sim_job {
	uint32_t leaf;		/* switch its workers hang off (where it aggregates) */
	uint32_t workers;
	uint32_t chunks;	/* per iteration */
	int ps;			/* 1: PS job (selective INA found no head) */
	double jct;		/* s */
	double bytes;		/* aggregated payload bytes */
	uint64_t marks, colls, timeouts, msgs;
};

struct ia_sim_res {
	double tput;		/* aggregated payload bytes per second, all jobs (total / makespan) */
	double makespan;	/* s */
	double jct_ina, jct_ps;	/* mean JCT of each class, s */
	double util;		/* slot-time holding chunks / slot-time of all leaf memory */
	double mark_rate;	/* marked results / results */
	double coll_rate;	/* collided PS chunks / PS chunks that tried switch memory */
	double jain;		/* Jain's index over jobs' throughput (bytes / JCT) */
	uint32_t n_ina, n_ps;
	uint64_t events;
};

void ia_sim_defaults(struct ia_sim_cfg *c);
const char *ia_sim_scheme_name(enum ia_sim_scheme s);
int ia_sim_scheme_parse(const char *name, enum ia_sim_scheme *s);
/* A scheme's window policy, for every job of it (the live run and the simulator alike). */
enum ia_cc_policy ia_sim_scheme_policy(enum ia_sim_scheme s);
/* Whether a scheme's PS jobs aggregate in the switches' tails (head/tail). */
bool ia_sim_scheme_tail(enum ia_sim_scheme s);
/*
 * Runs the job mix of cfg (drawn from cfg->seed: the same for every scheme)
 * under scheme s. jobs, if not NULL, gets cfg->jobs entries. 0, -EINVAL for
 * a bad configuration, -ENOMEM.
 */
int ia_sim_run(const struct ia_sim_cfg *cfg, enum ia_sim_scheme s, struct ia_sim_res *res,
	       struct ia_sim_job *jobs);

#endif
