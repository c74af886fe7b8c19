/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The destination's state, shared by host_ps.c (merging, results) and
 * host_ps_nack.c (NACKs of chunks found lacking a piece). Internal.
 */
#ifndef INAGG_HOST_PS_INT_H
#define INAGG_HOST_PS_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "host.h"
#include "host_io.h"

enum { PC_EMPTY, PC_OPEN, PC_DONE };

struct pchunk {
	uint8_t state;		/* PC_EMPTY (nothing yet), PC_OPEN, PC_DONE */
	uint8_t flags;		/* IA_F_MARK, IA_F_COLL seen in an accepted contribution */
	uint32_t nworkers;	/* sum over distinct senders */
	uint32_t nsenders, cap;
	uint64_t uset;		/* by set: ranks merged so far */
	uint64_t suspect;	/* when a later piece of a sender it lacks came, 0: none */
	uint8_t nacked;		/* NACKed (once at most) */
	union {
		uint32_t *senders;	/* open: freed on completion, anything later is "late" */
		uint64_t sent_at;	/* done: when the result was last sent down */
	};
};

/*
 * Down to an address (the root switch replicates to every worker), a result
 * sent less than this ago is not sent again for another late message: the
 * workers that missed one result resend at about the same moment (and each
 * of their blue switches re-emits), and one copy reaches them all.
 */
#define RESEND_GAP_NS	1000000ull

/* NACKs (host_ps_nack.c): a chunk found lacking a piece is NACKed this much later. */
#define NACK_REO_NS		300000ull	/* reordering on the way */
#define NACK_SCAN		4096		/* open chunks looked at beyond the first */

/* A sender of pieces: the latest chunk of its pieces seen. */
struct ps_src {
	uint32_t id;
	uint64_t top;
};

struct ia_ps {
	struct ia_ps_cfg cfg;
	struct ia_sender *members;
	uint64_t *sets;		/* by set: members[i]'s, else NULL */
	uint64_t full;		/* by set: every rank */
	uint64_t nchunks;
	struct pchunk *ch;
	int32_t *sum;
	struct sockaddr_in down;
	struct sockaddr_in *waddr;	/* unicast: worker addresses heard from */
	uint32_t nwaddr, capwaddr;
	struct ia_io_tx tx;
	struct ia_ps_stats st;
	uint64_t t_first;
	/* NACKs: chunks below lo are done; hi: the latest chunk of any piece. */
	uint64_t lo, hi;
	struct ps_src *src;
	uint32_t nsrc, capsrc;
	struct ia_io_rx rx;
};

/* Chunk idx's piece from sender, of a job without member sets, came. 0 or -errno. */
int ia_ps_nack_heard(struct ia_ps *ps, uint64_t idx, uint32_t sender, uint64_t now);
/* Sends the NACKs due; 0 or -errno, and in *wake when the next one is due. */
int ia_ps_nack(struct ia_ps *ps, uint64_t now, uint64_t *wake);

#endif
