/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A reference model of one switch's XDP datapath, written from the
 * specification (docs/datapath.md, docs/memory.md, include/inagg/wire.h),
 * not from bpf/: for a frame and the state of the switch's jobs it gives
 * the verdict, the frame that leaves and every counter and slot change.
 * The differential fuzzer (tests/model/fuzz.c) runs it beside the BPF
 * programs frame by frame.
 *
 * Covered: red, dense blue (head slots, re-emission, results held and
 * answers), PS jobs in the tail pool and in lent head slots (claim, hit,
 * duplicate, overlap, collision, complete, flush by age, discards,
 * generations, the eviction flush), results down (the ingress side), the
 * parser's drops. Not covered: see docs/datapath.md, "Reference model".
 */
#ifndef INAGG_TESTS_MODEL_H
#define INAGG_TESTS_MODEL_H

#include <stdbool.h>
#include <stdint.h>
#include <linux/types.h>

#include "inagg/wire.h"
#include "inagg/maps.h"

#define M_MAX_JOBS	8
#define M_MAX_MEMBERS	8
#define M_MAX_PORTS	8
#define M_MAX_WINDOW	16
#define M_MAX_TAIL	16
#define M_MAX_LEND	4
#define M_FRAME_MAX	4096

struct m_hop {
	int	ifindex;
	__u8	smac[6], dmac[6];
	__be32	saddr, daddr;
};

struct m_member {
	__u32	id;
	__u32	nworkers;
	__u64	set;		/* tail jobs: the ranks it may carry */
	int	ifindex;	/* placed on this port (0: not bound) */
	__be32	saddr;		/* a host's port: from this address and IA_UDP_PORT (0: any) */
};

/* A slot as the docs describe it: the head's part and, under a PS tag, the tail's. */
struct m_slot {
	__u32	seq;
	__u32	state;		/* enum ia_slot_state */
	__u32	nseen, nworkers, nelem;
	__u8	flags, held;
	__u32	hworkers;
	__u64	seen;		/* member bits (the model's jobs have < 64 members) */
	/* IA_SLOT_TAIL: */
	__u32	tjob, tseq, tgen, hstate;
	__u64	tset;
	__s32	sum[IA_MAX_ELEMS];
};

struct m_job {
	bool	used;
	__u32	id;
	__u32	role;		/* enum ia_role */
	__u32	window, base, self_id, gen;
	__u32	n;
	struct m_member mem[M_MAX_MEMBERS];
	struct m_hop up;
	__be32	ps_addr;	/* results only from this address and IA_UDP_PORT (0: any) */
	__u32	ndown;
	struct m_hop down[M_MAX_PORTS];
	struct m_slot slot[M_MAX_WINDOW];
	__u64	c[IA_C__COUNT];
};

struct m_lend {
	__u32	job;
	__u32	count;
};

struct m_switch {
	int	port[M_MAX_PORTS];
	int	nports;
	__u64	pc[M_MAX_PORTS][IA_C__COUNT];
	struct m_job job[M_MAX_JOBS];
	__u32	gen;		/* generations handed out */
	/* The tail directory and pool. */
	__u32	tail;
	bool	age_old;	/* flush age 1 ns: every holder is old; else none is */
	__u32	nlend;
	struct m_lend lend[M_MAX_LEND];
	struct m_slot pool[M_MAX_TAIL];
};

/* What one frame did: for the fuzzer's coverage table and slot checks. */
enum m_branch {
	MB_PASS, MB_DROP_SHORT, MB_DROP_VERSION, MB_DROP_NELEM, MB_DROP_JOB, MB_DROP_TYPE,
	MB_DROP_MEMBER, MB_DROP_WINDOW, MB_DROP_SET,
	MB_RED_FWD, MB_BLUE_ADD, MB_BLUE_EMIT, MB_BLUE_DUP, MB_BLUE_REEMIT, MB_BLUE_ANSWER,
	MB_BLUE_NELEM, MB_RESULT_DOWN, MB_RESULT_HELD,
	MB_TAIL_CLAIM, MB_TAIL_CLAIM_LENT, MB_TAIL_HIT, MB_TAIL_COMPLETE, MB_TAIL_DUP,
	MB_TAIL_OVERLAP, MB_TAIL_COLL, MB_TAIL_FLUSH, MB_TAIL_DISCARD, MB_TAIL_DISCARD_GEN,
	MB_TAIL_RETX, MB_TAIL_BYPASS, MB_TAIL_FULL, MB_TAIL_NODIR, MB_TAIL_NELEM,
	MB_TAIL_HEAD_FREE, MB_EVICT_FLUSH, MB_EVICT_LOST, MB_EVICT_DISCARD_GEN,
	MB_DROP_PORT,
	MB__N
};

extern const char *const m_branch_name[MB__N];

struct m_out {
	int	verdict;	/* XDP_* */
	__u8	frame[M_FRAME_MAX];
	__u32	len;
	__u64	branches;	/* bit per enum m_branch taken */
	/* Slots it touched: job id (0: the pool) and index; -1 none. */
	int	tjob[2], tidx[2];
	int	ntouched;
};

void m_init(struct m_switch *sw);
int m_port_add(struct m_switch *sw, int ifindex);
/* members[i] gets bit index i; sets may be NULL (not a tail job). */
int m_job_add(struct m_switch *sw, __u32 id, __u32 role, __u32 window, __u32 base,
	      __u32 self_id, __u32 n, const struct m_member *mem, const struct m_hop *up,
	      __u32 ndown, const struct m_hop *down);
int m_job_del(struct m_switch *sw, __u32 id);
/* The whole tail picture: a new pool size starts an empty pool. */
void m_tail_set(struct m_switch *sw, __u32 slots, bool age_old, __u32 nlend,
		const struct m_lend *lend);
void m_rx(struct m_switch *sw, int ifindex, const __u8 *frame, __u32 len, struct m_out *o);

struct m_job *m_job_find(struct m_switch *sw, __u32 id);
int m_port_index(const struct m_switch *sw, int ifindex);

/* model_tail.c, called by m_rx(): a PS job's message; a blue message into a lent slot. */
struct m_pkt;
int m_tail_up(struct m_switch *sw, struct m_pkt *k, const struct m_member *m);
int m_evict(struct m_switch *sw, struct m_pkt *k, const struct m_member *m, struct m_slot *s);

#endif /* INAGG_TESTS_MODEL_H */
