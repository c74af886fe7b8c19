// SPDX-License-Identifier: GPL-2.0
/*
 * inagg.ko's life: unloading with jobs admitted in several namespaces frees
 * everything, loading gives every namespace a new ledger, load/unload
 * repeated (also under traffic) leaves the kernel clean, module parameters.
 * Needs the module file in $INAGG_KO (the VM sets it) and leaves the module
 * loaded; skipped elsewhere.
 *
 * "Clean" is read from the kernel log: kmem_cache_destroy() of the module's
 * job cache reports any object left behind ("Objects remaining"), and
 * nothing may WARN or BUG.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* The harness compares signed and unsigned values in its macros. */
#pragma GCC diagnostic ignored "-Wsign-compare"
#pragma GCC diagnostic ignored "-Wmisleading-indentation"
#include "kselftest_harness.h"
#include "skip.h"
#include "nlhelp.h"

static const char *ko_path(void)
{
	const char *ko = getenv("INAGG_KO");

	return ko && access(ko, R_OK) == 0 ? ko : NULL;
}

static bool loaded(void)
{
	return access("/sys/module/inagg", F_OK) == 0;
}

static int load(const char *params)
{
	int fd, ret;

	fd = open(ko_path(), O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ret = syscall(SYS_finit_module, fd, params, 0);
	ret = ret ? -errno : 0;
	close(fd);
	return ret;
}

/* A dump in progress holds the module: try again a little later. */
static int unload(void)
{
	int i, ret = 0;

	for (i = 0; i < 500; i++) {
		ret = syscall(SYS_delete_module, "inagg", O_NONBLOCK) ? -errno : 0;
		if (ret != -EAGAIN && ret != -EWOULDBLOCK && ret != -EBUSY)
			break;
		usleep(10000);
	}
	return ret;
}

/* The kernel log from now on. */
static int kmsg_open(void)
{
	int fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);

	if (fd >= 0)
		lseek(fd, 0, SEEK_END);
	return fd;
}

/* Counts the log records since kmsg_open() that tell of leaks or bugs. */
static int kmsg_bad(struct __test_metadata *_metadata, int fd)
{
	static const char *const bad[] = {
		"Objects remaining", "kmem_cache_destroy", "BUG", "WARNING",
		"Call Trace", "inagg: ",
	};
	char rec[2048];
	int n = 0;
	ssize_t len;
	size_t i;

	while ((len = read(fd, rec, sizeof(rec) - 1)) > 0 || (len < 0 && errno == EPIPE)) {
		if (len <= 0)
			continue;
		rec[len] = 0;
		/* The taint notices at load time are expected. */
		if (strstr(rec, "taints kernel") || strstr(rec, "verification failed"))
			continue;
		for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			if (strstr(rec, bad[i])) {
				TH_LOG("kernel: %s", rec);
				n++;
				break;
			}
		}
	}
	return n;
}

FIXTURE(mod) {
	int kmsg;
};

FIXTURE_SETUP(mod)
{
	const char *e = getenv("INAGG_EXPECT_BACKEND");

	if (!ko_path()) {
		if (e && !strcmp(e, "kernel"))
			ASSERT_NE(NULL, ko_path());
		SETUP_SKIP("no module file in $INAGG_KO");
	}
	if (!loaded())
		ASSERT_EQ(0, load(""));
	self->kmsg = kmsg_open();
	ASSERT_LE(0, self->kmsg);
}

FIXTURE_TEARDOWN(mod)
{
	if (_metadata->skip)
		return;
	/* Later tests and programs expect the module. */
	if (!loaded())
		EXPECT_EQ(0, load(""));
	close(self->kmsg);
}

#define BEGIN() do { if (_metadata->skip) return; } while (0)

/* A child in a namespace of its own with jobs admitted, waiting to be killed. */
static pid_t netns_holder(int njobs)
{
	int p[2];
	pid_t pid;
	char c;

	if (pipe(p))
		return -1;
	pid = fork();
	if (pid == 0) {
		struct nl n;
		int i;

		close(p[0]);
		if (unshare(CLONE_NEWNET) || nl_open(&n))
			_exit(1);
		for (i = 1; i <= njobs; i++)
			if (admit(&n, i, i))
				_exit(2);
		/* The whole memory model in use: tail, PS job, lent slots. */
		if (set_tail(&n, 10) || admit_class(&n, 100, INAGG_CLASS_PS, 0) ||
		    lend(&n, INAGG_CMD_JOB_LEND, njobs, 1))
			_exit(2);
		nl_close(&n);
		if (write(p[1], "r", 1) != 1)
			_exit(3);
		pause();
		_exit(0);
	}
	close(p[1]);
	if (pid < 0 || read(p[0], &c, 1) != 1) {
		if (pid > 0)
			kill(pid, SIGKILL);
		pid = -1;
	}
	close(p[0]);
	return pid;
}

