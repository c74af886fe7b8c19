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
 *   resend lost again). The newest chunk in flight, if sent once, is
 *   resent when no chunk sent once had its result for ia_wt_fresh_base()
 *   (TCP's timer, restarted as the queue drains, so a long queue is not
 *   mistaken for loss): it is a probe (RACK's tail loss probe), whose
 *   result shows every older one lost. The first open chunk, sent once,
 *   waits that long from its own send, then only a resent chunk's wait
 *   after the latest such result. Other chunks sent once wait BACKSTOP
 *   times as long. The job's last chunk, once the window waits for it,
 *   waits only as long as a resent chunk: nothing sent after it can reveal
 *   its loss. A resent chunk, known lost once, has its own timer,
 *   ia_wt_resent_base() after its latest send, so that many chunks recover
 *   at once (twice the shortest round trip, or of the shortest answer to a
 *   resend if shorter); it doubles with each timer resend, at most
 *   PROGRESS_BACKOFF times while other results come (the first open chunk
 *   once: host_wtimer.c), and beyond that up to 2^BACKOFF_MAX after
 *   BACKOFF_FREE resends with no result at all. Timer resends other than of
 *   the first open chunk spend tokens that new results earn, so that they
 *   do not feed a storm faster than results come. Until the run has seen a
 *   loss (a hole, a NACK, a first result answering a resend), no wait but
 *   the last chunk's is shorter than the RTO: the shortest round trip says
 *   nothing of a standing queue (host_wtimer.c).
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

#include "err.h"
#include "host_worker_int.h"

int ia_worker_open(const struct ia_worker_cfg *cfg, struct ia_worker **out, char *err,
		   size_t errlen)
{
	struct ia_worker *w;
	int fd, ret;

	if (cfg->chunk > IA_MAX_ELEMS)
		return ia_fail(err, errlen, -EINVAL, "chunk of %u elements: at most %u", cfg->chunk,
			       IA_MAX_ELEMS);
	if (!cfg->ps.s_addr)
		return ia_fail(err, errlen, -EINVAL, "no destination (PS) address");
	if (!cfg->mtu_checked) {
		ret = ia_io_mtu_check(cfg->ps, cfg->chunk ? cfg->chunk : IA_CHUNK_DEFAULT, err,
				      errlen);
		if (ret)
			return ret;
	}
	w = calloc(1, sizeof(*w));
	if (!w)
		return ia_fail(err, errlen, -ENOMEM, "out of memory");
	w->cfg = *cfg;
	if (!w->cfg.port)
		w->cfg.port = IA_UDP_PORT;
	if (!w->cfg.chunk)
		w->cfg.chunk = IA_CHUNK_DEFAULT;
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
	/* "No PS there" (ICMP) ends a run in IA_IO_UNREACH_MS, not after every retry. */
	ia_io_recverr(fd);
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
	c->xmit = c->sent = now;
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
		c->xmit += ia_splitmix64(&w->rng) % (ia_wt_resent_base(r) / 8 + 1);
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
	st->cuts = r->cc.cuts - r->cuts0;
	st->acuts = r->cc.acuts - r->acuts0;
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
	if (c->xmit + ia_wt_reo(r) <= now)
		c->nack = 1;
}

static void worker_recv(struct wrun *r, const uint8_t *buf, size_t len, bool ce, uint64_t now)
{
	const struct ia_hdr *h = (const struct ia_hdr *)buf;
	struct ia_worker *w = r->w;
	uint32_t seq, nelem, i;
	struct wchunk *c;
	uint64_t idx;

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
	ia_io_payload_take(r->out + idx * w->cfg.chunk, buf + IA_HDR_LEN, nelem);
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
	 * result may answer any of its sends. An answer to a resend (RETX)
	 * bounds how fast a lost result comes back: a blue switch holding it
	 * answers in well under a millisecond (docs/hosts.md).
	 */
	if (c->sends > 1 && (h->flags & IA_F_RETX) && now > c->sent &&
	    (!r->answer_rtt || now - c->sent < r->answer_rtt))
		r->answer_rtt = now - c->sent;
	/* The first result answers a resend: the result of the first send was lost. */
	r->loss_seen |= c->sends > 1 && (h->flags & IA_F_RECOVERY);
	if (c->sends == 1) {
		r->last_fresh = now;
		if (now > c->xmit)
			ia_wt_rtt_sample(r, now - c->xmit);
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
 * A first send's flags: a PS job's chunk beyond its aggregator window
 * (ia_cc_in_memory(): flexina's by the chunk's rank, the same for all the
 * job's workers; the others' by the chunks in flight in switch memory)
 * bypasses the tails' memory (docs/cc.md). INA jobs never bypass: their
 * head slot would wait for the contribution.
 */
static uint8_t fresh_flags(struct wrun *r, uint64_t idx)
{
	if (r->w->cfg.ps_job &&
	    !ia_cc_in_memory(&r->cc, r->w->cfg.base_seq + (uint32_t)idx, r->inmem)) {
		r->w->st.bypassed++;
		return IA_F_BYPASS;
	}
	r->ch[idx].mem = 1;
	r->inmem++;
	return 0;
}

/*
 * Resends the open chunks found lost, by RACK or by their timer. Returns 0
 * or -errno, and in *wake when to look again.
 */
static int worker_recover(struct wrun *r, uint64_t now, uint64_t *wake, char *err, size_t errlen)
{
	struct ia_worker *w = r->w;
	uint64_t reo = ia_wt_reo(r);
	uint64_t i, rack_at, tmo_at, idle = ia_wt_fresh_base(r), top = r->next;
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
		tmo_at = ia_wt_timer_at(r, i, top);
		lost = rack_at <= now || c->nack;
		r->loss_seen |= lost;
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
		if (timeout && ia_wt_fired(r, c, now))
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
		tmo_at = ia_wt_timer_at(r, i, top);
		*wake = tmo_at < *wake ? tmo_at : *wake;
	}
	return 0;
}

/* The window and round trips the last run left in cfg.path, if it ran this policy. */
static void path_load(struct wrun *r)
{
	const struct ia_worker_path *p = r->w->cfg.path;
	const struct ia_cc_cfg *a = &r->cc.cfg;

	if (!p || !p->valid || p->cc.cfg.policy != a->policy || p->cc.cfg.ps != a->ps ||
	    p->cc.cfg.wmin != a->wmin || p->cc.cfg.wmax != a->wmax)
		return;
	r->cc = p->cc;
	/* A new tensor: atp restarts its window (cc.h). */
	ia_cc_iteration(&r->cc, ia_io_now_ns());
	r->cuts0 = p->cc.cuts;
	r->acuts0 = p->cc.acuts;
	r->srtt = p->srtt;
	r->rttvar = p->rttvar;
	r->min_rtt = p->min_rtt;
	r->answer_rtt = p->answer_rtt;
	r->rto = p->rto > r->floor ? p->rto : r->floor;
}

static void path_save(const struct wrun *r)
{
	struct ia_worker_path *p = r->w->cfg.path;

	if (!p)
		return;
	*p = (struct ia_worker_path){
		.valid = true, .cc = r->cc, .srtt = r->srtt, .rttvar = r->rttvar,
		.min_rtt = r->min_rtt, .rto = r->rto, .answer_rtt = r->answer_rtt,
	};
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
	r.rto = r.floor = w->cfg.timeout_ms * NS_PER_MS;
	path_load(&r);
	w->st.min_cwnd = w->st.min_awnd = UINT32_MAX;
	/* An INA job's head lends what its window leaves idle (docs/cc.md). */
	if (w->cfg.report_sock && !w->cfg.ps_job)
		ia_wreport_start(&r.rep, w->cfg.report_sock, w->cfg.job, w->cfg.id,
				 ia_cc_window(&r.cc));
	cc_stats(&r);
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
		ret = ia_io_unreach_check(&w->rx, &w->tx, &w->ps, "PS", r.last_progress, now, err,
					  errlen);
		if (ret)
			goto out;
	}
	w->st.srtt_us = r.srtt / 1000;
	w->st.min_rtt_us = r.min_rtt / 1000;
	w->st.answer_rtt_us = r.answer_rtt / 1000;
	w->st.rto_us = r.rto / 1000;
out:
	/* Messages of the last round may still be queued (host_io.h). */
	k = ia_io_tx_flush(&w->tx);
	if (k && !ret)
		ret = ia_fail(err, errlen, k, "send: %s", strerror(-k));
	path_save(&r);
	ia_wreport_stop(&r.rep);
	w->st.reports = r.rep.sent;
	w->st.report_err = r.rep.ret;
	free(r.ch);
	return ret;
}
