// SPDX-License-Identifier: GPL-2.0
/*
 * libinagg's stable API (include/inagg/api.h) on loopback: a PS and workers
 * as threads on addresses 127.X.Y.Z of their own and a port of this process,
 * so that parallel runs do not meet. Exact int32 and int64 sums over several
 * calls, the call check between workers, and every error the API promises:
 * bad arguments, timeout, refusal by a daemon (a fake one here), a full
 * stream, an address that is not on this host.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#pragma GCC diagnostic ignored "-Wsign-compare"
#include "kselftest_harness.h"
#include "inagg/api.h"
#include "ctl.h"
#include "err.h"

#define MAXW 4

struct net {
	char ps[32], w[MAXW][32];
	uint16_t port;
	struct ia_api *psh;
	volatile int stop;
	int ps_ret;
	pthread_t ps_thread;
	char err[IA_API_ERRLEN];
};

static void *serve(void *arg)
{
	struct net *n = arg;

	n->ps_ret = ia_api_ps_serve(n->psh, &n->stop, n->err, sizeof(n->err));
	return NULL;
}

/* Addresses 127.(pid)... and a port of this process; a PS serving nworkers (unicast). */
static int net_up(struct net *n, uint32_t job, int nworkers, uint64_t capacity)
{
	unsigned int p = getpid();
	char err[IA_API_ERRLEN];
	int ret;

	memset(n, 0, sizeof(*n));
	n->port = 20000 + p % 40000;
	snprintf(n->ps, sizeof(n->ps), "127.%u.%u.1", (p >> 8) & 0xff, p & 0xff);
	for (int i = 0; i < MAXW; i++)
		snprintf(n->w[i], sizeof(n->w[i]), "127.%u.%u.%d", (p >> 8) & 0xff, p & 0xff,
			 10 + i);
	ret = ia_api_ps_open(job, nworkers, n->ps, NULL, n->port, &n->psh, err, sizeof(err));
	if (!ret && capacity)
		ret = ia_api_set(n->psh, IA_API_OPT_CAPACITY, capacity, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "# %s\n", err);
		return ret;
	}
	return pthread_create(&n->ps_thread, NULL, serve, n) ? -EAGAIN : 0;
}

static int net_down(struct net *n)
{
	n->stop = 1;
	pthread_join(n->ps_thread, NULL);
	ia_api_close(n->psh);
	return n->ps_ret;
}

/* One worker's calls: each of ncalls vectors (i32 or i64) of the lengths given. */
struct wjob {
	struct net *net;
	struct ia_api *h;
	int id, ncalls;
	const uint64_t *len;
	bool i64;
	void **vec;
	int ret;
	char err[IA_API_ERRLEN];
};

static void *work(void *arg)
{
	struct wjob *w = arg;

	for (int c = 0; c < w->ncalls && !w->ret; c++)
		w->ret = w->i64 ? ia_api_allreduce_i64(w->h, w->vec[c], w->len[c], w->err,
						       sizeof(w->err)) :
				  ia_api_allreduce_i32(w->h, w->vec[c], w->len[c], w->err,
						       sizeof(w->err));
	return NULL;
}

static int open_worker(struct net *n, uint32_t job, int id, int nworkers, struct ia_api **h)
{
	char err[IA_API_ERRLEN];
	int ret = ia_api_worker_open(job, id, nworkers, n->w[id], n->ps, n->port, h, err,
				     sizeof(err));

	if (!ret)
		ret = ia_api_set(*h, IA_API_OPT_TIMEOUT_MS, 20, err, sizeof(err));
	if (ret)
		fprintf(stderr, "# %s\n", err);
	return ret;
}

/* Runs every worker's calls in threads; each one's result stays in its vectors. */
static void run_workers(struct net *n, struct wjob *w, int nworkers)
{
	pthread_t t[MAXW];

	for (int i = 0; i < nworkers; i++)
		pthread_create(&t[i], NULL, work, &w[i]);
	for (int i = 0; i < nworkers; i++)
		pthread_join(t[i], NULL);
}

static uint64_t rng = 13;

TEST(version)
{
	EXPECT_EQ(IA_API_VERSION, ia_api_version());
}

