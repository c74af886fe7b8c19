// SPDX-License-Identifier: GPL-2.0
/*
 * The worker's round trips and timers (see host_worker.c's top and
 * docs/hosts.md, "Loss recovery"). Times are CLOCK_MONOTONIC nanoseconds.
 */
#include <errno.h>

#include "host_worker_int.h"

void ia_wt_rtt_sample(struct wrun *r, uint64_t rtt)
{
	uint64_t d;

	if (!r->srtt) {
		r->srtt = rtt;
		r->rttvar = rtt / 2;
		r->min_rtt = rtt;
	} else {
		d = rtt > r->srtt ? rtt - r->srtt : r->srtt - rtt;
		r->rttvar = (3 * r->rttvar + d) / 4;
		r->srtt = (7 * r->srtt + rtt) / 8;
		if (rtt < r->min_rtt)
			r->min_rtt = rtt;
	}
	r->rto = r->srtt + 4 * r->rttvar;
	if (r->rto < RTO_MIN_NS)
		r->rto = RTO_MIN_NS;
	if (r->rto > RTO_MAX_NS)
		r->rto = RTO_MAX_NS;
}

static uint64_t at_least_floor(const struct wrun *r, uint64_t t)
{
	return t < r->floor ? r->floor : t;
}

/*
 * Until a loss is found in this run (a hole found by RACK, a NACK, a first
 * result that answers a resend), no wait is shorter than the RTO. The short
 * waits below come from the shortest round trip, taken on an empty path;
 * behind a standing queue (all red: 8 windows of 64 in the root uplink's
 * tbf, 64 ms against a shortest round trip of 1.5 ms) a host stall of 12 ms
 * fired them, every resend then waited 64 ms in the queue while its own
 * timer fired again after 10-40 ms, and results kept paying for more
 * (docs/allreduce.md 6a: 2.2x the messages, 1.5-1.8x the time). A queue
 * keeps the order, so it gives RACK no holes and answers no resend first;
 * loss does, at once.
 */
static uint64_t until_loss_rto(const struct wrun *r, uint64_t t)
{
	return !r->loss_seen && r->srtt && t < r->rto ? r->rto : t;
}

/*
 * The wait for a chunk sent once, from the last result of such a chunk:
 * twice the smoothed round trip (those samples include the wait for the
 * slowest worker, so a queue as long as the window's fits), at most the
 * RTO, and at most FRESH_MIN_RTTS shortest round trips: under loss most
 * samples also include other workers' recoveries and would let a lost
 * chunk at the end wait for seconds.
 */
uint64_t ia_wt_fresh_base(const struct wrun *r)
{
	uint64_t t;

	if (!r->srtt)
		return at_least_floor(r, RTO_INIT_NS);
	t = 2 * r->srtt < r->rto ? 2 * r->srtt : r->rto;
	if (t > FRESH_MIN_RTTS * r->min_rtt)
		t = FRESH_MIN_RTTS * r->min_rtt;
	/* A pause of the host must not look like the loss of a whole window. */
	return at_least_floor(r, until_loss_rto(r, t < RTO_MIN_NS ? RTO_MIN_NS : t));
}

/*
 * The wait for a resent chunk: twice the shortest round trip, what a resend
 * takes on an idle path, or twice the shortest answer to a resend if that
 * is shorter. Not the smoothed RTT: under loss most samples include other
 * workers' recoveries (a result waits for the slowest contribution), and
 * timers grown from them let the worker whose contribution is missing be
 * the slowest to resend it. Even min_rtt holds that wait when this worker
 * is never the last to send a chunk (18 workers on two cores start tens of
 * ms apart: 17-19 ms on Fig. 1 at 10 % loss), while a result lost on the
 * way down is answered from a blue switch within a millisecond. Results
 * clock these resends (worker_recover()), so a loaded host slows them down.
 */
static uint64_t resent_wait(const struct wrun *r)
{
	uint64_t t = r->min_rtt;

	if (!r->srtt)
		return at_least_floor(r, RTO_INIT_NS);
	if (r->answer_rtt && r->answer_rtt < t)
		t = r->answer_rtt;
	return at_least_floor(r, 2 * t);
}

