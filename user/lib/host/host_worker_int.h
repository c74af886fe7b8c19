/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The worker's state, shared by host_worker.c (sends, results, recovery)
 * and host_wtimer.c (round trips and timers, functions of this state only,
 * so that tests/unit/host_timer.c can check them by hand). Internal.
 */
#ifndef INAGG_HOST_WORKER_INT_H
#define INAGG_HOST_WORKER_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "cc.h"
#include "host.h"
#include "host_io.h"
#include "host_report.h"

#define NS_PER_MS		1000000ull
#define RTO_MIN_NS		(10 * NS_PER_MS)	/* below: scheduler noise on a busy host */
#define RTO_MAX_NS		(1000 * NS_PER_MS)
#define RTO_INIT_NS		(20 * NS_PER_MS)	/* before the first sample */
#define REO_MIN_NS		200000ull		/* reordering allowance: at least 200 us */
#define TOKENS_PER_RESULT	2	/* timer resends allowed per new result... */
#define TOKENS_MAX		16	/* ...banked up to this many */
#define FRESH_MIN_RTTS		8	/* a fresh chunk's timer: at most this many min_rtt */
#define PROGRESS_BACKOFF	2	/* doublings at most while other results come */
#define BACKOFF_FREE		3	/* timer resends with no result at all before doubling */
#define BACKOFF_MAX		6	/* doublings at most (64x) */
#define BACKSTOP		8	/* other chunks sent once: this many fresh timers */

enum { CH_UNSENT, CH_INFLIGHT, CH_DONE };

struct wchunk {
	uint64_t xmit;		/* time of the latest send (plus jitter on a resend) */
	uint64_t sent;		/* time of the latest send */
	uint64_t timer_sent;	/* when last resent by its timer, if it was */
	uint64_t order;		/* place of the latest send among all sends */
	uint64_t first;		/* place of the first send */
	uint32_t sends;
	uint32_t stuck;		/* timer resends without any result in between */
	uint8_t tmo;		/* its timer waits resent_base() << tmo */
	uint8_t state;
	uint8_t nack;		/* the destination asked for it (IA_F_NACK) */
	uint8_t mem;		/* first sent to use switch memory (counted in wrun.inmem) */
};

struct ia_worker {
	struct ia_worker_cfg cfg;
	struct sockaddr_in ps;
	struct ia_io_tx tx;
	uint64_t rng;		/* timer jitter */
	struct ia_worker_stats st;
	struct ia_io_rx rx;
};

/* One run's state. Times are CLOCK_MONOTONIC nanoseconds. */
struct wrun {
	struct ia_worker *w;
	const int32_t *in;
	int32_t *out;
	size_t n;
	uint64_t nchunks;
	struct wchunk *ch;
	uint64_t lo, next, done;	/* first without result, first unsent, results */
	struct ia_cc cc;		/* window policy (cfg.cc): ia_cc_window(), 1..cfg.window */
	uint64_t cuts0, acuts0;		/* cc's cuts when the run began (cfg.path) */
	uint32_t inmem;			/* chunks in flight that may use switch memory */
	uint64_t t0;
	/* Round-trip time (RFC 6298); srtt 0: no sample yet. */
	uint64_t srtt, rttvar, min_rtt, rto;
	/*
	 * The shortest time from a resend to an answer (a result flagged
	 * IA_F_RETX): 0 before the first. min_rtt also holds the wait for the
	 * slowest worker, an answer from a held result does not.
	 */
	uint64_t answer_rtt;
	uint64_t sends;			/* messages sent so far: the order of the next */
	/* RACK: the latest first send among chunks with a result, and when. */
	uint64_t rack_order, rack_time;
	uint64_t floor;			/* cfg.timeout_ms */
	uint64_t last_progress;		/* when a new result last arrived */
	uint64_t last_fresh;		/* when a chunk sent once last had its result */
	uint64_t last_halve;		/* when the window was last halved */
	uint32_t tokens;		/* timer resends allowed now (see worker_recover()) */
	bool loss_seen;			/* a loss found in this run: RACK, a NACK, an answer */
	struct ia_wreport rep;		/* cfg.report_sock: the window to inaggd */
};


/* A round-trip sample (RFC 6298: srtt, rttvar, rto; and the shortest). */
void ia_wt_rtt_sample(struct wrun *r, uint64_t rtt);
/* The wait of a chunk sent once, from the latest result of such a chunk. */
uint64_t ia_wt_fresh_base(const struct wrun *r);
/* The wait of a resent chunk, before its backoff. */
uint64_t ia_wt_resent_base(const struct wrun *r);
/*
 * When the timer of chunk idx (in flight) fires; top is one past the
 * newest chunk in flight (the probe is top - 1).
 */
uint64_t ia_wt_timer_at(const struct wrun *r, uint64_t idx, uint64_t top);
/* The reordering allowance of RACK and of NACKs. */
uint64_t ia_wt_reo(const struct wrun *r);
/* c's timer fired at now: its backoff; -ETIMEDOUT to give up. */
int ia_wt_fired(struct wrun *r, struct wchunk *c, uint64_t now);

#endif