TEST_F_TIMEOUT(mod, unload_with_jobs_admitted, 120)
{
	pid_t holders[2];
	char path[64], text[4096];
	struct nl n;
	int i;

	BEGIN();
	ASSERT_EQ(0, nl_open(&n));
	ASSERT_EQ(0, set_cap(&n, 100, 10000));
	for (i = 1; i <= 10; i++)
		ASSERT_EQ(0, admit(&n, 1000 + i, 3));
	nl_close(&n);
	for (i = 0; i < 2; i++) {
		holders[i] = netns_holder(5);
		ASSERT_LT(0, holders[i]);
	}

	ASSERT_EQ(0, unload());
	EXPECT_FALSE(loaded());
	EXPECT_EQ(-ENOENT, read_file("/proc/net/inagg", text, sizeof(text)));
	snprintf(path, sizeof(path), "/proc/%d/net/inagg", holders[0]);
	EXPECT_EQ(-ENOENT, read_file(path, text, sizeof(text)));
	EXPECT_EQ(-ENOENT, nl_open(&n));
	nl_close(&n);
	EXPECT_EQ(0, kmsg_bad(_metadata, self->kmsg));

	/* Loaded again: every namespace, old or new, has a new ledger. */
	ASSERT_EQ(0, load(""));
	ASSERT_LT(0, read_file(path, text, sizeof(text)));
	EXPECT_STREQ("jobs 0/16 slots 0/4096 head 0 tail 0 lent 0\n", text);
	ASSERT_LT(0, read_file("/proc/net/inagg", text, sizeof(text)));
	EXPECT_EQ(0, strncmp(text, "jobs 0/16 slots 0/4096 head 0 tail 0 lent 0\n", 44));
	EXPECT_NE(NULL, strstr(text, " jobs 0\n"));
	for (i = 0; i < 2; i++) {
		kill(holders[i], SIGKILL);
		waitpid(holders[i], NULL, 0);
	}
	EXPECT_EQ(0, kmsg_bad(_metadata, self->kmsg));
}

TEST_F_TIMEOUT(mod, load_unload_repeated, 300)
{
	struct reply r;
	struct nl n;
	int i;

	BEGIN();
	for (i = 0; i < 20; i++) {
		if (loaded())
			ASSERT_EQ(0, unload());
		ASSERT_EQ(0, load(""));
		ASSERT_EQ(0, nl_open(&n));
		ASSERT_EQ(0, admit(&n, 1, 2));	/* a leftover would say -EEXIST */
		ASSERT_EQ(0, admit(&n, 2, 3));
		ASSERT_EQ(0, get_cap(&n, &r));
		EXPECT_EQ(2, r.a[0][INAGG_A_USED_JOBS]);
		EXPECT_EQ(5, r.a[0][INAGG_A_USED_SLOTS]);
		nl_close(&n);
	}
	ASSERT_EQ(0, unload());
	EXPECT_EQ(0, kmsg_bad(_metadata, self->kmsg));
}

TEST_F(mod, parameters_set_new_ledgers)
{
	struct reply r;
	struct nl n;

	BEGIN();
	ASSERT_EQ(0, unload());
	ASSERT_EQ(0, load("default_max_jobs=3 default_max_slots=7"));
	ASSERT_EQ(0, nl_open(&n));
	ASSERT_EQ(0, get_cap(&n, &r));
	EXPECT_EQ(3, r.a[0][INAGG_A_MAX_JOBS]);
	EXPECT_EQ(7, r.a[0][INAGG_A_MAX_SLOTS]);
	nl_close(&n);
	ASSERT_EQ(0, unload());

	/* Out-of-range defaults are clamped to the ABI's limits. */
	ASSERT_EQ(0, load("default_max_jobs=4000000000"));
	ASSERT_EQ(0, nl_open(&n));
	ASSERT_EQ(0, get_cap(&n, &r));
	EXPECT_EQ(INAGG_JOBS_LIMIT, r.a[0][INAGG_A_MAX_JOBS]);
	nl_close(&n);
	ASSERT_EQ(0, unload());
	ASSERT_EQ(0, load(""));
}

/* Clients admit, release and dump in new namespaces while the module comes and goes. */
static void churn(int me, time_t until)
{
	char buf[256];
	struct nl n;
	__u32 id = 1;

	while (time(NULL) < until) {
		if (nl_open(&n)) {
			nl_close(&n);
			usleep(1000);
			continue;
		}
		admit(&n, id, 1);
		admit(&n, id + 1, 1);
		admit_class(&n, id + 2, INAGG_CLASS_PS, 0);
		set_tail(&n, id % 7);
		lend(&n, INAGG_CMD_JOB_LEND, id, 1);
		nl_talk(&n, put(buf, n.family, INAGG_CMD_JOB_GET, NLM_F_DUMP), NULL, NULL);
		if (me)
			set_cap(&n, 8, 64);
		id += 3;
		nl_close(&n);
	}
}

TEST_F_TIMEOUT(mod, unload_under_traffic, 300)
{
	pid_t pids[2];
	time_t until = time(NULL) + 8;
	int i, status, cycles = 0;

	BEGIN();
	for (i = 0; i < 2; i++) {
		pids[i] = fork();
		ASSERT_LE(0, pids[i]);
		if (pids[i] == 0) {
			if (i && unshare(CLONE_NEWNET))
				_exit(1);
			churn(i, until);
			_exit(0);
		}
	}
	while (time(NULL) < until) {
		ASSERT_EQ(0, unload());
		usleep(20000);
		ASSERT_EQ(0, load(""));
		usleep(20000);
		cycles++;
	}
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(pids[i], waitpid(pids[i], &status, 0));
		EXPECT_EQ(0, status);
	}
	TH_LOG("%d unload/load cycles", cycles);
	EXPECT_LT(2, cycles);
	ASSERT_EQ(0, unload());
	EXPECT_EQ(0, kmsg_bad(_metadata, self->kmsg));
}

TEST_HARNESS_MAIN
