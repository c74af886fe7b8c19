// SPDX-License-Identifier: GPL-2.0
/* Small statistics over arrays of doubles (stats.h). */
#include <stdlib.h>

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
