// SPDX-License-Identifier: GPL-2.0
/*
 * The worker's round trips and timers (host_wtimer.c, docs/hosts.md "Loss
 * recovery"), hand-computed on a hand-made run state: RFC 6298 samples,
 * the waits of chunks sent once (the probe and the first open one short,
 * the others the backstop), of resent chunks, and the job's last chunk,
 * which once the window waits for it gets the resent chunks' short wait
 * (nothing sent after it can reveal its loss; the fresh wait, at least
 * 10 ms, was a sixth of a clean run on Fig. 1). The first open chunk's
 * fresh wait runs from its own send, not again from each fresh result, and
 * resent chunks wait twice the shortest answer to a resend when that is
 * shorter than the shortest round trip (both collapsed Fig. 1 at 10 %
 * loss into one chunk per 80-190 ms).
 */
#include <errno.h>
#include <string.h>

#pragma GCC diagnostic ignored "-Wsign-compare"
#include "kselftest_harness.h"
#include "host_worker_int.h"

#define MS	1000000ull
#define US	1000ull

/*
 * Four chunks in flight, each sent once at 100 ms, the latest result of a
 * chunk sent once at 101 ms; srtt 8 ms, min_rtt 1 ms, rto 12 ms, floor
 * (cfg.timeout_ms) 2 ms, a loss already found. Fresh wait: min(2 srtt,
 * rto, 8 min_rtt) = 8 ms, raised to RTO_MIN_NS = 10 ms; resent wait:
 * max(floor, 2 min_rtt) = 2 ms.
 */
static void state(struct wrun *r, struct wchunk *ch, uint64_t nchunks)
{
	memset(r, 0, sizeof(*r));
	memset(ch, 0, nchunks * sizeof(*ch));
	r->ch = ch;
	r->nchunks = r->next = nchunks;
	r->srtt = 8 * MS;
	r->rttvar = 1 * MS;
	r->min_rtt = 1 * MS;
	r->rto = 12 * MS;
	r->floor = 2 * MS;
	r->last_fresh = 101 * MS;
	r->loss_seen = true;
	for (uint64_t i = 0; i < nchunks; i++) {
		ch[i].state = CH_INFLIGHT;
		ch[i].sends = 1;
		ch[i].xmit = 100 * MS;
	}
}

TEST(rtt_samples_rfc6298)
{
	struct wrun r;
	struct wchunk ch[1];

	state(&r, ch, 1);
	r.srtt = r.rttvar = r.min_rtt = 0;
	ia_wt_rtt_sample(&r, 10 * MS);
	EXPECT_EQ(10 * MS, r.srtt);
	EXPECT_EQ(5 * MS, r.rttvar);
	EXPECT_EQ(30 * MS, r.rto);
	/* rttvar (3 * 5 + 4) / 4 = 4.75, srtt (7 * 10 + 6) / 8 = 9.5, rto 28.5 ms. */
	ia_wt_rtt_sample(&r, 6 * MS);
	EXPECT_EQ(4750 * US, r.rttvar);
	EXPECT_EQ(9500 * US, r.srtt);
	EXPECT_EQ(28500 * US, r.rto);
	EXPECT_EQ(6 * MS, r.min_rtt);
	/* 1 ms: the RTO stays at least RTO_MIN_NS (10 ms) after many. */
	for (int i = 0; i < 64; i++)
		ia_wt_rtt_sample(&r, 1 * MS);
	EXPECT_EQ(10 * MS, r.rto);
	EXPECT_EQ(1 * MS, r.min_rtt);
}

