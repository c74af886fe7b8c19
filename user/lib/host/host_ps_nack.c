// SPDX-License-Identifier: GPL-2.0
/*
 * The destination's NACKs (ia_ps_cfg.nack): a chunk found lacking a piece
 * is asked for from its workers at once, rather than after their timers.
 * See docs/hosts.md ("Loss recovery").
 */
#include <errno.h>
#include <stdlib.h>

#include "host_ps_int.h"

static bool ps_has(const struct pchunk *c, uint32_t sender)
{
	uint32_t i;

	if (c->state != PC_OPEN)
		return false;
	for (i = 0; i < c->nsenders; i++)
		if (c->senders[i] == sender)
			return true;
	return false;
}

/*
 * Loss found at the destination, for jobs without member sets: every sender
 * sends its pieces in chunk order (a worker its chunks, a blue switch each
 * aggregate once its members' contributions are in, and those come in
 * order), so a piece of chunk idx shows that each open chunk before it
 * lacking this sender's piece lost something on the way: a contribution,
 * the aggregate, or this sender's own message. A PS job's tail switches
 * flush partials by age, out of order: no NACKs there (the caller's test).
 */
int ia_ps_nack_heard(struct ia_ps *ps, uint64_t idx, uint32_t sender, uint64_t now)
{
	struct ps_src *src = NULL;
	uint64_t i, from;
	uint32_t k;

	if (idx > ps->hi)
		ps->hi = idx;
	for (k = 0; k < ps->nsrc; k++)
		if (ps->src[k].id == sender)
			src = &ps->src[k];
	if (!src) {
		if (ps->nsrc == ps->capsrc) {
			struct ps_src *n = realloc(ps->src, (ps->capsrc * 2 + 4) * sizeof(*n));

			if (!n)
				return -ENOMEM;
			ps->src = n;
			ps->capsrc = ps->capsrc * 2 + 4;
		}
		src = &ps->src[ps->nsrc++];
		/* Its first piece: every chunk before it was sent before. */
		*src = (struct ps_src){ .id = sender, .top = 0 };
		from = 0;
	} else if (idx <= src->top) {
		return 0;
	} else {
		from = src->top + 1;
	}
	src->top = idx;
	if (from < ps->lo)
		from = ps->lo;
	if (idx > from + NACK_SCAN)
		from = idx - NACK_SCAN;
	for (i = from; i < idx; i++) {
		struct pchunk *o = &ps->ch[i];

		if (o->state != PC_DONE && !o->suspect && !o->nacked && !ps_has(o, sender))
			o->suspect = now;
	}
	return 0;
}

/*
 * NACKs being gathered: (chunk, sender) pairs for one message, as many as a
 * default chunk holds, so that a NACK passes any link a default chunk does
 * whatever the job's chunk.
 */
#define NACK_PAIRS	(IA_CHUNK_DEFAULT / 2)

struct nack_msg {
	uint32_t n;		/* pairs */
	uint32_t first;		/* the first pair's chunk sequence number */
	uint8_t buf[IA_HDR_LEN + 8 * NACK_PAIRS] __attribute__((aligned(4)));
};

static int nack_flush(struct ia_ps *ps, struct nack_msg *m)
{
	size_t len = IA_HDR_LEN + 8 * m->n;
	uint32_t i;
	int ret;

	if (!m->n)
		return 0;
	ia_hdr_fill((struct ia_hdr *)m->buf, IA_MSG_RESULT, ps->cfg.job, m->first, ps->cfg.id, 0,
		    2 * m->n, IA_F_NACK);
	m->n = 0;
	ps->st.nacks++;
	if (ps->cfg.down_mode == IA_PS_DOWN_ADDR)
		return ia_io_tx_send(&ps->tx, m->buf, len, &ps->down);
	for (i = 0; i < ps->nwaddr; i++) {
		ret = ia_io_tx_send(&ps->tx, m->buf, len, &ps->waddr[i]);
		if (ret)
			return ret;
	}
	return 0;
}

/* Chunk idx's pairs: the senders whose later pieces came but not this one. */
static int nack_chunk(struct ia_ps *ps, struct nack_msg *m, uint64_t idx)
{
	struct pchunk *c = &ps->ch[idx];
	uint32_t i, seq = ps->cfg.base_seq + (uint32_t)idx;
	int ret;

	for (i = 0; i < ps->nsrc; i++) {
		uint32_t pair[2] = { seq, ps->src[i].id };

		if (ps->src[i].top <= idx || ps_has(c, ps->src[i].id))
			continue;
		if (m->n == NACK_PAIRS) {
			ret = nack_flush(ps, m);
			if (ret)
				return ret;
		}
		if (!m->n)
			m->first = seq;
		ia_io_payload_put(m->buf + IA_HDR_LEN + 8 * m->n++, (const int32_t *)pair, 2);
		ps->st.nacked++;
	}
	return 0;
}

/*
 * A chunk is NACKed once, NACK_REO_NS after it was found lacking a piece
 * (reordering on the way); a NACK or resend lost again is the workers'
 * timers'. NACKed again every millisecond while open, it made 10 % loss
 * slower than timers alone on a busy host (docs/hosts.md). Every chunk due
 * goes into as few messages as possible: a NACK costs a message on every
 * worker's link and a wake-up of every worker.
 */
int ia_ps_nack(struct ia_ps *ps, uint64_t now, uint64_t *wake)
{
	struct nack_msg m;
	uint64_t i, end, due;
	int ret;

	m.n = 0;
	*wake = UINT64_MAX;
	while (ps->lo < ps->nchunks && ps->ch[ps->lo].state == PC_DONE)
		ps->lo++;
	end = ps->hi < ps->lo + NACK_SCAN ? ps->hi : ps->lo + NACK_SCAN;
	for (i = ps->lo; i < end && i < ps->nchunks; i++) {
		struct pchunk *c = &ps->ch[i];

		if (c->state == PC_DONE || !c->suspect)
			continue;
		due = c->suspect + NACK_REO_NS;
		if (due > now) {
			*wake = due < *wake ? due : *wake;
			continue;
		}
		ret = nack_chunk(ps, &m, i);
		if (ret)
			return ret;
		c->suspect = 0;
		c->nacked = 1;
	}
	return nack_flush(ps, &m);
}
