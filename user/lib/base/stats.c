// SPDX-License-Identifier: GPL-2.0
/* Small statistics over arrays of doubles (stats.h). */
#include <stdint.h>
#include <stdlib.h>

#include "err.h"
#include "stats.h"

int ia_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

void ia_median_range(double *v, int n, double *med, double *lo, double *hi)
{
	qsort(v, n, sizeof(*v), ia_cmp_double);
	*med = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
	*lo = v[0];
	*hi = v[n - 1];
}

/* Rounds resampled for a bootstrap interval (fixed seed: the same figures each run). */
#define BOOT_N		2000

double ia_boot_mean(const double *x, int n, double *lo, double *hi)
{
	double m[BOOT_N];	/* 16 KiB: no state kept between calls */
	uint64_t rng = 0x5eed;
	double mean = 0;

	for (int i = 0; i < n; i++)
		mean += x[i] / n;
	for (int b = 0; b < BOOT_N; b++) {
		m[b] = 0;
		for (int i = 0; i < n; i++)
			m[b] += x[ia_splitmix64(&rng) % n] / n;
	}
	qsort(m, BOOT_N, sizeof(*m), ia_cmp_double);
	*lo = m[BOOT_N * 25 / 1000];
	*hi = m[BOOT_N * 975 / 1000 - 1];
	return mean;
}
