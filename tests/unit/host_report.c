// SPDX-License-Identifier: GPL-2.0
/*
 * An INA job's worker reports its link window to inaggd while it runs
 * (host_report.h, docs/cc.md "Window reports"): a fake daemon on a UNIX
 * socket records the reports of a worker whose results a fake PS marks
 * (atp cuts), on loopback; and a run stopped before its reporter looked.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/socket.h>
#include <sys/un.h>

#pragma GCC diagnostic ignored "-Wsign-compare"
#include "kselftest_harness.h"
#include "ctl.h"
#include "host.h"
#include "host_io.h"
#include "host_report.h"
#include "host_rig.h"
#include "job_lend.h"

#define JOB	43
#define NE	4
#define CHUNKS	160
#define WMAX	16
#define MAXREP	256

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/*
 * A PS answering each contribution 1 ms (or delay_us) later, marking chunks
 * 32..95 with seq % 4 == 0.
 */
struct slow_ps {
	int fd;
	uint32_t answered;
	uint32_t delay_us;
};

static void *ps_thread_slow(void *arg)
{
	uint8_t buf[IA_IO_MSG_MAX] __attribute__((aligned(4)));
	struct slow_ps *f = arg;
	struct sockaddr_in from;
	socklen_t fl;
	ssize_t n;

	while (f->answered < CHUNKS) {
		struct pollfd p = { f->fd, POLLIN, 0 };
		struct ia_hdr *h = (struct ia_hdr *)buf;
		uint32_t seq;

		if (poll(&p, 1, 5000) != 1)
			break;
		fl = sizeof(from);
		n = recvfrom(f->fd, buf, sizeof(buf), 0, (struct sockaddr *)&from, &fl);
		if (n < IA_HDR_LEN || h->type != IA_MSG_CONTRIB)
			continue;
		seq = ntohl(h->seq);
		usleep(f->delay_us ? f->delay_us : 1000);
		h->type = IA_MSG_RESULT;
		/*
		 * Every result of a stretch marked: ATP (as published) reacts only
		 * when the result that closes its window is, wherever the window is.
		 */
		h->flags = seq >= 32 && seq < 96 ? IA_F_MARK : 0;
		if (sendto(f->fd, buf, n, 0, (struct sockaddr *)&from, fl) == n)
			f->answered++;
	}
	return NULL;
}

/*
 * A daemon that answers "window" requests (or refuses them) and records
 * them; with late_ms, it answers the first one only that much later.
 */
struct fake_d {
	int fd;
	char path[108];
	bool refuse;
	uint32_t late_ms;
	volatile int stop;
	int n, bad;
	uint32_t win[MAXREP];
	uint32_t worker[MAXREP];
	uint64_t at[MAXREP];
};

static void *daemon_thread(void *arg)
{
	struct fake_d *d = arg;

	while (!d->stop) {
		struct pollfd p = { d->fd, POLLIN, 0 };
		json_object *req, *o, *reply;
		int c;

		if (poll(&p, 1, 20) != 1)
			continue;
		c = accept(d->fd, NULL, NULL);
		if (c < 0)
			continue;
		if (!ia_ctl_read(c, &req)) {
			bool ok = json_object_object_get_ex(req, "cmd", &o) &&
				  !strcmp(json_object_get_string(o), "window") &&
				  json_object_object_get_ex(req, "job", &o) &&
				  json_object_get_int64(o) == JOB &&
				  json_object_object_get_ex(req, "window", &o);

			if (ok && d->n < MAXREP) {
				d->win[d->n] = json_object_get_int64(o);
				d->worker[d->n] = json_object_object_get_ex(req, "worker", &o) ?
							  json_object_get_int64(o) : 0;
				d->at[d->n++] = now_ns();
			}
			d->bad += !ok;
			if (d->n == 1 && d->late_ms)
				usleep(d->late_ms * 1000);
			reply = json_object_new_object();
			json_object_object_add(reply, "ok", json_object_new_boolean(!d->refuse));
			if (d->refuse)
				json_object_object_add(reply, "error",
						       json_object_new_string("job 43 is ps"));
			ia_ctl_write(c, reply);
			json_object_put(reply);
			json_object_put(req);
		}
		close(c);
	}
	return NULL;
}

FIXTURE(rep) {
	struct slow_ps ps;
	struct fake_d d;
	pthread_t pth, dth;
	struct ia_worker_cfg cfg;
	struct ia_worker_stats st;
	int32_t v[CHUNKS * NE];
};

