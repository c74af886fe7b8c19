/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Blue: aggregation into a job's own (head) slots. Chunk seq uses slot
 * seq % window of the job's slot array, under that slot's lock in
 * ia_locks; exactly-once by the slot's member bitmap, re-emission from a
 * DONE slot (docs/datapath.md, "Blue").
 */
#ifndef INAGG_DP_HEAD_H
#define INAGG_DP_HEAD_H

#include "dp_down.h"
#include "dp_flush.h"
#include "dp_sum.h"

enum blue_verdict {
	BV_ADDED,	/* consumed */
	BV_EMIT,	/* chunk complete: packet now holds the aggregate */
	BV_REEMIT,	/* chunk was complete: packet now holds the stored aggregate */
	BV_ANSWER,	/* its result went down: packet now holds the result (held) */
	BV_DUP,
	BV_WINDOW,
	BV_NELEM,
	BV_EVICT,	/* consumed, and the packet now holds a PS partial from the slot (fl) */
	BV_TAIL,	/* ia_xdp: a PS job holds the slot; ia_evict takes it from here */
	BV_NOJOB,	/* the job has no slots (drop_job) */
};

/* A contribution on its way into a sparse slot (dp_sparse.h); flags: the aggregate's, on EMIT/REEMIT. */
struct contrib {
	__u32	*pl;		/* payload: nelem elements before end */
	void	*end;
	__u32	seq;
	__u32	nelem;
	__u8	flags;		/* in: the message's; out: the aggregate's */
};

/*
 * A member's message on its way into a head slot, for ia_blue_slot(): scalars
 * only. A global function's pointer arguments are plain memory to the
 * verifier, so neither the packet nor a map value can be passed in: it finds
 * the slot, its lock and the payload again from these and the frame.
 */
struct blue_args {
	__u32	slot;		/* the job's: ia_job_cfg.slot, window, base_seq, expected */
	__u32	window;
	__u32	base_seq;
	__u32	expected;
	__u32	seq;
	__u32	nelem;
	__u32	index;		/* the member's index and nworkers */
	__u32	mworkers;
	__u32	evict;		/* 1 in ia_evict: a PS partial in the slot may be flushed */
	__u32	room;		/* the frame can carry a PS partial out (dp_flush.h) */
	__u32	nworkers;	/* out: the aggregate's, on EMIT/REEMIT/ANSWER */
	__u32	flags;		/* in: the message's; out: the aggregate's */
	__u32	lost;		/* out: a PS partial was dropped to take the slot back */
	__u32	rsvd;
	struct flushed fl;	/* out (BV_EVICT) */
};

/* Where every message's payload starts in the frame (no IP options: dp_parse.h). */
#define IA_PL_OFF	(sizeof(struct ethhdr) + sizeof(struct iphdr) + sizeof(struct udphdr) + \
			 sizeof(struct ia_hdr))

/*
 * Whether chunk seq may start in a slot whose head state (under a PS tag,
 * the state the tag keeps) is st and whose last chunk was s->seq.
 */
static __always_inline int head_claimable(const struct ia_slot *s, __u32 st, __u32 base_seq,
					  __u32 window, __u32 seq)
{
	return (st == IA_SLOT_EMPTY && seq - base_seq < window) ||
	       (st == IA_SLOT_DONE && seq == s->seq + window);
}

/* a->evict: a PS partial in the slot may be flushed (ia_evict), else it is dropped. */
static __always_inline int blue_slot(struct ia_slot *s, struct bpf_spin_lock *lock,
				     struct blue_args *a, __u32 *pl, void *end)
{
	__u32 index = a->index, seq = a->seq, n = a->nelem, expected = a->expected;
	__u32 window = a->window, base_seq = a->base_seq, evict = a->evict;
	__u32 word = index / 64, *sum = (__u32 *)s->sum;
	__u64 bit = 1ULL << (index % 64);
	int v, i, swap = 0;

	if (word >= IA_MAX_FANIN / 64)
		return BV_WINDOW;	/* loader guarantees index < expected <= IA_MAX_FANIN */

