// SPDX-License-Identifier: GPL-2.0
/*
 * The ledger of one switch: jobs, head slots, the tail pool and the head
 * slots lent to it (docs/memory.md). Pure accounting: every function runs
 * under the ledger's mutex, checks everything before it changes anything,
 * and says why it refused. The checks and their messages are the rules of
 * include/inagg/ledger_rules.h, which the user-space fallback
 * (user/lib/ledger/ledger_user.c) applies too.
 */
#include <linux/lockdep.h>
#include <linux/slab.h>

#include "inagg.h"

void inagg_ledger_init(struct inagg_ledger *l, u32 max_jobs, u32 max_slots)
{
	mutex_init(&l->lock);
	xa_init(&l->jobs);
	l->c.max_jobs = max_jobs;
	l->c.max_slots = max_slots;
}

/* The namespace is going away: nobody can reach its ledger any more. */
void inagg_ledger_destroy(struct inagg_ledger *l)
{
	struct inagg_job *job;
	unsigned long id;

	mutex_lock(&l->lock);
	xa_for_each(&l->jobs, id, job) {
		xa_erase(&l->jobs, id);
		kmem_cache_free(inagg_job_cache, job);
		atomic_dec(&inagg_nr_jobs);
	}
	xa_destroy(&l->jobs);
	l->c.used_jobs = 0;
	l->c.head_slots = 0;
	l->c.tail_slots = 0;
	l->c.lent_slots = 0;
	mutex_unlock(&l->lock);
	mutex_destroy(&l->lock);
}

int inagg_ledger_set_cap(struct inagg_ledger *l, u32 max_jobs, u32 max_slots,
			 struct inagg_why *why)
{
	int err;

	lockdep_assert_held(&l->lock);
	err = inagg_rule_set_cap(&l->c, max_jobs, max_slots, why);
	if (err)
		return err;
	l->c.max_jobs = max_jobs;
	l->c.max_slots = max_slots;
	l->gen++;
	return 0;
}

int inagg_ledger_set_tail(struct inagg_ledger *l, u32 tail,
			  struct inagg_why *why)
{
	int err;

	lockdep_assert_held(&l->lock);
	err = inagg_rule_set_tail(&l->c, tail, why);
	if (err)
		return err;
	l->c.tail_slots = tail;
	l->gen++;
	return 0;
}

int inagg_ledger_admit(struct inagg_ledger *l, struct inagg_job *job,
		       struct inagg_why *why)
{
	int err;

	lockdep_assert_held(&l->lock);
	err = inagg_rule_admit(&l->c, job->c.head, xa_load(&l->jobs, job->id),
			       why);
	if (err)
		return err;
	/* Over its memory cgroup's limit: refused (-ENOMEM), never the OOM killer. */
	err = xa_insert(&l->jobs, job->id, job, GFP_KERNEL_ACCOUNT | __GFP_RETRY_MAYFAIL);
	if (err)
		return inagg_refuse_why(why, err, NULL, 0);
	job->c.lent = 0;
	inagg_counts_admit(&l->c, job->c.head);
	l->gen++;
	atomic_inc(&inagg_nr_jobs);
	return 0;
}

struct inagg_job *inagg_ledger_release(struct inagg_ledger *l, u32 id,
				       struct inagg_why *why)
{
	struct inagg_job *job;

	lockdep_assert_held(&l->lock);
	job = xa_erase(&l->jobs, id);
	if (!job) {
		inagg_rule_not_admitted(why);
		return NULL;
	}
	inagg_counts_release(&l->c, &job->c);
	l->gen++;
	atomic_dec(&inagg_nr_jobs);
	return job;
}

/* Lend @count head slots of job @id to the tail, or take them back. */
int inagg_ledger_lend(struct inagg_ledger *l, u32 id, u32 count, bool reclaim,
		      struct inagg_job **jobp, struct inagg_why *why)
{
	struct inagg_job *job;
	int err;

	lockdep_assert_held(&l->lock);
	job = xa_load(&l->jobs, id);
	if (!job)
		return inagg_rule_not_admitted(why);
	err = inagg_rule_lend(&job->c, count, reclaim, why);
	if (err)
		return err;
	inagg_counts_lend(&l->c, &job->c, count, reclaim);
	l->gen++;
	*jobp = job;
	return 0;
}
