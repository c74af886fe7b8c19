// SPDX-License-Identifier: GPL-2.0
/*
 * The word-count reducer at a job's destination: the same rule as a blue
 * switch of a sparse job (every member in each announcement, per block only
 * the members that announced it, each exactly once), and a result down for
 * every chunk complete; see wc_host.h.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>

#include "err.h"
#include "host_io.h"
#include "inagg/maps.h"
#include "netplan.h"
#include "wc_host.h"

struct rchunk {
	uint32_t expected;	/* members that contribute */
	uint32_t nseen;
	bool done;
};

struct reducer {
	struct ia_wc_reducer_cfg cfg;
	uint32_t nann, nblocks, nchunks, words;	/* words: of a member bitmap */
	uint32_t nworkers;			/* of all members */
	struct rchunk *ch;
	uint64_t *seen;		/* per chunk: members added */
	uint64_t *announced;	/* per block: members that announced it */
	int32_t *ann;		/* announcement sums */
	uint32_t *counts;
	uint32_t remaining;	/* chunks still expected */
	struct sockaddr_in down;
	struct ia_io_tx tx;
	struct ia_io_rx rx;
	struct ia_wc_reducer_stats *st;
};

static int member_index(const struct reducer *r, uint32_t sender, uint32_t nworkers)
{
	for (uint32_t i = 0; i < r->cfg.nmembers; i++)
		if (r->cfg.members[i].id == sender)
			return r->cfg.members[i].nworkers == nworkers ? (int)i : -1;
	return -1;
}

/* again: for a message that missed it, flagged so that switches count each chunk once. */
static int send_result(struct reducer *r, uint32_t chunk, bool again)
{
	uint8_t buf[IA_IO_MSG_MAX] __attribute__((aligned(4)));
	uint32_t len = ia_wc_chunk_len(r->cfg.nvocab, chunk);
	int32_t pl[IA_SPARSE_ELEMS] = { 0 };

	memcpy(pl, chunk < r->nann ? r->ann + (size_t)chunk * IA_SPARSE_ELEMS :
		   (const int32_t *)r->counts + (size_t)(chunk - r->nann) * IA_WC_KEYS,
	       len * sizeof(*pl));
	ia_hdr_fill((struct ia_hdr *)buf, IA_MSG_RESULT, r->cfg.job, r->cfg.base_seq + chunk,
		    IA_SENDER_DEST, r->nworkers, IA_SPARSE_ELEMS, again ? IA_F_RETX : 0);
	ia_io_payload_put(buf + IA_HDR_LEN, pl, IA_SPARSE_ELEMS);
	r->st->results++;
	return ia_io_tx_send(&r->tx, buf, IA_HDR_LEN + 4 * IA_SPARSE_ELEMS, &r->down);
}

/* An announcement is complete: each block expects the members that announced it. */
static void announced(struct reducer *r, uint32_t a)
{
	for (uint32_t e = 0; e < ia_wc_chunk_len(r->cfg.nvocab, a); e++) {
		uint32_t b = a * IA_SPARSE_ELEMS + e, n = 0;

		for (uint32_t w = 0; w < r->words; w++)
			n += __builtin_popcountll(r->announced[(size_t)b * r->words + w]);
		r->ch[r->nann + b].expected = n;
		if (n) {
			r->st->blocks++;
			r->remaining++;
		}
	}
}

static int recv_one(struct reducer *r, const uint8_t *buf, size_t len)
{
	const struct ia_hdr *h = (const struct ia_hdr *)buf;
	uint32_t chunk, nelem, b;
	uint64_t bit, *seen;
	struct rchunk *c;
	int m;

	r->st->rx++;
	if (len < IA_HDR_LEN || h->ver != IA_VERSION ||
	    (h->type != IA_MSG_CONTRIB && h->type != IA_MSG_AGG) || ntohl(h->job) != r->cfg.job)
		goto drop;
	chunk = ntohl(h->seq) - r->cfg.base_seq;
	nelem = ntohs(h->nelem);
	if (chunk >= r->nchunks || nelem != IA_SPARSE_ELEMS || len != IA_HDR_LEN + 4 * nelem)
		goto drop;
	m = member_index(r, ntohl(h->sender), ntohl(h->nworkers));
	if (m < 0)
		goto drop;
	c = &r->ch[chunk];
	bit = 1ull << (m % 64);
	seen = r->seen + (size_t)chunk * r->words + m / 64;
	if (chunk >= r->nann) {
		b = chunk - r->nann;
		/* Blocks only after their announcement, and only from who announced them. */
		if (!r->ch[b / IA_SPARSE_ELEMS].done ||
		    !(r->announced[(size_t)b * r->words + m / 64] & bit))
			goto drop;
	}
	if (c->done) {
		r->st->late++;
		return send_result(r, chunk, true);
	}
	if (*seen & bit) {
		r->st->dup++;
		return 0;
	}
	*seen |= bit;
	r->st->accepted++;
	/* Elements past the key space are padding. */
	nelem = ia_wc_chunk_len(r->cfg.nvocab, chunk);
	for (uint32_t e = 0; e < nelem; e++) {
		uint32_t v = ia_io_payload_get(buf + IA_HDR_LEN, e);

		if (chunk < r->nann) {
			r->ann[(size_t)chunk * IA_SPARSE_ELEMS + e] += v;
			if (v)
				r->announced[((size_t)chunk * IA_SPARSE_ELEMS + e) * r->words + m / 64] |=
					bit;
		} else {
			r->counts[(size_t)(chunk - r->nann) * IA_WC_KEYS + e] += v;
		}
	}
	if (++c->nseen < c->expected)
		return 0;
	c->done = true;
	r->remaining--;
	if (chunk < r->nann)
		announced(r, chunk);
	else
		r->st->done++;
	return send_result(r, chunk, false);
drop:
	r->st->dropped++;
	return 0;
}

