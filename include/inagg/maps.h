/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Map layouts shared by the XDP datapath (bpf/inagg.bpf.c) and its loader
 * (user/lib/xdp.c). One switch = one set of these maps, pinned under
 * IA_BPFFS_ROOT/<switch>/ and shared by every port the program is attached to.
 *
 *   ia_jobs      HASH           job id -> struct ia_job_cfg (a job exists iff present)
 *   ia_jfast     ARRAY_OF_MAPS  job slot -> ARRAY[1] of struct ia_job_ent (fast path)
 *   ia_members   HASH           {job, sender} -> struct ia_member
 *   ia_mtab      ARRAY_OF_MAPS  job slot -> ARRAY[2^mbits] of struct ia_mslot (fast path)
 *   ia_down      HASH           {job, ifindex} -> struct ia_down (result replication)
 *   ia_slots     ARRAY_OF_MAPS  job slot -> ARRAY[window] of struct ia_slot (blue only);
 *                              IA_TAIL_SLOT -> ARRAY[tail] of struct ia_slot (the tail pool)
 *   ia_tdir      ARRAY_OF_MAPS  0 -> ARRAY[1] of struct ia_tail_dir (tail directory)
 *   ia_progs     PROG_ARRAY     IA_PROGS_* -> ia_tail, ia_evict, ia_other, ia_hold (tail-called by ia_xdp)
 *   ia_locks     ARRAY          lock of aggregator slot (job slot, index): ia_lock_index()
 *   ia_jstats    PERCPU_ARRAY   job slot -> struct ia_counters
 *   ia_ports     ARRAY          ifindex < IA_PORT_DIRECT -> port index (0: none)
 *   ia_ports_far HASH           ifindex >= IA_PORT_DIRECT -> port index
 *   ia_pstats    PERCPU_ARRAY   port index -> struct ia_counters
 *   ia_owners    HASH           {IA_OWN_*, index} -> job id / ifindex (loader only)
 *   ia_dports    DEVMAP_HASH    ifindex -> port + egress program (broadcast set)
 *   ia_vq        ARRAY          port index -> struct ia_vq (virtual queue: marks, bpf/dp_mark.h)
 *   ia_layout    ARRAY          0 -> IA_MAPS_LAYOUT of the set (loader only, below)
 *
 * Per-job and per-port state is array-indexed: a job slot (ia_job_cfg.slot)
 * and a port index are assigned by the loader. The job and member hashes are
 * authoritative (and what other readers use); the datapath first tries their
 * per-job copies, which it reaches without hashing: ia_jfast[job %
 * IA_MAX_JOBS] (the slot the loader tries first for a job) and a linear-probed
 * member table, and falls back to the hashes when those miss.
 */
#ifndef INAGG_MAPS_H
#define INAGG_MAPS_H

#include <linux/types.h>
#include <linux/bpf.h>
#include "inagg/wire.h"

#define IA_BPFFS_ROOT	"/sys/fs/bpf/inagg"

/*
 * Layout of a switch's pinned maps. An upgrade leaves the old programs
 * running on the old pins, and libbpf reuses a pin whose key and value
 * sizes match (an inner map's not even those), so a pin set records the
 * layout it was made with in its own map ia_layout (ARRAY[1] of __u32,
 * made and frozen by the loader) and the loader refuses a set of another
 * layout, or one with no ia_layout (an older package's).
 *
 * Bump IA_MAPS_LAYOUT on any change to a pinned map or its inner maps: a
 * struct below, a map's type, key, value or size, a constant that sizes
 * one, a counter, or what a value means. Then record the new sizes in
 * IA_MAPS_LAYOUT_SIZES, which tests/unit/maps_layout.c checks against
 * sizeof: a struct changed without a bump fails it.
 */
#define IA_MAPS_LAYOUT	2u
#define IA_MAPS_LAYOUT_SIZES(X)						\
	X(ia_job_cfg, 88) X(ia_job_ent, 96) X(ia_member_key, 8)		\
	X(ia_member, 24) X(ia_mslot, 32) X(ia_down_key, 8) X(ia_down, 16)	\
	X(ia_tail_tag, 32) X(ia_slot, 3352) X(ia_tail_seg, 24)		\
	X(ia_tail_dir, 424) X(ia_slot_lock, 64) X(ia_owner_key, 8)	\
	X(ia_counters, 256) X(ia_vq, 120) X(bpf_devmap_val, 8)

