// SPDX-License-Identifier: GPL-2.0
/*
 * The simulator's switch memory (docs/cc.md "Simulation"), by the
 * datapath's rules, message by message: an INA chunk in its head slot
 * (bpf/dp_head.h), a PS job's first sends in the tail pool and the head
 * slots INA jobs lend (bpf/dp_tail.h, docs/memory.md "Mapping" and "Tail
 * aggregation"), and the lends themselves, decided by the daemon's policy
 * (ia_lend_decide(), job_lend.h) on its samples.
 */
#include "job.h"
#include "sim_int.h"

/*
 * Whether the frame that takes a slot can carry the old partial out: the
 * flush grows it by the member set's trailer, which the driver's tailroom
 * may not allow (bpf/dp_flush.h flush_room()); a share cfg->noroom of
 * frames cannot (measured live), their partial is dropped.
 */
static bool room(struct sim *s)
{
	if (!(s->cfg->noroom > 0))
		return true;
	return (ia_splitmix64(&s->rng) >> 11) * (1.0 / 9007199254740992.0) >= s->cfg->noroom;
}

/* A PS partial leaves its slot: up as one message (a flush), or dropped. */
static void tail_out(struct sim *s, uint32_t sw, struct slot *sl, bool send)
{
	if (send && room(s)) {
		ia_sim_up(s, sw, sl->tjob, sl->tseq, sl->tset, sl->tflags);
		s->flushes++;
	} else {
		s->discards++;
	}
	s->slot_time += s->now - sl->born;
	sl->tail = 0;
}

struct hd *ia_sim_hd(struct leaf *l, uint32_t job)
{
	for (uint32_t i = 0; i < l->nina; i++)
		if (l->ina[i].job == job)
			return &l->ina[i];
	return NULL;
}

uint64_t ia_sim_below(const struct sim *s, uint32_t job, uint32_t sw)
{
	const struct sjob *j = &s->j[job];
	uint32_t n = j->pub->nleaves, li = sw - j->pub->leaf;
	uint64_t set = 0;

	if (sw >= s->nleaves || n < 2)
		return ia_sim_full(j);
	for (uint32_t w = li; w < j->pub->workers; w += n)
		set |= 1ull << w;
	return set;
}

void ia_sim_pool(struct leaf *l)
{
	l->npool = 0;
	for (uint32_t i = 0; i < l->slots; i++)
		if (!l->own[i])
			l->pool[l->npool++] = i;
}

void ia_sim_take(struct sim *s, uint32_t sw, uint32_t job, uint32_t start, uint32_t n,
		 bool wait)
{
	struct leaf *l = &s->leaf[sw];

	l->ina[l->nina++] = (struct hd){ .job = job, .head = start, .wait = wait };
	for (uint32_t i = start; i < start + n; i++) {
		l->own[i] = job + 1;
		l->slot[i].hstate = HS_EMPTY;
	}
	l->heads += n;
	ia_sim_pool(l);
}

void ia_sim_head(struct sim *s, uint32_t sw, uint32_t job, uint32_t cseq, uint64_t set,
		 uint8_t flags)
{
	struct sjob *j = &s->j[job];
	struct hd *hd = ia_sim_hd(&s->leaf[sw], job);
	struct slot *sl;
	uint64_t full = ia_sim_below(s, job, sw);

	if (!hd || hd->wait) {
		ia_sim_up(s, sw, job, cseq, set, flags);	/* no head here (yet, any more) */
		return;
	}
	sl = &s->leaf[sw].slot[hd->head + cseq % j->hsize];
	if (sl->hseq == cseq && sl->hstate == HS_DONE) {
		/* A resend after the aggregate left: the slot sends it again (re-emission). */
		ia_sim_up(s, sw, job, cseq, full, sl->hflags);
		return;
	}
	if (sl->hseq == cseq && sl->hstate == HS_OPEN) {
		if (sl->hseen & set)
			return;		/* duplicate */
	} else {
		/*
		 * The chunk's first contribution takes the slot; a PS partial
		 * lent here leaves in this very frame (dropped if the chunk has
		 * one member: it leaves at once as the aggregate).
		 */
		if (sl->tail)
			tail_out(s, sw, sl, set != full);
		sl->hseq = cseq;
		sl->hstate = HS_OPEN;
		sl->hseen = 0;
		sl->hflags = 0;
		sl->t_open = s->now;
	}
	sl->hseen |= set;
	sl->hflags |= flags;
	if (sl->hseen == full) {
		sl->hstate = HS_DONE;
		s->slot_time += s->now - sl->t_open;
		ia_sim_up(s, sw, job, cseq, full, sl->hflags);
	}
}

/*
 * A lent head slot is free for a PS claim when EMPTY, or DONE with chunk
 * hseq whose slot-mate hseq + (H - k) is DONE too: every sender then has
 * hseq's result (bpf/dp_tail.h tail_find()).
 */
