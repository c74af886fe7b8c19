// SPDX-License-Identifier: GPL-2.0
/*
 * Ledger conformance: the same cases through libinagg's ledger client
 * against both backends, the kernel module (variant "kernel") and the
 * user-space fallback (variant "user"). Each test runs in a network
 * namespace of its own, so it starts from a new ledger.
 *
 * On a host without the module the kernel variant is skipped; in the VM
 * (INAGG_EXPECT_BACKEND=kernel) a missing module is a failure.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/capability.h>

/* The harness compares signed and unsigned values in its macros. */
#pragma GCC diagnostic ignored "-Wsign-compare"
#pragma GCC diagnostic ignored "-Wmisleading-indentation"
#include "kselftest_harness.h"
#include "skip.h"
#include "err.h"
#include "ledger.h"

/* The reason of this thread's last ledger call: the caller's buffer (ledger.h). */
static __thread char why[IA_ERRLEN];
#define WHY why, sizeof(why)

#ifndef SO_NETNS_COOKIE
#define SO_NETNS_COOKIE 71
#endif

FIXTURE(ledger) {
	struct ia_ledger *l;
	char dir[64];
};

FIXTURE_VARIANT(ledger) {
	enum ia_ledger_backend backend;
};

FIXTURE_VARIANT_ADD(ledger, kernel) {
	.backend = IA_LEDGER_KERNEL,
};

FIXTURE_VARIANT_ADD(ledger, user) {
	.backend = IA_LEDGER_USER,
};

FIXTURE_SETUP(ledger)
{
	const char *expect = getenv("INAGG_EXPECT_BACKEND");
	int ret;

	/* A namespace of our own: a new ledger, gone when the test ends. */
	ASSERT_EQ(0, unshare(CLONE_NEWNET));
	strcpy(self->dir, "/tmp/ia-ledger-XXXXXX");
	ASSERT_NE(NULL, mkdtemp(self->dir));
	ASSERT_EQ(0, setenv("INAGG_LEDGER_DIR", self->dir, 1));
	unsetenv("INAGG_LEDGER");

	ret = ia_ledger_open(&self->l, variant->backend, NULL);
	if (ret == -ENOENT && variant->backend == IA_LEDGER_KERNEL &&
	    !(expect && !strcmp(expect, "kernel")))
		SETUP_SKIP("inagg.ko is not loaded");
	ASSERT_EQ(0, ret);
	ASSERT_EQ(variant->backend, ia_ledger_backend(self->l));
}

FIXTURE_TEARDOWN(ledger)
{
	char cmd[128];

	ia_ledger_close(self->l);
	if (self->dir[0]) {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", self->dir);
		if (system(cmd))
			TH_LOG("cannot remove %s", self->dir);
	}
}

/* The body of a test does nothing when setup skipped it. */
#define BEGIN() do { if (_metadata->skip) return; } while (0)

#define ASSERT_CAP(l, mj, ms, uj, us) do {				\
	struct ia_ledger_cap __c;					\
	ASSERT_EQ(0, ia_ledger_get(l, &__c, WHY));			\
	EXPECT_EQ(mj, __c.max_jobs);					\
	EXPECT_EQ(ms, __c.max_slots);					\
	EXPECT_EQ(uj, __c.used_jobs);					\
	EXPECT_EQ(us, __c.used_slots);					\
} while (0)

/* Heads, tail and lent slots; used slots must be heads plus tail. */
#define ASSERT_MEM(l, head, tail, lent) do {				\
	struct ia_ledger_cap __c;					\
	ASSERT_EQ(0, ia_ledger_get(l, &__c, WHY));				\
	EXPECT_EQ(head, __c.head_slots);				\
	EXPECT_EQ(tail, __c.tail_slots);				\
	EXPECT_EQ(lent, __c.lent_slots);				\
	EXPECT_EQ(__c.head_slots + __c.tail_slots, __c.used_slots);	\
} while (0)

#define ASSERT_JOB(l, id, class_, head, lent_) do {			\
	struct ia_ledger_job __j;					\
	ASSERT_EQ(0, ia_ledger_job(l, id, &__j, WHY));			\
	EXPECT_EQ(class_, __j.class);					\
	EXPECT_EQ(head, __j.slots);					\
	EXPECT_EQ(lent_, __j.lent);					\
} while (0)

#define ASSERT_MSG(l, text) do {					\
	const char *__m = why;			\
	if (!strstr(__m, text))						\
		TH_LOG("message '%s' lacks '%s'", __m, text);		\
	ASSERT_NE(NULL, strstr(__m, text));				\
} while (0)

/* The auto choice takes the module exactly when it is loaded. */
TEST(auto_backend)
{
	const char *expect = getenv("INAGG_EXPECT_BACKEND");
	struct ia_ledger *l;
	bool loaded = access("/sys/module/inagg", F_OK) == 0;
	char dir[] = "/tmp/ia-ledger-XXXXXX", cmd[64];

	ASSERT_NE(NULL, mkdtemp(dir));
	setenv("INAGG_LEDGER_DIR", dir, 1);
	unsetenv("INAGG_LEDGER");
	ASSERT_EQ(0, ia_ledger_open(&l, IA_LEDGER_AUTO, NULL));
	EXPECT_EQ(loaded ? IA_LEDGER_KERNEL : IA_LEDGER_USER, ia_ledger_backend(l));
	if (expect)
		EXPECT_STREQ(expect, ia_ledger_backend_name(ia_ledger_backend(l)));
	ia_ledger_close(l);

	/* INAGG_LEDGER=user forces the fallback. */
	setenv("INAGG_LEDGER", "user", 1);
	ASSERT_EQ(0, ia_ledger_open(&l, IA_LEDGER_AUTO, NULL));
	EXPECT_EQ(IA_LEDGER_USER, ia_ledger_backend(l));
	ia_ledger_close(l);
	unsetenv("INAGG_LEDGER");
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	ASSERT_EQ(0, system(cmd));
}

