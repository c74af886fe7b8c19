// SPDX-License-Identifier: GPL-2.0
/*
 * inagg.ko: the per-switch capacity ledger of in-network aggregation.
 *
 * One ledger per network namespace holds the switch's aggregation capacity
 * (concurrent jobs, aggregator slots) and the jobs admitted against it.
 * User space drives it over the "inagg" generic netlink family; the ABI is
 * described in include/inagg/netlink.h. /proc/net/inagg is a read-only view.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/proc_fs.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/xarray.h>
#include <net/genetlink.h>
#include <net/net_namespace.h>
#include <net/netns/generic.h>
#include <net/sock.h>

#include <inagg/netlink.h>

static unsigned int default_max_jobs = INAGG_DEFAULT_MAX_JOBS;
module_param(default_max_jobs, uint, 0444);
MODULE_PARM_DESC(default_max_jobs, "job limit of a new namespace's ledger");

static unsigned int default_max_slots = INAGG_DEFAULT_MAX_SLOTS;
module_param(default_max_slots, uint, 0444);
MODULE_PARM_DESC(default_max_slots, "slot limit of a new namespace's ledger");

struct inagg_job {
	u32 id;
	u32 slots;
};

/* One per network namespace. @lock serialises every access to the rest. */
struct inagg_ledger {
	struct mutex lock;
	struct xarray jobs;		/* job id -> struct inagg_job */
	u32 max_jobs;
	u32 max_slots;
	u32 used_jobs;
	u32 used_slots;
	unsigned int gen;		/* bumped on every change (dumps) */
};

static unsigned int inagg_net_id __read_mostly;
/* Over all namespaces, shown in the initial namespace's /proc/net/inagg. */
static atomic_t inagg_nr_ledgers = ATOMIC_INIT(0);
static atomic_t inagg_nr_jobs = ATOMIC_INIT(0);
static struct kmem_cache *inagg_job_cache __read_mostly;
static struct genl_family inagg_family;

enum inagg_mcgrp {
	INAGG_MCGRP_EVENTS,
};

static struct inagg_ledger *inagg_ledger(struct net *net)
{
	return net_generic(net, inagg_net_id);
}

static struct netlink_range_validation inagg_jobs_range = {
	.min = 0,
	.max = INAGG_JOBS_LIMIT,
};

static struct netlink_range_validation inagg_slots_range = {
	.min = 0,
	.max = INAGG_SLOTS_LIMIT,
};

static struct netlink_range_validation inagg_job_slots_range = {
	.min = 1,
	.max = INAGG_SLOTS_LIMIT,
};

static struct netlink_range_validation inagg_job_id_range = {
	.min = INAGG_JOB_ID_MIN,
	.max = U32_MAX,
};

/* Requests carry only these; USED_* appear in replies and are refused. */
static const struct nla_policy inagg_policy[INAGG_A_MAX + 1] = {
	[INAGG_A_MAX_JOBS] = NLA_POLICY_FULL_RANGE(NLA_U32, &inagg_jobs_range),
	[INAGG_A_MAX_SLOTS] = NLA_POLICY_FULL_RANGE(NLA_U32, &inagg_slots_range),
	[INAGG_A_USED_JOBS] = { .type = NLA_REJECT },
	[INAGG_A_USED_SLOTS] = { .type = NLA_REJECT },
	[INAGG_A_JOB_ID] = NLA_POLICY_FULL_RANGE(NLA_U32, &inagg_job_id_range),
	[INAGG_A_JOB_SLOTS] = NLA_POLICY_FULL_RANGE(NLA_U32,
						    &inagg_job_slots_range),
};

static int inagg_put_cap(struct sk_buff *skb, const struct inagg_ledger *l)
{
	if (nla_put_u32(skb, INAGG_A_MAX_JOBS, l->max_jobs) ||
	    nla_put_u32(skb, INAGG_A_MAX_SLOTS, l->max_slots) ||
	    nla_put_u32(skb, INAGG_A_USED_JOBS, l->used_jobs) ||
	    nla_put_u32(skb, INAGG_A_USED_SLOTS, l->used_slots))
		return -EMSGSIZE;
	return 0;
}

static int inagg_put_job(struct sk_buff *skb, const struct inagg_job *job)
{
	if (nla_put_u32(skb, INAGG_A_JOB_ID, job->id) ||
	    nla_put_u32(skb, INAGG_A_JOB_SLOTS, job->slots))
		return -EMSGSIZE;
	return 0;
}

