// SPDX-License-Identifier: GPL-2.0
/*
 * The reference model's tail (docs/memory.md, "Mapping" and "Tail
 * aggregation and exactly-once"): a PS job's message in the tail pool or a
 * lent head slot, and a blue job's chunk taking its lent slot back. Each
 * rule cites the sentence of docs/memory.md (MEM) or docs/datapath.md (DP)
 * it implements; "the table" is MEM's table of a PS-job message's rows.
 */
#include <string.h>
#include <linux/bpf.h>

#include "model_int.h"

#define KEEP	(IA_F_MARK | IA_F_COLL)	/* what a partial keeps of its pieces' flags */

/* A partial taken out of a slot to be flushed. */
struct m_partial {
	__u32	job, seq, gen, nelem;
	__u64	set;
	__u8	flags;
};

static __u64 full_set(const struct m_job *j)
{
	__u64 s = 0;
	__u32 i;

	/* The table: complete when "the set holds every member expected here". */
	for (i = 0; i < j->n; i++)
		s |= j->mem[i].set;
	return s;
}

static void take_partial(const struct m_slot *s, struct m_partial *p)
{
	p->job = s->tjob;
	p->seq = s->tseq;
	p->gen = s->tgen;
	p->nelem = s->nelem;
	p->set = s->tset;
	p->flags = s->flags;
}

/* The slot's sums and the payload trade places (a flush is a swap). */
static void swap_sums(struct m_pkt *k, struct m_slot *s)
{
	__u32 i, v;

	for (i = 0; i < k->nelem; i++) {
		v = m_elem(k->o->frame, i);
		m_set_elem(k->o->frame, i, (__u32)s->sum[i]);
		s->sum[i] = (__s32)v;
	}
}

static void copy_in(struct m_pkt *k, struct m_slot *s)
{
	__u32 i;

	memset(s->sum, 0, sizeof(s->sum));
	for (i = 0; i < k->nelem; i++)
		s->sum[i] = (__s32)m_elem(k->o->frame, i);
}

/*
 * The frame holds p's sums: it leaves as p's flush to p's job's PS (AGG,
 * SET | FLUSH, the set in the trailer). p's job gone or added again since:
 * the partial is dropped, a discard of the job whose message took the slot.
 */
static int send_flush(struct m_switch *sw, struct m_pkt *k, const struct m_partial *p,
		      int gone_branch)
{
	struct m_job *pj = m_job_find(sw, p->job);
	__u8 *f = k->o->frame;
	__u32 t = F_PL + 4 * p->nelem;

	/*
	 * MEM: "A flush whose partial's job is gone from the switch, or was added
	 * again since (another generation), is dropped and counted tail_discards on
	 * the job whose message took the slot."
	 */
	if (!pj || pj->role != IA_ROLE_TAIL || pj->gen != p->gen) {
		M_BR(k, gone_branch);
		m_cnt(k, IA_C_TAIL_DISCARD);
		return XDP_DROP;
	}
	/*
	 * MEM: "A flush turns a slot's partial aggregate into a message to the PS
	 * (type AGG, flag FLUSH, its set and sums)"; "only flushed partials do
	 * (IA_F_SET, 8 bytes, counted in the UDP length)"; DP "Counters": "flushes
	 * count on the job whose partial left".
	 */
	m_put32(f + t, (__u32)(p->set >> 32));
	m_put32(f + t + 4, (__u32)p->set);
	k->o->len = t + IA_SET_LEN;
	m_put32(f + F_JOB, p->job);
	m_put32(f + F_SEQ, p->seq);
	m_put16(f + F_NELEM, p->nelem);
	m_put16(f + F_UDP_LEN, IA_UDP_LEN(p->nelem) + IA_SET_LEN);
	m_put16(f + F_IP_LEN, 20 + IA_UDP_LEN(p->nelem) + IA_SET_LEN);
	k->j = pj;
	m_cnt(k, IA_C_TAIL_FLUSH);
	return m_send_aggregate(sw, k, __builtin_popcountll(p->set),
				IA_F_SET | IA_F_FLUSH | (p->flags & KEEP));
}

/* The table: "collision: forward to the PS, flagged IA_F_COLL", tail_collisions. */
static int collide(struct m_switch *sw, struct m_pkt *k)
{
	M_BR(k, MB_TAIL_COLL);
	m_cnt(k, IA_C_TAIL_COLL);
	k->o->frame[F_FLAGS] |= IA_F_COLL;
	m_put16(k->o->frame + F_UDP_CSUM, 0);
	return m_forward_up(sw, k);
}