TEST_F(ledger, defaults)
{
	struct ia_ledger_job *jobs;
	size_t n;

	BEGIN();
	ASSERT_CAP(self->l, INAGG_DEFAULT_MAX_JOBS, INAGG_DEFAULT_MAX_SLOTS, 0, 0);
	ASSERT_EQ(0, ia_ledger_list(self->l, &jobs, &n, WHY));
	EXPECT_EQ(0, n);
	free(jobs);
}

TEST_F(ledger, round_trip)
{
	struct ia_ledger_job *jobs, job;
	size_t n;

	BEGIN();
	ASSERT_EQ(0, ia_ledger_admit(self->l, 7, 10, WHY));
	ASSERT_EQ(0, ia_ledger_admit(self->l, 3, 20, WHY));
	ASSERT_EQ(0, ia_ledger_admit(self->l, 4000000000U, 1, WHY));
	ASSERT_CAP(self->l, 16, 4096, 3, 31);

	ASSERT_EQ(0, ia_ledger_list(self->l, &jobs, &n, WHY));
	ASSERT_EQ(3, n);
	EXPECT_EQ(3, jobs[0].id);
	EXPECT_EQ(20, jobs[0].slots);
	EXPECT_EQ(7, jobs[1].id);
	EXPECT_EQ(10, jobs[1].slots);
	EXPECT_EQ(4000000000U, jobs[2].id);
	EXPECT_EQ(1, jobs[2].slots);
	free(jobs);

	ASSERT_EQ(0, ia_ledger_job(self->l, 7, &job, WHY));
	EXPECT_EQ(7, job.id);
	EXPECT_EQ(10, job.slots);

	ASSERT_EQ(0, ia_ledger_release(self->l, 7, WHY));
	ASSERT_CAP(self->l, 16, 4096, 2, 21);
	ASSERT_EQ(-ENOENT, ia_ledger_job(self->l, 7, &job, WHY));
	ASSERT_EQ(0, ia_ledger_list(self->l, &jobs, &n, WHY));
	ASSERT_EQ(2, n);
	EXPECT_EQ(3, jobs[0].id);
	EXPECT_EQ(4000000000U, jobs[1].id);
	free(jobs);

	ASSERT_EQ(0, ia_ledger_release(self->l, 3, WHY));
	ASSERT_EQ(0, ia_ledger_release(self->l, 4000000000U, WHY));
	ASSERT_CAP(self->l, 16, 4096, 0, 0);
	/* Released ids can be admitted again. */
	ASSERT_EQ(0, ia_ledger_admit(self->l, 7, 5, WHY));
	ASSERT_CAP(self->l, 16, 4096, 1, 5);
}

TEST_F(ledger, job_limit)
{
	BEGIN();
	ASSERT_EQ(0, ia_ledger_set(self->l, 2, IA_LEDGER_KEEP, WHY));
	ASSERT_EQ(0, ia_ledger_admit(self->l, 1, 1, WHY));
	ASSERT_EQ(0, ia_ledger_admit(self->l, 2, 1, WHY));
	ASSERT_EQ(-ENOSPC, ia_ledger_admit(self->l, 3, 1, WHY));
	ASSERT_MSG(self->l, "max_jobs");
	ASSERT_CAP(self->l, 2, 4096, 2, 2);
	ASSERT_EQ(0, ia_ledger_release(self->l, 1, WHY));
	ASSERT_EQ(0, ia_ledger_admit(self->l, 3, 1, WHY));
	/* Zero jobs: nothing is admitted. */
	ASSERT_EQ(0, ia_ledger_release(self->l, 2, WHY));
	ASSERT_EQ(0, ia_ledger_release(self->l, 3, WHY));
	ASSERT_EQ(0, ia_ledger_set(self->l, 0, IA_LEDGER_KEEP, WHY));
	ASSERT_EQ(-ENOSPC, ia_ledger_admit(self->l, 4, 1, WHY));
	ASSERT_MSG(self->l, "max_jobs");
}

TEST_F(ledger, slot_limit)
{
	BEGIN();
	ASSERT_EQ(0, ia_ledger_set(self->l, IA_LEDGER_KEEP, 100, WHY));
	ASSERT_EQ(0, ia_ledger_admit(self->l, 1, 60, WHY));
	ASSERT_EQ(0, ia_ledger_admit(self->l, 2, 40, WHY));	/* exactly full */
	ASSERT_EQ(-ENOSPC, ia_ledger_admit(self->l, 3, 1, WHY));
	ASSERT_MSG(self->l, "max_slots");
	ASSERT_CAP(self->l, 16, 100, 2, 100);
	ASSERT_EQ(0, ia_ledger_release(self->l, 2, WHY));
	ASSERT_EQ(-ENOSPC, ia_ledger_admit(self->l, 3, 41, WHY));
	ASSERT_MSG(self->l, "max_slots");
	ASSERT_EQ(0, ia_ledger_admit(self->l, 3, 40, WHY));
	ASSERT_CAP(self->l, 16, 100, 2, 100);
}

TEST_F(ledger, already_admitted)
{
	BEGIN();
	ASSERT_EQ(0, ia_ledger_admit(self->l, 5, 3, WHY));
	ASSERT_EQ(-EEXIST, ia_ledger_admit(self->l, 5, 3, WHY));
	ASSERT_MSG(self->l, "already admitted");
	ASSERT_EQ(-EEXIST, ia_ledger_admit(self->l, 5, 1, WHY));
	ASSERT_CAP(self->l, 16, 4096, 1, 3);
}

