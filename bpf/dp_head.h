/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Blue: aggregation into a job's own (head) slots. Chunk seq uses slot
 * seq % window of the job's slot array, under that slot's lock in
 * ia_locks; exactly-once by the slot's member bitmap, re-emission from a
 * DONE slot (docs/datapath.md, "Blue").
 */
#ifndef INAGG_DP_HEAD_H
#define INAGG_DP_HEAD_H

#include "dp_send.h"
#include "dp_sum.h"

enum blue_verdict {
	BV_ADDED,	/* consumed */
	BV_EMIT,	/* chunk complete: packet now holds the aggregate */
	BV_REEMIT,	/* chunk was complete: packet now holds the stored aggregate */
	BV_DUP,
	BV_WINDOW,
	BV_NELEM,
};

/* A contribution on its way into a slot; nworkers and flags: the aggregate's, on EMIT/REEMIT. */
struct contrib {
	__u32	*pl;		/* payload: nelem elements before end */
	void	*end;
	__u32	seq;
	__u32	nelem;
	__u32	nworkers;	/* out */
	__u8	flags;		/* in: the message's; out: the aggregate's */
};

static __always_inline int blue_slot(struct ia_slot *s, struct bpf_spin_lock *lock,
				     const struct ia_job_cfg *cfg, const struct ia_member *m,
				     struct contrib *c)
{
	__u32 word = m->index / 64, seq = c->seq, n = c->nelem;
	__u64 bit = 1ULL << (m->index % 64);
	__u32 *sum = (__u32 *)s->sum;
	int v, i;

	if (word >= IA_MAX_FANIN / 64)
		return BV_WINDOW;	/* loader guarantees index < expected <= IA_MAX_FANIN */

	bpf_spin_lock(lock);
	if (s->state == IA_SLOT_DONE && s->seq == seq) {
		if (s->nelem != n) {
			v = BV_NELEM;
			goto out;
		}
		sum_apply(sum, c->pl, c->end, n, OP_OUT);
		c->nworkers = s->nworkers;
		c->flags = s->flags;
		v = BV_REEMIT;
		goto out;
	}
	if (s->state == IA_SLOT_OPEN && s->seq == seq) {
		if (s->nelem != n) {
			v = BV_NELEM;
			goto out;
		}
		if (s->seen[word] & bit) {
			v = BV_DUP;
			goto out;
		}
	} else if ((s->state == IA_SLOT_EMPTY && seq - cfg->base_seq < cfg->window) ||
		   (s->state == IA_SLOT_DONE && seq == s->seq + cfg->window)) {
		/* First contribution of this chunk: (re)claim the slot. */
		s->seq = seq;
		s->state = IA_SLOT_OPEN;
		s->nseen = 0;
		s->nworkers = 0;
		s->nelem = n;
		s->flags = 0;
		/* Bits beyond expected are never set. */
		for (i = 0; i < IA_MAX_FANIN / 64 && i < (cfg->expected + 63) / 64; i++)
			s->seen[i] = 0;
	} else {
		/* Stale, too far ahead, or the previous chunk here is not done. */
		v = BV_WINDOW;
		goto out;
	}

	s->seen[word] |= bit;
	s->nworkers += m->nworkers;
	s->flags |= c->flags & IA_F_MARK;
	v = ++s->nseen >= cfg->expected ? BV_EMIT : BV_ADDED;
	if (s->nseen == 1)
		sum_apply(sum, c->pl, c->end, n, OP_COPY);	/* packet already holds the sum */
	else if (v == BV_EMIT)
		sum_apply(sum, c->pl, c->end, n, OP_ADD_OUT);
	else
		sum_apply(sum, c->pl, c->end, n, OP_ADD);
	if (v == BV_EMIT) {
		s->state = IA_SLOT_DONE;
		c->nworkers = s->nworkers;
		c->flags = s->flags;
	}
out:
	bpf_spin_unlock(lock);
	return v;
}

/* A member's upward message of a blue job: into its head slot, and up once complete. */
static __always_inline int head_aggregate(struct ia_pkt *k, const struct ia_member *m)
{
	const struct ia_job_cfg *cfg = k->cfg;
	struct ia_slot_lock *lock;
	struct contrib c;
	struct ia_slot *s;
	__u32 idx;
	void *slots;
	int v;

	c.seq = bpf_ntohl(HDR32(k->h, seq));
	idx = cfg->slot;
	slots = bpf_map_lookup_elem(&ia_slots, &idx);
	if (!slots || !cfg->window)
		return drop(k->p, k->j, IA_C_DROP_JOB);
	/* A division costs more than the rest of the slot lookup. */
	if (cfg->window & (cfg->window - 1))
		idx = c.seq % cfg->window;
	else
		idx = c.seq & (cfg->window - 1);
	s = bpf_map_lookup_elem(slots, &idx);
	idx = ia_lock_index(cfg->slot, idx);
	lock = bpf_map_lookup_elem(&ia_locks, &idx);
	if (!s || !lock)
		return drop(k->p, k->j, IA_C_DROP_WINDOW);

	c.pl = k->pl;
	c.end = k->end;
	c.nelem = k->nelem;
	c.flags = k->h->flags;
	c.nworkers = 0;
	v = blue_slot(s, &lock->lock, cfg, m, &c);
	switch (v) {
	case BV_ADDED:
		ctr(k->j, IA_C_AGGREGATED);
		return XDP_DROP;
	case BV_DUP:
		ctr(k->j, IA_C_DUP);
		return XDP_DROP;
	case BV_WINDOW:
		return drop(k->p, k->j, IA_C_DROP_WINDOW);
	case BV_NELEM:
		return drop(k->p, k->j, IA_C_DROP_NELEM);
	case BV_EMIT:
		ctr(k->j, IA_C_AGGREGATED);
		ctr(k->j, IA_C_EMIT);
		break;
	default:
		ctr(k->j, IA_C_REEMIT);
		c.flags |= IA_F_REEMIT;
		break;
	}
	return send_aggregate(k, c.nworkers, c.flags);
}

#endif /* INAGG_DP_HEAD_H */
