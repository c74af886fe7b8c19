// SPDX-License-Identifier: GPL-2.0
/*
 * Collision feedback (docs/cc.md, issue 12): the PS sets IA_F_COLL on a
 * chunk's result when an accepted piece of it collided in a tail, and the
 * worker feeds it to its policy's aggregator window. Hand-made messages and
 * a hand-made PS on loopback.
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
#define NE	4

static int send_contrib(int fd, uint16_t port, uint32_t seq, uint32_t sender, uint8_t flags)
{
	uint8_t buf[IA_IO_MSG_MAX] __attribute__((aligned(4)));
	int32_t v[NE] = { 1, 2, 3, (int32_t)sender };

	ia_hdr_fill((struct ia_hdr *)buf, IA_MSG_CONTRIB, JOB, seq, sender, 1, NE, flags);
	ia_io_payload_put(buf + IA_HDR_LEN, v, NE);
	return send_to(fd, 1, port, buf, IA_HDR_LEN + 4 * NE);
}

/* A PS on 127.0.0.1 (started by PS_START), a sender on .3, its results down to .2. */
FIXTURE(ps) {
	struct ia_ps_cfg cfg;
	struct ps_run r;
	pthread_t th;
	int tx, rx;
	uint16_t port;
};

FIXTURE_SETUP(ps)
{
	self->port = 20000 + getpid() % 20000;
	self->cfg = (struct ia_ps_cfg){ .job = JOB, .id = IA_SENDER_DEST, .chunk = NE,
					.addr = lo(1), .down = lo(2), .port = self->port,
					.linger_ms = 200 };
	self->tx = bound(3, self->port);
	self->rx = bound(2, self->port);
	ASSERT_LE(0, self->tx);
	ASSERT_LE(0, self->rx);
}

FIXTURE_TEARDOWN(ps)
{
	ia_ps_close(self->r.ps);
	close(self->tx);
	close(self->rx);
}

#define PS_START()									\
	do {										\
		ASSERT_EQ(0, ia_ps_open(&self->cfg, &self->r.ps, self->r.err,		\
					sizeof(self->r.err)))				\
			TH_LOG("%s", self->r.err);					\
		ASSERT_EQ(0, pthread_create(&self->th, NULL, ps_thread, &self->r));	\
	} while (0)

#define PS_JOIN()								\
	do {									\
		pthread_join(self->th, NULL);					\
		ASSERT_EQ(0, self->r.ret) TH_LOG("%s", self->r.err);		\
	} while (0)

/* Receives n results on rx, chunk seq's flags in flags[seq]: 0 or -errno. */
static int results(int rx, uint8_t *flags, uint32_t n)
{
	uint8_t buf[IA_IO_MSG_MAX];
	const struct ia_hdr *h = (const struct ia_hdr *)buf;

	for (uint32_t got = 0; got < n; got++) {
		struct pollfd p = { rx, POLLIN, 0 };

		if (poll(&p, 1, 5000) != 1)
			return -ETIMEDOUT;
		if (recv(rx, buf, sizeof(buf), 0) != IA_HDR_LEN + 4 * NE ||
		    h->type != IA_MSG_RESULT || ntohl(h->seq) >= n)
			return -EBADMSG;
		flags[ntohl(h->seq)] = h->flags;
	}
	return 0;
}

