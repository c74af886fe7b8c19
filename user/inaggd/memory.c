// SPDX-License-Identifier: GPL-2.0
/*
 * inaggd's memory statistics (issue 16 point 5, docs/memory.md): every
 * sample_ms, how many head slots hold a live aggregation, read from the BPF
 * maps, beside the switch's heads and tail as the daemon keeps its ledger
 * (never read here: a ledger lock another process holds must not stall the
 * daemon).
 * Utilisation is slot-time holding live aggregation over slot-time
 * available, each sample weighted by the time since the previous one: per
 * switch over its slots, per job and switch over its head. The last
 * MEM_HISTORY samples are kept for `stats` with "history". Reading a head
 * costs a lookup per slot: when a sample takes long, the next comes later,
 * so that requests are always served.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "inaggd.h"
#include "ledger.h"
#include "xdp_mem.h"

#define MEM_HISTORY 4096
#define MEM_FIELDS 6	/* per switch and sample: head, head_open, tail, lent, tail_live, tail_stale */
#define TAIL_PROBES 128		/* tail slots read per sample: its occupancy is estimated */

struct mem_job {
	__u32 id;		/* 0: unused */
	__u64 *busy, *avail;	/* per switch, slot-ms */
	__u32 *open, *head;	/* per switch, at the last sample */
};

struct memstat {
	long long start_ms, next_ms, last_ms, interval_ms;
	__u64 nsamples;
	__u64 *busy, *avail;	/* per switch, slot-ms */
	struct ia_ledger_cap *cap;	/* per switch, last sample */
	__u32 *open;		/* per switch: head slots live, last sample */
	__u32 *tail_live;	/* per switch: tail slots holding a partial, last sample (estimate) */
	__u32 *tail_stale;	/* of which older than the flush age: waiting for a claim to flush */
	struct mem_job jobs[IA_MAX_JOBS];
	/* History: ring of samples, each t_ms and per switch MEM_FIELDS figures. */
	long long *hist_t;
	__u32 (*hist)[MEM_FIELDS];
	__u64 hist_n;
};

int mem_init(struct daemon *d)
{
	int n = d->t->n;
	struct memstat *m = calloc(1, sizeof(*m));

	if (!m)
		return -ENOMEM;
	d->mem = m;
	m->busy = calloc(n, sizeof(*m->busy));
	m->avail = calloc(n, sizeof(*m->avail));
	m->cap = calloc(n, sizeof(*m->cap));
	m->open = calloc(n, sizeof(*m->open));
	m->tail_live = calloc(n, sizeof(*m->tail_live));
	m->tail_stale = calloc(n, sizeof(*m->tail_stale));
	m->hist_t = calloc(MEM_HISTORY, sizeof(*m->hist_t));
	m->hist = calloc((size_t)MEM_HISTORY * n, sizeof(*m->hist));
	if (!m->busy || !m->avail || !m->cap || !m->open || !m->tail_live || !m->tail_stale ||
	    !m->hist_t || !m->hist)
		return -ENOMEM;
	m->start_ms = ia_now_ms();
	m->next_ms = m->start_ms;
	return 0;
}

static void job_forget(struct mem_job *mj)
{
	free(mj->busy);
	free(mj->avail);
	free(mj->open);
	free(mj->head);
	memset(mj, 0, sizeof(*mj));
}

void mem_free(struct daemon *d)
{
	struct memstat *m = d->mem;

	if (!m)
		return;
	for (int i = 0; i < IA_MAX_JOBS; i++)
		job_forget(&m->jobs[i]);
	free(m->busy);
	free(m->avail);
	free(m->cap);
	free(m->open);
	free(m->tail_live);
	free(m->tail_stale);
	free(m->hist_t);
	free(m->hist);
	free(m);
	d->mem = NULL;
}

/* The statistics of job id, made if new (NULL if there is no room or memory). */
static struct mem_job *job_of(struct daemon *d, __u32 id, bool make)
{
	struct memstat *m = d->mem;
	struct mem_job *free_one = NULL;
	int n = d->t->n;

	for (int i = 0; i < IA_MAX_JOBS; i++) {
		if (m->jobs[i].id == id)
			return &m->jobs[i];
		if (!m->jobs[i].id && !free_one)
			free_one = &m->jobs[i];
	}
	if (!make || !free_one)
		return NULL;
	free_one->busy = calloc(n, sizeof(__u64));
	free_one->avail = calloc(n, sizeof(__u64));
	free_one->open = calloc(n, sizeof(__u32));
	free_one->head = calloc(n, sizeof(__u32));
	if (!free_one->busy || !free_one->avail || !free_one->open || !free_one->head) {
		job_forget(free_one);
		return NULL;
	}
	free_one->id = id;
	return free_one;
}

