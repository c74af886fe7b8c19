/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Host endpoint of libinagg: the worker that sends a vector for a job and
 * receives the element-wise sum, and the destination (parameter server, PS)
 * that completes the aggregation of whatever reaches it unaggregated and
 * sends each chunk's result down. See docs/hosts.md.
 *
 * Files: host_worker.c (its timers: host_wtimer.c), host_ps.c (the two
 * ends), host_io.c (sockets and test impairment, internal), host_vec.h
 * (chunks, test vectors, checksums), host_fx.h (fixed point).
 *
 * A vector of n int32 elements is cut into C = ceil(n / chunk) chunks of
 * `chunk` elements (the last one shorter), sent as chunk sequence numbers
 * base_seq .. base_seq + C - 1 in messages of include/inagg/wire.h. Sums wrap
 * modulo 2^32 like everywhere else in inagg.
 *
 * Every function returns 0 or a negative errno; functions taking err/errlen
 * also leave a one-line reason there.
 */
#ifndef INAGG_HOST_H
#define INAGG_HOST_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <netinet/in.h>

#include "inagg/wire.h"
#include "cc.h"
#include "host_fx.h"
#include "sender.h"
#include "host_vec.h"

#define IA_HOST_WINDOW		64	/* default chunks in flight per worker */
#define IA_HOST_TIMEOUT_MS	2	/* default shortest wait before a resend by timer */
#define IA_HOST_RETRIES		50	/* default timer resends of a chunk, no result between */
#define IA_HOST_LINGER_MS	1000	/* default PS idle time after the last chunk */
#define IA_HOST_MAX_CHUNKS	(1u << 24)

/* Writes a whole inagg header (wire.h byte order, version IA_VERSION). */
void ia_hdr_fill(struct ia_hdr *h, uint8_t type, uint32_t job, uint32_t seq, uint32_t sender,
		 uint32_t nworkers, uint16_t nelem, uint8_t flags);

/*
 * Test-only impairment of a host's own sends, in parts per million, drawn
 * from a seeded generator: a message is dropped, sent twice, or held back and
 * sent after the next one (reordering). All zero (the default) sends as is.
 * The kernel here has no netem; this makes loss, duplication and reordering
 * reproducible in tests.
 */
struct ia_host_faults {
	uint32_t loss_ppm;
	uint32_t dup_ppm;
	uint32_t reorder_ppm;
	uint64_t seed;
};

/*
 * What a worker learns of its path and keeps from one run to the next
 * (cfg.path): the window policy's state and the round trips. The runs of a
 * job's iterations share one, so that each starts from the window the last
 * one ended with: started afresh, every worker sends its full window at each
 * iteration, a burst no window policy gets to control (docs/cc.md).
 */
struct ia_worker_path {
	bool valid;			/* set by a run; zero it to start afresh */
	struct ia_cc cc;
	uint64_t srtt, rttvar, min_rtt, rto, answer_rtt;
};

struct ia_worker_cfg {
	uint32_t job;
	uint32_t id;			/* sender id of this worker's contributions */
	struct in_addr addr;		/* own address; results arrive here (0: any) */
	struct in_addr ps;		/* the job's destination */
	uint16_t port;			/* UDP port at both ends; 0: IA_UDP_PORT */
	uint32_t base_seq;		/* first chunk's sequence number */
	uint32_t chunk;			/* elements per chunk, 1..IA_MAX_ELEMS; 0: IA_CHUNK_DEFAULT */
	uint32_t window;		/* chunks in flight; 0: IA_HOST_WINDOW */
	uint32_t timeout_ms;		/* shortest wait for a result before a chunk is
					 * resent by timer (more if the RTT says so); 0:
					 * IA_HOST_TIMEOUT_MS */
	uint32_t retries;		/* timer resends of a chunk with no result at all
					 * in between before giving up; 0: IA_HOST_RETRIES */
	uint32_t nworkers;		/* if non-zero, a result must carry this nworkers */
	enum ia_cc_policy cc;		/* window policy (cc.h, docs/cc.md); 0: fixed */
	bool ps_job;			/* a PS job (flexina cuts its window harder) */
	bool mtu_checked;		/* the caller ran ia_io_mtu_check() for ps and chunk */
	/*
	 * Optional: where a run starts and leaves its window and round trips
	 * (above); ignored when its window policy's settings are not this
	 * cfg's. NULL: every run starts at the full window.
	 */
	struct ia_worker_path *path;
	volatile sig_atomic_t *stop;	/* optional: set to end run() with -EINTR */
	/*
	 * Optional: the link window, stored after every change, for whoever
	 * reports it to inaggd (an INA job's lends follow it, docs/memory.md).
	 */
	volatile uint32_t *window_now;
	/*
	 * Optional: inaggd's socket, to which an INA job's worker reports its
	 * link window while it runs (host_report.h; every worker of a job
	 * does, the daemon lends by the largest). NULL: no reports.
	 */
	const char *report_sock;
	/*
	 * Optional, for benches: per chunk, the time (CLOCK_MONOTONIC ns) of its
	 * first send and of its result; nchunks entries each, NULL: not kept.
	 */
	uint64_t *t_first, *t_done;
	struct ia_host_faults faults;
};

