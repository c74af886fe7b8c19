/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The differential fuzzer: seeded sequences of operations (frames from
 * every port for every job role, mutated frames, tail pool / lend / flush
 * age changes, a PS job added again) run through the BPF programs with
 * BPF_PROG_TEST_RUN and through the reference model (model.h), compared
 * frame by frame: verdict, the frame that leaves, every job's and port's
 * counters, the slots the frame touched, and the counters' accounting
 * (every frame has exactly one outcome). A mismatch is shrunk to a
 * minimal sequence and printed with its seed.
 */
#ifndef INAGG_TESTS_FUZZ_H
#define INAGG_TESTS_FUZZ_H

#include <stdio.h>
#include <time.h>

#include "model.h"

struct ia_xdp;

/* The scenario's switch: ports, jobs (docs/datapath.md's roles). */
#define FZ_NPORTS	4	/* 0: up, 1, 2: down with a result hop, 3: down, no hop */
#define FZ_NOPORT	4	/* an ingress that is no port of the switch */
#define FZ_SELF		900
#define FZ_BLUE		5	/* blue: 1, 2 (workers), FZ_BELOW (a blue switch, 2 workers) */
#define FZ_RED		7	/* red: 1, 2 */
#define FZ_PS		50	/* tail: 1, 2, 3 (ranks 0-2), FZ_LOWER (3, 4), FZ_WHOLE */
#define FZ_INA		60	/* blue, lends: 11, 12 */
#define FZ_UNKNOWN	99
#define FZ_BELOW	0x80000003u
#define FZ_LOWER	700
#define FZ_WHOLE	800	/* a tail switch below with every rank (its pieces overlap all) */
#define FZ_WINDOW	4
#define FZ_NE		4	/* elements of most messages */

enum fz_kind {
	FZ_FRAME,	/* a frame in */
	FZ_TAIL,	/* the tail picture published: pool, flush age, the blue job's lend */
	FZ_READD,	/* the PS job removed and added again (a new generation) */
};

/* How a frame is spoiled (0: not). */
enum fz_mut {
	FZ_M_NONE, FZ_M_TRUNC, FZ_M_VERSION, FZ_M_IPOPT, FZ_M_FRAG, FZ_M_UDPLEN, FZ_M_NOTUDP,
	FZ_M_PORT, FZ_M_TINY, FZ_M_ETHER, FZ_M_IPLEN, FZ_M__N
};

struct fz_op {
	__u8	kind;		/* enum fz_kind */
	__u8	port;		/* FRAME: 0..FZ_NOPORT */
	__u8	type, flags, mut;
	__u16	nelem;
	__u32	job, seq, sender, nworkers;
	__u64	set;		/* the trailer's, with IA_F_SET */
	__u32	vals;		/* seed of the payload */
	/* TAIL: */
	__u8	age_old;
	__u32	slots, lend;
};

/* A mismatch: where and what. */
struct fz_diff {
	long	at;		/* op index, -1: none */
	char	what[256];
};

struct fz {
	struct ia_xdp	*x;
	int		prog;		/* the ia_xdp program run */
	int		port[FZ_NPORTS];
	struct m_switch	m;
	struct m_out	o;
	__u64		pbase[FZ_NPORTS][IA_C__COUNT];	/* port counters at the reset */
	__u64		jbase[4][IA_C__COUNT];		/* job counters at the reset */
	__u32		tail[3];	/* published: pool, age old, lend */
	int		jobs_fd, slots_fd;	/* the switch's ia_jobs, ia_slots */
	/* Slot arrays open by map id: no fd opened and closed per slot read (slow on 6.1). */
	struct { __u32 key, id; int fd; } inner[3];
	struct m_hop	m_up, m_down[2];
	__u32		m_window[4];
	__u64		cover[MB__N];
	__u64		frames;
	/* Where a pass spends its time (the 6.1 guest's budget): frames, configuration. */
	__u64		ns_frames, ns_cfg, ncfg, ns_run, ns_snap, ns_slots, ns_model;
	/* Slot reads stop after this much time (0: never), and frames checked without. */
	__u64		slot_budget_ns, noslots;
	unsigned	slow:1;		/* every slot and counter after every frame */
	unsigned	stopped:1;	/* fz_run() stopped at the deadline */
	time_t		deadline;	/* 0: none */
};

#define FZ_NJOBS	4
extern const __u32 fz_jobs[FZ_NJOBS];

/* The datapath's counters: every job's, every port's since the reset. */
struct fz_snap {
	__u64	j[FZ_NJOBS][IA_C__COUNT];
	__u64	p[FZ_NPORTS][IA_C__COUNT];
};

/* fuzz_gen.c; operations per million that publish a tail, that add the PS job again */
extern unsigned int fz_tail_ppm, fz_readd_ppm;
void fz_gen(__u64 seed, struct fz_op *ops, long n);
int fz_frame(const struct fz_op *op, __u8 *buf);
void fz_print_op(FILE *f, long i, const struct fz_op *op);

/* fuzz_cmp.c: one frame's outcome against the model's (o); 1 and d filled if they differ. */
int fz_snap(struct fz *z, struct fz_snap *s);
void fz_inner_close(struct fz *z);
int fz_check(struct fz *z, long at, int port, int verdict, const __u8 *out, __u32 olen,
	     struct fz_snap *prev, struct fz_diff *d);

/* fuzz_run.c */
int fz_open(struct fz *z);
/*
 * x's program attached (generic, link down: no traffic) to a new veth
 * called name: a program attached nowhere is added to the kernel's XDP
 * dispatcher and removed again by every test_run, and a dispatcher update
 * may wait for an RCU grace period (docs/datapath.md, the bench's ia_gen).
 */
int fz_keep_dispatched(struct ia_xdp *x, const char *name);
/* The tail's programs of a mutated build (bpf/bpf.mk) take the place of the switch's. */
int fz_load_mutant(struct fz *z, const char *obj);
void fz_close(struct fz *z);
/*
 * Runs ops from a fresh switch; 0 if model and datapath agreed all along
 * (or until the deadline, if any: then stopped is set).
 */
int fz_run(struct fz *z, const struct fz_op *ops, long n, struct fz_diff *d);
/* Shrinks ops[0..*n) (which fails) in place to a sequence that still fails. */
void fz_shrink(struct fz *z, struct fz_op *ops, long *n, struct fz_diff *d, int budget);
void fz_report(FILE *f, __u64 seed, const struct fz_op *ops, long n, const struct fz_diff *d);
void fz_coverage(FILE *f, const struct fz *z);
/* Frames per second and the time configuration took. */
void fz_rate(FILE *f, const struct fz *z);

#endif /* INAGG_TESTS_FUZZ_H */
