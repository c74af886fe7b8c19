// SPDX-License-Identifier: GPL-2.0
/*
 * The live experiment's endpoints (eval_live.h): a job's PS and its workers,
 * each a process in its host's namespace, sharing the host's port with the
 * other jobs' endpoints there (host_share.h).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/prctl.h>

#include "cc_job.h"
#include "eval_live_int.h"
#include "host.h"
#include "netns.h"

json_object *ia_live_get(json_object *o, const char *path)
{
	char buf[128], *save, *key;

	snprintf(buf, sizeof(buf), "%s", path);
	for (key = strtok_r(buf, ".", &save); key && o; key = strtok_r(NULL, ".", &save))
		if (!json_object_object_get_ex(o, key, &o))
			return NULL;
	return o;
}

uint64_t ia_live_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static const char *str(json_object *o, const char *path)
{
	const char *s = json_object_get_string(ia_live_get(o, path));

	return s ? s : "";
}

/* The PS's process: serves until ps_stop. */
static void ps_main(struct ia_live *L, json_object *job, struct live_j *lj, int ready_fd)
{
	const size_t n = (size_t)L->c.iters * lj->chunks * IA_CHUNK_DEFAULT;
	struct ia_ps_cfg cfg = {
		.job = lj->id, .id = IA_SENDER_DEST, .nworkers = lj->nworkers, .nelem = n,
		.linger_ms = -1, .stop = &lj->ps_stop,
	};
	/* A PS job's PS merges by member set, as inaggd lists them (docs/memory.md). */
	json_object *pm = ia_live_get(job, "destination.members");
	size_t npm = pm ? json_object_array_length(pm) : 0;
	struct ia_sender *mem = calloc(npm ? npm : 1, sizeof(*mem));
	uint64_t *sets = calloc(npm ? npm : 1, sizeof(*sets));
	struct ia_ps *ps;
	int ret;

	if (!mem || !sets)
		goto fail;
	for (size_t i = 0; i < npm; i++) {
		json_object *m = json_object_array_get_idx(pm, i);

		mem[i].id = json_object_get_int64(ia_live_get(m, "id"));
		mem[i].nworkers = json_object_get_int64(ia_live_get(m, "nworkers"));
		sets[i] = json_object_get_uint64(ia_live_get(m, "set"));
	}
	if (npm) {
		cfg.nmembers = npm;
		cfg.members = mem;
		cfg.sets = sets;
	}
	inet_pton(AF_INET, str(job, "destination.address"), &cfg.addr);
	inet_pton(AF_INET, str(job, "destination.down"), &cfg.down);
	if (ia_netns_enter(str(job, "destination.netns")) < 0) {
		snprintf(lj->ps_err, sizeof(lj->ps_err), "netns %s", str(job, "destination.netns"));
		goto fail;
	}
	if (ia_ps_open(&cfg, &ps, lj->ps_err, sizeof(lj->ps_err)))
		goto fail;
	ret = ia_host_steer_join(&L->dest, lj->id);
	if (ret) {
		snprintf(lj->ps_err, sizeof(lj->ps_err), "steer: %s", strerror(-ret));
		goto fail;
	}
	if (write(ready_fd, "r", 1) != 1)
		_exit(1);
	lj->ps_rc = ia_ps_run(ps, lj->ps_err, sizeof(lj->ps_err));
	lj->ps_sum = ia_host_checksum(ia_ps_result(ps), n);
	{
		struct ia_ps_stats pst;

		ia_ps_stats(ps, &pst);
		lj->ps_msgs = pst.contrib + pst.agg;
		lj->ps_waste = pst.dup + pst.late + pst.overlap;
	}
	ia_ps_close(ps);
	_exit(0);
fail:
	lj->ps_rc = -1;
	if (write(ready_fd, "e", 1) != 1)
		_exit(1);
	_exit(1);
}

pid_t ia_live_ps_fork(struct ia_live *L, json_object *job, struct live_j *lj, int ready_fd,
		      int close_fd)
{
	pid_t pid = fork();

	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(close_fd);
		ps_main(L, job, lj, ready_fd);
	}
	return pid < 0 ? -errno : pid;
}

static void sleep_ms(double ms)
{
	struct timespec ts = { .tv_sec = (time_t)(ms / 1000),
			       .tv_nsec = (long)((ms - 1000 * (time_t)(ms / 1000)) * 1e6) };

	if (ms > 0)
		nanosleep(&ts, NULL);
}

