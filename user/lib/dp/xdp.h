/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Loader of the XDP datapath (bpf/inagg.bpf.c) for one switch.
 *
 * A switch is one set of maps and one instance of its programs, pinned
 * under IA_BPFFS_ROOT/<switch>/ (that is /sys/fs/bpf/inagg/<switch>/), the
 * ia_xdp program attached to each of its ports. Opening a switch whose maps
 * and programs are pinned reuses them without loading anything, so any
 * process can configure jobs or read counters of a running switch, and all
 * its ports run one program. Programs stay attached after the process exits.
 *
 * Interface indexes are those of the switch's network namespace: call
 * ia_xdp_attach(), ia_xdp_port_add() and ia_xdp_job_add() (down ports) with
 * the calling thread in that namespace.
 *
 * Every function returns 0 or a negative errno. Those that can say more
 * take the caller's error buffer (why, whylen: err.h's one convention; NULL
 * for none): on failure it holds the reason in words (a missing kernel
 * feature, the verifier's log tail, whose XDP program is in the way), or the
 * errno's words (ia_xdp_errname()) where there is no more to say. For the
 * others, ia_xdp_errname() is the whole story.
 */
#ifndef INAGG_XDP_H
#define INAGG_XDP_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <linux/types.h>

#include <bpf/libbpf.h>

#include "inagg/maps.h"
#include "err.h"
#include "sender.h"

/* A buffer for ia_xdp_open()'s reason, which may carry the verifier's last lines. */
#define IA_XDP_ERRLEN	(IA_ERRLEN + 8192)

struct ia_xdp;

/* One hop: the port a message leaves by and how it is rewritten there. */
struct ia_xdp_hop {
	int	ifindex;
	__u8	smac[6];	/* this switch's port */
	__u8	dmac[6];	/* next hop */
	__be32	saddr;		/* up: source of aggregates (0: keep); down: unused */
	__be32	daddr;		/* up: the destination (0: keep); down: worker (0: keep) */
};

/*
 * Where a member was placed (docs/security.md): its messages are accepted
 * only by port ifindex and, if saddr is set (a host's port), only from
 * saddr and UDP port IA_UDP_PORT. 0: not bound.
 */
struct ia_xdp_bind {
	int	ifindex;
	__be32	saddr;
};

/*
 * A job's configuration at one switch. Expected contributions per chunk at
 * this switch = nmembers: the workers attached here, the workers behind red
 * switches below, and the blue switches below (each counted once).
 */
struct ia_xdp_job {
	__u32	id;
	enum ia_role role;	/* IA_ROLE_TAIL: a PS job aggregating in the tail here */
	__u32	window;		/* blue: slots = chunks in flight, 1..IA_MAX_WINDOW */
	__u32	base_seq;	/* first chunk sequence number */
	__u32	self_id;	/* blue: sender id of this switch's aggregates */
	__u32	nmembers;	/* 1..IA_MAX_FANIN */
	const struct ia_sender *members;	/* workers and blue switches below */
	const struct ia_xdp_bind *bind;		/* members[i]'s place; NULL: none bound */
	__be32	ps_addr;	/* results only from this source; 0: from any */
	/*
	 * Tail only: members[i]'s member set, the ranks (bit r: the job's worker
	 * of rank r < IA_MAX_RANKS) its messages may carry: a worker its own
	 * bit, a tail switch below every rank below it (then its nworkers is
	 * the popcount). A complete aggregate here holds the union of all.
	 */
	const __u64 *sets;
	__u32	flags;		/* IA_JOB_F_* (maps.h) */
	__u32	sparse_nann;	/* blue, IA_JOB_F_SPARSE: announcement chunks */
	struct ia_xdp_hop up;	/* parent (or destination) egress */
	__u32	ndown;		/* ports leading to the job's workers, for results */
	const struct ia_xdp_hop *down;
};

/*
 * sw: switch name (pinned maps), or NULL for private unpinned maps (tests).
 * Creates and pins what is missing; loads the programs only if they are not
 * pinned yet, after probing the kernel for the features they need. Maps
 * pinned with another IA_MAPS_LAYOUT (by another version: maps.h) are
 * refused with -ESTALE, why saying what the operator does about it.
 */
int ia_xdp_open(const char *sw, struct ia_xdp **out, char *why, size_t whylen);
/* Like ia_xdp_open() for a switch set up before: -ENOENT, and nothing created, if not. */
int ia_xdp_open_existing(const char *sw, struct ia_xdp **out, char *why, size_t whylen);
/*
 * Whether the maps pinned for sw now are x's: 0 if they were removed or
 * replaced (the switch set up again: a kept handle is stale), 1 if so.
 */
int ia_xdp_current(struct ia_xdp *x, const char *sw);
void ia_xdp_close(struct ia_xdp *x);
/* Removes a switch's pinned maps (detach its ports first). */
int ia_xdp_unpin(const char *sw);

/*
 * What switch sw has pinned, whatever its layout: the ids of its programs
 * and maps (to tell whether any interface still runs them: inagg dev
 * cleanup). Returns 0, or -errno if the folder cannot be read.
 */
#define IA_XDP_PINS_MAX	64
struct ia_xdp_pins {
	__u32	prog_ids[IA_XDP_PINS_MAX];
	__u32	map_ids[IA_XDP_PINS_MAX];
	int	nprogs, nmaps;
	bool	xdp_prog;	/* ia_xdp's pin (ia_xdp_pin_progs()) is there and readable */
	int	unreadable;	/* pins that could not be opened, or of neither kind */
	char	bad[64];	/* the first of them, and why */
};
int ia_xdp_pins_read(const char *sw, struct ia_xdp_pins *p);

/*
 * xdp_flags: XDP_FLAGS_DRV_MODE, XDP_FLAGS_SKB_MODE or 0 (attach: the mode
 * of what is attached, else the kernel's choice; detach: any mode), ORed with
 * IA_XDP_F_FORCE to replace or remove an XDP program that is not this
 * switch's. Without it, attach fails with -EBUSY if such a program is on the
 * port, and detach leaves it there (-EBUSY). Attaching again is a no-op;
 * another instance of the switch's program is replaced. Detach fails with
 * -ENOENT if no inagg program is attached.
 */
#define IA_XDP_F_FORCE	(1U << 31)
int ia_xdp_attach(struct ia_xdp *x, int ifindex, __u32 xdp_flags, char *why, size_t whylen);
int ia_xdp_detach(struct ia_xdp *x, int ifindex, __u32 xdp_flags, char *why, size_t whylen);
/*
 * Detaches switch sw's program from ifindex as ia_xdp_detach() does, with
 * its pins alone: for maps another version pinned, which ia_xdp_open()
 * refuses (-ESTALE) and which are neither loaded nor written here.
 */
int ia_xdp_detach_pinned(const char *sw, int ifindex, __u32 xdp_flags, char *why,
			 size_t whylen);
/* Attaches the XDP_PASS program (a host-side veth receiving redirected frames). */
int ia_xdp_attach_pass(struct ia_xdp *x, int ifindex, __u32 xdp_flags, char *why, size_t whylen);
/* What attach does besides attaching: port counters and result broadcast set. */
int ia_xdp_port_add(struct ia_xdp *x, int ifindex);
int ia_xdp_port_del(struct ia_xdp *x, int ifindex);

/* A tail job's first add here loads the tail's programs (ia_xdp_tail_load()). */
int ia_xdp_job_add(struct ia_xdp *x, const struct ia_xdp_job *job, char *why, size_t whylen);
/* Removes a job and frees its slots; -ENOENT if it is not configured. */
int ia_xdp_job_del(struct ia_xdp *x, __u32 job);

/* Counters summed over CPUs. */
int ia_xdp_job_counters(struct ia_xdp *x, __u32 job, struct ia_counters *out);
int ia_xdp_port_counters(struct ia_xdp *x, int ifindex, struct ia_counters *out);
const char *ia_ctr_name(enum ia_ctr c);

/*
 * The tail (docs/memory.md, "Loader API for the tail"). One call sets the
 * switch's tail pool and publishes its directory: the pool's size and, per
 * lending blue job here, how many of the top slots of its head PS jobs may
 * claim. A new size starts an empty pool (partials of the old one are
 * dropped: their members retransmit to the PS); a job's lend may change
 * freely (its own chunks take its slots back per packet). Deleting a job
 * withdraws its lend. PS jobs are added with role IA_ROLE_TAIL.
 */
struct ia_xdp_lend {
	__u32	job;		/* a blue job of this switch */
	__u32	count;		/* top slots of its head lent, 1..its window */
};

struct ia_xdp_tail {
	__u32	slots;		/* tail pool, 0..IA_MAX_TAIL */
	__u64	age_ns;		/* flush a partial older than this; 0: IA_TAIL_AGE_NS */
	__u32	nlend;		/* 0..IA_TDIR_SEGS */
	const struct ia_xdp_lend *lend;
};

int ia_xdp_tail_set(struct ia_xdp *x, const struct ia_xdp_tail *t, char *why, size_t whylen);
/*
 * The tail's programs (ia_tail, ia_evict) verified and loaded on this
 * switch's maps, unless they are (by any process: ia_progs is pinned).
 * Adding a tail job does it; a controller may do it first, where seconds of
 * verification meet no deadline. Setting the tail does not.
 */
int ia_xdp_tail_load(struct ia_xdp *x, char *why, size_t whylen);

struct ia_xdp_tail_info {
	__u32	slots;		/* published tail pool */
	__u32	lent;		/* published lent head slots (sum of counts) */
	__u32	nlend;		/* lending jobs */
	__u32	gen;		/* publications so far */
	__u32	loaded;		/* 1: the tail's programs are loaded (ia_xdp_tail_load()) */
	__u64	age_ns;
	__u64	lends;		/* head slots lent, summed over publications (increases) */
	__u64	reclaims;	/* head slots taken back, likewise (decreases) */
	/* The datapath's counters summed over every job of the switch (IA_C_TAIL_* ...). */
	struct ia_counters c;
};

int ia_xdp_tail_info(struct ia_xdp *x, struct ia_xdp_tail_info *out);
/* A job's lent slot count as published (0 if it lends none). */
int ia_xdp_tail_lent(struct ia_xdp *x, __u32 job, __u32 *count);

/* A copy of one aggregator slot of a blue job (unlocked: consistent while no traffic runs). */
int ia_xdp_slot_read(struct ia_xdp *x, __u32 job, __u32 idx, struct ia_slot *out);
/* Likewise for tail slot idx of the switch's pool. */
int ia_xdp_tail_slot_read(struct ia_xdp *x, __u32 idx, struct ia_slot *out);

/* strerror() that knows the kernel's own codes (above 511: ENOTSUPP, ETOOSMALL). */
const char *ia_xdp_errname(int err);
/*
 * libbpf's print hook, for programs to install (libbpf_set_print() is
 * process-wide: the library never sets it): keeps libbpf's and the
 * verifier's last warnings for the error of a failed load, and passes each
 * message on to what ia_xdp_print_to() names (NULL: nowhere), or with
 * ia_xdp_set_verbose() to stderr. The usual start of a program:
 *	ia_xdp_print_to(libbpf_set_print(ia_xdp_libbpf_print));
 */
int ia_xdp_libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap);
void ia_xdp_print_to(libbpf_print_fn_t fn);
void ia_xdp_set_verbose(bool on);

/* Program fds, for BPF_PROG_TEST_RUN. */
int ia_xdp_prog_fd(struct ia_xdp *x);
int ia_xdp_egress_fd(struct ia_xdp *x);

#endif /* INAGG_XDP_H */
