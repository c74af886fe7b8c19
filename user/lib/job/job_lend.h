/* SPDX-License-Identifier: GPL-2.0 */
/*
 * How much of its head each INA job lends to the tail (docs/memory.md,
 * "Who decides the head/tail boundary"): the control plane's half. The
 * daemon feeds one sample per INA job and blue switch (the head slots found
 * live, and the window its senders use); the lender calls the ledger's
 * JOB_LEND / JOB_RECLAIM through its ops and, once per switch whose lends
 * changed, publishes that switch's tail directory.
 *
 * The rule, per (job, switch), with a head of H slots and lent L of them:
 *   need = min(H, max(window, open) + margin), margin = max(1, H / 8);
 *   need > H - L            -> reclaim at once down to L = H - need;
 *   need <= H - L for hold samples in a row, and H - peak >= L + step
 *   (peak: the largest need of those samples, step = max(1, H / 16))
 *                           -> lend up to L = H - peak (else the next hold
 *                              samples are judged afresh).
 * A sample whose senders' window is their full worker window (uncongested,
 * or no report) counts with window = H (ia_lend_window()): nothing is lent,
 * a lend is taken back. Before its first report a job lends from its worker
 * window where congestion was seen lately (ia_lend_full()).
 * So a job never has fewer than need slots of its own, lends only what it
 * has not needed for a while, and takes it back on the first sample that
 * needs it. At most IA_TDIR_SEGS jobs lend at one switch (a directory's
 * segments); another one waits until one of them has taken all back. The datapath evicts PS partials from a head slot the INA job
 * needs in any case; this only bounds how much of a head PS jobs address.
 */
#ifndef INAGG_JOB_LEND_H
#define INAGG_JOB_LEND_H

#include <stdbool.h>
#include <stdint.h>

#include <inagg/maps.h>

#include "job.h"

#define IA_LEND_HOLD_DEFAULT 5	/* samples (500 ms at inaggd's 100 ms) */
/*
 * A worker's window report counts this long after it arrived; its reporter
 * sends it again at least every IA_HOST_REPORT_REFRESH_MS (host_report.h)
 * while the worker runs, so only a worker that died or lost the daemon
 * stops counting. A report of a run's end (window 0) counts until the
 * worker's next report.
 */
#define IA_LEND_REPORT_TTL_MS 2000

struct ia_lend_policy {
	uint32_t hold;		/* samples below H - L before a lend; 0: never lend */
};

/* One INA job at one switch. */
struct ia_lend_state {
	uint32_t lent;		/* as the ledger has it */
	uint32_t quiet;		/* samples in a row needing no more than H - lent */
	uint32_t peak;		/* the largest need of those */
	uint64_t lends, reclaims;	/* how many times each happened */
	uint64_t lent_total, reclaimed_total;	/* slots */
};

/*
 * The decision for one sample: the lent count the job should have now
 * (equal to s->lent: no change). It counts the sample in s's quiet stretch;
 * only ia_lend_commit() changes s->lent (once the ledger agreed).
 */
uint32_t ia_lend_decide(const struct ia_lend_policy *p, struct ia_lend_state *s, uint32_t head,
			uint32_t window, uint32_t open);
void ia_lend_commit(struct ia_lend_state *s, uint32_t lent);
/*
 * The window a sample hands ia_lend_decide(): the senders' window, or the
 * whole head when they run at their full worker window (no mark shrank it,
 * or no report says it is smaller). Lending is for a window congestion
 * shrank, or a run that ended (window 0): at full window an INA job's
 * chunks cycle through its whole head, a lent slot is retaken within a
 * round, and PS chunks sent there mostly collide (issue 33: 0.73 of the
 * tail's tries without congestion).
 */
static inline uint32_t ia_lend_window(uint32_t head, uint32_t window, bool full)
{
	return full ? head : window;
}

/*
 * A switch saw congestion lately: an INA job there reported a window below
 * half its worker window (cut more than once: one stray mark halves it at
 * most) within this long.
 */
#define IA_LEND_CONGESTED_MS 10000

static inline bool ia_lend_congested(uint32_t window, uint32_t wmax)
{
	return window && window < wmax / 2;
}

/*
 * Whether a sample counts as the full worker window (ia_lend_window()):
 * a window at wmax that a report says (told), or no report yet where the
 * switch saw no congestion lately. With no report where it did, the job
 * lends from its worker window before its senders start: all jobs start
 * at once into a congested bottleneck, and the PS jobs' first messages
 * aggregate in the lent slots instead of overflowing it (issue 33: without
 * that lend, 0.06 of the results came by timer against 0.01, and the
 * congested headline fell from 1.73x to 1.26-1.39x). Its senders' first
 * report at the full window takes the lend back.
 */