/* The PS reflects collisions as it reflects marks: per chunk, from accepted pieces only. */
TEST_F(ps, reflects_collisions)
{
	uint8_t flags[3] = { 0xff, 0xff, 0xff };
	struct ia_ps_stats st;

	self->cfg.nworkers = 2;
	self->cfg.nelem = 3 * NE;
	PS_START();
	ASSERT_EQ(0, send_contrib(self->tx, self->port, 0, 1, 0));
	/* A duplicate: not accepted. */
	ASSERT_EQ(0, send_contrib(self->tx, self->port, 0, 1, IA_F_COLL));
	ASSERT_EQ(0, send_contrib(self->tx, self->port, 0, 2, 0));
	ASSERT_EQ(0, send_contrib(self->tx, self->port, 1, 1, IA_F_COLL));
	ASSERT_EQ(0, send_contrib(self->tx, self->port, 1, 2, 0));
	ASSERT_EQ(0, send_contrib(self->tx, self->port, 2, 1, IA_F_MARK));
	ASSERT_EQ(0, send_contrib(self->tx, self->port, 2, 2, IA_F_COLL | IA_F_MARK));
	ASSERT_EQ(0, results(self->rx, flags, 3));
	PS_JOIN();
	EXPECT_EQ(0, flags[0]);
	EXPECT_EQ(IA_F_COLL, flags[1]);
	EXPECT_EQ(IA_F_COLL | IA_F_MARK, flags[2]);
	ia_ps_stats(self->r.ps, &st);
	EXPECT_EQ(2, st.colls);
	EXPECT_EQ(2, st.marks);
	EXPECT_EQ(1, st.dup);
}

/*
 * A hand-made PS: each contribution's result at once; for chunks in [lo, hi)
 * with IA_F_COLL, or sent with IP CE if ce. Counts contributions that came
 * with ECT(0).
 */
struct fake_ps {
	int fd;
	uint32_t coll_lo, coll_hi, nchunks;
	bool ce;
	uint32_t answered, ect, bypass;
	uint64_t bypassed;	/* chunks (seq < 64) that came flagged IA_F_BYPASS */
};

static void *fake_thread(void *arg)
{
	uint8_t buf[IA_IO_MSG_MAX] __attribute__((aligned(4)));
	uint8_t ctl[CMSG_SPACE(sizeof(int))];
	struct fake_ps *f = arg;
	struct sockaddr_in from;
	ssize_t n;

	while (f->answered < f->nchunks) {
		struct pollfd p = { f->fd, POLLIN, 0 };
		struct ia_hdr *h = (struct ia_hdr *)buf;
		struct iovec iov = { buf, sizeof(buf) };
		struct msghdr m = { .msg_name = &from, .msg_namelen = sizeof(from),
				    .msg_iov = &iov, .msg_iovlen = 1,
				    .msg_control = ctl, .msg_controllen = sizeof(ctl) };
		struct cmsghdr *c;
		bool in, ect = false;
		int tos;

		if (poll(&p, 1, 5000) != 1)
			break;
		n = recvmsg(f->fd, &m, 0);
		if (n < IA_HDR_LEN || h->type != IA_MSG_CONTRIB)
			continue;
		for (c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c))
			if (c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_TOS)
				ect = (*CMSG_DATA(c) & IA_IO_ECN_MASK) == IA_IO_ECT0;
		f->ect += ect;
		f->bypass += !!(h->flags & IA_F_BYPASS);
		if (h->flags & IA_F_BYPASS && ntohl(h->seq) < 64)
			f->bypassed |= 1ull << ntohl(h->seq);
		in = ntohl(h->seq) >= f->coll_lo && ntohl(h->seq) < f->coll_hi;
		h->type = IA_MSG_RESULT;
		h->flags = in && !f->ce ? IA_F_COLL : 0;
		tos = in && f->ce ? IA_IO_CE : 0;
		setsockopt(f->fd, IPPROTO_IP, IP_TOS, &tos, sizeof(tos));
		if (sendto(f->fd, buf, n, 0, (struct sockaddr *)&from, sizeof(from)) == n)
			f->answered++;
	}
	return NULL;
}

FIXTURE(wk) {
	struct fake_ps f;
	pthread_t th;
	struct ia_worker_cfg cfg;
	struct ia_worker_stats st;
	int32_t v[64 * NE];
};

