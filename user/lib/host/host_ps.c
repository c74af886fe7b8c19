// SPDX-License-Identifier: GPL-2.0
/*
 * Destination (PS): completes the aggregation of what reaches it
 * unaggregated, exactly once per sender, and sends each chunk's result down.
 * See host.h and docs/hosts.md.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>

#include "err.h"
#include "host.h"
#include "host_ps_int.h"
#include "names.h"

static const char *const drop_names[IA_PS_DROP__COUNT] = {
	[IA_PS_DROP_SHORT] = "short",	[IA_PS_DROP_VERSION] = "version",
	[IA_PS_DROP_TYPE] = "type",	[IA_PS_DROP_JOB] = "job",
	[IA_PS_DROP_NELEM] = "nelem",	[IA_PS_DROP_MEMBER] = "member",
	[IA_PS_DROP_WINDOW] = "window", [IA_PS_DROP_OVER] = "over",
};

const char *ia_ps_drop_name(enum ia_ps_drop d)
{
	return ia_name_of(drop_names, IA_PS_DROP__COUNT, d);
}

int ia_ps_open(const struct ia_ps_cfg *cfg, struct ia_ps **out, char *err, size_t errlen)
{
	struct ia_ps *ps;
	uint32_t chunk = cfg->chunk ? cfg->chunk : IA_CHUNK_DEFAULT;
	uint64_t nchunks;
	int fd, ret;
	uint32_t i;

	if (cfg->chunk > IA_MAX_ELEMS)
		return ia_fail(err, errlen, -EINVAL, "chunk of %u elements: at most %u", cfg->chunk,
			    IA_MAX_ELEMS);
	if (!cfg->nworkers)
		return ia_fail(err, errlen, -EINVAL, "the job needs at least one worker");
	nchunks = ia_host_nchunks(cfg->nelem, chunk);
	if (!nchunks)
		return ia_fail(err, errlen, -EINVAL, "empty vector");
	if (nchunks > IA_HOST_MAX_CHUNKS)
		return ia_fail(err, errlen, -E2BIG, "%llu chunks: at most %u",
			    (unsigned long long)nchunks, IA_HOST_MAX_CHUNKS);
	if (cfg->down_mode == IA_PS_DOWN_ADDR && !cfg->down.s_addr)
		return ia_fail(err, errlen, -EINVAL, "no down address for results (or use unicast)");
	if (cfg->down_mode == IA_PS_DOWN_ADDR) {
		ret = ia_io_mtu_check(cfg->down, chunk, err, errlen);
		if (ret)
			return ret;
	}
	ps = calloc(1, sizeof(*ps));
	if (!ps)
		return ia_fail(err, errlen, -ENOMEM, "out of memory");
	ps->cfg = *cfg;
	ps->cfg.chunk = chunk;
	if (!ps->cfg.port)
		ps->cfg.port = IA_UDP_PORT;
	ps->nchunks = nchunks;
	ps->ch = calloc(nchunks, sizeof(*ps->ch));
	ps->sum = calloc(cfg->nelem, sizeof(*ps->sum));
	if (cfg->nmembers)
		ps->members = calloc(cfg->nmembers, sizeof(*ps->members));
	if (cfg->sets && cfg->nmembers)
		ps->sets = calloc(cfg->nmembers, sizeof(*ps->sets));
	if (!ps->ch || !ps->sum || (cfg->nmembers && !ps->members) ||
	    (cfg->sets && cfg->nmembers && !ps->sets)) {
		ret = ia_fail(err, errlen, -ENOMEM, "out of memory");
		goto err;
	}
	for (i = 0; i < cfg->nmembers; i++) {
		if (!cfg->members[i].nworkers) {
			ret = ia_fail(err, errlen, -EINVAL, "member %u: nworkers must be >= 1",
				   cfg->members[i].id);
			goto err;
		}
		ps->members[i] = cfg->members[i];
		if (!cfg->sets)
			continue;
		if (!cfg->sets[i] ||
		    (uint32_t)__builtin_popcountll(cfg->sets[i]) != cfg->members[i].nworkers) {
			ret = ia_fail(err, errlen, -EINVAL, "member %u: its set must hold %u ranks",
				      cfg->members[i].id, cfg->members[i].nworkers);
			goto err;
		}
		ps->sets[i] = cfg->sets[i];
		ps->full |= cfg->sets[i];
	}
	if (cfg->sets && (!cfg->nmembers ||
			  (uint32_t)__builtin_popcountll(ps->full) != cfg->nworkers)) {
		ret = ia_fail(err, errlen, -EINVAL, "member sets: %u workers need %u ranks in all",
			      cfg->nworkers, cfg->nworkers);
		goto err;
	}
	ps->cfg.members = ps->members;
	ps->cfg.sets = ps->sets;
	ps->down = (struct sockaddr_in){
		.sin_family = AF_INET,
		.sin_port = htons(ps->cfg.port),
		.sin_addr = cfg->down,
	};
	fd = ia_io_udp_open(cfg->addr, ps->cfg.port, err, errlen);
	if (fd < 0) {
		ret = fd;
		goto err;
	}
	ia_io_tx_init(&ps->tx, fd, &cfg->faults);
	/* Without stamps a datagram's time is when it was read: later, never wrong. */
	ia_io_rx_stamps(fd);
	ps->st.chunks = nchunks;
	ia_io_rx_init(&ps->rx);
	*out = ps;
	return 0;
