/* SPDX-License-Identifier: GPL-2.0 */
/* inagg eval tenants: its arguments, shared by the simulated (cmd_eval_tenants.c) and live runs. */
#ifndef INAGG_CLI_EVAL_TENANTS_H
#define INAGG_CLI_EVAL_TENANTS_H

#include <stdbool.h>

#include "eval_live.h"
#include "sim.h"
#include "stats.h"

#define TENANTS_MAX_ROUNDS	64

struct tenants_args {
	struct ia_sim_cfg c;
	struct ia_live_cfg lc;
	struct ia_live_keep keep;	/* live: runs other work slowed, run again */
	bool sim, quick, no_congestion, compare;
	double mem;		/* 0: the sweep */
	const char *mix;	/* live: "1:1", "1:3", "all" (NULL: the sweep) */
	double cross;		/* live: < 0: the sweep (none and 0.3) */
	const char *plot;	/* live: folder for the PNGs */
	int rounds;
	int live_jobs, live_iters, live_window;
	bool cluster;		/* sim: the cluster of docs/cc.md (cmd_eval_cluster.c) */
	double arrival_ms;	/* sim, cluster: mean gap between arrivals; 0: the default */
	const char *cdf;	/* sim, cluster: every job's JCT per scheme, to plot */
};

/* One point of the live run: a network and a requested mix. */
struct point {
	double mem, cross, rate;
	uint32_t ps_per_ina;	/* 0: every job asks for a head */
	const char *mix;
};

int tenants_live(struct tenants_args *a, const char *argv0);
/*
 * cmd_eval_cluster.c: the cluster simulation on cfg (ia_sim_cluster_defaults()
 * with the options given) at a->mem (0: 0.25 and 0.5), a->rounds seeds.
 */
int tenants_cluster(const struct tenants_args *a, struct ia_sim_cfg *cfg, const char *argv0);
/* cmd_eval_tenants_plot.c: sum[point][scheme][tput, PS JCT, sum][median, low, high]. */
int tenants_write_plot(const char *dir, const struct point *p, int np,
		       double (*sum)[IA_SIM__COUNT][3][3]);

#endif