TEST(i32_sums_exact_over_calls_of_every_length)
{
	static const uint64_t len[] = { 1, 254, 255, 256, 257, 10000, 3 };
	const int nw = 3, ncalls = sizeof(len) / sizeof(len[0]);
	struct wjob w[MAXW] = { 0 };
	struct net n;

	ASSERT_EQ(0, net_up(&n, 7, nw, 0));
	for (int i = 0; i < nw; i++) {
		ASSERT_EQ(0, open_worker(&n, 7, i, nw, &w[i].h));
		w[i] = (struct wjob){ .net = &n, .h = w[i].h, .id = i, .ncalls = ncalls,
				      .len = len, .vec = calloc(ncalls, sizeof(void *)) };
		for (int c = 0; c < ncalls; c++) {
			int32_t *v = malloc(len[c] * sizeof(*v));

			for (uint64_t e = 0; e < len[c]; e++)
				v[e] = (int32_t)ia_splitmix64(&rng);	/* full range: sums wrap */
			w[i].vec[c] = v;
		}
	}
	/* The expected sums, modulo 2^32, before the calls overwrite the vectors. */
	uint32_t *want[16];

	for (int c = 0; c < ncalls; c++) {
		want[c] = calloc(len[c], sizeof(uint32_t));
		for (int i = 0; i < nw; i++)
			for (uint64_t e = 0; e < len[c]; e++)
				want[c][e] += (uint32_t)((int32_t *)w[i].vec[c])[e];
	}
	run_workers(&n, w, nw);
	for (int i = 0; i < nw; i++) {
		EXPECT_EQ(0, w[i].ret) TH_LOG("worker %d: %s", i, w[i].err);
		for (int c = 0; c < ncalls; c++) {
			EXPECT_EQ(0, memcmp(want[c], w[i].vec[c], len[c] * 4))
				TH_LOG("worker %d call %d", i, c);
		}
		ia_api_close(w[i].h);
	}
	EXPECT_EQ(0, net_down(&n)) TH_LOG("%s", n.err);
}

TEST(i64_sums_exact_at_the_extremes)
{
	static const uint64_t len[] = { 5, 700 };
	const int nw = 4, ncalls = 2;
	struct wjob w[MAXW] = { 0 };
	struct net n;
	uint64_t want[2][700] = { { 0 } };

	ASSERT_EQ(0, net_up(&n, 8, nw, 0));
	for (int i = 0; i < nw; i++) {
		ASSERT_EQ(0, open_worker(&n, 8, i, nw, &w[i].h));
		w[i] = (struct wjob){ .net = &n, .h = w[i].h, .id = i, .ncalls = ncalls,
				      .len = len, .i64 = true,
				      .vec = calloc(ncalls, sizeof(void *)) };
		for (int c = 0; c < ncalls; c++) {
			int64_t *v = malloc(len[c] * sizeof(*v));
			static const int64_t edge[] = { INT64_MIN, INT64_MAX, -1, 0, 1 };

			for (uint64_t e = 0; e < len[c]; e++) {
				v[e] = c == 0 ? edge[e] : (int64_t)ia_splitmix64(&rng);
				want[c][e] += (uint64_t)v[e];
			}
			w[i].vec[c] = v;
		}
	}
	run_workers(&n, w, nw);
	for (int i = 0; i < nw; i++) {
		EXPECT_EQ(0, w[i].ret) TH_LOG("worker %d: %s", i, w[i].err);
		for (int c = 0; c < ncalls; c++) {
			EXPECT_EQ(0, memcmp(want[c], w[i].vec[c], len[c] * 8))
				TH_LOG("worker %d call %d", i, c);
		}
		ia_api_close(w[i].h);
	}
	/* 4 x INT64_MIN wraps to 0, as modulo 2^64 says. */
	EXPECT_EQ(0, want[0][0]);
	EXPECT_EQ(0, net_down(&n)) TH_LOG("%s", n.err);
}

/* Two workers calling with different lengths get -EPROTO, never a sum. */
TEST(workers_disagreeing_on_the_call_are_found)
{
	static const uint64_t len_a[] = { 100 }, len_b[] = { 101 };
	struct wjob w[2] = { 0 };
	int32_t va[101] = { 0 }, vb[101] = { 0 };
	void *pa[] = { va }, *pb[] = { vb };
	struct net n;

	ASSERT_EQ(0, net_up(&n, 9, 2, 0));
	for (int i = 0; i < 2; i++)
		ASSERT_EQ(0, open_worker(&n, 9, i, 2, &w[i].h));
	w[0] = (struct wjob){ .h = w[0].h, .ncalls = 1, .len = len_a, .vec = pa };
	w[1] = (struct wjob){ .h = w[1].h, .ncalls = 1, .len = len_b, .vec = pb };
	run_workers(&n, w, 2);
	for (int i = 0; i < 2; i++) {
		EXPECT_EQ(-EPROTO, w[i].ret) TH_LOG("worker %d: %s", i, w[i].err);
		EXPECT_NE(NULL, strstr(w[i].err, "same length"));
		ia_api_close(w[i].h);
	}
	EXPECT_EQ(0, net_down(&n));
}

