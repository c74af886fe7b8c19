// SPDX-License-Identifier: GPL-2.0
/*
 * The live experiment's network (eval_live.h): the job mix, the topology,
 * `inagg net up`, inaggd, its requests, and UDP cross traffic.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <json-c/json.h>

#include "inagg/wire.h"
#include "ctl.h"
#include "err.h"
#include "eval_live.h"
#include "netns.h"
#include "netplan.h"

#define CROSS_PORT	(IA_UDP_PORT + 1)	/* not inagg's: switches pass it to the kernel */
#define CROSS_LEN	1000

void ia_live_defaults(struct ia_live_cfg *c)
{
	*c = (struct ia_live_cfg){
		.jobs = 8, .leaves = 2, .wmin = 2, .wmax = 4, .cmin = 32, .cmax = 96, .iters = 2,
		.window = 64, .mem = 0.5, .ps_per_ina = 3, .rate_mbit = 40, .mark_kb = 32,
		.gap_ms = 20, .timeout_ms = IA_LIVE_TIMEOUT_MS, .seed = 1,
	};
}

int ia_live_check(const struct ia_live_cfg *c)
{
	if (!c->jobs || c->jobs > IA_LIVE_MAX_JOBS || !c->leaves ||
	    c->leaves > IA_LIVE_MAX_LEAVES || !c->wmin || c->wmin > c->wmax ||
	    c->wmax > IA_LIVE_MAX_W || !c->cmin || c->cmin > c->cmax || c->cmax > 4096 ||
	    !c->iters || c->iters > IA_LIVE_MAX_ITERS || c->window < 2 || c->window > 1024 ||
	    !(c->mem >= 0) || c->mem > 100 || !(c->rate_mbit > 0) || !(c->cross >= 0) ||
	    c->cross >= 1 || !(c->gap_ms >= 0) || !c->bindir || !c->workdir)
		return -EINVAL;
	return 0;
}

static double uni(uint64_t *rng)
{
	return (ia_splitmix64(rng) >> 11) * (1.0 / 9007199254740992.0);
}

void ia_live_mix(const struct ia_live_cfg *c, struct ia_live_mixjob *mix)
{
	uint64_t rng = c->seed * 0x9e3779b97f4a7c15ull + 1;

	for (uint32_t i = 0; i < c->jobs; i++) {
		struct ia_live_mixjob *m = &mix[i];
		uint32_t straggler;

		memset(m, 0, sizeof(*m));
		m->leaf = i % c->leaves;
		m->workers = c->wmin + ia_splitmix64(&rng) % (c->wmax - c->wmin + 1);
		m->chunks = c->cmin + ia_splitmix64(&rng) % (c->cmax - c->cmin + 1);
		/*
		 * The INA jobs spread over the leaves: counted on its leaf (i / leaves),
		 * every (ps_per_ina + 1)-th job asks for a head. (i % (ps_per_ina + 1)
		 * put every INA job on leaf 0 with 2 leaves: 1:1 ran as 2:6.)
		 */
		m->want_ps = c->ps_per_ina && (i / c->leaves) % (c->ps_per_ina + 1);
		/* Each worker computes a little; one of each job is the straggler. */
		straggler = ia_splitmix64(&rng) % m->workers;
		for (uint32_t w = 0; w < m->workers; w++)
			m->gap_ms[w] = c->gap_ms * (w == straggler ? 0.5 + 0.5 * uni(&rng) :
							 0.1 * uni(&rng));
	}
}

/* Leaves with their jobs' demand times mem, the root without memory, only its uplink slow. */
static int write_topo(struct ia_live *L, char *err, size_t errlen)
{
	const struct ia_live_cfg *c = &L->c;
	FILE *f;
	int fd;

	/* Made anew, never through a link or into a file someone else made. */
	unlink(L->topo);
	fd = open(L->topo, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	f = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (!f) {
		if (fd >= 0)
			close(fd);
		return ia_fail(err, errlen, -errno, "%s: %s", L->topo, strerror(errno));
	}
	fprintf(f, "{\"switches\": [{\"name\": \"r\", \"parent\": null, \"rate\": 1,"
		   " \"available\": false, \"capacity\": 0, \"slots\": 0}");
	for (uint32_t l = 0; l < c->leaves; l++) {
		uint32_t n = c->jobs / c->leaves + (l < c->jobs % c->leaves);

		fprintf(f, ",\n {\"name\": \"l%u\", \"parent\": \"r\", \"rate\": 100, \"load\": %u,"
			   " \"capacity\": %u, \"slots\": %u}", l, L->nhosts, n + 1,
			(unsigned int)floor(c->mem * n * c->window));
	}
	fprintf(f, "]}\n");
	return fclose(f) ? ia_fail(err, errlen, -EIO, "%s: write failed", L->topo) : 0;
}

/*
 * bindir/inagg with argv (argv[0] "inagg"), its output appended to the log:
 * exec, not a shell, so that no path is ever parsed as shell text. 0 when it
 * exited 0.
 */
static int run_inagg(struct ia_live *L, char *const argv[])
{
	char bin[512];
	pid_t pid;
	int st;

	snprintf(bin, sizeof(bin), "%s/inagg", L->c.bindir);
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		int fd = open(L->log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);

		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		execv(bin, argv);
		_exit(127);
	}
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -errno;
	return WIFEXITED(st) && !WEXITSTATUS(st) ? 0 : -EIO;
}

