/* SPDX-License-Identifier: GPL-2.0 */
/*
 * An INA job's window reports to inaggd (docs/cc.md "Window reports",
 * docs/memory.md "The lend policy"): while a worker runs, a thread of its
 * own sends the daemon its link window (request "window") whenever it
 * changed, at most once per IA_HOST_REPORT_MS, and the last one when the
 * run ends, so that the job's head lends what the window leaves idle and
 * takes it back as it grows. The worker's loop only stores the window; the
 * daemon's round trip never delays a send. Internal to the host library
 * (host_worker.c).
 */
#ifndef INAGG_HOST_REPORT_H
#define INAGG_HOST_REPORT_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#define IA_HOST_REPORT_MS	20	/* at most one report per this many ms */
#define IA_HOST_REPORT_WAIT_MS	1000	/* the daemon's answer, at most */

struct ia_wreport {
	pthread_t th;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool running, stop;
	const char *sock;
	uint32_t job;
	uint32_t window;	/* the worker's link window now (atomic) */
	uint32_t last;		/* the window last accepted by the daemon (0: none) */
	uint64_t sent;		/* reports the daemon accepted */
	int ret;		/* 0, or why reporting stopped (refused: -EPERM) */
	char why[128];
};

/* Starts reporting job's window (first value window) to the daemon at sock. 0 or -errno. */
int ia_wreport_start(struct ia_wreport *r, const char *sock, uint32_t job, uint32_t window);
/* The window changed (one atomic store: no lock, no I/O). */
void ia_wreport_set(struct ia_wreport *r, uint32_t window);
/*
 * Stops the thread after the report under way, if any, and the last
 * change, if it was not sent yet (one round trip at most, each bounded by
 * IA_HOST_REPORT_WAIT_MS).
 */
void ia_wreport_stop(struct ia_wreport *r);

#endif
