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
	const struct inagg_counts *c = &l->c;

	if (nla_put_u32(skb, INAGG_A_MAX_JOBS, c->max_jobs) ||
	    nla_put_u32(skb, INAGG_A_MAX_SLOTS, c->max_slots) ||
	    nla_put_u32(skb, INAGG_A_USED_JOBS, c->used_jobs) ||
	    nla_put_u32(skb, INAGG_A_USED_SLOTS, inagg_counts_used(c)) ||
	    nla_put_u32(skb, INAGG_A_HEAD_SLOTS, c->head_slots) ||
	    nla_put_u32(skb, INAGG_A_TAIL_SLOTS, c->tail_slots) ||
	    nla_put_u32(skb, INAGG_A_LENT_SLOTS, c->lent_slots))
		return -EMSGSIZE;
	return 0;
}

static int inagg_put_job(struct sk_buff *skb, const struct inagg_job *job)
{
	if (nla_put_u32(skb, INAGG_A_JOB_ID, job->id) ||
	    nla_put_u32(skb, INAGG_A_JOB_SLOTS, job->c.head) ||
	    nla_put_u32(skb, INAGG_A_JOB_CLASS, job->c.class) ||
	    nla_put_u32(skb, INAGG_A_LENT_SLOTS, job->c.lent))
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

/* A required u32 attribute; the policy has checked its range. */
static int inagg_req_u32(struct genl_info *info, int attr, u32 *val)
{
	if (GENL_REQ_ATTR_CHECK(info, attr))
		return -EINVAL;
	*val = nla_get_u32(info->attrs[attr]);
	return 0;
}

/* An optional u32 attribute, @def where the request leaves it out. */
static u32 inagg_opt_u32(struct genl_info *info, int attr, u32 def)
{
	return info->attrs[attr] ? nla_get_u32(info->attrs[attr]) : def;
}

/* The reply to a get request, its header put; NULL if out of memory. */
static struct sk_buff *inagg_reply_new(struct genl_info *info, void **hdr)
{
	struct sk_buff *msg;

	msg = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!msg)
		return NULL;
	*hdr = genlmsg_put_reply(msg, info, &inagg_family, 0,
				 info->genlhdr->cmd);
	if (!*hdr) {
		nlmsg_free(msg);
		return NULL;
	}
	return msg;
}

/* Sends the reply if filling it succeeded (@err 0), else drops it. */
static int inagg_reply_send(struct genl_info *info, struct sk_buff *msg,
			    void *hdr, int err)
{
	if (err) {
		nlmsg_free(msg);
		return err;
	}
	genlmsg_end(msg, hdr);
	return genlmsg_reply(msg, info);
}

/*
 * Ends a change request, still under the ledger lock so that events keep
 * the order of changes: a refusal carries the ledger's reason, a change is
 * told to listeners under the request's command.
 */
static int inagg_change_done(struct genl_info *info, struct inagg_ledger *l,
			     int err, const struct inagg_why *why,
			     const struct inagg_job *job)
{
	lockdep_assert_held(&l->lock);
	if (err)
		inagg_refuse(info, why);
	else
		inagg_notify(genl_info_net(info), l, info->genlhdr->cmd, job);
	return err;
}

static int inagg_cap_get_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct inagg_ledger *l = inagg_ledger(genl_info_net(info));
	struct sk_buff *msg;
	void *hdr;
	int err;

	msg = inagg_reply_new(info, &hdr);
	if (!msg)
		return -ENOMEM;
	mutex_lock(&l->lock);
	err = inagg_put_cap(msg, l);
	mutex_unlock(&l->lock);
	return inagg_reply_send(info, msg, hdr, err);
}

static int inagg_cap_set_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct inagg_ledger *l = inagg_ledger(genl_info_net(info));
	struct inagg_why why = {};
	u32 max_jobs, max_slots;
	int err;

	err = inagg_rule_set_some(info->attrs[INAGG_A_MAX_JOBS],
				  info->attrs[INAGG_A_MAX_SLOTS], &why);
	if (err) {
		inagg_refuse(info, &why);
		return err;
	}

	mutex_lock(&l->lock);
	max_jobs = inagg_opt_u32(info, INAGG_A_MAX_JOBS, l->c.max_jobs);
	max_slots = inagg_opt_u32(info, INAGG_A_MAX_SLOTS, l->c.max_slots);
	/* Anyone's namespace: no more than inagg.h's limits. */
	if (inagg_net_unpriv(genl_info_net(info)) &&
	    (max_jobs > INAGG_UNPRIV_MAX_JOBS || max_slots > INAGG_UNPRIV_MAX_SLOTS)) {
		mutex_unlock(&l->lock);
		GENL_SET_ERR_MSG(info, "above the limits of a namespace not owned by the initial user namespace (64 jobs, 65536 slots)");
		return -EPERM;
	}
	err = inagg_ledger_set_cap(l, max_jobs, max_slots, &why);
	err = inagg_change_done(info, l, err, &why, NULL);
	mutex_unlock(&l->lock);
	return err;
}

