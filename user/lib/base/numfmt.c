// SPDX-License-Identifier: GPL-2.0
/* Shortest round-trip decimal form of doubles; see numfmt.h. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "numfmt.h"

/*
 * The shortest digits: 17 significant digits always read back; if 15 do,
 * they are already the shortest once trailing zeros go (any shorter form,
 * padded, is within half an ulp of v, far inside the 15-digit rounding).
 * Subnormals carry fewer bits: they try every length.
 */
static int shortest_digits(double v, char *digits, int *exp10)
{
	char buf[40], *e, *q = digits;
	int p;

	for (p = v < DBL_MIN ? 1 : 15; p < 17; p++) {
		snprintf(buf, sizeof(buf), "%.*e", p - 1, v);
		if (strtod(buf, NULL) == v)
			break;
	}
	if (p == 17)
		snprintf(buf, sizeof(buf), "%.16e", v);
	/* buf: [-]d.ddde[+-]xx */
	e = strchr(buf, 'e');
	*exp10 = atoi(e + 1);
	for (const char *s = buf; s < e; s++)
		if (*s >= '0' && *s <= '9')
			*q++ = *s;
	while (q > digits + 1 && q[-1] == '0')
		q--;
	*q = '\0';
	return (int)(q - digits);
}

char *ia_fmt_double(double v, char buf[IA_NUMFMT_LEN])
{
	char digits[24], *w = buf;
	int n, e;

	if (isnan(v))
		return strcpy(buf, "nan");
	if (isinf(v))
		return strcpy(buf, v < 0 ? "-inf" : "inf");
	if (signbit(v))
		*w++ = '-';
	if (v == 0)
		return strcpy(w, "0.0"), buf;
	n = shortest_digits(fabs(v), digits, &e);
	if (e < -4 || e >= 16) {
		/* Scientific, as repr: 1e+16, 1.5e-07. */
		*w++ = digits[0];
		if (n > 1) {
			*w++ = '.';
			memcpy(w, digits + 1, n - 1);
			w += n - 1;
		}
		sprintf(w, "e%c%02d", e < 0 ? '-' : '+', abs(e));
		return buf;
	}
	if (e < 0) {
		/* 0.000ddd */
		w += sprintf(w, "0.");
		for (int i = -1; i > e; i--)
			*w++ = '0';
		memcpy(w, digits, n);
		w[n] = '\0';
		return buf;
	}
	/* ddd.ddd, at least one digit after the point. */
	for (int i = 0; i <= e; i++)
		*w++ = i < n ? digits[i] : '0';
	*w++ = '.';
	if (n > e + 1) {
		memcpy(w, digits + e + 1, n - e - 1);
		w += n - e - 1;
	} else {
		*w++ = '0';
	}
	*w = '\0';
	return buf;
}

char *ia_fmt_ratio(struct ia_ratio r, char buf[IA_NUMFMT_LEN])
{
	return ia_fmt_double(ia_ratio_double(r), buf);
}
