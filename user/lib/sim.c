// SPDX-License-Identifier: GPL-2.0
/*
 * The discrete-event simulator of sim.h. The model (docs/cc.md,
 * "Simulation"):
 *
 * - A complete binary tree; every job's workers hang off one leaf switch,
 *   where the job aggregates, and every aggregate or raw message crosses one
 *   bottleneck (the root's uplink to the PSs): a FIFO of `rate` messages/s
 *   with a buffer (more is dropped) and a marking threshold.
 * - Memory per leaf: `mem` times the heads its jobs would need. Selective
 *   INA in job order: a job whose head (`window` slots) still fits is INA,
 *   else PS. The rest of the leaf is its tail.
 * - A job's workers send each chunk together (one window, the worker's
 *   sliding rule: chunk i only while i < lo + cwnd); worker w's contribution
 *   reaches the leaf spread[w] after the first. An INA chunk takes head slot
 *   seq % H from its first contribution until its result (evicting a PS
 *   partial found there) and sends one aggregate. A PS chunk within the
 *   aggregator window, where the scheme gives PS jobs a tail, hashes into
 *   the tail plus the lent head slots (H - cwnd of each INA job at the leaf,
 *   the top of its head); a free slot is claimed until the last contribution
 *   (one aggregate goes up), a taken one is a collision (every contribution
 *   goes up raw, the result says COLL), an evicted partial sends its
 *   contributions raw. Otherwise PS chunks go up raw.
 * - The PS answers when every message of the chunk has crossed; the result
 *   carries MARK if any was marked. A chunk without result after the RTO is
 *   resent (raw for PS jobs: retransmissions never aggregate), and the window
 *   is cut by ia_cc_timeout() at most once per RTO.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <inagg/maps.h>

#include "sim_int.h"

static bool before(const struct ev *a, const struct ev *b)
{
	return a->t < b->t || (a->t == b->t && a->seq < b->seq);
}

void ia_sim_push(struct sim *s, double t, uint8_t type, uint32_t job, uint32_t chunk,
		 uint32_t gen, uint8_t raw, uint16_t n)
{
	struct ev e = { t, s->seq++, job, chunk, gen, type, raw, n };
	size_t i;

	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 4096;
		struct ev *v = realloc(s->heap, cap * sizeof(*v));

		if (!v) {
			s->err = -ENOMEM;
			return;
		}
		s->heap = v;
		s->cap = cap;
	}
	for (i = s->n++; i; i = (i - 1) / 2) {
		if (before(&s->heap[(i - 1) / 2], &e))
			break;
		s->heap[i] = s->heap[(i - 1) / 2];
	}
	s->heap[i] = e;
}

static struct ev pop(struct sim *s)
{
	struct ev top = s->heap[0], last = s->heap[--s->n];
	size_t i = 0, c;

	while ((c = 2 * i + 1) < s->n) {
		if (c + 1 < s->n && before(&s->heap[c + 1], &s->heap[c]))
			c++;
		if (before(&last, &s->heap[c]))
			break;
		s->heap[i] = s->heap[c];
		i = c;
	}
	s->heap[i] = last;
	return top;
}

static void release(struct sim *s, uint32_t job, struct chunk *c)
{
	struct leaf *l = &s->leaf[s->j[job].pub->leaf];
	struct holder *h;

	if (c->slot < 0)
		return;
	h = &l->hold[c->slot];
	if (h->used && h->job == job && h->chunk == (uint32_t)(c - s->j[job].ch) && h->gen == c->gen) {
		h->used = 0;
		s->slot_time += s->now - c->t_hold;
	}
	c->slot = -1;
}

/* A PS chunk's slot in the leaf's tail and lent head slots; -1 if there is none. */
static int32_t tail_slot(struct sim *s, struct leaf *l, uint32_t job, uint32_t seq)
{
	uint32_t tail = l->slots - l->heads, total = tail, v, i;

	for (i = 0; i < l->nina; i++) {
		const struct sjob *ij = &s->j[l->ina[i]];

		total += ij->cc.cfg.wmax - ia_cc_window(&ij->cc);
	}
	if (!total)
		return -1;
	v = ia_tail_hash(job, seq) % total;
	if (v < tail)
		return l->heads + v;
	v -= tail;
	for (i = 0; i < l->nina; i++) {
		const struct sjob *ij = &s->j[l->ina[i]];
		uint32_t h = ij->cc.cfg.wmax, k = h - ia_cc_window(&ij->cc);

		if (v < k)
			return ij->head + h - k + v;
		v -= k;
	}
	return -1;
}

