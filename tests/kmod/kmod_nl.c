// SPDX-License-Identifier: GPL-2.0
/*
 * inagg.ko's generic netlink ABI, spoken directly (libmnl, no libinagg):
 * malformed requests, events, dumps, /proc/net/inagg, user namespaces and
 * namespace deletion. Runs in the VM; skipped where the module is absent
 * unless INAGG_EXPECT_BACKEND=kernel.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <libmnl/libmnl.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>

/* The harness compares signed and unsigned values in its macros. */
#pragma GCC diagnostic ignored "-Wsign-compare"
#pragma GCC diagnostic ignored "-Wmisleading-indentation"
#include "kselftest_harness.h"
#include "skip.h"
#include "nlhelp.h"

FIXTURE(nl) {
	struct nl n;
};

FIXTURE_SETUP(nl)
{
	int ret;

	/* A namespace of our own: a new ledger. */
	ASSERT_EQ(0, unshare(CLONE_NEWNET));
	ret = nl_open(&self->n);
	if (ret == -ENOENT && !expect_kernel())
		SETUP_SKIP("inagg.ko is not loaded");
	ASSERT_EQ(0, ret);
}

FIXTURE_TEARDOWN(nl)
{
	nl_close(&self->n);
}

#define BEGIN() do { if (_metadata->skip) return; } while (0)

/* Sums over all namespaces, from the initial namespace's view. */
static int totals(int *ledgers, int *jobs)
{
	char text[65536], *p;

	if (read_file("/proc/1/net/inagg", text, sizeof(text)) < 0)
		return -1;
	p = strstr(text, "total ledgers ");
	if (!p || sscanf(p, "total ledgers %d jobs %d", ledgers, jobs) != 2)
		return -1;
	return 0;
}

/*
 * Namespaces of earlier tests may still be on their way out: wait until
 * the totals hold still for a second. (This test comes first to keep it so.)
 */
static void settle(int *ledgers, int *jobs)
{
	int l2, j2, i, still = 0;

	for (i = 0; i < 300 && still < 10; i++) {
		usleep(100000);
		if (totals(&l2, &j2))
			return;
		still = l2 == *ledgers && j2 == *jobs ? still + 1 : 0;
		*ledgers = l2;
		*jobs = j2;
	}
}

TEST_F_TIMEOUT(nl, netns_deletion_frees_ledger, 120)
{
	int l0, j0, l1, j1, i, status, p[2];
	char c;
	pid_t pid;

	BEGIN();
	ASSERT_EQ(0, totals(&l0, &j0));
	settle(&l0, &j0);
	ASSERT_EQ(0, pipe(p));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		struct nl n;

		close(p[0]);
		if (unshare(CLONE_NEWNET) || nl_open(&n) || admit(&n, 1, 5) ||
		    admit(&n, 2, 5) || admit(&n, 3, 5))
			_exit(1);
		if (write(p[1], "a", 1) != 1)
			_exit(2);
		pause();
		_exit(0);
	}
	close(p[1]);
	ASSERT_EQ(1, read(p[0], &c, 1));
	ASSERT_EQ(0, totals(&l1, &j1));
	EXPECT_EQ(l0 + 1, l1);
	EXPECT_EQ(j0 + 3, j1);
	kill(pid, SIGKILL);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	/* The namespace goes when its last user does, a little later. */
	for (i = 0; i < 200; i++) {
		ASSERT_EQ(0, totals(&l1, &j1));
		if (l1 == l0 && j1 == j0)
			break;
		usleep(50000);
	}
	EXPECT_EQ(l0, l1);
	EXPECT_EQ(j0, j1);
}

/* One malformed request: what to put, and how it must be refused. */
struct bad_req {
	const char *name;
	__u8 cmd;
	__u8 reserved;		/* genlmsghdr.reserved */
	struct { __u16 type; __u16 len; __u64 val; } attr[3];
	int err;
	const char *msg;	/* substring of the extack message, or NULL */
	int miss_type;		/* expected missing attribute, or 0 */
};

