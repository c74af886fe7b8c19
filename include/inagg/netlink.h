/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * inagg generic netlink ABI: the per-switch memory ledger.
 *
 * Shared by the kernel module (kmod/) and user space (user/lib/ledger*.c).
 * One ledger per network namespace. A ledger has a capacity (how many jobs
 * the switch may aggregate at once, how many aggregator slots it has) and
 * the set of jobs admitted against it. A slot is one aggregator buffer of
 * the datapath (one full-size chunk); the ledger only counts them.
 *
 * Switch memory (docs/memory.md) is split three ways, in slots:
 *  - head: an INA job's own slots (JOB_SLOTS), mapped statically (seq % head);
 *  - tail: a pool no job owns (TAIL_SLOTS), shared by PS jobs by hash;
 *  - lent: head slots an INA job's window leaves unused, lent to the tail
 *    until the job reclaims them (LENT_SLOTS, per job and in total).
 * Invariants: HEAD_SLOTS + TAIL_SLOTS <= MAX_SLOTS (USED_SLOTS is that sum,
 * so MAX_SLOTS - USED_SLOTS is what the next head or tail growth may take);
 * a job's LENT_SLOTS <= its JOB_SLOTS; the tail in use is TAIL + LENT.
 * A PS job (JOB_CLASS PS) holds no head slots; it counts as a job.
 *
 * Commands (family INAGG_GENL_NAME, version INAGG_GENL_VERSION):
 *
 * INAGG_CMD_CAP_GET      doit, open to all.
 *	Request: no attributes.
 *	Reply: MAX_JOBS, MAX_SLOTS, USED_JOBS, USED_SLOTS, HEAD_SLOTS,
 *	TAIL_SLOTS, LENT_SLOTS.
 * INAGG_CMD_CAP_SET      doit, CAP_NET_ADMIN in the netns' user namespace.
 *	Request: MAX_JOBS and/or MAX_SLOTS (at least one).
 *	Errors: -EINVAL neither given; -EBUSY a new limit is below what is
 *	admitted (jobs, or heads plus tail; nothing changes).
 * INAGG_CMD_JOB_ADMIT    doit, CAP_NET_ADMIN in the netns' user namespace.
 *	Request: JOB_ID, JOB_CLASS (default INA), JOB_SLOTS (the head: needed
 *	by an INA job, refused for a PS job).
 *	Errors: -EEXIST job already admitted; -ENOSPC the job limit, or the
 *	head beyond the slots neither heads nor tail hold (extack names it);
 *	-EINVAL head missing (INA) or given (PS).
 * INAGG_CMD_JOB_RELEASE  doit, CAP_NET_ADMIN in the netns' user namespace.
 *	Request: JOB_ID.  Errors: -ENOENT job not admitted. A job's lent
 *	slots go back with it (the datapath flushed them before).
 * INAGG_CMD_JOB_GET      doit (JOB_ID) or dump (no attributes), open.
 *	Reply / each dump message: JOB_ID, JOB_SLOTS (0 for PS), JOB_CLASS,
 *	LENT_SLOTS.  doit errors: -ENOENT job not admitted.
 * INAGG_CMD_TAIL_SET     doit, CAP_NET_ADMIN in the netns' user namespace.
 *	Request: TAIL_SLOTS, the tail pool's new size (0 to drop it).
 *	Errors: -ENOSPC heads plus the new tail exceed MAX_SLOTS.
 * INAGG_CMD_JOB_LEND     doit, CAP_NET_ADMIN in the netns' user namespace.
 *	Request: JOB_ID, COUNT: lend COUNT more head slots to the tail.
 *	Errors: -ENOENT job not admitted; -EINVAL a PS job has no head;
 *	-ERANGE COUNT above the job's head slots not lent yet.
 * INAGG_CMD_JOB_RECLAIM  doit, CAP_NET_ADMIN in the netns' user namespace.
 *	Request: JOB_ID, COUNT: take COUNT lent slots back into the head.
 *	Errors: -ENOENT job not admitted; -EINVAL a PS job has no head;
 *	-ERANGE COUNT above the job's lent slots.
 *
 * Every request is validated strictly: an unknown attribute, a wrong
 * length, a reply-only attribute or a value out of the ranges below gets
 * -EINVAL or -ERANGE with an extack message; an unknown command gets
 * -EOPNOTSUPP. Old clients keep working: JOB_ADMIT with JOB_ID and
 * JOB_SLOTS only admits an INA job with that head, and replies only gain
 * attributes.
 *
 * Multicast group INAGG_GENL_MCGRP_EVENTS: after every successful
 * mutation the module sends a message whose command is the mutation's
 * (CAP_SET, JOB_ADMIT, JOB_RELEASE, TAIL_SET, JOB_LEND, JOB_RECLAIM),
 * carrying the job (JOB_ID, JOB_SLOTS, JOB_CLASS, LENT_SLOTS; not for
 * CAP_SET and TAIL_SET) and the ledger after the change (as CAP_GET).
 */