/*
 * Tells the events group about a change. Called with the ledger locked so
 * that listeners see changes in the order they happened. A listener that
 * misses a message (allocation failure) learns it from ENOBUFS or a dump.
 */
static void inagg_notify(struct net *net, const struct inagg_ledger *l,
			 u8 cmd, const struct inagg_job *job)
{
	struct sk_buff *skb;
	void *hdr;

	if (!genl_has_listeners(&inagg_family, net, INAGG_MCGRP_EVENTS))
		return;

	skb = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!skb)
		return;

	hdr = genlmsg_put(skb, 0, 0, &inagg_family, 0, cmd);
	if (!hdr)
		goto err_free;
	if (job && inagg_put_job(skb, job))
		goto err_free;
	if (inagg_put_cap(skb, l))
		goto err_free;
	genlmsg_end(skb, hdr);
	genlmsg_multicast_netns(&inagg_family, net, skb, 0, INAGG_MCGRP_EVENTS,
				GFP_KERNEL);
	return;

err_free:
	nlmsg_free(skb);
}

static int inagg_cap_get_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct inagg_ledger *l = inagg_ledger(genl_info_net(info));
	struct sk_buff *msg;
	void *hdr;
	int err;

	msg = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!msg)
		return -ENOMEM;

	hdr = genlmsg_put_reply(msg, info, &inagg_family, 0, INAGG_CMD_CAP_GET);
	if (!hdr) {
		err = -EMSGSIZE;
		goto err_free;
	}

	mutex_lock(&l->lock);
	err = inagg_put_cap(msg, l);
	mutex_unlock(&l->lock);
	if (err)
		goto err_free;

	genlmsg_end(msg, hdr);
	return genlmsg_reply(msg, info);

err_free:
	nlmsg_free(msg);
	return err;
}

static int inagg_cap_set_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct net *net = genl_info_net(info);
	struct inagg_ledger *l = inagg_ledger(net);
	struct nlattr **attrs = info->attrs;
	u32 max_jobs, max_slots;
	int err = 0;

	if (!attrs[INAGG_A_MAX_JOBS] && !attrs[INAGG_A_MAX_SLOTS]) {
		GENL_SET_ERR_MSG(info, "set needs max_jobs or max_slots");
		return -EINVAL;
	}

	mutex_lock(&l->lock);
	max_jobs = l->max_jobs;
	max_slots = l->max_slots;
	if (attrs[INAGG_A_MAX_JOBS])
		max_jobs = nla_get_u32(attrs[INAGG_A_MAX_JOBS]);
	if (attrs[INAGG_A_MAX_SLOTS])
		max_slots = nla_get_u32(attrs[INAGG_A_MAX_SLOTS]);

	if (max_jobs < l->used_jobs) {
		NL_SET_ERR_MSG_ATTR(info->extack, attrs[INAGG_A_MAX_JOBS],
				    "max_jobs below the jobs admitted");
		err = -EBUSY;
		goto out_unlock;
	}
	if (max_slots < l->used_slots) {
		NL_SET_ERR_MSG_ATTR(info->extack, attrs[INAGG_A_MAX_SLOTS],
				    "max_slots below the slots admitted");
		err = -EBUSY;
		goto out_unlock;
	}

	l->max_jobs = max_jobs;
	l->max_slots = max_slots;
	l->gen++;
	inagg_notify(net, l, INAGG_CMD_CAP_SET, NULL);

out_unlock:
	mutex_unlock(&l->lock);
	return err;
}

static int inagg_job_admit_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct net *net = genl_info_net(info);
	struct inagg_ledger *l = inagg_ledger(net);
	struct inagg_job *job;
	u32 id, slots;
	int err;

	if (GENL_REQ_ATTR_CHECK(info, INAGG_A_JOB_ID) ||
	    GENL_REQ_ATTR_CHECK(info, INAGG_A_JOB_SLOTS))
		return -EINVAL;
	id = nla_get_u32(info->attrs[INAGG_A_JOB_ID]);
	slots = nla_get_u32(info->attrs[INAGG_A_JOB_SLOTS]);

	job = kmem_cache_alloc(inagg_job_cache, GFP_KERNEL);
	if (!job)
		return -ENOMEM;
	job->id = id;
	job->slots = slots;

	mutex_lock(&l->lock);
	if (xa_load(&l->jobs, id)) {
		NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[INAGG_A_JOB_ID],
				    "job already admitted");
		err = -EEXIST;
		goto err_unlock;
	}
	if (l->used_jobs >= l->max_jobs) {
		GENL_SET_ERR_MSG(info, "job limit reached (max_jobs)");
		err = -ENOSPC;
		goto err_unlock;
	}
	if (slots > l->max_slots - l->used_slots) {
		NL_SET_ERR_MSG_ATTR(info->extack,
				    info->attrs[INAGG_A_JOB_SLOTS],
				    "slot limit reached (max_slots)");
		err = -ENOSPC;
		goto err_unlock;
	}
	err = xa_insert(&l->jobs, id, job, GFP_KERNEL);
	if (err)
		goto err_unlock;

	l->used_jobs++;
	l->used_slots += slots;
	l->gen++;
	atomic_inc(&inagg_nr_jobs);
	inagg_notify(net, l, INAGG_CMD_JOB_ADMIT, job);
	mutex_unlock(&l->lock);
	return 0;