#define U32(t, v) { t, 4, v }
static const struct bad_req bad_reqs[] = {
	{ "admit without job id", INAGG_CMD_JOB_ADMIT, 0,
	  { U32(INAGG_A_JOB_SLOTS, 1) }, -EINVAL, NULL, INAGG_A_JOB_ID },
	{ "admit without slots", INAGG_CMD_JOB_ADMIT, 0,
	  { U32(INAGG_A_JOB_ID, 1) }, -EINVAL, NULL, INAGG_A_JOB_SLOTS },
	{ "release without job id", INAGG_CMD_JOB_RELEASE, 0, { }, -EINVAL, NULL,
	  INAGG_A_JOB_ID },
	{ "get without job id", INAGG_CMD_JOB_GET, 0, { }, -EINVAL, NULL, INAGG_A_JOB_ID },
	{ "set without limits", INAGG_CMD_CAP_SET, 0, { }, -EINVAL, "max_jobs or max_slots" },
	{ "job id as u8", INAGG_CMD_JOB_ADMIT, 0,
	  { { INAGG_A_JOB_ID, 1, 1 }, U32(INAGG_A_JOB_SLOTS, 1) }, -EINVAL,
	  "invalid attribute length" },
	{ "job id as u64", INAGG_CMD_JOB_ADMIT, 0,
	  { { INAGG_A_JOB_ID, 8, 1 }, U32(INAGG_A_JOB_SLOTS, 1) }, -EINVAL,
	  "invalid attribute length" },
	{ "slots as u16", INAGG_CMD_JOB_ADMIT, 0,
	  { U32(INAGG_A_JOB_ID, 1), { INAGG_A_JOB_SLOTS, 2, 1 } }, -EINVAL,
	  "invalid attribute length" },
	{ "max_jobs as u64", INAGG_CMD_CAP_SET, 0, { { INAGG_A_MAX_JOBS, 8, 1 } }, -EINVAL,
	  "invalid attribute length" },
	{ "job id 0", INAGG_CMD_JOB_ADMIT, 0,
	  { U32(INAGG_A_JOB_ID, 0), U32(INAGG_A_JOB_SLOTS, 1) }, -ERANGE, "out of range" },
	{ "slots 0", INAGG_CMD_JOB_ADMIT, 0,
	  { U32(INAGG_A_JOB_ID, 1), U32(INAGG_A_JOB_SLOTS, 0) }, -ERANGE, "out of range" },
	{ "slots above limit", INAGG_CMD_JOB_ADMIT, 0,
	  { U32(INAGG_A_JOB_ID, 1), U32(INAGG_A_JOB_SLOTS, INAGG_SLOTS_LIMIT + 1) },
	  -ERANGE, "out of range" },
	{ "max_jobs above limit", INAGG_CMD_CAP_SET, 0,
	  { U32(INAGG_A_MAX_JOBS, INAGG_JOBS_LIMIT + 1) }, -ERANGE, "out of range" },
	{ "max_slots above limit", INAGG_CMD_CAP_SET, 0,
	  { U32(INAGG_A_MAX_SLOTS, INAGG_SLOTS_LIMIT + 1) }, -ERANGE, "out of range" },
	{ "release job id 0", INAGG_CMD_JOB_RELEASE, 0, { U32(INAGG_A_JOB_ID, 0) }, -ERANGE },
	{ "reply attribute in request", INAGG_CMD_CAP_SET, 0,
	  { U32(INAGG_A_MAX_JOBS, 1), U32(INAGG_A_USED_JOBS, 0) }, -EINVAL,
	  "policy validation" },
	{ "unknown attribute", INAGG_CMD_JOB_ADMIT, 0,
	  { U32(INAGG_A_JOB_ID, 1), U32(INAGG_A_JOB_SLOTS, 1), U32(INAGG_A_MAX + 1, 1) },
	  -EINVAL, "Unknown attribute" },
	{ "attribute type 0", INAGG_CMD_CAP_SET, 0,
	  { U32(INAGG_A_MAX_JOBS, 1), U32(0, 1) }, -EINVAL, "Unknown attribute" },
	{ "unknown command", INAGG_CMD_MAX + 1, 0, { }, -EOPNOTSUPP },
	{ "command 0", INAGG_CMD_UNSPEC, 0, { }, -EOPNOTSUPP },
	{ "reserved header bits", INAGG_CMD_CAP_GET, 1, { }, -EINVAL, "reserved" },
	/* The memory model's attributes and requests. */
	{ "class 0", INAGG_CMD_JOB_ADMIT, 0,
	  { U32(INAGG_A_JOB_ID, 1), U32(INAGG_A_JOB_CLASS, 0), U32(INAGG_A_JOB_SLOTS, 1) },
	  -ERANGE, "out of range" },
	{ "class above PS", INAGG_CMD_JOB_ADMIT, 0,
	  { U32(INAGG_A_JOB_ID, 1), U32(INAGG_A_JOB_CLASS, INAGG_CLASS_MAX + 1) },
	  -ERANGE, "out of range" },
	{ "class as u8", INAGG_CMD_JOB_ADMIT, 0,
	  { U32(INAGG_A_JOB_ID, 1), { INAGG_A_JOB_CLASS, 1, INAGG_CLASS_PS } }, -EINVAL,
	  "invalid attribute length" },
	{ "PS job with a head", INAGG_CMD_JOB_ADMIT, 0,
	  { U32(INAGG_A_JOB_ID, 1), U32(INAGG_A_JOB_CLASS, INAGG_CLASS_PS),
	    U32(INAGG_A_JOB_SLOTS, 4) }, -EINVAL, "a PS job holds no head slots" },
	{ "INA job without a head", INAGG_CMD_JOB_ADMIT, 0,
	  { U32(INAGG_A_JOB_ID, 1), U32(INAGG_A_JOB_CLASS, INAGG_CLASS_INA) }, -EINVAL,
	  NULL, INAGG_A_JOB_SLOTS },
	{ "PS job without job id", INAGG_CMD_JOB_ADMIT, 0,
	  { U32(INAGG_A_JOB_CLASS, INAGG_CLASS_PS) }, -EINVAL, NULL, INAGG_A_JOB_ID },
	{ "tail set without tail", INAGG_CMD_TAIL_SET, 0, { U32(INAGG_A_MAX_JOBS, 1) },
	  -EINVAL, NULL, INAGG_A_TAIL_SLOTS },
	{ "tail above limit", INAGG_CMD_TAIL_SET, 0,
	  { U32(INAGG_A_TAIL_SLOTS, INAGG_SLOTS_LIMIT + 1) }, -ERANGE, "out of range" },
	{ "tail as u64", INAGG_CMD_TAIL_SET, 0, { { INAGG_A_TAIL_SLOTS, 8, 1 } }, -EINVAL,
	  "invalid attribute length" },
	{ "lend without count", INAGG_CMD_JOB_LEND, 0, { U32(INAGG_A_JOB_ID, 1) }, -EINVAL,
	  NULL, INAGG_A_COUNT },
	{ "lend without job id", INAGG_CMD_JOB_LEND, 0, { U32(INAGG_A_COUNT, 1) }, -EINVAL,
	  NULL, INAGG_A_JOB_ID },
	{ "lend count 0", INAGG_CMD_JOB_LEND, 0,
	  { U32(INAGG_A_JOB_ID, 1), U32(INAGG_A_COUNT, 0) }, -ERANGE, "out of range" },
	{ "reclaim without count", INAGG_CMD_JOB_RECLAIM, 0, { U32(INAGG_A_JOB_ID, 1) },
	  -EINVAL, NULL, INAGG_A_COUNT },
	{ "reclaim count above limit", INAGG_CMD_JOB_RECLAIM, 0,
	  { U32(INAGG_A_JOB_ID, 1), U32(INAGG_A_COUNT, INAGG_SLOTS_LIMIT + 1) }, -ERANGE,
	  "out of range" },
	{ "reclaim job id 0", INAGG_CMD_JOB_RECLAIM, 0,
	  { U32(INAGG_A_JOB_ID, 0), U32(INAGG_A_COUNT, 1) }, -ERANGE, "out of range" },
	{ "head slots in a request", INAGG_CMD_CAP_SET, 0,
	  { U32(INAGG_A_MAX_JOBS, 1), U32(INAGG_A_HEAD_SLOTS, 0) }, -EINVAL,
	  "policy validation" },
	{ "lent slots in a request", INAGG_CMD_JOB_LEND, 0,
	  { U32(INAGG_A_JOB_ID, 1), U32(INAGG_A_COUNT, 1), U32(INAGG_A_LENT_SLOTS, 1) },
	  -EINVAL, "policy validation" },
};