TEST_F(ledger, release_unknown)
{
	struct ia_ledger_job job;

	BEGIN();
	ASSERT_EQ(-ENOENT, ia_ledger_release(self->l, 9, WHY));
	ASSERT_MSG(self->l, "not admitted");
	ASSERT_EQ(-ENOENT, ia_ledger_job(self->l, 9, &job, WHY));
	ASSERT_EQ(0, ia_ledger_admit(self->l, 9, 1, WHY));
	ASSERT_EQ(0, ia_ledger_release(self->l, 9, WHY));
	ASSERT_EQ(-ENOENT, ia_ledger_release(self->l, 9, WHY));
	ASSERT_CAP(self->l, 16, 4096, 0, 0);
}

TEST_F(ledger, shrink_below_admitted)
{
	BEGIN();
	ASSERT_EQ(0, ia_ledger_admit(self->l, 1, 10, WHY));
	ASSERT_EQ(0, ia_ledger_admit(self->l, 2, 10, WHY));
	ASSERT_EQ(0, ia_ledger_admit(self->l, 3, 10, WHY));
	ASSERT_EQ(-EBUSY, ia_ledger_set(self->l, 2, IA_LEDGER_KEEP, WHY));
	ASSERT_MSG(self->l, "max_jobs");
	ASSERT_EQ(-EBUSY, ia_ledger_set(self->l, IA_LEDGER_KEEP, 29, WHY));
	ASSERT_MSG(self->l, "max_slots");
	/* A refused set changes neither limit. */
	ASSERT_EQ(-EBUSY, ia_ledger_set(self->l, 100, 29, WHY));
	ASSERT_CAP(self->l, 16, 4096, 3, 30);
	/* Down to exactly what is admitted is fine. */
	ASSERT_EQ(0, ia_ledger_set(self->l, 3, 30, WHY));
	ASSERT_CAP(self->l, 3, 30, 3, 30);
	ASSERT_EQ(-ENOSPC, ia_ledger_admit(self->l, 4, 1, WHY));
	ASSERT_EQ(0, ia_ledger_set(self->l, 4, 31, WHY));
	ASSERT_EQ(0, ia_ledger_admit(self->l, 4, 1, WHY));
}

TEST_F(ledger, bad_values)
{
	BEGIN();
	ASSERT_EQ(-EINVAL, ia_ledger_set(self->l, IA_LEDGER_KEEP, IA_LEDGER_KEEP, WHY));
	ASSERT_EQ(-ERANGE, ia_ledger_set(self->l, INAGG_JOBS_LIMIT + 1, IA_LEDGER_KEEP, WHY));
	ASSERT_EQ(-ERANGE, ia_ledger_set(self->l, IA_LEDGER_KEEP, INAGG_SLOTS_LIMIT + 1, WHY));
	ASSERT_EQ(-ERANGE, ia_ledger_set(self->l, 1LL << 32, IA_LEDGER_KEEP, WHY));
	ASSERT_EQ(-ERANGE, ia_ledger_admit(self->l, 0, 1, WHY));
	ASSERT_EQ(-ERANGE, ia_ledger_admit(self->l, 1, 0, WHY));
	ASSERT_EQ(-ERANGE, ia_ledger_admit(self->l, 1, INAGG_SLOTS_LIMIT + 1, WHY));
	ASSERT_EQ(-ERANGE, ia_ledger_release(self->l, 0, WHY));
	ASSERT_CAP(self->l, 16, 4096, 0, 0);
	/* The largest values are accepted. */
	ASSERT_EQ(0, ia_ledger_set(self->l, INAGG_JOBS_LIMIT, INAGG_SLOTS_LIMIT, WHY));
	ASSERT_EQ(0, ia_ledger_admit(self->l, UINT32_MAX, INAGG_SLOTS_LIMIT, WHY));
	ASSERT_CAP(self->l, INAGG_JOBS_LIMIT, INAGG_SLOTS_LIMIT, 1, INAGG_SLOTS_LIMIT);
}

/* The old request (no class) admits an INA job with that head. */
TEST_F(ledger, old_admit_is_ina)
{
	BEGIN();
	ASSERT_EQ(0, ia_ledger_admit(self->l, 5, 7, WHY));
	ASSERT_JOB(self->l, 5, INAGG_CLASS_INA, 7, 0);
	ASSERT_MEM(self->l, 7, 0, 0);
}