err:
	free(ps->sets);
	free(ps->members);
	free(ps->sum);
	free(ps->ch);
	free(ps);
	return ret;
}

void ia_ps_close(struct ia_ps *ps)
{
	uint64_t i;

	if (!ps)
		return;
	close(ps->tx.fd);
	for (i = 0; i < ps->nchunks; i++) {
		if (ps->ch[i].state == PC_DONE)
			continue;
		if (ps->sets)
			ia_ps_pieces_free(&ps->ch[i]);
		else
			free(ps->ch[i].senders);
	}
	free(ps->waddr);
	free(ps->wid);
	free(ps->pend);
	free(ps->src);
	free(ps->sets);
	free(ps->members);
	free(ps->sum);
	free(ps->ch);
	free(ps);
}

const int32_t *ia_ps_result(const struct ia_ps *ps)
{
	return ps->sum;
}

void ia_ps_stats(const struct ia_ps *ps, struct ia_ps_stats *st)
{
	*st = ps->st;
	st->addresses = ps->nwaddr;
}

static const struct ia_sender *ps_member(const struct ia_ps *ps, uint32_t sender)
{
	uint32_t i;

	for (i = 0; i < ps->cfg.nmembers; i++)
		if (ps->members[i].id == sender)
			return &ps->members[i];
	return NULL;
}

/* By set: the piece's member set (its trailer, else its sender's), 0 if it is not valid. */
static uint64_t ps_piece_set(const struct ia_ps *ps, const struct ia_hdr *h, const uint8_t *buf,
			     uint32_t nelem, const struct ia_sender *m)
{
	const uint64_t mine = ps->sets[m - ps->members];
	uint64_t set = mine;
	uint32_t hi, lo;

	if (h->flags & IA_F_SET) {
		memcpy(&hi, buf + IA_HDR_LEN + 4 * nelem, 4);
		memcpy(&lo, buf + IA_HDR_LEN + 4 * nelem + 4, 4);
		set = (uint64_t)ntohl(hi) << 32 | ntohl(lo);
	}
	if (!set || (set & ~mine) ||
	    (uint32_t)__builtin_popcountll(set) != ntohl(h->nworkers))
		return 0;
	return set;
}

/*
 * Unicast: the address results go to for sender, learned from its first
 * contribution. A sender keeps its first address and the list holds at
 * most cfg.nworkers: a spoofed source (XDP forwarding bypasses rp_filter)
 * neither grows the PS's memory nor joins the results' fan-out. 1 if from
 * is (now) in the list, 0 if not, or -ENOMEM.
 */
