// SPDX-License-Identifier: GPL-2.0
/*
 * The live multi-tenant experiment's job mix (user/lib/eval_live.h): drawn
 * from the seed alone (every scheme of a round runs the same jobs), within
 * the configured ranges, the requested INA:PS mix, one straggler per job;
 * configurations out of range are refused; the throughput while every job
 * runs. Its account of the CPU other work took during a run (eval_live_cpu.c)
 * and the runs it slowed, run again (eval_live_keep.c).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "eval_live.h"

static struct ia_live_cfg cfg(void)
{
	struct ia_live_cfg c;

	ia_live_defaults(&c);
	c.bindir = "/nonexistent";
	c.workdir = "/nonexistent";
	return c;
}

TEST(same_seed_same_mix_other_seed_other_mix)
{
	struct ia_live_mixjob a[IA_LIVE_MAX_JOBS], b[IA_LIVE_MAX_JOBS];
	struct ia_live_cfg c = cfg();

	ia_live_mix(&c, a);
	ia_live_mix(&c, b);
	EXPECT_EQ(0, memcmp(a, b, c.jobs * sizeof(a[0])));
	c.seed++;
	ia_live_mix(&c, b);
	EXPECT_NE(0, memcmp(a, b, c.jobs * sizeof(a[0])));
}

TEST(mix_within_ranges_with_one_straggler_per_job)
{
	struct ia_live_mixjob m[IA_LIVE_MAX_JOBS];
	struct ia_live_cfg c = cfg();

	for (c.seed = 1; c.seed < 50; c.seed++) {
		ia_live_mix(&c, m);
		for (uint32_t i = 0; i < c.jobs; i++) {
			int stragglers = 0;

			EXPECT_EQ(i % c.leaves, m[i].leaf);
			EXPECT_LE(c.wmin, m[i].workers);
			EXPECT_GE(c.wmax, m[i].workers);
			EXPECT_LE(c.cmin, m[i].chunks);
			EXPECT_GE(c.cmax, m[i].chunks);
			for (uint32_t w = 0; w < m[i].workers; w++) {
				EXPECT_LE(0, m[i].gap_ms[w]);
				EXPECT_GE(c.gap_ms, m[i].gap_ms[w]);
				stragglers += m[i].gap_ms[w] >= 0.5 * c.gap_ms;
			}
			EXPECT_EQ(1, stragglers) TH_LOG("seed %llu job %u",
							(unsigned long long)c.seed, i);
		}
	}
}

TEST(requested_mix)
{
	struct ia_live_mixjob m[IA_LIVE_MAX_JOBS];
	struct ia_live_cfg c = cfg();
	static const uint32_t share[] = { 0, 1, 3 };
	static const int want_ps[] = { 0, 4, 6 };	/* of 8 jobs */

	ASSERT_EQ(2u, c.leaves);
	for (int k = 0; k < 3; k++) {
		int ps = 0, ina[2] = { 0, 0 };

		c.ps_per_ina = share[k];
		ia_live_mix(&c, m);
		for (uint32_t i = 0; i < c.jobs; i++) {
			ps += m[i].want_ps;
			ina[m[i].leaf] += !m[i].want_ps;
		}
		EXPECT_EQ(want_ps[k], ps) TH_LOG("1:%u", share[k]);
		/* The INA jobs spread over both leaves (1:1 was all on leaf 0). */
		EXPECT_EQ(ina[0], ina[1]) TH_LOG("1:%u", share[k]);
		EXPECT_FALSE(m[0].want_ps);	/* the first job asks for a head */
	}
}

TEST(bad_configurations_refused)
{
	struct ia_live_cfg c = cfg();

	EXPECT_EQ(0, ia_live_check(&c));
	c.jobs = IA_LIVE_MAX_JOBS + 1;
	EXPECT_NE(0, ia_live_check(&c));
	c = cfg();
	c.wmax = IA_LIVE_MAX_W + 1;
	EXPECT_NE(0, ia_live_check(&c));
	c = cfg();
	c.wmin = 5;
	c.wmax = 4;
	EXPECT_NE(0, ia_live_check(&c));
	c = cfg();
	c.cross = 1;
	EXPECT_NE(0, ia_live_check(&c));
	c = cfg();
	c.bindir = NULL;
	EXPECT_NE(0, ia_live_check(&c));
}

/* Spins until this process has used ms of CPU (not of wall time: a loaded host only slows it). */
static void spin_cpu(long ms)
{
	struct timespec ts;

	do
		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	while (ts.tv_sec * 1000 + ts.tv_nsec / 1000000 < ms);
}

/*
 * The experiment's own processes count as its own, waited for or alive: a
 * child that used 200 ms of CPU is in ours, whatever else the host runs.
 */
