/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Exact rational arithmetic of libinagg: rates are parsed from their decimal
 * text into num/den, and congestion values (messages / rate) are compared by
 * cross-multiplication in 128-bit integers, so no rounding ever decides a
 * comparison. The limits below keep every product inside 128 bits.
 */
#ifndef INAGG_RATIO_H
#define INAGG_RATIO_H

#include <stddef.h>
#include <stdint.h>

#define IA_RATE_MAX_DIGITS 9		/* fractional digits of a rate */
#define IA_RATE_MAX 1000000		/* largest rate accepted */
#define IA_LOAD_MAX 2147483647u	/* largest total load of a tree */

/* An exact rational num/den, den > 0, reduced. */
struct ia_ratio {
	uint64_t num;
	uint64_t den;
};

/* Takes a decimal such as "1.5" or "2e-1"; 0, -EINVAL, -ERANGE (too precise or large), -EDOM (< 0). */
int ia_ratio_parse(const char *s, struct ia_ratio *out);
/* Rounded to IA_RATE_MAX_DIGITS decimals, so that it survives a JSON round trip. */
struct ia_ratio ia_ratio_from_double(double v);
/* The double nearest to num/den (correctly rounded). */
double ia_ratio_double(struct ia_ratio r);
/* <0, 0, >0 as a compares to b; exact. */
int ia_ratio_cmp(struct ia_ratio a, struct ia_ratio b);
/* msgs / rate, reduced (0/1 for no messages). */
struct ia_ratio ia_congestion(uint64_t msgs, struct ia_ratio rate);

/* Shortest decimal text of r when it terminates within 12 digits, else %.6g (for people). */
void ia_ratio_format(struct ia_ratio r, char *buf, size_t len);
/* Exact text "num/den", or "num" when den is 1 (for programs). */
void ia_ratio_exact(struct ia_ratio r, char *buf, size_t len);

#endif