static void try_send(struct sim *s, uint32_t job)
{
	struct sjob *j = &s->j[job];

	while (j->next < j->pub->chunks && j->next < j->lo + ia_cc_window(&j->cc)) {
		struct chunk *c = &j->ch[j->next];

		c->gen++;
		c->state = CH_FLIGHT;
		c->flags = 0;
		c->out = 0;
		ia_sim_push(s, s->now + s->cfg->rtt / 4, EV_ARRIVE, job, j->next, c->gen, 0, 0);
		ia_sim_push(s, s->now + s->rto, EV_TIMEOUT, job, j->next, c->gen, 0, 0);
		j->next++;
	}
}

/* Every worker's contribution goes up raw, each when it reaches the leaf. */
static void send_raw(struct sim *s, uint32_t job, uint32_t idx, struct chunk *c)
{
	struct sjob *j = &s->j[job];

	for (uint32_t w = 0; w < j->pub->workers; w++)
		ia_sim_push(s, s->now + j->spread[w], EV_ENQ, job, idx, c->gen, 1, 1);
	c->out += j->pub->workers;
}

static void arrive(struct sim *s, const struct ev *e)
{
	struct sjob *j = &s->j[e->job];
	struct leaf *l = &s->leaf[j->pub->leaf];
	struct chunk *c = &j->ch[e->chunk];
	uint32_t seq = j->iter * j->pub->chunks + e->chunk;
	struct holder *h;
	int32_t slot;

	if (!j->pub->ps) {
		/* INA: its head slot; a PS partial lent there is evicted. */
		slot = j->head + seq % j->cc.cfg.wmax;
		h = &l->hold[slot];
		if (h->used && (h->job != e->job || h->chunk != e->chunk)) {
			s->slot_time += s->now - s->j[h->job].ch[h->chunk].t_hold;
			h->used = 0;
		}
		if (!h->used) {
			*h = (struct holder){ e->job, e->chunk, c->gen, 1 };
			c->slot = slot;
			c->t_hold = s->now;
		}
		h->gen = c->gen;	/* a resend keeps the slot */
		ia_sim_push(s, s->now + j->maxspread, EV_ENQ, e->job, e->chunk, c->gen, 0, 1);
		c->out++;
		return;
	}
	if (e->raw || !ia_sim_scheme_tail(s->scheme) || j->agg_inflight >= ia_cc_agg_window(&j->cc)) {
		send_raw(s, e->job, e->chunk, c);
		return;
	}
	s->tried++;
	slot = tail_slot(s, l, e->job, seq);
	if (slot < 0 || l->hold[slot].used) {
		s->collided++;
		c->flags |= IA_CC_COLL;
		send_raw(s, e->job, e->chunk, c);
		return;
	}
	l->hold[slot] = (struct holder){ e->job, e->chunk, c->gen, 1 };
	c->slot = slot;
	c->t_hold = s->now;
	c->agg = 1;
	j->agg_inflight++;
	ia_sim_push(s, s->now + j->maxspread, EV_ENQ, e->job, e->chunk, c->gen, 0, 1);
	c->out++;
}

/* Messages reaching the bottleneck; a PS chunk's claimed slot completes here. */
static void enqueue(struct sim *s, const struct ev *e)
{
	struct sjob *j = &s->j[e->job];
	struct chunk *c = &j->ch[e->chunk];
	double q;

	if (c->gen != e->gen || c->state != CH_FLIGHT)
		return;
	if (j->pub->ps && !e->raw) {
		struct holder *h = &s->leaf[j->pub->leaf].hold[c->slot];

		if (!(h->used && h->job == e->job && h->chunk == e->chunk && h->gen == c->gen)) {
			/* Evicted by the head's owner: the contributions go on raw. */
			c->flags |= IA_CC_COLL;
			c->out--;
			c->slot = -1;
			send_raw(s, e->job, e->chunk, c);
			return;
		}
		release(s, e->job, c);
	}
	q = s->busy > s->now ? (s->busy - s->now) * s->cfg->rate : 0;
	j->pub->msgs++;
	if (q >= s->cfg->buffer)
		return;		/* dropped: the chunk waits for its timeout */
	s->busy = (s->busy > s->now ? s->busy : s->now) + 1 / s->cfg->rate;
	/* As the switches do: flexina's PS jobs are marked at the lower threshold. */
	if (q > (ia_cc_marks_early(j->cc.cfg.policy, j->cc.cfg.ps) ?
		 s->cfg->thresh >> IA_VQ_EARLY_SHIFT : s->cfg->thresh))
		c->flags |= IA_CC_MARK;
	ia_sim_push(s, s->busy + s->cfg->rtt / 4, EV_PSRX, e->job, e->chunk, c->gen, 0, 0);
}

static void iteration_start(struct sim *s, uint32_t job)
{
	struct sjob *j = &s->j[job];

	for (uint32_t i = 0; i < j->pub->chunks; i++) {
		j->ch[i].state = CH_IDLE;
		j->ch[i].slot = -1;
	}
	j->lo = j->next = 0;
	try_send(s, job);
}

