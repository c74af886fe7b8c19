/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * inagg generic netlink ABI: the per-switch capacity ledger.
 *
 * Shared by the kernel module (kmod/) and user space (user/lib/ledger*.c).
 * One ledger per network namespace. A ledger has a capacity (how many jobs
 * the switch may aggregate at once, how many aggregator slots it has) and
 * the set of jobs admitted against it. A slot is one aggregator buffer of
 * the datapath; the ledger only counts them.
 *
 * Commands (family INAGG_GENL_NAME, version INAGG_GENL_VERSION):
 *
 * INAGG_CMD_CAP_GET      doit, open to all.
 *	Request: no attributes.
 *	Reply: MAX_JOBS, MAX_SLOTS, USED_JOBS, USED_SLOTS.
 * INAGG_CMD_CAP_SET      doit, CAP_NET_ADMIN in the netns' user namespace.
 *	Request: MAX_JOBS and/or MAX_SLOTS (at least one).
 *	Errors: -EINVAL neither given; -EBUSY a new limit is below what is
 *	admitted (nothing changes; release jobs first).
 * INAGG_CMD_JOB_ADMIT    doit, CAP_NET_ADMIN in the netns' user namespace.
 *	Request: JOB_ID, JOB_SLOTS.
 *	Errors: -EEXIST job already admitted; -ENOSPC the job or the slot
 *	limit would be exceeded (extack names it).
 * INAGG_CMD_JOB_RELEASE  doit, CAP_NET_ADMIN in the netns' user namespace.
 *	Request: JOB_ID.  Errors: -ENOENT job not admitted.
 * INAGG_CMD_JOB_GET      doit (JOB_ID) or dump (no attributes), open.
 *	Reply / each dump message: JOB_ID, JOB_SLOTS.
 *	doit errors: -ENOENT job not admitted.
 *
 * Every request is validated strictly: an unknown attribute, a wrong
 * length or a value out of the ranges below gets -EINVAL or -ERANGE with
 * an extack message; an unknown command gets -EOPNOTSUPP.
 *
 * Multicast group INAGG_GENL_MCGRP_EVENTS: after every successful
 * mutation the module sends a message whose command is the mutation's
 * (CAP_SET, JOB_ADMIT, JOB_RELEASE), carrying the job (JOB_ID, JOB_SLOTS;
 * not for CAP_SET) and the ledger after the change (MAX_*, USED_*).
 */
#ifndef _INAGG_NETLINK_H
#define _INAGG_NETLINK_H

#include <linux/types.h>

#define INAGG_GENL_NAME		"inagg"
#define INAGG_GENL_VERSION	1
#define INAGG_GENL_MCGRP_EVENTS	"events"

/* Ranges enforced by the attribute policies. */
#define INAGG_JOBS_LIMIT	65536U		/* largest MAX_JOBS */
#define INAGG_SLOTS_LIMIT	(1U << 24)	/* largest MAX_SLOTS, JOB_SLOTS */
#define INAGG_JOB_ID_MIN	1U		/* job id 0 is reserved */

/* Capacity of a new ledger (module parameters may change it). */
#define INAGG_DEFAULT_MAX_JOBS	16U
#define INAGG_DEFAULT_MAX_SLOTS	4096U

enum inagg_cmd {
	INAGG_CMD_UNSPEC,
	INAGG_CMD_CAP_GET,
	INAGG_CMD_CAP_SET,
	INAGG_CMD_JOB_ADMIT,
	INAGG_CMD_JOB_RELEASE,
	INAGG_CMD_JOB_GET,

	__INAGG_CMD_MAX,
	INAGG_CMD_MAX = __INAGG_CMD_MAX - 1
};

enum inagg_attr {
	INAGG_A_UNSPEC,
	INAGG_A_MAX_JOBS,	/* u32, 0..INAGG_JOBS_LIMIT */
	INAGG_A_MAX_SLOTS,	/* u32, 0..INAGG_SLOTS_LIMIT */
	INAGG_A_USED_JOBS,	/* u32, replies only */
	INAGG_A_USED_SLOTS,	/* u32, replies only */
	INAGG_A_JOB_ID,		/* u32, INAGG_JOB_ID_MIN..U32_MAX */
	INAGG_A_JOB_SLOTS,	/* u32, 1..INAGG_SLOTS_LIMIT */

	__INAGG_A_MAX,
	INAGG_A_MAX = __INAGG_A_MAX - 1
};

#endif /* _INAGG_NETLINK_H */