static int inagg_tail_set_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct inagg_ledger *l = inagg_ledger(genl_info_net(info));
	struct inagg_why why = {};
	u32 slots;
	int err;

	err = inagg_req_u32(info, INAGG_A_TAIL_SLOTS, &slots);
	if (err)
		return err;

	mutex_lock(&l->lock);
	err = inagg_ledger_set_tail(l, slots, &why);
	err = inagg_change_done(info, l, err, &why, NULL);
	mutex_unlock(&l->lock);
	return err;
}

/* An INA job names its head; a PS job has none (old clients: INA). */
static int inagg_job_from_request(struct genl_info *info, struct inagg_job *job)
{
	struct nlattr *slots = info->attrs[INAGG_A_JOB_SLOTS];
	struct inagg_why why = {};
	int err;

	err = inagg_req_u32(info, INAGG_A_JOB_ID, &job->id);
	if (err)
		return err;
	job->c.class = inagg_opt_u32(info, INAGG_A_JOB_CLASS, INAGG_CLASS_INA);
	job->c.head = 0;
	job->c.lent = 0;
	if (job->c.class != INAGG_CLASS_PS)
		return inagg_req_u32(info, INAGG_A_JOB_SLOTS, &job->c.head);
	err = inagg_rule_ps_head(job->c.class, slots, &why);
	if (err)
		inagg_refuse(info, &why);
	return err;
}

static int inagg_job_admit_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct inagg_ledger *l = inagg_ledger(genl_info_net(info));
	bool unpriv = inagg_net_unpriv(genl_info_net(info));
	struct inagg_why why = {};
	struct inagg_job req, *job;
	int err;

	err = inagg_job_from_request(info, &req);
	if (err)
		return err;

	/*
	 * Ledgers are cheap to make (one per namespace): what all of anyone's
	 * namespaces hold together is bounded too. Counted first, so that
	 * concurrent admissions never pass the bound together.
	 */
	if (unpriv &&
	    atomic_inc_return(&inagg_nr_unpriv_jobs) > INAGG_UNPRIV_TOTAL_JOBS) {
		atomic_dec(&inagg_nr_unpriv_jobs);
		GENL_SET_ERR_MSG(info, "jobs of namespaces not owned by the initial user namespace: limit reached (4096)");
		return -ENOSPC;
	}

	/*
	 * Charged to the caller's memory cgroup (SLAB_ACCOUNT cache); over its
	 * limit the admission is refused, it does not wake the OOM killer.
	 */
	job = kmem_cache_alloc(inagg_job_cache, GFP_KERNEL_ACCOUNT | __GFP_RETRY_MAYFAIL);
	if (!job) {
		err = -ENOMEM;
		goto out;
	}
	*job = req;

	mutex_lock(&l->lock);
	err = inagg_ledger_admit(l, job, &why);
	err = inagg_change_done(info, l, err, &why, job);
	mutex_unlock(&l->lock);
	if (err)
		kmem_cache_free(inagg_job_cache, job);
out:
	if (err && unpriv)
		atomic_dec(&inagg_nr_unpriv_jobs);
	return err;
}

static int inagg_job_release_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct inagg_ledger *l = inagg_ledger(genl_info_net(info));
	struct inagg_why why = {};
	struct inagg_job *job;
	u32 id;
	int err;

	err = inagg_req_u32(info, INAGG_A_JOB_ID, &id);
	if (err)
		return err;

	mutex_lock(&l->lock);
	job = inagg_ledger_release(l, id, &why);
	err = inagg_change_done(info, l, job ? 0 : -ENOENT, &why, job);
	mutex_unlock(&l->lock);
	if (job) {
		kmem_cache_free(inagg_job_cache, job);
		if (inagg_net_unpriv(genl_info_net(info)))
			atomic_dec(&inagg_nr_unpriv_jobs);
	}
	return err;
}

/* JOB_LEND and JOB_RECLAIM: move COUNT slots between head and tail. */
static int inagg_job_lend_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct inagg_ledger *l = inagg_ledger(genl_info_net(info));
	bool reclaim = info->genlhdr->cmd == INAGG_CMD_JOB_RECLAIM;
	struct inagg_why why = {};
	struct inagg_job *job = NULL;
	u32 id, count;
	int err;

	if (inagg_req_u32(info, INAGG_A_JOB_ID, &id) ||
	    inagg_req_u32(info, INAGG_A_COUNT, &count))
		return -EINVAL;

	mutex_lock(&l->lock);
	err = inagg_ledger_lend(l, id, count, reclaim, &job, &why);
	err = inagg_change_done(info, l, err, &why, job);
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

	err = inagg_req_u32(info, INAGG_A_JOB_ID, &id);
	if (err)
		return err;
	msg = inagg_reply_new(info, &hdr);
	if (!msg)
		return -ENOMEM;

	mutex_lock(&l->lock);
	job = xa_load(&l->jobs, id);
	if (job) {
		err = inagg_put_job(msg, job);
	} else {
		struct inagg_why why = {};

		err = inagg_rule_not_admitted(&why);
		inagg_refuse(info, &why);
	}
	mutex_unlock(&l->lock);
	return inagg_reply_send(info, msg, hdr, err);
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
