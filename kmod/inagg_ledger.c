// SPDX-License-Identifier: GPL-2.0
/*
 * The ledger of one switch: jobs, head slots, the tail pool and the head
 * slots lent to it (docs/memory.md). Pure accounting: every function runs
 * under the ledger's mutex, checks everything before it changes anything,
 * and says why it refused. The user-space fallback (user/lib/ledger_user.c)
 * makes the same checks in the same order, with the same messages.
 */
#include <linux/lockdep.h>
#include <linux/slab.h>

#include "inagg.h"

static int refuse(struct inagg_why *why, int err, const char *msg, int attr)
{
	why->msg = msg;
	why->attr = attr;
	return err;
}

/* Slots neither a head nor the tail holds. */
static u32 free_slots(const struct inagg_ledger *l)
{
	return l->max_slots - inagg_used_slots(l);
}

void inagg_ledger_init(struct inagg_ledger *l, u32 max_jobs, u32 max_slots)
{
	mutex_init(&l->lock);
	xa_init(&l->jobs);
	l->max_jobs = max_jobs;
	l->max_slots = max_slots;
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
	l->used_jobs = 0;
	l->head_slots = 0;
	l->tail_slots = 0;
	l->lent_slots = 0;
	mutex_unlock(&l->lock);
	mutex_destroy(&l->lock);
}

int inagg_ledger_set_cap(struct inagg_ledger *l, u32 max_jobs, u32 max_slots,
			 struct inagg_why *why)
{
	lockdep_assert_held(&l->lock);
	if (max_jobs < l->used_jobs)
		return refuse(why, -EBUSY, "max_jobs below the jobs admitted",
			      INAGG_A_MAX_JOBS);
	if (max_slots < inagg_used_slots(l))
		return refuse(why, -EBUSY, "max_slots below the slots admitted",
			      INAGG_A_MAX_SLOTS);
	l->max_jobs = max_jobs;
	l->max_slots = max_slots;
	l->gen++;
	return 0;
}

/* The tail may shrink at any time: the datapath flushes what it held. */
int inagg_ledger_set_tail(struct inagg_ledger *l, u32 tail,
			  struct inagg_why *why)
{
	lockdep_assert_held(&l->lock);
	if (tail > l->max_slots - l->head_slots)
		return refuse(why, -ENOSPC,
			      "tail beyond the slots the heads leave (max_slots)",
			      INAGG_A_TAIL_SLOTS);
	l->tail_slots = tail;
	l->gen++;
	return 0;
}

int inagg_ledger_admit(struct inagg_ledger *l, struct inagg_job *job,
		       struct inagg_why *why)
{
	int err;

	lockdep_assert_held(&l->lock);
	if (xa_load(&l->jobs, job->id))
		return refuse(why, -EEXIST, "job already admitted",
			      INAGG_A_JOB_ID);
	if (l->used_jobs >= l->max_jobs)
		return refuse(why, -ENOSPC, "job limit reached (max_jobs)", 0);
	if (job->head > free_slots(l))
		return refuse(why, -ENOSPC, "slot limit reached (max_slots)",
			      INAGG_A_JOB_SLOTS);
	/* Over its memory cgroup's limit: refused (-ENOMEM), never the OOM killer. */
	err = xa_insert(&l->jobs, job->id, job, GFP_KERNEL_ACCOUNT | __GFP_RETRY_MAYFAIL);
	if (err)
		return refuse(why, err, NULL, 0);
	job->lent = 0;
	l->used_jobs++;
	l->head_slots += job->head;
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
		refuse(why, -ENOENT, "job not admitted", INAGG_A_JOB_ID);
		return NULL;
	}
	l->used_jobs--;
	l->head_slots -= job->head;
	l->lent_slots -= job->lent;
	l->gen++;
	atomic_dec(&inagg_nr_jobs);
	return job;
}

/* The admitted INA job @id, or an error: -ENOENT, or -EINVAL for PS. */
static int ina_job(struct inagg_ledger *l, u32 id, struct inagg_job **jobp,
		   struct inagg_why *why)
{
	struct inagg_job *job = xa_load(&l->jobs, id);

	if (!job)
		return refuse(why, -ENOENT, "job not admitted", INAGG_A_JOB_ID);
	if (job->class != INAGG_CLASS_INA)
		return refuse(why, -EINVAL, "a PS job holds no head slots",
			      INAGG_A_JOB_ID);
	*jobp = job;
	return 0;
}

/* Lend @count head slots of job @id to the tail, or take them back. */
int inagg_ledger_lend(struct inagg_ledger *l, u32 id, u32 count, bool reclaim,
		      struct inagg_job **jobp, struct inagg_why *why)
{
	struct inagg_job *job;
	int err;

	lockdep_assert_held(&l->lock);
	err = ina_job(l, id, &job, why);
	if (err)
		return err;
	if (!reclaim && count > job->head - job->lent)
		return refuse(why, -ERANGE,
			      "lend beyond the job's head slots not lent",
			      INAGG_A_COUNT);
	if (reclaim && count > job->lent)
		return refuse(why, -ERANGE, "reclaim beyond the job's lent slots",
			      INAGG_A_COUNT);
	job->lent = reclaim ? job->lent - count : job->lent + count;
	l->lent_slots = reclaim ? l->lent_slots - count : l->lent_slots + count;
	l->gen++;
	*jobp = job;
	return 0;
}
