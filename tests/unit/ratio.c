// SPDX-License-Identifier: GPL-2.0
/* Exact rationals: conversion to double is correctly rounded, texts are exact. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kselftest_harness.h"
#include "err.h"
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

TEST_HARNESS_MAIN