/* Heads and tail share the slots; PS jobs take none; lent slots come back. */
TEST_F(ledger, memory_model)
{
	struct ia_ledger_job *jobs;
	size_t n;

	BEGIN();
	ASSERT_EQ(0, ia_ledger_set(self->l, 8, 100, WHY));
	ASSERT_EQ(0, ia_ledger_set_tail(self->l, 30, WHY));
	ASSERT_MEM(self->l, 0, 30, 0);
	ASSERT_CAP(self->l, 8, 100, 0, 30);
	ASSERT_EQ(0, ia_ledger_admit_class(self->l, 1, INAGG_CLASS_INA, 60, WHY));
	/* 10 slots left: the tail is not a head's to take. */
	ASSERT_EQ(-ENOSPC, ia_ledger_admit_class(self->l, 2, INAGG_CLASS_INA, 11, WHY));
	ASSERT_MSG(self->l, "slot limit reached (max_slots)");
	ASSERT_EQ(0, ia_ledger_admit_class(self->l, 2, INAGG_CLASS_INA, 10, WHY));
	ASSERT_CAP(self->l, 8, 100, 2, 100);
	/* Full, but a PS job needs no slots. */
	ASSERT_EQ(0, ia_ledger_admit_class(self->l, 3, INAGG_CLASS_PS, 0, WHY));
	ASSERT_JOB(self->l, 3, INAGG_CLASS_PS, 0, 0);
	ASSERT_CAP(self->l, 8, 100, 3, 100);

	/* The tail cannot grow into the heads; it may shrink and regrow. */
	ASSERT_EQ(-ENOSPC, ia_ledger_set_tail(self->l, 31, WHY));
	ASSERT_MSG(self->l, "tail beyond the slots the heads leave (max_slots)");
	ASSERT_EQ(0, ia_ledger_set_tail(self->l, 0, WHY));
	ASSERT_EQ(0, ia_ledger_set_tail(self->l, 30, WHY));
	/* Nor can the switch shrink below heads plus tail. */
	ASSERT_EQ(-EBUSY, ia_ledger_set(self->l, IA_LEDGER_KEEP, 99, WHY));
	ASSERT_MSG(self->l, "max_slots below the slots admitted");
	ASSERT_EQ(0, ia_ledger_set(self->l, IA_LEDGER_KEEP, 100, WHY));

	/* Lending and reclaiming stay within the head. */
	ASSERT_EQ(-ERANGE, ia_ledger_lend(self->l, 1, 61, WHY));
	ASSERT_MSG(self->l, "lend beyond the job's head slots not lent");
	ASSERT_EQ(0, ia_ledger_lend(self->l, 1, 40, WHY));
	ASSERT_EQ(-ERANGE, ia_ledger_lend(self->l, 1, 21, WHY));
	ASSERT_EQ(0, ia_ledger_lend(self->l, 1, 20, WHY));
	ASSERT_EQ(0, ia_ledger_lend(self->l, 2, 4, WHY));
	ASSERT_JOB(self->l, 1, INAGG_CLASS_INA, 60, 60);
	ASSERT_MEM(self->l, 70, 30, 64);
	ASSERT_EQ(-ERANGE, ia_ledger_reclaim(self->l, 1, 61, WHY));
	ASSERT_MSG(self->l, "reclaim beyond the job's lent slots");
	ASSERT_EQ(0, ia_ledger_reclaim(self->l, 1, 25, WHY));
	ASSERT_JOB(self->l, 1, INAGG_CLASS_INA, 60, 35);
	ASSERT_MEM(self->l, 70, 30, 39);
	/* Lent slots are still the head's: no room for another head. */
	ASSERT_EQ(-ENOSPC, ia_ledger_admit_class(self->l, 4, INAGG_CLASS_INA, 1, WHY));

	/* A PS job has nothing to lend; an unknown job nothing at all. */
	ASSERT_EQ(-EINVAL, ia_ledger_lend(self->l, 3, 1, WHY));
	ASSERT_MSG(self->l, "a PS job holds no head slots");
	ASSERT_EQ(-EINVAL, ia_ledger_reclaim(self->l, 3, 1, WHY));
	ASSERT_MSG(self->l, "a PS job holds no head slots");
	ASSERT_EQ(-ENOENT, ia_ledger_lend(self->l, 9, 1, WHY));
	ASSERT_MSG(self->l, "job not admitted");
	ASSERT_EQ(-ENOENT, ia_ledger_reclaim(self->l, 9, 1, WHY));
	ASSERT_MSG(self->l, "job not admitted");

	ASSERT_EQ(0, ia_ledger_list(self->l, &jobs, &n, WHY));
	ASSERT_EQ(3, n);
	EXPECT_EQ(INAGG_CLASS_INA, jobs[0].class);
	EXPECT_EQ(35, jobs[0].lent);
	EXPECT_EQ(4, jobs[1].lent);
	EXPECT_EQ(INAGG_CLASS_PS, jobs[2].class);
	free(jobs);

	/* Releasing a job returns its head and what it had lent. */
	ASSERT_EQ(0, ia_ledger_release(self->l, 1, WHY));
	ASSERT_MEM(self->l, 10, 30, 4);
	ASSERT_CAP(self->l, 8, 100, 2, 40);
	ASSERT_EQ(0, ia_ledger_release(self->l, 2, WHY));
	ASSERT_EQ(0, ia_ledger_release(self->l, 3, WHY));
	ASSERT_MEM(self->l, 0, 30, 0);
	/* The job limit counts PS jobs too. */
	ASSERT_EQ(0, ia_ledger_set(self->l, 1, IA_LEDGER_KEEP, WHY));
	ASSERT_EQ(0, ia_ledger_admit_class(self->l, 5, INAGG_CLASS_PS, 0, WHY));
	ASSERT_EQ(-ENOSPC, ia_ledger_admit_class(self->l, 6, INAGG_CLASS_PS, 0, WHY));
	ASSERT_MSG(self->l, "job limit reached (max_jobs)");
}

