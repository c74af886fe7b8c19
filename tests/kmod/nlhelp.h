/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Raw generic netlink helpers for the kmod tests (libmnl only, no
 * libinagg): they speak include/inagg/netlink.h directly.
 */
#ifndef INAGG_TESTS_NLHELP_H
#define INAGG_TESTS_NLHELP_H

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libmnl/libmnl.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>

#include <inagg/netlink.h>

#define NLH_FN static __attribute__((unused))

#define BUFSZ 65536

struct nl {
	struct mnl_socket *s;
	__u32 portid;
	__u32 seq;
	__u16 family;
	__u32 events;		/* multicast group id */
	char msg[256];		/* extack message of the last error */
	int miss_type;		/* NLMSGERR_ATTR_MISS_TYPE, or -1 */
};

NLH_FN int grp_cb(const struct nlattr *a, void *data)
{
	struct nl *n = data;
	const struct nlattr *g, *x;
	const char *name = NULL;
	__u32 id = 0;

	mnl_attr_for_each_nested(g, a) {
		mnl_attr_for_each_nested(x, g) {
			if (mnl_attr_get_type(x) == CTRL_ATTR_MCAST_GRP_NAME)
				name = mnl_attr_get_str(x);
			else if (mnl_attr_get_type(x) == CTRL_ATTR_MCAST_GRP_ID)
				id = mnl_attr_get_u32(x);
		}
		if (name && !strcmp(name, INAGG_GENL_MCGRP_EVENTS))
			n->events = id;
	}
	return MNL_CB_OK;
}

NLH_FN int family_cb(const struct nlmsghdr *nlh, void *data)
{
	struct nl *n = data;
	struct nlattr *a;

	mnl_attr_for_each(a, nlh, sizeof(struct genlmsghdr)) {
		if (mnl_attr_get_type(a) == CTRL_ATTR_FAMILY_ID)
			n->family = mnl_attr_get_u16(a);
		else if (mnl_attr_get_type(a) == CTRL_ATTR_MCAST_GROUPS)
			grp_cb(a, n);
	}
	return MNL_CB_OK;
}

NLH_FN int ext_cb(const struct nlattr *a, void *data)
{
	struct nl *n = data;

	if (mnl_attr_get_type(a) == NLMSGERR_ATTR_MSG)
		snprintf(n->msg, sizeof(n->msg), "%s", mnl_attr_get_str(a));
	else if (mnl_attr_get_type(a) == NLMSGERR_ATTR_MISS_TYPE)
		n->miss_type = mnl_attr_get_u32(a);
	return MNL_CB_OK;
}

NLH_FN struct nlmsghdr *put(char *buf, __u16 type, __u8 cmd, __u16 flags)
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

NLH_FN int nl_send(struct nl *n, struct nlmsghdr *nlh)
{
	nlh->nlmsg_seq = ++n->seq;
	if (!(nlh->nlmsg_flags & NLM_F_DUMP))
		nlh->nlmsg_flags |= NLM_F_ACK;
	n->msg[0] = 0;
	n->miss_type = -1;
	return mnl_socket_sendto(n->s, nlh, nlh->nlmsg_len) < 0 ? -errno : 0;
}

/*
 * Reads the answer to the last request: data messages go to cb. Returns 0 at
 * the ACK or DONE, or the error. *intr tells whether NLM_F_DUMP_INTR was seen.
 */
NLH_FN int nl_recv(struct nl *n, mnl_cb_t cb, void *data, bool *intr)
{
	static char buf[BUFSZ];

	for (;;) {
		int len = mnl_socket_recvfrom(n->s, buf, sizeof(buf));
		struct nlmsghdr *h = (struct nlmsghdr *)buf;

		if (len < 0)
			return -errno;
		for (; mnl_nlmsg_ok(h, len); h = mnl_nlmsg_next(h, &len)) {
			if (h->nlmsg_seq != n->seq)
				continue;
			if (intr && (h->nlmsg_flags & NLM_F_DUMP_INTR))
				*intr = true;
			if (h->nlmsg_type == NLMSG_ERROR) {
				struct nlmsgerr *e = mnl_nlmsg_get_payload(h);
				size_t off = sizeof(*e);

				if (!e->error)
					return 0;
				if (h->nlmsg_flags & NLM_F_ACK_TLVS) {
					if (!(h->nlmsg_flags & NLM_F_CAPPED))
						off += e->msg.nlmsg_len - sizeof(e->msg);
					mnl_attr_parse_payload((char *)e + off,
							       mnl_nlmsg_get_payload_len(h) - off,
							       ext_cb, n);
				}
				return e->error;
			}
			if (h->nlmsg_type == NLMSG_DONE)
				return 0;
			if (cb)
				cb(h, data);
		}
	}
}

NLH_FN int nl_talk(struct nl *n, struct nlmsghdr *nlh, mnl_cb_t cb, void *data)
{
	int ret = nl_send(n, nlh);

	return ret ? ret : nl_recv(n, cb, data, NULL);
}

