// SPDX-License-Identifier: GPL-2.0
/* A word-count mapper: announcements, then its blocks; see wc_host.h. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>

#include "err.h"
#include "host_io.h"
#include "wc_host.h"

#define NS_PER_MS	1000000ull

/* One message this mapper owes: chunk i (announcements first) and its payload. */
struct omsg {
	uint32_t chunk;
	const int32_t *payload;
	uint32_t tries;
	uint64_t sent_at;	/* 0: not sent yet */
	bool done;
};

struct mapper {
	struct ia_wc_mapper_cfg cfg;
	uint32_t nann;
	struct sockaddr_in reducer;
	struct ia_io_tx tx;
	struct ia_io_rx rx;
	int32_t *at;		/* chunk -> index in the phase's messages, -1 if not its own */
	struct ia_wc_mapper_stats *st;
};

static int send_msg(struct mapper *mp, struct omsg *m, uint64_t now)
{
	uint8_t buf[IA_IO_MSG_MAX] __attribute__((aligned(4)));
	uint32_t len = IA_SPARSE_ELEMS;	/* whole: zeros past the key space */
	uint8_t flags = m->sent_at ? IA_F_RETX : 0;

	ia_hdr_fill((struct ia_hdr *)buf, IA_MSG_CONTRIB, mp->cfg.job,
		    mp->cfg.base_seq + m->chunk, mp->cfg.id, 1, len, flags);
	ia_io_payload_put(buf + IA_HDR_LEN, m->payload, len);
	mp->st->sent++;
	if (flags)
		mp->st->retx++;
	m->tries++;
	m->sent_at = now;
	return ia_io_tx_send(&mp->tx, buf, IA_HDR_LEN + 4 * len, &mp->reducer);
}

/* A result of one of this phase's messages marks it done; anything else is ignored. */
static void on_result(struct mapper *mp, struct omsg *m, const uint8_t *buf, size_t len,
		      uint32_t *done)
{
	const struct ia_hdr *h = (const struct ia_hdr *)buf;
	uint32_t chunk;
	int32_t i;

	/* Whole, as every message of the job: a switch drops anything else. */
	if (len != IA_HDR_LEN + 4 * IA_SPARSE_ELEMS || h->ver != IA_VERSION ||
	    h->type != IA_MSG_RESULT || ntohl(h->job) != mp->cfg.job ||
	    ntohs(h->nelem) != IA_SPARSE_ELEMS)
		return;
	chunk = ntohl(h->seq) - mp->cfg.base_seq;
	if (chunk >= ia_wc_chunks(mp->cfg.nvocab))
		return;
	i = mp->at[chunk];
	if (i < 0 || m[i].done || !m[i].sent_at)
		return;
	m[i].done = true;
	mp->st->results++;
	(*done)++;
}

/*
 * Sends n messages, at most window unanswered at a time, and waits until
 * each has its result; a message without one after the timeout is resent.
 */
static int exchange(struct mapper *mp, struct omsg *m, uint32_t n, uint32_t window, char *err,
		    size_t errlen)
{
	uint64_t timeout = mp->cfg.timeout_ms * NS_PER_MS;
	uint32_t done = 0, next = 0, lo = 0, i;
	int ret, k;

	for (i = 0; i < n; i++)
		mp->at[m[i].chunk] = i;
	while (done < n) {
		uint64_t now = ia_io_now_ns(), wake = now + timeout;

		if (mp->cfg.stop && *mp->cfg.stop)
			return ia_fail(err, errlen, -EINTR, "interrupted");
		while (lo < n && m[lo].done)
			lo++;
		for (; next < n && next < lo + window; next++) {
			ret = send_msg(mp, &m[next], now);
			if (ret)
				return ia_fail(err, errlen, ret, "send: %s", strerror(-ret));
		}
		for (i = lo; i < next; i++) {
			if (m[i].done)
				continue;
			if (m[i].sent_at + timeout <= now) {
				if (m[i].tries > mp->cfg.retries)
					return ia_fail(err, errlen, -ETIMEDOUT,
						       "chunk %u: no result after %u sends",
						       mp->cfg.base_seq + m[i].chunk, m[i].tries);
				ret = send_msg(mp, &m[i], now);
				if (ret)
					return ia_fail(err, errlen, ret, "send: %s", strerror(-ret));
			}
			if (m[i].sent_at + timeout < wake)
				wake = m[i].sent_at + timeout;
		}
		ret = ia_io_tx_flush(&mp->tx);
		if (ret)
			return ia_fail(err, errlen, ret, "send: %s", strerror(-ret));
		k = ia_io_rx_wait(mp->tx.fd, &mp->rx, ia_io_ns_until(wake, ia_io_now_ns()));
		if (k < 0)
			return ia_fail(err, errlen, k, "receive: %s", strerror(-k));
		for (i = 0; i < (uint32_t)k; i++)
			on_result(mp, m, mp->rx.buf[i], mp->rx.mm[i].msg_len, &done);
	}
	for (i = 0; i < n; i++)
		mp->at[m[i].chunk] = -1;
	return 0;
}