/*
 * Directory entry v: a pool slot, or one of the top count slots of a
 * lending blue job's head (only while that job is there, blue, with the
 * head the directory describes). *lent, and *head_free when a lent DONE
 * slot's chunk is one no sender still needs (its slot-mate H - k on is DONE).
 */
static struct m_slot *dir_slot(struct m_switch *sw, struct m_pkt *k, __u32 v, bool *lent,
			       bool *head_free, __u32 *hseq)
{
	struct m_job *hj;
	struct m_slot *s, *s2;
	__u32 i, first, next, st2;

	/*
	 * MEM "Mapping": "v < T is tail slot v; the rest is a list of segments, one
	 * per lending INA job, each the top k_j slots of its head ([H_j - k_j, H_j))";
	 * the table: "a directory entry whose lending job changed" collides.
	 */
	if (v < sw->tail) {
		m_touch(k, 0, v);
		return &sw->pool[v];
	}
	v -= sw->tail;
	for (i = 0; i < sw->nlend && v >= sw->lend[i].count; i++)
		v -= sw->lend[i].count;
	if (i == sw->nlend)
		return NULL;
	hj = m_job_find(sw, sw->lend[i].job);
	if (!hj || hj->role != IA_ROLE_BLUE || sw->lend[i].count > hj->window)
		return NULL;
	first = hj->window - sw->lend[i].count;
	s = &hj->slot[first + v];
	m_touch(k, hj->id, first + v);
	*lent = true;
	/*
	 * MEM "Mapping": "free for a PS claim only when it is EMPTY, or DONE for
	 * an INA chunk s whose slot-mate s + (H_j - k_j) (or a later chunk of that
	 * slot) is DONE too"; "A slot-mate that itself holds a PS partial counts by
	 * the state it had before that claim."
	 */
	if (s->state == IA_SLOT_DONE) {
		*hseq = s->seq;
		next = s->seq + first;
		s2 = &hj->slot[next % hj->window];
		st2 = s2->state == IA_SLOT_TAIL ? s2->hstate : s2->state;
		*head_free = st2 == IA_SLOT_DONE && (int)(s2->seq - next) >= 0;
	}
	return s;
}

/*
 * The table: "claim: tag, set, sums = the message's"; MEM: the tag "carries the job's generation
 * too".
 */
static void tag(struct m_slot *s, struct m_pkt *k, __u64 set, __u32 hstate)
{
	s->state = IA_SLOT_TAIL;
	s->nelem = k->nelem;
	s->flags = k->o->frame[F_FLAGS] & KEEP;
	s->held = 0;
	s->tjob = k->j->id;
	s->tseq = k->seq;
	s->tset = set;
	s->tgen = k->j->gen;
	s->hstate = hstate;
}

/* Back to what the slot was under the tag; a head's DONE chunk has lost its sums. */
/*
 * MEM "How the datapath is built": "After a PS job leaves a lent slot that
 * was DONE, the slot is DONE with its sums gone (nelem 0)".
 */
static void release(struct m_slot *s)
{
	s->state = s->hstate;
	if (s->state == IA_SLOT_DONE)
		s->nelem = 0;
}

/* A complete aggregate carries no trailer: one the last piece brought is cut off. */
static void cut_trailer(struct m_pkt *k)
{
	__u8 *f = k->o->frame;

	if (!(f[F_FLAGS] & IA_F_SET))
		return;
	k->o->len = IA_FRAME_LEN(k->nelem);
	m_put16(f + F_UDP_LEN, IA_UDP_LEN(k->nelem));
	m_put16(f + F_IP_LEN, 20 + IA_UDP_LEN(k->nelem));
}

/*
 * The table: tail_claims; DP "Counters": tail_lent_claims; MEM: "aggregated counts every claim and
 * hit".
 */
static int claim(struct m_switch *sw, struct m_pkt *k, bool lent, int branch)
{
	M_BR(k, branch);
	m_cnt(k, IA_C_TAIL_CLAIM);
	if (lent) {
		M_BR(k, MB_TAIL_CLAIM_LENT);
		m_cnt(k, IA_C_TAIL_LENT);
	}
	m_cnt(k, IA_C_AGGREGATED);
	return XDP_DROP;
}

