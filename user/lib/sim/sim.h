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
	IA_SIM_NETPACK_A2TP,	/* same memory, INA jobs share it (sim); a2tp */
	IA_SIM_FLEXINA,		/* head/tail (and lent heads); flexina */
	IA_SIM_HT_ATP,		/* ablation: head/tail with atp windows */
	IA_SIM_FLEXINA_NOTAIL,	/* ablation: flexina windows, PS jobs without tail */
	IA_SIM__COUNT,
};

#define IA_SIM_MAX_W	64	/* workers per job (a PS job's member sets are 64 bits) */

/* One job of a given mix (the live experiment's, ia_live_mix()). */
struct ia_sim_mixjob {
	uint32_t leaf, workers, chunks;
	bool ps;			/* asked to be a PS job (never given a head) */
	double gap[IA_SIM_MAX_W];	/* each worker's compute time before every iteration, s */
};

struct ia_sim_cfg {
	uint32_t jobs;		/* concurrent jobs */
	uint32_t depth;		/* complete binary tree of 2^(depth+1) - 1 switches */
	uint32_t per_leaf;	/* jobs per leaf switch (the first jobs/per_leaf leaves) */
	uint32_t wmin, wmax;	/* workers per job, uniform */
	uint32_t cmin, cmax;	/* chunks per iteration (vector size / 256 elements), uniform */
	uint32_t iters;		/* iterations per job */
	uint32_t window;	/* an INA job's head, slots; workers keep window / 2 in flight */
	double mem;		/* each leaf switch's memory / the heads its jobs would need */
	double rate;		/* bottleneck: messages per second */
	double rtt;		/* base round trip, s */
	double spread;		/* workers' arrival spread at the switch, at most, s */
	double gap;		/* compute time between iterations, at most, s */
	uint32_t thresh;	/* bottleneck marking threshold, messages queued */
	uint32_t buffer;	/* bottleneck buffer, messages (more are dropped) */
	double rto;		/* workers' resend timer, s; 0: 2 (rtt + spread + buffer / rate) */
	double tail_age;	/* an older tail holder is flushed by a claim, s (0: 1 ms) */
	double lend_period;	/* the daemon's samples of the heads, s; 0: 0.1 s */
	uint32_t lend_hold;	/* samples before a lend; 0: IA_LEND_HOLD_DEFAULT */
	uint32_t lent_start;	/* head slots each INA job lends at its start (while set up) */
	double wake;		/* a worker takes results in this long after the first, s */
	double noroom;		/* share of flushes whose frame cannot carry them: dropped */
	uint64_t seed;
	/* The jobs (cfg->jobs of them, leaves below 2^depth), all starting at 0; NULL: drawn. */
	const struct ia_sim_mixjob *mix;
	/*
	 * A cluster (spines > 0, docs/cc.md "Cluster simulation"; depth and
	 * per_leaf then unused): `leaves` leaves under `spines` spines, each
	 * switch's uplink a FIFO (leaves' of leaf_rate, spines' of rate: one
	 * bottleneck per spine), jobs arriving as a Poisson process of mean gap
	 * `arrival`, each a model's gradient (ia_sim_models) over ceil(workers /
	 * hosts) consecutive leaves of one spine, aggregated at its leaves and,
	 * spanning several, at its spine; heads given at arrival by
	 * availability and freed at the end. Leaves have leaf_slots, spines
	 * spine_slots; a job runs imin..imax iterations (iters unused).
	 */
	uint32_t spines, leaves, hosts, leaf_slots, spine_slots, imin, imax;
	double leaf_rate, arrival;
	uint32_t scale;		/* a model's parameters / scale = elements per iteration */
};

/* The models a cluster job trains: its gradient is this many parameters. */
struct ia_sim_model {
	const char *name;
	double params;
};

#define IA_SIM_MODELS	4
extern const struct ia_sim_model ia_sim_models[IA_SIM_MODELS];

