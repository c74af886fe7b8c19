/* SPDX-License-Identifier: GPL-2.0 */
/* Inside the simulator (sim.h): its state, shared by sim.c (events) and sim_mix.c (job mix, results). */
#ifndef INAGG_SIM_INT_H
#define INAGG_SIM_INT_H

#include <stdbool.h>

#include "err.h"
#include "inagg/maps.h"
#include "sim.h"

#define CHUNK_BYTES	(4.0 * 256)	/* payload of a full chunk */

enum { EV_SEND, EV_ARRIVE, EV_ENQ, EV_PSRX, EV_RESULT, EV_TIMEOUT };
enum { CH_IDLE, CH_FLIGHT, CH_DONE };

struct ev {
	double t;
	uint64_t seq;		/* ties in time: in order of scheduling */
	uint32_t job, chunk, gen;
	uint8_t type, raw;	/* EV_ARRIVE: a resend; EV_ENQ: messages are raw */
	uint16_t n;		/* EV_ENQ: messages */
};

struct chunk {
	uint32_t gen, out;
	uint8_t state, flags, agg;
	int32_t slot;		/* leaf slot held, -1: none */
	double t_hold;
};

struct holder {
	uint32_t job, chunk, gen;
	uint8_t used;
};

struct sjob {
	struct ia_sim_job *pub;
	struct ia_cc cc;
	uint32_t head;		/* INA: first slot of its head at the leaf */
	uint32_t iter, lo, next, agg_inflight;
	double *spread, maxspread, gap, t0, last_cut;
	struct chunk *ch;
};

struct leaf {
	uint32_t slots, heads;
	uint32_t nina, *ina;	/* its INA jobs */
	struct holder *hold;
};

struct sim {
	const struct ia_sim_cfg *cfg;
	enum ia_sim_scheme scheme;
	struct ev *heap;
	size_t n, cap;
	uint64_t seq;
	struct sjob *j;
	struct leaf *leaf;
	uint32_t nleaves;
	double busy, rto, slot_time, now;
	uint64_t results, marked, tried, collided;
	int err;
};

void ia_sim_push(struct sim *s, double t, uint8_t type, uint32_t job, uint32_t chunk,
		 uint32_t gen, uint8_t raw, uint16_t n);
int ia_sim_check(const struct ia_sim_cfg *c);
/* The job mix of s->cfg, classes by selective INA, every job's first send queued. */
int ia_sim_build(struct sim *s, struct ia_sim_job *pub);
void ia_sim_summarise(struct sim *s, const struct ia_sim_job *pub, struct ia_sim_res *r);
void ia_sim_teardown(struct sim *s);

#endif
