/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Window control of a job's workers (issue 12, docs/cc.md): the policies
 * `fixed`, `atp`, `a2tp` and `flexina` as pure functions over one small
 * state, shared by the live worker and the simulator. No I/O, no clock:
 * the caller passes the time of each event (any monotonic ns).
 *
 * A worker keeps ia_cc_window() chunks in flight (the link window); of
 * those, only the first ia_cc_agg_window() may use switch memory (the
 * aggregator window), the others bypass it to the PS. It reports each result
 * (with its mark and collision bits) and each window-wide timeout.
 *
 * All arithmetic is integer: alpha is a fraction in units of 1/IA_CC_ONE, so
 * a sequence of events gives the same windows everywhere.
 */
#ifndef INAGG_CC_H
#define INAGG_CC_H

#include <stdbool.h>
#include <stdint.h>

#define IA_CC_ONE	1024u	/* alpha of 1 (DCTCP's units) */
#define IA_CC_G_SHIFT	3	/* EWMA gain g = 1/8 */
/* A2TP's threshold on beta (0.1 in its client) before the aggregator window is cut. */
#define IA_CC_A2TP_THRESH	102u

enum ia_cc_policy {
	IA_CC_FIXED,	/* +1 per result, halve on a timeout; marks ignored (today's worker) */
	IA_CC_ATP,	/* ATP's client: the window-closing result halves if marked, else +1 */
	IA_CC_A2TP,	/* A2TP's client: DCTCP link window + aggregator window on beta */
	IA_CC_FLEXINA,	/* INA-aware: PS jobs cut harder; their tail use follows the
			 * aggregator window */
	IA_CC__COUNT,
};

/* What a result reports (ia_cc_result()'s flags). */
#define IA_CC_MARK	0x1	/* congestion mark (IA_F_MARK on the result) */
#define IA_CC_COLL	0x2	/* part of the chunk collided in switch memory */

struct ia_cc_cfg {
	enum ia_cc_policy policy;
	bool ps;		/* a PS job (tail memory only); else an INA job (own head) */
	uint32_t wmin;		/* smallest window; 0: 1 */
	uint32_t wmax;		/* largest window (the worker's --window, an INA job's head) */
	uint32_t init;		/* first window; 0: wmax */
};

struct ia_cc {
	struct ia_cc_cfg cfg;
	uint32_t cwnd;		/* link window: chunks in flight */
	uint32_t awnd;		/* aggregator window: of those, may use switch memory */
	uint32_t alpha;		/* smoothed marked fraction, 0..IA_CC_ONE */
	uint32_t beta;		/* a2tp: smoothed collided fraction of awnd, 0..IA_CC_ONE */
	/* The current round: a window of results (rlen results, cwnd at its start). */
	uint32_t rlen;
	uint32_t racked;
	uint32_t rmarked;
	uint32_t rcoll;
	bool rlast_mark;	/* the round's latest result was marked (atp) */
	uint64_t t_change;	/* time of the last change of cwnd */
	uint64_t t_cut;		/* time of the last decrease of cwnd (0: none yet) */
	/* Totals, for statistics. */
	uint64_t rounds;
	uint64_t cuts;		/* decreases of cwnd (marks and timeouts) */
	uint64_t acuts;		/* decreases of awnd (collisions) */
};

/* 0, or -EINVAL (unknown policy, wmax 0, wmin > wmax, init outside [wmin, wmax]). */
int ia_cc_init(struct ia_cc *cc, const struct ia_cc_cfg *cfg, uint64_t now);
/* One chunk's result arrived; flags: IA_CC_MARK, IA_CC_COLL. */
void ia_cc_result(struct ia_cc *cc, unsigned int flags, uint64_t now);
/* Most of the window timed out (an outage or a full queue): every policy halves. */
void ia_cc_timeout(struct ia_cc *cc, uint64_t now);
/*
 * A new tensor (iteration) starts on a carried state: atp restarts at its
 * first window (ATP's client builds a new CC_manager per tensor); the others
 * go on (A2TP's client keeps its windows across tensors).
 */
void ia_cc_iteration(struct ia_cc *cc, uint64_t now);

static inline uint32_t ia_cc_window(const struct ia_cc *cc)
{
	return cc->cwnd;
}

/* Chunks in flight that may use switch memory (never more than the window). */
static inline uint32_t ia_cc_agg_window(const struct ia_cc *cc)
{
	return cc->awnd < cc->cwnd ? cc->awnd : cc->cwnd;
}

/*
 * flexina's PS jobs decide a chunk's use of switch memory by the chunk alone,
 * so that all the job's workers decide alike (docs/cc.md "Aggregator-window
 * bypass"): each chunk has a rank, its sequence number's low
 * IA_CC_RANK_BITS bits reversed, and a first send uses memory iff
 * rank / 2^IA_CC_RANK_BITS < agg window / window. Of any 2^IA_CC_RANK_BITS
 * consecutive chunks, ceil(2^IA_CC_RANK_BITS * agg window / window) use
 * memory; workers whose windows give the same ceiling decide every chunk
 * alike, whatever they have in flight. A chunk one worker puts in a tail
 * and another sends past it waits in the tail for the resend timer.
 */
#define IA_CC_RANK_BITS	4

static inline uint32_t ia_cc_rank(uint32_t seq)
{
	uint32_t r = 0;

	for (int i = 0; i < IA_CC_RANK_BITS; i++)
		r |= ((seq >> i) & 1u) << (IA_CC_RANK_BITS - 1 - i);
	return r;
}

/*
 * Whether a PS job's first send of chunk seq may use switch memory, inmem of
 * its chunks in flight using it: flexina by the chunk's rank (above), the
 * other policies while fewer than the aggregator window are (A2TP's client).
 */
static inline bool ia_cc_in_memory(const struct ia_cc *cc, uint32_t seq, uint32_t inmem)
{
	uint32_t aw = ia_cc_agg_window(cc);

	if (cc->cfg.policy == IA_CC_FLEXINA)
		return (uint64_t)ia_cc_rank(seq) * cc->cwnd < (uint64_t)aw << IA_CC_RANK_BITS;
	return inmem < aw;
}

/*
 * The switches mark this job's messages at their lower threshold
 * (IA_JOB_F_MARK_EARLY, docs/cc.md): flexina's PS jobs, so that they yield
 * before the queue builds up to the INA jobs' threshold.
 */
static inline bool ia_cc_marks_early(enum ia_cc_policy p, bool ps)
{
	return p == IA_CC_FLEXINA && ps;
}

const char *ia_cc_policy_name(enum ia_cc_policy p);
/* 0 and *p, or -EINVAL for a name that is none of the policies. */
int ia_cc_policy_parse(const char *name, enum ia_cc_policy *p);

#endif
