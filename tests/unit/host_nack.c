// SPDX-License-Identifier: GPL-2.0
/*
 * Loss recovery at the hosts (docs/hosts.md, "Loss recovery"). NACKs: the
 * destination (with cfg.nack) asks once for a chunk once a later piece of a
 * sender shows that the chunk lacks that sender's piece, never for chunks
 * whose pieces came in order, and a worker resends a NACKed chunk at once
 * rather than by its timer. Timers: of the chunks sent once, a worker resends
 * by its short timer only the newest (a probe) and the one its window waits
 * for. Hand-made messages on loopback.
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

#define JOB	41
#define NE	4	/* elements per chunk */
#define NCH	3	/* chunks */

/* Sends a message of chunk seq to host:port, payload all val. */
static int send_msg(int fd, int host, uint16_t port, uint8_t type, uint32_t seq, uint32_t sender,
		    uint32_t nw, uint8_t flags, int32_t val)
{
	uint8_t buf[IA_IO_MSG_MAX] __attribute__((aligned(4)));
	int32_t v[NE];
	size_t len = IA_HDR_LEN + 4 * NE;

	for (int e = 0; e < NE; e++)
		v[e] = val;
	ia_hdr_fill((struct ia_hdr *)buf, type, JOB, seq, sender, nw, NE, flags);
	ia_io_payload_put(buf + IA_HDR_LEN, v, NE);
	return send_to(fd, host, port, buf, len);
}

/* A NACK of chunk seq naming the n senders of ids, to host:port. */
static int send_nack(int fd, int host, uint16_t port, uint32_t seq, const uint32_t *ids, int n)
{
	uint8_t buf[IA_IO_MSG_MAX] __attribute__((aligned(4)));
	size_t len = IA_HDR_LEN + 8 * n;

	ia_hdr_fill((struct ia_hdr *)buf, IA_MSG_RESULT, JOB, seq, IA_SENDER_DEST, 0, 2 * n,
		    IA_F_NACK);
	for (int i = 0; i < n; i++) {
		uint32_t pair[2] = { seq, ids[i] };

		ia_io_payload_put(buf + IA_HDR_LEN + 8 * i, (const int32_t *)pair, 2);
	}
	return send_to(fd, host, port, buf, len);
}

FIXTURE(ps) {
	struct ps_run r;
	pthread_t th;
	int fd, down;
	uint16_t port;
};

FIXTURE_VARIANT(ps) {
	bool nack;
};

FIXTURE_VARIANT_ADD(ps, nack) {
	.nack = true,
};

FIXTURE_VARIANT_ADD(ps, by_default) {
	.nack = false,
};

/* A PS of 3 workers and NCH chunks on 127.0.0.1, results down to 127.0.0.2. */
FIXTURE_SETUP(ps)
{
	struct ia_ps_cfg cfg = {
		.job = JOB, .id = IA_SENDER_DEST, .nworkers = 3, .nelem = NE * NCH, .chunk = NE,
		.addr = lo(1), .down = lo(2), .linger_ms = 0, .nack = variant->nack,
	};

	/* A port of this process's own: tests of other trees may run at once. */
	self->port = 20000 + getpid() % 20000;
	cfg.port = self->port;
	ASSERT_EQ(0, ia_ps_open(&cfg, &self->r.ps, self->r.err, sizeof(self->r.err)))
		TH_LOG("%s", self->r.err);
	self->fd = bound(3, 0);
	ASSERT_LE(0, self->fd);
	self->down = bound(2, self->port);
	ASSERT_LE(0, self->down);
	ASSERT_EQ(0, pthread_create(&self->th, NULL, ps_thread, &self->r));
}

FIXTURE_TEARDOWN(ps)
{
	close(self->fd);
	close(self->down);
	ia_ps_close(self->r.ps);
}

#define SEND(seq, sender, flags) \
	ASSERT_EQ(0, send_msg(self->fd, 1, self->port, IA_MSG_CONTRIB, seq, sender, 1, flags, 1))

/* Waits for a message down: *h, or fails after a second. */
#define DOWN(h) ASSERT_LT(0, recv_msg(self->down, 1000, &(h)))