uint64_t ia_wt_resent_base(const struct wrun *r)
{
	return until_loss_rto(r, resent_wait(r));
}

/*
 * When c's timer fires (see the top of the file). Every timer runs from the
 * latest send or the latest result of a chunk sent once, whichever is later:
 * while fresh chunks keep completing the queue drains, and a hole, even a
 * lost resend, is found by RACK; a resend queued behind a full window is
 * not mistaken for a lost one. But the first open chunk's, once resent, runs
 * from its own send and doubles at most once unless in an outage: nothing
 * sent after its resend can reveal its loss (the window is full), and fresh
 * results trickling in pushed it back by tens of ms while every worker
 * waited for it (Fig. 1, 10 % loss).
 *
 * The job's last chunk, sent once, gets the resent chunks' short wait once
 * the window waits for it: nothing is sent after it, so neither RACK nor a
 * probe can find its loss, and a fresh chunk's wait (at least RTO_MIN_NS)
 * was a sixth of a clean run on Fig. 1. Before it is the first open chunk,
 * results of the chunks before it keep coming, and so would timer resends
 * of a chunk merely queued behind them.
 *
 * Any other first open chunk sent once waits the fresh wait from its own
 * send, and then only the resent chunks' wait (at least RTO_MIN_NS: results
 * pause that long on a busy host) after the latest fresh result. Under
 * heavy loss the chunk before it often completes long after it was sent,
 * and restarting its whole fresh wait there made every chunk wait that
 * long in turn, one chunk per 80-190 ms on Fig. 1 at 10 % loss.
 */
uint64_t ia_wt_timer_at(const struct wrun *r, uint64_t idx, uint64_t top)
{
	const struct wchunk *c = &r->ch[idx];
	uint64_t from = r->last_fresh > c->xmit ? r->last_fresh : c->xmit, t;
	bool probe = idx + 1 == top, first = idx == r->lo;

	/* One chunk resent early is no storm: the last keeps the short wait. */
	if (c->sends == 1 && first && idx + 1 == r->nchunks)
		return from + resent_wait(r);
	if (c->sends == 1 && first) {
		uint64_t own = c->xmit + ia_wt_fresh_base(r), after = ia_wt_resent_base(r);

		after = r->last_fresh + (after < RTO_MIN_NS ? RTO_MIN_NS : after);
		return own > after ? own : after;
	}
	if (c->sends == 1)
		return from + (probe ? ia_wt_fresh_base(r) : BACKSTOP * ia_wt_fresh_base(r));
	if (first)
		from = c->xmit;
	t = ia_wt_resent_base(r) << (first && c->stuck <= BACKOFF_FREE && c->tmo > 1 ? 1 : c->tmo);
	return from + (t > RTO_MAX_NS ? RTO_MAX_NS : t);
}

/* The reordering allowance: a quarter of the shortest round trip, at least REO_MIN_NS. */
uint64_t ia_wt_reo(const struct wrun *r)
{
	return r->min_rtt / 4 > REO_MIN_NS ? r->min_rtt / 4 : REO_MIN_NS;
}

/* c's timer fired: its backoff, or -ETIMEDOUT to give up. */
int ia_wt_fired(struct wrun *r, struct wchunk *c, uint64_t now)
{
	/*
	 * Results came since its previous timer resend: the network works and
	 * the chunk waits for a loss elsewhere or missed its result, so its
	 * wait stays short. Only resends with no result at all in between
	 * count towards cfg.retries: a busy network is no reason to give up.
	 */
	if (!c->timer_sent || r->last_progress > c->timer_sent) {
		c->stuck = 0;
		if (c->tmo >= PROGRESS_BACKOFF)
			c->tmo = PROGRESS_BACKOFF - 1;
	}
	if (++c->stuck > r->w->cfg.retries)
		return -ETIMEDOUT;
	if (c->tmo < BACKOFF_MAX && (c->stuck == 1 || c->stuck > BACKOFF_FREE))
		c->tmo++;
	c->timer_sent = now;
	r->w->st.timeouts++;
	r->w->st.timeouts_fresh += c->sends == 1;
	return 0;
}

