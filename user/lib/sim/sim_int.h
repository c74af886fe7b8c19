/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Inside the simulator (sim.h): its state, shared by sim.c (events, hosts,
 * the bottleneck), sim_mem.c (switch memory: heads, tails, lends) and
 * sim_mix.c (job mix, results).
 */
#ifndef INAGG_SIM_INT_H
#define INAGG_SIM_INT_H

#include <stdbool.h>

#include "err.h"
#include "inagg/maps.h"
#include "job_lend.h"
#include "sim.h"

#define CHUNK_BYTES	(4.0 * 256)	/* payload of a full chunk */

enum { EV_SEND, EV_ARRIVE, EV_PSRX, EV_RESULT, EV_WAKE, EV_TIMEOUT, EV_RACK, EV_SAMPLE,
       EV_HOP, EV_ADMIT };
enum { CH_IDLE, CH_FLIGHT, CH_DONE };
enum { HS_EMPTY, HS_OPEN, HS_DONE };	/* a head slot's own state (bpf: IA_SLOT_*) */

struct ev {
	double t;
	uint64_t seq;		/* ties in time: in order of scheduling */
	uint64_t set;		/* EV_PSRX: the message's member set */
	uint32_t job;
	uint32_t cseq;		/* the chunk's sequence number: iteration x chunks + index */
	uint32_t gen;		/* EV_ARRIVE, EV_TIMEOUT, EV_RACK: the send it belongs to;
				 * EV_HOP: the switch the message reaches */
	uint16_t w;		/* EV_ARRIVE: the worker */
	uint8_t type, flags;	/* IA_F_RETX, IA_F_MARK, IA_F_COLL */
};

struct chunk {
	uint32_t gen;		/* sends so far (a timer or RACK check of an older one is stale) */
	uint32_t order, first;	/* the job's send count at its latest and first send (RACK) */
	uint8_t state, flags, agg, sent_once, tmo;	/* tmo: timer resends */
	uint8_t arrived;	/* its result reached the workers, not taken in yet */
	uint64_t got;		/* members the PS merged (exactly once by member set) */
	double t_sent;		/* its latest send (the last worker's) */
	double tmo_at;		/* its pending timer check; 0: none */
};

/*
 * A leaf's slot: a head's own state (INA chunk hseq) and, over it, a PS
 * job's partial under a tag, as bpf/dp_tail.h keeps both. Tail pool slots
 * never leave HS_EMPTY.
 */
struct slot {
	uint32_t hseq;
	uint8_t hstate;
	uint8_t hflags;		/* MARK, COLL of the pieces the head chunk got (ORed up) */
	uint8_t tail;		/* a PS partial: tjob's chunk tseq, members tset */
	uint8_t tflags;
	uint64_t hseen, tset;
	uint32_t tjob, tseq;
	double born, t_open;	/* tag's claim; the head chunk's first contribution */
};

struct sjob {
	struct ia_sim_job *pub;
	struct ia_cc cc;
	uint32_t hsize;		/* INA: its heads' slots (the window, or what was left) */
	bool promote;		/* given heads mid-run (a PS job: INA) from its next iteration */
	bool live;		/* a cluster's: arrived, not finished */
	uint32_t iter, lo, next, agg_inflight, order;
	uint32_t rack_order;	/* the latest-sent chunk with a result, and when it came */
	double rack_time, min_rtt;
	double last_result, last_fresh;	/* the latest result, of a chunk sent once */
	double first;		/* its first result after t0; 0: none yet */
	double wake_at;		/* when its workers take in the results that came; 0: none */
	double *spread, *gap, t0, t_iter, last_cut;
	bool running;		/* an iteration is under way (its window counts for lends) */
	struct chunk *ch;
};

/* An INA job's head at a switch. */
struct hd {
	uint32_t job, head;		/* its first slot */
	struct ia_lend_state lend;	/* what it lends now */
	bool wait;			/* given mid-iteration: used from the job's next */
};

/* A switch with memory: a leaf, or a cluster's spine (after the leaves). */
struct leaf {
	uint32_t slots, heads;
	uint32_t nina;
	struct hd *ina;		/* its INA jobs' heads */
	uint32_t *own;		/* each slot's head: job + 1, 0: none */
	uint32_t npool, *pool;	/* slots in no head, in order: the tail pool */
	struct slot *slot;
	double congested;	/* the last ia_lend_congested() window of a job here (< 0: none) */
};

/* A switch's uplink: a FIFO of rate messages/s. */
struct link {
	double busy, rate;
};