TEST(no_ps_is_a_timeout)
{
	struct ia_api *h;
	char err[IA_API_ERRLEN];
	int32_t v[10] = { 0 };
	struct net n;

	ASSERT_EQ(0, net_up(&n, 10, 1, 0));
	ASSERT_EQ(0, net_down(&n));	/* nobody serves the job any more */
	ASSERT_EQ(0, open_worker(&n, 10, 0, 1, &h));
	ASSERT_EQ(0, ia_api_set(h, IA_API_OPT_RETRIES, 2, err, sizeof(err)));
	ASSERT_EQ(0, ia_api_set(h, IA_API_OPT_TIMEOUT_MS, 5, err, sizeof(err)));
	EXPECT_EQ(-ETIMEDOUT, ia_api_allreduce_i32(h, v, 10, err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "no result")) TH_LOG("%s", err);
	ia_api_close(h);
}

TEST(full_stream_is_enospc)
{
	struct ia_api *h;
	char err[IA_API_ERRLEN];
	int32_t v[600] = { 0 };
	struct net n;

	ASSERT_EQ(0, net_up(&n, 11, 1, 1024));
	ASSERT_EQ(0, open_worker(&n, 11, 0, 1, &h));
	ASSERT_EQ(0, ia_api_set(h, IA_API_OPT_CAPACITY, 1024, err, sizeof(err)));
	/* 1 + 600 elements: 3 of the stream's 4 chunks; the next call needs 3 more. */
	ASSERT_EQ(0, ia_api_allreduce_i32(h, v, 600, err, sizeof(err))) TH_LOG("%s", err);
	EXPECT_EQ(-ENOSPC, ia_api_allreduce_i32(h, v, 600, err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "submit a new job")) TH_LOG("%s", err);
	/* The capacity is fixed once the stream is in use. */
	EXPECT_EQ(-EINVAL, ia_api_set(h, IA_API_OPT_CAPACITY, 2048, err, sizeof(err)));
	ia_api_close(h);
	EXPECT_EQ(0, net_down(&n));
}

TEST(bad_arguments)
{
	char err[IA_API_ERRLEN];
	struct ia_api *h, *ps;
	int32_t v[4] = { 0 };

	EXPECT_EQ(-EINVAL, ia_api_worker_open(0, 0, 1, "127.0.0.1", "127.0.0.1", 0, &h, err,
					      sizeof(err)));
	EXPECT_EQ(NULL, h);
	EXPECT_EQ(-EINVAL, ia_api_worker_open(1, 0, 0, "127.0.0.1", "127.0.0.1", 0, &h, err,
					      sizeof(err)));
	EXPECT_EQ(-EINVAL, ia_api_worker_open(1, 0, 1, "127.0.0", "127.0.0.1", 0, &h, err,
					      sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "127.0.0")) TH_LOG("%s", err);
	EXPECT_EQ(-EINVAL, ia_api_worker_open(1, 0, 1, "127.0.0.1", NULL, 0, &h, err,
					      sizeof(err)));
	ASSERT_EQ(0, ia_api_worker_open(1, 0, 1, "127.0.0.1", "127.0.0.1", 0, &h, err,
					sizeof(err)));
	EXPECT_EQ(-1, ia_api_index(h));
	EXPECT_EQ(1, ia_api_nworkers(h));
	EXPECT_EQ(-EINVAL, ia_api_set(h, IA_API_OPT_RETRIES, 0, err, sizeof(err)));
	EXPECT_EQ(-EINVAL, ia_api_set(h, IA_API_OPT_WINDOW, 5000, err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "window 5000 chunks: use 1..4096 chunks")) TH_LOG("%s", err);
	EXPECT_EQ(0, ia_api_set(h, IA_API_OPT_WINDOW, 4096, err, sizeof(err)));
	EXPECT_EQ(-EINVAL, ia_api_set(h, (enum ia_api_opt)0, 1, err, sizeof(err)));
	EXPECT_EQ(-EINVAL, ia_api_set(h, IA_API_OPT_TIMEOUT_MS, 0, err, sizeof(err)));
	EXPECT_EQ(-EINVAL, ia_api_set(h, IA_API_OPT_CAPACITY, 100, err, sizeof(err)));
	EXPECT_EQ(-EINVAL, ia_api_set(h, (enum ia_api_opt)99, 1, err, sizeof(err)));
	EXPECT_EQ(-EINVAL, ia_api_allreduce_i32(h, v, 0, err, sizeof(err)));
	EXPECT_EQ(-EINVAL, ia_api_allreduce_i32(h, NULL, 4, err, sizeof(err)));
	EXPECT_EQ(-EINVAL, ia_api_allreduce_i32(NULL, v, 4, err, sizeof(err)));
	EXPECT_EQ(-EINVAL, ia_api_ps_serve(h, NULL, err, sizeof(err)));
	ia_api_close(h);
	ASSERT_EQ(0, ia_api_ps_open(1, 2000, "127.0.0.1", NULL, 0, &ps, err, sizeof(err)));
	EXPECT_EQ(-EINVAL, ia_api_allreduce_i32(ps, v, 4, err, sizeof(err)));
	ia_api_close(ps);
	/* int64 sums are exact only while their unsigned lanes cannot carry out. */
	ASSERT_EQ(0, ia_api_worker_open(1, 0, IA_API_I64_MAX_WORKERS + 1, "127.0.0.1",
					"127.0.0.1", 0, &h, err, sizeof(err)));
	EXPECT_EQ(-EINVAL, ia_api_allreduce_i64(h, (int64_t *)v, 2, err, sizeof(err)));
	ia_api_close(h);
}

