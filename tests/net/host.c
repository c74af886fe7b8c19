// SPDX-License-Identifier: GPL-2.0
/*
 * Host endpoint (user/lib/host.c) on live sockets in network namespaces.
 *
 * "bridge": a PS namespace and 4 worker namespaces, each joined by a veth to
 * a plain Linux bridge in a middle namespace (no XDP: every switch red).
 * "lo": one namespace, hosts on 127.0.0.x, with hand-made messages.
 *
 * Namespaces are named ia-<harness pid>-<test pid>-<role>; teardown deletes
 * them and main() deletes any left by a test that was killed. The kernel here
 * has no netem, so loss, duplication and reordering come from the endpoint's
 * seeded send impairment (struct ia_host_faults), and real queue loss from a
 * tiny tbf qdisc.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "../nstest.h"
#include "../impair/impair.h"
#include "host.h"

#define NW_MAX	4
#define ERRLEN	256

static pid_t main_pid;

static void ns_name(char *buf, size_t len, const char *role)
{
	snprintf(buf, len, "ia-%d-%d-%s", (int)main_pid, (int)getpid(), role);
}

/* Deletes namespaces named ia-<pid>-* (this harness's). */
static void ns_cleanup(pid_t pid, pid_t test)
{
	char pfx[64];
	struct dirent *d;
	DIR *dir;

	if (test)
		snprintf(pfx, sizeof(pfx), "ia-%d-%d-", (int)pid, (int)test);
	else
		snprintf(pfx, sizeof(pfx), "ia-%d-", (int)pid);
	dir = opendir("/run/netns");
	if (!dir)
		return;
	while ((d = readdir(dir)))
		if (!strncmp(d->d_name, pfx, strlen(pfx)))
			sh("ip netns del %s", d->d_name);
	closedir(dir);
}

static struct in_addr ip4(const char *s)
{
	struct in_addr a;

	inet_pton(AF_INET, s, &a);
	return a;
}

/* What the forked hosts hand back. */
struct shm {
	int ps_rc, w_rc[NW_MAX];
	char ps_err[ERRLEN], w_err[NW_MAX][ERRLEN];
	struct ia_ps_stats ps;
	struct ia_worker_stats w[NW_MAX];
	int32_t data[];		/* PS result, then each worker's result: n each */
};

struct scen {
	const char *ps_ns, *w_ns[NW_MAX];	/* NULL: the caller's namespace */
	int nw;
	size_t n;
	uint64_t seed[NW_MAX];
	struct ia_ps_cfg ps;
	struct ia_worker_cfg w[NW_MAX];
	struct shm *m;
};