TEST_F(ledger, memory_bad_values)
{
	BEGIN();
	ASSERT_EQ(-ERANGE, ia_ledger_admit_class(self->l, 1, INAGG_CLASS_UNSPEC, 1, WHY));
	ASSERT_EQ(-ERANGE, ia_ledger_admit_class(self->l, 1, INAGG_CLASS_MAX + 1, 1, WHY));
	ASSERT_EQ(-ERANGE, ia_ledger_admit_class(self->l, 1, INAGG_CLASS_INA, 0, WHY));
	ASSERT_EQ(-ERANGE, ia_ledger_admit_class(self->l, 1, INAGG_CLASS_PS,
						 INAGG_SLOTS_LIMIT + 1, WHY));
	ASSERT_EQ(-EINVAL, ia_ledger_admit_class(self->l, 1, INAGG_CLASS_PS, 4, WHY));
	ASSERT_MSG(self->l, "a PS job holds no head slots");
	ASSERT_EQ(-ERANGE, ia_ledger_set_tail(self->l, INAGG_SLOTS_LIMIT + 1, WHY));
	/* Range comes before existence, as in the module's policy. */
	ASSERT_EQ(-ERANGE, ia_ledger_lend(self->l, 1, 0, WHY));
	ASSERT_EQ(-ERANGE, ia_ledger_reclaim(self->l, 1, INAGG_SLOTS_LIMIT + 1, WHY));
	ASSERT_EQ(-ERANGE, ia_ledger_lend(self->l, 0, 1, WHY));
	ASSERT_CAP(self->l, 16, 4096, 0, 0);
	ASSERT_MEM(self->l, 0, 0, 0);
	/* The largest tail is the whole switch. */
	ASSERT_EQ(0, ia_ledger_set(self->l, IA_LEDGER_KEEP, INAGG_SLOTS_LIMIT, WHY));
	ASSERT_EQ(0, ia_ledger_set_tail(self->l, INAGG_SLOTS_LIMIT, WHY));
	ASSERT_EQ(-ENOSPC, ia_ledger_admit_class(self->l, 1, INAGG_CLASS_INA, 1, WHY));
}

/* The fallback still reads a version 1 state file: its jobs are INA jobs. */
TEST_F(ledger, reads_version_1_state)
{
	unsigned long long cookie;
	socklen_t len = sizeof(cookie);
	char boot[64] = "", path[128];
	FILE *f;
	int fd;

	BEGIN();
	if (variant->backend != IA_LEDGER_USER)
		SKIP(return, "the user-space ledger's state file");
	fd = socket(AF_UNIX, SOCK_DGRAM, 0);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, getsockopt(fd, SOL_SOCKET, SO_NETNS_COOKIE, &cookie, &len));
	close(fd);
	f = fopen("/proc/sys/kernel/random/boot_id", "r");
	ASSERT_NE(NULL, f);
	ASSERT_NE(NULL, fgets(boot, sizeof(boot), f));
	fclose(f);
	boot[strcspn(boot, "\n")] = 0;
	snprintf(path, sizeof(path), "%s/ledger-%llx", self->dir, cookie);
	f = fopen(path, "w");
	ASSERT_NE(NULL, f);
	fprintf(f, "inagg-ledger 1\nboot %s\nmax_jobs 4\nmax_slots 40\njob 3 10\njob 8 5\n",
		boot);
	ASSERT_EQ(0, fclose(f));

	ASSERT_CAP(self->l, 4, 40, 2, 15);
	ASSERT_MEM(self->l, 15, 0, 0);
	ASSERT_JOB(self->l, 3, INAGG_CLASS_INA, 10, 0);
	/* A change writes version 2, which reads back the same. */
	ASSERT_EQ(0, ia_ledger_lend(self->l, 3, 2, WHY));
	ASSERT_JOB(self->l, 3, INAGG_CLASS_INA, 10, 2);
	ASSERT_JOB(self->l, 8, INAGG_CLASS_INA, 5, 0);
	ASSERT_MEM(self->l, 15, 0, 2);
}

/* The ledger outlives the client: a new handle, a new process see it. */
TEST_F(ledger, survives_restart)
{
	struct ia_ledger_job *jobs;
	struct ia_ledger *l2;
	int status;
	size_t n;
	pid_t pid;

	BEGIN();
	ASSERT_EQ(0, ia_ledger_set(self->l, 5, 50, WHY));
	ASSERT_EQ(0, ia_ledger_admit(self->l, 42, 7, WHY));
	ASSERT_EQ(0, ia_ledger_set_tail(self->l, 3, WHY));
	ASSERT_EQ(0, ia_ledger_lend(self->l, 42, 2, WHY));
	ia_ledger_close(self->l);
	self->l = NULL;

	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		struct ia_ledger_cap c;
		struct ia_ledger_job j;

		if (ia_ledger_open(&l2, variant->backend, NULL) ||
		    ia_ledger_get(l2, &c, WHY) || c.max_jobs != 5 || c.max_slots != 50 ||
		    c.used_jobs != 1 || c.used_slots != 10 || c.tail_slots != 3 ||
		    c.lent_slots != 2 || ia_ledger_job(l2, 42, &j, WHY) || j.lent != 2 ||
		    j.class != INAGG_CLASS_INA || ia_ledger_release(l2, 42, WHY))
			_exit(1);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_EQ(0, status);

	ASSERT_EQ(0, ia_ledger_open(&self->l, variant->backend, NULL));
	ASSERT_CAP(self->l, 5, 50, 0, 3);
	ASSERT_MEM(self->l, 0, 3, 0);
	ASSERT_EQ(0, ia_ledger_list(self->l, &jobs, &n, WHY));
	EXPECT_EQ(0, n);
	free(jobs);
}

/*
 * Workers admit and release at once against a small capacity. Each one adds
 * its job to "held" only after the admission succeeded and takes it out
 * before releasing, so held never exceeds what the ledger holds: held above
 * a limit proves an over-commitment.
 */
#define N_WORKERS	4
#define N_ROUNDS	300
#define MAX_JOBS	3
#define MAX_SLOTS	8

struct shared {
	atomic_int ready;
	atomic_int held_jobs;
	atomic_int held_slots;
	atomic_int over;
	atomic_int admitted;
	atomic_int refused;
	atomic_int errors;
};

struct held {
	__u32 id;
	__u32 slots;
};

static void put_back(struct ia_ledger *l, struct shared *sh, struct held *h)
{
	sh->held_jobs--;
	sh->held_slots -= h->slots;
	if (ia_ledger_release(l, h->id, WHY))
		sh->errors++;
}

