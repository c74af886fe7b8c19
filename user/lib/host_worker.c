// SPDX-License-Identifier: GPL-2.0
/*
 * Worker: sends its vector chunk by chunk and receives the sums, recovering
 * from loss on its own. See host.h and docs/hosts.md ("Loss recovery").
 *
 * - A sliding window: chunk i is sent only while i < lo + cwnd, lo being the
 *   first chunk without a result, so that a blue switch's slot of chunk i
 *   (slot i % window) is never needed for i + window while i is open.
 * - Round-trip times come from chunks sent once (RFC 6298 srtt and rttvar,
 *   and the minimum); cfg.timeout_ms is the floor of every timer.
 * - Holes are found by later results, as RACK does (RFC 8985): every worker
 *   sends fresh chunks in chunk order, so once a chunk first sent after the
 *   latest send of chunk i has its result, i should have had its result too;
 *   a reordering allowance after that, i is lost somewhere (a contribution,
 *   an aggregate or its result) and resent. A resent chunk counts as that
 *   reference too: at heavy loss few chunks complete on their first try.
 * - NACKs: the destination sees every sender's pieces in order and asks
 *   again for a chunk lacking one (host_ps_nack.c); a chunk in flight is
 *   then resent at once, unless sent so recently that the NACK may have
 *   crossed that send.
 * - Timers, for what no later result can reveal (the chunks at the end, a
 *   resend lost again). The newest chunk in flight and the first, if sent
 *   once, are resent when no chunk sent once had its result for
 *   fresh_base() (TCP's timer, restarted as the queue drains, so a long
 *   queue is not mistaken for loss): the newest is a probe (RACK's tail
 *   loss probe), whose result shows every older one lost. Other chunks sent
 *   once wait BACKSTOP times as long. A resent chunk, known lost once, has
 *   its own timer, resent_base() after its latest send, so that many chunks
 *   recover at once; it doubles with each timer resend, at most
 *   PROGRESS_BACKOFF times while other results come (the first open chunk
 *   once: timer_at()), and beyond that up to 2^BACKOFF_MAX after
 *   BACKOFF_FREE resends with no result at all. Timer resends other than of
 *   the first open chunk spend tokens that new results earn, so that they
 *   do not feed a storm faster than results come.
 * - The window follows the job's policy (cfg.cc, cc.h, docs/cc.md), fed
 *   every new result (its mark and collision bits) and every outage. Under
 *   the default, fixed, random loss does not shrink it: only no result at
 *   all for a whole timeout (an outage or a full queue) halves it; each
 *   result grows it by one back to cfg.window.
 *
 * Resending is always safe: switches and the PS count each sender once.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>

#include "cc.h"
#include "err.h"
#include "host.h"
#include "host_io.h"
#include "host_report.h"

#define NS_PER_MS		1000000ull
#define RTO_MIN_NS		(10 * NS_PER_MS)	/* below: scheduler noise on a busy host */
#define RTO_MAX_NS		(1000 * NS_PER_MS)
#define RTO_INIT_NS		(20 * NS_PER_MS)	/* before the first sample */
#define REO_MIN_NS		200000ull		/* reordering allowance: at least 200 us */
#define TOKENS_PER_RESULT	2	/* timer resends allowed per new result... */
#define TOKENS_MAX		16	/* ...banked up to this many */
#define FRESH_MIN_RTTS		8	/* a fresh chunk's timer: at most this many min_rtt */
#define PROGRESS_BACKOFF	2	/* doublings at most while other results come */
#define BACKOFF_FREE		3	/* timer resends with no result at all before doubling */
#define BACKOFF_MAX		6	/* doublings at most (64x) */
#define BACKSTOP		8	/* other chunks sent once: this many fresh timers */

enum { CH_UNSENT, CH_INFLIGHT, CH_DONE };