static struct shm *shm_new(size_t n)
{
	size_t len = sizeof(struct shm) + (NW_MAX + 1) * n * sizeof(int32_t);
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

static void shm_free(struct shm *m, size_t n)
{
	munmap(m, sizeof(struct shm) + (NW_MAX + 1) * n * sizeof(int32_t));
}

static int32_t *w_result(struct shm *m, size_t n, int i)
{
	return m->data + (i + 1) * n;
}

static void child_init(void)
{
	/* Never outlive the test process (the harness may kill it on timeout). */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
}

static void ps_child(struct scen *s, int ready)
{
	struct ia_ps *ps;
	int ret;

	child_init();
	ret = enter_ns(s->ps_ns);
	if (!ret)
		ret = ia_ps_open(&s->ps, &ps, s->m->ps_err, ERRLEN);
	/* The readiness signal: the socket is bound. */
	if (write(ready, ret ? "e" : "r", 1) != 1)
		_exit(2);
	close(ready);
	if (ret) {
		s->m->ps_rc = ret;
		_exit(1);
	}
	ret = ia_ps_run(ps, s->m->ps_err, ERRLEN);
	s->m->ps_rc = ret;
	ia_ps_stats(ps, &s->m->ps);
	memcpy(s->m->data, ia_ps_result(ps), s->n * sizeof(int32_t));
	ia_ps_close(ps);
	_exit(ret ? 1 : 0);
}

static void worker_child(struct scen *s, int i)
{
	struct ia_worker *w;
	int32_t *v = w_result(s->m, s->n, i);
	int ret;

	child_init();
	ia_host_fill(v, s->n, s->seed[i]);
	ret = enter_ns(s->w_ns[i]);
	if (!ret)
		ret = ia_worker_open(&s->w[i], &w, s->m->w_err[i], ERRLEN);
	if (!ret) {
		/* In place: the input becomes the result. */
		ret = ia_worker_run(w, v, v, s->n, s->m->w_err[i], ERRLEN);
		ia_worker_stats(w, &s->m->w[i]);
		ia_worker_close(w);
	}
	s->m->w_rc[i] = ret;
	_exit(ret ? 1 : 0);
}

/* Runs the PS and the workers of s to the end. 0 if every host succeeded. */
static int scen_run(struct scen *s)
{
	pid_t ps, w[NW_MAX];
	int p[2], i, st, bad = 0;
	char c = 0;

	s->m->ps_rc = -EINPROGRESS;
	if (pipe(p))
		return -errno;
	ps = fork();
	if (ps < 0)
		return -errno;
	if (!ps) {
		close(p[0]);
		ps_child(s, p[1]);
	}
	close(p[1]);
	if (read(p[0], &c, 1) != 1 || c != 'r') {
		close(p[0]);
		waitpid(ps, NULL, 0);
		fprintf(stderr, "# PS did not start: %s\n", s->m->ps_err);
		return -EIO;
	}
	close(p[0]);
	for (i = 0; i < s->nw; i++) {
		w[i] = fork();
		if (w[i] < 0)
			return -errno;
		if (!w[i])
			worker_child(s, i);
	}
	for (i = 0; i < s->nw; i++) {
		waitpid(w[i], &st, 0);
		if (!WIFEXITED(st) || WEXITSTATUS(st)) {
			fprintf(stderr, "# worker %d: %s\n", i, s->m->w_err[i]);
			bad++;
		}
	}
	waitpid(ps, &st, 0);
	if (!WIFEXITED(st) || WEXITSTATUS(st)) {
		fprintf(stderr, "# PS: %s\n", s->m->ps_err);
		bad++;
	}
	return bad ? -EIO : 0;
}

/* Element-wise wrapping sum of the workers' seeded vectors. */
static int32_t *expected_sum(const struct scen *s)
{
	int32_t *sum = calloc(s->n, sizeof(*sum)), *v = malloc(s->n * sizeof(*v));
	int i;

	if (!sum || !v) {
		free(sum);
		free(v);
		return NULL;
	}
	for (i = 0; i < s->nw; i++) {
		ia_host_fill(v, s->n, s->seed[i]);
		ia_host_add(sum, v, s->n);
	}
	free(v);
	return sum;
}

/* The bridge network: PS 10.77.0.1, worker i 10.77.0.(10 + i). */

FIXTURE(bridge) {
	char br[64], ps[64], w[NW_MAX][64];
	struct scen s;
	int32_t *want;
};

FIXTURE_SETUP(bridge)
{
	char role[16];
	int i;

	ns_name(self->br, sizeof(self->br), "br");
	ns_name(self->ps, sizeof(self->ps), "ps");
	ASSERT_EQ(0, sh("ip netns add %s", self->br));
	ASSERT_EQ(0, sh("ip -n %s link add br0 type bridge && ip -n %s link set br0 up",
			self->br, self->br));
	for (i = 0; i <= NW_MAX; i++) {
		const char *ns;

		if (i < NW_MAX) {
			snprintf(role, sizeof(role), "w%d", i);
			ns_name(self->w[i], sizeof(self->w[i]), role);
			ns = self->w[i];
		} else {
			ns = self->ps;
		}
		ASSERT_EQ(0, sh("ip netns add %s", ns));
		ASSERT_EQ(0, sh("ip -n %s link add h%d type veth peer name p%d && "
				"ip -n %s link set h%d netns %s && "
				"ip -n %s link set h%d name eth0 && "
				"ip -n %s addr add 10.77.0.%d/24 dev eth0 && "
				"ip -n %s link set eth0 up && ip -n %s link set lo up && "
				"ip -n %s link set p%d master br0 up",
				self->br, i, i, self->br, i, ns, ns, i, ns,
				i < NW_MAX ? 10 + i : 1, ns, ns, self->br, i));
	}
	self->s.ps_ns = self->ps;
	self->s.nw = NW_MAX;
	for (i = 0; i < NW_MAX; i++) {
		char a[32];

		self->s.w_ns[i] = self->w[i];
		self->s.seed[i] = 1000 + i;
		snprintf(a, sizeof(a), "10.77.0.%d", 10 + i);
		self->s.w[i] = (struct ia_worker_cfg){
			.job = 7, .id = i, .addr = ip4(a), .ps = ip4("10.77.0.1"),
			.nworkers = NW_MAX,
		};
	}
	self->s.ps = (struct ia_ps_cfg){
		.job = 7, .id = 1000, .nworkers = NW_MAX, .addr = ip4("10.77.0.1"),
		.down_mode = IA_PS_DOWN_UNICAST, .linger_ms = 500,
	};
}

FIXTURE_TEARDOWN(bridge)
{
	ns_cleanup(main_pid, getpid());
	if (self->s.m)
		shm_free(self->s.m, self->s.n);
	free(self->want);
}

/* Sets the vector length and allocates what the run needs. */
static int bridge_prepare(struct scen *s, size_t n, int32_t **want)
{
	s->n = n;
	s->ps.nelem = n;
	s->m = shm_new(n);
	*want = s->m ? expected_sum(s) : NULL;
	return *want ? 0 : -ENOMEM;
}

static int check_results(struct scen *s, const int32_t *want)
{
	int i, bad = 0;

	if (memcmp(s->m->data, want, s->n * sizeof(*want))) {
		fprintf(stderr, "# PS sum differs from the exact sum\n");
		bad++;
	}
	for (i = 0; i < s->nw; i++)
		if (memcmp(w_result(s->m, s->n, i), want, s->n * sizeof(*want))) {
			fprintf(stderr, "# worker %d result differs from the exact sum\n", i);
			bad++;
		}
	return bad;
}

/* Every worker gets the exact sum of 3001 chunks; each contribution counted once. */
TEST_F(bridge, exact_unicast)
{
	uint64_t c = ia_host_nchunks(3000 * 256 + 17, 256);
	int i;

	ASSERT_EQ(0, bridge_prepare(&self->s, 3000 * 256 + 17, &self->want));
	ASSERT_EQ(0, scen_run(&self->s));
	EXPECT_EQ(0, check_results(&self->s, self->want));
	EXPECT_EQ(c, self->s.m->ps.done);
	EXPECT_EQ(NW_MAX * c, self->s.m->ps.contrib);
	EXPECT_EQ(0U, self->s.m->ps.agg);
	for (i = 0; i < IA_PS_DROP__COUNT; i++)
		EXPECT_EQ(0U, self->s.m->ps.drop[i]) TH_LOG("drop %s", ia_ps_drop_name(i));
	for (i = 0; i < NW_MAX; i++) {
		EXPECT_EQ(c, self->s.m->w[i].results);
		EXPECT_EQ(0U, self->s.m->w[i].bad);
	}
}

/*
 * Chunks of the largest size: refused with the MTU to set while the links
 * have 1500 (fragments would reach no switch's aggregator), exact once every
 * link takes them.
 */
TEST_F(bridge, largest_chunks_need_the_mtu)
{
	const uint32_t mtu = IA_MTU(IA_MAX_ELEMS);
	size_t n = 500 * IA_MAX_ELEMS + 5;
	int i;

	ASSERT_EQ(0, bridge_prepare(&self->s, n, &self->want));
	self->s.ps.chunk = IA_MAX_ELEMS;
	for (i = 0; i < NW_MAX; i++)
		self->s.w[i].chunk = IA_MAX_ELEMS;
	for (i = 0; i < NW_MAX; i++) {
		pid_t pid = fork();

		ASSERT_LE(0, pid);
		if (!pid)
			worker_child(&self->s, i);
		ASSERT_EQ(pid, waitpid(pid, NULL, 0));
		EXPECT_EQ(-EMSGSIZE, self->s.m->w_rc[i]);
		EXPECT_NE(NULL, strstr(self->s.m->w_err[i], "MTU of 3130"))
			TH_LOG("%s", self->s.m->w_err[i]);
	}
	for (i = 0; i <= NW_MAX; i++)
		ASSERT_EQ(0, sh("ip -n %s link set eth0 mtu %u && ip -n %s link set p%d mtu %u",
				i < NW_MAX ? self->w[i] : self->ps, mtu, self->br, i, mtu));
	for (i = 0; i < NW_MAX; i++)
		ia_host_fill(w_result(self->s.m, n, i), n, self->s.seed[i]);
	ASSERT_EQ(0, scen_run(&self->s));
	EXPECT_EQ(0, check_results(&self->s, self->want));
	EXPECT_EQ(ia_host_nchunks(n, IA_MAX_ELEMS), self->s.m->ps.done);
	for (i = 0; i < IA_PS_DROP__COUNT; i++)
		EXPECT_EQ(0U, self->s.m->ps.drop[i]) TH_LOG("drop %s", ia_ps_drop_name(i));
}

/*
 * Results sent once per chunk to a "down" address (here the subnet's
 * broadcast: the bridge replicates it like a root switch would).
 */
TEST_F(bridge, exact_down_broadcast)
{
	uint64_t c = ia_host_nchunks(2000 * 100, 100);
	int i;

	self->s.ps.down_mode = IA_PS_DOWN_ADDR;
	self->s.ps.down = ip4("10.77.0.255");
	self->s.ps.chunk = 100;
	for (i = 0; i < NW_MAX; i++) {
		self->s.w[i].addr.s_addr = INADDR_ANY;	/* receives broadcasts */
		self->s.w[i].chunk = 100;
		self->s.w[i].window = 16 + 16 * i;	/* windows may differ */
	}
	ASSERT_EQ(0, bridge_prepare(&self->s, 2000 * 100, &self->want));
	ASSERT_EQ(0, scen_run(&self->s));
	EXPECT_EQ(0, check_results(&self->s, self->want));
	EXPECT_EQ(NW_MAX * c, self->s.m->ps.contrib);
	/*
	 * One result per chunk, plus one per late retransmission answered at
	 * once (neither stale nor quiet) and one per quiet time's end that had
	 * late ones.
	 */
	EXPECT_EQ(c + self->s.m->ps.late - self->s.m->ps.late_stale - self->s.m->ps.late_quiet +
		  self->s.m->ps.late_deferred, self->s.m->ps.results);
	EXPECT_LE(self->s.m->ps.late_deferred, self->s.m->ps.late_quiet);
}

/*
 * 10% loss, 10% duplication, 10% reordering on every host's sends (workers'
 * contributions and the PS's results): still exact, nothing counted twice,
 * late retransmissions answered from stored results.
 */
TEST_F_TIMEOUT(bridge, faults, 60)
{
	uint64_t c = ia_host_nchunks(1500 * 256, 256);
	struct ia_host_faults f = { 100000, 100000, 100000, 0 };
	uint64_t retx = 0;
	int i;

	for (i = 0; i < NW_MAX; i++) {
		self->s.w[i].faults = f;
		self->s.w[i].faults.seed = 17 + i;
		self->s.w[i].timeout_ms = 30;
	}
	self->s.ps.faults = f;
	self->s.ps.faults.seed = 99;
	ASSERT_EQ(0, bridge_prepare(&self->s, 1500 * 256, &self->want));
	ASSERT_EQ(0, scen_run(&self->s));
	EXPECT_EQ(0, check_results(&self->s, self->want));
	EXPECT_EQ(c, self->s.m->ps.done);
	EXPECT_EQ(NW_MAX * c, self->s.m->ps.contrib);
	EXPECT_GT(self->s.m->ps.dup, 0U);
	EXPECT_GT(self->s.m->ps.late, 0U);
	for (i = 0; i < NW_MAX; i++) {
		retx += self->s.m->w[i].retx;
		EXPECT_EQ(c, self->s.m->w[i].results);
	}
	EXPECT_GT(retx, 0U);
	TH_LOG("PS dup %llu late %llu, workers retx %llu",
	       (unsigned long long)self->s.m->ps.dup, (unsigned long long)self->s.m->ps.late,
	       (unsigned long long)retx);
}

/*
 * Loss and duplication in the kernel, on every host's link both ways (tc
 * programs of tests/impair/, 10 % each), and 10 % reordering of every
 * host's sends: still exact, each contribution counted once.
 */
TEST_F_TIMEOUT(bridge, link_loss_and_clones, 120)
{
	uint64_t c = ia_host_nchunks(1000 * 256, 256), retx = 0;
	struct impair im[NW_MAX + 1];
	struct impair_counts sum = { 0 };
	int i;

	for (i = 0; i <= NW_MAX; i++) {
		ASSERT_EQ(0, impair_attach(&im[i], i < NW_MAX ? self->w[i] : self->ps, "eth0",
					   i + 1));
		impair_set(&im[i], 100000, 100000);
	}
	for (i = 0; i < NW_MAX; i++)
		self->s.w[i].faults = (struct ia_host_faults){ .reorder_ppm = 100000, .seed = i };
	self->s.ps.faults = (struct ia_host_faults){ .reorder_ppm = 100000, .seed = 9 };
	ASSERT_EQ(0, bridge_prepare(&self->s, 1000 * 256, &self->want));
	ASSERT_EQ(0, scen_run(&self->s));
	impair_destroy_all(im, NW_MAX + 1, &sum);
	EXPECT_EQ(0, check_results(&self->s, self->want));
	EXPECT_EQ(c, self->s.m->ps.done);
	EXPECT_EQ(NW_MAX * c, self->s.m->ps.contrib);
	EXPECT_LT(0U, sum.dropped);
	EXPECT_LT(0U, sum.cloned);
	EXPECT_LT(0U, self->s.m->ps.dup);
	for (i = 0; i < NW_MAX; i++) {
		retx += self->s.m->w[i].retx;
		EXPECT_EQ(c, self->s.m->w[i].results);
	}
	EXPECT_LT(0U, retx);
	TH_LOG("links dropped %llu cloned %llu; PS dup %llu late %llu; workers retx %llu",
	       (unsigned long long)sum.dropped, (unsigned long long)sum.cloned,
	       (unsigned long long)self->s.m->ps.dup, (unsigned long long)self->s.m->ps.late,
	       (unsigned long long)retx);
}

/* Real loss in the kernel: a tiny tbf queue toward the PS overflows. */
TEST_F_TIMEOUT(bridge, queue_loss, 60)
{
	uint64_t c = ia_host_nchunks(1000 * 256, 256), retx = 0;
	char line[512];
	long drops = -1;
	FILE *f;
	int i;

	ASSERT_EQ(0, sh("tc -n %s qdisc add dev p%d root tbf rate 40mbit burst 8kb limit 8kb",
			self->br, NW_MAX));
	for (i = 0; i < NW_MAX; i++)
		self->s.w[i].timeout_ms = 50;
	ASSERT_EQ(0, bridge_prepare(&self->s, 1000 * 256, &self->want));
	ASSERT_EQ(0, scen_run(&self->s));
	EXPECT_EQ(0, check_results(&self->s, self->want));
	EXPECT_EQ(NW_MAX * c, self->s.m->ps.contrib);
	for (i = 0; i < NW_MAX; i++)
		retx += self->s.m->w[i].retx;
	snprintf(line, sizeof(line), "tc -n %s -s qdisc show dev p%d", self->br, NW_MAX);
	f = popen(line, "r");
	ASSERT_NE(NULL, f);
	while (fgets(line, sizeof(line), f))
		if (strstr(line, "dropped"))
			sscanf(strstr(line, "dropped") + 8, "%ld", &drops);
	pclose(f);
	EXPECT_GT(drops, 0);
	EXPECT_GT(retx, 0U);
	TH_LOG("tbf dropped %ld, workers retx %llu", drops, (unsigned long long)retx);
}

/* One namespace, hosts on 127.0.0.x: hand-made messages. */

FIXTURE(lo) {
	char ns[64];
	int fd;			/* a fake host at 127.0.0.2:IA_UDP_PORT */
	pid_t child;
	struct shm *m;
};

FIXTURE_SETUP(lo)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(IA_UDP_PORT) };
	struct timeval tv = { .tv_sec = 3 };

	self->fd = -1;
	ns_name(self->ns, sizeof(self->ns), "lo");
	ASSERT_EQ(0, sh("ip netns add %s && ip -n %s link set lo up", self->ns, self->ns));
	ASSERT_EQ(0, enter_ns(self->ns));
	self->fd = socket(AF_INET, SOCK_DGRAM, 0);
	ASSERT_LE(0, self->fd);
	sa.sin_addr = ip4("127.0.0.2");
	ASSERT_EQ(0, bind(self->fd, (struct sockaddr *)&sa, sizeof(sa)));
	ASSERT_EQ(0, setsockopt(self->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)));
	self->m = shm_new(1024);
	ASSERT_NE(NULL, self->m);
}