err_unlock:
	mutex_unlock(&l->lock);
	kmem_cache_free(inagg_job_cache, job);
	return err;
}

static int inagg_job_release_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct net *net = genl_info_net(info);
	struct inagg_ledger *l = inagg_ledger(net);
	struct inagg_job *job;
	u32 id;

	if (GENL_REQ_ATTR_CHECK(info, INAGG_A_JOB_ID))
		return -EINVAL;
	id = nla_get_u32(info->attrs[INAGG_A_JOB_ID]);

	mutex_lock(&l->lock);
	job = xa_erase(&l->jobs, id);
	if (!job) {
		mutex_unlock(&l->lock);
		NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[INAGG_A_JOB_ID],
				    "job not admitted");
		return -ENOENT;
	}
	l->used_jobs--;
	l->used_slots -= job->slots;
	l->gen++;
	atomic_dec(&inagg_nr_jobs);
	inagg_notify(net, l, INAGG_CMD_JOB_RELEASE, job);
	mutex_unlock(&l->lock);

	kmem_cache_free(inagg_job_cache, job);
	return 0;
}

static int inagg_job_get_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct inagg_ledger *l = inagg_ledger(genl_info_net(info));
	struct inagg_job *job;
	struct sk_buff *msg;
	void *hdr;
	int err;
	u32 id;

	if (GENL_REQ_ATTR_CHECK(info, INAGG_A_JOB_ID))
		return -EINVAL;
	id = nla_get_u32(info->attrs[INAGG_A_JOB_ID]);

	msg = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!msg)
		return -ENOMEM;
	hdr = genlmsg_put_reply(msg, info, &inagg_family, 0, INAGG_CMD_JOB_GET);
	if (!hdr) {
		err = -EMSGSIZE;
		goto err_free;
	}

	mutex_lock(&l->lock);
	job = xa_load(&l->jobs, id);
	if (!job) {
		mutex_unlock(&l->lock);
		NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[INAGG_A_JOB_ID],
				    "job not admitted");
		err = -ENOENT;
		goto err_free;
	}
	err = inagg_put_job(msg, job);
	mutex_unlock(&l->lock);
	if (err)
		goto err_free;

	genlmsg_end(msg, hdr);
	return genlmsg_reply(msg, info);

err_free:
	nlmsg_free(msg);
	return err;
}

/* Dump cursor, kept in cb->ctx between dumpit calls. */
struct inagg_dump_ctx {
	unsigned long next_id;
};

static int inagg_job_dump_start(struct netlink_callback *cb)
{
	struct inagg_dump_ctx *ctx = (void *)cb->ctx;

	BUILD_BUG_ON(sizeof(*ctx) > sizeof(cb->ctx));
	ctx->next_id = 0;
	return 0;
}

static int inagg_job_dump(struct sk_buff *skb, struct netlink_callback *cb)
{
	struct inagg_ledger *l = inagg_ledger(sock_net(skb->sk));
	struct inagg_dump_ctx *ctx = (void *)cb->ctx;
	struct inagg_job *job;
	unsigned long id;
	int err = 0;
	void *hdr;

	mutex_lock(&l->lock);
	/* Sets NLM_F_DUMP_INTR if the ledger changed between two parts. */
	cb->seq = l->gen;
	xa_for_each_start(&l->jobs, id, job, ctx->next_id) {
		hdr = genlmsg_put(skb, NETLINK_CB(cb->skb).portid,
				  cb->nlh->nlmsg_seq, &inagg_family,
				  NLM_F_MULTI, INAGG_CMD_JOB_GET);
		if (!hdr) {
			err = -EMSGSIZE;
			break;
		}
		genl_dump_check_consistent(cb, hdr);
		if (inagg_put_job(skb, job)) {
			genlmsg_cancel(skb, hdr);
			err = -EMSGSIZE;
			break;
		}
		genlmsg_end(skb, hdr);
		ctx->next_id = id + 1;
	}
	mutex_unlock(&l->lock);

	/* A full skb ends this part; the next call resumes at next_id. */
	if (err == -EMSGSIZE && skb->len)
		return skb->len;
	return err ? err : skb->len;
}

