/* SPDX-License-Identifier: GPL-2.0 */
/* inagg eval tenants: its arguments, shared by the simulated (cmd_eval_tenants.c) and live runs. */
#ifndef INAGG_CLI_EVAL_TENANTS_H
#define INAGG_CLI_EVAL_TENANTS_H

#include <stdbool.h>

#include "eval_live.h"
#include "sim.h"

#define TENANTS_MAX_ROUNDS	64

struct tenants_args {
	struct ia_sim_cfg c;
	struct ia_live_cfg lc;
	bool sim, quick, no_congestion, compare;
	double mem;		/* 0: the sweep */
	const char *mix;	/* live: "1:1", "1:3", "all" (NULL: the sweep) */
	double cross;		/* live: < 0: the sweep (none and 0.3) */
	const char *plot;	/* live: folder for the PNGs */
	int rounds;
	int live_jobs, live_iters, live_window;
};

/* Median, min and max of v[0..n) (sorted in place). */
void tenants_stats(double *v, int n, double *med, double *lo, double *hi);
int tenants_live(struct tenants_args *a, const char *argv0);

#endif