FIXTURE_TEARDOWN(lo)
{
	if (self->child > 0) {
		kill(self->child, SIGKILL);
		waitpid(self->child, NULL, 0);
	}
	if (self->fd >= 0)
		close(self->fd);
	if (self->m)
		shm_free(self->m, 1024);
	ns_cleanup(main_pid, getpid());
}

struct msg {
	struct ia_hdr h;
	uint32_t v[IA_MAX_ELEMS];
} __attribute__((packed));

static size_t msg_make(struct msg *m, uint8_t type, uint32_t job, uint32_t seq, uint32_t sender,
		       uint32_t nw, uint16_t nelem, uint32_t base)
{
	uint16_t i;

	memset(m, 0, sizeof(*m));
	ia_hdr_fill(&m->h, type, job, seq, sender, nw, nelem, 0);
	for (i = 0; i < nelem && i < IA_MAX_ELEMS; i++)
		m->v[i] = htole32(base + i);
	return IA_HDR_LEN + 4 * nelem;
}

static int send_to(int fd, const char *ip, const void *buf, size_t len)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(IA_UDP_PORT),
				  .sin_addr = ip4(ip) };

	return sendto(fd, buf, len, 0, (struct sockaddr *)&sa, sizeof(sa)) == (ssize_t)len ? 0 : -1;
}