	bpf_spin_lock(lock);
	if (s->state == IA_SLOT_DONE && s->seq == seq) {
		if (s->nelem != n) {
			v = BV_NELEM;
			goto out;
		}
		sum_apply(sum, pl, end, n, OP_OUT);
		a->nworkers = s->held ? s->hworkers : s->nworkers;
		a->flags = s->flags;
		v = s->held ? BV_ANSWER : BV_REEMIT;
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
	} else if (!evict && s->state == IA_SLOT_TAIL) {
		v = BV_TAIL;	/* ia_evict handles it, this program stays small */
		goto out;
	} else if (s->state == IA_SLOT_TAIL ? head_claimable(s, s->t.hstate, base_seq, window, seq) :
		   head_claimable(s, s->state, base_seq, window, seq)) {
		/*
		 * A PS partial lent here goes to its PS in this very frame, unless
		 * the chunk completes at once, or the frame cannot carry it (another
		 * length, no room): then it is dropped (its members retransmit).
		 * This chunk never waits.
		 */
		if (s->state == IA_SLOT_TAIL) {
			if (expected > 1 && s->nelem == n && a->room) {
				a->fl.job = s->t.job;
				a->fl.seq = s->t.seq;
				a->fl.set = s->t.set;
				a->fl.nelem = s->nelem;
				a->fl.gen = s->t.gen;
				a->fl.flags = s->flags;
				swap = 1;
			} else {
				a->lost = 1;
			}
		}
		/* First contribution of this chunk: (re)claim the slot. */
		s->seq = seq;
		s->state = IA_SLOT_OPEN;
		s->nseen = 0;
		s->nworkers = 0;
		s->nelem = n;
		s->flags = 0;
		s->held = 0;
		/* Bits beyond expected are never set (volatile: not a memset call). */
		for (i = 0; i < IA_MAX_FANIN / 64 && i < (expected + 63) / 64; i++)
			*(volatile __u64 *)&s->seen[i] = 0;
	} else {
		/* Stale, too far ahead, or the previous chunk here is not done. */
		v = BV_WINDOW;
		goto out;
	}

	s->seen[word] |= bit;
	s->nworkers += a->mworkers;
	s->flags |= a->flags & IA_F_MARK;
	v = ++s->nseen >= expected ? BV_EMIT : BV_ADDED;
	if (swap) {
		sum_apply(sum, pl, end, n, OP_SWAP);
		v = BV_EVICT;
	} else if (s->nseen == 1) {
		sum_apply(sum, pl, end, n, OP_COPY);	/* packet already holds the sum */
	} else if (v == BV_EMIT) {
		sum_apply(sum, pl, end, n, OP_ADD_OUT);
	} else {
		sum_apply(sum, pl, end, n, OP_ADD);
	}
	if (v == BV_EMIT) {
		s->state = IA_SLOT_DONE;
		a->nworkers = s->nworkers;
		a->flags = s->flags;
	}
out:
	bpf_spin_unlock(lock);
	return v;
}

/*
 * A member's message into its chunk's head slot (a blue_verdict), with the
 * slot's lock held throughout: a global function, which the verifier checks
 * once, on its own, instead of once for every path of the program that
 * reaches it (the element loops made ia_xdp 98 % of 6.1's budget inlined).
 * BV_NOJOB and BV_WINDOW also say the slot or its lock is missing (no
 * slots, window 0; not this one), as head_slot() does. The payload is the
 * frame's at IA_PL_OFF, nelem elements (the caller checked they are there).
 */
__noinline int ia_blue_slot(struct xdp_md *ctx, struct blue_args *a)
{
	struct ia_slot_lock *l;
	struct ia_slot *s;
	__u32 key, idx, w;
	void *slots, *data;

	if (!a)
		return BV_NOJOB;
	key = a->slot;
	w = a->window;
	slots = bpf_map_lookup_elem(&ia_slots, &key);
	if (!slots || !w)
		return BV_NOJOB;
	/* A division costs more than the rest of the slot lookup. */
	if (w & (w - 1))
		idx = a->seq % w;
	else
		idx = a->seq & (w - 1);
	s = bpf_map_lookup_elem(slots, &idx);
	idx = ia_lock_index(key, idx);
	l = bpf_map_lookup_elem(&ia_locks, &idx);
	if (!s || !l)
		return BV_WINDOW;
	data = (void *)(long)ctx->data;
	return blue_slot(s, &l->lock, a, data + IA_PL_OFF, (void *)(long)ctx->data_end);
}

/*
 * A slot's verdict on a blue message (dense or sparse), counted; on EMIT
 * and REEMIT the frame, which holds the aggregate, leaves as this switch's.
 */
static __always_inline int blue_result(struct ia_pkt *k, int v, __u32 nworkers, __u8 flags)
{
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
	case BV_NOJOB:
		return drop(k->p, k->j, IA_C_DROP_JOB);
	case BV_EMIT:
		ctr(k->j, IA_C_AGGREGATED);
		ctr(k->j, IA_C_EMIT);
		break;
	case BV_ANSWER:
		return send_answer(k, nworkers, flags);	/* counts answered, or the drop */
	default:
		ctr(k->j, IA_C_REEMIT);
		flags |= IA_F_REEMIT;
		break;
	}
	return send_aggregate(k, nworkers, flags);
}

/*
 * Chunk seq's head slot of a blue job, and its lock; NULL if there is none,
 * *why the drop counter: the job has no slots, or not this one.
 */
static __always_inline struct ia_slot *head_slot(const struct ia_job_cfg *cfg, __u32 seq,
						 struct ia_slot_lock **lock, int *why)
{
	__u32 idx = cfg->slot;
	struct ia_slot *s;
	void *slots;