static int setup(struct reducer *r, char *err, size_t errlen)
{
	static const struct ia_host_faults nofaults;
	const struct ia_wc_reducer_cfg *cfg = &r->cfg;
	int fd;

	if (!cfg->nvocab)
		return ia_fail(err, errlen, -EINVAL, "empty key space");
	if (!cfg->nmembers || cfg->nmembers > IA_MAX_FANIN)
		return ia_fail(err, errlen, -EINVAL, "%u members: must be 1 to %u", cfg->nmembers,
			       IA_MAX_FANIN);
	if (!cfg->down.s_addr)
		return ia_fail(err, errlen, -EINVAL, "no down address for results");
	r->nann = ia_wc_nann(cfg->nvocab);
	r->nblocks = ia_wc_nblocks(cfg->nvocab);
	r->nchunks = r->nann + r->nblocks;
	r->words = (cfg->nmembers + 63) / 64;
	for (uint32_t i = 0; i < cfg->nmembers; i++)
		r->nworkers += cfg->members[i].nworkers;
	r->ch = calloc(r->nchunks, sizeof(*r->ch));
	r->seen = calloc((size_t)r->nchunks * r->words, sizeof(*r->seen));
	r->announced = calloc((size_t)r->nann * IA_SPARSE_ELEMS * r->words, sizeof(*r->announced));
	r->ann = calloc((size_t)r->nann * IA_SPARSE_ELEMS, sizeof(*r->ann));
	if (!r->ch || !r->seen || !r->announced || !r->ann)
		return ia_fail(err, errlen, -ENOMEM, "out of memory");
	for (uint32_t a = 0; a < r->nann; a++)
		r->ch[a].expected = cfg->nmembers;
	r->remaining = r->nann;
	r->down = (struct sockaddr_in){ .sin_family = AF_INET, .sin_port = htons(cfg->port),
					.sin_addr = cfg->down };
	fd = ia_io_udp_open(cfg->addr, cfg->port, err, errlen);
	if (fd < 0)
		return fd;
	ia_io_tx_init(&r->tx, fd, &nofaults);
	ia_io_rx_init(&r->rx);
	return 0;
}

int ia_wc_reduce(const struct ia_wc_reducer_cfg *cfg, uint32_t *counts,
		 struct ia_wc_reducer_stats *st, char *err, size_t errlen)
{
	struct reducer r = { .cfg = *cfg, .counts = counts, .st = st };
	int ret;

	memset(st, 0, sizeof(*st));
	memset(counts, 0, (size_t)cfg->nvocab * sizeof(*counts));
	if (!r.cfg.port)
		r.cfg.port = IA_UDP_PORT;
	r.tx.fd = -1;
	ret = setup(&r, err, errlen);
	while (!ret) {
		bool complete = !r.remaining;
		int k;

		if (complete && !cfg->stop)
			break;
		if (cfg->stop && *cfg->stop) {
			if (!complete)
				ret = ia_fail(err, errlen, -EINTR,
					      "interrupted: %u of %u announced blocks complete",
					      st->done, st->blocks);
			break;
		}
		ret = ia_io_tx_flush(&r.tx);
		if (ret) {
			ia_fail(err, errlen, ret, "send: %s", strerror(-ret));
			break;
		}
		k = ia_io_rx_wait(r.tx.fd, &r.rx, IA_IO_POLL_MAX_MS * 1000000ull);
		if (k < 0) {
			ret = ia_fail(err, errlen, k, "receive: %s", strerror(-k));
			break;
		}
		for (int i = 0; i < k && !ret; i++)
			ret = recv_one(&r, r.rx.buf[i], r.rx.mm[i].msg_len);
		if (ret)
			ia_fail(err, errlen, ret, "send: %s", strerror(-ret));
	}
	if (r.tx.fd >= 0) {
		/* The last results are still queued (host_io.h). */
		int f = ia_io_tx_flush(&r.tx);

		if (f && !ret)
			ret = ia_fail(err, errlen, f, "send: %s", strerror(-f));
		close(r.tx.fd);
	}
	free(r.ch);
	free(r.seen);
	free(r.announced);
	free(r.ann);
	return ret;
}
