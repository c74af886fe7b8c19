/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Blue with sparse participation (IA_JOB_F_SPARSE): word count's merge of
 * key blocks (docs/apps.md, user/lib/wc_host.h). A job of nann announcement
 * chunks and then its blocks has one slot per chunk, at index seq - base,
 * never reused (so it starts zeroed), and in the last slots of its array
 * the members' announcement masks.
 *
 *   announcement a: dense, every member once. Element e nonzero means the
 *     member sends block 256 a + e. The slot adds (v != 0), so that it ends
 *     with how many members send each block, and keeps each member's mask
 *     of those 256 bits: mask q = a * expected + index, in slot
 *     window - 1 - q / 32. What it sends up is those counts, nonzero where
 *     its subtree sends: the next switch counts it as one sender there.
 *   block b = 256 a + e: accepted only once announcement a is complete
 *     here and only from a member whose mask has e; complete when as many
 *     members as announced it are in, each once.
 *
 * Every message is whole (IA_SPARSE_ELEMS elements, zeros past the key space):
 * with nothing depending on a length, each element loop is verified once per
 * path instead of once per possible length.
 *
 * An aggregate carries the switch's nworkers (what its member entry
 * upstream says) whichever members a block had. Locks: the slot's, as for
 * dense jobs; a block reads its announcement under that one's lock first,
 * then takes its own (never both at once). Element loops are plain bounded
 * loops under the lock (no calls may be made while holding it on 6.1).
 */
#ifndef INAGG_DP_SPARSE_H
#define INAGG_DP_SPARSE_H

#include "dp_head.h"

/*
 * The sparse datapath is a program of its own, ia_sparse, tail-called by
 * ia_xdp: verified alone, from one state, instead of once for every way
 * ia_xdp reaches it (6.1's verifier gave up on the two inlined together).
 * The loader puts it at IA_TAIL_SPARSE of ia_progs (dp_maps.h).
 */

/*
 * The element loops. Each proves the whole payload in the frame once, so
 * that no element can end the loop early: a per-element bounds check gives
 * the verifier one way out per element, each walked through the rest of
 * the program (and any loop after it) again.
 */
static __always_inline void sparse_add(__u32 *sum, __u32 *pl, void *end)
{
	__u32 i;

	if ((void *)(pl + IA_SPARSE_ELEMS) > end)
		return;
#pragma clang loop unroll_count(8)
	for (i = 0; i < IA_SPARSE_ELEMS; i++)
		sum[i] += pl[i];
}

static __always_inline void sparse_out(const __u32 *sum, __u32 *pl, void *end)
{
	__u32 i;

	if ((void *)(pl + IA_SPARSE_ELEMS) > end)
		return;
#pragma clang loop unroll_count(8)
	for (i = 0; i < IA_SPARSE_ELEMS; i++)
		pl[i] = sum[i];
}

/*
 * Announcement: slot += (v != 0) and the member's mask of nonzero elements
 * to mk[0..3]. Branch-free per element: a branch on each value would give
 * the verifier two states per element (and a known mask on each).
 */
static __always_inline void sparse_announce(__u32 *sum, __u64 *mk, __u32 *pl, void *end)
{
	__u32 w, j, i;
	__u64 bits, t;

	if ((void *)(pl + IA_SPARSE_ELEMS) > end)
		return;
	for (w = 0; w < IA_SPARSE_ELEMS / 64; w++) {
		bits = 0;
		for (j = 0; j < 64; j++) {
			i = w * 64 + j;
			/* 1 iff pl[i] != 0; the barrier keeps clang from making it a compare. */
			t = (__u64)pl[i] + 0xffffffffULL;
			asm volatile("" : "+r"(t));
			t >>= 32;
			sum[i] += t;
			bits |= t << j;
		}
		mk[w] = bits;
	}
}

/* One member's message into its never-reused slot s: a blue_verdict. */
static __always_inline int sparse_slot(struct ia_slot *s, struct bpf_spin_lock *lock,
				       int expected, __u64 *mk, const struct ia_member *m,
				       struct contrib *c)
{
	__u32 word = m->index / 64, seq = c->seq, n = c->nelem;
	__u64 bit = 1ULL << (m->index % 64);
	__u32 *sum = (__u32 *)s->sum;
	int v;

	if (word >= IA_MAX_FANIN / 64)
		return BV_WINDOW;
	bpf_spin_lock(lock);
	if (s->state != IA_SLOT_EMPTY && (s->seq != seq || s->nelem != n)) {
		v = s->seq != seq ? BV_WINDOW : BV_NELEM;
		goto out;
	}
	if (s->state == IA_SLOT_DONE) {
		sparse_out(sum, c->pl, c->end);
		c->flags = s->flags;
		v = BV_REEMIT;
		goto out;
	}
	if (s->state == IA_SLOT_EMPTY) {
		s->seq = seq;
		s->state = IA_SLOT_OPEN;
		s->nelem = n;
	} else if (s->seen[word] & bit) {
		v = BV_DUP;
		goto out;
	}
	s->seen[word] |= bit;
	s->flags |= c->flags & IA_F_MARK;
	if (mk)
		sparse_announce(sum, mk, c->pl, c->end);
	else
		sparse_add(sum, c->pl, c->end);
	v = BV_ADDED;
	if (++s->nseen >= (__u32)expected) {
		s->state = IA_SLOT_DONE;
		sparse_out(sum, c->pl, c->end);
		c->flags = s->flags;
		v = BV_EMIT;
	}
out:
	bpf_spin_unlock(lock);
	return v;
}