static int ps_learn(struct ia_ps *ps, const struct sockaddr_in *from, uint32_t sender)
{
	uint32_t i, cap;
	void *n;

	for (i = 0; i < ps->nwaddr; i++) {
		if (ps->waddr[i].sin_addr.s_addr == from->sin_addr.s_addr &&
		    ps->waddr[i].sin_port == from->sin_port)
			return 1;
		if (ps->wid[i] == sender)
			goto unlearned;	/* the id's address is another */
	}
	if (ps->nwaddr >= ps->cfg.nworkers)
		goto unlearned;
	if (ps->nwaddr == ps->capwaddr) {
		cap = ps->capwaddr * 2 + 4;
		if (cap > ps->cfg.nworkers)
			cap = ps->cfg.nworkers;
		n = realloc(ps->waddr, cap * sizeof(*ps->waddr));
		if (!n)
			return -ENOMEM;
		ps->waddr = n;
		n = realloc(ps->wid, cap * sizeof(*ps->wid));
		if (!n)
			return -ENOMEM;
		ps->wid = n;
		ps->capwaddr = cap;
	}
	ps->wid[ps->nwaddr] = sender;
	ps->waddr[ps->nwaddr++] = *from;
	return 1;
unlearned:
	ps->st.unlearned++;
	return 0;
}

int ia_ps_send_result(struct ia_ps *ps, uint64_t idx, const struct sockaddr_in *to)
{
	uint32_t len = ia_host_chunk_len(ps->cfg.nelem, ps->cfg.chunk, idx);
	uint8_t buf[IA_IO_MSG_MAX] __attribute__((aligned(4)));
	size_t mlen = IA_HDR_LEN + 4 * len;
	uint32_t i;
	int ret;

	/* Sent again: flagged, so that the switches count each chunk once (IA_C_RESULT_EXTRA). */
	ia_hdr_fill((struct ia_hdr *)buf, IA_MSG_RESULT, ps->cfg.job,
		    ps->cfg.base_seq + (uint32_t)idx, ps->cfg.id, ps->cfg.nworkers, len,
		    (ps->ch[idx].flags & (IA_F_MARK | IA_F_COLL)) |
		    (ps->ch[idx].down ? IA_F_RETX : 0));
	ps->ch[idx].down = 1;
	ia_io_payload_put(buf + IA_HDR_LEN, ps->sum + idx * ps->cfg.chunk, len);
	if (ps->cfg.down_mode == IA_PS_DOWN_ADDR) {
		ps->st.results++;
		return ia_io_tx_send(&ps->tx, buf, mlen, &ps->down);
	}
	if (to) {
		ps->st.results++;
		return ia_io_tx_send(&ps->tx, buf, mlen, to);
	}
	for (i = 0; i < ps->nwaddr; i++) {
		ps->st.results++;
		ret = ia_io_tx_send(&ps->tx, buf, mlen, &ps->waddr[i]);
		if (ret)
			return ret;
	}
	return 0;
}


static int ps_drop(struct ia_ps *ps, enum ia_ps_drop why)
{
	ps->st.drop[why]++;
	return 0;
}