/* Receives one message; its length, or -1 on timeout. */
static ssize_t recv_msg(int fd, struct msg *m)
{
	return recv(fd, m, sizeof(*m), 0);
}

/* Starts a PS in a child; returns once it is bound. */
static pid_t ps_start(struct shm *m, const struct ia_ps_cfg *cfg)
{
	struct ia_ps *ps;
	int p[2], ret;
	pid_t pid;
	char c;

	if (pipe(p))
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (!pid) {
		child_init();
		close(p[0]);
		ret = ia_ps_open(cfg, &ps, m->ps_err, ERRLEN);
		if (write(p[1], ret ? "e" : "r", 1) != 1 || ret)
			_exit(1);
		ret = ia_ps_run(ps, m->ps_err, ERRLEN);
		m->ps_rc = ret;
		ia_ps_stats(ps, &m->ps);
		memcpy(m->data, ia_ps_result(ps), cfg->nelem * sizeof(int32_t));
		ia_ps_close(ps);
		_exit(ret ? 1 : 0);
	}
	close(p[1]);
	ret = read(p[0], &c, 1);
	close(p[0]);
	if (ret != 1 || c != 'r') {
		waitpid(pid, NULL, 0);
		return -1;
	}
	return pid;
}

static int wait_exit(pid_t pid)
{
	int st;

	if (waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/*
 * Malformed, foreign and non-member messages are dropped and counted by
 * reason and never reach the sum; a member's retransmission after the chunk
 * completed gets the stored result back and is not added again.
 */
TEST_F(lo, ps_validation_and_late)
{
	struct ia_sender mem[] = { { 0, 1 }, { 1, 1 }, { 5, 2 } };
	struct ia_ps_cfg cfg = {
		.job = 3, .id = 77, .nworkers = 4, .nelem = 20, .chunk = 10,
		.addr = ip4("127.0.0.1"), .down_mode = IA_PS_DOWN_UNICAST,
		.nmembers = 3, .members = mem, .linger_ms = 300,
	};
	struct msg m, r;
	size_t len;
	int c, i;

	self->child = ps_start(self->m, &cfg);
	ASSERT_LT(0, self->child);

	/* One message per drop reason. */
	len = msg_make(&m, IA_MSG_CONTRIB, 3, 0, 0, 1, 10, 1);
	ASSERT_EQ(0, send_to(self->fd, "127.0.0.1", &m, 10));		/* short */
	m.h.ver = 2;
	ASSERT_EQ(0, send_to(self->fd, "127.0.0.1", &m, len));		/* version */
	len = msg_make(&m, IA_MSG_RESULT, 3, 0, 0, 1, 10, 1);
	ASSERT_EQ(0, send_to(self->fd, "127.0.0.1", &m, len));		/* type */
	len = msg_make(&m, IA_MSG_CONTRIB, 4, 0, 0, 1, 10, 1);
	ASSERT_EQ(0, send_to(self->fd, "127.0.0.1", &m, len));		/* job */
	len = msg_make(&m, IA_MSG_CONTRIB, 3, 1, 0, 1, 7, 1);
	ASSERT_EQ(0, send_to(self->fd, "127.0.0.1", &m, len));		/* nelem: not the chunk's */
	len = msg_make(&m, IA_MSG_CONTRIB, 3, 0, 0, 1, 10, 1);
	ASSERT_EQ(0, send_to(self->fd, "127.0.0.1", &m, len + 4));	/* nelem: not the length */
	len = msg_make(&m, IA_MSG_CONTRIB, 3, 0, 99, 1, 10, 1);
	ASSERT_EQ(0, send_to(self->fd, "127.0.0.1", &m, len));		/* member: unknown */
	len = msg_make(&m, IA_MSG_CONTRIB, 3, 0, 0, 2, 10, 1);
	ASSERT_EQ(0, send_to(self->fd, "127.0.0.1", &m, len));		/* member: nworkers */
	len = msg_make(&m, IA_MSG_CONTRIB, 3, 2, 0, 1, 10, 1);
	ASSERT_EQ(0, send_to(self->fd, "127.0.0.1", &m, len));		/* window */

	/* Chunk 0: worker 0, its duplicate, worker 1, an aggregate of 2 from switch 5. */
	for (c = 0; c < 2; c++) {
		len = msg_make(&m, IA_MSG_CONTRIB, 3, c, 0, 1, 10, 100);
		ASSERT_EQ(0, send_to(self->fd, "127.0.0.1", &m, len));
		ASSERT_EQ(0, send_to(self->fd, "127.0.0.1", &m, len));	/* dup */
		len = msg_make(&m, IA_MSG_CONTRIB, 3, c, 1, 1, 10, 1000);
		m.h.flags = IA_F_MARK;
		ASSERT_EQ(0, send_to(self->fd, "127.0.0.1", &m, len));
		len = msg_make(&m, IA_MSG_AGG, 3, c, 5, 2, 10, 10000);
		ASSERT_EQ(0, send_to(self->fd, "127.0.0.1", &m, len));
		ASSERT_EQ(IA_HDR_LEN + 40, recv_msg(self->fd, &r));
		EXPECT_EQ(IA_MSG_RESULT, r.h.type);
		EXPECT_EQ(3U, ntohl(r.h.job));
		EXPECT_EQ((uint32_t)c, ntohl(r.h.seq));
		EXPECT_EQ(77U, ntohl(r.h.sender));
		EXPECT_EQ(4U, ntohl(r.h.nworkers));
		EXPECT_EQ(IA_F_MARK, r.h.flags);
		for (i = 0; i < 10; i++)
			EXPECT_EQ(11100U + 3 * i, le32toh(r.v[i]));
	}
	/* Complete: more from switch 5 would exceed 4 workers... but it is late. */
	len = msg_make(&m, IA_MSG_CONTRIB, 3, 0, 0, 1, 10, 555);
	m.h.flags = IA_F_RETX;
	ASSERT_EQ(0, send_to(self->fd, "127.0.0.1", &m, len));
	ASSERT_EQ(IA_HDR_LEN + 40, recv_msg(self->fd, &r));
	EXPECT_EQ(0U, ntohl(r.h.seq));
	EXPECT_EQ(11100U, le32toh(r.v[0]));

	ASSERT_EQ(0, wait_exit(self->child));
	self->child = 0;
	EXPECT_EQ(0, self->m->ps_rc);
	EXPECT_EQ(4U, self->m->ps.contrib);
	EXPECT_EQ(2U, self->m->ps.agg);
	EXPECT_EQ(2U, self->m->ps.dup);
	EXPECT_EQ(1U, self->m->ps.late);
	EXPECT_EQ(2U, self->m->ps.marks);
	EXPECT_EQ(3U, self->m->ps.results);
	EXPECT_EQ(1U, self->m->ps.drop[IA_PS_DROP_SHORT]);
	EXPECT_EQ(1U, self->m->ps.drop[IA_PS_DROP_VERSION]);
	EXPECT_EQ(1U, self->m->ps.drop[IA_PS_DROP_TYPE]);
	EXPECT_EQ(1U, self->m->ps.drop[IA_PS_DROP_JOB]);
	EXPECT_EQ(2U, self->m->ps.drop[IA_PS_DROP_NELEM]);
	EXPECT_EQ(2U, self->m->ps.drop[IA_PS_DROP_MEMBER]);
	EXPECT_EQ(1U, self->m->ps.drop[IA_PS_DROP_WINDOW]);
	EXPECT_EQ(0U, self->m->ps.drop[IA_PS_DROP_OVER]);
	for (i = 0; i < 20; i++)
		EXPECT_EQ(11100 + 3 * (i % 10), self->m->data[i]);
}

/* Without a member list, nworkers beyond the job's total is dropped as "over". */
TEST_F(lo, ps_over)
{
	struct ia_ps_cfg cfg = {
		.job = 1, .id = 9, .nworkers = 3, .nelem = 4, .chunk = 4,
		.addr = ip4("127.0.0.1"), .down_mode = IA_PS_DOWN_ADDR,
		.down = ip4("127.0.0.2"), .linger_ms = 100,
	};
	struct msg m, r;
	size_t len;

	self->child = ps_start(self->m, &cfg);
	ASSERT_LT(0, self->child);
	len = msg_make(&m, IA_MSG_AGG, 1, 0, 50, 2, 4, 1);
	ASSERT_EQ(0, send_to(self->fd, "127.0.0.1", &m, len));
	len = msg_make(&m, IA_MSG_AGG, 1, 0, 51, 2, 4, 1);		/* 2 + 2 > 3 */
	ASSERT_EQ(0, send_to(self->fd, "127.0.0.1", &m, len));
	len = msg_make(&m, IA_MSG_CONTRIB, 1, 0, 3, 0, 4, 1);		/* nworkers 0 */
	ASSERT_EQ(0, send_to(self->fd, "127.0.0.1", &m, len));
	len = msg_make(&m, IA_MSG_CONTRIB, 1, 0, 3, 1, 4, 10);
	ASSERT_EQ(0, send_to(self->fd, "127.0.0.1", &m, len));
	ASSERT_EQ(IA_HDR_LEN + 16, recv_msg(self->fd, &r));		/* to the down address */
	EXPECT_EQ(11U, le32toh(r.v[0]));
	ASSERT_EQ(0, wait_exit(self->child));
	self->child = 0;
	EXPECT_EQ(1U, self->m->ps.drop[IA_PS_DROP_OVER]);
	EXPECT_EQ(1U, self->m->ps.drop[IA_PS_DROP_MEMBER]);
	EXPECT_EQ(1U, self->m->ps.agg);
	EXPECT_EQ(1U, self->m->ps.contrib);
}

/*
 * Starts a worker in a child on v = 0, 1, .. n - 1 (in shm data, where its
 * result goes); its return code and statistics land in m->w_rc[0], m->w[0].
 */
static pid_t lo_worker_start(struct shm *m, const struct ia_worker_cfg *cfg, size_t n)
{
	pid_t pid = fork();

	if (!pid) {
		struct ia_worker *w;
		int32_t *v = m->data;
		int ret;

		child_init();
		for (size_t i = 0; i < n; i++)
			v[i] = i;
		ret = ia_worker_open(cfg, &w, m->w_err[0], ERRLEN);
		if (!ret)
			ret = ia_worker_run(w, v, v, n, m->w_err[0], ERRLEN);
		if (!ret)
			ia_worker_stats(w, &m->w[0]);
		_exit(ret ? 1 : 0);
	}
	return pid;
}

/* A worker ignores foreign results, counts early and duplicate ones, keeps the right ones. */
TEST_F(lo, worker_validation)
{
	struct ia_worker_cfg cfg = {
		.job = 5, .id = 2, .addr = ip4("127.0.0.3"), .ps = ip4("127.0.0.2"),
		.chunk = 8, .window = 1, .timeout_ms = 2000, .nworkers = 3,
	};
	struct msg m, r;
	size_t len;
	int c, i;

	self->child = lo_worker_start(self->m, &cfg, 24);
	ASSERT_LT(0, self->child);
	/* Answer each chunk only once it arrived: the worker is bound by then. */
	for (c = 0; c < 3; c++) {
		ASSERT_EQ(IA_HDR_LEN + 32, recv_msg(self->fd, &r));
		EXPECT_EQ(IA_MSG_CONTRIB, r.h.type);
		EXPECT_EQ(5U, ntohl(r.h.job));
		EXPECT_EQ((uint32_t)c, ntohl(r.h.seq));
		EXPECT_EQ(2U, ntohl(r.h.sender));
		EXPECT_EQ(1U, ntohl(r.h.nworkers));
		EXPECT_EQ(0, r.h.flags);
		for (i = 0; i < 8; i++)
			EXPECT_EQ((uint32_t)(8 * c + i), le32toh(r.v[i]));
		if (c == 0) {
			len = msg_make(&m, IA_MSG_RESULT, 6, 0, 1, 3, 8, 0);	/* job */
			ASSERT_EQ(0, send_to(self->fd, "127.0.0.3", &m, len));
			len = msg_make(&m, IA_MSG_RESULT, 5, 0, 1, 3, 7, 0);	/* nelem */
			ASSERT_EQ(0, send_to(self->fd, "127.0.0.3", &m, len));
			len = msg_make(&m, IA_MSG_RESULT, 5, 0, 1, 2, 8, 0);	/* nworkers */
			ASSERT_EQ(0, send_to(self->fd, "127.0.0.3", &m, len));
			len = msg_make(&m, IA_MSG_CONTRIB, 5, 0, 1, 3, 8, 0);	/* type */
			ASSERT_EQ(0, send_to(self->fd, "127.0.0.3", &m, len));
			len = msg_make(&m, IA_MSG_RESULT, 5, 2, 1, 3, 8, 0);	/* early */
			ASSERT_EQ(0, send_to(self->fd, "127.0.0.3", &m, len));
		}
		len = msg_make(&m, IA_MSG_RESULT, 5, c, 1, 3, 8, 1000 * (c + 1));
		if (c == 1)
			m.h.flags = IA_F_MARK;
		ASSERT_EQ(0, send_to(self->fd, "127.0.0.3", &m, len));
		ASSERT_EQ(0, send_to(self->fd, "127.0.0.3", &m, len));	/* dup */
	}
	ASSERT_EQ(0, wait_exit(self->child));
	self->child = 0;
	EXPECT_EQ(3U, self->m->w[0].results);
	EXPECT_EQ(3U, self->m->w[0].sent);
	EXPECT_EQ(0U, self->m->w[0].retx);
	EXPECT_EQ(4U, self->m->w[0].bad);
	EXPECT_EQ(1U, self->m->w[0].early);
	EXPECT_EQ(1U, self->m->w[0].marks);
	/* The last dup may arrive after the worker finished. */
	EXPECT_LE(2U, self->m->w[0].dup);
	for (i = 0; i < 24; i++)
		EXPECT_EQ(1000 * (i / 8 + 1) + i % 8, self->m->data[i]);
}

/*
 * A lost chunk is resent alone: results for chunks 1..3 but not 0 get
 * exactly chunk 0 back, flagged RETX (chunks 1..3 never), and once 0 has its
 * result the worker sends the next full window (4..7) at once.
 */
TEST_F(lo, worker_resends_only_lost_chunk)
{
	struct ia_worker_cfg cfg = {
		.job = 5, .id = 2, .addr = ip4("127.0.0.3"), .ps = ip4("127.0.0.2"),
		.chunk = 8, .window = 4, .timeout_ms = 2000,
	};
	bool answered[12] = { false };
	struct msg m, r;
	uint32_t seq;
	size_t len;
	int i;

	self->child = lo_worker_start(self->m, &cfg, 96);
	ASSERT_LT(0, self->child);
	/* The first window, 0..3, in order and fresh. */
	for (i = 0; i < 4; i++) {
		ASSERT_EQ(IA_HDR_LEN + 32, recv_msg(self->fd, &r));
		EXPECT_EQ((uint32_t)i, ntohl(r.h.seq));
		EXPECT_EQ(0, r.h.flags & IA_F_RETX);
	}
	for (i = 1; i < 4; i++) {
		len = msg_make(&m, IA_MSG_RESULT, 5, i, 1, 1, 8, 100 * i);
		ASSERT_EQ(0, send_to(self->fd, "127.0.0.3", &m, len));
		answered[i] = true;
	}
	/* Only chunk 0 comes again (the window cannot move past it). */
	ASSERT_EQ(IA_HDR_LEN + 32, recv_msg(self->fd, &r));
	EXPECT_EQ(0U, ntohl(r.h.seq));
	EXPECT_EQ(IA_F_RETX, r.h.flags & IA_F_RETX);
	len = msg_make(&m, IA_MSG_RESULT, 5, 0, 1, 1, 8, 0);
	ASSERT_EQ(0, send_to(self->fd, "127.0.0.3", &m, len));
	answered[0] = true;
	/* The whole next window, before any other result; stale resends of 0..3 aside. */
	for (i = 4; i < 8;) {
		ASSERT_EQ(IA_HDR_LEN + 32, recv_msg(self->fd, &r));
		seq = ntohl(r.h.seq);
		if (seq < 4) {
			EXPECT_TRUE(r.h.flags & IA_F_RETX);
			continue;
		}
		EXPECT_EQ((uint32_t)i, seq);
		EXPECT_EQ(0, r.h.flags & IA_F_RETX);
		i++;
	}
	/* Then answer 4..7, and whatever comes next until the worker is done. */
	for (i = 4; i < 8; i++) {
		len = msg_make(&m, IA_MSG_RESULT, 5, i, 1, 1, 8, 100 * i);
		ASSERT_EQ(0, send_to(self->fd, "127.0.0.3", &m, len));
		answered[i] = true;
	}
	while (!answered[8] || !answered[9] || !answered[10] || !answered[11]) {
		ASSERT_EQ(IA_HDR_LEN + 32, recv_msg(self->fd, &r));
		seq = ntohl(r.h.seq);
		if (seq < 12) {
			len = msg_make(&m, IA_MSG_RESULT, 5, seq, 1, 1, 8, 100 * seq);
			ASSERT_EQ(0, send_to(self->fd, "127.0.0.3", &m, len));
			answered[seq] = true;
		}
	}
	ASSERT_EQ(0, wait_exit(self->child)) TH_LOG("%s", self->m->w_err[0]);
	self->child = 0;
	EXPECT_EQ(12U, self->m->w[0].results);
	EXPECT_LE(1U, self->m->w[0].retx);
	for (i = 0; i < 96; i++)
		EXPECT_EQ(100 * (i / 8) + i % 8, self->m->data[i]);
}

/*
 * Recovery is pipelined: with no result at all, the newest open chunk and
 * the first are resent first, and after the backstop every open chunk is
 * resent by its own timer, not only the one the window waits for (which made 10 % loss
 * cost one timeout per chunk); and a chunk whose timer fired while other
 * results kept coming is resent again soon, not after a growing wait.
 */
TEST_F(lo, worker_resends_every_open_chunk)
{
	struct ia_worker_cfg cfg = {
		.job = 5, .id = 2, .addr = ip4("127.0.0.3"), .ps = ip4("127.0.0.2"),
		.chunk = 8, .window = 4, .timeout_ms = 20,
	};
	bool resent[4] = { false };
	int nresent = 0, zero = 0;
	struct msg m, r;
	uint32_t seq;
	size_t len;
	int i;

	self->child = lo_worker_start(self->m, &cfg, 32);
	ASSERT_LT(0, self->child);
	for (i = 0; i < 4; i++) {
		ASSERT_EQ(IA_HDR_LEN + 32, recv_msg(self->fd, &r));
		EXPECT_EQ((uint32_t)i, ntohl(r.h.seq));
		EXPECT_EQ(0, r.h.flags & IA_F_RETX);
	}
	/*
	 * Nothing answered: all four come again, first the newest (the probe)
	 * and the one the window waits for, the others after the backstop.
	 */
	while (nresent < 4) {
		ASSERT_EQ(IA_HDR_LEN + 32, recv_msg(self->fd, &r));
		seq = ntohl(r.h.seq);
		ASSERT_GT(4U, seq);
		if (nresent < 2 && !resent[seq])
			EXPECT_TRUE(seq == 0 || seq == 3) TH_LOG("chunk %u resent before the backstop", seq);
		EXPECT_TRUE(r.h.flags & IA_F_RETX);
		nresent += !resent[seq];
		resent[seq] = true;
	}
	/* Answer 1..3, never 0: 0 keeps coming, and the worker does not give up. */
	for (i = 1; i < 4; i++) {
		len = msg_make(&m, IA_MSG_RESULT, 5, i, 1, 1, 8, 100 * i);
		ASSERT_EQ(0, send_to(self->fd, "127.0.0.3", &m, len));
	}
	while (zero < 3) {
		ASSERT_EQ(IA_HDR_LEN + 32, recv_msg(self->fd, &r));
		zero += ntohl(r.h.seq) == 0;
	}
	len = msg_make(&m, IA_MSG_RESULT, 5, 0, 1, 1, 8, 0);
	ASSERT_EQ(0, send_to(self->fd, "127.0.0.3", &m, len));
	ASSERT_EQ(0, wait_exit(self->child)) TH_LOG("%s", self->m->w_err[0]);
	self->child = 0;
	EXPECT_EQ(4U, self->m->w[0].results);
	EXPECT_LE(4U + 3U, self->m->w[0].retx);
	EXPECT_LE(4U + 3U, self->m->w[0].timeouts);
	for (i = 0; i < 32; i++)
		EXPECT_EQ(100 * (i / 8) + i % 8, self->m->data[i]);
}

/*
 * Chunks the worker sends right after a first window of 8 results, all
 * marked, under a window policy: the rest of the test answers nothing.
 */
static int sent_after_marked_window(struct __test_metadata *_metadata, FIXTURE_DATA(lo) *self,
				    enum ia_cc_policy policy)
{
	struct ia_worker_cfg cfg = {
		.job = 5, .id = 2, .addr = ip4("127.0.0.3"), .ps = ip4("127.0.0.2"),
		.chunk = 8, .window = 8, .timeout_ms = 2000, .cc = policy,
	};
	struct timeval tv = { .tv_usec = 300000 }, tv3 = { .tv_sec = 3 };
	struct msg m, r;
	int i, n = 0;
	size_t len;

	self->child = lo_worker_start(self->m, &cfg, 8 * 32);
	if (self->child <= 0)
		return -1;
	for (i = 0; i < 8; i++) {
		EXPECT_EQ(IA_HDR_LEN + 32, recv_msg(self->fd, &r));
		EXPECT_EQ((uint32_t)i, ntohl(r.h.seq));
	}
	for (i = 0; i < 8; i++) {
		len = msg_make(&m, IA_MSG_RESULT, 5, i, 1, 1, 8, 0);
		m.h.flags = IA_F_MARK;
		EXPECT_EQ(0, send_to(self->fd, "127.0.0.3", &m, len));
	}
	setsockopt(self->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	while (recv_msg(self->fd, &r) > 0) {
		EXPECT_EQ(0, r.h.flags & IA_F_RETX);
		n++;
	}
	setsockopt(self->fd, SOL_SOCKET, SO_RCVTIMEO, &tv3, sizeof(tv3));
	kill(self->child, SIGKILL);
	waitpid(self->child, NULL, 0);
	self->child = 0;
	return n;
}

/*
 * The worker's window follows the job's policy (user/lib/cc.c): under
 * fixed, marks change nothing and the next window is the whole 8; under
 * atp, the first marked result halves it, so only 4 more go out.
 */
TEST_F(lo, worker_window_follows_policy)
{
	EXPECT_EQ(8, sent_after_marked_window(_metadata, self, IA_CC_FIXED));
	EXPECT_EQ(4, sent_after_marked_window(_metadata, self, IA_CC_ATP));
}

/* No PS: the worker retransmits a bounded number of times, then says so. */
TEST_F(lo, worker_gives_up)
{
	struct ia_worker_cfg cfg = {
		.job = 1, .id = 0, .addr = ip4("127.0.0.3"), .ps = ip4("127.0.0.9"),
		.window = 4, .timeout_ms = 20, .retries = 3,
	};
	struct ia_worker_stats st;
	struct ia_worker *w;
	char err[ERRLEN] = "";
	int32_t v[300] = { 0 };

	ASSERT_EQ(0, ia_worker_open(&cfg, &w, err, sizeof(err))) TH_LOG("%s", err);
	EXPECT_EQ(-ETIMEDOUT, ia_worker_run(w, v, v, 300, err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "no result after 3 retransmissions")) TH_LOG("%s", err);
	ia_worker_stats(w, &st);
	EXPECT_EQ(0U, st.results);
	/* A chunk gave up first: 2 chunks x (1 + 3) sends at most. */
	EXPECT_LE(4U, st.sent);
	EXPECT_GE(8U, st.sent);
	EXPECT_LE(3U, st.retx);
	ia_worker_close(w);
}

/* Float vectors through a PS and 3 workers: the sum within N * 2^-(frac+1). */
TEST_F(lo, float_allreduce)
{
	enum { N = 3, LEN = 1000 };
	struct ia_ps_cfg pc = {
		.job = 11, .id = 50, .nworkers = N, .nelem = LEN,
		.addr = ip4("127.0.0.1"), .down_mode = IA_PS_DOWN_UNICAST, .linger_ms = 300,
	};
	double x[N][LEN], sum[LEN], got[LEN];
	pid_t pid[N];
	int frac, i, k;

	for (k = 0; k < N; k++)
		for (i = 0; i < LEN; i++)
			x[k][i] = ia_host_rand(k, i) / 2147483648.0 * 1000.0;	/* |x| < 1000 */
	frac = ia_fx_frac_for(1000.0, N);
	ASSERT_EQ(19, frac);
	self->child = ps_start(self->m, &pc);
	ASSERT_LT(0, self->child);
	for (k = 0; k < N; k++) {
		pid[k] = fork();
		ASSERT_LE(0, pid[k]);
		if (!pid[k]) {
			struct ia_worker_cfg wc = { .job = 11, .id = k, .ps = ip4("127.0.0.1") };
			int32_t *s = w_result(self->m, LEN, k);
			struct ia_worker *w;
			char ip[32];
			int ret;

			child_init();
			snprintf(ip, sizeof(ip), "127.0.0.%d", 10 + k);
			wc.addr = ip4(ip);
			if (ia_fx_encode_vec(x[k], s, LEN, frac))
				_exit(3);
			ret = ia_worker_open(&wc, &w, self->m->w_err[k], ERRLEN);
			if (!ret)
				ret = ia_worker_run(w, s, s, LEN, self->m->w_err[k], ERRLEN);
			_exit(ret ? 1 : 0);
		}
	}
	for (k = 0; k < N; k++)
		EXPECT_EQ(0, wait_exit(pid[k])) TH_LOG("worker %d: %s", k, self->m->w_err[k]);
	ASSERT_EQ(0, wait_exit(self->child));
	self->child = 0;
	for (i = 0; i < LEN; i++)
		sum[i] = x[0][i] + x[1][i] + x[2][i];
	for (k = 0; k < N; k++) {
		ia_fx_decode_vec(w_result(self->m, LEN, k), got, LEN, frac);
		for (i = 0; i < LEN; i++)
			if (fabs(got[i] - sum[i]) > N * ldexp(0.5, -frac) + 1e-12)
				break;
		EXPECT_EQ(LEN, i) TH_LOG("worker %d element %d: %.9f, want %.9f", k, i,
					 got[i], sum[i]);
	}
}

/* Namespaces of a test killed before its teardown (test_harness_run() exits). */
static void cleanup_at_exit(void)
{
	if (getpid() == main_pid)
		ns_cleanup(main_pid, 0);
}

int main(int argc, char **argv)
{
	main_pid = getpid();
	atexit(cleanup_at_exit);
	return test_harness_run(argc, argv);
}
