// SPDX-License-Identifier: GPL-2.0
/*
 * The "inagg" generic netlink family: requests on the ledger of the
 * caller's network namespace, events, dumps. The ABI is described in
 * include/inagg/netlink.h; the accounting itself is inagg_ledger.c.
 */
#include <linux/slab.h>
#include <net/genetlink.h>
#include <net/sock.h>

#include "inagg.h"

static struct genl_family inagg_family;

enum inagg_mcgrp {
	INAGG_MCGRP_EVENTS,
};

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

/* Requests carry only these; reply-only attributes are refused. */
static const struct nla_policy inagg_policy[INAGG_A_MAX + 1] = {
	[INAGG_A_MAX_JOBS] = NLA_POLICY_FULL_RANGE(NLA_U32, &inagg_jobs_range),
	[INAGG_A_MAX_SLOTS] = NLA_POLICY_FULL_RANGE(NLA_U32, &inagg_slots_range),
	[INAGG_A_USED_JOBS] = { .type = NLA_REJECT },
	[INAGG_A_USED_SLOTS] = { .type = NLA_REJECT },
	[INAGG_A_JOB_ID] = NLA_POLICY_FULL_RANGE(NLA_U32, &inagg_job_id_range),
	[INAGG_A_JOB_SLOTS] = NLA_POLICY_FULL_RANGE(NLA_U32,
						    &inagg_job_slots_range),
	[INAGG_A_JOB_CLASS] = NLA_POLICY_RANGE(NLA_U32, INAGG_CLASS_INA,
					       INAGG_CLASS_MAX),
	[INAGG_A_HEAD_SLOTS] = { .type = NLA_REJECT },
	[INAGG_A_TAIL_SLOTS] = NLA_POLICY_FULL_RANGE(NLA_U32,
						     &inagg_slots_range),
	[INAGG_A_LENT_SLOTS] = { .type = NLA_REJECT },
	[INAGG_A_COUNT] = NLA_POLICY_FULL_RANGE(NLA_U32,
						&inagg_job_slots_range),
};

/* The ledger's reason, at the attribute it blames. */
static void inagg_refuse(struct genl_info *info, const struct inagg_why *why)
{
	if (!info->extack || !why->msg)
		return;
	info->extack->_msg = why->msg;
	if (why->attr)
		info->extack->bad_attr = info->attrs[why->attr];
}

static int inagg_put_cap(struct sk_buff *skb, const struct inagg_ledger *l)
{
	if (nla_put_u32(skb, INAGG_A_MAX_JOBS, l->max_jobs) ||
	    nla_put_u32(skb, INAGG_A_MAX_SLOTS, l->max_slots) ||
	    nla_put_u32(skb, INAGG_A_USED_JOBS, l->used_jobs) ||
	    nla_put_u32(skb, INAGG_A_USED_SLOTS, inagg_used_slots(l)) ||
	    nla_put_u32(skb, INAGG_A_HEAD_SLOTS, l->head_slots) ||
	    nla_put_u32(skb, INAGG_A_TAIL_SLOTS, l->tail_slots) ||
	    nla_put_u32(skb, INAGG_A_LENT_SLOTS, l->lent_slots))
		return -EMSGSIZE;
	return 0;
}

static int inagg_put_job(struct sk_buff *skb, const struct inagg_job *job)
{
	if (nla_put_u32(skb, INAGG_A_JOB_ID, job->id) ||
	    nla_put_u32(skb, INAGG_A_JOB_SLOTS, job->head) ||
	    nla_put_u32(skb, INAGG_A_JOB_CLASS, job->class) ||
	    nla_put_u32(skb, INAGG_A_LENT_SLOTS, job->lent))
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
	struct inagg_why why = {};
	u32 max_jobs, max_slots;
	int err;

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
	err = inagg_ledger_set_cap(l, max_jobs, max_slots, &why);
	if (err)
		inagg_refuse(info, &why);
	else
		inagg_notify(net, l, INAGG_CMD_CAP_SET, NULL);
	mutex_unlock(&l->lock);
	return err;
}

static int inagg_tail_set_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct net *net = genl_info_net(info);
	struct inagg_ledger *l = inagg_ledger(net);
	struct inagg_why why = {};
	int err;

	if (GENL_REQ_ATTR_CHECK(info, INAGG_A_TAIL_SLOTS))
		return -EINVAL;

	mutex_lock(&l->lock);
	err = inagg_ledger_set_tail(l,
				    nla_get_u32(info->attrs[INAGG_A_TAIL_SLOTS]),
				    &why);
	if (err)
		inagg_refuse(info, &why);
	else
		inagg_notify(net, l, INAGG_CMD_TAIL_SET, NULL);
	mutex_unlock(&l->lock);
	return err;
}

