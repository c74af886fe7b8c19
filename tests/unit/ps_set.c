// SPDX-License-Identifier: GPL-2.0
/*
 * The PS of a PS job merges by member set (docs/memory.md, "Tail
 * aggregation and exactly-once"): raw contributions, flushed partials with
 * a set trailer and complete aggregates of tail switches, each merged only
 * if disjoint from what the chunk holds. Hand-made messages on loopback.
 */
#include <errno.h>
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

#define JOB	31
#define NE	4
#define SW_S	(IA_SENDER_SWITCH | 5)	/* a tail switch over ranks 3, 4 */
#define SW_T	(IA_SENDER_SWITCH | 6)	/* the top tail switch, every rank */

static const struct ia_sender members[5] = {
	{ 1, 1 }, { 2, 1 }, { 3, 1 }, { SW_S, 2 }, { SW_T, 5 },
};
static const uint64_t sets[5] = { 1, 2, 4, 0x18, 0x1f };

/* Sends one message of chunk 0: vals, and a set trailer if set != 0. */
static int send_piece(int fd, uint16_t port, uint8_t type, uint32_t sender, uint32_t nw,
		      uint64_t set, const int32_t *vals, size_t cut)
{
	uint8_t buf[IA_IO_MSG_MAX] __attribute__((aligned(4)));
	size_t len = IA_HDR_LEN + 4 * NE;
	uint32_t t[2];

	ia_hdr_fill((struct ia_hdr *)buf, type, JOB, 0, sender, nw, NE, set ? IA_F_SET : 0);
	ia_io_payload_put(buf + IA_HDR_LEN, vals, NE);
	if (set) {
		t[0] = htonl(set >> 32);
		t[1] = htonl((uint32_t)set);
		memcpy(buf + len, t, 8);
		len += 8;
	}
	return send_to(fd, 1, port, buf, len - cut);
}

FIXTURE(ps) {
	struct ps_run r;
	pthread_t th;
	int fd;
	uint16_t port;
	int32_t v[6][NE], want[NE];
};

FIXTURE_SETUP(ps)
{
	struct ia_ps_cfg cfg = {
		.job = JOB, .id = IA_SENDER_DEST, .nworkers = 5, .nelem = NE,
		.addr = lo(1), .down = lo(2), .nmembers = 5, .members = members, .sets = sets,
		.linger_ms = 0,
	};
	int i, e;

	/* A port of this process's own: tests of other trees may run at once. */
	self->port = 20000 + getpid() % 20000;
	cfg.port = self->port;
	ASSERT_EQ(0, ia_ps_open(&cfg, &self->r.ps, self->r.err, sizeof(self->r.err)))
		TH_LOG("%s", self->r.err);
	self->fd = bound(3, 0);
	ASSERT_LE(0, self->fd);
	for (i = 0; i < 6; i++)
		for (e = 0; e < NE; e++)
			self->v[i][e] = (int32_t)(0x7fff0000u + 977u * i + e);
	memset(self->want, 0, sizeof(self->want));
	ASSERT_EQ(0, pthread_create(&self->th, NULL, ps_thread, &self->r));
}

FIXTURE_TEARDOWN(ps)
{
	close(self->fd);
	ia_ps_close(self->r.ps);
}

static void add(int32_t *want, const int32_t *v)
{
	int e;

	for (e = 0; e < NE; e++)
		want[e] = (int32_t)((uint32_t)want[e] + (uint32_t)v[e]);
}

#define PIECE(type, sender, nw, set, i) \
	ASSERT_EQ(0, send_piece(self->fd, self->port, type, sender, nw, set, self->v[i], 0))

/* Joins the PS and checks the one chunk's result. */
#define DONE()									\
	do {									\
		pthread_join(self->th, NULL);					\
		ASSERT_EQ(0, self->r.ret) TH_LOG("%s", self->r.err);		\
		ASSERT_EQ(0, memcmp(self->want, ia_ps_result(self->r.ps), sizeof(self->want))); \
		ia_ps_stats(self->r.ps, &st);					\
	} while (0)

TEST_F(ps, merges_pieces_by_set)
{
	struct ia_ps_stats st;

	PIECE(IA_MSG_AGG, SW_S, 1, 0x08, 0);	/* flushed: rank 3 */
	PIECE(IA_MSG_CONTRIB, 1, 1, 0, 1);
	PIECE(IA_MSG_CONTRIB, 3, 1, 0, 2);
	PIECE(IA_MSG_AGG, SW_T, 2, 0x12, 3);	/* flushed higher up: ranks 1, 4 */
	add(self->want, self->v[0]);
	add(self->want, self->v[1]);
	add(self->want, self->v[2]);
	add(self->want, self->v[3]);
	DONE();
	ASSERT_EQ(2, st.pieces);
	ASSERT_EQ(2, st.contrib);
	ASSERT_EQ(2, st.agg);
	ASSERT_EQ(0, st.dup);
	ASSERT_EQ(0, st.overlap);
	ASSERT_EQ(1, st.done);
}