/* Each worker keeps up to two jobs, so that together they want more than fits. */
static void worker(struct shared *sh, enum ia_ledger_backend b, int me)
{
	unsigned int seed = me * 7919 + 1;
	struct held h[2];
	struct ia_ledger *l;
	int i, n = 0, ret;

	if (ia_ledger_open(&l, b, NULL)) {
		sh->errors++;
		return;
	}
	/* Start together. */
	sh->ready++;
	while (sh->ready < N_WORKERS)
		sched_yield();
	for (i = 0; i < N_ROUNDS; i++) {
		__u32 id = me * 100000 + i + 1, slots = 1 + rand_r(&seed) % 4;
		int j, s;

		if (n == 2) {
			put_back(l, sh, &h[0]);
			h[0] = h[1];
			n = 1;
		}
		ret = ia_ledger_admit(l, id, slots, WHY);
		if (ret == -ENOSPC) {
			sh->refused++;
			if (n && rand_r(&seed) % 2)
				put_back(l, sh, &h[--n]);
			continue;
		}
		if (ret) {
			sh->errors++;
			continue;
		}
		sh->admitted++;
		j = ++sh->held_jobs;
		s = (sh->held_slots += slots);
		if (j > MAX_JOBS || s > MAX_SLOTS)
			sh->over++;
		h[n++] = (struct held){ id, slots };
	}
	while (n)
		put_back(l, sh, &h[--n]);
	ia_ledger_close(l);
}

struct thread_arg {
	struct shared *sh;
	enum ia_ledger_backend b;
	int me;
};

static void *worker_thread(void *p)
{
	struct thread_arg *a = p;

	worker(a->sh, a->b, a->me);
	return NULL;
}

static void check_contention(struct __test_metadata *_metadata,
			     struct ia_ledger *l, struct shared *sh)
{
	struct ia_ledger_job *jobs;
	size_t n;

	TH_LOG("admitted %d refused %d", sh->admitted, sh->refused);
	EXPECT_EQ(0, sh->errors);
	EXPECT_EQ(0, sh->over);
	EXPECT_LT(0, sh->admitted);
	EXPECT_LT(0, sh->refused);	/* the limits were really reached */
	ASSERT_CAP(l, MAX_JOBS, MAX_SLOTS, 0, 0);
	ASSERT_EQ(0, ia_ledger_list(l, &jobs, &n, WHY));
	EXPECT_EQ(0, n);
	free(jobs);
}

TEST_F_TIMEOUT(ledger, threads_never_overcommit, 300)
{
	struct thread_arg args[N_WORKERS];
	pthread_t th[N_WORKERS];
	struct shared sh = { 0 };
	int i;

	BEGIN();
	ASSERT_EQ(0, ia_ledger_set(self->l, MAX_JOBS, MAX_SLOTS, WHY));
	for (i = 0; i < N_WORKERS; i++) {
		args[i] = (struct thread_arg){ &sh, variant->backend, i };
		ASSERT_EQ(0, pthread_create(&th[i], NULL, worker_thread, &args[i]));
	}
	for (i = 0; i < N_WORKERS; i++)
		pthread_join(th[i], NULL);
	check_contention(_metadata, self->l, &sh);
}

TEST_F_TIMEOUT(ledger, processes_never_overcommit, 300)
{
	pid_t pids[N_WORKERS];
	struct shared *sh;
	int i, status;

	BEGIN();
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, sh);
	memset(sh, 0, sizeof(*sh));
	ASSERT_EQ(0, ia_ledger_set(self->l, MAX_JOBS, MAX_SLOTS, WHY));
	for (i = 0; i < N_WORKERS; i++) {
		pids[i] = fork();
		ASSERT_LE(0, pids[i]);
		if (pids[i] == 0) {
			worker(sh, variant->backend, i);
			_exit(0);
		}
	}
	for (i = 0; i < N_WORKERS; i++) {
		ASSERT_EQ(pids[i], waitpid(pids[i], &status, 0));
		EXPECT_EQ(0, status);
	}
	check_contention(_metadata, self->l, sh);
	munmap(sh, sizeof(*sh));
}

/*
 * Sixteen racers admit at once, round after round: 12 INA jobs of 10 head
 * slots where 80 are free (100 slots, a tail of 20) and 4 PS jobs. Exactly
 * 8 heads fit. In odd rounds the controller grows the tail to 30 at the
 * same moment: if that wins, exactly 7 fit, else it is refused. Then the
 * admitted jobs lend their whole head one slot at a time, find nothing
 * more to lend, reclaim half, and everyone releases: the ledger ends empty.
 * Any over-commitment shows as a wrong count of admissions.
 */
#define N_RACERS	16
#define RACE_ROUNDS	8
#define RACE_SLOTS	100
#define RACE_TAIL	20
#define RACE_HEAD	10

struct race {
	pthread_barrier_t start, admitted, checked, done;
	enum ia_ledger_backend b;
	atomic_int ina_ok, ps_ok, nospc, errors;
};

static int race_admit(struct ia_ledger *l, struct race *r, __u32 id, bool ps)
{
	int ret;

	if (!l)
		return -EBADF;
	ret = ps ? ia_ledger_admit_class(l, id, INAGG_CLASS_PS, 0, WHY) :
		   ia_ledger_admit_class(l, id, INAGG_CLASS_INA, RACE_HEAD, WHY);
	if (!ret)
		ps ? r->ps_ok++ : r->ina_ok++;
	else if (ret == -ENOSPC && !ps && strstr(why, "max_slots"))
		r->nospc++;
	else
		r->errors++;
	return ret;
}

