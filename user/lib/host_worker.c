// SPDX-License-Identifier: GPL-2.0
/*
 * Worker: sends its vector chunk by chunk and receives the sums, with
 * retransmission.
 * See host.h and docs/hosts.md.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>

#include "err.h"
#include "host.h"
#include "host_io.h"

enum { CH_UNSENT, CH_INFLIGHT, CH_DONE };

struct wchunk {
	uint32_t gen;		/* sends so far; a timer entry is live iff its gen matches */
	uint8_t state;
};

struct timer {
	uint32_t idx;
	uint32_t gen;
	uint64_t deadline;
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

struct wrun {
	struct ia_worker *w;
	const int32_t *in;
	int32_t *out;
	size_t n;
	uint64_t nchunks;
	struct wchunk *ch;
	struct timer *q;	/* ring of nchunks entries: at most one live per chunk */
	uint64_t qhead, qlen;
	uint64_t done, inflight;
	double cwnd;		/* effective window, <= cfg.window */
	uint64_t last_cut;	/* when cwnd was last halved */
};

static int worker_send(struct wrun *r, uint64_t idx, uint8_t flags, uint64_t now)
{
	struct ia_worker *w = r->w;
	uint32_t len = ia_host_chunk_len(r->n, w->cfg.chunk, idx);
	uint8_t buf[IA_IO_MSG_MAX] __attribute__((aligned(4)));
	struct wchunk *c = &r->ch[idx];
	uint64_t rto;
	struct timer *t;

	ia_hdr_fill((struct ia_hdr *)buf, IA_MSG_CONTRIB, w->cfg.job, w->cfg.base_seq + (uint32_t)idx,
		    w->cfg.id, 1, len, flags);
	ia_io_payload_put(buf + IA_HDR_LEN, r->in + idx * w->cfg.chunk, len);
	c->gen++;
	c->state = CH_INFLIGHT;
	/*
	 * Exponential backoff (up to 8x) with +-25% jitter: retransmissions
	 * of workers that lost the same burst must not collide again and again.
	 */
	rto = (uint64_t)w->cfg.timeout_ms * 1000000ull << (c->gen < 4 ? c->gen - 1 : 3);
	rto = rto * 3 / 4 + ia_splitmix64(&w->rng) % (rto / 2 + 1);
	t = &r->q[(r->qhead + r->qlen++) % r->nchunks];
	*t = (struct timer){ idx, c->gen, now + rto };
	w->st.sent++;
	if (flags & IA_F_RETX)
		w->st.retx++;
	return ia_io_tx_send(&w->tx, buf, IA_HDR_LEN + 4 * len, &w->ps);
}

static void worker_recv(struct wrun *r, const uint8_t *buf, size_t len, uint64_t t0)
{
	const struct ia_hdr *h = (const struct ia_hdr *)buf;
	struct ia_worker *w = r->w;
	uint32_t seq, nelem, i;
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
	if (r->ch[idx].state == CH_DONE) {
		w->st.dup++;
		return;
	}
	if (r->ch[idx].state == CH_UNSENT) {
		/* Cannot be ours: the sum needs this worker's contribution. */
		w->st.early++;
		return;
	}
	dst = r->out + idx * w->cfg.chunk;
	for (i = 0; i < nelem; i++)
		dst[i] = (int32_t)ia_io_payload_get(buf + IA_HDR_LEN, i);
	r->ch[idx].state = CH_DONE;
	r->done++;
	r->inflight--;
	w->st.results++;
	/* Additive increase: one chunk per window of results. */
	r->cwnd += 1.0 / r->cwnd;
	if (r->cwnd > w->cfg.window)
		r->cwnd = w->cfg.window;
	w->st.elapsed = (ia_io_now_ns() - t0) / 1e9;
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

int ia_worker_run(struct ia_worker *w, const int32_t *in, int32_t *out, size_t n, char *err,
		  size_t errlen)
{
	struct wrun r = { .w = w, .in = in, .out = out, .n = n };
	uint64_t next = 0, t0, now;
	int i, k, ret = 0;

	r.nchunks = ia_host_nchunks(n, w->cfg.chunk);
	if (!r.nchunks)
		return ia_fail(err, errlen, -EINVAL, "empty vector");
	if (r.nchunks > IA_HOST_MAX_CHUNKS)
		return ia_fail(err, errlen, -E2BIG, "%llu chunks: at most %u",
			    (unsigned long long)r.nchunks, IA_HOST_MAX_CHUNKS);
	r.ch = calloc(r.nchunks, sizeof(*r.ch));
	r.q = calloc(r.nchunks, sizeof(*r.q));
	if (!r.ch || !r.q) {
		ret = ia_fail(err, errlen, -ENOMEM, "out of memory");
		goto out;
	}
	memset(&w->st, 0, sizeof(w->st));
	r.cwnd = w->cfg.window;
	t0 = ia_io_now_ns();
	while (r.done < r.nchunks) {
		if (w->cfg.stop && *w->cfg.stop) {
			ret = ia_fail(err, errlen, -EINTR, "interrupted");
			goto out;
		}
		now = ia_io_now_ns();
		while (r.inflight < (uint64_t)r.cwnd && next < r.nchunks) {
			ret = worker_send(&r, next++, 0, now);
			if (ret)
				goto send_err;
			r.inflight++;
		}
		/* Expired timers, oldest first; stale entries are skipped. */
		while (r.qlen) {
			struct timer t = r.q[r.qhead];
			struct wchunk *c = &r.ch[t.idx];

			if (c->state == CH_INFLIGHT && c->gen == t.gen && t.deadline > now)
				break;
			r.qhead = (r.qhead + 1) % r.nchunks;
			r.qlen--;
			if (c->state != CH_INFLIGHT || c->gen != t.gen)
				continue;
			if (c->gen > w->cfg.retries) {
				ret = ia_fail(err, errlen, -ETIMEDOUT,
					   "chunk %u: no result after %u retransmissions",
					   w->cfg.base_seq + t.idx, w->cfg.retries);
				goto out;
			}
			/* A loss: halve the window, at most once per timeout. */
			if (now - r.last_cut >= w->cfg.timeout_ms * 1000000ull) {
				r.cwnd = r.cwnd / 2 < 1 ? 1 : r.cwnd / 2;
				r.last_cut = now;
			}
			ret = worker_send(&r, t.idx, IA_F_RETX, now);
			if (ret)
				goto send_err;
			if (c->gen - 1 > w->st.max_retx)
				w->st.max_retx = c->gen - 1;
		}
		ret = ia_io_tx_flush(&w->tx);
		if (ret)
			goto send_err;
		k = ia_io_rx_wait(w->tx.fd, &w->rx,
			    r.qlen ? ia_io_ms_until(r.q[r.qhead].deadline, now) : IA_IO_POLL_MAX_MS);
		if (k < 0) {
			ret = ia_fail(err, errlen, k, "receive: %s", strerror(-k));
			goto out;
		}
		for (i = 0; i < k; i++)
			worker_recv(&r, w->rx.buf[i], w->rx.mm[i].msg_len, t0);
	}
	ret = 0;
	goto out;
send_err:
	ia_fail(err, errlen, ret, "send: %s", strerror(-ret));
out:
	free(r.ch);
	free(r.q);
	return ret;
}