/* Switch v's ledger as the daemon keeps it: its heads, the tail every other slot. */
void mem_ledger_figures(const struct daemon *d, int v, struct ia_ledger_cap *c)
{
	const struct ia_switch *s = &d->t->sw[v];

	*c = (struct ia_ledger_cap){ .max_jobs = s->capacity, .max_slots = s->slots };
	for (int i = 0; i < d->jobs.njobs; i++) {
		const struct ia_job *j = &d->jobs.jobs[i];

		if (!j->held[v])
			continue;
		c->used_jobs++;
		c->head_slots += j->class == IA_JOB_INA ? j->head : 0;
	}
	c->tail_slots = c->max_slots - c->head_slots;
	c->used_slots = c->max_slots;
	c->lent_slots = ia_lender_lent(&d->lend, v);
}

/*
 * Switch v's memory from its agent (docs/remote.md), one request a sample:
 * the heads of its active INA jobs (ids[0..n)) into use, and its tail
 * slots holding a PS partial aggregate (*live), of those the ones older
 * than the flush age (*stale: their chunk will not complete here; the next
 * claim of the slot flushes them), from TAIL_PROBES slots spread evenly over
 * the published pool and scaled to its size (reading all of a large pool
 * every sample would cost more than the daemon may spend).
 */
static int memory_of(struct daemon *d, int v, const __u32 *ids, int n,
		     struct ia_xdp_head_use *use, __u32 *live, __u32 *stale)
{
	struct ia_remote_tail tl;
	int ret = ia_remote_memory(d->remote, v, ids, n, TAIL_PROBES, use, &tl);

	*live = tl.live;
	*stale = tl.stale;
	return ret;
}

/* dt: the time this sample stands for (ms), its weight in the utilisation. */
static void sample(struct daemon *d, long long now, long long dt)
{
	struct memstat *m = d->mem;
	const struct ia_topo *t = d->t;
	__u64 slot = m->hist_n % MEM_HISTORY;

	/* Jobs that ended are forgotten. */
	for (int i = 0; i < IA_MAX_JOBS; i++)
		if (m->jobs[i].id && !ia_jobs_find(&d->jobs, m->jobs[i].id))
			job_forget(&m->jobs[i]);
	memset(m->open, 0, t->n * sizeof(*m->open));
	for (int v = 0; v < t->n; v++) {
		struct ia_xdp_head_use use[IA_MAX_JOBS];
		struct ia_job *js[IA_MAX_JOBS];
		__u32 ids[IA_MAX_JOBS];
		int n = 0;

		for (int i = 0; i < d->jobs.njobs && n < IA_MAX_JOBS; i++) {
			struct ia_job *j = &d->jobs.jobs[i];

			if (j->class != IA_JOB_INA || j->state != IA_JOB_ACTIVE || !j->blue[v])
				continue;
			js[n] = j;
			ids[n++] = j->id;
		}
		if (memory_of(d, v, ids, n, use, &m->tail_live[v], &m->tail_stale[v]))
			continue;	/* unreachable: no occupancy this sample */
		for (int i = 0; i < n; i++) {
			struct mem_job *mj = job_of(d, ids[i], true);

			if (!mj || !use[i].slots)
				continue;
			mj->open[v] = use[i].open;
			mj->head[v] = use[i].slots;
			ia_lender_sample(&d->lend, js[i], v, use[i].open);
			mj->busy[v] += (__u64)use[i].open * dt;
			mj->avail[v] += (__u64)use[i].slots * dt;
			m->open[v] += use[i].open;
		}
	}
	ia_lender_publish(&d->lend);
	for (int v = 0; v < t->n; v++) {
		__u32 *h = m->hist[slot * t->n + v];

		mem_ledger_figures(d, v, &m->cap[v]);
		/* Live aggregation in heads and in the tail alike; a stale partial is not. */
		m->busy[v] += (__u64)(m->open[v] + m->tail_live[v] - m->tail_stale[v]) * dt;
		m->avail[v] += (__u64)m->cap[v].max_slots * dt;
		h[0] = m->cap[v].head_slots;
		h[1] = m->open[v];
		h[2] = m->cap[v].tail_slots;
		h[3] = m->cap[v].lent_slots;
		h[4] = m->tail_live[v];
		h[5] = m->tail_stale[v];
	}
	m->hist_t[slot] = now - m->start_ms;
	m->hist_n++;
	m->nsamples++;
	m->last_ms = now;
}

long long mem_tick(struct daemon *d)
{
	struct memstat *m = d->mem;
	long long now = ia_now_ms();

	if (!m || d->sample_ms <= 0)
		return -1;
	if (now >= m->next_ms) {
		long long took = 0;

		/* Only while jobs run: an idle daemon does not wake up for nothing. */
		if (d->jobs.njobs) {
			/* Since the last sample, unless sampling paused (no jobs) in between. */
			long long dt = m->last_ms && now - m->last_ms <= 2 * m->interval_ms ?
					       now - m->last_ms : d->sample_ms;

			sample(d, now, dt);
			took = ia_now_ms() - now;
		}
		/* Sampling never takes more than a fifth of the daemon's time. */
		m->interval_ms = 4 * took > d->sample_ms ? 4 * took : d->sample_ms;
		m->next_ms = now + m->interval_ms;
	}
	return m->next_ms - now;
}

static json_object *ratio(__u64 a, __u64 b)
{
	return json_object_new_double(b ? (double)a / b : 0);
}

