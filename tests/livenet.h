/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A live inagg network for tests and benchmarks: "inagg net up --attach"
 * builds a topology in namespaces ia-<tag>-*, inaggd places and configures
 * jobs, and allreduce() runs a job's destination and workers as processes in
 * their namespaces. Needs the global `build` (the build directory).
 */
#ifndef INAGG_TESTS_LIVENET_H
#define INAGG_TESTS_LIVENET_H

#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>

#include <json-c/json.h>

#include "daemon.h"
#include "json_get.h"
#include "nstest.h"
#include "cc_job.h"
#include "ctl.h"
#include "host.h"
#include "plan.h"

#define LIVE_MAXW 64

static char build[PATH_MAX];
/* The destination of allreduce() NACKs pieces found lost (ia_ps_cfg.nack). */
static bool live_ps_nack;
/*
 * Optional shared memory (MAP_SHARED) of (1 + 2 * LIVE_MAXW) * chunks times
 * allreduce() has its hosts fill: the destination's completions, then per
 * worker i its first sends (at 1 + 2i) and results (2 + 2i), chunks each.
 */
static uint64_t *live_trace;

/* One network with its daemon. */
struct env {
	char tag[16];
	char dir[64];
	char topo[128];
	char sock[128];
	char state[128];
	pid_t daemon;
	bool kernel_fwd;
	const char *up_args;	/* more options of "inagg net up" (NULL: none) */
};

/*
 * Forks build's inaggd on network tag of topology topo, listening on sock,
 * its state in state, its log appended to dir/inaggd.log: its pid, or -1.
 * It does not wait for the daemon to answer.
 */
static inline pid_t live_fork_daemon(const char *topo, const char *tag, const char *sock,
				     const char *state, const char *dir, bool kernel_fwd)
{
	char log[PATH_MAX];
	struct test_daemon d = { .build = build, .topo = topo, .tag = tag, .sock = sock,
				 .state = state, .log = log, .kernel_fwd = kernel_fwd };

	snprintf(log, sizeof(log), "%s/inaggd.log", dir);
	return daemon_fork(&d);
}

/*
 * Build directory of a program at build/tests/<layer>/<name> from its own
 * path, into build: 0, or -1.
 */
static inline int live_find_build(void)
{
	char exe[PATH_MAX];
	ssize_t len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (len <= 0)
		return -1;
	exe[len] = '\0';
	snprintf(build, sizeof(build), "%s", dirname(dirname(dirname(exe))));
	return 0;
}

static inline pid_t start_daemon(struct env *self)
{
	pid_t pid = live_fork_daemon(self->topo, self->tag, self->sock, self->state, self->dir,
				     self->kernel_fwd);

	/*
	 * Ready when the socket answers: up to 30 s (a start verifies no BPF
	 * program; a PS job's first submission loads the tail's programs).
	 */
	return daemon_wait(pid, self->sock, 30000);
}

static inline void stop_daemon(struct env *self, int sig)
{
	if (self->daemon > 0) {
		kill(self->daemon, sig);
		waitpid(self->daemon, NULL, 0);
		self->daemon = 0;
	}
}

/* Builds the network of topology json in namespaces and starts its daemon. */
static inline int env_up(struct env *self, const char *json, double rate_mbit, bool kernel_fwd)
{
	char rate[64] = "";
	FILE *f;

	snprintf(self->tag, sizeof(self->tag), "l%d", getpid() % 10000000);
	snprintf(self->dir, sizeof(self->dir), "/tmp/inagg-live-%d", getpid());
	mkdir(self->dir, 0700);
	snprintf(self->topo, sizeof(self->topo), "%s/topo.json", self->dir);
	snprintf(self->sock, sizeof(self->sock), "%s/inaggd.sock", self->dir);
	snprintf(self->state, sizeof(self->state), "%s/state.json", self->dir);
	self->kernel_fwd = kernel_fwd;
	/* The user-space ledger of this network only. */
	setenv("INAGG_LEDGER", "user", 1);
	setenv("INAGG_LEDGER_DIR", self->dir, 1);
	f = fopen(self->topo, "w");
	if (!f)
		return -1;
	fputs(json, f);
	fclose(f);
	if (rate_mbit > 0)
		snprintf(rate, sizeof(rate), "--rate-mbit %g", rate_mbit);
	if (sh("%s/inagg net up -t %s -n %s %s --attach %s >/dev/null", build, self->topo,
	       self->tag, rate, self->up_args ? self->up_args : ""))
		return -1;
	self->daemon = start_daemon(self);
	return self->daemon > 0 ? 0 : -1;
}

static inline void env_down(struct env *self)
{
	stop_daemon(self, SIGTERM);
	sh("%s/inagg net down -n %s -t %s >/dev/null", build, self->tag, self->topo);
	sh("rm -rf %s", self->dir);
}

