// SPDX-License-Identifier: GPL-2.0
/*
 * The unicast PS (results to each worker it heard from, no switches) on
 * loopback, against spoofed sources (docs/security.md): it learns one
 * address per sender id and at most as many as the job has workers, so
 * sources that claim ids, or any ids, neither grow its list nor receive
 * its results; the workers it learned first get every result.
 */
#include <pthread.h>
#include <unistd.h>

#pragma GCC diagnostic ignored "-Wsign-compare"
#include "kselftest_harness.h"
#include "host.h"
#include "host_io.h"
#include "../unit/host_rig.h"

#define JOB	44
#define NE	4
#define NFORGE	12

static int send_contrib(int fd, uint16_t port, uint32_t seq, uint32_t sender)
{
	uint8_t buf[IA_IO_MSG_MAX] __attribute__((aligned(4)));
	int32_t v[NE] = { 1, 2, 3, 4 };

	ia_hdr_fill((struct ia_hdr *)buf, IA_MSG_CONTRIB, JOB, seq, sender, 1, NE, 0);
	ia_io_payload_put(buf + IA_HDR_LEN, v, NE);
	return send_to(fd, 1, port, buf, IA_HDR_LEN + 4 * NE);
}

/* Results arriving on fd: the first within ms, each next within 50 ms of the one before. */
static int results(int fd, int ms)
{
	struct ia_hdr h;
	int n = 0;

	while (recv_msg(fd, n ? 50 : ms, &h) > 0)
		n += h.type == IA_MSG_RESULT;
	return n;
}

/*
 * Two workers (ids 1, 2 at 127.0.0.2 and .3), three chunks. Chunk 0 from
 * both: their addresses learned. Then NFORGE sources at 127.0.0.10.. claim
 * id 1, id 2, or ids of their own, for chunk 1 (an id of their own is no
 * member: none listed, the PS takes any id, as in inagg ps run without
 * --members). The list stays at 2 and no forger gets chunk 1's result.
 */
TEST(unicast_learns_at_most_one_address_per_worker)
{
	volatile sig_atomic_t stop = 0;
	struct ia_ps_cfg cfg = {
		.job = JOB, .id = IA_SENDER_DEST, .nworkers = 2, .nelem = 3 * NE, .chunk = NE,
		.addr = lo(1), .down_mode = IA_PS_DOWN_UNICAST, .linger_ms = -1, .stop = &stop,
	};
	struct ps_run r = { 0 };
	struct ia_ps_stats st;
	uint16_t port = 20000 + (getpid() + 13) % 20000;
	int w[2], f[NFORGE], i, got = 0;
	pthread_t th;

	cfg.port = port;
	ASSERT_EQ(0, ia_ps_open(&cfg, &r.ps, r.err, sizeof(r.err))) TH_LOG("%s", r.err);
	for (i = 0; i < 2; i++)
		ASSERT_LE(0, w[i] = bound(2 + i, port));
	for (i = 0; i < NFORGE; i++)
		ASSERT_LE(0, f[i] = bound(10 + i, port));
	ASSERT_EQ(0, pthread_create(&th, NULL, ps_thread, &r));
	for (i = 0; i < 2; i++)
		ASSERT_EQ(0, send_contrib(w[i], port, 0, 1 + i));
	for (i = 0; i < 2; i++)
		ASSERT_EQ(1, results(w[i], 1000));
	for (i = 0; i < NFORGE; i++)
		ASSERT_EQ(0, send_contrib(f[i], port, 1, i < 4 ? 1 + i % 2 : 100 + i));
	/*
	 * Chunk 1 completes with the first two forgeries (the ids' contributions
	 * are taken: without switches nothing tells a worker from a forger,
	 * docs/security.md), and its result goes to the workers only; the later
	 * forgeries are late messages, not answered at an unlearned source.
	 */
	for (i = 0; i < 2; i++)
		ASSERT_EQ(1, results(w[i], 1000));
	for (i = 0; i < NFORGE; i++)
		got += results(f[i], 20);
	EXPECT_EQ(0, got);
	stop = 1;
	pthread_join(th, NULL);
	ia_ps_stats(r.ps, &st);
	EXPECT_EQ(2, st.addresses);
	EXPECT_EQ(NFORGE, st.unlearned);
	ia_ps_close(r.ps);
	for (i = 0; i < 2; i++)
		close(w[i]);
	for (i = 0; i < NFORGE; i++)
		close(f[i]);
}

TEST_HARNESS_MAIN