TEST(address_not_here)
{
	char err[IA_API_ERRLEN];
	struct ia_api *h;
	int32_t v[4] = { 0 };

	/* TEST-NET-1 (RFC 5737): never a local address. */
	ASSERT_EQ(0, ia_api_worker_open(1, 0, 1, "192.0.2.7", "192.0.2.1", 0, &h, err,
					sizeof(err)));
	EXPECT_EQ(-EADDRNOTAVAIL, ia_api_allreduce_i32(h, v, 4, err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "not on this host")) TH_LOG("%s", err);
	ia_api_close(h);
}

/* A fake daemon answering one request per connection with a fixed answer. */
struct fake {
	char path[108];
	const char *answer;
	int fd, conns;
	pthread_t t;
};

static void *fake_serve(void *arg)
{
	struct fake *f = arg;

	for (int i = 0; i < f->conns; i++) {
		int c = accept(f->fd, NULL, NULL);
		json_object *req;

		if (c < 0)
			break;
		if (!ia_ctl_read(c, &req))
			json_object_put(req);
		if (write(c, f->answer, strlen(f->answer)) < 0)
			perror("write");
		close(c);
	}
	return NULL;
}

static void fake_up(struct fake *f, const char *answer, int conns)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };

	snprintf(f->path, sizeof(f->path), "/tmp/inagg-api-test-%d.sock", getpid());
	unlink(f->path);
	strcpy(sa.sun_path, f->path);
	f->answer = answer;
	f->conns = conns;
	f->fd = socket(AF_UNIX, SOCK_STREAM, 0);
	if (bind(f->fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(f->fd, 4))
		perror("fake daemon");
	pthread_create(&f->t, NULL, fake_serve, f);
}

static void fake_down(struct fake *f)
{
	pthread_join(f->t, NULL);
	close(f->fd);
	unlink(f->path);
}

TEST(join_refused)
{
	char err[IA_API_ERRLEN];
	struct ia_api *h;
	struct fake f;

	EXPECT_EQ(-ECONNREFUSED, ia_api_worker_join("/tmp/inagg-api-no-such.sock", 3, 0, &h, err,
						    sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "cannot reach inaggd")) TH_LOG("%s", err);
	EXPECT_EQ(-EINVAL, ia_api_worker_join("/tmp/x.sock", 0, 0, &h, err, sizeof(err)));

	fake_up(&f, "{\"ok\": false, \"error\": \"no job 3\"}\n", 2);
	EXPECT_EQ(-ECONNREFUSED, ia_api_worker_join(f.path, 3, 0, &h, err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "no job 3")) TH_LOG("%s", err);
	EXPECT_EQ(-ECONNREFUSED, ia_api_ps_join(f.path, 3, &h, err, sizeof(err)));
	EXPECT_EQ(NULL, h);
	fake_down(&f);

	fake_up(&f, "{\"ok\": true, \"job\": {\"job\": 3, \"state\": \"ending\"}}\n", 1);
	EXPECT_EQ(-ECONNREFUSED, ia_api_worker_join(f.path, 3, 0, &h, err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "ending, not active")) TH_LOG("%s", err);
	fake_down(&f);
}

