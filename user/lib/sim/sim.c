// SPDX-License-Identifier: GPL-2.0
/*
 * The discrete-event simulator of sim.h: events, the hosts and the
 * bottleneck; the switches' memory is sim_mem.c's. The model (docs/cc.md,
 * "Simulation"):
 *
 * - A complete binary tree; every job's workers hang off one leaf switch,
 *   where the job aggregates, and every aggregate or raw message crosses one
 *   bottleneck (the root's uplink to the PSs): a FIFO of `rate` messages/s
 *   with a buffer (more is dropped) and a marking threshold.
 * - A job's workers share one window (ia_cc, window / 2 at most, carried
 *   from one iteration to the next as the worker's cfg.path): chunk i only while
 *   i < lo + cwnd. Each worker sends each chunk itself, once its own compute
 *   time since the iteration began is over (a straggler last), and its
 *   message reaches the leaf as one message: sim_mem.c decides there, by the
 *   datapath's rules, whether it is added, claims a slot, flushes another
 *   chunk's partial or goes up as it is.
 * - The PS merges pieces by member set (a subset or an overlap is in vain)
 *   and answers every worker once all are in; the result carries MARK if a
 *   piece was marked, COLL if one collided.
 * - Loss recovery as the worker's (host_worker.c): RACK (a chunk sent before
 *   the first send of a chunk with a result, still open a reordering
 *   allowance later, is resent) and timers that restart with results; the
 *   window is cut by ia_cc_timeout() only when no result came for a timer.
 *   Every worker resends, unaggregated in the tails. A worker on a busy host
 *   takes its results in cfg->wake after the first that found it idle, with
 *   whatever came meanwhile, and only then looks at its timers.
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

void ia_sim_push(struct sim *s, double t, uint8_t type, uint32_t job, uint32_t cseq,
		 uint32_t gen, uint16_t w, uint8_t flags, uint64_t set)
{
	struct ev e = { .t = t, .seq = s->seq++, .set = set, .job = job, .cseq = cseq,
			.gen = gen, .w = w, .type = type, .flags = flags };
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

/* Chunk cseq of job j, if it belongs to the iteration under way; else NULL. */
static struct chunk *chunk_of(struct sim *s, struct sjob *j, uint32_t cseq)
{
	if (cseq / j->pub->chunks != j->iter)
		return NULL;
	return &j->ch[cseq % j->pub->chunks];
}

/*
 * When chunk idx's timer fires, as the worker's (host_wtimer.c): sent once,
 * from its send or the latest result of a chunk sent once, whichever is
 * later (a draining queue is not loss), one timer for the first open chunk
 * and the newest (the probes), BACKSTOP for the others; resent, from its
 * send, the timer doubled with each timer resend, at most PROGRESS_BACKOFF
 * times.
 */
#define BACKSTOP		8
#define PROGRESS_BACKOFF	2

static double timer_at(const struct sim *s, const struct sjob *j, uint32_t idx)
{
	const struct chunk *c = &j->ch[idx];
	double base = 2 * j->min_rtt > s->rto ? 2 * j->min_rtt : s->rto;

	if (!c->sent_once)
		return c->t_sent +
		       base * (1u << (c->tmo < PROGRESS_BACKOFF ? c->tmo : PROGRESS_BACKOFF));
	return (j->last_fresh > c->t_sent ? j->last_fresh : c->t_sent) +
	       (idx == j->lo || idx + 1 == j->next ? 1 : BACKSTOP) * s->rto;
}

/* Chunk idx's timer, unless an earlier check is pending (it looks again). */
static void arm(struct sim *s, uint32_t job, uint32_t idx)
{
	struct sjob *j = &s->j[job];
	struct chunk *c = &j->ch[idx];
	double at = timer_at(s, j, idx);

	at = at > s->now ? at : s->now;
	if (c->tmo_at > 0 && c->tmo_at <= at)
		return;
	c->tmo_at = at;
	ia_sim_push(s, at, EV_TIMEOUT, job, j->iter * j->pub->chunks + idx, c->gen, 0, 0, 0);
}