struct ia_worker_stats {
	uint64_t sent;			/* contributions sent, retransmissions included */
	uint64_t retx;			/* of which retransmissions */
	uint64_t bypassed;		/* first sends flagged IA_F_BYPASS (aggregator window) */
	uint64_t results;		/* chunks whose result arrived */
	uint64_t dup;			/* results of chunks already done */
	uint64_t early;			/* results of chunks not sent yet (ignored) */
	uint64_t bad;			/* malformed or foreign messages ignored */
	uint64_t marks;			/* results carrying IA_F_MARK or arriving CE */
	uint64_t ce;			/* of which arriving IP CE (a qdisc's mark) */
	uint64_t colls;			/* results carrying IA_F_COLL (part collided in a tail) */
	uint32_t max_retx;		/* most retransmissions of one chunk */
	uint64_t timeouts;		/* retransmissions by timer (the others: by later results
					 * or a NACK) */
	uint64_t timeouts_fresh;	/* of which of chunks sent only once before */
	uint64_t nacks;			/* NACKs of chunks in flight received */
	uint32_t srtt_us;		/* smoothed round-trip time at the end */
	uint32_t min_rtt_us;		/* shortest round trip */
	uint32_t answer_rtt_us;		/* shortest answer to a resend (0: none) */
	uint32_t rto_us;		/* retransmission timeout at the end */
	/* The window policy (cc.h): windows at the end, their smallest, and cuts. */
	uint32_t cwnd, awnd, min_cwnd, min_awnd;
	uint64_t cuts, acuts;
	double elapsed;			/* seconds from first send to last result */
	uint64_t reports;		/* window reports inaggd accepted (cfg.report_sock) */
	int report_err;			/* 0, or why reporting stopped (-EPERM: refused) */
};

struct ia_worker;

/* Checks cfg and binds the worker's socket (addr:port). */
int ia_worker_open(const struct ia_worker_cfg *cfg, struct ia_worker **out, char *err,
		   size_t errlen);
/*
 * Sends in[0..n) and waits until the result of every chunk has arrived in
 * out[0..n) (in and out may be the same array). -ETIMEDOUT when a chunk is
 * still without result after cfg->retries timer resends with no result at all
 * in between.
 */
int ia_worker_run(struct ia_worker *w, const int32_t *in, int32_t *out, size_t n, char *err,
		  size_t errlen);
void ia_worker_stats(const struct ia_worker *w, struct ia_worker_stats *st);
void ia_worker_close(struct ia_worker *w);

enum ia_ps_down {
	IA_PS_DOWN_ADDR = 0,	/* one RESULT per chunk to cfg.down (the root switch) */
	IA_PS_DOWN_UNICAST,	/* one RESULT per worker address heard from */
};

