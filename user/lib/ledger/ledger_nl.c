// SPDX-License-Identifier: GPL-2.0
/*
 * The ledger's kernel backend (ledger_int.h): the "inagg" generic netlink
 * family of inagg.ko, through libmnl. The module applies the ledger's rules
 * (include/inagg/ledger_rules.h) and says why it refused in the extack.
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <libmnl/libmnl.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>

#include "ledger_int.h"

#define NL_BUFSIZE 32768

/* Extack message of an NLMSG_ERROR, if the kernel sent one. */
static int ext_attr_cb(const struct nlattr *attr, void *data)
{
	const char **msg = data;

	if (mnl_attr_get_type(attr) == NLMSGERR_ATTR_MSG &&
	    mnl_attr_validate(attr, MNL_TYPE_NUL_STRING) == 0)
		*msg = mnl_attr_get_str(attr);
	return MNL_CB_OK;
}

static void nl_extack(struct ia_ledger *l, const struct nlmsghdr *nlh)
{
	const struct nlmsgerr *e = mnl_nlmsg_get_payload(nlh);
	const char *msg = NULL;
	size_t off = sizeof(*e);

	if (!(nlh->nlmsg_flags & NLM_F_ACK_TLVS))
		return;
	if (!(nlh->nlmsg_flags & NLM_F_CAPPED))
		off += e->msg.nlmsg_len - sizeof(e->msg);
	if (mnl_nlmsg_get_payload_len(nlh) <= off)
		return;
	mnl_attr_parse_payload((const char *)e + off,
			       mnl_nlmsg_get_payload_len(nlh) - off, ext_attr_cb, &msg);
	if (msg)
		ia_ledger_seterr(l, msg);
}

/*
 * Sends nlh and reads the answer: data messages go to cb (may be NULL);
 * returns 0 at the ACK or NLMSG_DONE, or the negative errno of the error.
 */
static int nl_talk(struct ia_ledger *l, struct nlmsghdr *nlh, mnl_cb_t cb, void *data)
{
	char *buf;
	int ret = 0;

	buf = malloc(NL_BUFSIZE);
	if (!buf)
		return -ENOMEM;
	nlh->nlmsg_seq = ++l->seq;
	if (!(nlh->nlmsg_flags & NLM_F_DUMP))
		nlh->nlmsg_flags |= NLM_F_ACK;
	if (mnl_socket_sendto(l->nl, nlh, nlh->nlmsg_len) < 0) {
		ret = -errno;
		goto out;
	}
	for (;;) {
		struct nlmsghdr *h = (struct nlmsghdr *)buf;
		ssize_t n;

		n = mnl_socket_recvfrom(l->nl, buf, NL_BUFSIZE);
		if (n < 0) {
			ret = -errno;
			goto out;
		}
		for (int len = n; mnl_nlmsg_ok(h, len); h = mnl_nlmsg_next(h, &len)) {
			if (h->nlmsg_seq != l->seq || h->nlmsg_pid != l->portid)
				continue;
			if (h->nlmsg_type == NLMSG_ERROR) {
				const struct nlmsgerr *e = mnl_nlmsg_get_payload(h);

				ret = e->error;
				if (ret)
					nl_extack(l, h);
				goto out;
			}
			if (h->nlmsg_type == NLMSG_DONE) {
				if (h->nlmsg_flags & NLM_F_DUMP_INTR)
					ret = -EINTR;
				goto out;
			}
			/* Drain to DONE, then report the inconsistency. */
			if (h->nlmsg_flags & NLM_F_DUMP_INTR)
				ret = -EINTR;
			if (cb && cb(h, data) < 0) {
				ret = -EPROTO;
				goto out;
			}
		}
	}
out:
	free(buf);
	return ret;
}

static struct nlmsghdr *genl_put(char *buf, __u16 type, __u8 cmd, __u16 flags)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct genlmsghdr *g;

	nlh->nlmsg_type = type;
	nlh->nlmsg_flags = NLM_F_REQUEST | flags;
	g = mnl_nlmsg_put_extra_header(nlh, sizeof(*g));
	g->cmd = cmd;
	g->version = type == GENL_ID_CTRL ? 1 : INAGG_GENL_VERSION;
	return nlh;
}

static int family_cb(const struct nlmsghdr *nlh, void *data)
{
	struct nlattr *a;
	__u16 *id = data;

	mnl_attr_for_each(a, nlh, sizeof(struct genlmsghdr))
		if (mnl_attr_get_type(a) == CTRL_ATTR_FAMILY_ID &&
		    mnl_attr_validate(a, MNL_TYPE_U16) == 0)
			*id = mnl_attr_get_u16(a);
	return MNL_CB_OK;
}

