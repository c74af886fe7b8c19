// SPDX-License-Identifier: GPL-2.0
/* The lend / reclaim policy of INA heads (see job_lend.h). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "job_lend.h"
#include "sender.h"

static uint32_t margin(uint32_t head)
{
	return head / 8 > 1 ? head / 8 : 1;
}

static uint32_t step(uint32_t head)
{
	return head / 16 > 1 ? head / 16 : 1;
}

uint32_t ia_lend_decide(const struct ia_lend_policy *p, struct ia_lend_state *s, uint32_t head,
			uint32_t window, uint32_t open)
{
	uint64_t need = (uint64_t)(window > open ? window : open) + margin(head);

	if (need > head)
		need = head;
	if (s->lent > head)	/* a head that shrank: never lend more than there is */
		return head - need;
	if (need > head - s->lent)
		return head - need;
	if (need > s->peak)
		s->peak = need;
	if (++s->quiet < p->hold || !p->hold)
		return s->lent;
	/* Quiet for hold samples: lend what none of them needed, if it is worth a change. */
	if (head - s->peak >= s->lent + step(head))
		return head - s->peak;
	/* Not worth it: the next hold samples are judged on their own peak. */
	s->quiet = 0;
	s->peak = 0;
	return s->lent;
}

void ia_lend_commit(struct ia_lend_state *s, uint32_t lent)
{
	if (lent > s->lent) {
		s->lends++;
		s->lent_total += lent - s->lent;
	} else if (lent < s->lent) {
		s->reclaims++;
		s->reclaimed_total += s->lent - lent;
	} else {
		return;
	}
	s->lent = lent;
	s->quiet = 0;
	s->peak = 0;
}

/* What happened, to the lender's note (or the print hook). */
#define note(L, level, ...) ia_log_to((L)->ops->note, (L)->ctx, level, __VA_ARGS__)

int ia_lender_init(struct ia_lender *L, const struct ia_topo *t, const struct ia_lend_ops *ops,
		   void *ctx, const struct ia_lend_policy *pol)
{
	*L = (struct ia_lender){ .t = t, .ops = ops, .ctx = ctx, .pol = *pol };
	L->dirty = calloc(t->n, sizeof(*L->dirty));
	L->lends = calloc(t->n, sizeof(*L->lends));
	L->reclaims = calloc(t->n, sizeof(*L->reclaims));
	L->congested_ms = calloc(t->n, sizeof(*L->congested_ms));
	if (!L->dirty || !L->lends || !L->reclaims || !L->congested_ms) {
		ia_lender_free(L);
		return -ENOMEM;
	}
	return 0;
}

void ia_lender_free(struct ia_lender *L)
{
	for (int i = 0; i < IA_MAX_JOBS; i++) {
		free(L->jobs[i].sw);
		free(L->jobs[i].rep);
	}
	free(L->dirty);
	free(L->lends);
	free(L->reclaims);
	free(L->congested_ms);
	memset(L, 0, sizeof(*L));
}

static struct ia_lend_job *job_of(struct ia_lender *L, uint32_t id, bool make)
{
	struct ia_lend_job *free_one = NULL;

	for (int i = 0; i < IA_MAX_JOBS; i++) {
		if (L->jobs[i].id == id)
			return &L->jobs[i];
		if (!L->jobs[i].id && !free_one)
			free_one = &L->jobs[i];
	}
	if (!make || !free_one)
		return NULL;
	free_one->sw = calloc(L->t->n, sizeof(*free_one->sw));
	if (!free_one->sw)
		return NULL;
	free_one->id = id;
	return free_one;
}

/* Moves job id's lent count at v to lent through the ledger; the state follows on success. */
static int apply(struct ia_lender *L, uint32_t id, int v, struct ia_lend_state *s, uint32_t lent)
{
	char why[IA_ERRLEN] = "";
	int ret;

	if (lent == s->lent)
		return 0;
	ret = lent > s->lent ? L->ops->lend(L->ctx, v, id, lent - s->lent, why, sizeof(why)) :
			       L->ops->reclaim(L->ctx, v, id, s->lent - lent, why, sizeof(why));
	if (ret) {
		note(L, IA_LOG_WARN, "job %u: %s %u head slots on %s: %s", id,
		     lent > s->lent ? "lending" : "reclaiming",
		     lent > s->lent ? lent - s->lent : s->lent - lent, L->t->sw[v].name,
		     *why ? why : strerror(-ret));
		return ret;
	}
	note(L, IA_LOG_DEBUG, "job %u: %s %u head slots on %s (lent %u)", id,
	     lent > s->lent ? "lends" : "reclaims",
	     lent > s->lent ? lent - s->lent : s->lent - lent, L->t->sw[v].name, lent);
	if (lent > s->lent)
		L->lends[v]++;
	else
		L->reclaims[v]++;
	ia_lend_commit(s, lent);
	L->dirty[v] = true;
	return 0;
}