struct ia_sim_job {
	uint32_t leaf;		/* switch its workers hang off (where it aggregates) */
	uint32_t workers;
	uint32_t chunks;	/* per iteration */
	int ps;			/* 1: PS job (selective INA found no head) */
	double jct;		/* s */
	double bytes;		/* aggregated payload bytes */
	uint64_t marks, colls, timeouts, msgs;
	uint64_t racks;		/* chunks resent because a later one's result came (RACK) */
	/* A cluster's: first of its nleaves leaves, model, iterations, arrival (s, JCT's start). */
	uint32_t nleaves, model, iters;
	double arrival;
	int promoted;		/* a PS job given a head when memory freed (cluster) */
};

struct ia_sim_res {
	double tput;		/* aggregated payload bytes per second, all jobs (total / makespan) */
	/* the same while every job contends: bytes up to the first job's end / that time */
	double tput_all;
	double sum;		/* sum over jobs of bytes / JCT (JCT-weighted, secondary) */
	double makespan;	/* s */
	double jct_ina, jct_ps;	/* mean JCT of each class, s */
	double util;		/* slot-time holding partials / slot-time of all leaf memory */
	double mark_rate;	/* marked results / results */
	/* PS jobs' first sends that met a taken tail slot / those that tried one */
	double coll_rate;
	double up;		/* messages the PSs merged per chunk (1: all aggregated) */
	double waste;		/* messages the PSs got in vain per chunk */
	double flushes;		/* PS partials sent up unfinished per PS chunk */
	double discards;	/* PS partials dropped (no room to carry them) per PS chunk */
	double retx_rate;	/* chunks resent (timer or RACK) per result; every worker resends */
	double tmo_rate;	/* of them by timer */
	double first;		/* s from a job's start to its first result, mean over jobs */
	double jain;		/* Jain's index over jobs' throughput (bytes / JCT) */
	uint32_t n_ina, n_ps;
	/*
	 * Leaf slots no job of the scheme can ever use: not in a head and, for a
	 * scheme without tails, all of them; with tails, those of leaves without
	 * PS jobs. Out of `slots`, all leaves' memory.
	 */
	uint32_t idle, slots;
	uint64_t events;
	/*
	 * A cluster's: mean JCT per model, slot-time no job could use but
	 * one could (free slots while a running PS job fits a head on all
	 * its switches: 0 when selective INA keeps up), slot-time in no head
	 * (fraction), and the most any switch's heads held of its slots.
	 */
	double jct_model[IA_SIM_MODELS];
	uint32_t n_model[IA_SIM_MODELS];
	double jct_mean, idle_time, free_frac, mem_peak;
};

void ia_sim_defaults(struct ia_sim_cfg *c);
/* The cluster of docs/cc.md: 32 leaves, 4 spines, 200 jobs, Poisson arrivals. */
void ia_sim_cluster_defaults(struct ia_sim_cfg *c);
const char *ia_sim_scheme_name(enum ia_sim_scheme s);
int ia_sim_scheme_parse(const char *name, enum ia_sim_scheme *s);
/* A scheme's window policy, for every job of it (the live run and the simulator alike). */
enum ia_cc_policy ia_sim_scheme_policy(enum ia_sim_scheme s);
/* Whether a scheme's PS jobs aggregate in the switches' tails (head/tail). */
bool ia_sim_scheme_tail(enum ia_sim_scheme s);
/*
 * Whether a scheme's INA jobs share their leaf's memory as one hashed pool,
 * as A2TP's (and ATP's) jobs share aggregators, instead of private heads:
 * netpack-a2tp in the simulator, so that its aggregator window meets the
 * collisions A2TP reacts to.
 */
bool ia_sim_scheme_shared(enum ia_sim_scheme s);
/*
 * Runs the job mix of cfg (drawn from cfg->seed: the same for every scheme)
 * under scheme s. jobs, if not NULL, gets cfg->jobs entries. 0, -EINVAL for
 * a bad configuration, -ENOMEM.
 */
int ia_sim_run(const struct ia_sim_cfg *cfg, enum ia_sim_scheme s, struct ia_sim_res *res,
	       struct ia_sim_job *jobs);

#endif
