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

enum { EV_SEND, EV_ARRIVE, EV_PSRX, EV_RESULT, EV_WAKE, EV_TIMEOUT, EV_RACK, EV_SAMPLE };
enum { CH_IDLE, CH_FLIGHT, CH_DONE };
enum { HS_EMPTY, HS_OPEN, HS_DONE };	/* a head slot's own state (bpf: IA_SLOT_*) */

struct ev {
	double t;
	uint64_t seq;		/* ties in time: in order of scheduling */
	uint64_t set;		/* EV_PSRX: the message's member set */
	uint32_t job;
	uint32_t cseq;		/* the chunk's sequence number: iteration x chunks + index */
	uint32_t gen;		/* EV_ARRIVE, EV_TIMEOUT, EV_RACK: the send it belongs to */
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
	uint8_t tail;		/* a PS partial: tjob's chunk tseq, members tset */
	uint8_t tflags;
	uint64_t hseen, tset;
	uint32_t tjob, tseq;
	double born, t_open;	/* tag's claim; the head chunk's first contribution */
};

struct sjob {
	struct ia_sim_job *pub;
	struct ia_cc cc;
	struct ia_lend_state lend;	/* INA: what its head lends now */
	uint32_t head;		/* INA: first slot of its head at the leaf */
	uint32_t hsize;		/* INA: its head's slots (the window, or what was left) */
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

struct leaf {
	uint32_t slots, heads;
	uint32_t nina, *ina;	/* its INA jobs */
	struct slot *slot;
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
	double busy, rto, age, lend_period, slot_time, now;
	/* Bytes aggregated so far, and when and with how many the first job ended. */
	double bytes_now, t_first_end, bytes_first_end;
	uint64_t results, marked, claims, hits, collided, accepted, wasted, flushes, discards;
	uint64_t rng;		/* whether a flush finds room (cfg->noroom) */
	int err;
};

void ia_sim_push(struct sim *s, double t, uint8_t type, uint32_t job, uint32_t cseq,
		 uint32_t gen, uint16_t w, uint8_t flags, uint64_t set);
/* A message from job's leaf up the bottleneck to its PS (sim.c). */
void ia_sim_up(struct sim *s, uint32_t job, uint32_t cseq, uint64_t set, uint8_t flags);
int ia_sim_check(const struct ia_sim_cfg *c);
/* The job mix of s->cfg, classes by selective INA, every job's first send queued. */
int ia_sim_build(struct sim *s, struct ia_sim_job *pub);
void ia_sim_summarise(struct sim *s, const struct ia_sim_job *pub, struct ia_sim_res *r);
void ia_sim_teardown(struct sim *s);

/* sim_mem.c: worker w's first send (or any send of an INA job) of chunk cseq at job's leaf. */
void ia_sim_head(struct sim *s, uint32_t job, uint32_t cseq, uint32_t w);
/* A PS job's first send through a tail: claimed, added, or on raw (collision). */
void ia_sim_tail(struct sim *s, uint32_t job, uint32_t cseq, uint32_t w);
/* One sample of the daemon: every INA job's lend (ia_lend_decide()). */
void ia_sim_lend_sample(struct sim *s);

static inline uint64_t ia_sim_full(const struct sjob *j)
{
	return j->pub->workers >= 64 ? ~0ull : (1ull << j->pub->workers) - 1;
}

#endif
