/* SPDX-License-Identifier: GPL-2.0 */
/* Inside the live experiment (eval_live.h): what its processes report, in shared memory. */
#ifndef INAGG_EVAL_LIVE_INT_H
#define INAGG_EVAL_LIVE_INT_H

#include <signal.h>

#include <json-c/json.h>

#include "cc.h"
#include "eval_live.h"

struct live_w {
	int rc;			/* 0: every iteration completed */
	int exact;		/* 1: and every result was the expected sum */
	uint64_t t_end;		/* CLOCK_MONOTONIC ns, after its last iteration */
	uint64_t results, marks, retx, timeouts, sent, bypassed;
	uint32_t srtt_us;	/* smoothed round trip at the end of its last iteration */
	uint64_t *t_done;	/* per chunk of every iteration, when its result came (shared) */
	uint64_t expect[IA_LIVE_MAX_ITERS];	/* the sum's checksum, per iteration */
	char err[128];
};

struct live_j {
	uint32_t id, nworkers, chunks;
	int ps;
	volatile sig_atomic_t ps_stop;
	int ps_rc;
	uint64_t ps_sum, ps_expect;
	uint64_t ps_msgs;	/* contributions and aggregates the PS accepted */
	uint64_t ps_waste;	/* messages the PS got in vain (a sender again, a chunk done, overlaps) */
	char ps_err[128];
	struct live_w w[IA_LIVE_MAX_W];
};

struct live_shm {
	struct live_j j[IA_LIVE_MAX_JOBS];
	volatile uint64_t cross_sent;
};

static inline uint64_t live_seed(uint32_t job, uint32_t worker)
{
	return (uint64_t)job * 1000 + worker;
}

/*
 * eval_live_ep.c: a job's PS (job: the daemon's record), ready written to
 * ready_fd once it listens; worker i of it, which starts when go_fd reads
 * EOF; both close close_fd (the go pipe's writing end) in the child. The
 * pid, or -errno.
 */
pid_t ia_live_ps_fork(struct ia_live *L, json_object *job, struct live_j *lj, int ready_fd,
		      int close_fd);
pid_t ia_live_worker_fork(struct ia_live *L, json_object *job, int i,
			  const struct ia_live_mixjob *m, struct live_j *lj, int ready_fd, int go_fd,
			  int close_fd);
/* The member at a dotted path ("job.destination.address"), or NULL. */
json_object *ia_live_get(json_object *o, const char *path);
uint64_t ia_live_now_ns(void);

#endif
