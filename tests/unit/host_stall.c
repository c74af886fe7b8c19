// SPDX-License-Identifier: GPL-2.0
/*
 * The chunk a worker's window waits for (docs/hosts.md, "Loss recovery"):
 * once resent, its timer runs from its own latest send, not pushed back by
 * the fresh results of the chunks after it trickling in. On Fig. 1 at 10 %
 * loss that wait held every worker for tens of milliseconds: nothing sent
 * after the resend can reveal its loss (the window is full), so only its
 * timer can. Hand-made results on loopback.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/socket.h>

#pragma GCC diagnostic ignored "-Wsign-compare"
#include "kselftest_harness.h"
#include "host.h"
#include "host_io.h"
#include "host_rig.h"

#define JOB	44
#define NE	4
#define NCH	16

static int send_result(int fd, uint16_t port, uint32_t seq)
{
	uint8_t buf[IA_IO_MSG_MAX] __attribute__((aligned(4)));
	int32_t v[NE] = { 9, 9, 9, 9 };

	ia_hdr_fill((struct ia_hdr *)buf, IA_MSG_RESULT, JOB, seq, IA_SENDER_DEST, 1, NE, 0);
	ia_io_payload_put(buf + IA_HDR_LEN, v, NE);
	return send_to(fd, 5, port, buf, IA_HDR_LEN + 4 * NE);
}

/*
 * A worker (window 16, 20 ms timer floor) sends chunks 0..15; chunk 1's
 * result makes RACK resend chunk 0. Then the results of chunks 2..15 come
 * one every 15 ms (210 ms), each a fresh result, and none of chunk 0: its
 * timer resends it during that (about 20 ms after the resend); timed from
 * the latest fresh result it would wait until 20 ms after the last one.
 */
TEST(first_chunk_timer_not_pushed_by_fresh_results)
{
	struct ia_worker_cfg cfg = {
		.job = JOB, .id = 7, .addr = lo(5), .ps = lo(4), .chunk = NE, .window = NCH,
		.timeout_ms = 20,
	};
	struct ia_worker_stats st;
	struct ia_hdr h;
	int32_t vec[NE * NCH] = { 0 };
	struct worker_run r = { .vec = vec, .n = NE * NCH };
	pthread_t th;
	uint16_t port = 20000 + (getpid() + 3) % 20000;
	uint64_t until, now;
	int ps, timer_resends = 0;

	cfg.port = port;
	ps = worker_start(&cfg, &r, &th);
	ASSERT_LE(0, ps) TH_LOG("%s", r.err);
	for (uint32_t s = 0; s < NCH; s++) {
		ASSERT_LT(0, recv_msg(ps, 1000, &h));
		ASSERT_EQ(s, ntohl(h.seq));
	}
	ASSERT_EQ(0, send_result(ps, port, 1));
	/* RACK's resend of chunk 0. */
	do {
		ASSERT_LT(0, recv_msg(ps, 1000, &h)) TH_LOG("chunk 0 not resent by RACK");
	} while (ntohl(h.seq) != 0);
	EXPECT_EQ(IA_F_RETX, h.flags & IA_F_RETX);
	for (uint32_t s = 2; s < NCH; s++) {
		ASSERT_EQ(0, send_result(ps, port, s));
		until = ia_io_now_ns() + 15000000ull;
		while ((now = ia_io_now_ns()) < until &&
		       recv_msg(ps, (until - now) / 1000000 + 1, &h) > 0)
			timer_resends += ntohl(h.seq) == 0;
	}
	EXPECT_LE(1, timer_resends) TH_LOG("chunk 0 waited for the fresh results to stop");
	ASSERT_EQ(0, send_result(ps, port, 0));
	pthread_join(th, NULL);
	ASSERT_EQ(0, r.ret) TH_LOG("%s", r.err);
	ia_worker_stats(r.w, &st);
	EXPECT_EQ(NCH, st.results);
	EXPECT_LE(1, st.timeouts);
	for (int i = 0; i < NE * NCH; i++)
		EXPECT_EQ(9, r.vec[i]);
	ia_worker_close(r.w);
	close(ps);
}

TEST_HARNESS_MAIN