/* In a slot tagged with this very chunk (of this generation). */
static int into_mine(struct m_switch *sw, struct m_pkt *k, struct m_slot *s, __u64 set,
		     __u64 full)
{
	__u32 i;

	/* The table: "tagged (j, seq), another nelem | any | drop | drop_nelem". */
	if (s->nelem != k->nelem)
		return m_drop(sw, k, IA_C_DROP_NELEM, MB_TAIL_NELEM);
	/*
	 * "set overlaps, not ⊆ | forward to the PS, flagged IA_F_COLL"; "set ⊆ the slot's |
	 * duplicate".
	 */
	if (s->tset & set) {
		if (set & ~s->tset) {
			M_BR(k, MB_TAIL_OVERLAP);
			return collide(sw, k);
		}
		M_BR(k, MB_TAIL_DUP);
		m_cnt(k, IA_C_DUP);
		return XDP_DROP;
	}
	/* "set disjoint from the slot's | hit: add sums, OR sets | tail_hits". */
	s->tset |= set;
	s->flags |= k->o->frame[F_FLAGS] & KEEP;
	for (i = 0; i < k->nelem; i++)
		s->sum[i] = (__s32)((__u32)s->sum[i] + m_elem(k->o->frame, i));
	m_cnt(k, IA_C_TAIL_HIT);
	m_cnt(k, IA_C_AGGREGATED);
	if (s->tset != full) {
		M_BR(k, MB_TAIL_HIT);
		return XDP_DROP;
	}
	/*
	 * "complete: the packet becomes the aggregate (sums; no trailer, even when
	 * the completing piece had one: its set is this switch's, nworkers its
	 * popcount), goes up, the slot is freed | tail_completes"; it "carries MARK
	 * and COLL if any of [its] pieces did"; DP "Counters": a tail job's
	 * messages sent up = "forwarded + emitted + tail_flushes".
	 */
	M_BR(k, MB_TAIL_COMPLETE);
	for (i = 0; i < k->nelem; i++)
		m_set_elem(k->o->frame, i, (__u32)s->sum[i]);
	release(s);
	m_cnt(k, IA_C_TAIL_COMPLETE);
	m_cnt(k, IA_C_EMIT);
	cut_trailer(k);
	return m_send_aggregate(sw, k, __builtin_popcountll(full), s->flags & KEEP);
}

int m_tail_up(struct m_switch *sw, struct m_pkt *k, const struct m_member *m)
{
	__u8 *f = k->o->frame, flags = f[F_FLAGS];
	bool lent = false, head_free = false;
	__u64 set = m->set, full = full_set(k->j);
	struct m_partial p;
	struct m_slot *s;
	__u32 total, i, hseq = 0, t = F_PL + 4 * k->nelem;

	/*
	 * MEM: "Checked before any of these rows: a trailer's set must have
	 * nworkers ranks and, like the sender's own set, be non-empty and within
	 * the sender's (drop_set)"; then the rows' order: RETX, BYPASS, the whole
	 * set or no directory, the slot's rows.
	 */
	if (flags & IA_F_SET) {
		set = (__u64)m_get32(f + t) << 32 | m_get32(f + t + 4);
		if ((__u32)__builtin_popcountll(set) != m_get32(f + F_NWORKERS))
			return m_drop(sw, k, IA_C_DROP_SET, MB_DROP_SET);
	}
	if (!set || (set & ~m->set))
		return m_drop(sw, k, IA_C_DROP_SET, MB_DROP_SET);
	/*
	 * "RETX | forward unchanged to the PS, never aggregated | tail_retx"; BYPASS:
	 * tail_bypassed.
	 */
	if (flags & (IA_F_RETX | IA_F_BYPASS)) {
		M_BR(k, flags & IA_F_RETX ? MB_TAIL_RETX : MB_TAIL_BYPASS);
		m_cnt(k, flags & IA_F_RETX ? IA_C_TAIL_RETX : IA_C_TAIL_BYPASS);
		return m_forward_up(sw, k);
	}
	/*
	 * "its set is every rank below this switch (nothing to add it to), or the
	 * switch has no tail pool and no lend published | forward unchanged | forwarded".
	 */
	if (set == full) {
		M_BR(k, MB_TAIL_FULL);
		return m_forward_up(sw, k);
	}
	total = sw->tail;
	for (i = 0; i < sw->nlend; i++)
		total += sw->lend[i].count;
	if (!total) {
		M_BR(k, MB_TAIL_NODIR);
		return m_forward_up(sw, k);
	}
	/* MEM "Mapping": "ia_tail_hash() ... over the switch's tail directory" of T + L slots. */
	s = dir_slot(sw, k, ia_tail_hash(k->j->id, k->seq) % total, &lent, &head_free, &hseq);
	if (!s)
		return collide(sw, k);
	if (s->state == IA_SLOT_TAIL) {
		if (s->tjob == k->j->id && s->tseq == k->seq && s->tgen == k->j->gen)
			return into_mine(sw, k, s, set, full);
		/*
		 * "tagged by another (job, seq), young | collision"; "tagged by an
		 * older generation of the same job id, young or old | claim at once:
		 * the old partial is dropped, never added into nor flushed"; "tagged,
		 * older than the flush age | claim (an old holder is flushed first)";
		 * "A flush swaps a partial of the same length ...; a holder of another
		 * length ... is dropped instead (tail_discards)".
		 */
		if ((s->tjob != k->j->id || s->tgen == k->j->gen) && !sw->age_old)
			return collide(sw, k);
		if (sw->age_old && s->nelem == k->nelem) {
			take_partial(s, &p);
			swap_sums(k, s);
			tag(s, k, set, s->hstate);
			claim(sw, k, lent, MB_TAIL_FLUSH);
			return send_flush(sw, k, &p, MB_TAIL_DISCARD_GEN);
		}
		copy_in(k, s);
		tag(s, k, set, s->hstate);
		m_cnt(k, IA_C_TAIL_DISCARD);
		return claim(sw, k, lent, MB_TAIL_DISCARD);
	}
	/*
	 * "free ... | first transmission | claim"; else "a lent head slot its blue job uses"
	 * collides.
	 */
	if (s->state == IA_SLOT_EMPTY || (head_free && s->state == IA_SLOT_DONE &&
					  s->seq == hseq)) {
		if (s->state == IA_SLOT_DONE)
			M_BR(k, MB_TAIL_HEAD_FREE);
		tag(s, k, set, s->state);
		copy_in(k, s);
		return claim(sw, k, lent, MB_TAIL_CLAIM);
	}
	return collide(sw, k);	/* a head slot its own job uses */
}

