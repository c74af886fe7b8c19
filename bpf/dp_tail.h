/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Tail: a PS job's messages aggregated best-effort in the switch's tail
 * pool and in the head slots blue jobs lend (docs/memory.md, "Mapping" and
 * "Tail aggregation and exactly-once"). Chunk (job, seq) goes to slot
 * ia_tail_hash(job, seq) % total of the tail directory; the slot is
 * claimed by a tag, added into when the tag matches and the member sets are
 * disjoint, sent up when it holds every rank below, and flushed toward the
 * PS when a new claim finds it older than the flush age. Anything else
 * goes on unaggregated, flagged; retransmissions always do.
 */
#ifndef INAGG_DP_TAIL_H
#define INAGG_DP_TAIL_H

#include "dp_flush.h"
#include "dp_sum.h"

enum tail_verdict {
	TV_CLAIM,	/* consumed: a fresh slot */
	TV_HIT,		/* consumed: added */
	TV_COMPLETE,	/* added, and the packet now holds the complete aggregate */
	TV_DUP,		/* every member already in the slot */
	TV_COLL,	/* goes on unaggregated */
	TV_FLUSH,	/* claimed; the packet now holds the old holder's partial (out) */
	TV_DISCARD,	/* claimed over an old holder, whose partial is dropped */
	TV_NELEM,
};

/*
 * A message on its way into a tail slot, for ia_tail_slot(): scalars only
 * (as struct blue_args, dp_head.h): the slot is found again by key and idx,
 * the payload is the frame's.
 */
struct tail_in {
	__u64	set;		/* the message's member set */
	__u64	full;		/* a complete aggregate here */
	__u64	now;		/* 0: not read (no claim over a holder) */
	__u64	age;
	__u32	job;
	__u32	seq;
	__u32	gen;		/* the job's (ia_job_cfg.gen) */
	__u32	nelem;
	__u32	hseq;		/* lent: the head's DONE chunk that may be taken over */
	__u32	key;		/* the slot: ia_slots key (IA_TAIL_SLOT or a lending job's) */
	__u32	idx;		/* and index there */
	__u8	flags;		/* in: the message's; out (COMPLETE): the aggregate's */
	__u8	lent;		/* a lent head slot */
	__u8	head_free;	/* lent and DONE with chunk hseq no sender still needs */
	__u8	room;		/* the frame can carry a flush out (trailer included) */
	struct flushed out;
};

/*
 * What a partial keeps of its pieces' flags, and its aggregate or flush
 * carries up: a mark, and a collision below (a piece that passed a lower
 * tail unaggregated), so the PS reflects both (docs/cc.md).
 */
#define TAIL_KEEP	(IA_F_MARK | IA_F_COLL)

/* The slot returns to what it was under the tag: a head's DONE chunk lost its sums. */
static __always_inline void tail_release(struct ia_slot *s)
{
	s->state = s->t.hstate;
	if (s->state == IA_SLOT_DONE)
		s->nelem = 0;	/* a re-emission of that chunk is refused (drop_nelem) */
}

static __always_inline void tail_tag(struct ia_slot *s, struct tail_in *c, __u32 hstate)
{
	s->state = IA_SLOT_TAIL;
	s->nelem = c->nelem;
	s->flags = c->flags & TAIL_KEEP;
	s->held = 0;		/* the sums become a PS partial's: no result to answer with */
	s->t.job = c->job;
	s->t.seq = c->seq;
	s->t.set = c->set;
	s->t.born = c->now;
	s->t.hstate = hstate;
	s->t.gen = c->gen;
}

/* The slot's partial is chunk (job, seq) of this generation of the job. */
static __always_inline int tail_mine(const struct ia_slot *s, const struct tail_in *c)
{
	return s->t.job == c->job && s->t.seq == c->seq && s->t.gen == c->gen;
}

static __always_inline int tail_slot(struct ia_slot *s, struct bpf_spin_lock *lock,
				     struct tail_in *c, __u32 *pl, void *end)
{
	__u32 *sum = (__u32 *)s->sum, n = c->nelem;
	int v;

