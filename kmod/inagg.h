/* SPDX-License-Identifier: GPL-2.0 */
/*
 * inagg.ko internals, shared by its three parts:
 *   inagg_ledger.c  the ledger: accounting and its refusals, nothing else;
 *   inagg_nl.c      the generic netlink family (ABI: include/inagg/netlink.h);
 *   inagg_main.c    module, per-namespace life, /proc/net/inagg.
 */
#ifndef _INAGG_KMOD_H
#define _INAGG_KMOD_H

#include <linux/mutex.h>
#include <linux/types.h>
#include <linux/xarray.h>
#include <net/net_namespace.h>
#include <net/netns/generic.h>

#include <inagg/ledger_rules.h>
#include <inagg/netlink.h>

struct inagg_job {
	u32 id;
	struct inagg_job_counts c;	/* class, head, lent */
};

/*
 * One per network namespace. @lock serialises every access to the rest.
 * The counts keep the invariants of include/inagg/ledger_rules.h, whose
 * rules inagg_ledger.c applies under @lock.
 */
struct inagg_ledger {
	struct mutex lock;
	struct xarray jobs;		/* job id -> struct inagg_job */
	struct inagg_counts c;
	unsigned int gen;		/* bumped on every change (dumps) */
};

extern unsigned int inagg_net_id;
extern struct kmem_cache *inagg_job_cache;
extern atomic_t inagg_nr_jobs;

/*
 * A namespace not owned by the initial user namespace is anyone's (unshare
 * -Urn): its ledger may promise at most this much, and all such ledgers
 * together hold at most INAGG_UNPRIV_TOTAL_JOBS jobs (docs/kmod.md).
 */
#define INAGG_UNPRIV_MAX_JOBS		64U
#define INAGG_UNPRIV_MAX_SLOTS		65536U
#define INAGG_UNPRIV_TOTAL_JOBS		4096U
extern atomic_t inagg_nr_unpriv_jobs;

static inline bool inagg_net_unpriv(const struct net *net)
{
	return net->user_ns != &init_user_ns;
}

static inline struct inagg_ledger *inagg_ledger(struct net *net)
{
	return net_generic(net, inagg_net_id);
}

void inagg_ledger_init(struct inagg_ledger *l, u32 max_jobs, u32 max_slots);
void inagg_ledger_destroy(struct inagg_ledger *l);

/* All with l->lock held; 0 or a negative errno with *why filled. */
int inagg_ledger_set_cap(struct inagg_ledger *l, u32 max_jobs, u32 max_slots,
			 struct inagg_why *why);
int inagg_ledger_set_tail(struct inagg_ledger *l, u32 tail,
			  struct inagg_why *why);
/* On success the ledger owns @job. */
int inagg_ledger_admit(struct inagg_ledger *l, struct inagg_job *job,
		       struct inagg_why *why);
/* On success the caller owns the returned job (to report, then free). */
struct inagg_job *inagg_ledger_release(struct inagg_ledger *l, u32 id,
				       struct inagg_why *why);
/* Lends @count head slots of an INA job (reclaim: takes them back). */
int inagg_ledger_lend(struct inagg_ledger *l, u32 id, u32 count, bool reclaim,
		      struct inagg_job **jobp, struct inagg_why *why);

int inagg_nl_init(void);
void inagg_nl_exit(void);

#endif /* _INAGG_KMOD_H */