/* Tail counters by their names (ia_ctr_name()), from c, into o. */
void mem_tail_counters(const struct ia_counters *c, json_object *o)
{
	for (int i = IA_C_TAIL_CLAIM; i <= IA_C_TAIL_RETX; i++)
		json_object_object_add(o, ia_ctr_name(i), json_object_new_int64(c->c[i]));
}

/*
 * Switch v's tail as published and counted by the datapath (its jobs now),
 * and the lends and reclaims the daemon made there.
 */
static json_object *tail_json(struct daemon *d, int v)
{
	json_object *o = json_object_new_object();
	struct ia_remote_tail tl;
	struct ia_xdp_tail_info ti;

	/* As it is now, from its agent (zeros if it does not answer, or has a call waiting). */
	if (ia_remote_memory(d->remote, v, NULL, 0, 0, NULL, &tl) == -EBUSY)
		json_object_object_add(o, "busy", json_object_new_boolean(1));
	ti = tl.info;
	json_object_object_add(o, "published_slots", json_object_new_int64(ti.slots));
	json_object_object_add(o, "published_lent", json_object_new_int64(ti.lent));
	json_object_object_add(o, "generation", json_object_new_int64(ti.gen));
	mem_tail_counters(&ti.c, o);
	json_object_object_add(o, "lends", json_object_new_int64(d->lend.lends[v]));
	json_object_object_add(o, "reclaims", json_object_new_int64(d->lend.reclaims[v]));
	json_object_object_add(o, "lent_slots_total", json_object_new_int64(ti.lends));
	json_object_object_add(o, "reclaimed_slots_total", json_object_new_int64(ti.reclaims));
	return o;
}

static json_object *mem_switch_json(struct daemon *d, int v)
{
	struct memstat *m = d->mem;
	json_object *o = json_object_new_object();
	struct ia_ledger_cap now, *c = &now;

	/* The figures as they are now; occupancy as last sampled. */
	mem_ledger_figures(d, v, &now);

	json_object_object_add(o, "switch", json_object_new_string(d->t->sw[v].name));
	json_object_object_add(o, "slots", json_object_new_int64(c->max_slots));
	json_object_object_add(o, "jobs", json_object_new_int64(c->used_jobs));
	json_object_object_add(o, "head_slots", json_object_new_int64(c->head_slots));
	json_object_object_add(o, "head_open", json_object_new_int64(m->open[v]));
	json_object_object_add(o, "tail_slots", json_object_new_int64(c->tail_slots));
	json_object_object_add(o, "lent_slots", json_object_new_int64(c->lent_slots));
	json_object_object_add(o, "tail_live", json_object_new_int64(m->tail_live[v]));
	json_object_object_add(o, "tail_stale", json_object_new_int64(m->tail_stale[v]));
	json_object_object_add(o, "utilisation", ratio(m->busy[v], m->avail[v]));
	json_object_object_add(o, "tail", tail_json(d, v));
	return o;
}

void mem_job_link(struct daemon *d, __u32 id, int v, json_object *l)
{
	struct mem_job *mj = job_of(d, id, false);

	json_object_object_add(l, "head", json_object_new_int64(mj ? mj->head[v] : 0));
	json_object_object_add(l, "head_open", json_object_new_int64(mj ? mj->open[v] : 0));
	json_object_object_add(l, "utilisation", ratio(mj ? mj->busy[v] : 0,
							 mj ? mj->avail[v] : 0));
}

json_object *mem_json(struct daemon *d, long long history)
{
	struct memstat *m = d->mem;
	json_object *o = json_object_new_object(), *sw = json_object_new_array();
	const struct ia_topo *t = d->t;

	json_object_object_add(o, "sample_ms", json_object_new_int64(d->sample_ms));
	json_object_object_add(o, "samples", json_object_new_int64(m->nsamples));
	for (int v = 0; v < t->n; v++)
		json_object_array_add(sw, mem_switch_json(d, v));
	json_object_object_add(o, "switches", sw);
	if (history <= 0)
		return o;
	/*
	 * Oldest first: {"t_ms": T, "<switch>": [head, head_open, tail, lent,
	 * tail_live, tail_stale], ...}.
	 */
	json_object *h = json_object_new_array();
	__u64 n = m->hist_n < MEM_HISTORY ? m->hist_n : MEM_HISTORY;

	if ((__u64)history < n)
		n = history;
	for (__u64 k = m->hist_n - n; k < m->hist_n; k++) {
		json_object *s = json_object_new_object();
		__u64 slot = k % MEM_HISTORY;

		json_object_object_add(s, "t_ms", json_object_new_int64(m->hist_t[slot]));
		for (int v = 0; v < t->n; v++) {
			json_object *a = json_object_new_array();

			for (int f = 0; f < MEM_FIELDS; f++)
				json_object_array_add(a, json_object_new_int64(
								 m->hist[slot * t->n + v][f]));
			json_object_object_add(s, t->sw[v].name, a);
		}
		json_object_array_add(h, s);
	}
	json_object_object_add(o, "history", h);
	return o;
}
