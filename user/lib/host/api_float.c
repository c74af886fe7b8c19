// SPDX-License-Identifier: GPL-2.0
/*
 * Float all-reduce of libinagg.so (include/inagg/api.h): float32 values
 * travel as int32 fixed point at a scale agreed in the same call, so that
 * no sum can wrap (docs/pytorch.md, "Fixed point that cannot wrap"):
 *
 *   [ call tag | N exponent slots | overflow count | the values at 2^frac ]
 *
 * frac = 30 - e - ceil(log2 N) for the agreed exponent e (every |x| < 2^e).
 * Encoding and decoding are one pass each over the caller's vector, into
 * and out of the handle's own buffer: no allocation per call, nothing
 * written to the caller's vector unless the sum is good.
 */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "inagg/api.h"
#include "api_int.h"
#include "err.h"
#include "host_io.h"

#define SLOT_OFFSET	(1 << 16)	/* a slot holds e + offset: never 0 once written */
#define EXP_MIN		(-100)		/* the exponent of an all-zero vector */
#define EXP_MAX		256		/* float32's largest is 128; the margin adds to it */
#define F32_ABS_MASK	0x7fffffffu
#define F32_INF_BITS	0x7f800000u	/* |x| bits at or above: infinity or NaN */
#define F32_BELOW_2_31	2147483520.0f	/* the largest float32 below 2^31 */

static int ceil_log2(uint32_t n)
{
	int b = 0;

	while ((1ull << b) < n)
		b++;
	return b;
}

/* The smallest e with m < 2^e (EXP_MIN for 0), as inagg.fixed.exponent(). */
static int exponent_of(float m)
{
	int e;

	if (m <= 0)
		return EXP_MIN;
	frexpf(m, &e);
	return e > EXP_MIN ? e : EXP_MIN;
}

/*
 * round(x * 2^frac), saturated to int32, into q; returns the largest |x|'s
 * bits (at or above F32_INF_BITS when some x is not finite). In double, the
 * scale of any frac: 2^frac may be beyond float's range for tiny gradients.
 */
static uint32_t encode_f64(const float *x, int32_t *q, uint64_t n, int frac)
{
	const double scale = ldexp(1.0, frac), round = 0x1.8p52;
	uint32_t most = 0;
	uint64_t i;

	for (i = 0; i < n; i++) {
		uint32_t bits;
		double d = (double)x[i] * scale;

		memcpy(&bits, &x[i], sizeof(bits));
		bits &= F32_ABS_MASK;
		most = bits > most ? bits : most;
		d = d > 2147483647.0 ? 2147483647.0 : d < -2147483648.0 ? -2147483648.0 : d;
		/* Adding and taking away 1.5 * 2^52 rounds half to even, as numpy's rint. */
		d = (d + round) - round;
		q[i] = d == d ? (int32_t)d : 0;
	}
	return most;
}

/*
 * The same values in float32, four or more to an instruction (the Makefile
 * builds this file for the vectoriser: selects, no branches). 2^frac is a
 * normal float, so x * 2^frac is exact unless it overflows (saturates in
 * both) or falls below 2^-126 (rounds to 0 in both). Under 2^23, adding and
 * taking away 2^23 rounds half to even; from 2^23 up a float is whole.
 */
static uint32_t encode_f32(const float *restrict x, int32_t *restrict q, uint64_t n, int frac)
{
	const float scale = ldexpf(1.0f, frac);
	int32_t most = 0;
	uint64_t i;

	for (i = 0; i < n; i++) {
		float f = x[i], d = f * scale, a = fabsf(d), r;
		int32_t bits, v;

		memcpy(&bits, &f, sizeof(bits));
		bits &= F32_ABS_MASK;
		most = bits > most ? bits : most;
		r = (a + 0x1p23f) - 0x1p23f;
		r = a < 0x1p23f ? r : a;
		r = r < F32_BELOW_2_31 ? r : F32_BELOW_2_31;
		r = copysignf(r, d);
		r = d == d ? r : 0.0f;
		v = (int32_t)r;
		v = d >= 0x1p31f ? INT32_MAX : v;
		v = d <= -0x1p31f ? INT32_MIN : v;
		q[i] = v;
	}
	return (uint32_t)most;
}