#define IA_MAX_JOBS	256
#define IA_MAX_FANIN	2048	/* distinct members per chunk at one switch */
#define IA_MAX_WINDOW	4096	/* aggregator slots per job */
#define IA_MAX_MEMBERS	65536	/* member entries summed over jobs */
#define IA_MAX_PORTS	256
#define IA_MAX_DOWN	4096	/* down entries summed over jobs */
#define IA_PORT_DIRECT	4096	/* ifindexes below this map to a port by array */
#define IA_MTAB_MAX_BITS 14	/* member table: at most 2^14 entries per job */
#define IA_MPROBE_MAX	8	/* probes of a member table lookup */
#define IA_MHASH_MUL	0x9e3779b1u	/* member table: (sender * MUL) >> (32 - mbits) */
#define IA_SLOT_LOCKS	4096	/* locks shared by all aggregator slots, a power of 2 */
#define IA_LOCK_JOB_STRIDE 1031	/* a prime: jobs' windows start on different locks */
#define IA_TAIL_SLOT	IA_MAX_JOBS	/* ia_slots and lock index of the tail pool */
#define IA_MAX_TAIL	(1u << 16)	/* tail slots per switch (about 85 MiB) */
#define IA_TDIR_SEGS	16	/* lending jobs in a tail directory */
#define IA_TAIL_AGE_NS	1000000ull	/* default flush age of a tail slot's holder */
#define IA_PROGS_TAIL	1	/* ia_progs: ia_tail, PS jobs' messages */
#define IA_PROGS_EVICT	2	/* ia_progs: ia_evict, a blue job's lent slot taken back */
#define IA_PROGS_OTHER	3	/* ia_progs: ia_other, traffic not inagg's into its egress queue */
#define IA_PROGS_HOLD	4	/* ia_progs: ia_hold, a result through a blue switch */
#define IA_PROGS__N	5	/* and IA_TAIL_SPARSE (0): ia_sparse */

enum ia_role {
	IA_ROLE_RED	= 1,	/* forward every upward message to the parent */
	IA_ROLE_BLUE	= 2,	/* aggregate upward messages, one aggregate per chunk */
	IA_ROLE_TAIL	= 3,	/* PS job: aggregate best-effort in the tail (dp_tail.h) */
};

struct ia_job_cfg {
	__u32	role;		/* enum ia_role */
	__u32	expected;	/* distinct members per chunk (= member entries) */
	__u32	nworkers;	/* workers an aggregate of this switch represents */
	__u32	window;		/* slots; chunk seq uses slot seq % window */
	__u32	base_seq;	/* first chunk; slots start empty for [base, base + window) */
	__u32	self_id;	/* sender id of aggregates emitted here */
	__u32	up_ifindex;	/* port toward the parent / destination */
	__be32	up_saddr;	/* blue: source address of aggregates */
	__be32	up_daddr;	/* blue: destination (the job's parameter server) */
	__u8	up_smac[6];	/* rewritten on every upward message */
	__u8	up_dmac[6];
	__u32	flags;		/* IA_JOB_F_* */
	__u32	slot;		/* index in ia_jstats, ia_slots, ia_jfast, ia_mtab (loader) */
	__u32	mbits;		/* member table of 2^mbits entries, 1..IA_MTAB_MAX_BITS */
	__u32	mprobe;		/* longest probe in it, 1..IA_MPROBE_MAX; 0: no table */
	__u64	full;		/* tail: member set of a complete aggregate here (all ranks below) */
	__u32	sparse_nann;	/* IA_JOB_F_SPARSE: announcement chunks (bpf/dp_sparse.h) */
	__u32	gen;		/* tail: this add of the job id (loader); its tail tags carry it */
	__be32	ps_addr;	/* results only from this source (and IA_UDP_PORT); 0: any */
	__u32	rsvd;
};