TEST_F(nl, malformed_requests_refused)
{
	struct reply r;
	char buf[512];
	size_t i;

	BEGIN();
	for (i = 0; i < sizeof(bad_reqs) / sizeof(bad_reqs[0]); i++) {
		const struct bad_req *b = &bad_reqs[i];
		struct nlmsghdr *nlh = put(buf, self->n.family, b->cmd, 0);
		struct genlmsghdr *g = mnl_nlmsg_get_payload(nlh);
		int j, ret;

		g->reserved = b->reserved;
		for (j = 0; j < 3 && b->attr[j].len; j++)
			mnl_attr_put(nlh, b->attr[j].type, b->attr[j].len, &b->attr[j].val);
		ret = nl_talk(&self->n, nlh, NULL, NULL);
		TH_LOG("%s: %d '%s' miss %d", b->name, ret, self->n.msg, self->n.miss_type);
		EXPECT_EQ(b->err, ret);
		if (b->msg)
			EXPECT_NE(NULL, strstr(self->n.msg, b->msg));
		if (b->miss_type)
			EXPECT_EQ(b->miss_type, self->n.miss_type);
	}
	/* Nothing got in. */
	ASSERT_EQ(0, get_cap(&self->n, &r));
	EXPECT_EQ(0, r.a[0][INAGG_A_USED_JOBS]);
	EXPECT_EQ(0, r.a[0][INAGG_A_TAIL_SLOTS]);
	EXPECT_EQ(INAGG_DEFAULT_MAX_JOBS, r.a[0][INAGG_A_MAX_JOBS]);
}