FIXTURE_SETUP(rep)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	uint16_t port = 20000 + (getpid() + 7) % 20000;

	self->ps.fd = bound(1, port);
	ASSERT_LE(0, self->ps.fd);
	snprintf(self->d.path, sizeof(self->d.path), "/tmp/ia-report-%d.sock", getpid());
	strcpy(sa.sun_path, self->d.path);
	unlink(self->d.path);
	self->d.fd = socket(AF_UNIX, SOCK_STREAM, 0);
	ASSERT_LE(0, self->d.fd);
	ASSERT_EQ(0, bind(self->d.fd, (struct sockaddr *)&sa, sizeof(sa)));
	ASSERT_EQ(0, listen(self->d.fd, 16));
	ASSERT_EQ(0, pthread_create(&self->dth, NULL, daemon_thread, &self->d));
	self->cfg = (struct ia_worker_cfg){ .job = JOB, .id = 1, .addr = lo(5), .ps = lo(1),
					    .port = port, .chunk = NE, .window = WMAX,
					    .timeout_ms = 2000, .cc = IA_CC_ATP,
					    .report_sock = self->d.path };
	for (size_t i = 0; i < CHUNKS * NE; i++)
		self->v[i] = i;
}

FIXTURE_TEARDOWN(rep)
{
	self->d.stop = 1;
	pthread_join(self->dth, NULL);
	close(self->d.fd);
	unlink(self->d.path);
	close(self->ps.fd);
}

static int run(FIXTURE_DATA(rep) *self, char *err, size_t errlen)
{
	struct ia_worker *w;
	int ret;

	self->ps.answered = 0;
	if (pthread_create(&self->pth, NULL, ps_thread_slow, &self->ps))
		return -errno;
	ret = ia_worker_open(&self->cfg, &w, err, errlen);
	if (!ret) {
		ret = ia_worker_run(w, self->v, self->v, CHUNKS * NE, err, errlen);
		ia_worker_stats(w, &self->st);
		ia_worker_close(w);
	}
	pthread_join(self->pth, NULL);
	return ret;
}

/*
 * The first report is the first window; each later one a change or the
 * same again after the refresh period, at least a period after the one
 * before; the marks' cuts reach the daemon (a report below the first); the
 * run's end is reported as window 0; every report names the worker and was
 * accepted and counted.
 */
TEST_F(rep, ina_worker_reports_changes)
{
	char err[128] = "";
	uint32_t least = WMAX;

	ASSERT_EQ(0, run(self, err, sizeof(err))) TH_LOG("%s", err);
	ASSERT_EQ(CHUNKS, self->st.results);
	EXPECT_LT(0, self->st.cuts);
	EXPECT_EQ(0, self->d.bad);
	ASSERT_LE(3, self->d.n) TH_LOG("%d reports", self->d.n);
	EXPECT_EQ(WMAX, self->d.win[0]);
	for (int i = 0; i < self->d.n; i++)
		EXPECT_EQ(self->cfg.id, self->d.worker[i]);
	for (int i = 1; i < self->d.n - 1; i++) {
		uint64_t gap = self->d.at[i] - self->d.at[i - 1];

		EXPECT_LE(IA_HOST_REPORT_MS * 1000000ull, gap);
		if (self->d.win[i - 1] == self->d.win[i])
			EXPECT_LE(IA_HOST_REPORT_REFRESH_MS * 1000000ull, gap);
		EXPECT_LE(1, self->d.win[i]);
		EXPECT_GE(WMAX, self->d.win[i]);
		least = self->d.win[i] < least ? self->d.win[i] : least;
	}
	EXPECT_GT(WMAX, least);
	EXPECT_EQ(0, self->d.win[self->d.n - 1]);
	EXPECT_LE(self->st.min_cwnd, least);
	EXPECT_EQ(self->d.n, self->st.reports);
	EXPECT_EQ(0, self->st.report_err);
}

/*
 * A window that does not change is sent again every refresh period, so the
 * daemon does not forget it (IA_LEND_REPORT_TTL_MS): fixed, without
 * timeouts, stays at WMAX for a run of about 650 ms.
 */