/*
 * ia_jfast value: a published copy of the job's ia_job_cfg. It is created
 * whole and then inserted into the outer map, so a reader never sees it
 * half written; job tells whether the entry at job % IA_MAX_JOBS is this
 * job's (a job whose slot is elsewhere is found through ia_jobs).
 */
struct ia_job_ent {
	__u32	job;
	__u32	rsvd;
	struct ia_job_cfg cfg;
};

/*
 * Upward messages leave through the kernel (XDP_PASS, routed to the
 * destination) instead of an XDP redirect: slower, but they then pass the
 * egress qdisc, so tc rate emulation applies to them. MACs and the source
 * address are left to the kernel.
 */
#define IA_JOB_F_KERNEL_FWD	0x1
/*
 * Blue with sparse participation (word count, bpf/dp_sparse.h): chunks
 * base .. base + sparse_nann - 1 are dense announcements of which blocks
 * each member sends; every later chunk is a block that only the members
 * that announced it send. The slots past the chunks hold those announcements.
 */
#define IA_JOB_F_SPARSE		0x2
/*
 * The job's messages are marked when the port's virtual queue holds more
 * than K >> IA_VQ_EARLY_SHIFT (K the port's threshold, bpf/dp_mark.h): set
 * by inaggd for PS jobs of the flexina policy, so they yield before the
 * queue reaches the INA jobs' threshold (docs/cc.md).
 */
#define IA_JOB_F_MARK_EARLY	0x4
#define IA_VQ_EARLY_SHIFT	1
/*
 * A sparse job's messages are always whole, IA_SPARSE_ELEMS elements (the
 * layout of its announcement masks, dp_sparse.h): 256-bit masks, 32 of them
 * in the first IA_SPARSE_ELEMS sums of a slot.
 */
#define IA_SPARSE_ELEMS		256
#define IA_SPARSE_MASKS_PER_SLOT 32
#define IA_TAIL_SPARSE		0	/* ia_progs: the sparse datapath, tail-called */

/* Slots holding a sparse job's masks: one per announcement and member. */
static inline __u32 ia_sparse_mask_slots(__u32 nann, __u32 nmembers)
{
	return (nann * nmembers + IA_SPARSE_MASKS_PER_SLOT - 1) / IA_SPARSE_MASKS_PER_SLOT;
}

struct ia_member_key {
	__u32	job;
	__u32	sender;
};

struct ia_member {
	__u32	index;		/* bit in ia_slot.seen, < expected */
	__u32	nworkers;	/* a message from this sender must carry this nworkers */
	__u64	set;		/* tail: ranks its messages may carry (wire.h, struct ia_set) */
	/*
	 * Where the member was placed (docs/security.md): its messages come in
	 * only by port ifindex and, on a host's port, only from source address
	 * saddr and UDP port IA_UDP_PORT; else drop_port. 0: not bound.
	 */
	__u32	ifindex;
	__be32	saddr;
};

/*
 * Member table entry (ia_mtab): sender's home is (sender * IA_MHASH_MUL) >>
 * (32 - mbits), probed linearly; nworkers 0 marks an empty entry, which
 * ends a probe. The sender id is always compared: an entry never vouches for
 * another sender.
 */
struct ia_mslot {
	__u32	sender;
	struct ia_member m;
};

struct ia_down_key {
	__u32	job;
	__u32	ifindex;
};

/* Rewrite of a result leaving on one down-tree port. */
struct ia_down {
	__u8	smac[6];
	__u8	dmac[6];
	__be32	daddr;		/* 0: keep the destination address */
};

enum ia_slot_state {
	IA_SLOT_EMPTY	= 0,
	IA_SLOT_OPEN	= 1,	/* collecting contributions for seq */
	IA_SLOT_DONE	= 2,	/* aggregate sent; kept for re-emission (or the result, held) */
	IA_SLOT_TAIL	= 3,	/* holds a PS job's partial aggregate (tag in ia_slot.t) */
};