struct wchunk {
	uint64_t xmit;		/* time of the latest send (plus jitter on a resend) */
	uint64_t timer_sent;	/* when last resent by its timer, if it was */
	uint64_t order;		/* place of the latest send among all sends */
	uint64_t first;		/* place of the first send */
	uint32_t sends;
	uint32_t stuck;		/* timer resends without any result in between */
	uint8_t tmo;		/* its timer waits resent_base() << tmo */
	uint8_t state;
	uint8_t nack;		/* the destination asked for it (IA_F_NACK) */
	uint8_t mem;		/* first sent to use switch memory (counted in wrun.inmem) */
};

struct ia_worker {
	struct ia_worker_cfg cfg;
	struct sockaddr_in ps;
	struct ia_io_tx tx;
	uint64_t rng;		/* timer jitter */
	struct ia_worker_stats st;
	struct ia_io_rx rx;
};

int ia_worker_open(const struct ia_worker_cfg *cfg, struct ia_worker **out, char *err,
		   size_t errlen)
{
	struct ia_worker *w;
	int fd;

	if (cfg->chunk > IA_MAX_ELEMS)
		return ia_fail(err, errlen, -EINVAL, "chunk of %u elements: at most %u", cfg->chunk,
			       IA_MAX_ELEMS);
	if (!cfg->ps.s_addr)
		return ia_fail(err, errlen, -EINVAL, "no destination (PS) address");
	w = calloc(1, sizeof(*w));
	if (!w)
		return ia_fail(err, errlen, -ENOMEM, "out of memory");
	w->cfg = *cfg;
	if (!w->cfg.port)
		w->cfg.port = IA_UDP_PORT;
	if (!w->cfg.chunk)
		w->cfg.chunk = IA_MAX_ELEMS;
	if (!w->cfg.window)
		w->cfg.window = IA_HOST_WINDOW;
	if (!w->cfg.timeout_ms)
		w->cfg.timeout_ms = IA_HOST_TIMEOUT_MS;
	if (!w->cfg.retries)
		w->cfg.retries = IA_HOST_RETRIES;
	fd = ia_io_udp_open(cfg->addr, w->cfg.port, err, errlen);
	if (fd < 0) {
		free(w);
		return fd;
	}
	w->ps = (struct sockaddr_in){
		.sin_family = AF_INET,
		.sin_port = htons(w->cfg.port),
		.sin_addr = cfg->ps,
	};
	ia_io_tx_init(&w->tx, fd, &cfg->faults);
	w->rng = ((uint64_t)cfg->job << 32 | cfg->id) ^ ia_io_now_ns();
	ia_io_rx_init(&w->rx);
	*out = w;
	return 0;
}

void ia_worker_close(struct ia_worker *w)
{
	if (!w)
		return;
	close(w->tx.fd);
	free(w);
}

void ia_worker_stats(const struct ia_worker *w, struct ia_worker_stats *st)
{
	*st = w->st;
}

/* One run's state. Times are CLOCK_MONOTONIC nanoseconds. */
struct wrun {
	struct ia_worker *w;
	const int32_t *in;
	int32_t *out;
	size_t n;
	uint64_t nchunks;
	struct wchunk *ch;
	uint64_t lo, next, done;	/* first without result, first unsent, results */
	struct ia_cc cc;		/* window policy (cfg.cc): ia_cc_window(), 1..cfg.window */
	uint32_t inmem;			/* chunks in flight that may use switch memory */
	uint64_t t0;
	/* Round-trip time (RFC 6298); srtt 0: no sample yet. */
	uint64_t srtt, rttvar, min_rtt, rto;
	uint64_t sends;			/* messages sent so far: the order of the next */
	/* RACK: the latest first send among chunks with a result, and when. */
	uint64_t rack_order, rack_time;
	uint64_t floor;			/* cfg.timeout_ms */
	uint64_t last_progress;		/* when a new result last arrived */
	uint64_t last_fresh;		/* when a chunk sent once last had its result */
	uint64_t last_halve;		/* when the window was last halved */
	uint32_t tokens;		/* timer resends allowed now (see worker_recover()) */
	struct ia_wreport rep;		/* cfg.report_sock: the window to inaggd */
};

