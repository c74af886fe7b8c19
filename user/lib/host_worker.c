// SPDX-License-Identifier: GPL-2.0
/*
 * Worker: sends its vector chunk by chunk and receives the sums, recovering
 * from loss on its own. See host.h and docs/hosts.md ("Loss recovery").
 *
 * - A sliding window: chunk i is sent only while i < lo + cwnd, lo being the
 *   first chunk without a result, so that a blue switch's slot of chunk i
 *   (slot i % window) is never needed for i + window while i is open.
 * - Round-trip times are measured on chunks sent once (RFC 6298 srtt and
 *   rttvar, and the minimum); cfg.timeout_ms stands in before a sample.
 * - Loss is detected before the timer as RACK does (RFC 8985): results come
 *   back in sending order (every worker sends in chunk order), so a chunk
 *   still open when a chunk sent after it by this worker has its result, and
 *   after that result's round-trip time plus a reordering allowance, is lost
 *   somewhere (its contribution, another worker's, an aggregate or its
 *   result). Only such chunks are resent.
 * - When no new result has come for a while (stall_timeout(): twice the
 *   round trip of earlier stall resends, or of the shortest round trip before
 *   one, at least cfg.timeout_ms, doubling after three in a row), the first
 *   open chunk, which the window waits for, is resent.
 * - Random loss does not shrink the window. Only a stall with most of the
 *   window overdue (an outage or a full queue) halves it; each result grows
 *   it by one back to cfg.window.
 *
 * Resending is always safe: switches and the PS count each sender once.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>

#include "err.h"
#include "host.h"
#include "host_io.h"

#define NS_PER_MS		1000000ull
#define RTO_MIN_NS		(10 * NS_PER_MS)	/* below: scheduler noise on a busy host */
#define RTO_MAX_NS		(1000 * NS_PER_MS)
#define REO_MIN_NS		200000ull		/* reordering allowance: at least 200 us */
#define BACKOFF_FREE		3	/* stalls in a row before the wait doubles: loss, not an outage */
#define BACKOFF_MAX		(BACKOFF_FREE + 6)	/* then up to 64x */

enum { CH_UNSENT, CH_INFLIGHT, CH_DONE };

struct wchunk {
	uint64_t xmit;		/* time of the latest send */
	uint64_t stall_sent;	/* when resent by the stall timer, if it was */
	uint64_t order;		/* place of the latest send among all sends */
	uint32_t sends;
	uint8_t state;
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
	uint32_t cwnd;			/* effective window, 1..cfg.window */
	uint64_t t0;
	/* Round-trip time (RFC 6298); srtt 0: no sample yet. */
	uint64_t srtt, rttvar, min_rtt, rto;
	uint64_t sends;			/* messages sent so far: the order of the next */
	/* RACK: the latest-sent chunk with a result, and its round trip. */
	uint64_t rack_order, rack_rtt;
	uint64_t floor;			/* cfg.timeout_ms */
	uint64_t stall_rtt;		/* smoothed: stall resend -> its result */
	uint64_t last_progress;		/* when a new result last arrived */
	uint32_t backoff;		/* no-progress timeouts since then */
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

/*
 * How long without any new result before the first open chunk is resent:
 * when the window is stalled on it, every worker waits for the same chunk and
 * the network is idle, so its resend comes back in about the shortest round
 * trip seen, far sooner than a chunk sent behind a full window.
 */
static uint64_t stall_timeout(const struct wrun *r)
{
	uint64_t t = 2 * r->min_rtt;

	/* Once stall resends were answered, their round trip says it best. */
	if (r->stall_rtt)
		t = 2 * r->stall_rtt;
	/* cfg.timeout_ms is the floor (and all there is before a sample). */
	t = t > r->rto ? r->rto : t;
	t = t < r->floor ? r->floor : t;
	t <<= r->backoff > BACKOFF_FREE ? r->backoff - BACKOFF_FREE : 0;
	return t > RTO_MAX_NS ? RTO_MAX_NS : t;
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
	c->state = CH_INFLIGHT;
	/*
	 * Up to 1/8 RTO of jitter on retransmissions: workers that detect the
	 * same loss at once do not all resend in the same microsecond.
	 */
	c->xmit = now;
	c->order = ++r->sends;
	if (flags & IA_F_RETX)
		c->xmit += ia_splitmix64(&w->rng) % (r->rto / 8 + 1);
	w->st.sent++;
	if (flags & IA_F_RETX) {
		w->st.retx++;
		if (c->sends - 1 > w->st.max_retx)
			w->st.max_retx = c->sends - 1;
	}
	return ia_io_tx_send(&w->tx, buf, IA_HDR_LEN + 4 * len, &w->ps);
}

static void worker_recv(struct wrun *r, const uint8_t *buf, size_t len, uint64_t now)
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
	r->done++;
	w->st.results++;
	r->last_progress = now;
	r->backoff = 0;
	if (c->stall_sent && now > c->stall_sent) {
		uint64_t rtt = now - c->stall_sent;

		r->stall_rtt = r->stall_rtt ? (3 * r->stall_rtt + rtt) / 4 : rtt;
	}
	/*
	 * Only chunks sent once give an RTT sample (Karn) and a RACK
	 * reference: a resent chunk's result may come from an aggregate
	 * completed long ago, with none of the waiting for the slowest
	 * worker that orders fresh chunks' results.
	 */
	if (c->sends == 1 && now > c->xmit) {
		rtt_sample(r, now - c->xmit);
		if (c->order > r->rack_order) {
			r->rack_order = c->order;
			r->rack_rtt = now - c->xmit;
		}
	}
	if (r->cwnd < w->cfg.window)
		r->cwnd++;
	w->st.elapsed = (now - r->t0) / 1e9;
	if (h->flags & IA_F_MARK) {
		/*
		 * Congestion on the way. Hook for INA-aware congestion control
		 * (FlexINA, a later issue): shrink the window here.
		 */
		w->st.marks++;
	}
	return;
bad:
	w->st.bad++;
}