	bpf_spin_lock(lock);
	if (s->state == IA_SLOT_TAIL) {
		if (tail_mine(s, c)) {
			if (s->nelem != n) {
				v = TV_NELEM;
			} else if (!(s->t.set & c->set)) {
				s->t.set |= c->set;
				s->flags |= c->flags & TAIL_KEEP;
				if (s->t.set == c->full) {
					sum_apply(sum, pl, end, n, OP_ADD_OUT);
					c->flags = s->flags;
					tail_release(s);
					v = TV_COMPLETE;
				} else {
					sum_apply(sum, pl, end, n, OP_ADD);
					v = TV_HIT;
				}
			} else {
				/* A subset is a duplicate; a partial overlap only the PS can sort out. */
				v = (c->set & ~s->t.set) ? TV_COLL : TV_DUP;
			}
			goto out;
		}
		/*
		 * Another chunk's: young, it stays; old, it leaves. The job's
		 * former self's (removed, added again) leaves at once: its flush
		 * finds no PS of its generation (send_flush() drops it).
		 */
		if ((s->t.job != c->job || s->t.gen == c->gen) &&
		    (!c->now || c->now - s->t.born < c->age)) {
			v = TV_COLL;
			goto out;
		}
		/* Swapped if the frame can carry it (same length), else dropped. */
		if (s->nelem == n && c->room) {
			c->out.job = s->t.job;
			c->out.seq = s->t.seq;
			c->out.set = s->t.set;
			c->out.nelem = s->nelem;
			c->out.gen = s->t.gen;
			c->out.flags = s->flags;
			sum_apply(sum, pl, end, n, OP_SWAP);
			v = TV_FLUSH;
		} else {
			sum_apply(sum, pl, end, n, OP_COPY);
			v = TV_DISCARD;
		}
		tail_tag(s, c, s->t.hstate);
		goto out;
	}
	if (s->state == IA_SLOT_EMPTY ||
	    (c->head_free && s->state == IA_SLOT_DONE && s->seq == c->hseq)) {
		tail_tag(s, c, s->state);
		sum_apply(sum, pl, end, n, OP_COPY);
		v = TV_CLAIM;
	} else {
		v = TV_COLL;	/* a head slot in use by its own job */
	}
out:
	bpf_spin_unlock(lock);
	return v;
}

/*
 * A message into the tail slot tail_find() found (c->key, c->idx), under its
 * lock: a global function, verified once on its own (ia_blue_slot(),
 * dp_head.h, says why). TV_COLL if the slot or its lock is missing.
 */
__noinline int ia_tail_slot(struct xdp_md *ctx, struct tail_in *c)
{
	struct ia_slot_lock *l;
	struct ia_slot *s;
	__u32 key, idx;
	void *slots, *data;

	if (!c)
		return TV_COLL;
	key = c->key;
	idx = c->idx;
	slots = bpf_map_lookup_elem(&ia_slots, &key);
	if (!slots)
		return TV_COLL;
	s = bpf_map_lookup_elem(slots, &idx);
	idx = ia_lock_index(key, idx);
	l = bpf_map_lookup_elem(&ia_locks, &idx);
	if (!s || !l)
		return TV_COLL;
	data = (void *)(long)ctx->data;
	return tail_slot(s, &l->lock, c, data + IA_PL_OFF, (void *)(long)ctx->data_end);
}

/*
 * Where v lands in the directory: the slot, its lock, and for a lent head
 * slot whether its DONE chunk may be taken over (c->head_free, c->hseq).
 * NULL: nowhere (the lending job changed since the directory was written).
 */
static __always_inline struct ia_slot *tail_find(const struct ia_tail_dir *d, __u32 v,
						 struct tail_in *c, struct ia_slot_lock **lock)
{
	const struct ia_tail_seg *g = NULL;
	struct ia_job_cfg *hc;
	struct ia_slot *s, *s2;
	__u32 key, idx, i, next;
	void *slots;