/* A daemon request; the answer if it says ok, else NULL (and the reason logged). */
static inline json_object *request(struct env *self, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static inline json_object *request(struct env *self, const char *fmt, ...)
{
	json_object *req, *resp = NULL, *ok;
	char text[512], err[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	req = json_tokener_parse(text);
	if (ia_ctl_call(self->sock, req, &resp, err, sizeof(err)))
		fprintf(stderr, "# %s\n", err);
	json_object_put(req);
	if (resp && (!json_object_object_get_ex(resp, "ok", &ok) || !json_object_get_boolean(ok))) {
		fprintf(stderr, "# %s -> %s\n", text, json_object_to_json_string(resp));
		json_object_put(resp);
		resp = NULL;
	}
	return resp;
}

/* What each process of a run reports back (shared memory). */
struct outcome {
	int rc;
	uint64_t checksum;
	uint64_t t_end;		/* CLOCK_MONOTONIC ns when done */
	char err[128];
};

struct run {
	uint32_t job;
	int nworkers;
	uint64_t expected;
	double elapsed;		/* the destination's: first message to last chunk done */
	double seconds;		/* all workers started at once -> the last one done */
	int running_at_kill;	/* workers not done when the daemon was killed */
	volatile sig_atomic_t ps_stop;
	struct ia_worker_stats wst[LIVE_MAXW];
	struct ia_ps_stats pst;		/* the destination's */
	struct outcome ps, w[LIVE_MAXW];
};

static inline struct run *new_run(void)
{
	struct run *r = mmap(NULL, sizeof(*r), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
			     -1, 0);

	if (r == MAP_FAILED)
		return NULL;
	memset(r, 0xff, sizeof(*r));	/* a process that never reported fails */
	r->ps_stop = 0;
	return r;
}

static inline uint64_t live_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/* During a run, after every worker started (e.g. kill the daemon). */
typedef void (*during_fn)(struct env *self, struct run *r);

/*
 * An allreduce of chunks chunks of random vectors by every worker of job (the
 * daemon's answer), every host's sends impaired by faults (NULL: none), the
 * workers' timeout_ms and retries from wtmpl (NULL: the library's defaults).
 * The workers start together once all are ready; r->seconds is from then to
 * the last one done. The destination stops once every worker is done.
 */
static inline int allreduce(struct env *self, json_object *job, int chunks, struct run *r,
			    const struct ia_host_faults *faults,
			    const struct ia_worker_cfg *wtmpl, during_fn during)
{
	json_object *workers = get(job, "workers");
	const size_t n = (size_t)chunks * IA_CHUNK_DEFAULT;
	struct ia_host_faults nofaults = { 0 };
	pid_t pids[LIVE_MAXW + 1];
	int ready[2], go[2], nproc = 0;
	int32_t *sum, *v;
	uint64_t t_go, t_last = 0;
	char c;

	if (!faults)
		faults = &nofaults;
	r->job = json_object_get_int64(get(job, "job"));
	r->nworkers = json_object_array_length(workers);
	if (r->nworkers > LIVE_MAXW || pipe(ready) || pipe(go))
		return -1;
	sum = calloc(n, sizeof(*sum));
	v = malloc(n * sizeof(*v));
	if (!sum || !v)
		return -1;
	for (int i = 0; i < r->nworkers; i++) {
		uint32_t id = json_object_get_int64(get(json_object_array_get_idx(workers, i), "id"));

		ia_host_fill(v, n, r->job * 1000 + id);
		ia_host_add(sum, v, n);
	}
	r->expected = ia_host_checksum(sum, n);
	free(sum);
	free(v);

	pids[nproc] = fork();
	if (pids[nproc] == 0) {
		struct ia_ps_cfg cfg = {
			.job = r->job, .id = IA_SENDER_DEST, .nworkers = r->nworkers, .nelem = n,
			.linger_ms = -1, .stop = &r->ps_stop, .faults = *faults, .nack = live_ps_nack,
			.base_seq = json_object_get_int64(get(job, "base_seq")),
			.t_done = live_trace,
		};
		struct ia_ps_stats st;
		struct ia_ps *ps;
		/* A PS job's PS: its members with their sets (docs/memory.md), as inaggd says. */
		json_object *pm = get(job, "destination.members");
		size_t npm = pm ? json_object_array_length(pm) : 0;
		struct ia_sender *mem = calloc(npm ? npm : 1, sizeof(*mem));
		uint64_t *sets = calloc(npm ? npm : 1, sizeof(*sets));

		for (size_t i = 0; mem && sets && i < npm; i++) {
			json_object *m = json_object_array_get_idx(pm, i);

			mem[i].id = json_object_get_int64(get(m, "id"));
			mem[i].nworkers = json_object_get_int64(get(m, "nworkers"));
			sets[i] = json_object_get_uint64(get(m, "set"));
		}
		if (npm && mem && sets) {
			cfg.nmembers = npm;
			cfg.members = mem;
			cfg.sets = sets;
		}
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		/* Workers start when every writer of go has closed it. */
		close(go[0]);
		close(go[1]);
		inet_pton(AF_INET, json_object_get_string(get(job, "destination.address")),
			  &cfg.addr);
		inet_pton(AF_INET, json_object_get_string(get(job, "destination.down")), &cfg.down);
		close(ready[0]);
		if (enter_ns(json_object_get_string(get(job, "destination.netns"))) ||
		    ia_ps_open(&cfg, &ps, r->ps.err, sizeof(r->ps.err)))
			_exit(1);
		if (write(ready[1], "r", 1) != 1)
			_exit(1);
		r->ps.rc = ia_ps_run(ps, r->ps.err, sizeof(r->ps.err));
		r->ps.checksum = ia_host_checksum(ia_ps_result(ps), n);
		ia_ps_stats(ps, &st);
		r->pst = st;
		r->elapsed = st.elapsed;
		ia_ps_close(ps);
		_exit(0);
	}
	nproc++;
	if (read(ready[0], &c, 1) != 1)
		return -1;
	for (int i = 0; i < r->nworkers; i++) {
		json_object *w = json_object_array_get_idx(workers, i);

		pids[nproc] = fork();
		if (pids[nproc] == 0) {
			struct ia_worker_cfg cfg = {
				.job = r->job, .id = json_object_get_int64(get(w, "id")),
				.nworkers = r->nworkers,
				.window = json_object_get_int64(get(job, "worker_window")),
				/* A job run again goes on from its last chunk (set by the caller). */
				.base_seq = json_object_get_int64(get(job, "base_seq")),
				.timeout_ms = wtmpl ? wtmpl->timeout_ms : 0,
				.retries = wtmpl ? wtmpl->retries : 0,
				.faults = *faults,
				.t_first = live_trace ? live_trace + (size_t)chunks * (1 + 2 * i) : NULL,
				.t_done = live_trace ? live_trace + (size_t)chunks * (2 + 2 * i) : NULL,
			};
			struct ia_worker *wk;
			int32_t *vec = malloc(n * sizeof(*vec));

			prctl(PR_SET_PDEATHSIG, SIGKILL);
			close(go[1]);
			cfg.faults.seed += cfg.id;
			/* The job's window policy, as inaggd recorded it (docs/cc.md). */
			if (ia_job_cc_of(job, &cfg.cc, &cfg.ps_job))
				_exit(1);
			inet_pton(AF_INET, json_object_get_string(get(w, "address")), &cfg.addr);
			inet_pton(AF_INET, json_object_get_string(get(job, "destination.address")),
				  &cfg.ps);
			r->w[i].rc = -1;
			if (!vec || enter_ns(json_object_get_string(get(w, "netns"))) ||
			    ia_worker_open(&cfg, &wk, r->w[i].err, sizeof(r->w[i].err))) {
				/* Still counted as ready, so that the others are not held. */
				if (write(ready[1], "e", 1) != 1)
					_exit(2);
				_exit(1);
			}
			ia_host_fill(vec, n, r->job * 1000 + cfg.id);
			if (write(ready[1], "r", 1) != 1 || read(go[0], &c, 1) != 0)
				_exit(1);
			r->w[i].rc = ia_worker_run(wk, vec, vec, n, r->w[i].err, sizeof(r->w[i].err));
			r->w[i].t_end = live_now_ns();
			ia_worker_stats(wk, &r->wst[i]);
			r->w[i].checksum = ia_host_checksum(vec, n);
			ia_worker_close(wk);
			_exit(0);
		}
		nproc++;
	}
	close(ready[1]);
	close(go[0]);
	for (int i = 0; i < r->nworkers; i++)
		if (read(ready[0], &c, 1) != 1)
			break;
	close(ready[0]);
	/* Closing go releases every worker at once. */
	t_go = live_now_ns();
	close(go[1]);
	if (during)
		during(self, r);
	for (int i = 1; i < nproc; i++)
		waitpid(pids[i], NULL, 0);
	r->ps_stop = 1;
	waitpid(pids[0], NULL, 0);
	for (int i = 0; i < r->nworkers; i++)
		if (r->w[i].t_end != ~0ULL && r->w[i].t_end > t_last)
			t_last = r->w[i].t_end;
	r->seconds = t_last > t_go ? (t_last - t_go) / 1e9 : -1;
	return 0;
}

/* Every process succeeded and has the exact sum. */
static inline bool run_exact(const struct run *r)
{
	if (r->ps.rc || r->ps.checksum != r->expected)
		return false;
	for (int i = 0; i < r->nworkers; i++)
		if (r->w[i].rc || r->w[i].checksum != r->expected)
			return false;
	return true;
}

#endif