static int start_daemon(struct ia_live *L, char *err, size_t errlen)
{
	char bin[512], ms[16];
	int ret;

	snprintf(bin, sizeof(bin), "%s/inaggd", L->c.bindir);
	snprintf(ms, sizeof(ms), "%d", IA_LIVE_SAMPLE_MS);
	L->daemon = fork();
	if (L->daemon < 0)
		return ia_fail(err, errlen, -errno, "fork: %s", strerror(errno));
	if (L->daemon == 0) {
		int fd = open(L->log, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0644);

		prctl(PR_SET_PDEATHSIG, SIGTERM);
		if (fd >= 0)
			dup2(fd, 2);
		/* -K: upward messages through the kernel, so that the bottleneck's tbf applies. */
		execl(bin, "inaggd", "-t", L->topo, "-n", L->tag, "-s", L->sock, "-S", L->state,
		      "-K", "-m", ms, "-q", (char *)NULL);
		_exit(127);
	}
	/* Ready when it answers; its start verifies the tail programs (seconds on a busy host). */
	ret = ia_ctl_wait(L->sock, L->daemon, 120000);
	if (!ret)
		return 0;
	if (ret == -ECHILD) {
		L->daemon = 0;
		return ia_fail(err, errlen, -ECHILD, "inaggd exited (log: %s)", L->log);
	}
	kill(L->daemon, SIGKILL);
	waitpid(L->daemon, NULL, 0);
	L->daemon = 0;
	return ia_fail(err, errlen, -ETIMEDOUT, "inaggd did not answer in 120 s (log: %s)",
		       L->log);
}

int ia_live_up(struct ia_live *L, const struct ia_live_cfg *c, char *err, size_t errlen)
{
	char rate[32], mark[16];
	int ret;

	memset(L, 0, sizeof(*L));
	L->c = *c;
	L->dest.map_fd = L->dest.prog_fd = -1;
	for (int l = 0; l < IA_LIVE_MAX_LEAVES; l++)
		for (int h = 0; h < IA_LIVE_MAX_W; h++)
			L->host[l][h].map_fd = L->host[l][h].prog_fd = -1;
	if (ia_live_check(c))
		return ia_fail(err, errlen, -EINVAL, "bad configuration");
	L->nhosts = c->wmax;
	snprintf(L->tag, sizeof(L->tag), "e%d", getpid() % 10000000);
	snprintf(L->topo, sizeof(L->topo), "%s/topo.json", c->workdir);
	snprintf(L->sock, sizeof(L->sock), "%s/inaggd.sock", c->workdir);
	snprintf(L->state, sizeof(L->state), "%s/state.json", c->workdir);
	snprintf(L->log, sizeof(L->log), "%s/inaggd.log", c->workdir);
	unlink(L->state);
	/* This network's own user-space ledger, not the host's. */
	setenv("INAGG_LEDGER", "user", 1);
	setenv("INAGG_LEDGER_DIR", c->workdir, 1);
	ret = write_topo(L, err, errlen);
	if (ret)
		return ret;
	snprintf(rate, sizeof(rate), "%g", c->rate_mbit);
	snprintf(mark, sizeof(mark), "%u", c->mark_kb);
	L->up = true;
	if (run_inagg(L, (char *const[]){ "inagg", "net", "up", "-t", L->topo, "-n", L->tag,
					  "--attach", "--rate-mbit", rate, "--mark-kb", mark,
					  NULL })) {
		ia_live_down(L);
		return ia_fail(err, errlen, -EIO, "inagg net up failed (log: %s)", L->log);
	}
	/* Every host's endpoints share its port, steered by job (host_share.h). */
	ia_host_share_enable();
	ret = ia_host_steer_new(&L->dest);
	for (uint32_t l = 0; !ret && l < c->leaves; l++)
		for (uint32_t h = 0; !ret && h < L->nhosts; h++)
			ret = ia_host_steer_new(&L->host[l][h]);
	if (ret) {
		ia_live_down(L);
		return ia_fail(err, errlen, ret, "steering program: %s", strerror(-ret));
	}
	ret = start_daemon(L, err, errlen);
	if (ret)
		ia_live_down(L);
	return ret;
}

