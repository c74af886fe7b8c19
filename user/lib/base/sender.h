/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Who sends a message, the one definition every end uses: the plan lists
 * them, a switch (xdp.h) and the destination (host.h) accept only them.
 *
 * Sender ids: worker g (global number, netplan.h) is g + 1; the aggregates
 * of switch v carry IA_SENDER_SWITCH | v; the destination's results carry
 * IA_SENDER_DEST. They go in ia_hdr.sender (include/inagg/wire.h).
 */
#ifndef INAGG_SENDER_H
#define INAGG_SENDER_H

#include <stdint.h>

#define IA_SENDER_SWITCH 0x80000000u
#define IA_SENDER_DEST 0xffffffffu

/* A sender whose messages a switch or the destination accepts for a job. */
struct ia_sender {
	uint32_t id;		/* ia_worker_id() or ia_switch_id() */
	uint32_t nworkers;	/* workers its messages represent (1 for a worker) */
};

static inline uint32_t ia_worker_id(int g)
{
	return (uint32_t)g + 1;
}

static inline uint32_t ia_switch_id(int v)
{
	return IA_SENDER_SWITCH | (uint32_t)v;
}

#endif