/* Worker i's process: iters allreduces, each after its compute gap. */
static void worker_main(struct ia_live *L, json_object *job, int i, const struct ia_live_mixjob *m,
			struct live_j *lj, int ready_fd, int go_fd)
{
	json_object *w = json_object_array_get_idx(ia_live_get(job, "workers"), i);
	const size_t n = (size_t)lj->chunks * IA_CHUNK_DEFAULT;
	struct live_w *lw = &lj->w[i];
	struct ia_worker_cfg cfg = {
		.job = lj->id, .id = json_object_get_int64(ia_live_get(w, "id")),
		.nworkers = lj->nworkers,
		.window = json_object_get_int64(ia_live_get(job, "worker_window")),
		.timeout_ms = L->c.timeout_ms,
		/* An INA job's workers report their windows; its head lends by the largest. */
		.report_sock = lj->ps ? NULL : L->sock,
	};
	int32_t *vec = malloc(L->c.iters * n * sizeof(*vec)), *out = malloc(n * sizeof(*out));
	struct ia_worker_path path = { 0 };
	char c;

	lw->rc = -1;
	/* The job's window policy and class, as inaggd recorded them at submit. */
	if (ia_job_cc_of(job, &cfg.cc, &cfg.ps_job)) {
		snprintf(lw->err, sizeof(lw->err), "job record: bad cc");
		if (write(ready_fd, "e", 1) != 1)
			_exit(2);
		_exit(1);
	}
	inet_pton(AF_INET, str(w, "address"), &cfg.addr);
	inet_pton(AF_INET, str(job, "destination.address"), &cfg.ps);
	if (!vec || !out || ia_netns_enter(str(w, "netns")) < 0) {
		snprintf(lw->err, sizeof(lw->err), "setup (netns %s)", str(w, "netns"));
		if (write(ready_fd, "e", 1) != 1)
			_exit(2);
		_exit(1);
	}
	ia_host_fill(vec, L->c.iters * n, live_seed(lj->id, cfg.id));
	if (write(ready_fd, "r", 1) != 1 || read(go_fd, &c, 1) != 0)
		_exit(1);
	lw->exact = 1;
	/* The job's iterations go on from the window and round trips the last one left. */
	cfg.path = &path;
	for (uint32_t it = 0; it < L->c.iters; it++) {
		struct ia_worker_stats st;
		struct ia_worker *wk;
		int ret;

		sleep_ms(m->gap_ms[i]);
		/* Chunk numbers go on from one iteration to the next: a slot's chunk never comes back. */
		cfg.base_seq = it * lj->chunks;
		/* When each result came, for the throughput while every job runs. */
		cfg.t_done = lw->t_done + it * lj->chunks;
		if (ia_worker_open(&cfg, &wk, lw->err, sizeof(lw->err)))
			_exit(1);
		ret = ia_host_steer_join(&L->host[m->leaf][i], lj->id);
		if (ret) {
			snprintf(lw->err, sizeof(lw->err), "steer: %s", strerror(-ret));
			_exit(1);
		}
		ret = ia_worker_run(wk, vec + it * n, out, n, lw->err, sizeof(lw->err));
		ia_worker_stats(wk, &st);
		ia_worker_close(wk);
		lw->results += st.results;
		lw->marks += st.marks;
		lw->retx += st.retx;
		lw->timeouts += st.timeouts;
		lw->srtt_us = st.srtt_us;
		lw->sent += st.sent;
		lw->bypassed += st.bypassed;
		if (ret)
			_exit(1);
		if (ia_host_checksum(out, n) != lw->expect[it]) {
			lw->exact = 0;
			snprintf(lw->err, sizeof(lw->err), "iteration %u: wrong sum", it);
		}
	}
	lw->t_end = ia_live_now_ns();
	lw->rc = 0;
	_exit(0);
}

pid_t ia_live_worker_fork(struct ia_live *L, json_object *job, int i,
			  const struct ia_live_mixjob *m, struct live_j *lj, int ready_fd, int go_fd,
			  int close_fd)
{
	pid_t pid = fork();

	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(close_fd);
		worker_main(L, job, i, m, lj, ready_fd, go_fd);
	}
	return pid < 0 ? -errno : pid;
}