static bool head_free(const struct sim *s, const struct leaf *l, const struct hd *ij,
		      const struct slot *sl, uint32_t first)
{
	uint32_t h = s->j[ij->job].hsize, next;
	const struct slot *mate;

	if (sl->hstate == HS_EMPTY)
		return true;
	if (sl->hstate != HS_DONE)
		return false;
	next = sl->hseq + first;
	mate = &l->slot[ij->head + next % h];
	return mate->hstate == HS_DONE && (int32_t)(mate->hseq - next) >= 0;
}

/*
 * Chunk (job, cseq)'s slot in the leaf's tail directory: the tail pool,
 * then the top lent slots of each lending INA job's head (*lender, *first:
 * its first lent slot). NULL when the directory is empty.
 */
static struct slot *tail_find(struct sim *s, struct leaf *l, uint32_t job, uint32_t cseq,
			      const struct hd **lender, uint32_t *first)
{
	uint32_t tail = l->npool, total = tail, v, i;

	/* A2TP's pool: the leaf's whole memory, no heads, nothing lent. */
	if (ia_sim_scheme_shared(s->scheme)) {
		*lender = NULL;
		return l->slots ? &l->slot[ia_tail_hash(job, cseq) % l->slots] : NULL;
	}
	for (i = 0; i < l->nina; i++)
		total += l->ina[i].lend.lent;
	if (!total)
		return NULL;
	v = ia_tail_hash(job, cseq) % total;
	*lender = NULL;
	if (v < tail)
		return &l->slot[l->pool[v]];
	v -= tail;
	for (i = 0; i < l->nina; i++) {
		const struct hd *ij = &l->ina[i];
		uint32_t k = ij->lend.lent, h = s->j[ij->job].hsize;

		if (v < k) {
			*lender = ij;
			*first = h - k;
			return &l->slot[ij->head + h - k + v];
		}
		v -= k;
	}
	return NULL;
}

void ia_sim_tail(struct sim *s, uint32_t sw, uint32_t job, uint32_t cseq, uint64_t set,
		 uint8_t flags)
{
	struct leaf *l = &s->leaf[sw];
	uint64_t full = ia_sim_below(s, job, sw);
	const struct hd *lender;
	uint32_t first = 0;
	struct slot *sl;

	sl = set == full ? NULL : tail_find(s, l, job, cseq, &lender, &first);
	if (!sl) {
		/* Nothing to add it to, or no tail at all: on as it is. */
		ia_sim_up(s, sw, job, cseq, set, flags);
		return;
	}
	if (sl->tail) {
		if (sl->tjob == job && sl->tseq == cseq) {
			if (sl->tset & set)
				return;		/* duplicate */
			s->hits++;
			sl->tset |= set;
			sl->tflags |= flags;
			if (sl->tset == full) {
				/* Complete: the aggregate goes up, the slot returns to its head. */
				s->slot_time += s->now - sl->born;
				sl->tail = 0;
				ia_sim_up(s, sw, job, cseq, full, sl->tflags);
			}
			return;
		}
		/* Another chunk's: young, it stays; old, this claim flushes it. */
		if (s->now - sl->born < s->age)
			goto coll;
		tail_out(s, sw, sl, true);
	} else if (sl->hstate != HS_EMPTY && !(lender && head_free(s, l, lender, sl, first))) {
		goto coll;	/* a head slot its own job still needs */
	}
	s->claims++;
	sl->tail = 1;
	sl->tjob = job;
	sl->tseq = cseq;
	sl->tset = set;
	sl->tflags = flags;
	sl->born = s->now;
	return;
coll:
	s->collided++;
	ia_sim_up(s, sw, job, cseq, set, flags | IA_F_COLL);
}

void ia_sim_lend_sample(struct sim *s)
{
	struct ia_lend_policy pol = {
		.hold = s->cfg->lend_hold ? s->cfg->lend_hold : IA_LEND_HOLD_DEFAULT,
	};
	for (uint32_t v = 0; v < s->nsw; v++) {
		struct leaf *l = &s->leaf[v];

		for (uint32_t i = 0; i < l->nina; i++) {
			struct hd *hd = &l->ina[i];
			struct sjob *ij = &s->j[hd->job];
			uint32_t h = ij->hsize;
			uint32_t open = 0, win = ij->running ? ia_cc_window(&ij->cc) : 0;

			if (hd->wait)
				continue;	/* its job's windows are not its yet */

			for (uint32_t x = 0; x < h; x++)
				open += l->slot[hd->head + x].hstate == HS_OPEN;
			/*
			 * The senders' window: each worker reports its own, 0 once
			 * its run ended; before any report, the worker window.
			 */
			bool told = ij->running || ij->iter || ij->next;
			uint32_t wmax = ia_job_worker_window(h);

			if (!told)
				win = wmax;
			if (ij->running && ia_lend_congested(win, wmax))
				l->congested = s->now;
			/*
			 * At its full worker window lends nothing; before its first run
			 * too, unless a job here was congested lately.
			 */
			win = ia_lend_window(h, win, ia_lend_full(win, wmax, told,
								  l->congested >= 0 &&
								  s->now - l->congested <=
								  IA_LEND_CONGESTED_MS / 1e3));
			ia_lend_commit(&hd->lend, ia_lend_decide(&pol, &hd->lend, h, win, open));
		}
	}
}