TEST(join_active_job)
{
	static const char answer[] =
		"{\"ok\": true, \"job\": {\"job\": 3, \"state\": \"active\", \"nworkers\": 2,"
		" \"worker_window\": 32, \"destination\": {\"netns\": \"ia-x-dest\","
		" \"address\": \"10.64.0.1\", \"down\": \"10.64.0.2\"},"
		" \"workers\": [{\"id\": 5, \"netns\": \"ia-x-s1-w0\", \"address\": \"10.128.0.2\"},"
		" {\"id\": 6, \"netns\": \"ia-x-s1-w1\", \"address\": \"192.0.2.9\"}]}}\n";
	char err[IA_API_ERRLEN];
	int32_t v[4] = { 0 };
	struct ia_api *h;
	struct fake f;

	fake_up(&f, answer, 3);
	EXPECT_EQ(-EINVAL, ia_api_worker_join(f.path, 3, 2, &h, err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "workers 0..1")) TH_LOG("%s", err);
	ASSERT_EQ(0, ia_api_worker_join(f.path, 3, 1, &h, err, sizeof(err))) TH_LOG("%s", err);
	EXPECT_EQ(1, ia_api_index(h));
	EXPECT_EQ(2, ia_api_nworkers(h));
	/* Not in that worker's namespace: the message says where to run. */
	EXPECT_EQ(-EADDRNOTAVAIL, ia_api_allreduce_i32(h, v, 4, err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "ia-x-s1-w1")) TH_LOG("%s", err);
	ia_api_close(h);
	ASSERT_EQ(0, ia_api_ps_join(f.path, 3, &h, err, sizeof(err))) TH_LOG("%s", err);
	EXPECT_EQ(2, ia_api_nworkers(h));
	EXPECT_EQ(-1, ia_api_index(h));
	ia_api_close(h);
	fake_down(&f);
}

/*
 * A daemon that answers "show" with a record and "window" with ok, and
 * counts each worker's window reports (by "worker", 1 or 2) and keeps the
 * last one's value.
 */
struct dfake {
	char path[108];
	const char *record;
	int fd, windows[3], last[3], bad;
	volatile int stop;
	pthread_t t;
};

static void *dfake_serve(void *arg)
{
	struct dfake *f = arg;

	while (!f->stop) {
		struct timeval tv = { 0, 20000 };
		json_object *req, *o;
		fd_set fds;
		int c;

		FD_ZERO(&fds);
		FD_SET(f->fd, &fds);
		if (select(f->fd + 1, &fds, NULL, NULL, &tv) != 1)
			continue;
		c = accept(f->fd, NULL, NULL);
		if (c < 0)
			continue;
		if (!ia_ctl_read(c, &req)) {
			bool win = json_object_object_get_ex(req, "cmd", &o) &&
				   !strcmp(json_object_get_string(o), "window");
			const char *a = win ? "{\"ok\": true}\n" : f->record;
			int w = -1;

			if (win && json_object_object_get_ex(req, "worker", &o))
				w = json_object_get_int(o);
			if (win && (w < 1 || w > 2))
				f->bad++;
			else if (win && json_object_object_get_ex(req, "window", &o)) {
				f->last[w] = json_object_get_int(o);
				f->windows[w]++;
			}
			if (write(c, a, strlen(a)) < 0)
				perror("write");
			json_object_put(req);
		}
		close(c);
	}
	return NULL;
}

/* Worker index of job 7, joined through the fake daemon, all-reduces once. */
struct jw {
	const char *sock;
	int index, ret;
	int32_t v[1 << 15];
	char err[IA_API_ERRLEN];
};

static void *join_work(void *arg)
{
	struct jw *w = arg;
	struct ia_api *h = NULL;

	w->ret = ia_api_worker_join(w->sock, 7, w->index, &h, w->err, sizeof(w->err));
	for (size_t i = 0; !w->ret && i < sizeof(w->v) / sizeof(w->v[0]); i++)
		w->v[i] = i;
	if (!w->ret)
		w->ret = ia_api_allreduce_i32(h, w->v, sizeof(w->v) / sizeof(w->v[0]), w->err,
					      sizeof(w->err));
	ia_api_close(h);
	return NULL;
}