static int lenders(const struct ia_lender *L, int v)
{
	int n = 0;

	for (int i = 0; i < IA_MAX_JOBS; i++)
		n += L->jobs[i].id && L->jobs[i].sw[v].lent;
	return n;
}

void ia_lender_touch(struct ia_lender *L, int v)
{
	if (L->dirty)
		L->dirty[v] = true;
}

static uint64_t now_ms(struct ia_lender *L)
{
	return L->ops->now_ms ? L->ops->now_ms(L->ctx) : (uint64_t)ia_now_ms();
}

/* Sender id worker is one of job j's workers (the first j->load[v] of each switch v). */
static bool worker_of(const struct ia_topo *t, const struct ia_job *j, uint32_t worker)
{
	int64_t g = (int64_t)worker - 1;

	for (int v = 0; j->load && v < t->n; v++)
		if (g >= t->first_worker[v] && g < (int64_t)t->first_worker[v] + j->load[v])
			return true;
	return false;
}

int ia_lender_report(struct ia_lender *L, const struct ia_job *j, uint32_t worker,
		     uint32_t window, char *why, size_t whylen)
{
	uint32_t wmax = ia_job_worker_window(j->window);
	struct ia_lend_job *lj;
	struct ia_lend_report *r;
	uint32_t i;

	if (j->class != IA_JOB_INA)
		return ia_fail(why, whylen, -EINVAL,
			       "job %u is %s: only an INA job has a head to lend", j->id,
			       ia_job_class_name(j->class));
	if (window > wmax)
		return ia_fail(why, whylen, -EINVAL, "window %u above the job's worker window (%u)",
			       window, wmax);
	if (!worker_of(L->t, j, worker))
		return ia_fail(why, whylen, -ENOENT, "worker %u is not one of job %u's", worker,
			       j->id);
	/* 0 too: its run ended, it keeps nothing in flight until its next run reports. */
	lj = job_of(L, j->id, true);
	for (i = 0; lj && i < lj->nrep && lj->rep[i].worker != worker; i++)
		;
	if (!lj)
		return ia_fail(why, whylen, -ENOMEM, "out of memory");
	if (i == lj->nrep) {
		r = realloc(lj->rep, (lj->nrep + 1) * sizeof(*r));
		if (!r)
			return ia_fail(why, whylen, -ENOMEM, "out of memory");
		lj->rep = r;
		lj->nrep++;
	}
	lj->rep[i] = (struct ia_lend_report){ .worker = worker, .window = window,
					      .at_ms = now_ms(L) };
	lj->nreports++;
	/* Congestion seen at the job's switches: the next jobs there lend before reporting. */
	for (int v = 0; ia_lend_congested(window, wmax) && j->blue && v < L->t->n; v++)
		if (j->blue[v])
			L->congested_ms[v] = lj->rep[i].at_ms;
	return 0;
}

uint64_t ia_lender_reports(const struct ia_lender *L, uint32_t id)
{
	for (int i = 0; i < IA_MAX_JOBS; i++)
		if (L->jobs[i].id == id)
			return L->jobs[i].nreports;
	return 0;
}

uint32_t ia_lender_window(struct ia_lender *L, const struct ia_job *j, uint32_t *nrep)
{
	uint32_t wmax = ia_job_worker_window(j->window), w = j->live_window;
	struct ia_lend_job *lj = job_of(L, j->id, false);
	uint64_t now = now_ms(L);
	bool told;

	for (uint32_t i = 0; lj && i < lj->nrep;) {
		/*
		 * Stale: its worker died or lost the daemon (a live one refreshes
		 * it). A run's end (0) stays: nothing is in flight until the next
		 * run reports, however long that takes; forgotten, it would count
		 * as no report (the full worker window) and take the lend back
		 * from the PS jobs still running (issue 33).
		 */
		if (lj->rep[i].window && now - lj->rep[i].at_ms > IA_LEND_REPORT_TTL_MS) {
			lj->rep[i] = lj->rep[--lj->nrep];
			continue;
		}
		if (lj->rep[i].window > w)
			w = lj->rep[i].window;
		i++;
	}
	if (nrep)
		*nrep = lj ? lj->nrep : 0;
	/* Nobody said: the worker window. Workers whose runs all ended: nothing in flight. */
	told = j->live_window || (lj && lj->nrep);
	return told && w < wmax ? w : wmax;
}

