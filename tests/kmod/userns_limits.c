// SPDX-License-Identifier: GPL-2.0
/*
 * inagg.ko and namespaces anyone can make (issue 31, docs/kmod.md): an
 * unprivileged user (uid 65534) with a user and network namespace of its
 * own has CAP_NET_ADMIN there, so the ledger obeys it; but it may not
 * promise more than 64 jobs and 65536 slots, and all such ledgers together
 * hold at most 4096 jobs, given back when their namespaces go. A namespace
 * of the initial user namespace keeps the full range. A memory cgroup of
 * 8 MiB stops the admissions of its processes with -ENOMEM (jobs and their
 * index are charged to it; no OOM kill) and the host goes on. Runs in the
 * 6.1 guest.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
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

#define CG		"/sys/fs/cgroup"
#define CG_TEST		CG "/ia-memcg"
#define MEMCG_NS	8		/* x 65536 jobs: beyond 8 MiB if uncharged */

static int write_str(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY), ret = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, s, strlen(s)) != (ssize_t)strlen(s))
		ret = -errno;
	close(fd);
	return ret;
}

/*
 * In the cgroup: ledgers of new namespaces filled until an admission fails.
 * The namespaces are made first, so that only admissions meet the limit.
 * Exits 0 when refused for memory, 1 when everything was admitted (nothing
 * charged), 2 on anything else.
 */
static void fill_in_cgroup(void)
{
	static struct nl ns[MEMCG_NS];
	int ret = 0;

	if (write_str(CG_TEST "/cgroup.procs", "0"))
		_exit(2);
	for (int k = 0; k < MEMCG_NS; k++)
		if (unshare(CLONE_NEWNET) || nl_open(&ns[k]) ||
		    set_cap(&ns[k], 65536, 1 << 24))
			_exit(2);
	for (int k = 0; k < MEMCG_NS && !ret; k++)
		for (__u32 id = 1; !ret && id <= 65536; id++)
			ret = admit(&ns[k], id, 1);
	_exit(!ret ? 1 : ret == -ENOMEM ? 0 : 2);
}

static int total_jobs(void)
{
	char text[65536], *p;
	int ledgers, jobs;

	if (read_file("/proc/1/net/inagg", text, sizeof(text)) < 0)
		return -1;
	p = strstr(text, "total ledgers ");
	if (!p || sscanf(p, "total ledgers %d jobs %d", &ledgers, &jobs) != 2)
		return -1;
	return jobs;
}

TEST_F_TIMEOUT(many, memory_cgroup_stops_admissions, 600)
{
	char events[4096];
	int status, before, jobs = -1;
	struct nl n;
	pid_t pid;

	if (geteuid())
		SKIP(return, "needs root");
	mount("none", CG, "cgroup2", 0, NULL);	/* the guest's init mounts none */
	if (write_str(CG "/cgroup.subtree_control", "+memory") ||
	    (mkdir(CG_TEST, 0755) && errno != EEXIST) ||
	    write_str(CG_TEST "/memory.max", "8M"))
		SKIP(return, "no cgroup2 memory controller");
	before = total_jobs();
	if (before < 0 && !expect_kernel())
		SKIP(return, "inagg.ko is not loaded");
	ASSERT_LE(0, before);
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0)
		fill_in_cgroup();
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	/* Refused for memory (-ENOMEM), not killed: the OOM killer is not woken. */
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status)) TH_LOG("1: all admitted; 2: another error");
	ASSERT_LT(0, read_file(CG_TEST "/memory.events", events, sizeof(events)));
	EXPECT_EQ(NULL, strstr(events, "max 0\n")) TH_LOG("%s", events);
	/* The host goes on: its own namespace admits, the cgroup's jobs go with it. */
	ASSERT_EQ(0, unshare(CLONE_NEWNET));
	ASSERT_EQ(0, nl_open(&n));
	EXPECT_EQ(0, admit(&n, 1, 1));
	nl_close(&n);
	for (int tries = 0; tries < 600; tries++) {
		jobs = total_jobs();
		if (jobs >= 0 && jobs <= before + 1)
			break;
		usleep(100000);
	}
	EXPECT_GE(before + 1, jobs) TH_LOG("the cgroup's jobs were not freed");
	rmdir(CG_TEST);
}

TEST_HARNESS_MAIN