uint32_t ia_api_f32_encode(const float *x, int32_t *q, uint64_t n, int frac)
{
	if (frac >= -126 && frac <= 127)
		return encode_f32(x, q, n, frac);
	return encode_f64(x, q, n, frac);
}

static void decode(const int32_t *restrict q, float *restrict x, uint64_t n, int frac,
		   uint32_t div)
{
	const double scale = ldexp(1.0, -frac);
	uint64_t i;

	/* A sum divides by 1: the same values without a division per element. */
	if (div == 1) {
		for (i = 0; i < n; i++)
			x[i] = (float)((double)q[i] * scale);
		return;
	}
	for (i = 0; i < n; i++)
		x[i] = (float)((double)q[i] * scale / div);
}

int ia_api_allreduce_f32(struct ia_api *h, float *v, uint64_t n, int rank, int *exponent,
			 int *frac_out, unsigned int flags, char *err, size_t errlen)
{
	uint64_t words, t0, t1, t2, i;
	uint32_t most, nw, over;
	int32_t *slots;
	int ret, e_local, agreed, frac, emax;
	float m;

	if (!h || !v || !exponent)
		return ia_fail(err, errlen, -EINVAL, "no %s", !h ? "handle" : !v ? "vector" :
			       "exponent");
	if (flags & ~IA_API_F32_MEAN)
		return ia_fail(err, errlen, -EINVAL, "unknown flags 0x%x", flags);
	nw = h->nworkers;
	if (rank < 0 || (uint32_t)rank >= nw)
		return ia_fail(err, errlen, -EINVAL, "rank %d: the job has workers 0..%u", rank,
			       nw - 1);
	/* Two workers in one slot would add their exponents: the daemon's index wins. */
	if (h->index >= 0 && rank != h->index)
		return ia_fail(err, errlen, -EINVAL, "rank %d: this worker is number %d of the job",
			       rank, h->index);
	agreed = *exponent;
	if (agreed < EXP_MIN || agreed > EXP_MAX)
		return ia_fail(err, errlen, -EINVAL, "exponent %d: use %d..%d", agreed, EXP_MIN,
			       EXP_MAX);
	words = nw + 1 + n;
	ret = ia_api_worker_ready(h, words, 1, err, errlen);
	if (ret)
		return ret;
	t0 = ia_io_now_ns();
	frac = 30 - agreed - ceil_log2(nw);
	slots = h->buf + 1;
	memset(slots, 0, (nw + 1) * sizeof(*slots));
	most = ia_api_f32_encode(v, slots + nw + 1, n, frac);
	if (most >= F32_INF_BITS)
		return ia_fail(err, errlen, -EDOM, "a value to sum is not finite (NaN or "
			       "infinity); inagg sums only finite values");
	memcpy(&m, &most, sizeof(m));
	e_local = exponent_of(m);
	slots[rank] = e_local + SLOT_OFFSET;
	/* Over the agreed bound the values saturated: every worker discards this sum. */
	slots[nw] = e_local > agreed;
	t1 = ia_io_now_ns();
	ret = ia_api_stream(h, words, IA_API_KIND_F32, err, errlen);
	t2 = ia_io_now_ns();
	h->phase_ns[0] = t1 - t0;
	h->phase_ns[1] = t2 - t1;
	h->phase_ns[2] = 0;
	if (ret)
		return ret;
	emax = EXP_MIN;
	for (i = 0; i < nw; i++)
		if (slots[i] - SLOT_OFFSET > emax)
			emax = slots[i] - SLOT_OFFSET;
	over = (uint32_t)slots[nw];
	*exponent = emax;
	if (frac_out)
		*frac_out = frac;
	if (over)
		return ia_fail(err, errlen, -ERANGE, "%u worker(s) over 2^%d: resend at 2^%d", over,
			       agreed, emax);
	decode(slots + nw + 1, v, n, frac, flags & IA_API_F32_MEAN ? nw : 1);
	h->phase_ns[2] = ia_io_now_ns() - t2;
	return 0;
}

int ia_api_phase_ns(const struct ia_api *h, uint64_t ns[3])
{
	if (!h || !ns)
		return -EINVAL;
	memcpy(ns, h->phase_ns, sizeof(h->phase_ns));
	return 0;
}