FIXTURE_SETUP(wk)
{
	uint16_t port = 20000 + getpid() % 20000;

	self->f = (struct fake_ps){ .coll_lo = 16, .coll_hi = 32, .nchunks = 64 };
	self->f.fd = bound(1, port);
	ASSERT_LE(0, self->f.fd);
	ASSERT_EQ(0, setsockopt(self->f.fd, IPPROTO_IP, IP_RECVTOS, &(int){ 1 }, sizeof(int)));
	/* A long timer: every chunk is sent once, results come in chunk order. */
	self->cfg = (struct ia_worker_cfg){ .job = JOB, .id = 1, .addr = lo(4), .ps = lo(1),
					    .port = port, .chunk = NE, .window = 8,
					    .timeout_ms = 2000 };
	for (size_t i = 0; i < sizeof(self->v) / sizeof(self->v[0]); i++)
		self->v[i] = i;
}

FIXTURE_TEARDOWN(wk)
{
	close(self->f.fd);
}

static int run_worker(FIXTURE_DATA(wk) *self, char *err, size_t errlen)
{
	struct ia_worker *w;
	int ret;

	if (pthread_create(&self->th, NULL, fake_thread, &self->f))
		return -errno;
	ret = ia_worker_open(&self->cfg, &w, err, errlen);
	if (!ret) {
		ret = ia_worker_run(w, self->v, self->v, sizeof(self->v) / sizeof(self->v[0]), err,
				    errlen);
		ia_worker_stats(w, &self->st);
		ia_worker_close(w);
	}
	pthread_join(self->th, NULL);
	return ret;
}

/*
 * a2tp, window 8, 64 results in 8 rounds of 8, rounds 3 and 4 all collided
 * (docs/cc.md, A2TP's rule, beta from 0, in 1/1024): beta 128 > 102, awnd
 * floor(8 * 1920 / 1946) = 7; beta 128 - 16 + 1024/7 = 258, awnd
 * floor(7 * 1790 / 1946) = 6; then +1 per round, at most the window: 7, 8, 8, 8.
 * The link window never shrinks (no marks).
 */
TEST_F(wk, a2tp_aggregator_window_follows_collisions)
{
	char err[128] = "";

	self->cfg.cc = IA_CC_A2TP;
	ASSERT_EQ(0, run_worker(self, err, sizeof(err))) TH_LOG("%s", err);
	EXPECT_EQ(64, self->st.results);
	EXPECT_EQ(16, self->st.colls);
	EXPECT_EQ(0, self->st.retx);
	EXPECT_EQ(64, self->f.ect);	/* every contribution left ECT(0) */
	EXPECT_EQ(0, self->st.marks);
	EXPECT_EQ(6, self->st.min_awnd);
	EXPECT_EQ(8, self->st.awnd);
	EXPECT_EQ(2, self->st.acuts);
	EXPECT_EQ(8, self->st.cwnd);
	EXPECT_EQ(8, self->st.min_cwnd);
	EXPECT_EQ(0, self->st.cuts);
	/* An INA job never bypasses its head, whatever the aggregator window. */
	EXPECT_EQ(0, self->st.bypassed);
	EXPECT_EQ(0, self->f.bypass);
}

/*
 * A PS job keeps at most awnd chunks in flight in switch memory: once the
 * collisions cut awnd below the window, the rest of its first sends are
 * flagged IA_F_BYPASS (and only first sends: the fake loses nothing).
 */
TEST_F(wk, ps_job_bypasses_beyond_the_aggregator_window)
{
	char err[128] = "";

	self->cfg.cc = IA_CC_A2TP;
	self->cfg.ps_job = true;
	ASSERT_EQ(0, run_worker(self, err, sizeof(err))) TH_LOG("%s", err);
	EXPECT_EQ(64, self->st.results);
	EXPECT_EQ(0, self->st.retx);
	EXPECT_EQ(6, self->st.min_awnd);
	EXPECT_LT(0, self->st.bypassed);
	EXPECT_GT(64 - 24, self->st.bypassed);	/* the first 24 went before any cut */
	EXPECT_EQ(self->st.bypassed, self->f.bypass);
}