/* A blue chunk whose head slot holds a PS partial: it takes the slot back at once. */
int m_evict(struct m_switch *sw, struct m_pkt *k, const struct m_member *m, struct m_slot *s)
{
	struct m_job *j = k->j;
	struct m_partial p;
	bool swap = false;
	__u32 bit = m - j->mem, i;

	/*
	 * MEM, flushes: "the chunk may take the slot by the head's rules of
	 * docs/datapath.md, "Blue", applied to the state the slot had before the
	 * PS claim, else drop_window".
	 */
	if (!((s->hstate == IA_SLOT_EMPTY && k->seq - j->base < j->window) ||
	      (s->hstate == IA_SLOT_DONE && k->seq == s->seq + j->window)))
		return m_drop(sw, k, IA_C_DROP_WINDOW, MB_DROP_WINDOW);
	/*
	 * MEM, flushes: "the INA contribution goes into the slot, the frame carries
	 * the PS partial to its PS"; "A chunk that completes on that very message
	 * (one member at this switch) leaves as the aggregate, and the PS partial
	 * is dropped (tail_evictions and tail_discards on the INA job), as is one
	 * of another length".
	 */
	if (j->n > 1 && s->nelem == k->nelem) {
		take_partial(s, &p);
		swap = true;
	}
	m_slot_open(s, k->seq, k->nelem);
	s->seen = 1ULL << bit;
	s->nworkers = m->nworkers;
	s->flags = k->o->frame[F_FLAGS] & IA_F_MARK;
	s->nseen = 1;
	if (swap) {
		swap_sums(k, s);
		for (i = k->nelem; i < IA_MAX_ELEMS; i++)
			s->sum[i] = 0;
	} else {
		copy_in(k, s);
		M_BR(k, MB_EVICT_LOST);
		m_cnt(k, IA_C_TAIL_EVICT);
		m_cnt(k, IA_C_TAIL_DISCARD);
	}
	m_cnt(k, IA_C_AGGREGATED);
	if (swap) {
		M_BR(k, MB_EVICT_FLUSH);
		m_cnt(k, IA_C_TAIL_EVICT);
		return send_flush(sw, k, &p, MB_EVICT_DISCARD_GEN);
	}
	if (s->nseen < j->n) {
		M_BR(k, MB_BLUE_ADD);
		return XDP_DROP;
	}
	M_BR(k, MB_BLUE_EMIT);
	s->state = IA_SLOT_DONE;
	m_cnt(k, IA_C_EMIT);
	return m_send_aggregate(sw, k, s->nworkers, s->flags);
}