/* A PS job's partial aggregate in a slot (state IA_SLOT_TAIL). */
struct ia_tail_tag {
	__u32	job;
	__u32	seq;
	__u64	set;		/* ranks summed (wire.h, struct ia_set) */
	__u64	born;		/* claimed at (bpf_ktime_get_ns) */
	__u32	hstate;		/* lent head slot: its head state under the tag (EMPTY/DONE) */
	__u32	gen;		/* the job's ia_job_cfg.gen: a job added again never sees these */
};

/*
 * One aggregator slot. A job's slots are the inner array of ia_slots, so a
 * job can only ever reach its own slots, and PS jobs reach only the tail
 * and the slots a directory lends, by tag (docs/memory.md). Its lock is in
 * ia_locks: kernels up to 6.1 refuse an inner-map template whose value
 * holds a bpf_spin_lock. A lent head slot held by a PS job keeps seq, the
 * head's last chunk there.
 */
struct ia_slot {
	__u32	seq;
	__u32	state;		/* enum ia_slot_state */
	__u32	nseen;		/* distinct members added */
	__u32	nworkers;	/* sum of their nworkers */
	__u16	nelem;
	__u8	flags;		/* IA_F_MARK if any contribution carried it; held: the result's */
	__u8	held;		/* DONE: sum is the chunk's result, held as it went down */
	__u32	hworkers;	/* held: the result's nworkers */
	union {
		__u64	seen[IA_MAX_FANIN / 64];	/* head */
		struct ia_tail_tag t;			/* IA_SLOT_TAIL */
	};
	__s32	sum[IA_MAX_ELEMS];
};

/*
 * Tail directory (docs/memory.md, "Mapping"): PS chunk (job, seq) goes to v
 * = ia_tail_hash(job, seq) % total; v < tail is tail slot v, the rest walks
 * the segments, each the top count slots [first, first + count) of a
 * lending blue job's head. Published whole (a new inner map) by the loader.
 */
struct ia_tail_seg {
	__u32	job;		/* the lending job's id ... */
	__u32	slot;		/* ... its job slot (ia_slots index) ... */
	__u32	window;		/* ... and head size H, checked against its ia_job_cfg */
	__u32	first;		/* H - count */
	__u32	count;
	__u32	rsvd;
};

struct ia_tail_dir {
	__u32	gen;		/* publications so far */
	__u32	tail;		/* slots of the tail pool */
	__u32	total;		/* tail + every segment's count */
	__u32	nseg;
	__u64	age_ns;		/* a holder older than this is flushed by a new claim */
	__u64	lends;		/* head slots lent, over the switch's life */
	__u64	reclaims;	/* head slots taken back, over the switch's life */
	struct ia_tail_seg seg[IA_TDIR_SEGS];
};

/*
 * The lock of an aggregator slot, one per cache line so that neighbouring
 * slots taken on other CPUs do not share one. IA_SLOT_LOCKS locks serve every
 * (job slot, index): two slots may share a lock, which only serialises them.
 */
struct ia_slot_lock {
	struct bpf_spin_lock lock;
	__u32	pad[15];
};

static inline __u32 ia_lock_index(__u32 job_slot, __u32 idx)
{
	return (job_slot * IA_LOCK_JOB_STRIDE + idx) & (IA_SLOT_LOCKS - 1);
}

/*
 * Who holds a job slot or a port index. The loader claims an index by
 * creating its entry (BPF_NOEXIST), so two processes configuring one switch
 * never get the same one, and frees it one RCU grace period after the datapath
 * stopped using it.
 */
enum ia_own_kind {
	IA_OWN_JOB	= 1,	/* value: job id */
	IA_OWN_PORT	= 2,	/* value: ifindex */
};

struct ia_owner_key {
	__u32	kind;		/* enum ia_own_kind */
	__u32	index;
};