/*
 * A two-worker job of class klass joined through the fake daemon and
 * all-reduced once, on addresses 127.X.Y.* from this process's id and off.
 */
static int join_and_reduce_at(const char *klass, struct dfake *f, unsigned int off)
{
	char rec[1024], ps[32], w0[32], w1[32], err[IA_API_ERRLEN];
	unsigned int p = getpid() + off;
	struct ia_api *psh = NULL;
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	static struct jw w[2];
	pthread_t t[2];
	struct net n = { 0 };
	int ret;

	snprintf(ps, sizeof(ps), "127.%u.%u.1", (p >> 8) & 0xff, p & 0xff);
	snprintf(w0, sizeof(w0), "127.%u.%u.10", (p >> 8) & 0xff, p & 0xff);
	snprintf(w1, sizeof(w1), "127.%u.%u.11", (p >> 8) & 0xff, p & 0xff);
	snprintf(rec, sizeof(rec),
		 "{\"ok\": true, \"job\": {\"job\": 7, \"state\": \"active\", \"nworkers\": 2,"
		 " \"class\": \"%s\", \"cc\": \"atp\", \"worker_window\": 32,"
		 " \"destination\": {\"address\": \"%s\", \"down\": \"%s\"},"
		 " \"workers\": [{\"id\": 1, \"address\": \"%s\"},"
		 " {\"id\": 2, \"address\": \"%s\"}]}}\n", klass, ps, ps, w0, w1);
	memset(f, 0, sizeof(*f));
	snprintf(f->path, sizeof(f->path), "/tmp/inagg-api-report-%d.sock", getpid());
	unlink(f->path);
	strcpy(sa.sun_path, f->path);
	f->record = rec;
	f->fd = socket(AF_UNIX, SOCK_STREAM, 0);
	if (f->fd < 0 || bind(f->fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(f->fd, 8) ||
	    pthread_create(&f->t, NULL, dfake_serve, f))
		return -errno;
	ret = ia_api_ps_open(7, 2, ps, NULL, 0, &psh, err, sizeof(err));
	n.psh = psh;
	if (!ret)
		ret = pthread_create(&n.ps_thread, NULL, serve, &n) ? -EAGAIN : 0;
	for (int i = 0; i < 2; i++) {
		memset(&w[i], 0, sizeof(w[i]));
		w[i].sock = f->path;
		w[i].index = i;
		if (!ret)
			pthread_create(&t[i], NULL, join_work, &w[i]);
	}
	for (int i = 0; i < 2 && !ret; i++)
		pthread_join(t[i], NULL);
	for (int i = 0; i < 2 && !ret; i++) {
		ret = w[i].ret;
		if (ret)
			fprintf(stderr, "# worker %d: %s\n", i, w[i].err);
	}
	if (psh)
		ret = net_down(&n) ?: ret;
	f->stop = 1;
	pthread_join(f->t, NULL);
	close(f->fd);
	unlink(f->path);
	return ret;
}

/* The same, elsewhere if another process has those addresses on the default port. */
static int join_and_reduce(const char *klass, struct dfake *f)
{
	int ret = -EADDRINUSE;

	for (unsigned int off = 77; ret == -EADDRINUSE && off < 77 + 4 * 7919; off += 7919)
		ret = join_and_reduce_at(klass, f, off);
	return ret;
}

/*
 * Every worker of an INA job, joined through the daemon, reports its
 * window to it while it all-reduces, naming itself, and the call's end as
 * window 0; a PS job's workers do not.
 */
TEST(ina_workers_report_their_windows)
{
	struct dfake f;

	ASSERT_EQ(0, join_and_reduce("ina", &f));
	EXPECT_EQ(0, f.bad);
	for (int i = 1; i <= 2; i++) {
		EXPECT_LE(2, f.windows[i]) TH_LOG("worker %d: %d reports", i, f.windows[i]);
		EXPECT_EQ(0, f.last[i]);
	}
	ASSERT_EQ(0, join_and_reduce("ps", &f));
	EXPECT_EQ(0, f.windows[1] + f.windows[2] + f.bad);
}

TEST_HARNESS_MAIN