#ifndef _INAGG_NETLINK_H
#define _INAGG_NETLINK_H

#include <linux/types.h>

#define INAGG_GENL_NAME		"inagg"
#define INAGG_GENL_VERSION	1
#define INAGG_GENL_MCGRP_EVENTS	"events"

/* Ranges enforced by the attribute policies. */
#define INAGG_JOBS_LIMIT	65536U		/* largest MAX_JOBS */
#define INAGG_SLOTS_LIMIT	(1U << 24)	/* largest MAX_SLOTS, JOB_SLOTS,
						 * TAIL_SLOTS, COUNT */
#define INAGG_JOB_ID_MIN	1U		/* job id 0 is reserved */

/* Capacity of a new ledger (module parameters may change it). */
#define INAGG_DEFAULT_MAX_JOBS	16U
#define INAGG_DEFAULT_MAX_SLOTS	4096U

/*
 * What memory a job aggregates in. The automatic class (selective INA) is
 * the daemon's choice between the two before it admits; the ledger only
 * ever holds INA or PS jobs.
 */
enum inagg_job_class {
	INAGG_CLASS_UNSPEC,
	INAGG_CLASS_INA,	/* a static head of JOB_SLOTS slots */
	INAGG_CLASS_PS,		/* no head: the shared tail, else the PS */

	__INAGG_CLASS_MAX,
	INAGG_CLASS_MAX = __INAGG_CLASS_MAX - 1
};

enum inagg_cmd {
	INAGG_CMD_UNSPEC,
	INAGG_CMD_CAP_GET,
	INAGG_CMD_CAP_SET,
	INAGG_CMD_JOB_ADMIT,
	INAGG_CMD_JOB_RELEASE,
	INAGG_CMD_JOB_GET,
	INAGG_CMD_TAIL_SET,
	INAGG_CMD_JOB_LEND,
	INAGG_CMD_JOB_RECLAIM,

	__INAGG_CMD_MAX,
	INAGG_CMD_MAX = __INAGG_CMD_MAX - 1
};

enum inagg_attr {
	INAGG_A_UNSPEC,
	INAGG_A_MAX_JOBS,	/* u32, 0..INAGG_JOBS_LIMIT */
	INAGG_A_MAX_SLOTS,	/* u32, 0..INAGG_SLOTS_LIMIT */
	INAGG_A_USED_JOBS,	/* u32, replies only */
	INAGG_A_USED_SLOTS,	/* u32, replies only: HEAD_SLOTS + TAIL_SLOTS */
	INAGG_A_JOB_ID,		/* u32, INAGG_JOB_ID_MIN..U32_MAX */
	INAGG_A_JOB_SLOTS,	/* u32, 1..INAGG_SLOTS_LIMIT: an INA job's head */
	INAGG_A_JOB_CLASS,	/* u32, enum inagg_job_class, INA..PS */
	INAGG_A_HEAD_SLOTS,	/* u32, replies only: sum of the heads */
	INAGG_A_TAIL_SLOTS,	/* u32, 0..INAGG_SLOTS_LIMIT: the tail pool */
	INAGG_A_LENT_SLOTS,	/* u32, replies only: lent (a job's, or all) */
	INAGG_A_COUNT,		/* u32, 1..INAGG_SLOTS_LIMIT: slots to lend
				 * or reclaim */

	__INAGG_A_MAX,
	INAGG_A_MAX = __INAGG_A_MAX - 1
};

#endif /* _INAGG_NETLINK_H */