TEST_F(ps, nack_when_a_later_piece_shows_a_loss)
{
	struct ia_ps_stats st;
	struct ia_hdr h;

	SEND(0, 1, 0);
	SEND(0, 2, 0);
	SEND(1, 1, 0);
	SEND(1, 3, 0);	/* chunk 0 lacks worker 3's piece */
	if (!variant->nack) {
		/* Off: nothing comes down before chunk 0's result. */
		EXPECT_EQ(-ETIMEDOUT, recv_msg(self->down, 50, &h));
		SEND(0, 3, IA_F_RETX);
		DOWN(h);
		EXPECT_EQ(0, h.flags & IA_F_NACK);
		goto rest;
	}
	DOWN(h);
	EXPECT_EQ(IA_MSG_RESULT, h.type);
	EXPECT_EQ(IA_F_NACK, h.flags & IA_F_NACK);
	EXPECT_EQ(0, ntohl(h.seq));
	EXPECT_EQ(0, ntohl(h.nworkers));
	/* It names the one sender whose later piece came: (chunk 0, worker 3). */
	EXPECT_EQ(2, ntohs(h.nelem));
	EXPECT_EQ(0, ia_io_payload_get(rig_msg + IA_HDR_LEN, 0));
	EXPECT_EQ(3, ia_io_payload_get(rig_msg + IA_HDR_LEN, 1));
	SEND(0, 3, IA_F_RETX);
	/* Chunk 0's result; NACKs of chunk 0 sent meanwhile may come first. */
	do {
		DOWN(h);
	} while (h.flags & IA_F_NACK);
	EXPECT_EQ(0, ntohl(h.seq));
	EXPECT_EQ(3, ntohl(h.nworkers));
rest:
	SEND(1, 2, 0);
	SEND(2, 1, 0);
	SEND(2, 2, 0);
	SEND(2, 3, 0);
	pthread_join(self->th, NULL);
	ASSERT_EQ(0, self->r.ret) TH_LOG("%s", self->r.err);
	ia_ps_stats(self->r.ps, &st);
	/* Once: one message, one (chunk, sender) pair. */
	EXPECT_EQ(variant->nack, st.nacks);
	EXPECT_EQ(variant->nack, st.nacked);
	EXPECT_EQ(3, st.done);
	EXPECT_EQ(NCH, st.results);	/* NACKs are no results */
}

TEST_F(ps, no_nack_for_pieces_in_order)
{
	struct ia_ps_stats st;
	struct ia_hdr h;
	int n = 0;

	/*
	 * Every worker's pieces in order, one worker far ahead of the others:
	 * nothing shows a loss. Chunk 2 waits for worker 3, whose later pieces
	 * there are none.
	 */
	for (uint32_t w = 1; w <= 3; w++)
		for (uint32_t s = 0; s < NCH; s++)
			if (s != 2 || w != 3)
				SEND(s, w, 0);
	/*
	 * The two results (a second each: a loaded host once took more than
	 * the 50 ms this waited at first), then nothing else, NACKs above all.
	 */
	while (n < 2 && recv_msg(self->down, 1000, &h) > 0) {
		EXPECT_EQ(0, h.flags & IA_F_NACK);
		n++;
	}
	while (recv_msg(self->down, 50, &h) > 0) {
		EXPECT_EQ(0, h.flags & IA_F_NACK);
		n++;
	}
	EXPECT_EQ(2, n);
	SEND(2, 3, 0);
	pthread_join(self->th, NULL);
	ASSERT_EQ(0, self->r.ret) TH_LOG("%s", self->r.err);
	ia_ps_stats(self->r.ps, &st);
	EXPECT_EQ(0, st.nacks);
	EXPECT_EQ(NCH, st.results);
}

/*
 * A worker (id 7) with a 300 ms timer: a NACK naming it, or a switch (whose
 * aggregate may hold its contribution), makes it resend at once (no timer
 * resend), one naming only others does not, only chunks in flight are
 * resent, and a NACK is never taken for a result.
 */