/* Counts of its split per key, the announcements, and one message per block it has. */
static int prepare(struct mapper *mp, const uint32_t *words, size_t n, int32_t **counts,
		   int32_t **ann, struct omsg **msgs, uint32_t *nmsgs, char *err, size_t errlen)
{
	uint32_t nvocab = mp->cfg.nvocab, nblocks = ia_wc_nblocks(nvocab), b;

	*counts = calloc((size_t)nblocks * IA_WC_KEYS, sizeof(**counts));
	*ann = calloc((size_t)mp->nann * IA_SPARSE_ELEMS, sizeof(**ann));
	*msgs = calloc(mp->nann + nblocks, sizeof(**msgs));
	if (!*counts || !*ann || !*msgs)
		return ia_fail(err, errlen, -ENOMEM, "out of memory");
	for (size_t i = 0; i < n; i++) {
		if (words[i] >= nvocab)
			return ia_fail(err, errlen, -EINVAL, "word id %u outside the key space (%u)",
				       words[i], nvocab);
		if ((*counts)[words[i]]++ == 0)
			mp->st->keys++;
		(*ann)[words[i] / IA_WC_KEYS] = 1;
	}
	mp->st->words = n;
	/* Announcements first (every mapper sends them all), then its blocks. */
	for (uint32_t a = 0; a < mp->nann; a++)
		(*msgs)[(*nmsgs)++] = (struct omsg){ .chunk = a,
						     .payload = *ann + (size_t)a * IA_SPARSE_ELEMS };
	for (b = 0; b < nblocks; b++)
		if ((*ann)[b])
			(*msgs)[(*nmsgs)++] = (struct omsg){
				.chunk = mp->nann + b,
				.payload = *counts + (size_t)b * IA_WC_KEYS,
			};
	mp->st->blocks = *nmsgs - mp->nann;
	return 0;
}

int ia_wc_map(const struct ia_wc_mapper_cfg *cfg, const uint32_t *words, size_t n,
	      struct ia_wc_mapper_stats *st, char *err, size_t errlen)
{
	struct mapper mp = { .cfg = *cfg, .st = st };
	int32_t *counts = NULL, *ann = NULL;
	struct omsg *msgs = NULL;
	uint32_t nmsgs = 0, chunks;
	int fd, ret;

	memset(st, 0, sizeof(*st));
	if (!cfg->nvocab)
		return ia_fail(err, errlen, -EINVAL, "empty key space");
	chunks = ia_wc_chunks(cfg->nvocab);
	mp.nann = ia_wc_nann(cfg->nvocab);
	if (!mp.cfg.port)
		mp.cfg.port = IA_UDP_PORT;
	if (!mp.cfg.window)
		mp.cfg.window = IA_WC_WINDOW;
	if (!mp.cfg.timeout_ms)
		mp.cfg.timeout_ms = IA_WC_TIMEOUT_MS;
	if (!mp.cfg.retries)
		mp.cfg.retries = IA_WC_RETRIES;
	mp.reducer = (struct sockaddr_in){ .sin_family = AF_INET, .sin_port = htons(mp.cfg.port),
					   .sin_addr = cfg->reducer };
	mp.at = malloc((size_t)chunks * sizeof(*mp.at));
	if (!mp.at)
		return ia_fail(err, errlen, -ENOMEM, "out of memory");
	memset(mp.at, 0xff, (size_t)chunks * sizeof(*mp.at));
	ret = prepare(&mp, words, n, &counts, &ann, &msgs, &nmsgs, err, errlen);
	if (ret)
		goto out;
	fd = ia_io_udp_open(cfg->addr, mp.cfg.port, err, errlen);
	if (fd < 0) {
		ret = fd;
		goto out;
	}
	ia_io_tx_init(&mp.tx, fd, &cfg->faults);
	ia_io_rx_init(&mp.rx);
	/* Every announcement's result first: then every switch knows who sends what. */
	ret = exchange(&mp, msgs, mp.nann, mp.nann, err, errlen);
	if (!ret)
		ret = exchange(&mp, msgs + mp.nann, nmsgs - mp.nann, mp.cfg.window, err, errlen);
	close(fd);
out:
	free(mp.at);
	free(counts);
	free(ann);
	free(msgs);
	return ret;
}