static void race_lend(struct ia_ledger *l, struct race *r, __u32 id)
{
	int k;

	for (k = 0; k < RACE_HEAD; k++)
		if (ia_ledger_lend(l, id, 1, WHY))
			r->errors++;
	if (ia_ledger_lend(l, id, 1, WHY) != -ERANGE)
		r->errors++;
	if (ia_ledger_reclaim(l, id, RACE_HEAD / 2, WHY))
		r->errors++;
}

static void racer(struct race *r, int me)
{
	bool ps = me % 4 == 3;
	struct ia_ledger *l;
	int round, ret;

	if (ia_ledger_open(&l, r->b, NULL)) {
		r->errors++;
		l = NULL;	/* still keep step with the others */
	}
	for (round = 0; round < RACE_ROUNDS; round++) {
		__u32 id = 1 + me + round * 100;

		pthread_barrier_wait(&r->start);
		ret = race_admit(l, r, id, ps);
		pthread_barrier_wait(&r->admitted);
		pthread_barrier_wait(&r->checked);
		if (!ret && !ps)
			race_lend(l, r, id);
		if (!ret && ia_ledger_release(l, id, WHY))
			r->errors++;
		pthread_barrier_wait(&r->done);
	}
	ia_ledger_close(l);
}

struct racer_arg {
	struct race *r;
	int me;
};

static void *racer_thread(void *p)
{
	struct racer_arg *a = p;

	racer(a->r, a->me);
	return NULL;
}

/* The ledger of the race, and its shared state. */
static struct race *race_new(struct __test_metadata *_metadata, struct ia_ledger *l,
			     enum ia_ledger_backend b)
{
	pthread_barrierattr_t attr;
	struct race *r;

	EXPECT_EQ(0, ia_ledger_set(l, N_RACERS, RACE_SLOTS, WHY));
	EXPECT_EQ(0, ia_ledger_set_tail(l, RACE_TAIL, WHY));
	r = mmap(NULL, sizeof(*r), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (r == MAP_FAILED)
		return NULL;
	memset(r, 0, sizeof(*r));
	r->b = b;
	/* Shared memory and pshared barriers: racers may be processes. */
	pthread_barrierattr_init(&attr);
	pthread_barrierattr_setpshared(&attr, PTHREAD_PROCESS_SHARED);
	pthread_barrier_init(&r->start, &attr, N_RACERS + 1);
	pthread_barrier_init(&r->admitted, &attr, N_RACERS + 1);
	pthread_barrier_init(&r->checked, &attr, N_RACERS + 1);
	pthread_barrier_init(&r->done, &attr, N_RACERS + 1);
	pthread_barrierattr_destroy(&attr);
	return r;
}

/*
 * The controller's side of every round. Only EXPECTs in here: a failed
 * check must not leave the racers waiting at a barrier.
 */
static void race_control(struct __test_metadata *_metadata, struct ia_ledger *l,
			 struct race *r)
{
	int round, tail_ret, want_ina, total_ina = 0;
	struct ia_ledger_cap c;

	for (round = 0; round < RACE_ROUNDS; round++) {
		tail_ret = 1;
		pthread_barrier_wait(&r->start);
		if (round % 2)
			tail_ret = ia_ledger_set_tail(l, RACE_TAIL + RACE_HEAD, WHY);
		pthread_barrier_wait(&r->admitted);

		want_ina = (RACE_SLOTS - RACE_TAIL) / RACE_HEAD - (tail_ret == 0);
		if (tail_ret < 0)
			EXPECT_EQ(-ENOSPC, tail_ret);
		EXPECT_EQ(want_ina, r->ina_ok);
		EXPECT_EQ(N_RACERS / 4, r->ps_ok);
		EXPECT_EQ(N_RACERS * 3 / 4 - want_ina, r->nospc);
		EXPECT_EQ(0, ia_ledger_get(l, &c, WHY));
		EXPECT_EQ(want_ina + N_RACERS / 4, c.used_jobs);
		EXPECT_EQ(want_ina * RACE_HEAD, c.head_slots);
		EXPECT_GE(RACE_SLOTS, c.head_slots + c.tail_slots);
		EXPECT_EQ(c.head_slots + c.tail_slots, c.used_slots);
		total_ina += r->ina_ok;
		r->ina_ok = r->ps_ok = r->nospc = 0;
		pthread_barrier_wait(&r->checked);
		pthread_barrier_wait(&r->done);

		/* Everything went back. */
		EXPECT_EQ(0, ia_ledger_get(l, &c, WHY));
		EXPECT_EQ(0, c.used_jobs);
		EXPECT_EQ(0, c.head_slots);
		EXPECT_EQ(0, c.lent_slots);
		EXPECT_EQ(0, ia_ledger_set_tail(l, RACE_TAIL, WHY));
	}
	TH_LOG("%d INA admissions in %d rounds", total_ina, RACE_ROUNDS);
	EXPECT_EQ(0, r->errors);
}

TEST_F_TIMEOUT(ledger, sixteen_threads_admit_at_once, 300)
{
	struct racer_arg args[N_RACERS];
	pthread_t th[N_RACERS];
	struct race *r;
	int i;

	BEGIN();
	r = race_new(_metadata, self->l, variant->backend);
	ASSERT_NE(NULL, r);
	for (i = 0; i < N_RACERS; i++) {
		args[i] = (struct racer_arg){ r, i };
		ASSERT_EQ(0, pthread_create(&th[i], NULL, racer_thread, &args[i]));
	}
	race_control(_metadata, self->l, r);
	for (i = 0; i < N_RACERS; i++)
		pthread_join(th[i], NULL);
	munmap(r, sizeof(*r));
}

TEST_F_TIMEOUT(ledger, sixteen_processes_admit_at_once, 300)
{
	pid_t pids[N_RACERS];
	struct race *r;
	int i, status;

	BEGIN();
	r = race_new(_metadata, self->l, variant->backend);
	ASSERT_NE(NULL, r);
	for (i = 0; i < N_RACERS; i++) {
		pids[i] = fork();
		if (pids[i] == 0) {
			racer(r, i);
			_exit(0);
		}
		/* A racer missing would leave the others at a barrier. */
		if (pids[i] < 0) {
			int failed = i;

			while (i--)
				kill(pids[i], SIGKILL);
			ASSERT_LE(0, pids[failed]);
		}
	}
	race_control(_metadata, self->l, r);
	for (i = 0; i < N_RACERS; i++) {
		ASSERT_EQ(pids[i], waitpid(pids[i], &status, 0));
		EXPECT_EQ(0, status);
	}
	munmap(r, sizeof(*r));
}

static int drop_net_admin(void)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[2];

