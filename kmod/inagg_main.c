// SPDX-License-Identifier: GPL-2.0
/*
 * inagg.ko: the per-switch memory ledger of in-network aggregation.
 *
 * One ledger per network namespace holds the switch's aggregation capacity
 * (concurrent jobs, aggregator slots), the jobs admitted against it, and how
 * its slots split into heads, tail and lent head slots (docs/memory.md).
 * User space drives it over the "inagg" generic netlink family (inagg_nl.c;
 * ABI in include/inagg/netlink.h); the accounting is inagg_ledger.c. This
 * file is the module and the namespaces' life, and /proc/net/inagg, a
 * read-only view.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/proc_fs.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <net/genetlink.h>

#include "inagg.h"

static unsigned int default_max_jobs = INAGG_DEFAULT_MAX_JOBS;
module_param(default_max_jobs, uint, 0444);
MODULE_PARM_DESC(default_max_jobs, "job limit of a new namespace's ledger");

static unsigned int default_max_slots = INAGG_DEFAULT_MAX_SLOTS;
module_param(default_max_slots, uint, 0444);
MODULE_PARM_DESC(default_max_slots, "slot limit of a new namespace's ledger");

unsigned int inagg_net_id __read_mostly;
struct kmem_cache *inagg_job_cache __read_mostly;
/* Over all namespaces, shown in the initial namespace's /proc/net/inagg. */
static atomic_t inagg_nr_ledgers = ATOMIC_INIT(0);
atomic_t inagg_nr_jobs = ATOMIC_INIT(0);
/* Jobs of the ledgers of namespaces not owned by the initial user namespace. */
atomic_t inagg_nr_unpriv_jobs = ATOMIC_INIT(0);

static const char *const inagg_class_name[] = {
	[INAGG_CLASS_INA] = "ina",
	[INAGG_CLASS_PS] = "ps",
};

static int inagg_proc_show(struct seq_file *seq, void *v)
{
	struct inagg_ledger *l = inagg_ledger(seq_file_single_net(seq));
	struct inagg_job *job;
	unsigned long id;

	mutex_lock(&l->lock);
	seq_printf(seq, "jobs %u/%u slots %u/%u head %u tail %u lent %u\n",
		   l->c.used_jobs, l->c.max_jobs, inagg_counts_used(&l->c),
		   l->c.max_slots, l->c.head_slots, l->c.tail_slots,
		   l->c.lent_slots);
	xa_for_each(&l->jobs, id, job)
		seq_printf(seq, "job %u %s head %u lent %u\n", job->id,
			   inagg_class_name[job->c.class], job->c.head,
			   job->c.lent);
	mutex_unlock(&l->lock);
	if (net_eq(seq_file_single_net(seq), &init_net))
		seq_printf(seq, "total ledgers %d jobs %d\n",
			   atomic_read(&inagg_nr_ledgers),
			   atomic_read(&inagg_nr_jobs));
	return 0;
}

static int __net_init inagg_net_init(struct net *net)
{
	struct inagg_ledger *l = inagg_ledger(net);
	bool unpriv = inagg_net_unpriv(net);

	inagg_ledger_init(l, min(default_max_jobs,
				 unpriv ? INAGG_UNPRIV_MAX_JOBS : INAGG_JOBS_LIMIT),
			  min(default_max_slots,
			      unpriv ? INAGG_UNPRIV_MAX_SLOTS : INAGG_SLOTS_LIMIT));
	/*
	 * Its nodes are charged to the memory cgroup of whoever admits (empty
	 * still: the flag holds from the first insert; the ledger's own kept).
	 */
	l->jobs.xa_flags |= XA_FLAGS_ACCOUNT;
	if (!proc_create_net_single("inagg", 0444, net->proc_net,
				    inagg_proc_show, NULL))
		return -ENOMEM;
	atomic_inc(&inagg_nr_ledgers);
	return 0;
}

static void __net_exit inagg_net_exit(struct net *net)
{
	struct inagg_ledger *l = inagg_ledger(net);

	remove_proc_entry("inagg", net->proc_net);
	if (inagg_net_unpriv(net))
		atomic_sub(l->c.used_jobs, &inagg_nr_unpriv_jobs);
	inagg_ledger_destroy(l);
	atomic_dec(&inagg_nr_ledgers);
}

static struct pernet_operations inagg_net_ops = {
	.init = inagg_net_init,
	.exit = inagg_net_exit,
	.id = &inagg_net_id,
	.size = sizeof(struct inagg_ledger),
};

static int __init inagg_init(void)
{
	int err;

	/* A job is charged to the memory cgroup of whoever admitted it. */
	inagg_job_cache = KMEM_CACHE(inagg_job, SLAB_ACCOUNT);
	if (!inagg_job_cache)
		return -ENOMEM;

	err = register_pernet_subsys(&inagg_net_ops);
	if (err)
		goto err_cache;

	err = inagg_nl_init();
	if (err)
		goto err_pernet;

	return 0;

err_pernet:
	unregister_pernet_subsys(&inagg_net_ops);
err_cache:
	kmem_cache_destroy(inagg_job_cache);
	return err;
}

static void __exit inagg_exit(void)
{
	inagg_nl_exit();
	unregister_pernet_subsys(&inagg_net_ops);
	kmem_cache_destroy(inagg_job_cache);
}

module_init(inagg_init);
module_exit(inagg_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("inagg: per-switch memory ledger for in-network aggregation");
MODULE_ALIAS_GENL_FAMILY(INAGG_GENL_NAME);