/*
 * One decision per chunk (docs/cc.md): flexina's PS job with window 8 and
 * its aggregator window cut to 2-6 by the collisions of chunks 16-31 puts
 * in memory at least ceil(16 * 2 / 8) = 4 ranks of 16: the chunks whose
 * sequence number is a multiple of 4 never bypass, whatever the worker has
 * in flight, so its other workers (same windows) put them in the tail too.
 * By the count of chunks in flight in memory (the rule before) they did.
 */
TEST_F(wk, flexina_ps_job_bypasses_by_chunk)
{
	char err[128] = "";

	self->cfg.cc = IA_CC_FLEXINA;
	self->cfg.ps_job = true;
	ASSERT_EQ(0, run_worker(self, err, sizeof(err))) TH_LOG("%s", err);
	EXPECT_EQ(2, self->st.min_awnd);
	EXPECT_LT(0, self->st.bypassed);
	EXPECT_EQ(self->st.bypassed, self->f.bypass);
	EXPECT_EQ(0, self->f.bypassed & 0x1111111111111111ull)
		TH_LOG("bypassed %#llx", (unsigned long long)self->f.bypassed);
}

/* flexina's PS job follows the same aggregator window; its INA job ignores collisions. */
TEST_F(wk, flexina_ps_job_cuts_ina_job_does_not)
{
	char err[128] = "";

	self->cfg.cc = IA_CC_FLEXINA;
	self->cfg.ps_job = true;
	ASSERT_EQ(0, run_worker(self, err, sizeof(err))) TH_LOG("%s", err);
	EXPECT_EQ(2, self->st.min_awnd);
	EXPECT_EQ(6, self->st.awnd);
	self->cfg.ps_job = false;
	self->f.answered = 0;
	ASSERT_EQ(0, run_worker(self, err, sizeof(err))) TH_LOG("%s", err);
	EXPECT_EQ(16, self->st.colls);
	EXPECT_EQ(8, self->st.min_awnd);
	EXPECT_EQ(0, self->st.acuts);
}

/* fixed counts collisions and ignores them. */
TEST_F(wk, fixed_counts_and_ignores)
{
	char err[128] = "";

	ASSERT_EQ(0, run_worker(self, err, sizeof(err))) TH_LOG("%s", err);
	EXPECT_EQ(16, self->st.colls);
	EXPECT_EQ(8, self->st.min_awnd);
	EXPECT_EQ(8, self->st.min_cwnd);
	EXPECT_EQ(0, self->st.acuts);
}

/*
 * Results arriving CE (a qdisc's mark on the way down) are marks: atp
 * halves once in each of rounds 3 and 4 (8 -> 4 -> 2, then +1 per round of
 * 2, 3, 4, ... results), counted as marks and as ce. The window the
 * worker publishes (ia_worker_cfg.window_now) is its last.
 */
TEST_F(wk, ce_results_are_marks)
{
	volatile uint32_t window_now = 0;
	char err[128] = "";

	self->cfg.cc = IA_CC_ATP;
	self->cfg.window_now = &window_now;
	self->f.ce = true;
	ASSERT_EQ(0, run_worker(self, err, sizeof(err))) TH_LOG("%s", err);
	/* What the worker published for its job's lends: its window as it ended. */
	EXPECT_EQ(self->st.cwnd, window_now);
	EXPECT_EQ(16, self->st.ce);
	EXPECT_EQ(16, self->st.marks);
	EXPECT_EQ(0, self->st.colls);
	EXPECT_LE(2, self->st.cuts);
	EXPECT_GE(4, self->st.min_cwnd);
}

/*
 * A job's runs share cfg.path: a2tp's window (A2TP's client keeps its
 * windows across tensors), cut by marks at the end of the first run, is where
 * the second (no marks) begins, and it grows from there; the cuts counted are
 * each run's own. A path of another policy is ignored, and atp restarts at
 * the full window each run (ATP's client: a new CC_manager per tensor).
 */
