// SPDX-License-Identifier: GPL-2.0
/*
 * One scheme on one job mix, live (eval_live.h): the jobs submitted to
 * inaggd in order, all their PSs and workers started together, the run's
 * figures from the workers, the PSs and the daemon, the jobs ended.
 */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include "err.h"
#include "eval_live_int.h"
#include "host.h"

static long long num(json_object *o, const char *path)
{
	return json_object_get_int64(ia_live_get(o, path));
}

/* The leaves' memory: utilisation so far and samples taken, from the daemon. */
struct mem_snap {
	double util[IA_LIVE_MAX_LEAVES + 1], slots[IA_LIVE_MAX_LEAVES + 1];
	long long samples;
	long long lends, lent_slots;	/* the daemon's lends and slots lent so far, all switches */
	long long lent;			/* head slots lent now, all switches */
};

static int mem_snap(struct ia_live *L, struct mem_snap *m, char *err, size_t errlen)
{
	json_object *st = ia_live_request(L, err, errlen, "{\"cmd\": \"stats\"}");
	json_object *sw;

	if (!st)
		return -EIO;
	m->samples = num(st, "memory.samples");
	sw = ia_live_get(st, "memory.switches");
	for (uint32_t v = 0; v <= L->c.leaves && sw && v < json_object_array_length(sw); v++) {
		json_object *o = json_object_array_get_idx(sw, v);

		m->util[v] = json_object_get_double(ia_live_get(o, "utilisation"));
		m->slots[v] = num(o, "slots");
		m->lends += num(o, "tail.lends");
		m->lent_slots += num(o, "tail.lent_slots_total");
		m->lent += num(o, "lent_slots");
	}
	json_object_put(st);
	return 0;
}

/* Head slots lent at the leaves, mean over the last n samples of the daemon. */
static double lent_mean(struct ia_live *L, long long n)
{
	json_object *st, *h;
	double sum = 0;
	size_t len;

	if (n <= 0)
		return 0;
	st = ia_live_request(L, NULL, 0, "{\"cmd\": \"stats\", \"history\": %lld}",
			     n < 4096 ? n : 4096);
	h = st ? ia_live_get(st, "memory.history") : NULL;
	len = h ? json_object_array_length(h) : 0;
	for (size_t i = 0; i < len; i++) {
		for (uint32_t l = 0; l < L->c.leaves; l++) {
			char name[16];
			json_object *a;

			snprintf(name, sizeof(name), "l%u", l);
			a = ia_live_get(json_object_array_get_idx(h, i), name);
			/* [head, head_open, tail, lent, tail_live, tail_stale] */
			if (a && json_object_array_length(a) > 3)
				sum += json_object_get_int64(json_object_array_get_idx(a, 3));
		}
	}
	json_object_put(st);
	return len ? sum / len : 0;
}

/* Utilisation between two snapshots: the daemon's is cumulative over its samples. */
static double mem_util(const struct ia_live *L, const struct mem_snap *a, const struct mem_snap *b)
{
	double busy = 0, slots = 0;
	long long dn = b->samples - a->samples;

	if (dn <= 0)
		return 0;
	for (uint32_t v = 0; v <= L->c.leaves; v++) {
		double d = b->util[v] * b->samples - a->util[v] * a->samples;

		/*
		 * The daemon weighs each sample by its interval and this takes
		 * them as equal: an idle switch can come out slightly below 0
		 * (-0.001 seen), which is no use.
		 */
		busy += b->slots[v] * (d > 0 ? d : 0) / dn;
		slots += b->slots[v];
	}
	return slots > 0 ? busy / slots : 0;
}

/*
 * Job k of this run: an id no earlier run used (a stale tail partial of an
 * ended job can never meet a new one's chunk), distinct modulo the datapath's
 * job tables and the host steering.
 */
