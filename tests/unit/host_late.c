// SPDX-License-Identifier: GPL-2.0
/*
 * The destination's answers to late messages (host_ps_late.c, docs/hosts.md
 * "Loss recovery"): with results down to an address, a quiet time per chunk
 * of 1 ms doubling with each answer up to 16 ms; the first late message at
 * least that long after the chunk's latest result is answered at once, the
 * ones within it get one answer at its end. Hand-computed sequences on the
 * decision, then the PS on loopback: a burst of late messages right after
 * the result gets an answer (the design before dropped them all), and late
 * messages queued before the result went down get none once the PS has
 * seen that results are rarely lost.
 */
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
#include "host_ps_int.h"
#include "host_rig.h"

#define MS	1000000ull
#define JOB	43
#define NE	4

TEST(quiet_doubles_per_answer_up_to_16_ms)
{
	static const uint64_t want[] = { 1, 2, 4, 8, 16, 16, 16 };
	uint32_t a;

	for (a = 0; a < sizeof(want) / sizeof(want[0]); a++)
		EXPECT_EQ(want[a] * MS, ia_ps_quiet_ns(a));
	EXPECT_EQ(16 * MS, ia_ps_quiet_ns(255));
}

/*
 * One chunk, its result down at 10 ms, late messages at the times below
 * (ms); what each gets, and the answers deferred ones get.
 */
TEST(late_sequence)
{
	struct pchunk c = { .state = PC_DONE, .sent_at = 10 * MS };

	/* Within 1 ms: deferred to 11 ms, a second one held. */
	EXPECT_EQ(IA_PS_LATE_DEFER, ia_ps_late_at(&c, 10 * MS + MS / 2));
	EXPECT_EQ(11 * MS, ia_ps_late_due(&c));
	EXPECT_EQ(IA_PS_LATE_HELD, ia_ps_late_at(&c, 10 * MS + 7 * MS / 10));
	/* Sent at 11 ms: one answer, the next quiet time 2 ms. */
	ia_ps_late_sent(&c, 11 * MS);
	EXPECT_EQ(0, c.pending);
	EXPECT_EQ(1, c.answers);
	/* 12.5 ms: 1.5 ms after it, deferred to 13 ms; sent late, at 13.2 ms. */
	EXPECT_EQ(IA_PS_LATE_DEFER, ia_ps_late_at(&c, 12 * MS + MS / 2));
	EXPECT_EQ(13 * MS, ia_ps_late_due(&c));
	ia_ps_late_sent(&c, 13 * MS + MS / 5);
	EXPECT_EQ(2, c.answers);
	/* 17.3 ms: 4.1 ms after it, past the 4 ms: answered at once. */
	EXPECT_EQ(IA_PS_LATE_ANSWER, ia_ps_late_at(&c, 17 * MS + 3 * MS / 10));
	EXPECT_EQ(3, c.answers);
	EXPECT_EQ(17 * MS + 3 * MS / 10, c.sent_at);
	/* 25.3 ms: exactly 8 ms after it: at once. */
	EXPECT_EQ(IA_PS_LATE_ANSWER, ia_ps_late_at(&c, 25 * MS + 3 * MS / 10));
	EXPECT_EQ(4, c.answers);
	/* 40 ms: 14.7 ms after, the quiet time now 16 ms: deferred to 41.3 ms. */
	EXPECT_EQ(IA_PS_LATE_DEFER, ia_ps_late_at(&c, 40 * MS));
	EXPECT_EQ(41 * MS + 3 * MS / 10, ia_ps_late_due(&c));
	ia_ps_late_sent(&c, 41 * MS + 3 * MS / 10);
	/* Long after: at once, the quiet time stays 16 ms. */
	EXPECT_EQ(IA_PS_LATE_ANSWER, ia_ps_late_at(&c, 100 * MS));
	EXPECT_EQ(116 * MS, ia_ps_late_due(&c));
}