/* An attribute that claims more bytes than the message has. */
TEST_F(nl, truncated_attribute_refused)
{
	struct nlmsghdr *nlh;
	struct nlattr *a;
	char buf[256];

	BEGIN();
	nlh = put(buf, self->n.family, INAGG_CMD_JOB_ADMIT, 0);
	mnl_attr_put_u32(nlh, INAGG_A_JOB_ID, 1);
	a = mnl_nlmsg_get_payload_tail(nlh);
	mnl_attr_put_u32(nlh, INAGG_A_JOB_SLOTS, 1);
	a->nla_len = 64;
	EXPECT_EQ(-EINVAL, nl_talk(&self->n, nlh, NULL, NULL));
}

/* The limit refusals carry the limit's name, the refused attribute's offset. */
TEST_F(nl, limit_refusals_explained)
{
	BEGIN();
	ASSERT_EQ(0, set_cap(&self->n, 1, 10));
	ASSERT_EQ(0, admit(&self->n, 1, 4));
	ASSERT_EQ(-ENOSPC, admit(&self->n, 2, 1));
	EXPECT_STREQ("job limit reached (max_jobs)", self->n.msg);
	ASSERT_EQ(0, set_cap(&self->n, 2, 10));
	ASSERT_EQ(-ENOSPC, admit(&self->n, 2, 7));
	EXPECT_STREQ("slot limit reached (max_slots)", self->n.msg);
	ASSERT_EQ(-EEXIST, admit(&self->n, 1, 1));
	EXPECT_STREQ("job already admitted", self->n.msg);
	ASSERT_EQ(-EBUSY, set_cap(&self->n, 0, 10));
	EXPECT_STREQ("max_jobs below the jobs admitted", self->n.msg);
	ASSERT_EQ(-EBUSY, set_cap(&self->n, 2, 3));
	EXPECT_STREQ("max_slots below the slots admitted", self->n.msg);
}