static int submit(struct ia_live *L, enum ia_sim_scheme s, uint32_t k,
		  const struct ia_live_mixjob *m, json_object **job, char *err, size_t errlen)
{
	uint32_t id = 1 + (L->runs - 1) * IA_LIVE_MAX_JOBS + k;

	char head[32] = "";

	/* Asked for a head: INA if it fits (selective INA), else PS. */
	if (!m->want_ps)
		snprintf(head, sizeof(head), " \"head\": %u,", L->c.window);
	/* The scheme: the job's window policy (its workers run it) and whether PS jobs get tails. */
	*job = ia_live_request(L, err, errlen,
			       "{\"cmd\": \"submit\", \"job\": %u, \"k\": 1, \"class\": \"%s\",%s"
			       " \"window\": %u, \"cc\": \"%s\", \"tail\": %d,"
			       " \"workers\": {\"l%u\": %u}}",
			       id, m->want_ps ? "ps" : "auto", head, L->c.window,
			       ia_cc_policy_name(ia_sim_scheme_policy(s)), ia_sim_scheme_tail(s), m->leaf, m->workers);
	return *job ? 0 : -EIO;
}

/* The expected sums: the PS's whole vector, each iteration's slice for the workers. */
static int expect(const struct ia_live *L, json_object *job, struct live_j *lj)
{
	const size_t n = (size_t)lj->chunks * IA_CHUNK_DEFAULT, tot = n * L->c.iters;
	json_object *ws = ia_live_get(job, "workers");
	int32_t *sum = calloc(tot, sizeof(*sum)), *v = malloc(tot * sizeof(*v));

	if (!sum || !v) {
		free(sum);
		free(v);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < lj->nworkers; i++) {
		json_object *w = json_object_array_get_idx(ws, i);

		ia_host_fill(v, tot, live_seed(lj->id, num(w, "id")));
		ia_host_add(sum, v, tot);
	}
	lj->ps_expect = ia_host_checksum(sum, tot);
	for (uint32_t it = 0; it < L->c.iters; it++)
		for (uint32_t i = 0; i < lj->nworkers; i++)
			lj->w[i].expect[it] = ia_host_checksum(sum + it * n, n);
	free(sum);
	free(v);
	return 0;
}