/* An INA job names its head; a PS job has none (old clients: INA). */
static int inagg_job_from_request(struct genl_info *info, struct inagg_job *job)
{
	struct nlattr **attrs = info->attrs;

	if (GENL_REQ_ATTR_CHECK(info, INAGG_A_JOB_ID))
		return -EINVAL;
	job->id = nla_get_u32(attrs[INAGG_A_JOB_ID]);
	job->class = INAGG_CLASS_INA;
	if (attrs[INAGG_A_JOB_CLASS])
		job->class = nla_get_u32(attrs[INAGG_A_JOB_CLASS]);
	job->head = 0;
	if (job->class == INAGG_CLASS_PS) {
		if (attrs[INAGG_A_JOB_SLOTS]) {
			NL_SET_ERR_MSG_ATTR(info->extack, attrs[INAGG_A_JOB_SLOTS],
					    "a PS job holds no head slots");
			return -EINVAL;
		}
		return 0;
	}
	if (GENL_REQ_ATTR_CHECK(info, INAGG_A_JOB_SLOTS))
		return -EINVAL;
	job->head = nla_get_u32(attrs[INAGG_A_JOB_SLOTS]);
	return 0;
}

static int inagg_job_admit_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct net *net = genl_info_net(info);
	struct inagg_ledger *l = inagg_ledger(net);
	struct inagg_why why = {};
	struct inagg_job req, *job;
	int err;

	err = inagg_job_from_request(info, &req);
	if (err)
		return err;

	job = kmem_cache_alloc(inagg_job_cache, GFP_KERNEL);
	if (!job)
		return -ENOMEM;
	*job = req;

	mutex_lock(&l->lock);
	err = inagg_ledger_admit(l, job, &why);
	if (err) {
		mutex_unlock(&l->lock);
		inagg_refuse(info, &why);
		kmem_cache_free(inagg_job_cache, job);
		return err;
	}
	inagg_notify(net, l, INAGG_CMD_JOB_ADMIT, job);
	mutex_unlock(&l->lock);
	return 0;
}

static int inagg_job_release_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct net *net = genl_info_net(info);
	struct inagg_ledger *l = inagg_ledger(net);
	struct inagg_why why = {};
	struct inagg_job *job;

	if (GENL_REQ_ATTR_CHECK(info, INAGG_A_JOB_ID))
		return -EINVAL;

	mutex_lock(&l->lock);
	job = inagg_ledger_release(l, nla_get_u32(info->attrs[INAGG_A_JOB_ID]),
				   &why);
	if (!job) {
		mutex_unlock(&l->lock);
		inagg_refuse(info, &why);
		return -ENOENT;
	}
	inagg_notify(net, l, INAGG_CMD_JOB_RELEASE, job);
	mutex_unlock(&l->lock);

	kmem_cache_free(inagg_job_cache, job);
	return 0;
}

/* JOB_LEND and JOB_RECLAIM: move COUNT slots between head and tail. */
static int inagg_job_lend_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct net *net = genl_info_net(info);
	struct inagg_ledger *l = inagg_ledger(net);
	u8 cmd = info->genlhdr->cmd;
	struct inagg_why why = {};
	struct inagg_job *job;
	u32 id, count;
	int err;

	if (GENL_REQ_ATTR_CHECK(info, INAGG_A_JOB_ID) ||
	    GENL_REQ_ATTR_CHECK(info, INAGG_A_COUNT))
		return -EINVAL;
	id = nla_get_u32(info->attrs[INAGG_A_JOB_ID]);
	count = nla_get_u32(info->attrs[INAGG_A_COUNT]);

	mutex_lock(&l->lock);
	err = inagg_ledger_lend(l, id, count, cmd == INAGG_CMD_JOB_RECLAIM, &job,
				&why);
	if (err)
		inagg_refuse(info, &why);
	else
		inagg_notify(net, l, cmd, job);
	mutex_unlock(&l->lock);
	return err;
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
	{
		.cmd = INAGG_CMD_TAIL_SET,
		.doit = inagg_tail_set_doit,
		.flags = GENL_UNS_ADMIN_PERM,
	},
	{
		.cmd = INAGG_CMD_JOB_LEND,
		.doit = inagg_job_lend_doit,
		.flags = GENL_UNS_ADMIN_PERM,
	},
	{
		.cmd = INAGG_CMD_JOB_RECLAIM,
		.doit = inagg_job_lend_doit,
		.flags = GENL_UNS_ADMIN_PERM,
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

int inagg_nl_init(void)
{
	return genl_register_family(&inagg_family);
}

void inagg_nl_exit(void)
{
	genl_unregister_family(&inagg_family);
}