TEST_F(wk, runs_go_on_from_the_path)
{
	struct ia_worker_path path = { 0 };
	char err[128] = "";
	uint32_t end;

	self->cfg.cc = IA_CC_A2TP;
	self->cfg.path = &path;
	self->f.ce = true;
	/* Rounds 7 and 8 marked (8 -> 7 -> 6), the last result clean: no mark carried. */
	self->f.coll_lo = 48;
	self->f.coll_hi = 63;
	ASSERT_EQ(0, run_worker(self, err, sizeof(err))) TH_LOG("%s", err);
	end = self->st.cwnd;
	EXPECT_GT(8, end);
	EXPECT_LE(1, self->st.cuts);
	EXPECT_TRUE(path.valid);
	EXPECT_EQ(end, path.cc.cwnd);
	EXPECT_LT(0, path.min_rtt);

	self->f = (struct fake_ps){ .fd = self->f.fd, .nchunks = 64 };
	ASSERT_EQ(0, run_worker(self, err, sizeof(err))) TH_LOG("%s", err);
	EXPECT_EQ(end, self->st.min_cwnd);
	EXPECT_LT(end, self->st.cwnd);
	EXPECT_EQ(0, self->st.cuts);
	EXPECT_EQ(0, self->st.marks);

	/* Another policy's path: the run starts at the full window. */
	path.cc.cwnd = 2;
	self->cfg.cc = IA_CC_ATP;
	self->f.answered = 0;
	ASSERT_EQ(0, run_worker(self, err, sizeof(err))) TH_LOG("%s", err);
	EXPECT_EQ(8, self->st.min_cwnd);
	EXPECT_EQ(IA_CC_ATP, path.cc.cfg.policy);
	/* atp's own path, its window cut by marks at the end of a run ... */
	self->f = (struct fake_ps){ .fd = self->f.fd, .nchunks = 64, .ce = true,
				    .coll_lo = 48, .coll_hi = 64 };
	ASSERT_EQ(0, run_worker(self, err, sizeof(err))) TH_LOG("%s", err);
	EXPECT_GT(8, path.cc.cwnd);
	/* ... and the next run starts at the full window again. */
	self->f = (struct fake_ps){ .fd = self->f.fd, .nchunks = 64 };
	ASSERT_EQ(0, run_worker(self, err, sizeof(err))) TH_LOG("%s", err);
	EXPECT_EQ(8, self->st.min_cwnd);
	EXPECT_EQ(0, self->st.cuts);
}

/* A contribution arriving CE at the PS marks its chunk's result, as IA_F_MARK does. */
TEST_F(ps, takes_ce_as_a_mark)
{
	uint8_t flags[2] = { 0xff, 0xff };
	struct ia_ps_stats st;
	int tos;

	self->cfg.nworkers = 1;
	self->cfg.nelem = 2 * NE;
	PS_START();
	tos = IA_IO_ECT0;
	ASSERT_EQ(0, setsockopt(self->tx, IPPROTO_IP, IP_TOS, &tos, sizeof(tos)));
	ASSERT_EQ(0, send_contrib(self->tx, self->port, 0, 1, 0));
	tos = IA_IO_CE;
	ASSERT_EQ(0, setsockopt(self->tx, IPPROTO_IP, IP_TOS, &tos, sizeof(tos)));
	ASSERT_EQ(0, send_contrib(self->tx, self->port, 1, 1, 0));
	ASSERT_EQ(0, results(self->rx, flags, 2));
	PS_JOIN();
	EXPECT_EQ(0, flags[0]);
	EXPECT_EQ(IA_F_MARK, flags[1]);
	ia_ps_stats(self->r.ps, &st);
	EXPECT_EQ(1, st.ce);
	EXPECT_EQ(1, st.marks);
}

TEST_HARNESS_MAIN