/*
 * Every worker sends chunk idx, each once its compute time since the
 * iteration began is over (the straggler last); the timer runs from the
 * last send.
 */
static void send_chunk(struct sim *s, uint32_t job, uint32_t idx, uint8_t flags)
{
	struct sjob *j = &s->j[job];
	struct chunk *c = &j->ch[idx];
	uint32_t cseq = j->iter * j->pub->chunks + idx;
	double last = s->now;

	c->gen++;
	c->order = ++j->order;
	for (uint32_t w = 0; w < j->pub->workers; w++) {
		double t = j->t_iter + j->gap[w] > s->now ? j->t_iter + j->gap[w] : s->now;

		last = t > last ? t : last;
		ia_sim_push(s, t + s->cfg->rtt / 4 + j->spread[w], EV_ARRIVE, job, cseq, c->gen, w,
			    flags, 0);
	}
	c->t_sent = last;
	c->tmo_at = 0;
	arm(s, job, idx);
}

static void try_send(struct sim *s, uint32_t job)
{
	struct sjob *j = &s->j[job];

	while (j->next < j->pub->chunks && j->next < j->lo + ia_cc_window(&j->cc)) {
		struct chunk *c = &j->ch[j->next];
		uint8_t flags = 0;

		c->state = CH_FLIGHT;
		c->flags = 0;
		c->got = 0;
		c->sent_once = 1;
		c->tmo = 0;
		c->first = j->order + 1;	/* send_chunk()'s order */
		/* As the worker: beyond its aggregator window a chunk bypasses shared memory. */
		if (j->pub->ps ? ia_sim_scheme_tail(s->scheme) : ia_sim_scheme_shared(s->scheme)) {
			if (!ia_cc_in_memory(&j->cc, j->iter * j->pub->chunks + j->next,
					     j->agg_inflight)) {
				flags = IA_F_BYPASS;
			} else {
				c->agg = 1;
				j->agg_inflight++;
			}
		}
		send_chunk(s, job, j->next, flags);
		j->next++;
	}
}

/* A chunk found lost (timer or RACK): every worker sends it again, never aggregated in a tail. */
static void resend(struct sim *s, uint32_t job, uint32_t idx)
{
	s->j[job].ch[idx].sent_once = 0;
	send_chunk(s, job, idx, IA_F_RETX);
}

/*
 * A piece (members set) reaches switch sw: a head, a tail, or on up as it
 * is. A2TP's pool and the tails are best effort: resends and bypasses go up
 * raw, and keep saying so on the way (a cluster's spine).
 */
static void at_switch(struct sim *s, uint32_t sw, uint32_t job, uint32_t cseq, uint64_t set,
		      uint8_t flags)
{
	struct sjob *j = &s->j[job];
	bool pool = j->pub->ps ? ia_sim_scheme_tail(s->scheme) : ia_sim_scheme_shared(s->scheme);
	uint8_t keep = flags & (IA_F_MARK | IA_F_COLL);

	if (sw >= s->nleaves && j->pub->nleaves < 2)
		ia_sim_up(s, sw, job, cseq, set, flags);	/* aggregated below already */
	else if (!j->pub->ps && !pool)
		ia_sim_head(s, sw, job, cseq, set, keep);
	else if (flags & (IA_F_RETX | IA_F_BYPASS) || !pool)
		ia_sim_up(s, sw, job, cseq, set, flags);
	else
		ia_sim_tail(s, sw, job, cseq, set, keep);
}

/* Worker w's message reaches its leaf. */
static void arrive(struct sim *s, const struct ev *e)
{
	at_switch(s, ia_sim_leaf_of(s, e->job, e->w), e->job, e->cseq, 1ull << e->w, e->flags);
}

