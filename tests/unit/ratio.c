// SPDX-License-Identifier: GPL-2.0
/* Exact rationals: conversion to double is correctly rounded, texts are exact. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kselftest_harness.h"
#include "err.h"
#include "numfmt.h"
#include "ratio.h"

static uint64_t seed = 5;

/*
 * num/den as exact decimal digits (1100 places cover every midpoint between
 * doubles of this range) and a sticky 1 if it goes on: strtod() of that text
 * is the correctly rounded double, independently of the code under test.
 */
static double reference(uint64_t num, uint64_t den)
{
	static char text[1200];
	unsigned __int128 rem = num % den;
	int len = snprintf(text, sizeof(text), "%llu.", (unsigned long long)(num / den));

	for (int i = 0; i < 1100 && rem; i++) {
		rem *= 10;
		text[len++] = '0' + (int)(rem / den);
		rem %= den;
	}
	if (rem)
		text[len++] = '1';
	text[len] = '\0';
	return strtod(text, NULL);
}

TEST(double_is_correctly_rounded)
{
	for (int i = 0; i < 100000; i++) {
		int nb = 1 + ia_splitmix64(&seed) % 64, db = 1 + ia_splitmix64(&seed) % 64;
		uint64_t num = ia_splitmix64(&seed) >> (64 - nb);
		uint64_t den = ia_splitmix64(&seed) >> (64 - db);
		double got, want;

		if (!den)
			den = 1;
		got = ia_ratio_double((struct ia_ratio){ num, den });
		want = reference(num, den);
		ASSERT_EQ(0, memcmp(&got, &want, sizeof(got)))
			TH_LOG("%llu/%llu: %.17g, want %.17g", (unsigned long long)num,
			       (unsigned long long)den, got, want);
	}
}

/* Cases where dividing the two rounded doubles gives the wrong last bit. */
TEST(double_of_large_terms)
{
	struct ia_ratio r = { (1ull << 62) + 1, (1ull << 62) - 1 };
	double want = reference(r.num, r.den);

	EXPECT_EQ(want, ia_ratio_double(r));
	EXPECT_EQ(1.0, ia_ratio_double((struct ia_ratio){ UINT64_MAX, UINT64_MAX }));
	EXPECT_EQ(0.0, ia_ratio_double((struct ia_ratio){ 0, 7 }));
}

TEST(exact_text)
{
	char buf[64];

	ia_ratio_exact(ia_congestion(200, (struct ia_ratio){ 9, 1 }), buf, sizeof(buf));
	EXPECT_STREQ("200/9", buf);
	ia_ratio_exact(ia_congestion(6, (struct ia_ratio){ 3, 2 }), buf, sizeof(buf));
	EXPECT_STREQ("4", buf);
	ia_ratio_exact(ia_congestion(0, (struct ia_ratio){ 3, 2 }), buf, sizeof(buf));
	EXPECT_STREQ("0", buf);
	ia_ratio_format((struct ia_ratio){ 200, 9 }, buf, sizeof(buf));
	EXPECT_STREQ("22.2222", buf);	/* for people; programs get the exact text */
}

/* Python's repr of the same doubles. */
TEST(shortest_form_like_repr)
{
	static const struct {
		double v;
		const char *want;
	} cases[] = {
		{ 200.0 / 9, "22.22222222222222" }, { 6.6, "6.6" }, { 5.0, "5.0" }, { 0.0, "0.0" },
		{ -0.0, "-0.0" }, { 0.1, "0.1" }, { 1e16, "1e+16" }, { 1e22, "1e+22" },
		{ 1234567890123456.0, "1234567890123456.0" }, { 123456789012345680.0, "1.2345678901234568e+17" },
		{ 1e-05, "1e-05" }, { 0.0001, "0.0001" }, { 1.5e-07, "1.5e-07" }, { 0.3, "0.3" },
		{ 0.1 + 0.2, "0.30000000000000004" }, { 1.0 / 3, "0.3333333333333333" },
		{ 2.0 / 3, "0.6666666666666666" }, { 1e15, "1000000000000000.0" }, { 123.456, "123.456" },
		{ 5e-324, "5e-324" }, { 1.7976931348623157e308, "1.7976931348623157e+308" },
		{ -2.5, "-2.5" }, { 2.2250738585072014e-308, "2.2250738585072014e-308" },
	};
	char buf[IA_NUMFMT_LEN];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		EXPECT_STREQ(cases[i].want, ia_fmt_double(cases[i].v, buf));
}

/* Every output reads back bit for bit, and one digit fewer would not. */
TEST(shortest_form_round_trips_and_is_minimal)
{
	char buf[IA_NUMFMT_LEN], shorter[40];

	for (int i = 0; i < 200000; i++) {
		uint64_t bits = ia_splitmix64(&seed);
		double v, back;
		int digits = 0;
		char *e;

		memcpy(&v, &bits, sizeof(v));
		if (!isfinite(v))
			continue;
		ia_fmt_double(v, buf);
		back = strtod(buf, NULL);
		ASSERT_EQ(0, memcmp(&v, &back, sizeof(v))) TH_LOG("%s", buf);
		/* Significant digits: leading and trailing zeros are not. */
		e = strchr(buf, 'e');
		for (char *p = buf, *first = NULL, *last = NULL; ; p++) {
			if (!*p || p == e) {
				for (char *q = first; first && q <= last; q++)
					digits += *q >= '0' && *q <= '9';
				break;
			}
			if (*p >= '1' && *p <= '9') {
				first = first ? first : p;
				last = p;
			}
		}
		if (digits > 1) {
			snprintf(shorter, sizeof(shorter), "%.*e", digits - 2, v);
			EXPECT_NE(v, strtod(shorter, NULL)) TH_LOG("%s is not the shortest", buf);
		}
	}
}

TEST_HARNESS_MAIN
