// SPDX-License-Identifier: GPL-2.0
/*
 * The float32 codec's encoding (user/lib/host/api_float.c): its vectorised
 * float32 path and its double path give, at every scale the API can ask
 * (2^-232 .. 2^130), exactly what the definition says: x * 2^frac rounded
 * half to even (numpy's rint), saturated to int32, and the largest |x|'s
 * bits. Inputs: random bit patterns (every exponent, subnormals, infinities
 * and NaN), halves, and the edges of rounding and saturation. No root.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "kselftest_harness.h"
#include "api_int.h"

#define N	4099	/* not a multiple of any vector width */

static int32_t reference(float x, int frac)
{
	double d = rint(ldexp((double)x, frac));	/* exact product, then rint */

	if (d != d)
		return 0;
	return d >= 2147483647.0 ? INT32_MAX : d <= -2147483648.0 ? INT32_MIN : (int32_t)d;
}

TEST(encode_is_rint_saturated_at_every_scale)
{
	static const float edges[] = {
		0.5f, -0.5f, 1.5f, -2.5f, 0x1p22f + 0.5f, 0x1p23f - 0.5f, 0x1p23f + 1,
		0x1p31f, -0x1p31f, 2147483520.0f, -2147483520.0f, 0x1p-149f, -0.0f, 0x1p127f,
	};
	static float x[N];
	static int32_t q[N];
	uint64_t s = 0x9e3779b97f4a7c15ull;
	int frac, i, bad = 0;

	for (frac = -232; frac <= 130; frac++) {
		uint32_t most = 0, got;

		for (i = 0; i < N; i++) {
			uint32_t u;

			s ^= s << 13;
			s ^= s >> 7;
			s ^= s << 17;
			u = (uint32_t)s;
			memcpy(&x[i], &u, sizeof(u));
			if (i % 4 == 0)	/* values near this scale's integers, halves among them */
				x[i] = ldexpf((float)((int64_t)(s >> 40) - (1 << 23)) / 2, -frac);
			if (i < (int)(sizeof(edges) / sizeof(edges[0])))
				x[i] = ldexpf(edges[i], -frac);	/* on those edges after scaling */
			memcpy(&u, &x[i], sizeof(u));
			u &= 0x7fffffffu;
			most = u > most ? u : most;
		}
		got = ia_api_f32_encode(x, q, N, frac);
		EXPECT_EQ(most, got) TH_LOG("frac %d", frac);
		for (i = 0; i < N; i++) {
			uint32_t u;

			memcpy(&u, &x[i], sizeof(u));
			/* A vector with a NaN or infinity is refused: its integers are never used. */
			if ((u & 0x7fffffffu) >= 0x7f800000u || q[i] == reference(x[i], frac))
				continue;
			if (bad++ < 5)
				TH_LOG("frac %d: x %a gives %d, rint %d", frac, x[i], q[i],
				       reference(x[i], frac));
		}
	}
	EXPECT_EQ(0, bad);
}

TEST_HARNESS_MAIN