TEST(waits_of_chunks_sent_once_and_resent)
{
	struct wrun r;
	struct wchunk ch[4];

	state(&r, ch, 4);
	EXPECT_EQ(10 * MS, ia_wt_fresh_base(&r));
	EXPECT_EQ(2 * MS, ia_wt_resent_base(&r));
	/* The probe (the newest): the fresh wait from the latest fresh result, 101 ms. */
	EXPECT_EQ(111 * MS, ia_wt_timer_at(&r, 3, 4));
	/*
	 * The first open one: the fresh wait from its own send at 100 ms (110),
	 * then the resent wait raised to RTO_MIN_NS after the latest fresh
	 * result (111), whichever is later...
	 */
	EXPECT_EQ(111 * MS, ia_wt_timer_at(&r, 0, 4));
	/*
	 * ...and after that only the resent wait (2 ms, raised to RTO_MIN_NS)
	 * after the latest fresh result: a result of the chunk before it at
	 * 130 ms does not restart the fresh wait (min_rtt 5 ms: 40 ms)...
	 */
	r.last_fresh = 130 * MS;
	r.min_rtt = 5 * MS;
	r.srtt = 30 * MS;
	r.rto = 60 * MS;
	EXPECT_EQ(40 * MS, ia_wt_fresh_base(&r));
	EXPECT_EQ(140 * MS, ia_wt_timer_at(&r, 0, 4));
	/* ...as it does the probe's. */
	EXPECT_EQ(170 * MS, ia_wt_timer_at(&r, 3, 4));
	/* A resent wait above RTO_MIN_NS counts whole: min_rtt 8 ms, 16 ms (fresh 30 ms). */
	r.min_rtt = 8 * MS;
	r.srtt = 15 * MS;
	EXPECT_EQ(146 * MS, ia_wt_timer_at(&r, 0, 4));
	r.srtt = 8 * MS;
	r.rto = 12 * MS;
	r.min_rtt = 1 * MS;
	r.last_fresh = 101 * MS;
	/* The others: the backstop, 8 fresh waits. */
	EXPECT_EQ(181 * MS, ia_wt_timer_at(&r, 1, 4));
	EXPECT_EQ(181 * MS, ia_wt_timer_at(&r, 2, 4));
	/* Resent at 104 ms, one timer resend (tmo 1): 2 << 1 ms after it. */
	ch[1].sends = 2;
	ch[1].xmit = 104 * MS;
	ch[1].tmo = 1;
	EXPECT_EQ(108 * MS, ia_wt_timer_at(&r, 1, 4));
	/* From the latest fresh result if that is later. */
	r.last_fresh = 106 * MS;
	EXPECT_EQ(110 * MS, ia_wt_timer_at(&r, 1, 4));
	/* The first open chunk once resent: from its own send, doubled once at most. */
	ch[0].sends = 3;
	ch[0].xmit = 104 * MS;
	ch[0].tmo = 2;
	EXPECT_EQ(108 * MS, ia_wt_timer_at(&r, 0, 4));
	/* ...unless it is in an outage (more than BACKOFF_FREE resends with no result). */
	ch[0].stuck = BACKOFF_FREE + 1;
	EXPECT_EQ(112 * MS, ia_wt_timer_at(&r, 0, 4));
}

TEST(last_chunk_short_wait_once_first_open)
{
	struct wrun r;
	struct wchunk ch[4];

	state(&r, ch, 4);
	/* Chunks before it open: the last one is the probe, the fresh wait. */
	r.lo = 2;
	EXPECT_EQ(111 * MS, ia_wt_timer_at(&r, 3, 4));
	/* The window waits for it: the resent chunks' wait, 2 ms after 101 ms. */
	ch[0].state = ch[1].state = ch[2].state = CH_DONE;
	r.lo = 3;
	EXPECT_EQ(103 * MS, ia_wt_timer_at(&r, 3, 4));
	/* Sent later than the latest fresh result: from its send. */
	ch[3].xmit = 102 * MS;
	EXPECT_EQ(104 * MS, ia_wt_timer_at(&r, 3, 4));
	/* The wait is never below the floor: cfg.timeout_ms 5. */
	r.floor = 5 * MS;
	EXPECT_EQ(107 * MS, ia_wt_timer_at(&r, 3, 4));
	/* Not the job's last chunk (one more unsent): a first open chunk's wait. */
	state(&r, ch, 4);
	r.nchunks = 5;
	r.lo = 3;
	ch[0].state = ch[1].state = ch[2].state = CH_DONE;
	EXPECT_EQ(111 * MS, ia_wt_timer_at(&r, 3, 4));
}