TEST(own_children_are_ours)
{
	struct ia_live L = { .daemon = 0 };
	struct ia_live_cpu a, b;
	pid_t pid;

	ia_live_cpu_snap(&L, &a);
	ASSERT_TRUE(a.ok);
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		spin_cpu(200);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, NULL, 0));
	ia_live_cpu_snap(&L, &b);
	EXPECT_LE(190000000ll, b.ours_ns - a.ours_ns) TH_LOG("%lld ns", b.ours_ns - a.ours_ns);
	EXPECT_LE(b.ours_ns - a.ours_ns, b.busy_ns - a.busy_ns + 20000000ll);
}

/*
 * A process that is not the experiment's (a grandchild whose parent is gone,
 * as a compile of someone else) is counted as other work: 200 ms of CPU.
 */
TEST(foreign_work_is_other)
{
	struct ia_live L = { .daemon = 0 };
	struct ia_live_cpu a, b;
	int done[2];
	pid_t pid;
	char c;

	ASSERT_EQ(0, pipe(done));
	ia_live_cpu_snap(&L, &a);
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		pid_t parent = getpid();

		if (fork() == 0) {
			close(done[0]);
			/* Reparented once its parent exits: no longer ours. */
			while (getppid() == parent)
				usleep(1000);
			spin_cpu(200);
			if (write(done[1], "x", 1) != 1)
				_exit(1);
			_exit(0);
		}
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, NULL, 0));
	close(done[1]);
	ASSERT_EQ(1, read(done[0], &c, 1));
	close(done[0]);
	ia_live_cpu_snap(&L, &b);
	/* /proc/stat counts in ticks (10 ms): 150 of the 200 at least. */
	EXPECT_LE(150000000ll, (b.busy_ns - a.busy_ns) - (b.ours_ns - a.ours_ns));
	EXPECT_LT(0, ia_live_cpu_other(&a, &b));
	EXPECT_GE(1, ia_live_cpu_other(&a, &b));
}

/*
 * The throughput while every job runs counts each worker's results in
 * (t0, t1] only, a chunk's payload each, over t1 - t0: here 3 of worker
 * a's (10, 20 and 30 ms; 0 is a chunk without a result, 40 ms is after t1)
 * and 2 of worker b's (t0 itself is not after t0), 5 KiB in 30 ms.
 */
TEST(throughput_while_all_run_counts_results_up_to_the_first_end)
{
	const uint64_t ms = 1000000, t0 = 1000 * ms;
	const uint64_t a[] = { t0 + 10 * ms, t0 + 20 * ms, 0, t0 + 30 * ms, t0 + 40 * ms };
	const uint64_t b[] = { t0, t0 + 5 * ms, t0 + 30 * ms };
	const struct ia_live_done d[] = { { .t = a, .n = 5 }, { .t = b, .n = 3 } };

	EXPECT_GT(1e-6, fabs(5 * 1024 / 0.030 - ia_live_tput_all(d, 2, 1024, t0, t0 + 30 * ms)));
	/* Only up to 25 ms: a's 10 and 20, b's 5. */
	EXPECT_GT(1e-6, fabs(3 * 1024 / 0.025 - ia_live_tput_all(d, 2, 1024, t0, t0 + 25 * ms)));
	EXPECT_EQ(0, ia_live_tput_all(d, 2, 1024, t0, t0));
	EXPECT_EQ(0, ia_live_tput_all(d, 0, 1024, t0, t0 + 30 * ms));
}

/*
 * Runs other work slowed, again (eval_live_keep.c): a fake run that gives
 * the other work of each call in turn, exact unless told, failing when told.
 */
struct fake_runs {
	double other[8];
	bool inexact[8];
	int fail_at;		/* the call that fails (-EIO), 0: none */
	int calls;
};

static int fake_run(void *ctx, enum ia_sim_scheme s, struct ia_live_res *r, char *err,
		    size_t errlen)
{
	struct fake_runs *f = ctx;
	int i = f->calls++;

	(void)s;
	memset(r, 0, sizeof(*r));
	if (f->fail_at == f->calls) {
		snprintf(err, errlen, "fake failure");
		return -EIO;
	}
	r->cpu_other = f->other[i];
	r->exact = !f->inexact[i];
	r->tput = i + 1;	/* which call's run was kept */
	return 0;
}

