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
	struct ia_live_keep keep;	/* live: runs other work slowed, run again */
	bool sim, quick, no_congestion, compare;
	double mem;		/* 0: the sweep */
	const char *mix;	/* live: "1:1", "1:3", "all" (NULL: the sweep) */
	double cross;		/* live: < 0: the sweep (none and 0.3) */
	const char *plot;	/* live: folder for the PNGs */
	int rounds;
	int live_jobs, live_iters, live_window;
};

/* One point of the live run: a network and a requested mix. */
struct point {
	double mem, cross, rate;
	uint32_t ps_per_ina;	/* 0: every job asks for a head */
	const char *mix;
};

/* Median, min and max of v[0..n) (sorted in place). */
void tenants_stats(double *v, int n, double *med, double *lo, double *hi);
/* The mean of x[0..n) and its bootstrap 95 % interval over the n values (rounds). */
double tenants_boot(const double *x, int n, double *lo, double *hi);
int tenants_live(struct tenants_args *a, const char *argv0);
/* cmd_eval_tenants_plot.c: sum[point][scheme][tput, PS JCT, sum][median, low, high]. */
int tenants_write_plot(const char *dir, const struct point *p, int np,
		       double (*sum)[IA_SIM__COUNT][3][3]);

#endif
