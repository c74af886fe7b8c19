/* SPDX-License-Identifier: GPL-2.0 */
/*
 * An INA job's window reports to inaggd (docs/cc.md "Window reports",
 * docs/memory.md "The lend policy"): while a worker runs, a thread of its
 * own sends the daemon its link window (request "window" with its sender
 * id as "worker") whenever it changed, at most once per IA_HOST_REPORT_MS,
 * the same again after IA_HOST_REPORT_REFRESH_MS without a change (the
 * daemon forgets a report IA_LEND_REPORT_TTL_MS old), and window 0 when the
 * run ends (nothing in flight). The daemon keeps every worker's latest and
 * lends by the largest, so the job's head lends what no worker's window
 * uses and takes it back as one grows. The worker's loop only stores the
 * window; the daemon's round trip never delays a send. Internal to the host
 * library (host_worker.c).
 */
#ifndef INAGG_HOST_REPORT_H
#define INAGG_HOST_REPORT_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#define IA_HOST_REPORT_MS	20	/* at most one report per this many ms */
#define IA_HOST_REPORT_REFRESH_MS 250	/* an unchanged window sent again */
#define IA_HOST_REPORT_WAIT_MS	1000	/* the daemon's answer, at most */

struct ia_wreport {
	pthread_t th;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool running, stop;
	const char *sock;
	uint32_t job, worker;	/* the worker's sender id */
	uint32_t window;	/* the worker's link window now (atomic) */
	uint32_t last;		/* the window last accepted by the daemon (0: none) */
	uint64_t last_ms;	/* when (CLOCK_MONOTONIC) */
	uint64_t sent;		/* reports the daemon accepted (the run's end too) */
	uint64_t timeouts;	/* reports the daemon did not answer in time (tried again) */
	int ret;		/* 0, or why reporting stopped (refused: -EPERM) */
	char why[128];
};

/*
 * Starts reporting worker's (its sender id) window of job (first value
 * window) to the daemon at sock. 0 or -errno.
 */
int ia_wreport_start(struct ia_wreport *r, const char *sock, uint32_t job, uint32_t worker,
		     uint32_t window);
/* The window changed (one atomic store: no lock, no I/O). */
void ia_wreport_set(struct ia_wreport *r, uint32_t window);
/*
 * Stops the thread after the report under way, if any, and tells the
 * daemon the run ended (window 0) if it holds a report of this run (one
 * round trip more at most, each bounded by IA_HOST_REPORT_WAIT_MS).
 */
void ia_wreport_stop(struct ia_wreport *r);

#endif