/* Every refusal of the memory model: its errno, its extack message. */
TEST_F(nl, memory_refusals_explained)
{
	struct reply r;

	BEGIN();
	ASSERT_EQ(0, set_cap(&self->n, 3, 100));
	ASSERT_EQ(0, set_tail(&self->n, 30));
	ASSERT_EQ(0, admit_class(&self->n, 1, INAGG_CLASS_INA, 60));
	ASSERT_EQ(-ENOSPC, admit_class(&self->n, 2, INAGG_CLASS_INA, 11));
	EXPECT_STREQ("slot limit reached (max_slots)", self->n.msg);
	ASSERT_EQ(0, admit(&self->n, 2, 10));	/* the old request: INA */
	ASSERT_EQ(-ENOSPC, set_tail(&self->n, 31));
	EXPECT_STREQ("tail beyond the slots the heads leave (max_slots)", self->n.msg);
	ASSERT_EQ(-EBUSY, set_cap(&self->n, 3, 99));
	EXPECT_STREQ("max_slots below the slots admitted", self->n.msg);
	ASSERT_EQ(0, admit_class(&self->n, 3, INAGG_CLASS_PS, 0));
	ASSERT_EQ(-ENOSPC, admit_class(&self->n, 4, INAGG_CLASS_PS, 0));
	EXPECT_STREQ("job limit reached (max_jobs)", self->n.msg);

	ASSERT_EQ(-EINVAL, lend(&self->n, INAGG_CMD_JOB_LEND, 3, 1));
	EXPECT_STREQ("a PS job holds no head slots", self->n.msg);
	ASSERT_EQ(-EINVAL, lend(&self->n, INAGG_CMD_JOB_RECLAIM, 3, 1));
	EXPECT_STREQ("a PS job holds no head slots", self->n.msg);
	ASSERT_EQ(-ENOENT, lend(&self->n, INAGG_CMD_JOB_LEND, 9, 1));
	EXPECT_STREQ("job not admitted", self->n.msg);
	ASSERT_EQ(-ENOENT, lend(&self->n, INAGG_CMD_JOB_RECLAIM, 9, 1));
	EXPECT_STREQ("job not admitted", self->n.msg);
	ASSERT_EQ(-ERANGE, lend(&self->n, INAGG_CMD_JOB_LEND, 1, 61));
	EXPECT_STREQ("lend beyond the job's head slots not lent", self->n.msg);
	ASSERT_EQ(0, lend(&self->n, INAGG_CMD_JOB_LEND, 1, 50));
	ASSERT_EQ(-ERANGE, lend(&self->n, INAGG_CMD_JOB_RECLAIM, 1, 51));
	EXPECT_STREQ("reclaim beyond the job's lent slots", self->n.msg);
	ASSERT_EQ(0, lend(&self->n, INAGG_CMD_JOB_RECLAIM, 1, 20));

	ASSERT_EQ(0, get_cap(&self->n, &r));
	EXPECT_EQ(3, r.a[0][INAGG_A_USED_JOBS]);
	EXPECT_EQ(100, r.a[0][INAGG_A_USED_SLOTS]);
	EXPECT_EQ(70, r.a[0][INAGG_A_HEAD_SLOTS]);
	EXPECT_EQ(30, r.a[0][INAGG_A_TAIL_SLOTS]);
	EXPECT_EQ(30, r.a[0][INAGG_A_LENT_SLOTS]);
	ASSERT_EQ(0, get_job(&self->n, 1, &r));
	EXPECT_EQ(60, r.a[0][INAGG_A_JOB_SLOTS]);
	EXPECT_EQ(INAGG_CLASS_INA, r.a[0][INAGG_A_JOB_CLASS]);
	EXPECT_EQ(30, r.a[0][INAGG_A_LENT_SLOTS]);
	ASSERT_EQ(0, get_job(&self->n, 2, &r));
	EXPECT_EQ(INAGG_CLASS_INA, r.a[0][INAGG_A_JOB_CLASS]);
	ASSERT_EQ(0, get_job(&self->n, 3, &r));
	EXPECT_EQ(0, r.a[0][INAGG_A_JOB_SLOTS]);
	EXPECT_EQ(INAGG_CLASS_PS, r.a[0][INAGG_A_JOB_CLASS]);
	/* Release returns the head and what it had lent. */
	ASSERT_EQ(0, release(&self->n, 1));
	ASSERT_EQ(0, get_cap(&self->n, &r));
	EXPECT_EQ(10, r.a[0][INAGG_A_HEAD_SLOTS]);
	EXPECT_EQ(0, r.a[0][INAGG_A_LENT_SLOTS]);
	EXPECT_EQ(40, r.a[0][INAGG_A_USED_SLOTS]);
}

static int recv_event(struct mnl_socket *s, struct reply *r)
{
	static char buf[BUFSZ];
	struct nlmsghdr *h = (struct nlmsghdr *)buf;
	int len;

	len = mnl_socket_recvfrom(s, buf, sizeof(buf));
	if (len < 0)
		return -errno;
	for (; mnl_nlmsg_ok(h, len); h = mnl_nlmsg_next(h, &len))
		reply_cb(h, r);
	return 0;
}