struct ia_ps_cfg {
	uint32_t job;
	uint32_t id;			/* sender id of results */
	uint32_t nworkers;		/* total workers of the job */
	uint64_t nelem;			/* vector length */
	struct in_addr addr;		/* own address (0: any) */
	uint16_t port;			/* 0: IA_UDP_PORT */
	uint32_t base_seq;
	uint32_t chunk;			/* as the workers'; 0: IA_CHUNK_DEFAULT */
	enum ia_ps_down down_mode;
	struct in_addr down;		/* IA_PS_DOWN_ADDR: where results go */
	/* Optional membership: senders not listed (or with another nworkers) are dropped. */
	uint32_t nmembers;
	const struct ia_sender *members;
	/*
	 * A PS job (tail aggregation, docs/memory.md): members[i]'s member set,
	 * as pushed to the switches (ia_xdp_job.sets); every worker and every
	 * tail switch of the job is a member. With sets the PS merges by set:
	 * a piece disjoint from what the chunk holds is added, any other is
	 * dropped (a subset: dup; a partial overlap: overlap), and the chunk is
	 * done when it holds every rank of the members' union.
	 */
	const uint64_t *sets;
	/*
	 * NACK chunks found lacking a piece (host_ps_nack.c, docs/hosts.md).
	 * Off when 0 here, but on in every PS users start (inagg ps run unless
	 * --no-nack, ia_api_ps_serve()): it paid on Fig. 1 (docs/hosts.md).
	 */
	bool nack;
	int linger_ms;			/* idle time served after the last chunk; < 0: forever */
	uint64_t *t_done;		/* optional, for benches: per chunk, when it completed */
	volatile sig_atomic_t *stop;	/* optional: set to end run() (-EINTR if not complete) */
	struct ia_host_faults faults;
};

/* Why the PS ignored a message. */
enum ia_ps_drop {
	IA_PS_DROP_SHORT,	/* shorter than the header or than nelem says */
	IA_PS_DROP_VERSION,
	IA_PS_DROP_TYPE,	/* not CONTRIB or AGG */
	IA_PS_DROP_JOB,		/* another job */
	IA_PS_DROP_NELEM,	/* 0, > IA_MAX_ELEMS, or not the chunk's length */
	IA_PS_DROP_MEMBER,	/* not a member, wrong or zero nworkers */
	IA_PS_DROP_WINDOW,	/* chunk outside [base_seq, base_seq + C) */
	IA_PS_DROP_OVER,	/* its nworkers would exceed the job's total */
	IA_PS_DROP__COUNT,
};

struct ia_ps_stats {
	uint64_t rx;			/* datagrams received */
	uint64_t contrib;		/* CONTRIB messages accepted */
	uint64_t agg;			/* AGG messages accepted */
	uint64_t dup;			/* same sender again for an open chunk */
	uint64_t late;			/* for a completed chunk: its result re-sent */
	uint64_t late_quiet;		/* of which not answered at once: within the quiet
					 * time after the chunk's latest result down */
	uint64_t late_deferred;		/* results sent at a quiet time's end for those */
	uint64_t late_stale;		/* of the late not answered at all: queued before
					 * the chunk's latest result was sent (down to an
					 * address only) */
	uint64_t nacks;			/* NACK messages sent (cfg.nack) */
	uint64_t nacked;		/* (chunk, sender) pieces they asked for */
	uint64_t results;		/* RESULT messages sent, re-sends included */
	uint64_t marks;			/* accepted messages carrying IA_F_MARK or arriving CE */
	uint64_t ce;			/* of which arriving IP CE (a qdisc's mark) */
	uint64_t colls;			/* accepted messages carrying IA_F_COLL */
	uint64_t pieces;		/* by set: partial aggregates (IA_F_SET) merged */
	uint64_t overlap;		/* by set: dropped, overlapping the chunk's set in part */
	uint64_t split;			/* by set: overlapping, merged less the pieces inside */
	uint64_t unlearned;		/* unicast: contributions from a source not learned
					 * (list full, or its id's address another) */
	uint32_t addresses;		/* unicast: worker addresses learned, <= nworkers */
	uint64_t drop[IA_PS_DROP__COUNT];
	uint32_t chunks;		/* chunks of the job */
	uint32_t done;			/* chunks completed */
	double elapsed;			/* seconds from first message to last completion */
};

struct ia_ps;

int ia_ps_open(const struct ia_ps_cfg *cfg, struct ia_ps **out, char *err, size_t errlen);
/*
 * Serves until every chunk is complete and then linger_ms passed without a
 * message, or until *stop (forever with linger_ms < 0). 0 when complete.
 */
int ia_ps_run(struct ia_ps *ps, char *err, size_t errlen);
/* The aggregated vector (valid for completed chunks), cfg.nelem elements. */
const int32_t *ia_ps_result(const struct ia_ps *ps);
void ia_ps_stats(const struct ia_ps *ps, struct ia_ps_stats *st);
void ia_ps_close(struct ia_ps *ps);
const char *ia_ps_drop_name(enum ia_ps_drop d);

#endif
