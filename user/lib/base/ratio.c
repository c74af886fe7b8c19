// SPDX-License-Identifier: GPL-2.0
/* Exact rationals: parsing, comparison, conversion; see ratio.h. */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "ratio.h"

static uint64_t gcd64(uint64_t a, uint64_t b)
{
	while (b) {
		uint64_t t = a % b;

		a = b;
		b = t;
	}
	return a;
}

static struct ia_ratio ratio_reduce(uint64_t num, uint64_t den)
{
	uint64_t g = gcd64(num, den);

	if (!num)
		return (struct ia_ratio){ 0, 1 };
	if (g > 1) {
		num /= g;
		den /= g;
	}
	return (struct ia_ratio){ num, den };
}

/*
 * Exact parse of a JSON number's text. Accepts "12", "1.5", "2.5e-1"; the
 * value must have at most IA_RATE_MAX_DIGITS fractional digits so that every
 * congestion comparison stays exact in 128-bit arithmetic.
 */
int ia_ratio_parse(const char *s, struct ia_ratio *out)
{
	uint64_t num = 0, den = 1;
	int frac = 0, digits = 0, exp = 0;
	bool neg = false, dot = false;
	const char *p = s;

	if (*p == '-' || *p == '+')
		neg = *p++ == '-';
	for (; *p; p++) {
		if (*p == '.' && !dot) {
			dot = true;
			continue;
		}
		if (*p < '0' || *p > '9')
			break;
		if (num > (UINT64_MAX - 9) / 10)
			return -ERANGE;
		num = num * 10 + (*p - '0');
		digits++;
		if (dot)
			frac++;
	}
	if (!digits)
		return -EINVAL;
	if (*p == 'e' || *p == 'E') {
		char *end;
		long e = strtol(p + 1, &end, 10);

		if (end == p + 1 || *end || e < -30 || e > 30)
			return -EINVAL;
		exp = (int)e;
		p = end;
	}
	if (*p)
		return -EINVAL;
	frac -= exp;
	/* Drop trailing zeros of the fraction before checking the digit limit. */
	while (frac > 0 && num % 10 == 0 && num) {
		num /= 10;
		frac--;
	}
	if (num == 0)
		frac = 0;
	if (frac > IA_RATE_MAX_DIGITS)
		return -ERANGE;
	for (; frac > 0; frac--)
		den *= 10;
	for (; frac < 0; frac++) {
		if (num > UINT64_MAX / 10)
			return -ERANGE;
		num *= 10;
	}
	if (neg && num)
		return -EDOM;
	*out = ratio_reduce(num, den);
	return 0;
}

struct ia_ratio ia_ratio_from_double(double v)
{
	const uint64_t den = 1000000000ull;

	return ratio_reduce((uint64_t)llround(v * (double)den), den);
}

static int bits64(uint64_t x)
{
	return x ? 64 - __builtin_clzll(x) : 0;
}

/*
 * num/den rounded once: a quotient of 55 or 56 bits plus a sticky bit for
 * the remainder rounds to 53 bits exactly as the true value would, where
 * (double)num / (double)den would round up to three times.
 */
double ia_ratio_double(struct ia_ratio r)
{
	const uint64_t exact = 1ull << 53;
	unsigned __int128 n = r.num, d = r.den;
	uint64_t q;
	int s;

	if (!r.num || !r.den)
		return r.num ? INFINITY : 0.0;
	if (r.num <= exact && r.den <= exact)
		return (double)r.num / (double)r.den;	/* IEEE division rounds once */
	s = 55 + bits64(r.den) - bits64(r.num);	/* value * 2^s has 55 or 56 bits */
	if (s >= 0)
		n <<= s;
	else
		d <<= -s;
	q = (uint64_t)(n / d);
	q |= n % d != 0;	/* sticky: below the rounding position */
	return ldexp((double)q, -s);
}

int ia_ratio_cmp(struct ia_ratio a, struct ia_ratio b)
{
	unsigned __int128 l = (unsigned __int128)a.num * b.den;
	unsigned __int128 r = (unsigned __int128)b.num * a.den;

	return l < r ? -1 : l > r;
}

struct ia_ratio ia_congestion(uint64_t msgs, struct ia_ratio rate)
{
	/* msgs / (num / den) = msgs * den / num; ratio.h's limits keep it in 64 bits. */
	return ratio_reduce(msgs * rate.den, rate.num);
}

void ia_ratio_format(struct ia_ratio r, char *buf, size_t len)
{
	uint64_t den = r.den, twos = 0, fives = 0, digits, scale = 1;
	unsigned __int128 scaled;
	uint64_t ip, fp;

	while (den % 2 == 0) {
		den /= 2;
		twos++;
	}
	while (den % 5 == 0) {
		den /= 5;
		fives++;
	}
	digits = twos > fives ? twos : fives;
	if (den != 1 || digits > 12) {
		snprintf(buf, len, "%.6g", ia_ratio_double(r));
		return;
	}
	/* Terminating decimal: print it exactly, without trailing zeros. */
	for (uint64_t i = 0; i < digits; i++)
		scale *= 10;
	scaled = (unsigned __int128)r.num * (scale / r.den);
	ip = (uint64_t)(scaled / scale);
	fp = (uint64_t)(scaled % scale);
	if (!digits)
		snprintf(buf, len, "%llu", (unsigned long long)ip);
	else
		snprintf(buf, len, "%llu.%0*llu", (unsigned long long)ip, (int)digits,
			 (unsigned long long)fp);
}

void ia_ratio_exact(struct ia_ratio r, char *buf, size_t len)
{
	if (r.den == 1)
		snprintf(buf, len, "%llu", (unsigned long long)r.num);
	else
		snprintf(buf, len, "%llu/%llu", (unsigned long long)r.num,
			 (unsigned long long)r.den);
}
