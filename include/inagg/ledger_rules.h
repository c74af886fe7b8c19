/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The capacity ledger's rules (docs/memory.md), written once: compiled into
 * inagg.ko (kmod/inagg_ledger.c, kmod/inagg_nl.c) and into libinagg's
 * user-space backend (user/lib/ledger/ledger_user.c), so that both refuse
 * the same requests, in the same order, with the same message.
 *
 * Each rule is a pure function over the counts: 0, or a negative errno with
 * *why set to a static message and the netlink attribute it blames (the
 * kernel's extack). Whoever applies a change holds the ledger's lock and
 * checks before it changes anything. Invariants the rules keep:
 *   head_slots + tail_slots <= max_slots, used_jobs <= max_jobs,
 *   head_slots = sum of the jobs' head, lent_slots = sum of their lent,
 *   every job's lent <= its head.
 */
#ifndef _INAGG_LEDGER_RULES_H
#define _INAGG_LEDGER_RULES_H

#ifdef __KERNEL__
#include <linux/errno.h>
#include <linux/types.h>
#else
#include <errno.h>
#include <stdbool.h>
#include <linux/types.h>
#endif

#include <inagg/netlink.h>

/* The refusals, and the checks of requests that never reach the rules. */
#define INAGG_WHY_SET_NOTHING	"set needs max_jobs or max_slots"
#define INAGG_WHY_JOBS_BELOW	"max_jobs below the jobs admitted"
#define INAGG_WHY_SLOTS_BELOW	"max_slots below the slots admitted"
#define INAGG_WHY_TAIL_ROOM	"tail beyond the slots the heads leave (max_slots)"
#define INAGG_WHY_PS_HEAD	"a PS job holds no head slots"
#define INAGG_WHY_ADMITTED	"job already admitted"
#define INAGG_WHY_JOB_LIMIT	"job limit reached (max_jobs)"
#define INAGG_WHY_SLOT_LIMIT	"slot limit reached (max_slots)"
#define INAGG_WHY_NOT_ADMITTED	"job not admitted"
#define INAGG_WHY_LEND_BEYOND	"lend beyond the job's head slots not lent"
#define INAGG_WHY_RECLAIM_BEYOND "reclaim beyond the job's lent slots"

/* A ledger's counts. */
struct inagg_counts {
	__u32 max_jobs;
	__u32 max_slots;
	__u32 used_jobs;
	__u32 head_slots;	/* the INA jobs' heads */
	__u32 tail_slots;	/* the tail pool */
	__u32 lent_slots;	/* head slots lent to the tail */
};

/* One admitted job's. */
struct inagg_job_counts {
	__u32 class;		/* enum inagg_job_class */
	__u32 head;		/* head slots: 0 for a PS job */
	__u32 lent;		/* of them, lent to the tail */
};

/* Why the ledger refused: a static message and the attribute to blame. */
struct inagg_why {
	const char *msg;
	int attr;		/* INAGG_A_*, 0 for none */
};

static inline int inagg_refuse_why(struct inagg_why *why, int err, const char *msg, int attr)
{
	why->msg = msg;
	why->attr = attr;
	return err;
}

/* Slots committed: heads and tail. */
static inline __u32 inagg_counts_used(const struct inagg_counts *c)
{
	return c->head_slots + c->tail_slots;
}

/* A set names at least one limit. */
static inline int inagg_rule_set_some(bool jobs, bool slots, struct inagg_why *why)
{
	if (!jobs && !slots)
		return inagg_refuse_why(why, -EINVAL, INAGG_WHY_SET_NOTHING, 0);
	return 0;
}

/* New limits (those not set: as they are) never below what is admitted. */
static inline int inagg_rule_set_cap(const struct inagg_counts *c, __u32 max_jobs,
				     __u32 max_slots, struct inagg_why *why)
{
	if (max_jobs < c->used_jobs)
		return inagg_refuse_why(why, -EBUSY, INAGG_WHY_JOBS_BELOW, INAGG_A_MAX_JOBS);
	if (max_slots < inagg_counts_used(c))
		return inagg_refuse_why(why, -EBUSY, INAGG_WHY_SLOTS_BELOW, INAGG_A_MAX_SLOTS);
	return 0;
}

/* The tail may shrink at any time (the datapath flushes what it held), grow into free slots. */
static inline int inagg_rule_set_tail(const struct inagg_counts *c, __u32 tail,
				      struct inagg_why *why)
{
	if (tail > c->max_slots - c->head_slots)
		return inagg_refuse_why(why, -ENOSPC, INAGG_WHY_TAIL_ROOM, INAGG_A_TAIL_SLOTS);
	return 0;
}

/* A PS job's request names no head (head: it gave slots). Checked before the lock. */
static inline int inagg_rule_ps_head(__u32 class, bool head, struct inagg_why *why)
{
	if (class == INAGG_CLASS_PS && head)
		return inagg_refuse_why(why, -EINVAL, INAGG_WHY_PS_HEAD, INAGG_A_JOB_SLOTS);
	return 0;
}

/* Admission of a job with head slots (0: PS), exists: its id is admitted already. */
static inline int inagg_rule_admit(const struct inagg_counts *c, __u32 head, bool exists,
				   struct inagg_why *why)
{
	if (exists)
		return inagg_refuse_why(why, -EEXIST, INAGG_WHY_ADMITTED, INAGG_A_JOB_ID);
	if (c->used_jobs >= c->max_jobs)
		return inagg_refuse_why(why, -ENOSPC, INAGG_WHY_JOB_LIMIT, 0);
	if (head > c->max_slots - inagg_counts_used(c))
		return inagg_refuse_why(why, -ENOSPC, INAGG_WHY_SLOT_LIMIT, INAGG_A_JOB_SLOTS);
	return 0;
}

/* A request about a job that is not admitted. */
static inline int inagg_rule_not_admitted(struct inagg_why *why)
{
	return inagg_refuse_why(why, -ENOENT, INAGG_WHY_NOT_ADMITTED, INAGG_A_JOB_ID);
}

/* Lending count head slots of job j to the tail, or (reclaim) taking them back. */
static inline int inagg_rule_lend(const struct inagg_job_counts *j, __u32 count, bool reclaim,
				  struct inagg_why *why)
{
	if (j->class != INAGG_CLASS_INA)
		return inagg_refuse_why(why, -EINVAL, INAGG_WHY_PS_HEAD, INAGG_A_JOB_ID);
	if (!reclaim && count > j->head - j->lent)
		return inagg_refuse_why(why, -ERANGE, INAGG_WHY_LEND_BEYOND, INAGG_A_COUNT);
	if (reclaim && count > j->lent)
		return inagg_refuse_why(why, -ERANGE, INAGG_WHY_RECLAIM_BEYOND, INAGG_A_COUNT);
	return 0;
}

/* The changes, once the rule said yes. */
static inline void inagg_counts_admit(struct inagg_counts *c, __u32 head)
{
	c->used_jobs++;
	c->head_slots += head;
}

static inline void inagg_counts_release(struct inagg_counts *c, const struct inagg_job_counts *j)
{
	c->used_jobs--;
	c->head_slots -= j->head;
	c->lent_slots -= j->lent;
}

static inline void inagg_counts_lend(struct inagg_counts *c, struct inagg_job_counts *j,
				     __u32 count, bool reclaim)
{
	j->lent = reclaim ? j->lent - count : j->lent + count;
	c->lent_slots = reclaim ? c->lent_slots - count : c->lent_slots + count;
}

#endif /* _INAGG_LEDGER_RULES_H */