/* The first late message 2 ms after the result: at once. */
TEST(late_after_the_quiet_time_at_once)
{
	struct pchunk c = { .state = PC_DONE, .sent_at = 10 * MS };

	EXPECT_EQ(IA_PS_LATE_ANSWER, ia_ps_late_at(&c, 12 * MS));
	EXPECT_EQ(12 * MS, c.sent_at);
	EXPECT_EQ(IA_PS_LATE_DEFER, ia_ps_late_at(&c, 13 * MS));
	EXPECT_EQ(14 * MS, ia_ps_late_due(&c));
}

TEST(stale_only_while_results_are_rarely_lost)
{
	/* Arrived before the latest result went down, 32 chunks done, none asked again. */
	EXPECT_TRUE(ia_ps_late_stale(5 * MS, 6 * MS, 0, 32));
	/* 15 late messages answered for 32 chunks: under half a worker per result. */
	EXPECT_TRUE(ia_ps_late_stale(5 * MS, 6 * MS, 15, 32));
	/* 16: results are lost often, its deferred answer pays. */
	EXPECT_FALSE(ia_ps_late_stale(5 * MS, 6 * MS, 16, 32));
	/* Too few chunks to tell. */
	EXPECT_FALSE(ia_ps_late_stale(5 * MS, 6 * MS, 0, 31));
	/* Arrived once the result had gone: its sender may have missed it. */
	EXPECT_FALSE(ia_ps_late_stale(6 * MS, 6 * MS, 0, 32));
	EXPECT_FALSE(ia_ps_late_stale(7 * MS, 6 * MS, 0, 32));
}

static int send_contrib(int fd, uint16_t port, uint32_t seq, uint32_t sender, uint8_t flags)
{
	uint8_t buf[IA_IO_MSG_MAX] __attribute__((aligned(4)));
	int32_t v[NE] = { 1, 2, 3, 4 };

	ia_hdr_fill((struct ia_hdr *)buf, IA_MSG_CONTRIB, JOB, seq, sender, 1, NE, flags);
	ia_io_payload_put(buf + IA_HDR_LEN, v, NE);
	return send_to(fd, 1, port, buf, IA_HDR_LEN + 4 * NE);
}

#define ANY_SEQ	UINT32_MAX

/*
 * Results of chunk seq (ANY_SEQ: of every chunk) coming down within ms;
 * *again, if given: of which flagged sent again.
 */
static int results_within(int fd, int ms, uint32_t seq, int *again)
{
	uint8_t buf[IA_IO_MSG_MAX];
	struct pollfd p = { .fd = fd, .events = POLLIN };
	int n = 0, a = 0;

	while (poll(&p, 1, ms) == 1) {
		const struct ia_hdr *h = (const struct ia_hdr *)buf;
		ssize_t len = recv(fd, buf, sizeof(buf), 0);

		if (len >= IA_HDR_LEN && h->type == IA_MSG_RESULT &&
		    (seq == ANY_SEQ || ntohl(h->seq) == seq)) {
			n++;
			a += !!(h->flags & IA_F_RETX);
		}
	}
	if (again)
		*again = a;
	return n;
}

/*
 * A PS of 2 workers and 2 chunks, results down to 127.0.0.2: chunk 0's
 * result, then 5 late messages at once (a worker and its blue switch's
 * re-emits, say), within the first quiet time: one answer comes (two or
 * three if this host was so slow that the first came after 1 ms and the
 * others spread over the next quiet times), fewer than the messages.
 */