static int ps_recv(struct ia_ps *ps, const uint8_t *buf, size_t len,
		   const struct sockaddr_in *from, bool ce, uint64_t at)
{
	const struct ia_hdr *h = (const struct ia_hdr *)buf;
	const struct ia_sender *m;
	uint32_t sender, nw, nelem, i, tlen;
	int32_t val[IA_MAX_ELEMS];
	uint64_t set = 0;
	struct pchunk *c;
	bool unicast = ps->cfg.down_mode == IA_PS_DOWN_UNICAST, known = false;
	uint64_t idx;
	int32_t *dst;
	int ret;

	ps->st.rx++;
	if (len < IA_HDR_LEN)
		return ps_drop(ps, IA_PS_DROP_SHORT);
	if (h->ver != IA_VERSION)
		return ps_drop(ps, IA_PS_DROP_VERSION);
	if (h->type != IA_MSG_CONTRIB && h->type != IA_MSG_AGG)
		return ps_drop(ps, IA_PS_DROP_TYPE);
	if (ntohl(h->job) != ps->cfg.job)
		return ps_drop(ps, IA_PS_DROP_JOB);
	nelem = ntohs(h->nelem);
	if (!nelem || nelem > IA_MAX_ELEMS)
		return ps_drop(ps, IA_PS_DROP_NELEM);
	tlen = (ps->sets && (h->flags & IA_F_SET)) ? IA_SET_LEN : 0;
	if (len < IA_HDR_LEN + 4 * nelem + tlen)
		return ps_drop(ps, IA_PS_DROP_SHORT);
	if (len != IA_HDR_LEN + 4 * nelem + tlen)
		return ps_drop(ps, IA_PS_DROP_NELEM);
	idx = (uint32_t)(ntohl(h->seq) - ps->cfg.base_seq);
	if (idx >= ps->nchunks)
		return ps_drop(ps, IA_PS_DROP_WINDOW);
	if (nelem != ia_host_chunk_len(ps->cfg.nelem, ps->cfg.chunk, idx))
		return ps_drop(ps, IA_PS_DROP_NELEM);
	sender = ntohl(h->sender);
	nw = ntohl(h->nworkers);
	if (!nw)
		return ps_drop(ps, IA_PS_DROP_MEMBER);
	if (ps->cfg.nmembers) {
		m = ps_member(ps, sender);
		if (!m || (m->nworkers != nw && !(ps->sets && (h->flags & IA_F_SET))))
			return ps_drop(ps, IA_PS_DROP_MEMBER);
		if (ps->sets) {
			set = ps_piece_set(ps, h, buf, nelem, m);
			if (!set)
				return ps_drop(ps, IA_PS_DROP_MEMBER);
		}
	}
	if (unicast && h->type == IA_MSG_CONTRIB) {
		ret = ps_learn(ps, from, sender);
		if (ret < 0)
			return ret;
		known = ret;
	}
	c = &ps->ch[idx];
	if (ps->cfg.nack && !ps->sets) {
		ret = ia_ps_nack_heard(ps, idx, sender, ia_io_now_ns());
		if (ret)
			return ret;
	}
	if (c->state == PC_DONE) {
		/* A retransmission that missed the result: send it again, count nothing. */
		ps->st.late++;
		/* Queued before the latest result went down: no sign of its loss. */
		if (!unicast &&
		    ia_ps_late_stale(at, c->sent_at, ps->st.late - 1 - ps->st.late_stale, ps->st.done)) {
			ps->st.late_stale++;
			return 0;
		}
		if (!unicast)
			return ia_ps_late(ps, idx, ia_io_now_ns());
		/* Answered only at an address learned: no reflection to a spoofed source. */
		if (h->type == IA_MSG_CONTRIB && !known)
			return 0;
		return ia_ps_send_result(ps, idx, h->type == IA_MSG_CONTRIB ? from : NULL);
	}
	ia_io_payload_take(val, buf + IA_HDR_LEN, nelem);
	if (ps->sets) {
		/*
		 * Exactly once by member set: a piece is merged only for members
		 * not in yet. A subset is a duplicate. A partial overlap is split
		 * where what the chunk merged lies wholly inside or outside it
		 * (host_ps_sets.c), else dropped whole, and its missing members'
		 * retransmissions (never aggregated on the way) fill the gap
		 * (docs/memory.md).
		 */
		if (!(set & ~c->uset)) {
			ps->st.dup++;
			return 0;
		}
		if (set & c->uset) {
			if (!ia_ps_pieces_split(c, &set, val, nelem)) {
				ps->st.overlap++;
				return 0;
			}
			ps->st.split++;
			nw = __builtin_popcountll(set);
		}
		ret = ia_ps_pieces_keep(c, set, val, nelem);
		if (ret)
			return ret;
		c->uset |= set;
		if (h->flags & IA_F_SET)
			ps->st.pieces++;
	} else {
		for (i = 0; i < c->nsenders; i++)
			if (c->senders[i] == sender) {
				ps->st.dup++;
				return 0;
			}
	}
	if (nw > ps->cfg.nworkers - c->nworkers)
		return ps_drop(ps, IA_PS_DROP_OVER);
	if (!ps->sets && c->nsenders == c->cap) {
		uint32_t cap = c->cap ? 2 * c->cap : 4;
		uint32_t *s = realloc(c->senders, cap * sizeof(*s));

		if (!s)
			return -ENOMEM;
		c->senders = s;
		c->cap = cap;
	}
	if (!ps->sets)
		c->senders[c->nsenders++] = sender;
	c->state = PC_OPEN;
	c->nworkers += nw;
	if (!ps->t_first)
		ps->t_first = ia_io_now_ns();
	if (h->type == IA_MSG_CONTRIB)
		ps->st.contrib++;
	else
		ps->st.agg++;
	/* A qdisc on the way marked it CE: congestion as a switch's mark is (docs/cc.md). */
	if ((h->flags & IA_F_MARK) || ce) {
		ps->st.marks++;
		ps->st.ce += ce;
		c->flags |= IA_F_MARK;
	}
	/* It collided in a tail on the way: the result says so (docs/cc.md). */
	if (h->flags & IA_F_COLL) {
		ps->st.colls++;
		c->flags |= IA_F_COLL;
	}
	dst = ps->sum + idx * ps->cfg.chunk;
	for (i = 0; i < nelem; i++)
		dst[i] = (int32_t)((uint32_t)dst[i] + (uint32_t)val[i]);
	if (c->nworkers < ps->cfg.nworkers)
		return 0;
	c->state = PC_DONE;
	if (ps->sets)
		ia_ps_pieces_free(c);
	else
		free(c->senders);
	c->sent_at = ia_io_now_ns();
	if (ps->cfg.t_done)
		ps->cfg.t_done[idx] = c->sent_at;
	c->nsenders = c->cap = 0;
	ps->st.done++;
	ps->st.elapsed = (ia_io_now_ns() - ps->t_first) / 1e9;
	return ia_ps_send_result(ps, idx, NULL);
}

