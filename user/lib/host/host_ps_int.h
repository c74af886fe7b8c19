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
	uint8_t answers;	/* done: late messages answered (saturating) */
	uint8_t pending;	/* done: a late message waits for the quiet time's end */
	uint8_t down;		/* done: its result went down (later ones flagged IA_F_RETX) */
	union {
		uint32_t *senders;	/* open: freed on completion, anything later is "late" */
		struct ps_pieces *pieces;	/* open, by set: what it merged (host_ps_sets.c) */
		uint64_t sent_at;	/* done: when the result was last sent down */
	};
};

/*
 * By set (host_ps_sets.c): keep a merged piece (0 or -ENOMEM); split a piece
 * overlapping what c merged, if every piece c merged lies wholly inside or
 * outside it: *set becomes its new members, v their sum (true), else false;
 * free what c kept.
 */
int ia_ps_pieces_keep(struct pchunk *c, uint64_t set, const int32_t *v, uint32_t nelem);
bool ia_ps_pieces_split(const struct pchunk *c, uint64_t *set, int32_t *v, uint32_t nelem);
void ia_ps_pieces_free(struct pchunk *c);

/*
 * Late messages (for a completed chunk: a worker missed its result), results
 * down to an address (the root switch copies each to every worker):
 * host_ps_late.c. The first one at least the quiet time after the chunk's
 * latest result down is answered at once; those within it get one answer
 * at its end. It is PS_QUIET_NS after the result, doubling with each answer
 * up to PS_QUIET_DOUBLINGS times (16 ms): every answer costs a message to
 * every worker, and the workers that missed one result resend at about the
 * same moment (each through blue switches that re-emit), so one copy serves
 * them all.
 */
#define PS_QUIET_NS		1000000ull
#define PS_QUIET_DOUBLINGS	4
/* Stale late messages (ia_ps_late_stale()) are dropped only after this many chunks. */
#define PS_STALE_AFTER		32

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
	/*
	 * Unicast: worker addresses heard from, one per sender id (wid[i] is
	 * waddr[i]'s) and at most cfg.nworkers: spoofed sources take no more.
	 */
	struct sockaddr_in *waddr;
	uint32_t *wid;
	uint32_t nwaddr, capwaddr;
	struct ia_io_tx tx;
	struct ia_ps_stats st;
	uint64_t t_first;
	/* NACKs: chunks below lo are done; hi: the latest chunk of any piece. */
	uint64_t lo, hi;
	struct ps_src *src;
	uint32_t nsrc, capsrc;
	/* Done chunks with a deferred answer (pchunk.pending), in no order. */
	uint64_t *pend;
	uint32_t npend, cappend;
	struct ia_io_rx rx;
};

/* Sends chunk idx's result down, or only to one host (a late worker) if to != NULL. */
int ia_ps_send_result(struct ia_ps *ps, uint64_t idx, const struct sockaddr_in *to);

/* What a late message gets (ia_ps_late_at()). */
enum ia_ps_late {
	IA_PS_LATE_ANSWER,	/* the result, at once */
	IA_PS_LATE_DEFER,	/* the result at the quiet time's end (now pending) */
	IA_PS_LATE_HELD,	/* nothing more: an answer is already pending */
};

/* The quiet time after a result, once answers late messages were answered. */
uint64_t ia_ps_quiet_ns(uint32_t answers);
/*
 * A late message of done chunk c came at now: what it gets. Counts an
 * answer at once in c; a deferred one is due at ia_ps_late_due(c) and
 * counted by ia_ps_late_sent(c, now) when sent.
 */
enum ia_ps_late ia_ps_late_at(struct pchunk *c, uint64_t now);
uint64_t ia_ps_late_due(const struct pchunk *c);
void ia_ps_late_sent(struct pchunk *c, uint64_t now);
/*
 * A late message that arrived (at) before its chunk's latest result went
 * down (sent_at) was sent before its sender could have seen that result:
 * no sign that the result was lost (resends answering a NACK or a hole,
 * queued behind the repair). It is dropped, unless the late messages not
 * dropped so far (answered), per chunk done, say that results are lost
 * often (half a worker per result or more: at 10 % loss, 18 workers, 1.8):
 * then its deferred answer is a second copy that serves those who missed
 * the first before they even ask. Before PS_STALE_AFTER chunks are done
 * there is no such estimate: kept.
 */
bool ia_ps_late_stale(uint64_t at, uint64_t sent_at, uint64_t answered, uint64_t done);
/* Done chunk idx's late message came (results down to an address). 0 or -errno. */
int ia_ps_late(struct ia_ps *ps, uint64_t idx, uint64_t now);
/* Sends the deferred answers due; 0 or -errno, and in *wake when the next is due. */
int ia_ps_late_flush(struct ia_ps *ps, uint64_t now, uint64_t *wake);

/* Chunk idx's piece from sender, of a job without member sets, came. 0 or -errno. */
int ia_ps_nack_heard(struct ia_ps *ps, uint64_t idx, uint32_t sender, uint64_t now);
/* Sends the NACKs due; 0 or -errno, and in *wake when the next one is due. */
int ia_ps_nack(struct ia_ps *ps, uint64_t now, uint64_t *wake);

#endif