	if (v < d->tail) {
		key = IA_TAIL_SLOT;
		idx = v;
	} else {
		v -= d->tail;
		for (i = 0; i < IA_TDIR_SEGS && i < d->nseg; i++) {
			if (v < d->seg[i].count) {
				g = &d->seg[i];
				break;
			}
			v -= d->seg[i].count;
		}
		if (!g)
			return NULL;
		/* Only the lending job's own head, as the directory describes it. */
		hc = job_cfg(g->job);
		if (!hc || hc->role != IA_ROLE_BLUE || hc->slot != g->slot ||
		    hc->window != g->window || g->first + v >= g->window)
			return NULL;
		key = g->slot;
		idx = g->first + v;
		c->lent = 1;
	}
	slots = bpf_map_lookup_elem(&ia_slots, &key);
	if (!slots)
		return NULL;
	c->key = key;
	c->idx = idx;
	s = bpf_map_lookup_elem(slots, &idx);
	key = ia_lock_index(key, idx);
	*lock = bpf_map_lookup_elem(&ia_locks, &key);
	if (!s || !*lock)
		return NULL;
	if (g && s->state == IA_SLOT_DONE) {
		/*
		 * Its chunk hseq is free once chunk hseq + (H - k) (or a later
		 * one of that slot) is done: every sender contributed to it, and
		 * each sender's window is at most H - k, so each has the result
		 * of hseq. Only seen is not enough: two senders' windows together
		 * span more than H - k, and the sender that lost hseq's result
		 * still needs it re-emitted. Read without the lock, seq before
		 * state (a claim writes seq first): a stale value only keeps the slot.
		 */
		c->hseq = s->seq;
		next = c->hseq + g->first;
		idx = next % g->window;
		s2 = bpf_map_lookup_elem(slots, &idx);
		if (s2) {
			__u32 seq2 = *(volatile __u32 *)&s2->seq;
			__u32 st2 = *(volatile __u32 *)&s2->state;

			if (st2 == IA_SLOT_TAIL)
				st2 = *(volatile __u32 *)&s2->t.hstate;
			if (st2 == IA_SLOT_DONE && (int)(seq2 - next) >= 0)
				c->head_free = 1;
		}
	}
	return s;
}