/*
 * Up switch sw's uplink: the bottleneck (one for every leaf), or a
 * cluster's leaf's uplink to its spine and a spine's to the PSs.
 */
void ia_sim_up(struct sim *s, uint32_t sw, uint32_t job, uint32_t cseq, uint64_t set,
	       uint8_t flags)
{
	struct sjob *j = &s->j[job];
	struct link *k = &s->link[s->cfg->spines ? sw : 0];
	double q = k->busy > s->now ? (k->busy - s->now) * k->rate : 0;

	j->pub->msgs++;
	if (q >= s->cfg->buffer)
		return;		/* dropped: the chunk waits for its timer or RACK */
	k->busy = (k->busy > s->now ? k->busy : s->now) + 1 / k->rate;
	/* As the switches do: flexina's PS jobs are marked at the lower threshold. */
	if (q > (ia_cc_marks_early(j->cc.cfg.policy, j->cc.cfg.ps) ?
		 s->cfg->thresh >> IA_VQ_EARLY_SHIFT : s->cfg->thresh))
		flags |= IA_F_MARK;
	if (s->cfg->spines && sw < s->nleaves)
		ia_sim_push(s, k->busy + s->cfg->rtt / 8, EV_HOP, job, cseq,
			    s->nleaves + sw / (s->nleaves / s->cfg->spines), 0, flags, set);
	else
		ia_sim_push(s, k->busy + s->cfg->rtt / 4, EV_PSRX, job, cseq, 0, 0, flags, set);
}

/*
 * The PS merges a piece whose member set is disjoint from what it has; a
 * subset or a partial overlap is dropped (docs/memory.md "exactly-once").
 * Every worker gets the result once every member is in.
 */
static void psrx(struct sim *s, const struct ev *e)
{
	struct sjob *j = &s->j[e->job];
	struct chunk *c = chunk_of(s, j, e->cseq);

	if (!c || c->state != CH_FLIGHT || (e->set & c->got)) {
		s->wasted++;
		return;
	}
	c->got |= e->set;
	s->accepted++;
	c->flags |= e->flags & IA_F_MARK ? IA_CC_MARK : 0;
	c->flags |= e->flags & IA_F_COLL ? IA_CC_COLL : 0;
	if (c->got == ia_sim_full(j))
		ia_sim_push(s, s->now + s->cfg->rtt / 2, EV_RESULT, e->job, e->cseq, 0, 0, 0, 0);
}

static void iteration_start(struct sim *s, uint32_t job)
{
	struct sjob *j = &s->j[job];
	struct ia_cc_cfg cc;

	for (uint32_t i = 0; i < j->pub->chunks; i++)
		j->ch[i].state = CH_IDLE;
	j->lo = j->next = 0;
	j->running = true;
	/* Later iterations go on from the window and round trips the last left (cfg.path). */
	if (j->promote)
		ia_sim_promoted(s, job);
	if (!j->iter) {
		cc = j->cc.cfg;
		if (ia_cc_init(&j->cc, &cc, (uint64_t)(s->now * 1e9)))
			s->err = -EINVAL;
		j->min_rtt = 0;
	} else {
		ia_cc_iteration(&j->cc, (uint64_t)(s->now * 1e9));
	}
	j->last_cut = -1;
	j->last_fresh = j->last_result = s->now;
	try_send(s, job);
}

/* RACK's reordering allowance (host_wtimer.c): a quarter of the shortest round trip, >= 200 us. */
static double reo(const struct sjob *j)
{
	return j->min_rtt / 4 > 200e-6 ? j->min_rtt / 4 : 200e-6;
}