TEST(burst_of_late_messages_answered)
{
	volatile sig_atomic_t stop = 0;
	struct ia_ps_cfg cfg = {
		.job = JOB, .id = IA_SENDER_DEST, .nworkers = 2, .nelem = 2 * NE, .chunk = NE,
		.addr = lo(1), .down = lo(2), .linger_ms = -1, .stop = &stop,
	};
	struct ps_run r = { 0 };
	struct ia_ps_stats st;
	pthread_t th;
	uint16_t port = 20000 + getpid() % 20000;
	int fd, down, n, again;

	cfg.port = port;
	ASSERT_EQ(0, ia_ps_open(&cfg, &r.ps, r.err, sizeof(r.err))) TH_LOG("%s", r.err);
	fd = bound(3, 0);
	down = bound(2, port);
	ASSERT_LE(0, fd);
	ASSERT_LE(0, down);
	ASSERT_EQ(0, pthread_create(&th, NULL, ps_thread, &r));
	ASSERT_EQ(0, send_contrib(fd, port, 0, 1, 0));
	ASSERT_EQ(0, send_contrib(fd, port, 0, 2, 0));
	ASSERT_EQ(1, results_within(down, 1000, 0, &again));
	/* The first result is the chunk's; the answers are flagged (switches count them apart). */
	EXPECT_EQ(0, again);
	for (int i = 0; i < 5; i++)
		ASSERT_EQ(0, send_contrib(fd, port, 0, 1 + i % 2, IA_F_RETX));
	n = results_within(down, 300, 0, &again);
	EXPECT_LE(1, n);
	EXPECT_GE(3, n);
	EXPECT_EQ(n, again);
	stop = 1;
	pthread_join(th, NULL);
	ia_ps_stats(r.ps, &st);
	EXPECT_EQ(5, st.late);
	EXPECT_EQ(1 + n, st.results);
	EXPECT_EQ(1 + st.late - st.late_quiet + st.late_deferred, st.results);
	EXPECT_LE(1, st.late_deferred);
	ia_ps_close(r.ps);
	close(fd);
	close(down);
}

/*
 * A PS of one worker and 40 chunks, results down to 127.0.0.2, every
 * message queued before it runs: each chunk's contribution, and for chunks
 * 32-39 a resend right after it (what a NACK or a hole makes every worker
 * send while the repair is queued). Those resends arrived before their
 * chunk's result went down, so they are stale and get nothing (before, each
 * got a deferred answer: 48 results). A resend once the result is down is
 * answered.
 */
TEST(late_queued_before_the_result_not_answered)
{
	volatile sig_atomic_t stop = 0;
	struct ia_ps_cfg cfg = {
		.job = JOB, .id = IA_SENDER_DEST, .nworkers = 1, .nelem = 40 * NE, .chunk = NE,
		.addr = lo(1), .down = lo(2), .linger_ms = -1, .stop = &stop,
	};
	struct ps_run r = { 0 };
	struct ia_ps_stats st;
	pthread_t th;
	uint16_t port = 20000 + (getpid() + 7) % 20000;
	int fd, down;

	cfg.port = port;
	ASSERT_EQ(0, ia_ps_open(&cfg, &r.ps, r.err, sizeof(r.err))) TH_LOG("%s", r.err);
	fd = bound(3, 0);
	down = bound(2, port);
	ASSERT_LE(0, fd);
	ASSERT_LE(0, down);
	for (uint32_t i = 0; i < 40; i++) {
		ASSERT_EQ(0, send_contrib(fd, port, i, 1, 0));
		if (i >= 32)
			ASSERT_EQ(0, send_contrib(fd, port, i, 1, IA_F_RETX));
	}
	ASSERT_EQ(0, pthread_create(&th, NULL, ps_thread, &r));
	EXPECT_EQ(40, results_within(down, 300, ANY_SEQ, NULL));
	ASSERT_EQ(0, send_contrib(fd, port, 0, 1, IA_F_RETX));
	EXPECT_EQ(1, results_within(down, 300, ANY_SEQ, NULL));
	stop = 1;
	pthread_join(th, NULL);
	ia_ps_stats(r.ps, &st);
	EXPECT_EQ(9, st.late);
	EXPECT_EQ(8, st.late_stale);
	EXPECT_EQ(0, st.late_quiet);
	EXPECT_EQ(41, st.results);
	ia_ps_close(r.ps);
	close(fd);
	close(down);
}

TEST_HARNESS_MAIN