static int inagg_job_dump_done(struct netlink_callback *cb)
{
	return 0;
}

static const struct genl_ops inagg_ops[] = {
	{
		.cmd = INAGG_CMD_CAP_GET,
		.doit = inagg_cap_get_doit,
	},
	{
		.cmd = INAGG_CMD_CAP_SET,
		.doit = inagg_cap_set_doit,
		.flags = GENL_UNS_ADMIN_PERM,
	},
	{
		.cmd = INAGG_CMD_JOB_ADMIT,
		.doit = inagg_job_admit_doit,
		.flags = GENL_UNS_ADMIN_PERM,
	},
	{
		.cmd = INAGG_CMD_JOB_RELEASE,
		.doit = inagg_job_release_doit,
		.flags = GENL_UNS_ADMIN_PERM,
	},
	{
		.cmd = INAGG_CMD_JOB_GET,
		.doit = inagg_job_get_doit,
		.start = inagg_job_dump_start,
		.dumpit = inagg_job_dump,
		.done = inagg_job_dump_done,
	},
};

static const struct genl_multicast_group inagg_mcgrps[] = {
	[INAGG_MCGRP_EVENTS] = { .name = INAGG_GENL_MCGRP_EVENTS },
};

static struct genl_family inagg_family __ro_after_init = {
	.name = INAGG_GENL_NAME,
	.version = INAGG_GENL_VERSION,
	.maxattr = INAGG_A_MAX,
	.policy = inagg_policy,
	.netnsok = true,
	.parallel_ops = true,
	.module = THIS_MODULE,
	.ops = inagg_ops,
	.n_ops = ARRAY_SIZE(inagg_ops),
	.mcgrps = inagg_mcgrps,
	.n_mcgrps = ARRAY_SIZE(inagg_mcgrps),
};

static int inagg_proc_show(struct seq_file *seq, void *v)
{
	struct inagg_ledger *l = inagg_ledger(seq_file_single_net(seq));
	struct inagg_job *job;
	unsigned long id;

	mutex_lock(&l->lock);
	seq_printf(seq, "jobs %u/%u slots %u/%u\n", l->used_jobs, l->max_jobs,
		   l->used_slots, l->max_slots);
	xa_for_each(&l->jobs, id, job)
		seq_printf(seq, "job %u slots %u\n", job->id, job->slots);
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

	mutex_init(&l->lock);
	xa_init(&l->jobs);
	l->max_jobs = min(default_max_jobs, INAGG_JOBS_LIMIT);
	l->max_slots = min(default_max_slots, INAGG_SLOTS_LIMIT);

	if (!proc_create_net_single("inagg", 0444, net->proc_net,
				    inagg_proc_show, NULL))
		return -ENOMEM;
	atomic_inc(&inagg_nr_ledgers);
	return 0;
}

/* The namespace is going away: nobody can reach its ledger any more. */
static void __net_exit inagg_net_exit(struct net *net)
{
	struct inagg_ledger *l = inagg_ledger(net);
	struct inagg_job *job;
	unsigned long id;

	remove_proc_entry("inagg", net->proc_net);

	mutex_lock(&l->lock);
	xa_for_each(&l->jobs, id, job) {
		xa_erase(&l->jobs, id);
		kmem_cache_free(inagg_job_cache, job);
		atomic_dec(&inagg_nr_jobs);
	}
	xa_destroy(&l->jobs);
	l->used_jobs = 0;
	l->used_slots = 0;
	mutex_unlock(&l->lock);
	mutex_destroy(&l->lock);
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

	inagg_job_cache = KMEM_CACHE(inagg_job, 0);
	if (!inagg_job_cache)
		return -ENOMEM;

	err = register_pernet_subsys(&inagg_net_ops);
	if (err)
		goto err_cache;

	err = genl_register_family(&inagg_family);
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
	genl_unregister_family(&inagg_family);
	unregister_pernet_subsys(&inagg_net_ops);
	kmem_cache_destroy(inagg_job_cache);
}

module_init(inagg_init);
module_exit(inagg_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("inagg: per-switch capacity ledger for in-network aggregation");
MODULE_ALIAS_GENL_FAMILY(INAGG_GENL_NAME);
