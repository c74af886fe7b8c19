// SPDX-License-Identifier: GPL-2.0
/*
 * The host endpoint's parts that need no network (user/lib/host*.c): its
 * configuration checks, fixed point, vectors and checksums. No root.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <string.h>
#include <arpa/inet.h>

#include "kselftest_harness.h"
#include "host.h"
#include "host_io.h"

#define ERRLEN	256

static struct in_addr ip4(const char *s)
{
	struct in_addr a;

	inet_pton(AF_INET, s, &a);
	return a;
}

/* A payload is little-endian on the wire, whatever the host; put and take invert each other. */
TEST(payload_byte_order)
{
	const int32_t v[3] = { 0x01020304, -2, INT32_MIN };
	const uint8_t want[12] = { 4, 3, 2, 1, 0xfe, 0xff, 0xff, 0xff, 0, 0, 0, 0x80 };
	uint8_t wire[12 + 1] = { [12] = 0xaa };
	int32_t back[3] = { 0 };

	ia_io_payload_put(wire, v, 3);
	EXPECT_EQ(0, memcmp(wire, want, sizeof(want)));
	EXPECT_EQ(0xaa, wire[12]);	/* nothing past n elements */
	EXPECT_EQ((uint32_t)-2, ia_io_payload_get(wire, 1));
	ia_io_payload_take(back, wire, 3);
	EXPECT_EQ(0, memcmp(back, v, sizeof(v)));
}

/* Bad configurations are refused with a reason. */
TEST(config_errors)
{
	struct ia_ps_cfg pc = { .nworkers = 1, .nelem = 10, .down_mode = IA_PS_DOWN_ADDR };
	struct ia_worker_cfg wc = { .chunk = IA_MAX_ELEMS + 1, .ps = ip4("127.0.0.1") };
	struct ia_worker *w;
	struct ia_ps *ps;
	char err[ERRLEN];

	EXPECT_EQ(-EINVAL, ia_ps_open(&pc, &ps, err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "down address"));
	pc.down_mode = IA_PS_DOWN_UNICAST;
	pc.nworkers = 0;
	EXPECT_EQ(-EINVAL, ia_ps_open(&pc, &ps, err, sizeof(err)));
	pc.nworkers = 1;
	pc.nelem = 0;
	EXPECT_EQ(-EINVAL, ia_ps_open(&pc, &ps, err, sizeof(err)));
	EXPECT_EQ(-EINVAL, ia_worker_open(&wc, &w, err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "at most 768"));
	wc.chunk = 0;
	wc.ps.s_addr = 0;
	EXPECT_EQ(-EINVAL, ia_worker_open(&wc, &w, err, sizeof(err)));
}

/* Fixed point: rounding, saturation, NaN, and the choice of frac. */
TEST(fixed_point)
{
	bool sat;

	EXPECT_EQ(98304, ia_fx_encode(1.5, 16, &sat));
	EXPECT_FALSE(sat);
	EXPECT_EQ(-98304, ia_fx_encode(-1.5, 16, NULL));
	EXPECT_EQ(1, ia_fx_encode(0.5 / 65536, 16, NULL));	/* half away from zero */
	EXPECT_EQ(-1, ia_fx_encode(-0.5 / 65536, 16, NULL));
	EXPECT_EQ(INT32_MAX, ia_fx_encode(40000.0, 16, &sat));
	EXPECT_TRUE(sat);
	EXPECT_EQ(INT32_MIN, ia_fx_encode(-1e300, 16, &sat));
	EXPECT_TRUE(sat);
	EXPECT_EQ(INT32_MIN, ia_fx_encode(-32768.0, 16, &sat));	/* exactly representable */
	EXPECT_FALSE(sat);
	EXPECT_EQ(0, ia_fx_encode(NAN, 16, NULL));
	EXPECT_EQ(1.5, ia_fx_decode(98304, 16));
	EXPECT_EQ(-0.25, ia_fx_decode(-1, 2));
	EXPECT_EQ(29, ia_fx_frac_for(1.0, 2));		/* 2 * (2^29 + 1/2) < 2^31 */
	EXPECT_EQ(0, ia_fx_frac_for(1e9, 2));
	EXPECT_EQ(-ERANGE, ia_fx_frac_for(3e9, 1));
	EXPECT_EQ(-EINVAL, ia_fx_frac_for(1.0, 0));
}

/* Deterministic vectors and checksum: fixed values guard against silent changes. */
TEST(vectors)
{
	int32_t a[3] = { INT32_MAX, -5, 7 }, b[3] = { 1, -7, 0 };

	EXPECT_EQ(ia_host_rand(1, 2), ia_host_rand(1, 2));
	EXPECT_NE(ia_host_rand(1, 2), ia_host_rand(2, 2));
	EXPECT_NE(ia_host_rand(1, 2), ia_host_rand(1, 3));
	ia_host_add(a, b, 3);
	EXPECT_EQ(INT32_MIN, a[0]);		/* wraps */
	EXPECT_EQ(-12, a[1]);
	EXPECT_EQ(0xcbf29ce484222325ull, ia_host_checksum(a, 0));
	EXPECT_NE(ia_host_checksum(a, 3), ia_host_checksum(b, 3));
	EXPECT_EQ(1U, ia_host_nchunks(1, 256));
	EXPECT_EQ(2U, ia_host_nchunks(257, 256));
	EXPECT_EQ(0U, ia_host_nchunks(0, 256));
}

TEST_HARNESS_MAIN