/* Counters, per port and per job (per CPU; user space sums). */
enum ia_ctr {
	IA_C_RX,		/* inagg messages received */
	IA_C_TX,		/* inagg messages sent (up or down) */
	IA_C_FWD,		/* red: forwarded up unchanged */
	IA_C_AGGREGATED,	/* blue: contributions added to a slot */
	IA_C_EMIT,		/* blue: aggregates sent up on completion */
	IA_C_REEMIT,		/* blue: stored aggregate re-sent after completion */
	IA_C_DUP,		/* blue: duplicate of a contribution already added */
	IA_C_ANSWER,		/* blue: a member's resend answered with the result held here */
	IA_C_RESULT,		/* results received for replication */
	IA_C_RESULT_EXTRA,	/* of which no chunk's first: sent again (IA_F_RETX) or NACKs */
	IA_C_PASS,		/* not inagg's: passed to the kernel */
	/*
	 * Loss recovery, counted apart so that first transmissions can be
	 * compared with the congestion model: upward messages flagged
	 * IA_F_RETX or IA_F_REEMIT, received and sent (also in RX and TX).
	 */
	IA_C_RECOVERY_RX,
	IA_C_RECOVERY_TX,
	/* Tail aggregation (PS jobs; docs/memory.md): */
	IA_C_TAIL_CLAIM,	/* a first transmission claimed a slot */
	IA_C_TAIL_LENT,		/* of which a lent head slot */
	IA_C_TAIL_HIT,		/* added into a slot of its chunk */
	IA_C_TAIL_COLL,		/* passed unaggregated: slot held by another chunk, or sets overlap */
	IA_C_TAIL_COMPLETE,	/* aggregate of every rank below sent up */
	IA_C_TAIL_FLUSH,	/* partial aggregate sent toward the PS (counted on its job) */
	IA_C_TAIL_EVICT,	/* blue: own head slot taken back from a PS partial */
	IA_C_TAIL_DISCARD,	/* a partial dropped to take its slot (no room to flush it) */
	IA_C_TAIL_RETX,		/* retransmission passed, never aggregated */
	IA_C_DROP_SHORT,	/* truncated frame, IP options or fragment */
	IA_C_DROP_VERSION,
	IA_C_DROP_TYPE,		/* unknown type, or wrong direction for its type */
	IA_C_DROP_NELEM,	/* 0, > IA_MAX_ELEMS, not the UDP length, or not the chunk's */
	IA_C_DROP_JOB,		/* job not configured here */
	IA_C_DROP_MEMBER,	/* sender not a member, or wrong nworkers */
	IA_C_DROP_WINDOW,	/* chunk outside the slot's window */
	IA_C_DROP_SET,		/* member set empty, or not within the sender's */
	IA_C_TAIL_BYPASS,	/* IA_F_BYPASS passed, never aggregated (docs/cc.md) */
	IA_C_DROP_PORT,		/* a member's id from a port or address it was not placed on */
	IA_C__COUNT,
};

struct ia_counters {
	__u64	c[IA_C__COUNT];
};

/*
 * A port's virtual egress queue (docs/cc.md): every inagg message leaving
 * by the port adds its frame's bytes, the queue drains at the port's
 * configured rate, and a message that finds more than thresh_ns of backlog
 * is marked (IA_F_MARK, and IP CE under ECT). It exists because redirected
 * frames bypass the qdisc. The loader writes the whole value (BPF_F_LOCK);
 * ps_per_byte 0: no queue, nothing marked.
 */
struct ia_vq {
	struct bpf_spin_lock lock;
	__u32	thresh;		/* as configured, bytes (the loader's; the datapath uses *_ns) */
	__u64	rate_bps;	/* as configured, bit/s */
	__u64	limit;		/* as configured, bytes */
	__u64	ps_per_byte;	/* drain rate: picoseconds per byte (8e12 / bit/s) */
	__u64	thresh_ns;	/* mark above this backlog (in drain time) */
	__u64	limit_ns;	/* backlog at most: a message past it is not queued (a full buffer) */
	__u64	finish;		/* ktime ns when the queue is empty */
	__u64	rem_ps;		/* drain time below 1 ns, carried */
	__u64	msgs;		/* messages accounted */
	__u64	bytes;
	__u64	marked;		/* of which marked */
	__u64	full;		/* of which found the queue at its limit */
	/* Frames not inagg's the kernel forwards by the port (ia_other, docs/cc.md). */
	__u64	other;		/* queued as they would be in a real queue, never marked */
	__u64	other_bytes;
	__u64	other_full;	/* of which found the queue at its limit */
};

#endif /* INAGG_MAPS_H */