int ia_lender_sample(struct ia_lender *L, const struct ia_job *j, int v, uint32_t open)
{
	struct ia_lend_job *lj;
	struct ia_lend_state probe;
	uint32_t window, nrep, wmax = ia_job_worker_window(j->window);
	bool congested;

	if (j->class != IA_JOB_INA || !j->blue[v] || j->state != IA_JOB_ACTIVE)
		return 0;
	/* The senders' window now, never above what the job was admitted with. */
	window = ia_lender_window(L, j, &nrep);
	congested = L->congested_ms[v] && now_ms(L) - L->congested_ms[v] <= IA_LEND_CONGESTED_MS;
	/*
	 * Senders at their full worker window (reported, or no report where
	 * nothing was congested lately) are not slowed: their chunks cycle
	 * through the whole head, so a lent slot is taken back within a round
	 * and the PS chunks put there collide. Such a sample needs the whole head.
	 */
	window = ia_lend_window(j->head, window,
				ia_lend_full(window, wmax, nrep || j->live_window, congested));
	lj = job_of(L, j->id, true);
	if (!lj)
		return -ENOMEM;
	/* Decided on a copy: a failed ledger call leaves the state as it was. */
	probe = lj->sw[v];
	uint32_t lent = ia_lend_decide(&L->pol, &probe, j->head, window, open);

	/* A directory has room for IA_TDIR_SEGS lending jobs: a new one waits for room. */
	if (!lj->sw[v].lent && lent && lenders(L, v) >= IA_TDIR_SEGS)
		lent = 0;
	if (lent == lj->sw[v].lent) {
		lj->sw[v] = probe;
		return 0;
	}
	return apply(L, j->id, v, &lj->sw[v], lent);
}

int ia_lender_publish(struct ia_lender *L)
{
	uint32_t *ids, *lent;
	int first = 0;

	if (!L->ops->publish) {
		memset(L->dirty, 0, L->t->n * sizeof(*L->dirty));
		return 0;
	}
	ids = calloc(IA_MAX_JOBS, sizeof(*ids));
	lent = calloc(IA_MAX_JOBS, sizeof(*lent));
	if (!ids || !lent) {
		free(ids);
		free(lent);
		return -ENOMEM;
	}
	for (int v = 0; v < L->t->n; v++) {
		char why[IA_ERRLEN] = "";
		int n = 0, ret;

		if (!L->dirty[v])
			continue;
		for (int i = 0; i < IA_MAX_JOBS; i++)
			if (L->jobs[i].id && L->jobs[i].sw[v].lent) {
				ids[n] = L->jobs[i].id;
				lent[n++] = L->jobs[i].sw[v].lent;
			}
		ret = L->ops->publish(L->ctx, v, ids, lent, n, why, sizeof(why));
		if (ret) {
			note(L, IA_LOG_WARN, "tail directory of %s: %s", L->t->sw[v].name,
			     *why ? why : strerror(-ret));
			if (!first)
				first = ret;
			continue;	/* still dirty: tried again */
		}
		L->dirty[v] = false;
	}
	free(ids);
	free(lent);
	return first;
}

int ia_lender_reclaim_all(struct ia_lender *L, uint32_t id)
{
	struct ia_lend_job *lj = job_of(L, id, false);
	int first = 0, ret;

	for (int v = 0; lj && v < L->t->n; v++) {
		ret = apply(L, id, v, &lj->sw[v], 0);
		if (ret && !first)
			first = ret;
	}
	return first;
}

void ia_lender_forget(struct ia_lender *L, uint32_t id)
{
	struct ia_lend_job *lj = job_of(L, id, false);

	if (!lj)
		return;
	for (int v = 0; v < L->t->n; v++)
		if (lj->sw[v].lent)
			L->dirty[v] = true;
	free(lj->sw);
	free(lj->rep);
	memset(lj, 0, sizeof(*lj));
}

const struct ia_lend_state *ia_lender_state(const struct ia_lender *L, uint32_t id, int v)
{
	for (int i = 0; i < IA_MAX_JOBS; i++)
		if (L->jobs[i].id == id)
			return &L->jobs[i].sw[v];
	return NULL;
}

uint32_t ia_lender_lent(const struct ia_lender *L, int v)
{
	uint32_t n = 0;

	for (int i = 0; i < IA_MAX_JOBS; i++)
		if (L->jobs[i].id)
			n += L->jobs[i].sw[v].lent;
	return n;
}