TEST_F(nl, events_announce_changes)
{
	struct timeval tv = { .tv_sec = 5 };
	struct reply r = { 0 };
	struct nl lis;
	int fd;

	BEGIN();
	ASSERT_EQ(0, nl_open(&lis));
	ASSERT_EQ(0, mnl_socket_setsockopt(lis.s, NETLINK_ADD_MEMBERSHIP, &lis.events,
					   sizeof(lis.events)));
	fd = mnl_socket_get_fd(lis.s);
	ASSERT_EQ(0, setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)));

	ASSERT_EQ(0, set_cap(&self->n, 4, 100));
	ASSERT_EQ(0, admit(&self->n, 7, 30));
	ASSERT_EQ(-EEXIST, admit(&self->n, 7, 30));	/* no event */
	ASSERT_EQ(0, release(&self->n, 7));
	ASSERT_EQ(0, set_tail(&self->n, 10));
	ASSERT_EQ(-ENOSPC, set_tail(&self->n, 101));	/* no event */
	ASSERT_EQ(0, admit_class(&self->n, 8, INAGG_CLASS_INA, 20));
	ASSERT_EQ(0, lend(&self->n, INAGG_CMD_JOB_LEND, 8, 5));
	ASSERT_EQ(-ERANGE, lend(&self->n, INAGG_CMD_JOB_LEND, 8, 16));	/* no event */
	ASSERT_EQ(0, lend(&self->n, INAGG_CMD_JOB_RECLAIM, 8, 2));
	while (r.n < 7)
		ASSERT_EQ(0, recv_event(lis.s, &r));
	ASSERT_EQ(7, r.n);
	EXPECT_EQ(INAGG_CMD_CAP_SET, r.cmd[0]);
	EXPECT_EQ(4, r.a[0][INAGG_A_MAX_JOBS]);
	EXPECT_EQ(100, r.a[0][INAGG_A_MAX_SLOTS]);
	EXPECT_EQ(INAGG_CMD_JOB_ADMIT, r.cmd[1]);
	EXPECT_EQ(7, r.a[1][INAGG_A_JOB_ID]);
	EXPECT_EQ(30, r.a[1][INAGG_A_JOB_SLOTS]);
	EXPECT_EQ(1, r.a[1][INAGG_A_USED_JOBS]);
	EXPECT_EQ(30, r.a[1][INAGG_A_USED_SLOTS]);
	EXPECT_EQ(INAGG_CMD_JOB_RELEASE, r.cmd[2]);
	EXPECT_EQ(7, r.a[2][INAGG_A_JOB_ID]);
	EXPECT_EQ(0, r.a[2][INAGG_A_USED_JOBS]);
	EXPECT_EQ(INAGG_CMD_TAIL_SET, r.cmd[3]);
	EXPECT_EQ(10, r.a[3][INAGG_A_TAIL_SLOTS]);
	EXPECT_EQ(10, r.a[3][INAGG_A_USED_SLOTS]);
	EXPECT_EQ(0, r.a[3][INAGG_A_JOB_ID]);
	EXPECT_EQ(INAGG_CMD_JOB_ADMIT, r.cmd[4]);
	EXPECT_EQ(INAGG_CLASS_INA, r.a[4][INAGG_A_JOB_CLASS]);
	EXPECT_EQ(20, r.a[4][INAGG_A_HEAD_SLOTS]);
	EXPECT_EQ(INAGG_CMD_JOB_LEND, r.cmd[5]);
	EXPECT_EQ(8, r.a[5][INAGG_A_JOB_ID]);
	EXPECT_EQ(5, r.a[5][INAGG_A_LENT_SLOTS]);	/* the job's, then the ledger's: 5 */
	EXPECT_EQ(INAGG_CMD_JOB_RECLAIM, r.cmd[6]);
	EXPECT_EQ(3, r.a[6][INAGG_A_LENT_SLOTS]);
	EXPECT_EQ(30, r.a[6][INAGG_A_USED_SLOTS]);
	nl_close(&lis);
}

struct dump_acc {
	__u32 n;
	__u32 last;
	bool sorted;
};

static int dump_cb(const struct nlmsghdr *nlh, void *data)
{
	struct dump_acc *d = data;
	struct nlattr *a;

	mnl_attr_for_each(a, nlh, sizeof(struct genlmsghdr)) {
		if (mnl_attr_get_type(a) != INAGG_A_JOB_ID)
			continue;
		if (d->n && mnl_attr_get_u32(a) <= d->last)
			d->sorted = false;
		d->last = mnl_attr_get_u32(a);
		d->n++;
	}
	return MNL_CB_OK;
}