static void result(struct sim *s, uint32_t job, uint32_t cseq)
{
	struct sjob *j = &s->j[job];
	struct chunk *c = chunk_of(s, j, cseq);
	const struct ev ev = { .job = job, .cseq = cseq }, *e = &ev;
	double gap = INFINITY;
	uint32_t i;

	if (!c || c->state != CH_FLIGHT)
		return;
	c->state = CH_DONE;
	if (c->agg) {
		c->agg = 0;
		j->agg_inflight--;
	}
	s->results++;
	s->marked += !!(c->flags & IA_CC_MARK);
	j->pub->marks += !!(c->flags & IA_CC_MARK);
	j->pub->colls += !!(c->flags & IA_CC_COLL);
	j->pub->bytes += j->pub->workers * CHUNK_BYTES;
	s->bytes_now += j->pub->workers * CHUNK_BYTES;
	ia_cc_result(&j->cc, c->flags, (uint64_t)(s->now * 1e9));
	j->last_result = s->now;
	if (!j->first)
		j->first = s->now - j->t0;
	/* RACK: a chunk sent before this one and still open is lost once reo has passed. */
	if (c->sent_once) {
		j->last_fresh = s->now;
		if (!j->min_rtt || s->now - c->t_sent < j->min_rtt)
			j->min_rtt = s->now - c->t_sent;
	}
	/* Its first send is the reference: a resent chunk's result may answer any send. */
	if (c->first > j->rack_order) {
		j->rack_order = c->first;
		j->rack_time = s->now;
	}
	for (i = j->lo; i < j->next; i++) {
		struct chunk *o = &j->ch[i];

		if (o->state == CH_FLIGHT && o->order < j->rack_order)
			ia_sim_push(s, s->now + reo(j), EV_RACK, e->job,
				    j->iter * j->pub->chunks + i, o->gen, 0, 0, 0);
	}
	while (j->lo < j->pub->chunks && j->ch[j->lo].state == CH_DONE)
		j->lo++;
	if (j->lo < j->pub->chunks) {
		try_send(s, e->job);
		/* The probes' timers run from this result now. */
		if (j->ch[j->lo].state == CH_FLIGHT)
			arm(s, e->job, j->lo);
		if (j->next > j->lo && j->ch[j->next - 1].state == CH_FLIGHT)
			arm(s, e->job, j->next - 1);
		return;
	}
	j->running = false;
	if (++j->iter < ia_sim_iters(s, job)) {
		/* Each worker computes for its own time; the first to start opens the iteration. */
		j->t_iter = s->now;
		for (i = 0; i < j->pub->workers; i++)
			gap = j->gap[i] < gap ? j->gap[i] : gap;
		ia_sim_push(s, s->now + gap, EV_SEND, e->job, 0, 0, 0, 0, 0);
	} else {
		j->pub->jct = s->now - j->t0;
		if (s->cfg->spines)
			ia_sim_release(s, job);
		s->left--;
		/* The window in which every job contends ends with the first to finish. */
		if (s->left + 1 == s->cfg->jobs) {
			s->t_first_end = s->now;
			s->bytes_first_end = s->bytes_now;
		}
	}
}

/* The workers take in every result that came meanwhile, in chunk order. */
static void take_in(struct sim *s, uint32_t job)
{
	struct sjob *j = &s->j[job];
	uint32_t it = j->iter, hi = j->next;

	j->wake_at = 0;
	for (uint32_t i = j->lo; i < hi && j->iter == it; i++) {
		if (j->ch[i].arrived) {
			j->ch[i].arrived = 0;
			result(s, job, it * j->pub->chunks + i);
		}
	}
}

/*
 * A result reaches the workers. A worker on a busy host takes it in only
 * when it next runs, wake after the first result that found it idle, with
 * whatever came meanwhile; only then does it look at its timers (cfg->wake).
 */
static void arrive_result(struct sim *s, const struct ev *e)
{
	struct sjob *j = &s->j[e->job];
	struct chunk *c = chunk_of(s, j, e->cseq);

	if (!c || c->state != CH_FLIGHT)
		return;
	if (!(s->cfg->wake > 0)) {
		result(s, e->job, e->cseq);
		return;
	}
	c->arrived = 1;
	if (!j->wake_at) {
		j->wake_at = s->now + s->cfg->wake;
		ia_sim_push(s, j->wake_at, EV_WAKE, e->job, 0, 0, 0, 0, 0);
	}
}