TEST(worker_resends_on_nack)
{
	struct ia_worker_cfg cfg = {
		.job = JOB, .id = 7, .addr = lo(5), .ps = lo(4), .chunk = NE, .window = 1,
		.timeout_ms = 300,
	};
	struct ia_worker_stats st;
	struct ia_hdr h;
	int32_t vec[NE * NCH] = { 0 };
	struct worker_run r = { .vec = vec, .n = NE * NCH };
	pthread_t th;
	uint16_t port = 20000 + (getpid() + 1) % 20000;
	const uint32_t others[2] = { 6, 8 };
	const uint32_t mine[NCH][2] = { { 6, 7 }, { 8, IA_SENDER_SWITCH | 3 }, { 7, 7 } };
	int ps;

	cfg.port = port;
	ps = worker_start(&cfg, &r, &th);
	ASSERT_LE(0, ps) TH_LOG("%s", r.err);
	for (uint32_t s = 0; s < NCH; s++) {
		ASSERT_LT(0, recv_msg(ps, 1000, &h));
		ASSERT_EQ(s, ntohl(h.seq));
		EXPECT_EQ(0, h.flags & IA_F_RETX);
		/* Later than a NACK that crossed this send could be. */
		usleep(5000);
		/* A NACK of a chunk not sent yet is ignored, one of others too. */
		ASSERT_EQ(0, send_nack(ps, 5, port, s + 1, mine[s], 2));
		ASSERT_EQ(0, send_nack(ps, 5, port, s, others, 2));
		EXPECT_EQ(-ETIMEDOUT, recv_msg(ps, 50, &h)) TH_LOG("chunk %u resent", s);
		ASSERT_EQ(0, send_nack(ps, 5, port, s, mine[s], 2));
		ASSERT_LT(0, recv_msg(ps, 250, &h)) TH_LOG("chunk %u: no resend on a NACK", s);
		EXPECT_EQ(s, ntohl(h.seq));
		EXPECT_EQ(IA_F_RETX, h.flags & IA_F_RETX);
		ASSERT_EQ(0, send_msg(ps, 5, port, IA_MSG_RESULT, s, IA_SENDER_DEST, 1, 0, 9));
	}
	pthread_join(th, NULL);
	ASSERT_EQ(0, r.ret) TH_LOG("%s", r.err);
	ia_worker_stats(r.w, &st);
	EXPECT_EQ(NCH, st.nacks);
	EXPECT_EQ(NCH, st.retx);
	EXPECT_EQ(0, st.timeouts);
	EXPECT_EQ(NCH, st.results);
	for (int i = 0; i < NE * NCH; i++)
		EXPECT_EQ(9, r.vec[i]);
	ia_worker_close(r.w);
	close(ps);
}

/*
 * With no result at all, a worker (window 3, 50 ms timer) resends by timer
 * only the newest chunk in flight (a probe) and the first (the one its
 * window waits for); the middle one, sent once, waits for the backstop (8
 * timers, 400 ms) and is found by RACK once the probe's result comes.
 * Short timers for every chunk sent once made storms: a worker waiting for
 * another's recovery resent a whole window of chunks that had lost nothing.
 */
TEST(worker_probes_newest_chunk)
{
	struct ia_worker_cfg cfg = {
		.job = JOB, .id = 7, .addr = lo(5), .ps = lo(4), .chunk = NE, .window = NCH,
		.timeout_ms = 50,
	};
	struct ia_worker_stats st;
	struct ia_hdr h;
	int32_t vec[NE * NCH] = { 0 };
	struct worker_run r = { .vec = vec, .n = NE * NCH };
	pthread_t th;
	uint16_t port = 20000 + (getpid() + 2) % 20000;
	uint64_t until, now;
	int ps, probes = 0, firsts = 0;

	cfg.port = port;
	ps = worker_start(&cfg, &r, &th);
	ASSERT_LE(0, ps) TH_LOG("%s", r.err);
	for (uint32_t s = 0; s < NCH; s++) {
		ASSERT_LT(0, recv_msg(ps, 1000, &h));
		ASSERT_EQ(s, ntohl(h.seq));
	}
	/* 250 ms of silence (the backstop is 400 ms): never the middle chunk. */
	until = ia_io_now_ns() + 250000000ull;
	while ((now = ia_io_now_ns()) < until &&
	       recv_msg(ps, (until - now) / 1000000 + 1, &h) > 0) {
		EXPECT_NE(1, ntohl(h.seq)) TH_LOG("the middle chunk resent by timer");
		EXPECT_EQ(IA_F_RETX, h.flags & IA_F_RETX);
		probes += ntohl(h.seq) == NCH - 1;
		firsts += ntohl(h.seq) == 0;
	}
	EXPECT_LE(1, probes);
	EXPECT_LE(1, firsts);
	/*
	 * The probe's result: the middle one is lost for RACK, resent at once
	 * (a resend by the backstop instead would count in timeouts_fresh).
	 */
	ASSERT_EQ(0, send_msg(ps, 5, port, IA_MSG_RESULT, NCH - 1, IA_SENDER_DEST, 1, 0, 9));
	do {
		ASSERT_LT(0, recv_msg(ps, 1000, &h)) TH_LOG("no resend after the probe's result");
	} while (ntohl(h.seq) != 1);
	for (uint32_t s = 0; s < NCH - 1; s++)
		ASSERT_EQ(0, send_msg(ps, 5, port, IA_MSG_RESULT, s, IA_SENDER_DEST, 1, 0, 9));
	pthread_join(th, NULL);
	ASSERT_EQ(0, r.ret) TH_LOG("%s", r.err);
	ia_worker_stats(r.w, &st);
	/* The first timer resends of chunks 0 and 2; the middle one's resend was RACK's. */
	EXPECT_EQ(2, st.timeouts_fresh);
	EXPECT_EQ(NCH, st.results);
	ia_worker_close(r.w);
	close(ps);
}