/* A member's upward message of a PS job on a switch where it aggregates in the tail. */
static __always_inline int tail_up(struct ia_pkt *k, const struct ia_member *m)
{
	const struct ia_job_cfg *cfg = k->cfg;
	struct ia_tail_dir *d;
	struct ia_slot_lock *lock = NULL;
	struct ia_slot *s;
	struct tail_in c;
	__u32 zero = 0, *t;
	void *dir;
	int v;

	/* All of it written: the verifier checks a global function's memory is. */
	__builtin_memset(&c, 0, sizeof(c));
	c.flags = k->h->flags;
	c.nelem = k->nelem;
	if (c.flags & IA_F_SET) {
		t = k->pl + c.nelem;
		if ((void *)(t + 2) > k->end)
			return drop(k->p, k->j, IA_C_DROP_SHORT);
		c.set = (__u64)bpf_ntohl(t[0]) << 32 | bpf_ntohl(t[1]);
		if ((__u32)__builtin_popcountll(c.set) != bpf_ntohl(HDR32(k->h, nworkers)))
			return drop(k->p, k->j, IA_C_DROP_SET);
	} else {
		c.set = m->set;
	}
	if (!c.set || (c.set & ~m->set))
		return drop(k->p, k->j, IA_C_DROP_SET);
	/*
	 * Never aggregated: a retransmission may already sit in a partial
	 * elsewhere (docs/memory.md); a bypass is beyond its sender's
	 * aggregator window (docs/cc.md).
	 */
	if (c.flags & (IA_F_RETX | IA_F_BYPASS)) {
		ctr(k->j, c.flags & IA_F_RETX ? IA_C_TAIL_RETX : IA_C_TAIL_BYPASS);
		return forward_up(k);
	}
	c.full = cfg->full;
	/* Already all there is below: nothing to add it to. */
	if (c.set == c.full)
		return forward_up(k);
	dir = bpf_map_lookup_elem(&ia_tdir, &zero);
	d = dir ? bpf_map_lookup_elem(dir, &zero) : NULL;
	if (!d || !d->total)
		return forward_up(k);

	c.job = k->job;
	c.gen = cfg->gen;
	c.seq = bpf_ntohl(HDR32(k->h, seq));
	/* As in dp_head.h: a division costs more than the rest of the lookup. */
	v = ia_tail_hash(c.job, c.seq);
	v = d->total & (d->total - 1) ? v % d->total : v & (d->total - 1);
	s = tail_find(d, v, &c, &lock);
	if (!s || !lock)
		goto coll;
	/* Over another chunk's partial: the clock, and room to carry it out. */
	if (s->state == IA_SLOT_TAIL && !tail_mine(s, &c)) {
		c.now = bpf_ktime_get_ns();
		c.age = d->age_ns;
		if (c.now - s->t.born >= c.age && s->nelem == c.nelem) {
			v = flush_room(k);
			if (v == -2)
				return drop(k->p, k->j, IA_C_DROP_SHORT);
			c.room = !v;
		}
	} else if (s->state != IA_SLOT_TAIL) {
		c.now = bpf_ktime_get_ns();
	}
	v = ia_tail_slot(k->ctx, &c);
	switch (v) {
	case TV_CLAIM:
		ctr(k->j, IA_C_TAIL_CLAIM);
		if (c.lent)
			ctr(k->j, IA_C_TAIL_LENT);
		ctr(k->j, IA_C_AGGREGATED);
		return XDP_DROP;
	case TV_HIT:
		ctr(k->j, IA_C_TAIL_HIT);
		ctr(k->j, IA_C_AGGREGATED);
		return XDP_DROP;
	case TV_DUP:
		ctr(k->j, IA_C_DUP);
		return XDP_DROP;
	case TV_NELEM:
		return drop(k->p, k->j, IA_C_DROP_NELEM);
	case TV_COMPLETE:
		ctr(k->j, IA_C_TAIL_HIT);
		ctr(k->j, IA_C_AGGREGATED);
		ctr(k->j, IA_C_TAIL_COMPLETE);
		ctr(k->j, IA_C_EMIT);
		/*
		 * A complete aggregate carries no trailer (its set is this
		 * switch's): one the completing piece brought is cut off. c.flags
		 * is the slot's now, so the frame's own flag says.
		 */
		if (k->h->flags & IA_F_SET) {
			if (frame_resize(k, IA_FRAME_LEN(c.nelem)) || repoint(k, c.nelem, 0)) {
				ctr(k->j, IA_C_TAIL_DISCARD);
				return XDP_DROP;
			}
			k->udp->len = bpf_htons(IA_UDP_LEN(c.nelem));
			k->ip->tot_len = bpf_htons(sizeof(struct iphdr) + IA_UDP_LEN(c.nelem));
		}
		return send_aggregate(k, __builtin_popcountll(c.full), c.flags & TAIL_KEEP);
	case TV_DISCARD:
		ctr(k->j, IA_C_TAIL_CLAIM);
		ctr(k->j, IA_C_TAIL_DISCARD);
		if (c.lent)
			ctr(k->j, IA_C_TAIL_LENT);
		ctr(k->j, IA_C_AGGREGATED);
		return XDP_DROP;
	case TV_FLUSH:
		ctr(k->j, IA_C_TAIL_CLAIM);
		if (c.lent)
			ctr(k->j, IA_C_TAIL_LENT);
		ctr(k->j, IA_C_AGGREGATED);
		return send_flush(k, &c.out);
	default:
		break;
	}
coll:
	ctr(k->j, IA_C_TAIL_COLL);
	k->h->flags |= IA_F_COLL;
	k->udp->check = 0;
	return forward_up(k);
}

#endif /* INAGG_DP_TAIL_H */
