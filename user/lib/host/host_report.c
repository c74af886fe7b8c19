// SPDX-License-Identifier: GPL-2.0
/* An INA job's window reports to inaggd (host_report.h, docs/cc.md). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>

#include <json-c/json.h>

#include "ctl.h"
#include "host_report.h"

/*
 * One request with a bounded wait (ia_ctl_call() waits as long as the
 * daemon takes): 0, -EPERM when the daemon refused it (why says its words),
 * or a transport error.
 */
static int report(struct ia_wreport *r, uint32_t w)
{
	struct timeval tv = { .tv_sec = IA_HOST_REPORT_WAIT_MS / 1000,
			      .tv_usec = IA_HOST_REPORT_WAIT_MS % 1000 * 1000 };
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	json_object *req = json_object_new_object(), *resp = NULL, *o;
	int fd = -1, ret;

	if (!req)
		return -ENOMEM;
	json_object_object_add(req, "cmd", json_object_new_string("window"));
	json_object_object_add(req, "job", json_object_new_int64(r->job));
	json_object_object_add(req, "worker", json_object_new_int64(r->worker));
	json_object_object_add(req, "window", json_object_new_int64(w));
	ret = strlen(r->sock) < sizeof(sa.sun_path) ? 0 : -ENAMETOOLONG;
	if (!ret) {
		strcpy(sa.sun_path, r->sock);
		fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		ret = fd < 0 ? -errno : 0;
	}
	if (!ret && (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) ||
		     setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) ||
		     connect(fd, (struct sockaddr *)&sa, sizeof(sa))))
		ret = -errno;
	if (!ret)
		ret = ia_ctl_write(fd, req);
	if (!ret)
		ret = ia_ctl_read(fd, &resp);
	if (ret) {
		snprintf(r->why, sizeof(r->why), "inaggd at %s: %s", r->sock, strerror(-ret));
	} else if (!json_object_object_get_ex(resp, "ok", &o) || !json_object_get_boolean(o)) {
		ret = -EPERM;
		snprintf(r->why, sizeof(r->why), "inaggd: %s",
			 json_object_object_get_ex(resp, "error", &o) ?
			 json_object_get_string(o) : "refused");
	}
	if (fd >= 0)
		close(fd);
	json_object_put(req);
	json_object_put(resp);
	return ret;
}

static uint64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * The outcome of one report: a daemon too busy to answer in time is asked
 * again at the next look; any other failure ends the run's reports.
 */
static void reported(struct ia_wreport *r, uint32_t w, uint64_t at, int ret)
{
	if (ret == -EAGAIN || ret == -EWOULDBLOCK) {
		r->timeouts++;
		return;
	}
	r->ret = ret;
	if (!ret) {
		r->last = w;
		r->last_ms = at;
		r->sent++;
	}
}

static void *reporter(void *arg)
{
	struct ia_wreport *r = arg;
	struct timespec at;

	pthread_mutex_lock(&r->mu);
	/*
	 * At least one look, even when the run ended before this thread ran (a
	 * short run on a busy host): every worker of an INA job reports.
	 */
	for (bool first = true; (first || !r->stop) && !r->ret; first = false) {
		uint32_t w = __atomic_load_n(&r->window, __ATOMIC_RELAXED);
		uint64_t now = mono_ms();

		/* A change, or the same again before the daemon forgets it. */
		if (w && (w != r->last || now - r->last_ms >= IA_HOST_REPORT_REFRESH_MS)) {
			/* Unlocked: stop never waits for more than this one call. */
			pthread_mutex_unlock(&r->mu);
			int ret = report(r, w);

			pthread_mutex_lock(&r->mu);
			reported(r, w, now, ret);
		}
		/* The next look a period later (the worker's stores wake nobody). */
		clock_gettime(CLOCK_MONOTONIC, &at);
		at.tv_nsec += IA_HOST_REPORT_MS * 1000000l;
		at.tv_sec += at.tv_nsec / 1000000000l;
		at.tv_nsec %= 1000000000l;
		while (!r->stop && pthread_cond_timedwait(&r->cv, &r->mu, &at) != ETIMEDOUT)
			;
	}
	pthread_mutex_unlock(&r->mu);
	/*
	 * The run ended: window 0, nothing in flight (the daemon lends by the
	 * workers still running). Also after a report it may have got late.
	 */
	if (!r->ret && (r->last || r->timeouts)) {
		int ret = report(r, 0);

		r->ret = ret == -EAGAIN || ret == -EWOULDBLOCK ? 0 : ret;
		r->timeouts += ret && !r->ret;
		r->sent += !ret;
	}
	return NULL;
}

int ia_wreport_start(struct ia_wreport *r, const char *sock, uint32_t job, uint32_t worker,
		     uint32_t window)
{
	pthread_condattr_t ca;
	int ret;

	memset(r, 0, sizeof(*r));
	r->sock = sock;
	r->job = job;
	r->worker = worker;
	r->window = window;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_mutex_init(&r->mu, NULL);
	pthread_cond_init(&r->cv, &ca);
	pthread_condattr_destroy(&ca);
	ret = -pthread_create(&r->th, NULL, reporter, r);
	r->running = !ret;
	if (ret) {
		r->ret = ret;
		snprintf(r->why, sizeof(r->why), "thread: %s", strerror(-ret));
	}
	return ret;
}

void ia_wreport_set(struct ia_wreport *r, uint32_t window)
{
	__atomic_store_n(&r->window, window, __ATOMIC_RELAXED);
}

void ia_wreport_stop(struct ia_wreport *r)
{
	if (!r->running)
		return;
	pthread_mutex_lock(&r->mu);
	r->stop = true;
	pthread_cond_signal(&r->cv);
	pthread_mutex_unlock(&r->mu);
	pthread_join(r->th, NULL);
	r->running = false;
	pthread_cond_destroy(&r->cv);
	pthread_mutex_destroy(&r->mu);
}