struct sim {
	const struct ia_sim_cfg *cfg;
	enum ia_sim_scheme scheme;
	struct ev *heap;
	size_t n, cap;
	uint64_t seq;
	struct sjob *j;
	struct leaf *leaf;
	uint32_t nleaves, left;	/* jobs not finished */
	uint32_t nsw;		/* switches with memory: leaves, then a cluster's spines */
	struct link *link;	/* each switch's uplink; one (the bottleneck) unless a cluster */
	double idle_rate, free_rate, t_mem;	/* a cluster's idle and free slots since t_mem */
	double idle_time, free_time, mem_peak;
	double rto, age, lend_period, slot_time, now;
	/* Bytes aggregated so far, and when and with how many the first job ended. */
	double bytes_now, t_first_end, bytes_first_end;
	uint64_t results, marked, claims, hits, collided, accepted, wasted, flushes, discards;
	uint64_t rng;		/* whether a flush finds room (cfg->noroom) */
	int err;
};

void ia_sim_push(struct sim *s, double t, uint8_t type, uint32_t job, uint32_t cseq,
		 uint32_t gen, uint16_t w, uint8_t flags, uint64_t set);
/* A message from job's leaf up the bottleneck to its PS (sim.c). */
void ia_sim_up(struct sim *s, uint32_t sw, uint32_t job, uint32_t cseq, uint64_t set,
	       uint8_t flags);
int ia_sim_check(const struct ia_sim_cfg *c);
/* The job mix of s->cfg, classes by selective INA, every job's first send queued. */
int ia_sim_build(struct sim *s, struct ia_sim_job *pub);
void ia_sim_summarise(struct sim *s, const struct ia_sim_job *pub, struct ia_sim_res *r);
void ia_sim_teardown(struct sim *s);

/*
 * sim_mem.c: a piece (members set) of an INA job's chunk cseq at switch sw,
 * into its head there (or on up, where it has none).
 */
void ia_sim_head(struct sim *s, uint32_t sw, uint32_t job, uint32_t cseq, uint64_t set,
		 uint8_t flags);
/* A PS job's first send through a tail: claimed, added, or on raw (collision). */
void ia_sim_tail(struct sim *s, uint32_t sw, uint32_t job, uint32_t cseq, uint64_t set,
		 uint8_t flags);
/* The members of job below switch sw (all of them at a spine). */
uint64_t ia_sim_below(const struct sim *s, uint32_t job, uint32_t sw);
/* job's head at sw; NULL: none. */
struct hd *ia_sim_hd(struct leaf *l, uint32_t job);
/* Gives job a head of n slots from slot start at switch sw (wait: not used yet). */
void ia_sim_take(struct sim *s, uint32_t sw, uint32_t job, uint32_t start, uint32_t n,
		 bool wait);
/* Rebuilds sw's tail pool: its slots in no head, in order. */
void ia_sim_pool(struct leaf *l);
/* sim_mix.c: a switch's memory of l->slots slots, for heads of up to jobs jobs. */
int ia_sim_switch_alloc(struct leaf *l, uint32_t jobs);
/* One sample of the daemon: every INA job's lend (ia_lend_decide()). */
void ia_sim_lend_sample(struct sim *s);

/*
 * sim_cluster.c: the cluster's mix (models, Poisson arrivals, leaves), the
 * admission of a job at its arrival (heads by availability), and the release
 * of its heads at its end, which gives them to PS jobs that now fit.
 */
int ia_sim_cluster_build(struct sim *s, struct ia_sim_job *pub);
void ia_sim_admit(struct sim *s, uint32_t job);
void ia_sim_release(struct sim *s, uint32_t job);
/*
 * A job given heads mid-run starts its next iteration with them: a PS job
 * becomes INA, its windows afresh as an INA job's.
 */
void ia_sim_promoted(struct sim *s, uint32_t job);
/* Accounts idle and free slot-time up to now (before memory or the running jobs change). */
void ia_sim_mem_tick(struct sim *s);
/* The switch job's worker w sends to. */
static inline uint32_t ia_sim_leaf_of(const struct sim *s, uint32_t job, uint32_t w)
{
	const struct ia_sim_job *p = s->j[job].pub;

	return p->leaf + (p->nleaves > 1 ? w % p->nleaves : 0);
}

static inline uint32_t ia_sim_iters(const struct sim *s, uint32_t job)
{
	return s->j[job].pub->iters;
}

static inline uint64_t ia_sim_full(const struct sjob *j)
{
	return j->pub->workers >= 64 ? ~0ull : (1ull << j->pub->workers) - 1;
}

#endif