	if (syscall(SYS_capget, &hdr, data))
		return -1;
	data[CAP_TO_INDEX(CAP_NET_ADMIN)].effective &= ~CAP_TO_MASK(CAP_NET_ADMIN);
	data[CAP_TO_INDEX(CAP_NET_ADMIN)].permitted &= ~CAP_TO_MASK(CAP_NET_ADMIN);
	data[CAP_TO_INDEX(CAP_NET_ADMIN)].inheritable &= ~CAP_TO_MASK(CAP_NET_ADMIN);
	return syscall(SYS_capset, &hdr, data);
}

/* Without CAP_NET_ADMIN: reads work, every change is refused. */
TEST_F(ledger, mutations_need_net_admin)
{
	int status;
	pid_t pid;

	BEGIN();
	ASSERT_EQ(0, ia_ledger_admit(self->l, 1, 4, WHY));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		struct ia_ledger_job *jobs;
		struct ia_ledger_cap c;
		struct ia_ledger *l;
		size_t n;

		if (drop_net_admin())
			_exit(10);
		if (ia_ledger_open(&l, variant->backend, NULL))
			_exit(11);
		if (ia_ledger_get(l, &c, WHY) || c.used_jobs != 1 || c.used_slots != 4)
			_exit(12);
		if (ia_ledger_list(l, &jobs, &n, WHY) || n != 1 || jobs[0].id != 1)
			_exit(13);
		if (ia_ledger_admit(l, 2, 1, WHY) != -EPERM)
			_exit(14);
		if (ia_ledger_release(l, 1, WHY) != -EPERM)
			_exit(15);
		if (ia_ledger_set(l, 1, 1, WHY) != -EPERM)
			_exit(16);
		if (ia_ledger_set_tail(l, 1, WHY) != -EPERM)
			_exit(17);
		if (ia_ledger_lend(l, 1, 1, WHY) != -EPERM ||
		    ia_ledger_reclaim(l, 1, 1, WHY) != -EPERM)
			_exit(18);
		if (ia_ledger_admit_class(l, 3, INAGG_CLASS_PS, 0, WHY) != -EPERM)
			_exit(19);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(0, WEXITSTATUS(status));
	ASSERT_CAP(self->l, 16, 4096, 1, 4);
}

/* Two namespaces, two ledgers; a ledger opened by namespace path. */
TEST_F(ledger, namespaces_independent)
{
	int ready[2], go[2], status;
	struct ia_ledger *other;
	struct ia_ledger_job job;
	char path[64], c;
	pid_t pid;

	BEGIN();
	ASSERT_EQ(0, ia_ledger_admit(self->l, 1, 10, WHY));
	ASSERT_EQ(0, pipe(ready));
	ASSERT_EQ(0, pipe(go));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		struct ia_ledger_cap cap;
		struct ia_ledger *l;

		if (unshare(CLONE_NEWNET) || ia_ledger_open(&l, variant->backend, NULL))
			_exit(1);
		if (ia_ledger_get(l, &cap, WHY) || cap.used_jobs || cap.used_slots)
			_exit(2);
		if (ia_ledger_admit(l, 1, 5, WHY))	/* same id, other ledger */
			_exit(3);
		if (write(ready[1], "r", 1) != 1 || read(go[0], &c, 1) != 1)
			_exit(4);
		/* The parent admitted job 9 here through our namespace's path. */
		if (ia_ledger_job(l, 9, &job, WHY) || job.slots != 2)
			_exit(5);
		if (ia_ledger_get(l, &cap, WHY) || cap.used_jobs != 2 || cap.used_slots != 7)
			_exit(6);
		_exit(0);
	}
	ASSERT_EQ(1, read(ready[0], &c, 1));
	snprintf(path, sizeof(path), "/proc/%d/ns/net", pid);
	ASSERT_EQ(0, ia_ledger_open(&other, variant->backend, path));
	ASSERT_EQ(0, ia_ledger_job(other, 1, &job, WHY));
	EXPECT_EQ(5, job.slots);
	ASSERT_EQ(0, ia_ledger_admit(other, 9, 2, WHY));
	ia_ledger_close(other);
	ASSERT_EQ(1, write(go[1], "g", 1));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(0, WEXITSTATUS(status));

	ASSERT_EQ(-ENOENT, ia_ledger_job(self->l, 9, &job, WHY));
	ASSERT_EQ(0, ia_ledger_job(self->l, 1, &job, WHY));
	EXPECT_EQ(10, job.slots);
	ASSERT_CAP(self->l, 16, 4096, 1, 10);
}

/* A namespace that is not there is an error, not a fallback. */
TEST_F(ledger, missing_namespace)
{
	struct ia_ledger *l;

	BEGIN();
	ASSERT_EQ(-ENOENT, ia_ledger_open(&l, variant->backend, "ia-no-such-ns"));
}

TEST_HARNESS_MAIN