/* A dump of many jobs spans several parts and loses none. */
TEST_F_TIMEOUT(nl, dump_many_jobs, 300)
{
	struct dump_acc d = { .sorted = true };
	const __u32 jobs = 3000;
	char buf[256];
	__u32 i;

	BEGIN();
	ASSERT_EQ(0, set_cap(&self->n, jobs, jobs));
	for (i = 1; i <= jobs; i++)
		ASSERT_EQ(0, admit(&self->n, i * 3, 1));
	ASSERT_EQ(0, nl_talk(&self->n, put(buf, self->n.family, INAGG_CMD_JOB_GET,
					   NLM_F_DUMP), dump_cb, &d));
	EXPECT_EQ(jobs, d.n);
	EXPECT_EQ(jobs * 3, d.last);
	EXPECT_TRUE(d.sorted);
}

/* A change between two parts of a dump is flagged NLM_F_DUMP_INTR. */
TEST_F_TIMEOUT(nl, dump_flags_interruption, 300)
{
	struct dump_acc d = { .sorted = true };
	char buf[BUFSZ];
	struct nl other;
	bool intr = false;
	int len;
	__u32 i;

	BEGIN();
	ASSERT_EQ(0, set_cap(&self->n, 3001, 3001));
	for (i = 1; i <= 3000; i++)
		ASSERT_EQ(0, admit(&self->n, i, 1));
	ASSERT_EQ(0, nl_open(&other));
	/* Small reads: take the first part, change the ledger, read on. */
	ASSERT_EQ(0, nl_send(&self->n, put(buf, self->n.family, INAGG_CMD_JOB_GET,
					   NLM_F_DUMP)));
	len = recv(mnl_socket_get_fd(self->n.s), buf, 4096, 0);
	ASSERT_LT(0, len);
	ASSERT_EQ(0, admit(&other, 100000, 1));
	ASSERT_EQ(0, nl_recv(&self->n, dump_cb, &d, &intr));
	EXPECT_TRUE(intr);
	nl_close(&other);
}

TEST_F(nl, proc_view)
{
	char text[4096];
	struct stat st;
	int fd;

	BEGIN();
	ASSERT_EQ(0, set_cap(&self->n, 5, 64));
	ASSERT_EQ(0, admit(&self->n, 12, 8));
	ASSERT_EQ(0, admit(&self->n, 3, 2));
	ASSERT_EQ(0, set_tail(&self->n, 6));
	ASSERT_EQ(0, admit_class(&self->n, 20, INAGG_CLASS_PS, 0));
	ASSERT_EQ(0, lend(&self->n, INAGG_CMD_JOB_LEND, 12, 3));
	ASSERT_LT(0, read_file("/proc/net/inagg", text, sizeof(text)));
	TH_LOG("%s", text);
	EXPECT_STREQ("jobs 3/5 slots 16/64 head 10 tail 6 lent 3\n"
		     "job 3 ina head 2 lent 0\n"
		     "job 12 ina head 8 lent 3\n"
		     "job 20 ps head 0 lent 0\n", text);
	/* Read-only, even for root. */
	ASSERT_EQ(0, stat("/proc/net/inagg", &st));
	EXPECT_EQ(0444, st.st_mode & 0777);
	fd = open("/proc/net/inagg", O_WRONLY);
	if (fd >= 0) {
		EXPECT_GT(0, write(fd, "x", 1));
		close(fd);
	}
}

static int child_admit(int flags)
{
	struct nl n;
	int ret;

	if (flags && unshare(flags))
		return -100;
	ret = nl_open(&n);
	if (ret)
		return ret;
	ret = admit(&n, 1, 1);
	nl_close(&n);
	return ret;
}

static int run_child(int flags)
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -1000;
	if (pid == 0)
		_exit(-child_admit(flags) & 0xff);
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1000;
	return -WEXITSTATUS(status);
}

/*
 * CAP_NET_ADMIN counts in the user namespace that owns the network
 * namespace: full rights in a new user namespace do not reach ours,
 * but they do reach a network namespace created inside it.
 */
TEST_F(nl, rights_follow_user_namespace)
{
	BEGIN();
	EXPECT_EQ(-EPERM, run_child(CLONE_NEWUSER));
	EXPECT_EQ(0, run_child(CLONE_NEWUSER | CLONE_NEWNET));
	EXPECT_EQ(0, run_child(0));
}

TEST_HARNESS_MAIN