static void timeout(struct sim *s, const struct ev *e)
{
	struct sjob *j = &s->j[e->job];
	struct chunk *c = chunk_of(s, j, e->cseq);
	uint32_t idx = e->cseq % j->pub->chunks;

	if (!c || c->gen != e->gen || c->state != CH_FLIGHT || c->tmo_at != e->t)
		return;
	c->tmo_at = 0;
	/* Woken by its timer, the worker first takes in the results that came. */
	if (j->wake_at) {
		take_in(s, e->job);
		c = chunk_of(s, j, e->cseq);
		if (!c || c->state != CH_FLIGHT)
			return;
		if (c->tmo_at) {
			return;		/* re-armed by a result: that check decides */
		}
	}
	/* Only what the window allows now is resent. */
	if (idx >= j->lo + ia_cc_window(&j->cc)) {
		c->tmo_at = s->now + s->rto;
		ia_sim_push(s, c->tmo_at, EV_TIMEOUT, e->job, e->cseq, c->gen, 0, 0, 0);
		return;
	}
	if (timer_at(s, j, idx) > s->now) {
		arm(s, e->job, idx);
		return;
	}
	j->pub->timeouts++;
	/* No result at all for a whole timeout (an outage, a full queue): the policy cuts, once. */
	if (s->now - j->last_result >= s->rto && s->now - j->last_cut >= s->rto) {
		ia_cc_timeout(&j->cc, (uint64_t)(s->now * 1e9));
		j->last_cut = s->now;
	}
	c->tmo++;
	resend(s, e->job, idx);
}

static void rack(struct sim *s, const struct ev *e)
{
	struct sjob *j = &s->j[e->job];
	struct chunk *c = chunk_of(s, j, e->cseq);

	if (!c || c->gen != e->gen || c->state != CH_FLIGHT)
		return;
	if (j->wake_at) {
		take_in(s, e->job);
		c = chunk_of(s, j, e->cseq);
		if (!c || c->gen != e->gen || c->state != CH_FLIGHT)
			return;
	}
	if (c->order >= j->rack_order)
		return;
	if (j->rack_time + reo(j) > s->now)
		return;		/* a later result scheduled its own check */
	j->pub->racks++;
	resend(s, e->job, e->cseq % j->pub->chunks);
}

static void dispatch(struct sim *s, const struct ev *e)
{
	switch (e->type) {
	case EV_SEND:
		iteration_start(s, e->job);
		break;
	case EV_ARRIVE:
		arrive(s, e);
		break;
	case EV_PSRX:
		psrx(s, e);
		break;
	case EV_RESULT:
		arrive_result(s, e);
		break;
	case EV_WAKE:
		if (s->j[e->job].wake_at == e->t)
			take_in(s, e->job);
		break;
	case EV_TIMEOUT:
		timeout(s, e);
		break;
	case EV_RACK:
		rack(s, e);
		break;
	case EV_HOP:
		at_switch(s, e->gen, e->job, e->cseq, e->set, e->flags);
		break;
	case EV_ADMIT:
		ia_sim_admit(s, e->job);
		break;
	case EV_SAMPLE:
		ia_sim_lend_sample(s);
		if (s->left)
			ia_sim_push(s, s->now + s->lend_period, EV_SAMPLE, 0, 0, 0, 0, 0, 0);
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
	s.rto = cfg->rto > 0 ? cfg->rto : 2 * (cfg->rtt + cfg->spread + cfg->buffer / cfg->rate);
	s.age = cfg->tail_age > 0 ? cfg->tail_age : IA_TAIL_AGE_NS / 1e9;
	s.lend_period = cfg->lend_period > 0 ? cfg->lend_period : 0.1;
	s.rng = cfg->seed ^ 0x6e6f726f6f6dull;
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