TEST(answers_to_resends_shorten_the_resent_wait)
{
	struct wrun r;
	struct wchunk ch[4];

	state(&r, ch, 4);
	ch[1].sends = 2;
	ch[1].xmit = 104 * MS;
	/* No answer yet: 2 min_rtt = 2 ms after its send. */
	EXPECT_EQ(106 * MS, ia_wt_timer_at(&r, 1, 4));
	/* min_rtt 9 ms (every sample waited for a slower worker): 18 ms. */
	r.min_rtt = 9 * MS;
	EXPECT_EQ(18 * MS, ia_wt_resent_base(&r));
	EXPECT_EQ(122 * MS, ia_wt_timer_at(&r, 1, 4));
	/* An answer to a resend came 1.5 ms after it: 3 ms. */
	r.answer_rtt = 1500 * US;
	EXPECT_EQ(3 * MS, ia_wt_resent_base(&r));
	EXPECT_EQ(107 * MS, ia_wt_timer_at(&r, 1, 4));
	/* Never below the floor (cfg.timeout_ms), never above 2 min_rtt. */
	r.answer_rtt = 100 * US;
	EXPECT_EQ(2 * MS, ia_wt_resent_base(&r));
	r.answer_rtt = 20 * MS;
	EXPECT_EQ(18 * MS, ia_wt_resent_base(&r));
	/* Before any sample: RTO_INIT_NS. */
	r.srtt = 0;
	EXPECT_EQ(RTO_INIT_NS, ia_wt_resent_base(&r));
}

/*
 * Before a loss is found (RACK, a NACK, an answer to a resend), no wait is shorter than the RTO: all
 * red's standing queue (64 ms against a shortest round trip of 1.5 ms) let
 * a 12 ms host stall start a storm of timer resends (docs/allreduce.md 6a).
 */
TEST(no_wait_below_the_rto_until_a_loss)
{
	struct wrun r;
	struct wchunk ch[4];

	state(&r, ch, 4);
	r.loss_seen = false;
	/* srtt 64 ms, rttvar 4 ms: rto 80 ms; min_rtt 1.5 ms (fresh 12 ms, resent 3 ms). */
	r.srtt = 64 * MS;
	r.rttvar = 4 * MS;
	r.rto = 80 * MS;
	r.min_rtt = 1500 * US;
	EXPECT_EQ(80 * MS, ia_wt_fresh_base(&r));
	EXPECT_EQ(80 * MS, ia_wt_resent_base(&r));
	EXPECT_EQ(181 * MS, ia_wt_timer_at(&r, 3, 4));
	ch[1].sends = 2;
	ch[1].xmit = 104 * MS;
	EXPECT_EQ(184 * MS, ia_wt_timer_at(&r, 1, 4));
	/* The job's last chunk, once the window waits for it, keeps the short wait. */
	ch[0].state = ch[1].state = ch[2].state = CH_DONE;
	r.lo = 3;
	EXPECT_EQ(104 * MS, ia_wt_timer_at(&r, 3, 4));
	/* A loss found: the short waits again. */
	r.loss_seen = true;
	EXPECT_EQ(12 * MS, ia_wt_fresh_base(&r));
	EXPECT_EQ(3 * MS, ia_wt_resent_base(&r));
	/* Waits above the RTO stay: before any sample, RTO_INIT_NS. */
	r.loss_seen = false;
	r.srtt = 0;
	EXPECT_EQ(RTO_INIT_NS, ia_wt_fresh_base(&r));
}

TEST_HARNESS_MAIN