NLH_FN int nl_open(struct nl *n)
{
	char buf[256];
	struct nlmsghdr *nlh;
	int one = 1, ret;

	memset(n, 0, sizeof(*n));
	n->s = mnl_socket_open(NETLINK_GENERIC);
	if (!n->s)
		return -errno;
	if (mnl_socket_bind(n->s, 0, MNL_SOCKET_AUTOPID) < 0)
		return -errno;
	n->portid = mnl_socket_get_portid(n->s);
	mnl_socket_setsockopt(n->s, NETLINK_EXT_ACK, &one, sizeof(one));
	mnl_socket_setsockopt(n->s, NETLINK_CAP_ACK, &one, sizeof(one));
	nlh = put(buf, GENL_ID_CTRL, CTRL_CMD_GETFAMILY, 0);
	mnl_attr_put_strz(nlh, CTRL_ATTR_FAMILY_NAME, INAGG_GENL_NAME);
	ret = nl_talk(n, nlh, family_cb, n);
	if (!ret && (!n->family || !n->events))
		ret = -ENOENT;
	return ret;
}

NLH_FN void nl_close(struct nl *n)
{
	if (n->s)
		mnl_socket_close(n->s);
	n->s = NULL;
}

struct reply {
	int n;
	__u8 cmd[8];
	__u32 a[8][INAGG_A_MAX + 1];	/* attribute values, by message */
};

NLH_FN int reply_cb(const struct nlmsghdr *nlh, void *data)
{
	struct genlmsghdr *g = mnl_nlmsg_get_payload(nlh);
	struct reply *r = data;
	struct nlattr *a;

	if (r->n == 8)
		return MNL_CB_OK;
	r->cmd[r->n] = g->cmd;
	mnl_attr_for_each(a, nlh, sizeof(*g))
		if (mnl_attr_get_type(a) <= INAGG_A_MAX &&
		    mnl_attr_get_payload_len(a) == 4)
			r->a[r->n][mnl_attr_get_type(a)] = mnl_attr_get_u32(a);
	r->n++;
	return MNL_CB_OK;
}

NLH_FN int admit(struct nl *n, __u32 id, __u32 slots)
{
	char buf[256];
	struct nlmsghdr *nlh = put(buf, n->family, INAGG_CMD_JOB_ADMIT, 0);

	mnl_attr_put_u32(nlh, INAGG_A_JOB_ID, id);
	mnl_attr_put_u32(nlh, INAGG_A_JOB_SLOTS, slots);
	return nl_talk(n, nlh, NULL, NULL);
}

/* JOB_ADMIT with a class: slots 0 leaves the head out (a PS job). */
NLH_FN int admit_class(struct nl *n, __u32 id, __u32 class, __u32 slots)
{
	char buf[256];
	struct nlmsghdr *nlh = put(buf, n->family, INAGG_CMD_JOB_ADMIT, 0);

	mnl_attr_put_u32(nlh, INAGG_A_JOB_ID, id);
	mnl_attr_put_u32(nlh, INAGG_A_JOB_CLASS, class);
	if (slots)
		mnl_attr_put_u32(nlh, INAGG_A_JOB_SLOTS, slots);
	return nl_talk(n, nlh, NULL, NULL);
}

NLH_FN int release(struct nl *n, __u32 id)
{
	char buf[256];
	struct nlmsghdr *nlh = put(buf, n->family, INAGG_CMD_JOB_RELEASE, 0);

	mnl_attr_put_u32(nlh, INAGG_A_JOB_ID, id);
	return nl_talk(n, nlh, NULL, NULL);
}

NLH_FN int set_tail(struct nl *n, __u32 slots)
{
	char buf[256];
	struct nlmsghdr *nlh = put(buf, n->family, INAGG_CMD_TAIL_SET, 0);

	mnl_attr_put_u32(nlh, INAGG_A_TAIL_SLOTS, slots);
	return nl_talk(n, nlh, NULL, NULL);
}

/* cmd INAGG_CMD_JOB_LEND or INAGG_CMD_JOB_RECLAIM. */
NLH_FN int lend(struct nl *n, __u8 cmd, __u32 id, __u32 count)
{
	char buf[256];
	struct nlmsghdr *nlh = put(buf, n->family, cmd, 0);

	mnl_attr_put_u32(nlh, INAGG_A_JOB_ID, id);
	mnl_attr_put_u32(nlh, INAGG_A_COUNT, count);
	return nl_talk(n, nlh, NULL, NULL);
}

NLH_FN int set_cap(struct nl *n, __u32 jobs, __u32 slots)
{
	char buf[256];
	struct nlmsghdr *nlh = put(buf, n->family, INAGG_CMD_CAP_SET, 0);

	mnl_attr_put_u32(nlh, INAGG_A_MAX_JOBS, jobs);
	mnl_attr_put_u32(nlh, INAGG_A_MAX_SLOTS, slots);
	return nl_talk(n, nlh, NULL, NULL);
}

NLH_FN int get_cap(struct nl *n, struct reply *r)
{
	char buf[256];

	memset(r, 0, sizeof(*r));
	return nl_talk(n, put(buf, n->family, INAGG_CMD_CAP_GET, 0), reply_cb, r);
}

NLH_FN int get_job(struct nl *n, __u32 id, struct reply *r)
{
	char buf[256];
	struct nlmsghdr *nlh = put(buf, n->family, INAGG_CMD_JOB_GET, 0);

	memset(r, 0, sizeof(*r));
	mnl_attr_put_u32(nlh, INAGG_A_JOB_ID, id);
	return nl_talk(n, nlh, reply_cb, r);
}

NLH_FN bool expect_kernel(void)
{
	const char *e = getenv("INAGG_EXPECT_BACKEND");

	return e && !strcmp(e, "kernel");
}

NLH_FN int read_file(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY), n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = 0;
	return n;
}

#endif