double ia_live_tput_all(const struct ia_live_done *d, size_t nd, double chunk_bytes, uint64_t t0,
			uint64_t t1)
{
	uint64_t n = 0;

	if (t1 <= t0)
		return 0;
	for (size_t i = 0; i < nd; i++)
		for (uint32_t c = 0; c < d[i].n; c++)
			n += d[i].t[c] > t0 && d[i].t[c] <= t1;
	return n * chunk_bytes / ((t1 - t0) / 1e9);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * How a worker takes its results in (eval_live.h, batch): the median gap
 * between its successive distinct result times while they stream (gaps
 * under 2 ms; equal times are one batch).
 */
static double result_batch(struct ia_live *L, struct live_shm *sh)
{
	size_t n = 0, cap = 0;
	uint64_t *gap, *t;
	double med = 0;

	for (uint32_t k = 0; k < L->c.jobs; k++)
		cap += (size_t)sh->j[k].nworkers * sh->j[k].chunks * L->c.iters;
	gap = malloc(cap * sizeof(*gap));
	t = malloc((size_t)L->c.cmax * L->c.iters * sizeof(*t));
	for (uint32_t k = 0; gap && t && k < L->c.jobs; k++) {
		struct live_j *lj = &sh->j[k];
		uint32_t nc = lj->chunks * L->c.iters;

		for (uint32_t i = 0; i < lj->nworkers; i++) {
			uint32_t m = 0;

			for (uint32_t c = 0; c < nc; c++)
				if (lj->w[i].t_done[c])
					t[m++] = lj->w[i].t_done[c];
			qsort(t, m, sizeof(*t), cmp_u64);
			for (uint32_t c = 1; c < m; c++)
				if (t[c] > t[c - 1] + 5000 && t[c] - t[c - 1] < 2000000)
					gap[n++] = t[c] - t[c - 1];
		}
	}
	if (n) {
		qsort(gap, n, sizeof(*gap), cmp_u64);
		med = gap[n / 2] / 1e9;
	}
	free(gap);
	free(t);
	return med;
}

/* The throughput while every job runs (eval_live.h), from the workers' result times. */
static void tput_all(struct ia_live *L, struct live_shm *sh, uint64_t t_go, struct ia_live_res *r)
{
	struct ia_live_done d[IA_LIVE_MAX_JOBS * IA_LIVE_MAX_W];
	double first = 0;
	size_t nd = 0;

	for (uint32_t k = 0; k < L->c.jobs; k++) {
		struct live_j *lj = &sh->j[k];
		uint64_t t1 = 0;

		/* The first window's wait: how long the start's queue held a job back. */
		for (uint32_t i = 0; i < lj->nworkers; i++)
			if (lj->w[i].t_done[0] > t_go && (!t1 || lj->w[i].t_done[0] < t1))
				t1 = lj->w[i].t_done[0];
		r->first += t1 ? (t1 - t_go) / 1e9 / L->c.jobs : 0;

		if (r->job[k].jct > 0 && (!first || r->job[k].jct < first))
			first = r->job[k].jct;
		for (uint32_t i = 0; i < lj->nworkers; i++)
			d[nd++] = (struct ia_live_done){ .t = lj->w[i].t_done,
							 .n = lj->chunks * L->c.iters };
	}
	r->t_all = first;
	r->batch = result_batch(L, sh);
	r->tput_all = ia_live_tput_all(d, nd, IA_CHUNK_DEFAULT * 4, t_go,
				       t_go + (uint64_t)(first * 1e9));
}

static void summarise(struct ia_live *L, struct live_shm *sh, json_object **job, uint64_t t_go,
		      struct ia_live_res *r)
{
	double sx = 0, sxx = 0;
	uint64_t results = 0, marks = 0, tries = 0, colls = 0, msgs = 0, chunks = 0;
	uint64_t byp = 0, ps_sends = 0, retx = 0, tmo = 0, waste = 0, nw = 0, flushes = 0;
	uint64_t discards = 0;
	uint64_t ps_chunks = 0;

	r->exact = true;
	for (uint32_t k = 0; k < L->c.jobs; k++) {
		struct live_j *lj = &sh->j[k];
		struct ia_live_job *o = &r->job[k];
		uint64_t t_last = 0;
		json_object *st;

		o->ps = lj->ps;
		o->exact = lj->ps_rc == 0 && lj->ps_sum == lj->ps_expect;
		if (lj->ps_rc)
			snprintf(o->err, sizeof(o->err), "PS: %s", lj->ps_err);
		else if (!o->exact)
			snprintf(o->err, sizeof(o->err), "PS: wrong sum");
		for (uint32_t i = 0; i < lj->nworkers; i++) {
			struct live_w *w = &lj->w[i];

			if (w->rc || !w->exact) {
				if (o->exact)
					snprintf(o->err, sizeof(o->err), "worker %u: %s", i,
						 w->err[0] ? w->err : "failed");
				o->exact = false;
			}
			if (w->t_end != ~0ull && w->t_end > t_last)
				t_last = w->t_end;
			o->results += w->results;
			o->marks += w->marks;
			o->retx += w->retx;
			o->timeouts += w->timeouts;
			r->srtt_ms += w->srtt_us / 1e3;
			nw++;
			o->sent += w->sent;
			o->bypassed += w->bypassed;
		}
		o->ps_msgs = lj->ps_msgs;
		o->ps_waste = lj->ps_waste;
		msgs += lj->ps_msgs;
		waste += lj->ps_waste;
		chunks += (uint64_t)lj->chunks * L->c.iters;
		if (lj->ps) {
			ps_chunks += (uint64_t)lj->chunks * L->c.iters;
			byp += o->bypassed;
			ps_sends += (uint64_t)lj->chunks * L->c.iters * lj->nworkers;
		}
		o->jct = t_last > t_go ? (t_last - t_go) / 1e9 : 0;
		o->bytes = (double)lj->nworkers * lj->chunks * L->c.iters * IA_CHUNK_DEFAULT * 4;
		st = ia_live_request(L, NULL, 0, "{\"cmd\": \"stats\", \"job\": %u}", lj->id);
		if (st && lj->ps) {
			o->tail_colls = num(st, "tail.tail_collisions");
			o->tail_tries = num(st, "tail.tail_claims") + num(st, "tail.tail_hits") +
					o->tail_colls;
			o->tail_flushes = num(st, "tail.tail_flushes");
			o->tail_discards = num(st, "tail.tail_discards");
		} else if (st) {
			o->reports = num(st, "window_reports");
			r->reports += o->reports;
		}
		json_object_put(st);
		r->exact &= o->exact;
		if (o->jct > r->makespan)
			r->makespan = o->jct;
		if (o->ps) {
			r->n_ps++;
			r->jct_ps += o->jct;
		} else {
			r->n_ina++;
			r->jct_ina += o->jct;
		}
		results += o->results;
		marks += o->marks;
		retx += o->retx;
		tmo += o->timeouts;
		tries += o->tail_tries;
		colls += o->tail_colls;
		flushes += o->tail_flushes;
		discards += o->tail_discards;
		if (o->jct > 0) {
			r->tput_sum += o->bytes / o->jct;
			sx += o->bytes / o->jct;
			sxx += (o->bytes / o->jct) * (o->bytes / o->jct);
		}
		r->tput += o->bytes;
	}
	r->tput = r->makespan > 0 ? r->tput / r->makespan : 0;
	r->jct_ina = r->n_ina ? r->jct_ina / r->n_ina : 0;
	r->jct_ps = r->n_ps ? r->jct_ps / r->n_ps : 0;
	r->mark_rate = results ? (double)marks / results : 0;
	r->retx_rate = results ? (double)retx / results : 0;
	r->srtt_ms = nw ? r->srtt_ms / nw : 0;
	r->tmo_rate = results ? (double)tmo / results : 0;
	r->coll_rate = tries ? (double)colls / tries : 0;
	r->jain = sxx > 0 ? sx * sx / (L->c.jobs * sxx) : 0;
	r->up = chunks ? (double)msgs / chunks : 0;
	r->waste = chunks ? (double)waste / chunks : 0;
	r->bypass = ps_sends ? (double)byp / ps_sends : 0;
	r->flushes = ps_chunks ? (double)flushes / ps_chunks : 0;
	r->discards = ps_chunks ? (double)discards / ps_chunks : 0;
	r->cross_sent = sh->cross_sent;
	tput_all(L, sh, t_go, r);
}

/* One byte from a process that is getting ready; '\0' when none comes in 60 s (it died). */
static char ready_byte(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	char c;

	if (poll(&p, 1, 60000) != 1 || read(fd, &c, 1) != 1)
		return '\0';
	return c;
}

/* Starts every endpoint, releases the workers at once, waits for them; the start time. */
static int run_endpoints(struct ia_live *L, enum ia_sim_scheme s, json_object **job,
			 const struct ia_live_mixjob *mix, struct live_shm *sh, struct mem_snap *m0,
			 uint64_t *t_go, double *cpu_other, char *err, size_t errlen)
{
	struct ia_live_cpu c0, c1;
	pid_t ps[IA_LIVE_MAX_JOBS] = { 0 }, wk[IA_LIVE_MAX_JOBS * IA_LIVE_MAX_W];
	int ready[2], go[2], nw = 0, ret = 0, ex = 0;
	pid_t cross = 0;

	if (pipe(ready) || pipe(go))
		return ia_fail(err, errlen, -errno, "pipe: %s", strerror(errno));
	for (uint32_t k = 0; k < L->c.jobs && !ret; k++) {
		ps[k] = ia_live_ps_fork(L, job[k], &sh->j[k], ready[1], go[1]);
		if (ps[k] < 0 || ready_byte(ready[0]) != 'r')
			ret = ia_fail(err, errlen, -EIO, "job %u: PS: %s", sh->j[k].id,
				      sh->j[k].ps_err);
	}
	for (uint32_t k = 0; k < L->c.jobs && !ret; k++) {
		for (uint32_t i = 0; i < sh->j[k].nworkers; i++) {
			wk[nw] = ia_live_worker_fork(L, job[k], i, &mix[k], &sh->j[k], ready[1],
						     go[0], go[1]);
			if (wk[nw] > 0)
				ex++;
			nw++;
		}
	}
	for (int i = 0; i < ex && !ret; i++)
		if (!ready_byte(ready[0]))
			ret = ia_fail(err, errlen, -EIO, "a worker did not get ready");
	/* The daemon's figures from here: what the run did, not the wait for its start. */
	if (!ret)
		ret = mem_snap(L, m0, err, errlen);
	ia_live_cpu_snap(L, &c0);
	*t_go = ia_live_now_ns();
	close(go[1]);
	close(go[0]);
	/*
	 * Only now: forked before, the cross traffic's process would hold the
	 * go pipe's writing end, and the workers would wait for its EOF until
	 * it is stopped, after them (every run with cross traffic hung so).
	 */
	if (!ret && L->c.cross > 0)
		cross = ia_live_cross_start(L, &sh->cross_sent);
	/* The INA jobs' workers report their windows to inaggd themselves (host_report.h). */
	for (int i = 0; i < nw; i++)
		if (wk[i] > 0)
			waitpid(wk[i], NULL, 0);
	ia_live_cross_stop(cross);
	/* The CPU others took meanwhile (the cross traffic was ours: waited for by its stop). */
	ia_live_cpu_snap(L, &c1);
	*cpu_other = ia_live_cpu_other(&c0, &c1);
	for (uint32_t k = 0; k < L->c.jobs; k++) {
		sh->j[k].ps_stop = 1;
		if (ps[k] > 0)
			waitpid(ps[k], NULL, 0);
	}
	close(ready[0]);
	close(ready[1]);
	return ret;
}

int ia_live_run(struct ia_live *L, enum ia_sim_scheme s, struct ia_live_res *r, char *err,
		size_t errlen)
{
	struct ia_live_mixjob mix[IA_LIVE_MAX_JOBS];
	json_object *job[IA_LIVE_MAX_JOBS] = { 0 };
	struct mem_snap m0 = { 0 }, m1 = { 0 };
	size_t per_w = (size_t)L->c.cmax * L->c.iters, tdlen;
	struct live_shm *sh;
	double cpu_other = 0;
	uint64_t t_go = 0, *td;
	int ret = 0;

	memset(r, 0, sizeof(*r));
	ia_live_mix(&L->c, mix);
	L->runs++;
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		return ia_fail(err, errlen, -ENOMEM, "out of memory");
	memset(sh, 0, sizeof(*sh));
	/* Every worker's result times (live_w.t_done), shared with the workers. */
	tdlen = L->c.jobs * IA_LIVE_MAX_W * per_w * sizeof(*td);
	td = mmap(NULL, tdlen, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (td == MAP_FAILED) {
		munmap(sh, sizeof(*sh));
		return ia_fail(err, errlen, -ENOMEM, "out of memory");
	}
	for (uint32_t k = 0; k < L->c.jobs && !ret; k++) {
		struct live_j *lj = &sh->j[k];
		json_object *j;

		ret = submit(L, s, k, &mix[k], &job[k], err, errlen);
		if (ret)
			break;
		j = ia_live_get(job[k], "job");
		lj->id = num(j, "job");
		lj->nworkers = json_object_array_length(ia_live_get(j, "workers"));
		lj->chunks = mix[k].chunks;
		lj->ps = !strcmp(json_object_get_string(ia_live_get(j, "class")), "ps");
		for (uint32_t i = 0; i < lj->nworkers; i++) {
			lj->w[i].t_end = ~0ull;
			lj->w[i].t_done = td + (k * IA_LIVE_MAX_W + i) * per_w;
		}
		ret = expect(L, j, lj);
	}
	if (!ret) {
		json_object *jj[IA_LIVE_MAX_JOBS];

		for (uint32_t k = 0; k < L->c.jobs; k++)
			jj[k] = ia_live_get(job[k], "job");
		ret = run_endpoints(L, s, jj, mix, sh, &m0, &t_go, &cpu_other, err, errlen);
	}
	if (!ret && !mem_snap(L, &m1, err, errlen)) {
		summarise(L, sh, job, t_go, r);
		r->util = mem_util(L, &m0, &m1);
		r->lends = m1.lends - m0.lends;
		r->lent_slots = m1.lent_slots - m0.lent_slots;
		r->lent_mean = r->n_ina ? lent_mean(L, m1.samples - m0.samples) / r->n_ina : 0;
		r->lent_start = r->n_ina ? (double)m0.lent / r->n_ina : 0;
		r->cpu_other = cpu_other;
	}
	for (uint32_t k = 0; k < L->c.jobs; k++) {
		if (job[k])
			json_object_put(ia_live_request(L, NULL, 0, "{\"cmd\": \"end\", \"job\": %u}",
							sh->j[k].id));
		json_object_put(job[k]);
	}
	munmap(td, tdlen);
	munmap(sh, sizeof(*sh));
	return ret;
}