/*
 * A resent chunk's wait follows the answers to resends, not only the
 * shortest round trip: results that waited 15 ms for the other workers
 * (min_rtt 15 ms) would space a resent chunk's resends 30-60 ms apart,
 * while a result lost on the way down is answered from a blue switch
 * within a millisecond. Window 1, floor 2 ms: chunk 0's result after
 * 15 ms (its timer before any sample: 20 ms), chunk 1's resend answered
 * at once (flagged RETX), then chunk 2's resends come 2 answer_rtt (the
 * floor) apart, doubled once.
 */
TEST(worker_resent_wait_follows_answers)
{
	struct ia_worker_cfg cfg = {
		.job = JOB, .id = 7, .addr = lo(5), .ps = lo(4), .chunk = NE, .window = 1,
		.timeout_ms = 2,
	};
	struct ia_worker_stats st;
	struct ia_hdr h;
	int32_t vec[NE * NCH] = { 0 };
	struct worker_run r = { .vec = vec, .n = NE * NCH };
	pthread_t th;
	uint16_t port = 20000 + (getpid() + 3) % 20000;
	uint64_t t1;
	int ps;

	cfg.port = port;
	ps = worker_start(&cfg, &r, &th);
	ASSERT_LE(0, ps) TH_LOG("%s", r.err);
	ASSERT_LT(0, recv_msg(ps, 1000, &h));
	ASSERT_EQ(0, ntohl(h.seq));
	usleep(15000);
	ASSERT_EQ(0, send_msg(ps, 5, port, IA_MSG_RESULT, 0, IA_SENDER_DEST, 1, 0, 9));
	ASSERT_LT(0, recv_msg(ps, 1000, &h));
	ASSERT_EQ(1, ntohl(h.seq));
	EXPECT_EQ(0, h.flags & IA_F_RETX);
	ASSERT_LT(0, recv_msg(ps, 1000, &h)) TH_LOG("chunk 1 never resent");
	ASSERT_EQ(1, ntohl(h.seq));
	EXPECT_EQ(IA_F_RETX, h.flags & IA_F_RETX);
	ASSERT_EQ(0, send_msg(ps, 5, port, IA_MSG_RESULT, 1, IA_SENDER_DEST, 1, IA_F_RETX, 9));
	ASSERT_LT(0, recv_msg(ps, 1000, &h));
	ASSERT_EQ(2, ntohl(h.seq));
	ASSERT_LT(0, recv_msg(ps, 1000, &h)) TH_LOG("chunk 2 never resent");
	ASSERT_EQ(2, ntohl(h.seq));
	t1 = ia_io_now_ns();
	/* 2 ms doubled once: 4 ms (2 min_rtt would be 30, doubled 60). */
	ASSERT_LT(0, recv_msg(ps, 1000, &h));
	EXPECT_EQ(2, ntohl(h.seq));
	EXPECT_GT(25000000ull, ia_io_now_ns() - t1) TH_LOG("resent after %llu ms",
		(unsigned long long)(ia_io_now_ns() - t1) / 1000000);
	ASSERT_EQ(0, send_msg(ps, 5, port, IA_MSG_RESULT, 2, IA_SENDER_DEST, 1, IA_F_RETX, 9));
	pthread_join(th, NULL);
	ASSERT_EQ(0, r.ret) TH_LOG("%s", r.err);
	ia_worker_stats(r.w, &st);
	EXPECT_LE(14000, st.min_rtt_us);
	EXPECT_GT(10000, st.answer_rtt_us);
	EXPECT_LT(0, st.answer_rtt_us);
	EXPECT_EQ(NCH, st.results);
	ia_worker_close(r.w);
	close(ps);
}

TEST_HARNESS_MAIN