TEST(run_again_while_other_work_took_too_much_keeps_the_least_other)
{
	struct ia_live_keep k = { .max_other = 0.15, .repeats = 3 };
	struct fake_runs f = { .other = { 0.4, 0.3, 0.1, 0.05 } };
	struct ia_live_res r;
	uint32_t rep = 99;
	char err[64];

	/* 0.4 and 0.3 over 0.15: two runs more, the third (0.1) kept. */
	ASSERT_EQ(0, ia_live_run_kept(&k, fake_run, &f, IA_SIM_FLEXINA, &r, &rep, err,
				      sizeof(err)));
	EXPECT_EQ(2u, rep);
	EXPECT_EQ(3, f.calls);
	EXPECT_EQ(3, r.tput);
	EXPECT_EQ(0.1, r.cpu_other);
}

TEST(repeats_are_bounded_and_the_least_other_is_kept)
{
	struct ia_live_keep k = { .max_other = 0.15, .repeats = 3 };
	struct fake_runs f = { .other = { 0.5, 0.6, 0.45, 0.7, 0.01 } };
	struct ia_live_res r;
	uint32_t rep;
	char err[64];

	ASSERT_EQ(0, ia_live_run_kept(&k, fake_run, &f, IA_SIM_FLEXINA, &r, &rep, err,
				      sizeof(err)));
	EXPECT_EQ(3u, rep);
	EXPECT_EQ(4, f.calls);	/* never the fifth */
	EXPECT_EQ(3, r.tput);
	EXPECT_EQ(0.45, r.cpu_other);
	/* None more: the first run is kept however much other work took. */
	k.repeats = 0;
	f.calls = 0;
	ASSERT_EQ(0, ia_live_run_kept(&k, fake_run, &f, IA_SIM_FLEXINA, &r, &rep, err,
				      sizeof(err)));
	EXPECT_EQ(0u, rep);
	EXPECT_EQ(1, f.calls);
}

TEST(no_threshold_or_under_it_runs_once)
{
	struct ia_live_keep k = { .repeats = 3 };
	struct fake_runs f = { .other = { 0.9, 0.15, 0.15 } };
	struct ia_live_res r;
	uint32_t rep;
	char err[64];

	ASSERT_EQ(0, ia_live_run_kept(&k, fake_run, &f, IA_SIM_FLEXINA, &r, &rep, err,
				      sizeof(err)));
	EXPECT_EQ(0u, rep);
	EXPECT_EQ(1, f.calls);
	/* At the threshold is not over it. */
	k.max_other = 0.15;
	ASSERT_EQ(0, ia_live_run_kept(&k, fake_run, &f, IA_SIM_FLEXINA, &r, &rep, err,
				      sizeof(err)));
	EXPECT_EQ(0u, rep);
	EXPECT_EQ(2, f.calls);
}

/* A failure is never repeated away: an inexact run is kept, a failed one returned. */
TEST(inexact_or_failed_runs_are_kept)
{
	struct ia_live_keep k = { .max_other = 0.15, .repeats = 3 };
	struct fake_runs f = { .other = { 0.5 }, .inexact = { true } };
	struct ia_live_res r;
	uint32_t rep;
	char err[64];

	ASSERT_EQ(0, ia_live_run_kept(&k, fake_run, &f, IA_SIM_FLEXINA, &r, &rep, err,
				      sizeof(err)));
	EXPECT_EQ(0u, rep);
	EXPECT_FALSE(r.exact);
	/* Inexact on the repeat, with less other work than the first: kept. */
	f = (struct fake_runs){ .other = { 0.5, 0.6, 0.01 }, .inexact = { false, true } };
	ASSERT_EQ(0, ia_live_run_kept(&k, fake_run, &f, IA_SIM_FLEXINA, &r, &rep, err,
				      sizeof(err)));
	EXPECT_EQ(1u, rep);
	EXPECT_EQ(2, f.calls);
	EXPECT_FALSE(r.exact);
	EXPECT_EQ(2, r.tput);
	f = (struct fake_runs){ .other = { 0.5, 0.6 }, .fail_at = 2 };
	EXPECT_EQ(-EIO, ia_live_run_kept(&k, fake_run, &f, IA_SIM_FLEXINA, &r, &rep, err,
					 sizeof(err)));
	EXPECT_STREQ("fake failure", err);
}

TEST(keep_limits)
{
	struct ia_live_keep k = { .max_other = 0.15, .repeats = IA_LIVE_MAX_REPEATS };

	EXPECT_EQ(0, ia_live_keep_check(&k));
	k.repeats++;
	EXPECT_EQ(-EINVAL, ia_live_keep_check(&k));
	k.repeats = 1;
	k.max_other = 1.5;
	EXPECT_EQ(-EINVAL, ia_live_keep_check(&k));
	k.max_other = -0.1;
	EXPECT_EQ(-EINVAL, ia_live_keep_check(&k));
}

TEST_HARNESS_MAIN
