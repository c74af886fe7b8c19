// SPDX-License-Identifier: GPL-2.0
/*
 * inagg.ko and namespaces anyone can make (issue 31, docs/kmod.md): an
 * unprivileged user (uid 65534) with a user and network namespace of its
 * own has CAP_NET_ADMIN there, so the ledger obeys it; but it may not
 * promise more than 64 jobs and 65536 slots, and all such ledgers together
 * hold at most 4096 jobs, given back when their namespaces go. A namespace
 * of the initial user namespace keeps the full range. Runs in the 6.1 guest.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <libmnl/libmnl.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>

#pragma GCC diagnostic ignored "-Wsign-compare"
#pragma GCC diagnostic ignored "-Wmisleading-indentation"
#include "kselftest_harness.h"
#include "nlhelp.h"

#define PER_NS		64
#define TOTAL		4096
#define NS_MAX		(TOTAL / PER_NS + 1)

/* Becomes nobody, then enters a user and network namespace of its own: 0, or why not. */
static int unprivileged_ns(void)
{
	if (setresgid(65534, 65534, 65534) || setresuid(65534, 65534, 65534))
		return -errno;
	return unshare(CLONE_NEWUSER | CLONE_NEWNET) ? -errno : 0;
}

TEST(unprivileged_namespace_within_limits)
{
	struct nl n;
	int ret;

	if (geteuid())
		SKIP(return, "needs root to become nobody");
	ret = unprivileged_ns();
	if (ret)
		SKIP(return, "no unprivileged user namespace: %s", strerror(-ret));
	ret = nl_open(&n);
	if (ret == -ENOENT && !expect_kernel())
		SKIP(return, "inagg.ko is not loaded");
	ASSERT_EQ(0, ret);
	/* max_jobs 65536 was the attack; then each limit alone, one above. */
	EXPECT_EQ(-EPERM, set_cap(&n, 65536, 10));
	EXPECT_NE(NULL, strstr(n.msg, "not owned by the initial user namespace")) TH_LOG("%s", n.msg);
	EXPECT_EQ(-EPERM, set_cap(&n, PER_NS + 1, 10));
	EXPECT_EQ(-EPERM, set_cap(&n, 1, 65537));
	ASSERT_EQ(0, set_cap(&n, PER_NS, 65536));
	for (int id = 1; id <= PER_NS; id++) {
		ASSERT_EQ(0, admit(&n, id, 1)) TH_LOG("job %d: %s", id, n.msg);
	}
	EXPECT_EQ(-ENOSPC, admit(&n, PER_NS + 1, 1));
	nl_close(&n);
}

/* Fills ledgers of new network namespaces (in our user namespace) until one refuses. */
static int fill(struct nl *ns, int *nns, int *admitted, char *msg, size_t msglen)
{
	int ret = 0;

	*nns = *admitted = 0;
	for (int k = 0; k < NS_MAX && !ret; k++) {
		struct nl *n = &ns[k];

		if (unshare(CLONE_NEWNET))
			return -errno;
		/* The socket holds its namespace: the ledger stays after we move on. */
		ret = nl_open(n);
		if (ret)
			return ret;
		(*nns)++;
		ret = set_cap(n, PER_NS, PER_NS);
		for (int id = 1; !ret && id <= PER_NS; id++) {
			ret = admit(n, id, 1);
			if (!ret)
				(*admitted)++;
			else
				snprintf(msg, msglen, "%s", n->msg);
		}
	}
	return ret;
}

FIXTURE(many) {
	int unused;
};

FIXTURE_SETUP(many)
{
}

FIXTURE_TEARDOWN(many)
{
}

TEST_F_TIMEOUT(many, unprivileged_namespaces_bounded_together, 300)
{
	static struct nl ns[NS_MAX];
	int nns, admitted, ret;
	char msg[256] = "";

	if (geteuid())
		SKIP(return, "needs root to become nobody");
	ret = unprivileged_ns();
	if (ret)
		SKIP(return, "no unprivileged user namespace: %s", strerror(-ret));
	ret = fill(ns, &nns, &admitted, msg, sizeof(msg));
	if (ret == -ENOENT && !expect_kernel())
		SKIP(return, "inagg.ko is not loaded");
	EXPECT_EQ(-ENOSPC, ret);
	EXPECT_EQ(TOTAL, admitted);
	EXPECT_NE(NULL, strstr(msg, "limit reached (4096)")) TH_LOG("%s", msg);
	/* The namespaces gone (cleanup_net() runs later): their jobs count no more. */
	for (int k = 0; k < nns; k++)
		nl_close(&ns[k]);
	for (int tries = 0; tries < 200; tries++) {
		struct nl n;

		ASSERT_EQ(0, unshare(CLONE_NEWNET));
		ASSERT_EQ(0, nl_open(&n));
		ret = admit(&n, 1, 1);
		nl_close(&n);
		if (!ret)
			break;
		usleep(50000);
	}
	EXPECT_EQ(0, ret) TH_LOG("the bound was not given back");
}

/* The initial user namespace's own namespaces keep the full range. */
TEST(initial_user_namespace_unlimited)
{
	struct nl n;
	int ret;

	if (geteuid())
		SKIP(return, "needs root");
	ASSERT_EQ(0, unshare(CLONE_NEWNET));
	ret = nl_open(&n);
	if (ret == -ENOENT && !expect_kernel())
		SKIP(return, "inagg.ko is not loaded");
	ASSERT_EQ(0, ret);
	EXPECT_EQ(0, set_cap(&n, 65536, 1 << 24));
	nl_close(&n);
}

TEST_HARNESS_MAIN