/*
 * Resends the open chunks found lost: by RACK, or, after no new result for
 * stall_timeout(), the first open chunk (the one the window waits for).
 * Only one: a pause of the whole system (a busy CPU) must not make every
 * worker resend its whole window. Returns 0 or -errno, and in *wake when to
 * look again.
 */
static int worker_recover(struct wrun *r, uint64_t now, uint64_t *wake, char *err, size_t errlen)
{
	struct ia_worker *w = r->w;
	uint64_t reo = r->min_rtt / 4 > REO_MIN_NS ? r->min_rtt / 4 : REO_MIN_NS;
	uint64_t stall_at = r->last_progress + stall_timeout(r);
	bool stalled = now >= stall_at, first = true;
	uint64_t i, rack_at, overdue = 0;
	int ret;

	*wake = now + IA_IO_POLL_MAX_MS * NS_PER_MS;
	for (i = r->lo; i < r->next; i++) {
		struct wchunk *c = &r->ch[i];
		bool lost, timeout;

		if (c->state != CH_INFLIGHT)
			continue;
		/* Sent before the last result came, and still without one. */
		overdue += c->xmit < r->last_progress;
		rack_at = c->order < r->rack_order ? c->xmit + r->rack_rtt + reo : UINT64_MAX;
		lost = rack_at <= now;
		timeout = !lost && stalled && first;
		first = false;
		if (!lost && !timeout) {
			*wake = rack_at < *wake ? rack_at : *wake;
			continue;
		}
		if (c->sends > w->cfg.retries)
			return ia_fail(err, errlen, -ETIMEDOUT,
				       "chunk %u: no result after %u retransmissions",
				       w->cfg.base_seq + (uint32_t)i, w->cfg.retries);
		if (timeout) {
			w->st.timeouts++;
			c->stall_sent = now;
		}
		ret = worker_send(r, i, IA_F_RETX, now);
		if (ret)
			return ia_fail(err, errlen, ret, "send: %s", strerror(-ret));
	}
	if (stalled) {
		/* Nothing came back: wait longer next time, until something does. */
		if (r->backoff < BACKOFF_MAX)
			r->backoff++;
		r->last_progress = now;
		/*
		 * Most of the window overdue with nothing coming back is an
		 * outage or a full queue, not random loss (that leaves one
		 * chunk, or a few, open while the window waits for them).
		 */
		if (overdue >= 2 && 2 * overdue >= r->cwnd)
			r->cwnd = r->cwnd / 2 ? r->cwnd / 2 : 1;
		stall_at = now + stall_timeout(r);
	}
	if (r->lo < r->next)
		*wake = stall_at < *wake ? stall_at : *wake;
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
	r.cwnd = w->cfg.window;
	r.rto = r.floor = w->cfg.timeout_ms * NS_PER_MS;
	r.t0 = r.last_progress = ia_io_now_ns();
	while (r.done < r.nchunks) {
		if (w->cfg.stop && *w->cfg.stop) {
			ret = ia_fail(err, errlen, -EINTR, "interrupted");
			goto out;
		}
		now = ia_io_now_ns();
		while (r.lo < r.nchunks && r.ch[r.lo].state == CH_DONE)
			r.lo++;
		while (r.next < r.nchunks && r.next < r.lo + r.cwnd) {
			ret = worker_send(&r, r.next++, 0, now);
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
			worker_recv(&r, w->rx.buf[i], w->rx.mm[i].msg_len, now);
	}
	w->st.srtt_us = r.srtt / 1000;
	w->st.min_rtt_us = r.min_rtt / 1000;
	w->st.rto_us = r.rto / 1000;
out:
	free(r.ch);
	return ret;
}
