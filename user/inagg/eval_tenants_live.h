/* SPDX-License-Identifier: GPL-2.0 */
/*
 * inagg eval tenants (live): the figures of one point, shared by the run
 * (cmd_eval_tenants_live.c) and its table (cmd_eval_tenants_table.c).
 */
#ifndef INAGG_CLI_EVAL_TENANTS_LIVE_H
#define INAGG_CLI_EVAL_TENANTS_LIVE_H

#include "eval_tenants.h"

/*
 * Three throughputs, each with its ratios to the baselines of the same round:
 * over the makespan (tput), while every job runs (all: up to the first job's
 * end) and the sum of the jobs' own (sum: bytes / JCT). docs/cc-live.md says
 * which the acceptance reads and why.
 */
enum { M_TPUT, M_RATIO, M_RATIO2, M_TALL, M_RALL, M_RALL2, M_TSUM, M_RSUM, M_RSUM2, M_JCT_INA,
       M_JCT_PS, M_UTIL, M_MARK, M_COLL, M_JAIN, M_LENDS, M_LENT, M_UP, M_BYPASS, M_RETX, M_TMO,
       M_WASTE, M_SRTT, M_OTHER, M_REPORTS, M_FIRST, M_LENT0, M_BATCH, M_FLUSH,
       M_DISCARD, M__N };

/* JSON keys; the text table's format of each figure (NULL: JSON only). */
extern const char *const m_key[M__N];
extern const char *const m_fmt[M__N];

/* One point's figures: [scheme][metric][round], per job [scheme][job][round]. */
struct figs {
	double v[IA_SIM__COUNT][M__N][TENANTS_MAX_ROUNDS];
	double jt[IA_SIM__COUNT][IA_LIVE_MAX_JOBS][TENANTS_MAX_ROUNDS];
	double jj[IA_SIM__COUNT][IA_LIVE_MAX_JOBS][TENANTS_MAX_ROUNDS];
	int exact[IA_SIM__COUNT];
	/* Runs more because other work took over --max-other; kept runs still over it. */
	uint32_t rep[IA_SIM__COUNT][TENANTS_MAX_ROUNDS];
	int over[IA_SIM__COUNT];
	struct ia_live_res last;
	struct ia_live_job first_bad;
	int nbad;
};

/* The median of n rounds' figures. */
double live_median(const double *v, int n);
/* Point p's table, in text or JSON (its ratios, intervals, idle slots and repeats). */
void print_point(const struct tenants_args *a, const struct point *p, struct figs *f);

#endif