static int ps_loop(struct ia_ps *ps, char *err, size_t errlen)
{
	uint64_t idle_since = 0, now, nack_wake = UINT64_MAX, late_wake = UINT64_MAX;
	uint64_t wait;
	int i, k, ret;

	for (;;) {
		if (ps->cfg.stop && *ps->cfg.stop) {
			if (ps->st.done == ps->nchunks)
				return 0;
			return ia_fail(err, errlen, -EINTR, "interrupted with %u of %u chunks complete",
				    ps->st.done, ps->st.chunks);
		}
		ret = ia_io_tx_flush(&ps->tx);
		if (ret)
			return ia_fail(err, errlen, ret, "send: %s", strerror(-ret));
		now = ia_io_now_ns();
		wait = IA_IO_POLL_MAX_MS * 1000000ull;
		if (nack_wake != UINT64_MAX && ps->st.done < ps->nchunks)
			wait = nack_wake > now ? ia_io_ns_until(nack_wake, now) : 0;
		if (ps->st.done == ps->nchunks && ps->cfg.linger_ms >= 0) {
			uint64_t end;

			if (!idle_since)
				idle_since = now;
			end = idle_since + ps->cfg.linger_ms * 1000000ull;
			if (now >= end)
				return 0;
			wait = ia_io_ns_until(end, now);
		}
		/* Deferred answers to late messages are due in linger time too. */
		if (ps->npend) {
			uint64_t lw = late_wake > now ? ia_io_ns_until(late_wake, now) : 0;

			wait = lw < wait ? lw : wait;
		}
		k = ia_io_rx_wait(ps->tx.fd, &ps->rx, wait);
		if (k < 0)
			return ia_fail(err, errlen, k, "receive: %s", strerror(-k));
		for (i = 0; i < k; i++) {
			ret = ps_recv(ps, ps->rx.buf[i], ps->rx.mm[i].msg_len, &ps->rx.from[i],
				      ia_io_rx_ce(&ps->rx, i), ps->rx.at[i]);
			if (ret)
				return ia_fail(err, errlen, ret, "%s", strerror(-ret));
		}
		if (k)
			idle_since = 0;
		if (ps->npend) {
			ret = ia_ps_late_flush(ps, ia_io_now_ns(), &late_wake);
			if (ret)
				return ia_fail(err, errlen, ret, "send: %s", strerror(-ret));
		}
		/*
		 * NACKs once the socket is drained: a piece overtaken on the way
		 * may still be queued after the one that made its chunk suspect.
		 */
		if (k < IA_IO_RX_BATCH && ps->cfg.nack && !ps->sets && ps->st.done < ps->nchunks) {
			uint64_t wake;

			now = ia_io_now_ns();
			ret = ia_ps_nack(ps, now, &wake);
			if (ret)
				return ia_fail(err, errlen, ret, "send: %s", strerror(-ret));
			nack_wake = wake;
		}
	}
}

int ia_ps_run(struct ia_ps *ps, char *err, size_t errlen)
{
	int ret = ps_loop(ps, err, errlen);

	if (ret)
		return ret;
	/* Answers of the last round are still queued (host_io.h). */
	ret = ia_io_tx_flush(&ps->tx);
	return ret ? ia_fail(err, errlen, ret, "send: %s", strerror(-ret)) : 0;
}