TEST_F(rep, unchanged_window_refreshed)
{
	char err[128] = "";
	int same = 0;

	self->cfg.cc = IA_CC_FIXED;
	self->ps.delay_us = 4000;
	ASSERT_EQ(0, run(self, err, sizeof(err))) TH_LOG("%s", err);
	ASSERT_EQ(CHUNKS, self->st.results);
	ASSERT_LE(3, self->d.n) TH_LOG("%d reports", self->d.n);
	for (int i = 0; i < self->d.n - 1; i++) {
		EXPECT_EQ(WMAX, self->d.win[i]);
		if (i)
			EXPECT_LE(IA_HOST_REPORT_REFRESH_MS * 1000000ull,
				  self->d.at[i] - self->d.at[i - 1]);
		same++;
	}
	EXPECT_LE(2, same);
	/* Well within the daemon's memory of a report. */
	EXPECT_GT(IA_LEND_REPORT_TTL_MS / 2, IA_HOST_REPORT_REFRESH_MS);
	EXPECT_EQ(0, self->d.win[self->d.n - 1]);
	EXPECT_EQ(self->d.n, self->st.reports);
}

/* A daemon too busy to answer in time: the report is tried again, reporting goes on. */
TEST_F(rep, late_answer_tried_again)
{
	char err[128] = "";

	self->d.late_ms = IA_HOST_REPORT_WAIT_MS + 300;
	self->cfg.cc = IA_CC_FIXED;
	self->ps.delay_us = 10000;	/* a run of 1.6 s */
	ASSERT_EQ(0, run(self, err, sizeof(err))) TH_LOG("%s", err);
	EXPECT_EQ(CHUNKS, self->st.results);
	EXPECT_EQ(0, self->st.report_err);
	/* The late one, then at least one accepted and the end. */
	ASSERT_LE(3, self->d.n) TH_LOG("%d reports", self->d.n);
	EXPECT_EQ(self->d.n - 1, self->st.reports);
	EXPECT_EQ(0, self->d.win[self->d.n - 1]);
}

/* A PS job has no head to lend: its worker reports nothing. */
TEST_F(rep, ps_job_reports_nothing)
{
	char err[128] = "";

	self->cfg.ps_job = true;
	ASSERT_EQ(0, run(self, err, sizeof(err))) TH_LOG("%s", err);
	EXPECT_EQ(CHUNKS, self->st.results);
	EXPECT_EQ(0, self->d.n);
	EXPECT_EQ(0, self->st.reports);
}

/* A refused report ends the reports (the daemon said why); the run itself goes on. */
TEST_F(rep, refusal_stops_reporting)
{
	char err[128] = "";

	self->d.refuse = true;
	ASSERT_EQ(0, run(self, err, sizeof(err))) TH_LOG("%s", err);
	EXPECT_EQ(CHUNKS, self->st.results);
	EXPECT_EQ(1, self->d.n);
	EXPECT_EQ(0, self->st.reports);
	EXPECT_EQ(-EPERM, self->st.report_err);
}

/* No daemon at the socket: no report, the run unharmed. */
TEST_F(rep, no_daemon_no_harm)
{
	char err[128] = "";

	self->cfg.report_sock = "/tmp/ia-report-nobody-here.sock";
	ASSERT_EQ(0, run(self, err, sizeof(err))) TH_LOG("%s", err);
	EXPECT_EQ(CHUNKS, self->st.results);
	EXPECT_EQ(0, self->st.reports);
	EXPECT_NE(0, self->st.report_err);
}

/*
 * A run that ends before the reporter thread first looks (a short run on a
 * busy host; tests/unit/api.c saw a worker with no report): it still reports
 * its window, then 0. Started and stopped at once, twenty times.
 */
TEST_F(rep, stopped_at_once_still_reports)
{
	struct ia_wreport r;

	for (int i = 0; i < 20; i++) {
		self->d.n = 0;
		ASSERT_EQ(0, ia_wreport_start(&r, self->d.path, JOB, 2, WMAX));
		ia_wreport_stop(&r);
		EXPECT_EQ(0, r.ret) TH_LOG("run %d: %s", i, r.why);
		ASSERT_EQ(2, self->d.n) TH_LOG("run %d: %d reports", i, self->d.n);
		EXPECT_EQ(2, r.sent);
		EXPECT_EQ(WMAX, self->d.win[0]);
		EXPECT_EQ(0, self->d.win[1]);
		EXPECT_EQ(2, self->d.worker[0]);
	}
}

TEST_HARNESS_MAIN
