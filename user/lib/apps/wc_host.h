/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Live word count (docs/apps.md): mappers emit (word, count) records for
 * their split, switches merge them, the reducer at the job's destination
 * ends with the count of every word.
 *
 * Keys are word ids (wordcount.h), cut into blocks of IA_WC_KEYS; a data
 * message carries one block as a dense vector of counts (zero where the
 * sender has no record). Every message is whole, IA_SPARSE_ELEMS elements,
 * zero past the key space (ia_wc_chunk_len() says how many count): a
 * switch's element loops then have a fixed count. A job's chunks:
 *   announcements  seq base .. base + nann - 1: element b of announcement a
 *                  is nonzero iff the sender will send block 256 a + b; a
 *                  dense sum, every member contributes;
 *   blocks         seq base + nann + b: only the members that announced
 *                  block b contribute (sparse), and a blue switch expects
 *                  only those (IA_JOB_F_SPARSE, bpf/dp_sparse.h).
 * A mapper sends its blocks only once it has every announcement's result,
 * so every switch has learnt who announced what before any block arrives.
 * Every chunk has its own aggregator slot, and the members' announcements
 * are kept after them: a blue switch's window is ia_wc_switch_window().
 */
#ifndef INAGG_WC_HOST_H
#define INAGG_WC_HOST_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "host.h"
#include "inagg/maps.h"

#define IA_WC_KEYS		IA_SPARSE_ELEMS	/* keys per data message */
#define IA_WC_TIMEOUT_MS	300	/* default wait for a result before a resend */
#define IA_WC_RETRIES		50
#define IA_WC_WINDOW		32	/* default data messages in flight per mapper */

static inline uint32_t ia_wc_nblocks(uint32_t nvocab)
{
	return (nvocab + IA_WC_KEYS - 1) / IA_WC_KEYS;
}

static inline uint32_t ia_wc_nann(uint32_t nvocab)
{
	return (ia_wc_nblocks(nvocab) + IA_SPARSE_ELEMS - 1) / IA_SPARSE_ELEMS;
}

/* Chunks of a job over nvocab keys: announcements, then blocks. */
static inline uint32_t ia_wc_chunks(uint32_t nvocab)
{
	return ia_wc_nann(nvocab) + ia_wc_nblocks(nvocab);
}

/* Slots of a blue switch with nmembers members: one per chunk, then the masks. */
static inline uint32_t ia_wc_switch_window(uint32_t nvocab, uint32_t nmembers)
{
	return ia_wc_chunks(nvocab) + ia_sparse_mask_slots(ia_wc_nann(nvocab), nmembers);
}

/* Elements of chunk i (announcements first): what every sender puts in it. */
static inline uint32_t ia_wc_chunk_len(uint32_t nvocab, uint32_t i)
{
	uint32_t nann = ia_wc_nann(nvocab), total;

	if (i < nann) {
		total = ia_wc_nblocks(nvocab);
	} else {
		total = nvocab;
		i -= nann;
	}
	return total - i * IA_SPARSE_ELEMS < IA_SPARSE_ELEMS ? total - i * IA_SPARSE_ELEMS : IA_SPARSE_ELEMS;
}

struct ia_wc_mapper_cfg {
	uint32_t job;
	uint32_t id;			/* sender id (netplan.h: worker g is g + 1) */
	struct in_addr addr;		/* own address; results arrive here */
	struct in_addr reducer;		/* the job's destination */
	uint16_t port;			/* 0: IA_UDP_PORT */
	uint32_t base_seq;
	uint32_t nvocab;		/* the key space, shared by every mapper */
	uint32_t window;		/* data messages in flight; 0: IA_WC_WINDOW */
	uint32_t timeout_ms;		/* 0: IA_WC_TIMEOUT_MS */
	uint32_t retries;		/* per message; 0: IA_WC_RETRIES */
	volatile sig_atomic_t *stop;	/* optional: set to end with -EINTR */
	struct ia_host_faults faults;
};

struct ia_wc_mapper_stats {
	uint64_t words;			/* of its split */
	uint64_t keys;			/* distinct words: the records it emits */
	uint64_t blocks;		/* data messages (first transmissions) */
	uint64_t sent;			/* every message, announcements and resends included */
	uint64_t retx;			/* resends */
	uint64_t results;		/* results of its own chunks */
};

/*
 * Counts words[0..n) (ids < nvocab), announces, sends its blocks and waits
 * for each one's result. 0, -ETIMEDOUT, -EINTR or another -errno with err.
 */
int ia_wc_map(const struct ia_wc_mapper_cfg *cfg, const uint32_t *words, size_t n,
	      struct ia_wc_mapper_stats *st, char *err, size_t errlen);

struct ia_wc_reducer_cfg {
	uint32_t job;
	struct in_addr addr;		/* own address (0: any) */
	struct in_addr down;		/* where results go (the root switch) */
	uint16_t port;			/* 0: IA_UDP_PORT */
	uint32_t base_seq;
	uint32_t nvocab;
	/* The senders that reach the destination (ia_plan.dest), 1..IA_MAX_FANIN. */
	uint32_t nmembers;
	const struct ia_sender *members;
	/*
	 * Once every block is in: stop serving at once (NULL), or when *stop
	 * is set, answering late resends meanwhile. Before that, *stop ends
	 * the run with -EINTR.
	 */
	volatile sig_atomic_t *stop;
};

struct ia_wc_reducer_stats {
	uint64_t rx;			/* datagrams */
	uint64_t accepted;		/* contributions added */
	uint64_t dup;			/* a member again for an open chunk */
	uint64_t late;			/* for a completed chunk: its result sent again */
	uint64_t results;		/* results sent */
	uint64_t dropped;		/* malformed, foreign, not a member, unannounced */
	uint32_t blocks;		/* blocks announced by someone */
	uint32_t done;			/* of which complete */
};

/*
 * Serves the job's destination: counts[0..nvocab) gets every word's count.
 * 0 once complete, or -errno with err.
 */
int ia_wc_reduce(const struct ia_wc_reducer_cfg *cfg, uint32_t *counts,
		 struct ia_wc_reducer_stats *st, char *err, size_t errlen);

#endif