static void rtt_sample(struct wrun *r, uint64_t rtt)
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
 * The wait for a chunk sent once, from the last result of such a chunk:
 * twice the smoothed round trip (those samples include the wait for the
 * slowest worker, so a queue as long as the window's fits), at most the
 * RTO, and at most FRESH_MIN_RTTS shortest round trips: under loss most
 * samples also include other workers' recoveries and would let a lost
 * chunk at the end wait for seconds.
 */
static uint64_t fresh_base(const struct wrun *r)
{
	uint64_t t;

	if (!r->srtt)
		return at_least_floor(r, RTO_INIT_NS);
	t = 2 * r->srtt < r->rto ? 2 * r->srtt : r->rto;
	if (t > FRESH_MIN_RTTS * r->min_rtt)
		t = FRESH_MIN_RTTS * r->min_rtt;
	/* A pause of the host must not look like the loss of a whole window. */
	return at_least_floor(r, t < RTO_MIN_NS ? RTO_MIN_NS : t);
}

/*
 * The wait for a resent chunk: twice the shortest round trip, what a resend
 * takes on an idle path. Not the smoothed RTT: under loss most samples
 * include other workers' recoveries (a result waits for the slowest
 * contribution), and timers grown from them let the worker whose
 * contribution is missing be the slowest to resend it. Results clock these
 * resends (worker_recover()), so a loaded host slows them down.
 */
static uint64_t resent_base(const struct wrun *r)
{
	if (!r->srtt)
		return at_least_floor(r, RTO_INIT_NS);
	return at_least_floor(r, 2 * r->min_rtt);
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
 */
static uint64_t timer_at(const struct wrun *r, const struct wchunk *c, bool probe, bool first)
{
	uint64_t from = r->last_fresh > c->xmit ? r->last_fresh : c->xmit, t;

	if (c->sends == 1)
		return from + (probe ? fresh_base(r) : BACKSTOP * fresh_base(r));
	if (first)
		from = c->xmit;
	t = resent_base(r) << (first && c->stuck <= BACKOFF_FREE && c->tmo > 1 ? 1 : c->tmo);
	return from + (t > RTO_MAX_NS ? RTO_MAX_NS : t);
}

/* The reordering allowance: a quarter of the shortest round trip, at least REO_MIN_NS. */
static uint64_t reo_ns(const struct wrun *r)
{
	return r->min_rtt / 4 > REO_MIN_NS ? r->min_rtt / 4 : REO_MIN_NS;
}

static int worker_send(struct wrun *r, uint64_t idx, uint8_t flags, uint64_t now)
{
	struct ia_worker *w = r->w;
	uint32_t len = ia_host_chunk_len(r->n, w->cfg.chunk, idx);
	uint8_t buf[IA_IO_MSG_MAX] __attribute__((aligned(4)));
	struct wchunk *c = &r->ch[idx];

	ia_hdr_fill((struct ia_hdr *)buf, IA_MSG_CONTRIB, w->cfg.job, w->cfg.base_seq + (uint32_t)idx,
		    w->cfg.id, 1, len, flags);
	ia_io_payload_put(buf + IA_HDR_LEN, r->in + idx * w->cfg.chunk, len);
	c->sends++;
	c->nack = 0;
	c->state = CH_INFLIGHT;
	c->xmit = now;
	c->order = ++r->sends;
	if (c->sends == 1)
		c->first = c->order;
	if (c->sends == 1 && w->cfg.t_first)
		w->cfg.t_first[idx] = now;
	w->st.sent++;
	if (flags & IA_F_RETX) {
		/*
		 * Up to 1/8 of the timer of jitter: workers that detect the
		 * same loss at once do not all resend in the same microsecond.
		 */
		c->xmit += ia_splitmix64(&w->rng) % (resent_base(r) / 8 + 1);
		w->st.retx++;
		if (c->sends - 1 > w->st.max_retx)
			w->st.max_retx = c->sends - 1;
	}
	return ia_io_tx_send(&w->tx, buf, IA_HDR_LEN + 4 * len, &w->ps);
}

/* The policy's windows into the statistics (after every event). */
static void cc_stats(struct wrun *r)
{
	struct ia_worker_stats *st = &r->w->st;

	st->cwnd = ia_cc_window(&r->cc);
	st->awnd = ia_cc_agg_window(&r->cc);
	st->min_cwnd = st->cwnd < st->min_cwnd ? st->cwnd : st->min_cwnd;
	st->min_awnd = st->awnd < st->min_awnd ? st->awnd : st->min_awnd;
	st->cuts = r->cc.cuts;
	st->acuts = r->cc.acuts;
	if (r->w->cfg.window_now)
		*r->w->cfg.window_now = st->cwnd;
	ia_wreport_set(&r->rep, st->cwnd);
}

/*
 * The destination lacks sender id's piece of chunk seq: this worker resends
 * it at once if it is that sender, or if that is a switch (the lost piece
 * may be an aggregate of its contribution, which the switch re-emits on any
 * member's resend, or a contribution on the way to it), unless it sent it
 * so recently that the NACK may have crossed that send.
 */
static void worker_nack(struct wrun *r, uint32_t seq, uint32_t id, uint64_t now)
{
	uint64_t idx = (uint32_t)(seq - r->w->cfg.base_seq);
	struct wchunk *c;

	if (idx >= r->nchunks || r->ch[idx].state != CH_INFLIGHT || r->ch[idx].nack ||
	    (id != r->w->cfg.id && !(id & IA_SENDER_SWITCH)))
		return;
	c = &r->ch[idx];
	r->w->st.nacks++;
	/* The network works: this chunk waits for a loss, not an outage. */
	c->stuck = 0;
	if (c->xmit + reo_ns(r) <= now)
		c->nack = 1;
}

static void worker_recv(struct wrun *r, const uint8_t *buf, size_t len, bool ce, uint64_t now)
{
	const struct ia_hdr *h = (const struct ia_hdr *)buf;
	struct ia_worker *w = r->w;
	uint32_t seq, nelem, i;
	struct wchunk *c;
	uint64_t idx;
	int32_t *dst;

	if (len < IA_HDR_LEN || h->ver != IA_VERSION || h->type != IA_MSG_RESULT ||
	    ntohl(h->job) != w->cfg.job)
		goto bad;
	seq = ntohl(h->seq);
	nelem = ntohs(h->nelem);
	idx = (uint32_t)(seq - w->cfg.base_seq);
	if (h->flags & IA_F_NACK) {
		if (len != IA_HDR_LEN + 4 * nelem || nelem % 2)
			goto bad;
		for (i = 0; i < nelem; i += 2)
			worker_nack(r, ia_io_payload_get(buf + IA_HDR_LEN, i),
				    ia_io_payload_get(buf + IA_HDR_LEN, i + 1), now);
		return;
	}
	if (idx >= r->nchunks || nelem != ia_host_chunk_len(r->n, w->cfg.chunk, idx) ||
	    len != IA_HDR_LEN + 4 * nelem)
		goto bad;
	if (w->cfg.nworkers && ntohl(h->nworkers) != w->cfg.nworkers)
		goto bad;
	c = &r->ch[idx];
	if (c->state == CH_DONE) {
		w->st.dup++;
		return;
	}
	if (c->state == CH_UNSENT) {
		/* Cannot be ours: the sum needs this worker's contribution. */
		w->st.early++;
		return;
	}
	dst = r->out + idx * w->cfg.chunk;
	for (i = 0; i < nelem; i++)
		dst[i] = (int32_t)ia_io_payload_get(buf + IA_HDR_LEN, i);
	c->state = CH_DONE;
	if (w->cfg.t_done)
		w->cfg.t_done[idx] = now;
	if (c->mem) {
		c->mem = 0;
		r->inmem--;
	}
	r->done++;
	w->st.results++;
	r->last_progress = now;
	r->tokens = r->tokens + TOKENS_PER_RESULT > TOKENS_MAX ? TOKENS_MAX :
		    r->tokens + TOKENS_PER_RESULT;
	if (c->first > r->rack_order) {
		r->rack_order = c->first;
		r->rack_time = now;
	}
	/*
	 * Only chunks sent once give an RTT sample (Karn): a resent chunk's
	 * result may answer any of its sends.
	 */
	if (c->sends == 1) {
		r->last_fresh = now;
		if (now > c->xmit)
			rtt_sample(r, now - c->xmit);
	}
	/* CE from a qdisc on the way down counts as a switch's mark. */
	ia_cc_result(&r->cc, (h->flags & IA_F_MARK || ce ? IA_CC_MARK : 0) |
			     (h->flags & IA_F_COLL ? IA_CC_COLL : 0), now);
	cc_stats(r);
	w->st.elapsed = (now - r->t0) / 1e9;
	if (h->flags & IA_F_MARK || ce)
		w->st.marks++;
	w->st.ce += ce;
	if (h->flags & IA_F_COLL)
		w->st.colls++;
	return;
bad:
	w->st.bad++;
}

/*
 * A first send's flags: a PS job's chunk beyond its aggregator window (more
 * chunks in flight in switch memory than ia_cc_agg_window()) bypasses the
 * tails' memory (docs/cc.md). INA jobs never bypass: their head slot would
 * wait for the contribution.
 */
static uint8_t fresh_flags(struct wrun *r, uint64_t idx)
{
	if (r->w->cfg.ps_job && r->inmem >= ia_cc_agg_window(&r->cc)) {
		r->w->st.bypassed++;
		return IA_F_BYPASS;
	}
	r->ch[idx].mem = 1;
	r->inmem++;
	return 0;
}

/* c's timer fired: its backoff, or -ETIMEDOUT to give up. */
static int timer_fired(struct wrun *r, struct wchunk *c, uint64_t now)
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

/*
 * Resends the open chunks found lost, by RACK or by their timer. Returns 0
 * or -errno, and in *wake when to look again.
 */
static int worker_recover(struct wrun *r, uint64_t now, uint64_t *wake, char *err, size_t errlen)
{
	struct ia_worker *w = r->w;
	uint64_t reo = reo_ns(r);
	uint64_t i, rack_at, tmo_at, idle = fresh_base(r), top = r->next;
	bool probe;
	int ret;

	*wake = now + IA_IO_POLL_MAX_MS * NS_PER_MS;
	/* The newest chunk in flight: the probe whose result RACK needs. */
	while (top > r->lo && r->ch[top - 1].state != CH_INFLIGHT)
		top--;
	for (i = r->lo; i < r->next; i++) {
		struct wchunk *c = &r->ch[i];
		bool lost, timeout;

		if (c->state != CH_INFLIGHT)
			continue;
		rack_at = c->order < r->rack_order ? r->rack_time + reo : UINT64_MAX;
		/* Of the chunks sent once, the short timer: the probe and the first only. */
		probe = i + 1 == top || i == r->lo;
		tmo_at = timer_at(r, c, probe, i == r->lo);
		lost = rack_at <= now || c->nack;
		/* RACK's allowance runs: it resends this one shortly. */
		timeout = !lost && rack_at == UINT64_MAX && tmo_at <= now;
		if (!lost && !timeout) {
			*wake = rack_at < *wake ? rack_at : *wake;
			*wake = tmo_at < *wake ? tmo_at : *wake;
			continue;
		}
		/*
		 * Timer resends spend tokens results earn (the first open chunk's
		 * always go); this one waits for the next result or its turn.
		 */
		if (timeout && i != r->lo && !r->tokens)
			continue;
		if (timeout && i != r->lo)
			r->tokens--;
		if (timeout && timer_fired(r, c, now))
			return ia_fail(err, errlen, -ETIMEDOUT,
				       "chunk %u: no result after %u retransmissions",
				       w->cfg.base_seq + (uint32_t)i, w->cfg.retries);
		/*
		 * No result at all for a whole timeout is an outage or a full
		 * queue, not random loss (that leaves results coming for the
		 * other chunks): the policy halves the window, once per such
		 * timeout.
		 */
		if (timeout && now - r->last_progress > idle && now - r->last_halve > idle) {
			ia_cc_timeout(&r->cc, now);
			cc_stats(r);
			r->last_halve = now;
		}
		ret = worker_send(r, i, IA_F_RETX, now);
		if (ret)
			return ia_fail(err, errlen, ret, "send: %s", strerror(-ret));
		tmo_at = timer_at(r, c, probe, i == r->lo);
		*wake = tmo_at < *wake ? tmo_at : *wake;
	}
	return 0;
}

int ia_worker_run(struct ia_worker *w, const int32_t *in, int32_t *out, size_t n, char *err,
		  size_t errlen)
{
	struct wrun r = { .w = w, .in = in, .out = out, .n = n };
	uint64_t now, wake;
	int i, k, ret = 0;

	r.nchunks = ia_host_nchunks(n, w->cfg.chunk);
	if (!r.nchunks)
		return ia_fail(err, errlen, -EINVAL, "empty vector");
	if (r.nchunks > IA_HOST_MAX_CHUNKS)
		return ia_fail(err, errlen, -E2BIG, "%llu chunks: at most %u",
			       (unsigned long long)r.nchunks, IA_HOST_MAX_CHUNKS);
	r.ch = calloc(r.nchunks, sizeof(*r.ch));
	if (!r.ch)
		return ia_fail(err, errlen, -ENOMEM, "out of memory");
	memset(&w->st, 0, sizeof(w->st));
	ret = ia_cc_init(&r.cc, &(struct ia_cc_cfg){ .policy = w->cfg.cc, .ps = w->cfg.ps_job,
						       .wmax = w->cfg.window }, ia_io_now_ns());
	if (ret) {
		free(r.ch);
		return ia_fail(err, errlen, ret, "window policy %d: invalid", w->cfg.cc);
	}
	w->st.min_cwnd = w->st.min_awnd = UINT32_MAX;
	/* An INA job's head lends what its window leaves idle (docs/cc.md). */
	if (w->cfg.report_sock && !w->cfg.ps_job)
		ia_wreport_start(&r.rep, w->cfg.report_sock, w->cfg.job, w->cfg.id,
				 ia_cc_window(&r.cc));
	cc_stats(&r);
	r.rto = r.floor = w->cfg.timeout_ms * NS_PER_MS;
	r.t0 = r.last_progress = ia_io_now_ns();
	r.tokens = TOKENS_MAX;
	while (r.done < r.nchunks) {
		if (w->cfg.stop && *w->cfg.stop) {
			ret = ia_fail(err, errlen, -EINTR, "interrupted");
			goto out;
		}
		now = ia_io_now_ns();
		while (r.lo < r.nchunks && r.ch[r.lo].state == CH_DONE)
			r.lo++;
		while (r.next < r.nchunks && r.next < r.lo + ia_cc_window(&r.cc)) {
			ret = worker_send(&r, r.next, fresh_flags(&r, r.next), now);
			r.next++;
			if (ret) {
				ia_fail(err, errlen, ret, "send: %s", strerror(-ret));
				goto out;
			}
		}
		ret = worker_recover(&r, now, &wake, err, errlen);
		if (ret)
			goto out;
		ret = ia_io_tx_flush(&w->tx);
		if (ret) {
			ia_fail(err, errlen, ret, "send: %s", strerror(-ret));
			goto out;
		}
		k = ia_io_rx_wait(w->tx.fd, &w->rx, ia_io_ns_until(wake, now));
		if (k < 0) {
			ret = ia_fail(err, errlen, k, "receive: %s", strerror(-k));
			goto out;
		}
		now = ia_io_now_ns();
		for (i = 0; i < k; i++)
			worker_recv(&r, w->rx.buf[i], w->rx.mm[i].msg_len,
				    ia_io_rx_ce(&w->rx, i), now);
	}
	w->st.srtt_us = r.srtt / 1000;
	w->st.min_rtt_us = r.min_rtt / 1000;
	w->st.rto_us = r.rto / 1000;
out:
	ia_wreport_stop(&r.rep);
	w->st.reports = r.rep.sent;
	w->st.report_err = r.rep.ret;
	free(r.ch);
	return ret;
}