/* A subset is a duplicate, a partial overlap is dropped whole; raw pieces fill the gap. */
TEST_F(ps, duplicate_and_overlap)
{
	struct ia_ps_stats st;

	PIECE(IA_MSG_AGG, SW_T, 2, 0x03, 0);	/* ranks 0, 1 */
	PIECE(IA_MSG_CONTRIB, 1, 1, 0, 1);	/* rank 0 again: dup */
	PIECE(IA_MSG_AGG, SW_T, 2, 0x06, 2);	/* ranks 1, 2: overlap */
	PIECE(IA_MSG_CONTRIB, 3, 1, 0, 3);	/* rank 2, raw (its retransmission) */
	PIECE(IA_MSG_AGG, SW_S, 2, 0, 4);	/* S complete: ranks 3, 4 */
	add(self->want, self->v[0]);
	add(self->want, self->v[3]);
	add(self->want, self->v[4]);
	DONE();
	ASSERT_EQ(1, st.dup);
	ASSERT_EQ(1, st.overlap);
	ASSERT_EQ(1, st.pieces);
}

/*
 * A partial overlapping pieces merged before is split if each of them lies
 * wholly inside it: their values subtracted, the rest merged (a member's
 * retransmission came raw, then the tail flushed the partial holding it).
 * One straddling a piece merged before cannot be split and is dropped.
 */
TEST_F(ps, overlap_split_by_pieces_inside)
{
	int32_t p[NE];
	struct ia_ps_stats st;

	PIECE(IA_MSG_CONTRIB, 1, 1, 0, 0);	/* rank 0, raw */
	/* T's partial of ranks 0, 1, 2: less rank 0's piece, ranks 1, 2 merged. */
	memset(p, 0, sizeof(p));
	add(p, self->v[0]);
	add(p, self->v[1]);
	add(p, self->v[2]);
	ASSERT_EQ(0, send_piece(self->fd, self->port, IA_MSG_AGG, SW_T, 3, 0x07, p, 0));
	/* T's partial of ranks 2, 3 straddles the piece of ranks 1, 2: dropped. */
	memset(p, 0, sizeof(p));
	add(p, self->v[2]);
	add(p, self->v[5]);
	ASSERT_EQ(0, send_piece(self->fd, self->port, IA_MSG_AGG, SW_T, 2, 0x0c, p, 0));
	PIECE(IA_MSG_AGG, SW_S, 2, 0, 4);	/* S complete: ranks 3, 4 */
	add(self->want, self->v[0]);
	add(self->want, self->v[1]);
	add(self->want, self->v[2]);
	add(self->want, self->v[4]);
	DONE();
	ASSERT_EQ(1, st.split);
	ASSERT_EQ(1, st.overlap);
	ASSERT_EQ(1, st.pieces);
	ASSERT_EQ(1, st.done);
}

TEST_F(ps, validation)
{
	struct ia_ps_stats st;

	PIECE(IA_MSG_CONTRIB, 1, 1, 0x02, 0);	/* a worker naming another rank */
	PIECE(IA_MSG_AGG, SW_S, 1, 0x18, 0);	/* two ranks, nworkers 1 */
	PIECE(IA_MSG_AGG, SW_S, 1, 0x01, 0);	/* a rank not below S */
	ASSERT_EQ(0, send_piece(self->fd, self->port, IA_MSG_AGG, SW_S, 1, 0x08, self->v[0], 4));
	PIECE(IA_MSG_AGG, SW_T, 5, 0, 5);	/* T complete: all of it */
	add(self->want, self->v[5]);
	DONE();
	ASSERT_EQ(3, st.drop[IA_PS_DROP_MEMBER]);
	ASSERT_EQ(1, st.drop[IA_PS_DROP_SHORT]);
	ASSERT_EQ(1, st.agg);
}

TEST(config)
{
	static const uint64_t bad[5] = { 1, 2, 4, 0x08, 0x1f };	/* S: 2 workers, 1 rank */
	struct ia_ps_cfg cfg = {
		.job = JOB, .nworkers = 5, .nelem = NE, .addr = lo(1), .down = lo(2),
		.port = 20000 + getpid() % 20000, .nmembers = 5, .members = members, .sets = bad,
	};
	struct ia_ps *ps;
	char err[128];

	ASSERT_EQ(-EINVAL, ia_ps_open(&cfg, &ps, err, sizeof(err)));
	cfg.sets = sets;
	cfg.nworkers = 6;	/* 5 ranks */
	ASSERT_EQ(-EINVAL, ia_ps_open(&cfg, &ps, err, sizeof(err)));
}

TEST_HARNESS_MAIN