/* Slot idx of the job's array and its lock; NULL if either is missing. */
static __always_inline struct ia_slot *sparse_at(const struct ia_job_cfg *cfg, void *slots,
						 __u32 idx, struct bpf_spin_lock **lock)
{
	struct ia_slot_lock *l;
	struct ia_slot *s;

	s = bpf_map_lookup_elem(slots, &idx);
	idx = ia_lock_index(cfg->slot, idx);
	l = bpf_map_lookup_elem(&ia_locks, &idx);
	if (!s || !l)
		return NULL;
	*lock = &l->lock;
	return s;
}

/*
 * Block e of announcement as: how many members announced it, 0 if this
 * member (mask mk) did not, -1 if the announcement is not complete here.
 */
static __always_inline int sparse_expected(struct ia_slot *as, struct bpf_spin_lock *lock,
					   __u32 aseq, const __u64 *mk, __u32 e)
{
	int cnt = -1;

	bpf_spin_lock(lock);
	if (as->state == IA_SLOT_DONE && as->seq == aseq)
		cnt = (mk[e / 64] >> (e % 64)) & 1 ? (int)(as->sum[e] & 0xffff) : 0;
	bpf_spin_unlock(lock);
	return cnt;
}

static __always_inline int sparse_up(struct ia_pkt *k, const struct ia_member *m)
{
	const struct ia_job_cfg *cfg = k->cfg;
	__u32 nann = cfg->sparse_nann, masks, rel, a, e, q, idx;
	struct bpf_spin_lock *lock;
	struct ia_slot *s, *ms;
	__u64 *mk;
	struct contrib c;
	int v, expected;
	void *slots;

	if (k->h->flags & IA_F_SET)
		return drop(k->p, k->j, IA_C_DROP_SET);	/* a PS job's partial: not ours */
	idx = cfg->slot;
	slots = bpf_map_lookup_elem(&ia_slots, &idx);
	masks = ia_sparse_mask_slots(nann, cfg->expected);
	if (!slots || !nann || nann > IA_MAX_WINDOW || cfg->window > IA_MAX_WINDOW ||
	    cfg->window <= nann + masks)
		return drop(k->p, k->j, IA_C_DROP_JOB);
	/* Every message is whole: the element loops then have a fixed count. */
	if (k->nelem != IA_SPARSE_ELEMS || (void *)(k->pl + IA_SPARSE_ELEMS) > k->end)
		return drop(k->p, k->j, IA_C_DROP_NELEM);
	c.seq = bpf_ntohl(HDR32(k->h, seq));
	rel = c.seq - cfg->base_seq;
	if (rel >= cfg->window - masks)
		return drop(k->p, k->j, IA_C_DROP_WINDOW);
	a = rel < nann ? rel : (rel - nann) / IA_SPARSE_ELEMS;
	e = (rel - nann) % IA_SPARSE_ELEMS;
	if (a >= nann)
		return drop(k->p, k->j, IA_C_DROP_WINDOW);
	/* This member's mask of announcement a. */
	q = a * cfg->expected + m->index;
	ms = sparse_at(cfg, slots, cfg->window - 1 - q / IA_SPARSE_MASKS_PER_SLOT, &lock);
	if (!ms)
		return drop(k->p, k->j, IA_C_DROP_WINDOW);
	mk = (__u64 *)&ms->sum[(q % IA_SPARSE_MASKS_PER_SLOT) * 8];
	if (rel < nann) {
		expected = cfg->expected;
	} else {
		s = sparse_at(cfg, slots, a, &lock);
		if (!s)
			return drop(k->p, k->j, IA_C_DROP_WINDOW);
		expected = sparse_expected(s, lock, cfg->base_seq + a, mk, e);
		if (expected < 0)
			return drop(k->p, k->j, IA_C_DROP_WINDOW);
		if (!expected)
			return drop(k->p, k->j, IA_C_DROP_MEMBER);
		mk = NULL;
	}
	s = sparse_at(cfg, slots, rel, &lock);
	if (!s)
		return drop(k->p, k->j, IA_C_DROP_WINDOW);

	c.pl = k->pl;
	c.end = k->end;
	c.nelem = k->nelem;
	c.flags = k->h->flags;
	v = sparse_slot(s, lock, expected, mk, m, &c);
	return blue_result(k, v, cfg->nworkers, c.flags);
}

/* ia_xdp: a member's message of a sparse job goes to ia_sparse. */
static __always_inline int sparse_dispatch(struct ia_pkt *k)
{
	bpf_tail_call(k->ctx, &ia_progs, IA_TAIL_SPARSE);
	return drop(k->p, k->j, IA_C_DROP_JOB);	/* not loaded */
}

/*
 * ia_xdp validated the frame and the sender (and counted it received):
 * here only the lookups again, without counting, and the handler.
 */
SEC("xdp")
int ia_sparse(struct xdp_md *ctx)
{
	struct ia_member *m;
	struct ia_pkt k;

	if (parse_tailed(ctx, &k) != IA_OURS)
		return XDP_DROP;
	m = member(k.cfg, k.job, bpf_ntohl(HDR32(k.h, sender)));
	if (!m)
		return XDP_DROP;
	return sparse_up(&k, m);
}

#endif /* INAGG_DP_SPARSE_H */
