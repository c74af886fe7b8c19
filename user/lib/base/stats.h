/* SPDX-License-Identifier: GPL-2.0 */
/* Small statistics over arrays of doubles, for figures and benchmarks. */
#ifndef INAGG_STATS_H
#define INAGG_STATS_H

/* qsort() order of doubles, ascending. */
int ia_cmp_double(const void *a, const void *b);
/* Median, min and max of v[0..n), n > 0 (v is sorted in place). */
void ia_median_range(double *v, int n, double *med, double *lo, double *hi);
/*
 * The mean of x[0..n), n > 0, and its bootstrap 95 % interval: the 2.5th and
 * 97.5th percentiles of the means of resamples of x with replacement (a fixed
 * seed: the same figures each run).
 */
double ia_boot_mean(const double *x, int n, double *lo, double *hi);

#endif