/* Opens a netlink socket in the current namespace and finds the family: -ENOENT without it. */
static int kernel_open(struct ia_ledger *l)
{
	char buf[256];
	struct nlmsghdr *nlh;
	int one = 1, ret;

	l->nl = mnl_socket_open(NETLINK_GENERIC);
	if (!l->nl)
		return -errno;
	if (mnl_socket_bind(l->nl, 0, MNL_SOCKET_AUTOPID) < 0) {
		ret = -errno;
		goto err;
	}
	l->portid = mnl_socket_get_portid(l->nl);
	mnl_socket_setsockopt(l->nl, NETLINK_EXT_ACK, &one, sizeof(one));
	mnl_socket_setsockopt(l->nl, NETLINK_CAP_ACK, &one, sizeof(one));

	nlh = genl_put(buf, GENL_ID_CTRL, CTRL_CMD_GETFAMILY, 0);
	mnl_attr_put_strz(nlh, CTRL_ATTR_FAMILY_NAME, INAGG_GENL_NAME);
	l->family = 0;
	ret = nl_talk(l, nlh, family_cb, &l->family);
	if (!ret && !l->family)
		ret = -ENOENT;
	if (ret)
		goto err;
	ia_ledger_seterr(l, "");
	return 0;
err:
	mnl_socket_close(l->nl);
	l->nl = NULL;
	return ret;
}

static void kernel_close(struct ia_ledger *l)
{
	if (l->nl)
		mnl_socket_close(l->nl);
	l->nl = NULL;
}

/* The attributes of a CAP_GET reply and where each goes. */
static const struct {
	__u16 type;
	size_t off;
} cap_attrs[] = {
	{ INAGG_A_MAX_JOBS, offsetof(struct ia_ledger_cap, max_jobs) },
	{ INAGG_A_MAX_SLOTS, offsetof(struct ia_ledger_cap, max_slots) },
	{ INAGG_A_USED_JOBS, offsetof(struct ia_ledger_cap, used_jobs) },
	{ INAGG_A_USED_SLOTS, offsetof(struct ia_ledger_cap, used_slots) },
	{ INAGG_A_HEAD_SLOTS, offsetof(struct ia_ledger_cap, head_slots) },
	{ INAGG_A_TAIL_SLOTS, offsetof(struct ia_ledger_cap, tail_slots) },
	{ INAGG_A_LENT_SLOTS, offsetof(struct ia_ledger_cap, lent_slots) },
};

static int cap_cb(const struct nlmsghdr *nlh, void *data)
{
	struct ia_ledger_cap *cap = data;
	struct nlattr *a;

	mnl_attr_for_each(a, nlh, sizeof(struct genlmsghdr)) {
		if (mnl_attr_validate(a, MNL_TYPE_U32))
			continue;
		for (size_t i = 0; i < sizeof(cap_attrs) / sizeof(cap_attrs[0]); i++)
			if (mnl_attr_get_type(a) == cap_attrs[i].type)
				*(__u32 *)((char *)cap + cap_attrs[i].off) = mnl_attr_get_u32(a);
	}
	return MNL_CB_OK;
}

static int kernel_get(struct ia_ledger *l, struct ia_ledger_cap *cap)
{
	char buf[256];
	struct nlmsghdr *nlh;

	nlh = genl_put(buf, l->family, INAGG_CMD_CAP_GET, 0);
	return nl_talk(l, nlh, cap_cb, cap);
}

/* A u32 attribute of a request, put if put. */
struct nl_u32 {
	__u16 type;
	bool put;
	__u32 val;
};

/* A request of cmd with the attributes a[0..n) put, answered by an ACK. */
static int nl_u32s(struct ia_ledger *l, __u8 cmd, const struct nl_u32 *a, int n)
{
	char buf[256];
	struct nlmsghdr *nlh;

	nlh = genl_put(buf, l->family, cmd, 0);
	for (int i = 0; i < n; i++)
		if (a[i].put)
			mnl_attr_put_u32(nlh, a[i].type, a[i].val);
	return nl_talk(l, nlh, NULL, NULL);
}

static int kernel_set(struct ia_ledger *l, long long max_jobs, long long max_slots)
{
	const struct nl_u32 a[] = {
		{ INAGG_A_MAX_JOBS, max_jobs != IA_LEDGER_KEEP, max_jobs },
		{ INAGG_A_MAX_SLOTS, max_slots != IA_LEDGER_KEEP, max_slots },
	};

	return nl_u32s(l, INAGG_CMD_CAP_SET, a, 2);
}