static inline bool ia_lend_full(uint32_t window, uint32_t wmax, bool told, bool congested)
{
	return window >= wmax && (told || !congested);
}

struct ia_lend_ops {
	int (*lend)(void *ctx, int v, uint32_t id, uint32_t count, char *why, size_t whylen);
	int (*reclaim)(void *ctx, int v, uint32_t id, uint32_t count, char *why, size_t whylen);
	/*
	 * Optional: switch v's tail directory after its lends changed, given
	 * every INA job's lent count there (ids[i] lends lent[i], n of them).
	 */
	int (*publish)(void *ctx, int v, const uint32_t *ids, const uint32_t *lent, int n,
		       char *why, size_t whylen);
	ia_log_fn note;		/* NULL: the print hook (log.h) */
	/* Optional: a monotonic clock in ms for the reports' ages (NULL: CLOCK_MONOTONIC). */
	uint64_t (*now_ms)(void *ctx);
};

/* One worker's latest window report. */
struct ia_lend_report {
	uint32_t worker;		/* its sender id (ia_worker_id()) */
	uint32_t window;
	uint64_t at_ms;			/* when it arrived (ops->now_ms) */
};

struct ia_lend_job {
	uint32_t id;			/* 0: unused */
	struct ia_lend_state *sw;	/* per switch */
	struct ia_lend_report *rep;	/* its workers' reports, nrep of them */
	uint32_t nrep;
	uint64_t nreports;		/* workers' reports accepted so far */
};

struct ia_lender {
	const struct ia_topo *t;
	const struct ia_lend_ops *ops;
	void *ctx;
	struct ia_lend_policy pol;
	struct ia_lend_job jobs[IA_MAX_JOBS];
	bool *dirty;			/* per switch: lends changed, not yet published */
	uint64_t *lends, *reclaims;	/* per switch, every job's (ended ones too) */
	uint64_t *congested_ms;		/* per switch: the last ia_lend_congested() report (0: none) */
};

int ia_lender_init(struct ia_lender *L, const struct ia_topo *t, const struct ia_lend_ops *ops,
		   void *ctx, const struct ia_lend_policy *pol);
void ia_lender_free(struct ia_lender *L);
/*
 * Worker `worker` (its sender id) of INA job j keeps window chunks in
 * flight now; 0: its run ended (nothing in flight until its next run
 * reports). Each worker's latest report counts until IA_LEND_REPORT_TTL_MS
 * after it arrived, a run's end until the worker's next report. A window
 * below half the worker window marks j's switches congested
 * (ia_lend_congested()). Refused (why says so, nothing changes): -EINVAL
 * for a job that is not INA or a window above its worker window, -ENOENT
 * for a worker that is not one of j's.
 */
int ia_lender_report(struct ia_lender *L, const struct ia_job *j, uint32_t worker,
		     uint32_t window, char *why, size_t whylen);
/*
 * The window j's senders keep in flight now, which its lends follow: the
 * largest of j->live_window (the job's own report, e.g. an operator's; 0:
 * none) and its workers' live reports (expired ones are dropped, never a
 * run's end; 0 when every reporting worker's run ended), the worker window
 * when there is no report at all, never above it. *nrep (optional): the workers' live
 * reports.
 */
uint32_t ia_lender_window(struct ia_lender *L, const struct ia_job *j, uint32_t *nrep);
/*
 * One sample of INA job j at its blue switch v: open head slots live, the
 * window ia_lender_window()'s. Returns 0 or the ledger's error (the state
 * is then unchanged: tried again next sample).
 */
int ia_lender_sample(struct ia_lender *L, const struct ia_job *j, int v, uint32_t open);
/* Switch v's tail changed size (an admission or release): its directory is published again. */
void ia_lender_touch(struct ia_lender *L, int v);
/* Publishes every switch whose lends changed; the first error. */
int ia_lender_publish(struct ia_lender *L);
/*
 * Job id ended (the ledger's release returned its lent slots): forgotten,
 * its switches' directories marked for publication.
 */
void ia_lender_forget(struct ia_lender *L, uint32_t id);
/* Reclaims everything job id lends anywhere (before a job is reconfigured or ended). */
int ia_lender_reclaim_all(struct ia_lender *L, uint32_t id);
/* Workers' window reports of job id accepted so far. */
uint64_t ia_lender_reports(const struct ia_lender *L, uint32_t id);
/* What job id lends at switch v now, and its state (NULL if none). */
const struct ia_lend_state *ia_lender_state(const struct ia_lender *L, uint32_t id, int v);
/* Head slots lent at switch v, every job's. */
uint32_t ia_lender_lent(const struct ia_lender *L, int v);

#endif