void ia_live_down(struct ia_live *L)
{
	if (L->daemon > 0) {
		kill(L->daemon, SIGTERM);
		waitpid(L->daemon, NULL, 0);
		L->daemon = 0;
	}
	ia_host_steer_free(&L->dest);
	for (int l = 0; l < IA_LIVE_MAX_LEAVES; l++)
		for (int h = 0; h < IA_LIVE_MAX_W; h++)
			if (L->host[l][h].map_fd > 0)
				ia_host_steer_free(&L->host[l][h]);
	if (!L->up)
		return;
	if (run_inagg(L, (char *const[]){ "inagg", "net", "down", "-n", L->tag, "-t", L->topo,
					  NULL }))
		fprintf(stderr, "inagg net down -n %s failed\n", L->tag);
	L->up = false;
}

json_object *ia_live_request(struct ia_live *L, char *err, size_t errlen, const char *fmt, ...)
{
	json_object *req, *resp = NULL, *ok;
	char text[1024], e[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	req = json_tokener_parse(text);
	if (!req) {
		ia_fail(err, errlen, -EINVAL, "bad request %s", text);
		return NULL;
	}
	if (ia_ctl_call(L->sock, req, &resp, e, sizeof(e))) {
		ia_fail(err, errlen, -EIO, "%s", e);
		resp = NULL;
	} else if (!json_object_object_get_ex(resp, "ok", &ok) || !json_object_get_boolean(ok)) {
		json_object *m = NULL;

		json_object_object_get_ex(resp, "error", &m);
		ia_fail(err, errlen, -EINVAL, "%.60s: %s", text,
			m ? json_object_get_string(m) : "refused");
		json_object_put(resp);
		resp = NULL;
	}
	json_object_put(req);
	return resp;
}

static volatile sig_atomic_t cross_stop;

static void on_term(int sig)
{
	cross_stop = 1;
}

/* Paced datagrams at rate bit/s to dest until SIGTERM. */
static void cross_loop(int fd, const struct sockaddr_in *to, double rate, volatile uint64_t *sent)
{
	static char buf[CROSS_LEN];
	const double period = CROSS_LEN * 8.0 / rate;
	struct timespec t0, now;
	uint64_t n = 0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (!cross_stop) {
		double el;

		clock_gettime(CLOCK_MONOTONIC, &now);
		el = (now.tv_sec - t0.tv_sec) + (now.tv_nsec - t0.tv_nsec) / 1e9;
		/* Sent what is due (bursts of at most 8 after a late wake-up). */
		for (int b = 0; b < 8 && n * period <= el; b++, n++)
			if (sendto(fd, buf, sizeof(buf), 0, (const struct sockaddr *)to,
				   sizeof(*to)) > 0)
				(*sent)++;
		usleep(period * 1e6 > 200 ? 200 : (useconds_t)(period * 1e6));
	}
}

pid_t ia_live_cross_start(struct ia_live *L, volatile uint64_t *sent)
{
	struct ia_topo *t = NULL;
	struct sockaddr_in to = { .sin_family = AF_INET, .sin_port = htons(CROSS_PORT) };
	char ns[128], e[256];
	pid_t pid;

	if (ia_topo_load(L->topo, &t, e, sizeof(e)))
		return -EINVAL;
	to.sin_addr = ia_net_dest_addr(t);
	ia_topo_free(t);
	/* The last host of leaf 0: its datagrams cross l0's and the root's uplinks. */
	ia_net_worker_ns(L->tag, "l0", L->nhosts - 1, ns, sizeof(ns));
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		int fd;

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		signal(SIGTERM, on_term);
		if (ia_netns_enter(ns) < 0)
			_exit(1);
		fd = socket(AF_INET, SOCK_DGRAM, 0);
		if (fd < 0)
			_exit(1);
		cross_loop(fd, &to, L->c.cross * L->c.rate_mbit * 1e6, sent);
		_exit(0);
	}
	return pid;
}

void ia_live_cross_stop(pid_t pid)
{
	if (pid > 0) {
		kill(pid, SIGTERM);
		waitpid(pid, NULL, 0);
	}
}