	*why = IA_C_DROP_JOB;
	slots = bpf_map_lookup_elem(&ia_slots, &idx);
	if (!slots || !cfg->window)
		return NULL;
	*why = IA_C_DROP_WINDOW;
	/* A division costs more than the rest of the slot lookup. */
	if (cfg->window & (cfg->window - 1))
		idx = seq % cfg->window;
	else
		idx = seq & (cfg->window - 1);
	s = bpf_map_lookup_elem(slots, &idx);
	idx = ia_lock_index(cfg->slot, idx);
	*lock = bpf_map_lookup_elem(&ia_locks, &idx);
	return *lock ? s : NULL;
}

/*
 * A result going down through a blue switch: the slot of its chunk, still
 * holding the aggregate sent up (DONE), holds the result instead, so that a
 * member that missed it and resends is answered from here (BV_ANSWER), as
 * SwitchML's switch does, not by the destination and a copy to every
 * worker. Once the result went down nothing needs the aggregate: the
 * destination has every piece. Not for sparse jobs (their slots hold masks).
 */
static __always_inline void head_hold(struct ia_pkt *k)
{
	const struct ia_job_cfg *cfg = k->cfg;
	__u32 seq = bpf_ntohl(HDR32(k->h, seq));
	struct ia_slot_lock *lock;
	struct ia_slot *s;
	int why;

	if (cfg->role != IA_ROLE_BLUE || cfg->flags & IA_JOB_F_SPARSE ||
	    k->h->flags & IA_F_NACK || k->ctx->ingress_ifindex != cfg->up_ifindex)
		return;
	s = head_slot(cfg, seq, &lock, &why);
	if (!s)
		return;
	bpf_spin_lock(&lock->lock);
	if (s->state == IA_SLOT_DONE && s->seq == seq && s->nelem == k->nelem && !s->held) {
		sum_apply((__u32 *)s->sum, k->pl, k->end, k->nelem, OP_COPY);
		s->held = 1;
		s->hworkers = bpf_ntohl(HDR32(k->h, nworkers));
		s->flags = k->h->flags & (IA_F_MARK | IA_F_COLL);
	}
	bpf_spin_unlock(&lock->lock);
}

/*
 * A member's upward message of a blue job: into its head slot, and up once
 * complete. A slot a PS job holds (lent) goes to ia_evict, which flushes the
 * partial in this frame (evict, a constant, is 1 there); ia_xdp keeps that
 * code out of its own verification.
 */
static __always_inline int head_aggregate(struct ia_pkt *k, const struct ia_member *m,
					  const int evict)
{
	const struct ia_job_cfg *cfg = k->cfg;
	struct ia_slot_lock *lock;
	struct blue_args a;
	struct ia_slot *s;
	int v;

	/* All of it written: the verifier checks a global function's memory is. */
	__builtin_memset(&a, 0, sizeof(a));
	a.seq = bpf_ntohl(HDR32(k->h, seq));
	a.flags = k->h->flags;
	if (a.flags & IA_F_SET)
		return drop(k->p, k->j, IA_C_DROP_SET);	/* a PS job's partial: not ours */
	/*
	 * A PS partial lent here may leave in this frame: room for it first
	 * (helpers cannot run under the lock). ia_xdp finds such a slot under
	 * the lock (BV_TAIL) and leaves it to ia_evict.
	 */
	if (evict) {
		s = head_slot(cfg, a.seq, &lock, &v);
		if (!s)
			return drop(k->p, k->j, v);
		if (s->state == IA_SLOT_TAIL && s->nelem == k->nelem) {
			v = flush_room(k);
			if (v == -2)
				return drop(k->p, k->j, IA_C_DROP_SHORT);
			a.room = !v;
		}
	}
	a.slot = cfg->slot;
	a.window = cfg->window;
	a.base_seq = cfg->base_seq;
	a.expected = cfg->expected;
	a.nelem = k->nelem;
	a.index = m->index;
	a.mworkers = m->nworkers;
	a.evict = evict;
	v = ia_blue_slot(k->ctx, &a);
	if (evict && a.lost) {
		ctr(k->j, IA_C_TAIL_EVICT);
		ctr(k->j, IA_C_TAIL_DISCARD);
	}
	switch (v) {
	case BV_TAIL:
		/* A slot is held by a PS job only once ia_evict is loaded. */
		if (!evict)
			bpf_tail_call(k->ctx, &ia_progs, IA_PROGS_EVICT);
		return drop(k->p, k->j, IA_C_DROP_WINDOW);
	case BV_EVICT:
		if (!evict)
			return XDP_DROP;
		ctr(k->j, IA_C_AGGREGATED);
		ctr(k->j, IA_C_TAIL_EVICT);
		return send_flush(k, &a.fl);
	default:
		return blue_result(k, v, a.nworkers, a.flags);
	}
}

#endif /* INAGG_DP_HEAD_H */
