// SPDX-License-Identifier: GPL-2.0
/* Fixed-point encoding of reals for integer aggregation (host_fx.h). */
#include <errno.h>
#include <math.h>

#include "host_fx.h"

int32_t ia_fx_encode(double x, unsigned int frac, bool *saturated)
{
	double s;

	if (saturated)
		*saturated = false;
	if (isnan(x))
		return 0;
	s = round(ldexp(x, frac));
	if (s > INT32_MAX || s < INT32_MIN) {
		if (saturated)
			*saturated = true;
		return s > 0 ? INT32_MAX : INT32_MIN;
	}
	return (int32_t)s;
}

double ia_fx_decode(int32_t s, unsigned int frac)
{
	return ldexp((double)s, -(int)frac);
}

size_t ia_fx_encode_vec(const double *x, int32_t *s, size_t n, unsigned int frac)
{
	size_t i, sat = 0;
	bool b;

	for (i = 0; i < n; i++) {
		s[i] = ia_fx_encode(x[i], frac, &b);
		sat += b;
	}
	return sat;
}

void ia_fx_decode_vec(const int32_t *s, double *x, size_t n, unsigned int frac)
{
	size_t i;

	for (i = 0; i < n; i++)
		x[i] = ia_fx_decode(s[i], frac);
}

int ia_fx_frac_for(double max_abs, uint32_t nworkers)
{
	int f;

	if (!nworkers || isnan(max_abs) || max_abs < 0)
		return -EINVAL;
	/* Rounding adds up to 1/2 per worker: keep N * (max * 2^f + 1/2) < 2^31. */
	for (f = 30; f >= 0; f--)
		if ((double)nworkers * (ldexp(max_abs, f) + 0.5) < 2147483648.0)
			return f;
	return -ERANGE;
}