/* with_class false: the request of old clients, an INA job by default. */
static int kernel_admit(struct ia_ledger *l, __u32 job, __u32 class, __u32 slots, bool with_class)
{
	const struct nl_u32 a[] = {
		{ INAGG_A_JOB_ID, true, job },
		{ INAGG_A_JOB_CLASS, with_class, class },
		{ INAGG_A_JOB_SLOTS, class != INAGG_CLASS_PS || slots, slots },
	};

	return nl_u32s(l, INAGG_CMD_JOB_ADMIT, a, 3);
}

static int kernel_set_tail(struct ia_ledger *l, __u32 slots)
{
	return nl_u32s(l, INAGG_CMD_TAIL_SET, &(struct nl_u32){ INAGG_A_TAIL_SLOTS, true, slots }, 1);
}

static int kernel_lend(struct ia_ledger *l, __u32 job, __u32 count, bool reclaim)
{
	const struct nl_u32 a[] = { { INAGG_A_JOB_ID, true, job }, { INAGG_A_COUNT, true, count } };

	return nl_u32s(l, reclaim ? INAGG_CMD_JOB_RECLAIM : INAGG_CMD_JOB_LEND, a, 2);
}

static int kernel_release(struct ia_ledger *l, __u32 job)
{
	return nl_u32s(l, INAGG_CMD_JOB_RELEASE, &(struct nl_u32){ INAGG_A_JOB_ID, true, job }, 1);
}

struct jobs_acc {
	struct ia_ledger_job *v;
	size_t n, cap;
	bool one;	/* doit: a single job expected */
};

static int job_cb(const struct nlmsghdr *nlh, void *data)
{
	/* A module before the memory model sends no class: all its jobs are INA. */
	struct ia_ledger_job job = { .class = INAGG_CLASS_INA }, *v;
	struct jobs_acc *acc = data;
	struct nlattr *a;

	mnl_attr_for_each(a, nlh, sizeof(struct genlmsghdr)) {
		if (mnl_attr_validate(a, MNL_TYPE_U32))
			continue;
		if (mnl_attr_get_type(a) == INAGG_A_JOB_ID)
			job.id = mnl_attr_get_u32(a);
		else if (mnl_attr_get_type(a) == INAGG_A_JOB_SLOTS)
			job.slots = mnl_attr_get_u32(a);
		else if (mnl_attr_get_type(a) == INAGG_A_JOB_CLASS)
			job.class = mnl_attr_get_u32(a);
		else if (mnl_attr_get_type(a) == INAGG_A_LENT_SLOTS)
			job.lent = mnl_attr_get_u32(a);
	}
	if (acc->n == acc->cap) {
		size_t cap = acc->cap ? 2 * acc->cap : 64;

		v = realloc(acc->v, cap * sizeof(*v));
		if (!v)
			return MNL_CB_ERROR;
		acc->v = v;
		acc->cap = cap;
	}
	acc->v[acc->n++] = job;
	return MNL_CB_OK;
}

static int kernel_job(struct ia_ledger *l, __u32 job, struct ia_ledger_job *out)
{
	struct jobs_acc acc = { .one = true };
	char buf[256];
	struct nlmsghdr *nlh;
	int ret;

	nlh = genl_put(buf, l->family, INAGG_CMD_JOB_GET, 0);
	mnl_attr_put_u32(nlh, INAGG_A_JOB_ID, job);
	ret = nl_talk(l, nlh, job_cb, &acc);
	if (!ret && acc.n != 1)
		ret = -EPROTO;
	if (!ret)
		*out = acc.v[0];
	free(acc.v);
	return ret;
}

static int kernel_list(struct ia_ledger *l, struct ia_ledger_job **jobs, size_t *n)
{
	struct jobs_acc acc = { 0 };
	char buf[256];
	struct nlmsghdr *nlh;
	int ret, tries;

	/* A dump that the ledger changed under is taken again. */
	for (tries = 0; tries < 10; tries++) {
		acc.n = 0;
		nlh = genl_put(buf, l->family, INAGG_CMD_JOB_GET, NLM_F_DUMP);
		ret = nl_talk(l, nlh, job_cb, &acc);
		if (ret != -EINTR)
			break;
	}
	if (ret) {
		free(acc.v);
		return ret;
	}
	*jobs = acc.v;
	*n = acc.n;
	return 0;
}

const struct ia_ledger_ops ia_ledger_kernel_ops = {
	.backend = IA_LEDGER_KERNEL,
	.open = kernel_open,
	.close = kernel_close,
	.get = kernel_get,
	.set = kernel_set,
	.admit = kernel_admit,
	.release = kernel_release,
	.set_tail = kernel_set_tail,
	.lend = kernel_lend,
	.job = kernel_job,
	.list = kernel_list,
};