static void result(struct sim *s, const struct ev *e)
{
	struct sjob *j = &s->j[e->job];
	struct chunk *c = &j->ch[e->chunk];

	if (c->gen != e->gen || c->state != CH_FLIGHT)
		return;
	c->state = CH_DONE;
	if (!j->pub->ps)
		release(s, e->job, c);
	if (c->agg) {
		c->agg = 0;
		j->agg_inflight--;
	}
	s->results++;
	s->marked += !!(c->flags & IA_CC_MARK);
	j->pub->marks += !!(c->flags & IA_CC_MARK);
	j->pub->colls += !!(c->flags & IA_CC_COLL);
	j->pub->bytes += j->pub->workers * CHUNK_BYTES;
	ia_cc_result(&j->cc, c->flags, (uint64_t)(s->now * 1e9));
	while (j->lo < j->pub->chunks && j->ch[j->lo].state == CH_DONE)
		j->lo++;
	if (j->lo < j->pub->chunks) {
		try_send(s, e->job);
		return;
	}
	if (++j->iter < s->cfg->iters)
		ia_sim_push(s, s->now + j->gap, EV_SEND, e->job, 0, 0, 0, 0);
	else
		j->pub->jct = s->now - j->t0;
}

static void timeout(struct sim *s, const struct ev *e)
{
	struct sjob *j = &s->j[e->job];
	struct chunk *c = &j->ch[e->chunk];

	if (c->gen != e->gen || c->state != CH_FLIGHT)
		return;
	/* Like the worker: only what the window allows now is resent. */
	if (e->chunk >= j->lo + ia_cc_window(&j->cc)) {
		ia_sim_push(s, s->now + s->rto, EV_TIMEOUT, e->job, e->chunk, c->gen, 0, 0);
		return;
	}
	j->pub->timeouts++;
	if (s->now - j->last_cut >= s->rto) {
		ia_cc_timeout(&j->cc, (uint64_t)(s->now * 1e9));
		j->last_cut = s->now;
	}
	if (j->pub->ps)
		release(s, e->job, c);
	if (c->agg) {
		c->agg = 0;
		j->agg_inflight--;
	}
	c->gen++;
	c->flags = 0;
	c->out = 0;
	ia_sim_push(s, s->now + s->cfg->rtt / 4, EV_ARRIVE, e->job, e->chunk, c->gen, 1, 0);
	ia_sim_push(s, s->now + s->rto, EV_TIMEOUT, e->job, e->chunk, c->gen, 0, 0);
}

static void dispatch(struct sim *s, const struct ev *e)
{
	struct chunk *c;

	switch (e->type) {
	case EV_SEND:
		iteration_start(s, e->job);
		break;
	case EV_ARRIVE:
		c = &s->j[e->job].ch[e->chunk];
		if (c->gen == e->gen && c->state == CH_FLIGHT)
			arrive(s, e);
		break;
	case EV_ENQ:
		enqueue(s, e);
		break;
	case EV_PSRX:
		c = &s->j[e->job].ch[e->chunk];
		if (c->gen == e->gen && c->state == CH_FLIGHT && c->out && !--c->out)
			ia_sim_push(s, s->now + s->cfg->rtt / 2, EV_RESULT, e->job, e->chunk, e->gen, 0, 0);
		break;
	case EV_RESULT:
		result(s, e);
		break;
	case EV_TIMEOUT:
		timeout(s, e);
		break;
	}
}

int ia_sim_run(const struct ia_sim_cfg *cfg, enum ia_sim_scheme scheme, struct ia_sim_res *res,
	       struct ia_sim_job *jobs)
{
	struct sim s = { .cfg = cfg, .scheme = scheme };
	struct ia_sim_job *pub = jobs;
	uint64_t events = 0;
	int err;

	if (ia_sim_check(cfg) || (unsigned int)scheme >= IA_SIM__COUNT)
		return -EINVAL;
	if (!pub)
		pub = calloc(cfg->jobs, sizeof(*pub));
	if (!pub)
		return -ENOMEM;
	/* Long enough that a full buffer never times a chunk out by itself. */
	s.rto = 2 * (cfg->rtt + cfg->spread + cfg->buffer / cfg->rate);
	err = ia_sim_build(&s, pub);
	while (!err && s.n) {
		struct ev e = pop(&s);

		s.now = e.t;
		dispatch(&s, &e);
		events++;
		err = s.err;
	}
	if (!err) {
		ia_sim_summarise(&s, pub, res);
		res->events = events;
	}
	ia_sim_teardown(&s);
	if (pub != jobs)
		free(pub);
	return err;
}
