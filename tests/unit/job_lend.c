// SPDX-License-Identifier: GPL-2.0
/*
 * The lend / reclaim policy of INA heads (user/lib/job_lend.c): the rule on
 * its own, and the lender against a fake ledger (lent counts per job and
 * switch, bounded by the head as the module's are) and a fake tail
 * directory recording what was published.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kselftest_harness.h"

#include "job_lend.h"

#define NSW 3

static const char topo3[] = "{\"switches\": ["
	"{\"name\": \"s0\", \"parent\": null, \"rate\": 1, \"load\": 0},"
	"{\"name\": \"s1\", \"parent\": \"s0\", \"rate\": 1, \"load\": 2},"
	"{\"name\": \"s2\", \"parent\": \"s0\", \"rate\": 1, \"load\": 2}]}";

struct fake {
	uint32_t head;			/* every job's */
	uint32_t lent[NSW][8];		/* by job id */
	int fail_on;			/* this switch's ledger refuses */
	int publish_fails_on;
	int published[NSW];		/* publications */
	uint32_t dir[NSW][8];		/* the last directory: lent by job id */
	uint64_t now;			/* the lender's clock, ms */
};

static int f_lend(void *ctx, int v, uint32_t id, uint32_t count, char *why, size_t len)
{
	struct fake *f = ctx;

	if (v == f->fail_on)
		return ia_fail(why, len, -EWOULDBLOCK, "ledger busy");
	if (f->lent[v][id] + count > f->head)
		return ia_fail(why, len, -ERANGE, "beyond the head");
	f->lent[v][id] += count;
	return 0;
}

static int f_reclaim(void *ctx, int v, uint32_t id, uint32_t count, char *why, size_t len)
{
	struct fake *f = ctx;

	if (v == f->fail_on)
		return ia_fail(why, len, -EWOULDBLOCK, "ledger busy");
	if (count > f->lent[v][id])
		return ia_fail(why, len, -ERANGE, "more than lent");
	f->lent[v][id] -= count;
	return 0;
}

static int f_publish(void *ctx, int v, const uint32_t *ids, const uint32_t *lent, int n,
		     char *why, size_t len)
{
	struct fake *f = ctx;

	if (v == f->publish_fails_on)
		return ia_fail(why, len, -EIO, "map update");
	memset(f->dir[v], 0, sizeof(f->dir[v]));
	for (int i = 0; i < n; i++)
		f->dir[v][ids[i]] = lent[i];
	f->published[v]++;
	return 0;
}

static uint64_t f_now(void *ctx)
{
	return ((struct fake *)ctx)->now;
}

static const struct ia_lend_ops fake_ops = {
	.lend = f_lend, .reclaim = f_reclaim, .publish = f_publish, .now_ms = f_now,
};

FIXTURE(lend)
{
	struct ia_topo *t;
	struct fake f;
	struct ia_lender L;
	struct ia_job j;
	bool blue[NSW];
	uint32_t load[NSW];
	char err[IA_ERRLEN];
};

FIXTURE_SETUP(lend)
{
	struct ia_lend_policy pol = { .hold = 5 };

	ASSERT_EQ(0, ia_topo_parse(topo3, &self->t, self->err, sizeof(self->err)));
	self->f = (struct fake){ .head = 128, .fail_on = -1, .publish_fails_on = -1,
				 .now = 100000 };
	ASSERT_EQ(0, ia_lender_init(&self->L, self->t, &fake_ops, &self->f, &pol));
	/*
	 * An INA job with its heads on s1 and s2, window 128 (64 chunks in
	 * flight), both workers of s1 (sender ids 1, 2) and the first of s2 (3).
	 */
	self->blue[1] = self->blue[2] = true;
	self->load[1] = 2;
	self->load[2] = 1;
	self->j = (struct ia_job){ .id = 1, .class = IA_JOB_INA, .head = 128, .window = 128,
				   .state = IA_JOB_ACTIVE, .blue = self->blue,
				   .load = self->load };
}

FIXTURE_TEARDOWN(lend)
{
	ia_lender_free(&self->L);
	ia_topo_free(self->t);
}

static uint32_t lent(FIXTURE_DATA(lend) *self, int v)
{
	const struct ia_lend_state *s = ia_lender_state(&self->L, self->j.id, v);

	return s ? s->lent : 0;
}

/* The rule alone: lend after hold quiet samples, what none of them needed. */
TEST(decide_lends_after_hold_and_reclaims_at_once)
{
	struct ia_lend_policy p = { .hold = 3 };
	struct ia_lend_state s = { 0 };

	/* Window 16 of a 128-slot head: need 16 + 16 (margin 1/8). */
	EXPECT_EQ(0u, ia_lend_decide(&p, &s, 128, 16, 0));
	EXPECT_EQ(0u, ia_lend_decide(&p, &s, 128, 16, 3));
	/* The peak of the quiet samples counts, not the last one: open 20 -> need 36. */
	EXPECT_EQ(128u - 36, ia_lend_decide(&p, &s, 128, 16, 20));
	ia_lend_commit(&s, 92);
	EXPECT_EQ(92u, s.lent);
	EXPECT_EQ(1u, s.lends);
	EXPECT_EQ(0u, s.quiet);
	/* Still quiet: nothing changes. */
	for (int i = 0; i < 10; i++)
		EXPECT_EQ(92u, ia_lend_decide(&p, &s, 128, 16, 20));
	/* The window grows to 48 (need 64 > 36 left): back at the first sample. */
	EXPECT_EQ(64u, ia_lend_decide(&p, &s, 128, 48, 0));
	ia_lend_commit(&s, 64);
	EXPECT_EQ(1u, s.reclaims);
	EXPECT_EQ(28u, s.reclaimed_total);
	/* Everything needed: everything back, and never a lend while it lasts. */
	EXPECT_EQ(0u, ia_lend_decide(&p, &s, 128, 128, 0));
	ia_lend_commit(&s, 0);
	for (int i = 0; i < 10; i++)
		EXPECT_EQ(0u, ia_lend_decide(&p, &s, 128, 120, 0));
}

TEST(decide_small_changes_and_no_hold)
{
	struct ia_lend_policy p = { .hold = 1 }, never = { .hold = 0 };
	struct ia_lend_state s = { 0 };

	/* Lent 92; need 32 would free 4 more, below the step (128 / 16): no change. */
	ia_lend_commit(&s, 92);
	EXPECT_EQ(92u, ia_lend_decide(&p, &s, 128, 16, 0));
	/* need 24 frees 12: worth it. */
	EXPECT_EQ(104u, ia_lend_decide(&p, &s, 128, 8, 0));
	/* hold 0: never lends, still reclaims. */
	s = (struct ia_lend_state){ 0 };
	for (int i = 0; i < 20; i++)
		EXPECT_EQ(0u, ia_lend_decide(&never, &s, 128, 1, 0));
	s.lent = 100;
	EXPECT_EQ(128u - 40, ia_lend_decide(&never, &s, 128, 24, 0));
	/* A one-slot head: margin 1, nothing is ever lent while anything is in flight. */
	s = (struct ia_lend_state){ 0 };
	for (int i = 0; i < 5; i++)
		EXPECT_EQ(0u, ia_lend_decide(&p, &s, 1, 1, 0));
	/* A lent count above a (smaller) head comes back to what the head can give. */
	s = (struct ia_lend_state){ .lent = 200 };
	EXPECT_EQ(128u - 32, ia_lend_decide(&p, &s, 128, 16, 0));
}

/* Random windows and occupancies: the job always keeps what it needs, and gets it at once. */
TEST(decide_never_leaves_a_job_short)
{
	struct ia_lend_policy p = { .hold = 4 };
	struct ia_lend_state s = { 0 };
	uint64_t seed = 16;
	int lends = 0, reclaims = 0;

	for (int i = 0; i < 100000; i++) {
		uint32_t head = 256, w = ia_splitmix64(&seed) % 200, open = ia_splitmix64(&seed) % 64;
		uint32_t need = (w > open ? w : open) + head / 8, l;

		/* Long quiet stretches now and then. */
		if ((i / 50) % 3)
			w = 10, open = 0, need = 42;
		l = ia_lend_decide(&p, &s, head, w, open);
		ASSERT_LE(l, head);
		ASSERT_GE(head - l, need > head ? head : need);
		lends += l > s.lent;
		reclaims += l < s.lent;
		ia_lend_commit(&s, l);
	}
	EXPECT_GT(lends, 100);
	EXPECT_GT(reclaims, 100);
}

/* An idle INA job lends on both its blue switches after hold samples, and publishes once. */
TEST_F(lend, idle_job_lends_after_hold)
{
	self->j.live_window = 16;
	for (int i = 0; i < 4; i++) {
		for (int v = 0; v < NSW; v++)
			ASSERT_EQ(0, ia_lender_sample(&self->L, &self->j, v, 0));
		ASSERT_EQ(0, ia_lender_publish(&self->L));
	}
	EXPECT_EQ(0u, self->f.lent[1][1]);
	EXPECT_EQ(0, self->f.published[1]);
	for (int v = 0; v < NSW; v++)
		ASSERT_EQ(0, ia_lender_sample(&self->L, &self->j, v, 0));
	ASSERT_EQ(0, ia_lender_publish(&self->L));
	/* s0 is red for this job: nothing there. */
	EXPECT_EQ(0u, self->f.lent[0][1]);
	EXPECT_EQ(0, self->f.published[0]);
	for (int v = 1; v < NSW; v++) {
		EXPECT_EQ(96u, self->f.lent[v][1]);
		EXPECT_EQ(96u, lent(self, v));
		EXPECT_EQ(96u, ia_lender_lent(&self->L, v));
		EXPECT_EQ(1, self->f.published[v]);
		EXPECT_EQ(96u, self->f.dir[v][1]);
		EXPECT_EQ(1u, self->L.lends[v]);
	}
	/* Nothing changed: nothing published again. */
	ASSERT_EQ(0, ia_lender_sample(&self->L, &self->j, 1, 0));
	ASSERT_EQ(0, ia_lender_publish(&self->L));
	EXPECT_EQ(1, self->f.published[1]);
}

/*
 * A report above the workers' own window (window / 2) counts as that window:
 * the senders run their full window, so nothing is lent (issue 33).
 */
TEST_F(lend, worker_window_bounds_the_lend)
{
	self->j.live_window = 1000;
	EXPECT_EQ(64u, ia_lender_window(&self->L, &self->j, NULL));
	for (int i = 0; i < 5; i++)
		ASSERT_EQ(0, ia_lender_sample(&self->L, &self->j, 1, 0));
	EXPECT_EQ(0u, self->f.lent[1][1]);
}

TEST_F(lend, growth_reclaims_at_the_first_sample)
{
	self->j.live_window = 8;
	for (int i = 0; i < 5; i++)
		ASSERT_EQ(0, ia_lender_sample(&self->L, &self->j, 1, 0));
	ASSERT_EQ(104u, self->f.lent[1][1]);
	ASSERT_EQ(0, ia_lender_publish(&self->L));
	/* The head fills up (a straggler, say): open 60 -> need 76, 52 may stay lent. */
	ASSERT_EQ(0, ia_lender_sample(&self->L, &self->j, 1, 60));
	EXPECT_EQ(52u, self->f.lent[1][1]);
	ASSERT_EQ(0, ia_lender_publish(&self->L));
	EXPECT_EQ(52u, self->f.dir[1][1]);
	EXPECT_EQ(2, self->f.published[1]);
	EXPECT_EQ(1u, self->L.reclaims[1]);
	/* The window grows to the whole worker window: not slowed, everything back. */
	self->j.live_window = 0;
	ASSERT_EQ(0, ia_lender_sample(&self->L, &self->j, 1, 0));
	EXPECT_EQ(0u, self->f.lent[1][1]);
	self->j.live_window = 64;
	ASSERT_EQ(0, ia_lender_sample(&self->L, &self->j, 1, 120));
	EXPECT_EQ(0u, self->f.lent[1][1]);
	EXPECT_EQ(0u, ia_lender_lent(&self->L, 1));
}

/* A ledger that refuses leaves the state as it was; the next sample tries again. */
TEST_F(lend, ledger_failure_changes_nothing)
{
	self->j.live_window = 16;
	self->f.fail_on = 1;
	for (int i = 0; i < 4; i++)
		ASSERT_EQ(0, ia_lender_sample(&self->L, &self->j, 1, 0));
	EXPECT_EQ(-EWOULDBLOCK, ia_lender_sample(&self->L, &self->j, 1, 0));
	EXPECT_EQ(0u, lent(self, 1));
	EXPECT_EQ(0u, self->L.lends[1]);
	ASSERT_EQ(0, ia_lender_publish(&self->L));
	EXPECT_EQ(0, self->f.published[1]);
	self->f.fail_on = -1;
	ASSERT_EQ(0, ia_lender_sample(&self->L, &self->j, 1, 0));
	EXPECT_EQ(96u, self->f.lent[1][1]);
	EXPECT_EQ(96u, lent(self, 1));
}

/* A directory that cannot be written stays to publish; the other switches are written. */
TEST_F(lend, publish_failure_is_retried)
{
	self->j.live_window = 16;
	for (int i = 0; i < 5; i++)
		for (int v = 1; v < NSW; v++)
			ASSERT_EQ(0, ia_lender_sample(&self->L, &self->j, v, 0));
	self->f.publish_fails_on = 1;
	EXPECT_EQ(-EIO, ia_lender_publish(&self->L));
	EXPECT_EQ(0, self->f.published[1]);
	EXPECT_EQ(1, self->f.published[2]);
	self->f.publish_fails_on = -1;
	ASSERT_EQ(0, ia_lender_publish(&self->L));
	EXPECT_EQ(1, self->f.published[1]);
	EXPECT_EQ(1, self->f.published[2]);
	EXPECT_EQ(96u, self->f.dir[1][1]);
}

/* Two jobs in one directory; an ending job reclaims all, then leaves it. */
TEST_F(lend, two_jobs_and_an_end)
{
	struct ia_job k = self->j;

	k.id = 2;
	self->j.live_window = 16;
	k.live_window = 32;
	for (int i = 0; i < 5; i++) {
		ASSERT_EQ(0, ia_lender_sample(&self->L, &self->j, 1, 0));
		ASSERT_EQ(0, ia_lender_sample(&self->L, &k, 1, 0));
	}
	ASSERT_EQ(0, ia_lender_publish(&self->L));
	EXPECT_EQ(96u, self->f.dir[1][1]);
	EXPECT_EQ(80u, self->f.dir[1][2]);
	EXPECT_EQ(176u, ia_lender_lent(&self->L, 1));
	ASSERT_EQ(0, ia_lender_reclaim_all(&self->L, 1));
	EXPECT_EQ(0u, self->f.lent[1][1]);
	ASSERT_EQ(0, ia_lender_publish(&self->L));
	EXPECT_EQ(0u, self->f.dir[1][1]);
	EXPECT_EQ(80u, self->f.dir[1][2]);
	ia_lender_forget(&self->L, 2);
	EXPECT_EQ(NULL, ia_lender_state(&self->L, 2, 1));
	ASSERT_EQ(0, ia_lender_publish(&self->L));
	EXPECT_EQ(0u, self->f.dir[1][2]);
	EXPECT_EQ(0u, ia_lender_lent(&self->L, 1));
}

/* PS jobs, jobs not yet active and red switches never lend. */
TEST_F(lend, only_active_ina_heads_lend)
{
	self->j.live_window = 1;
	self->j.state = IA_JOB_CONFIGURING;
	for (int i = 0; i < 10; i++)
		ASSERT_EQ(0, ia_lender_sample(&self->L, &self->j, 1, 0));
	self->j.state = IA_JOB_ACTIVE;
	self->j.class = IA_JOB_PS;
	for (int i = 0; i < 10; i++)
		ASSERT_EQ(0, ia_lender_sample(&self->L, &self->j, 1, 0));
	self->j.class = IA_JOB_INA;
	for (int i = 0; i < 10; i++)
		ASSERT_EQ(0, ia_lender_sample(&self->L, &self->j, 0, 0));
	EXPECT_EQ(0u, self->f.lent[1][1]);
	EXPECT_EQ(0u, self->f.lent[0][1]);
	EXPECT_EQ(NULL, ia_lender_state(&self->L, 1, 1));
}

/* Worker w's report: 0 or the refusal. */
static int rep(FIXTURE_DATA(lend) *self, uint32_t w, uint32_t window)
{
	return ia_lender_report(&self->L, &self->j, w, window, self->err, sizeof(self->err));
}

static uint32_t senders(FIXTURE_DATA(lend) *self, uint32_t *nrep)
{
	return ia_lender_window(&self->L, &self->j, nrep);
}

/* n samples at s1: 0 or the first error. */
static int sample_n(FIXTURE_DATA(lend) *self, int n)
{
	int ret = 0;

	for (int i = 0; i < n && !ret; i++)
		ret = ia_lender_sample(&self->L, &self->j, 1, 0);
	return ret;
}

#define samples(self, n) ASSERT_EQ(0, sample_n(self, n))

/*
 * Every worker's latest report counts and the largest wins; a worker's run
 * end (window 0) says it keeps nothing in flight; when every reporting
 * worker's run ended, the window is 0; with no report at all (none yet, or
 * all expired), the worker window.
 */
TEST_F(lend, window_is_the_largest_report)
{
	uint32_t n = 9;

	EXPECT_EQ(64u, senders(self, &n));
	EXPECT_EQ(0u, n);
	ASSERT_EQ(0, rep(self, 1, 8)) TH_LOG("%s", self->err);
	EXPECT_EQ(8u, senders(self, &n));
	EXPECT_EQ(1u, n);
	ASSERT_EQ(0, rep(self, 3, 20));
	EXPECT_EQ(20u, senders(self, &n));
	EXPECT_EQ(2u, n);
	/* Its latest, not its largest: worker 3 cut to 4, worker 1's 8 is now the largest. */
	ASSERT_EQ(0, rep(self, 3, 4));
	EXPECT_EQ(8u, senders(self, &n));
	EXPECT_EQ(2u, n);
	ASSERT_EQ(0, rep(self, 2, 6));
	EXPECT_EQ(8u, senders(self, &n));
	EXPECT_EQ(3u, n);
	ASSERT_EQ(0, rep(self, 1, 0));
	EXPECT_EQ(6u, senders(self, &n));
	EXPECT_EQ(3u, n);
	ASSERT_EQ(0, rep(self, 2, 0));
	ASSERT_EQ(0, rep(self, 3, 0));
	EXPECT_EQ(0u, senders(self, &n));
	EXPECT_EQ(3u, n);
	EXPECT_EQ(7u, ia_lender_reports(&self->L, 1));
	/* A next run's first report. */
	ASSERT_EQ(0, rep(self, 2, 32));
	EXPECT_EQ(32u, senders(self, &n));
	/* Expired, worker 2's 32: workers 1 and 3's ends stay (0 in flight). */
	self->f.now += IA_LEND_REPORT_TTL_MS + 1;
	EXPECT_EQ(0u, senders(self, &n));
	EXPECT_EQ(2u, n);
	/* Their next runs' reports, forgotten in turn: nobody says, the worker window. */
	ASSERT_EQ(0, rep(self, 1, 4));
	ASSERT_EQ(0, rep(self, 3, 4));
	EXPECT_EQ(4u, senders(self, &n));
	self->f.now += IA_LEND_REPORT_TTL_MS + 1;
	EXPECT_EQ(64u, senders(self, &n));
	EXPECT_EQ(0u, n);
	/* The job's own report (an operator's) is one more: the largest still wins. */
	self->j.live_window = 16;
	EXPECT_EQ(16u, senders(self, NULL));
	ASSERT_EQ(0, rep(self, 1, 40));
	EXPECT_EQ(40u, senders(self, NULL));
	ASSERT_EQ(0, rep(self, 1, 2));
	EXPECT_EQ(16u, senders(self, NULL));
	ASSERT_EQ(0, rep(self, 1, 0));
	EXPECT_EQ(16u, senders(self, NULL));
}

/*
 * A job whose reporting workers' runs all ended lends all but its margin
 * (and what is open) after hold samples, for as long as no run reports
 * again.
 */
TEST_F(lend, ended_runs_lend_the_head)
{
	ASSERT_EQ(0, rep(self, 1, 8));
	ASSERT_EQ(0, rep(self, 2, 8));
	ASSERT_EQ(0, rep(self, 1, 0));
	ASSERT_EQ(0, rep(self, 2, 0));
	samples(self, 5);
	EXPECT_EQ(112u, self->f.lent[1][1]);
	/*
	 * Ended runs' reports do not expire (issue 33): long after them the
	 * head stays lent, to PS jobs still running; the next run's report
	 * (full window) takes it back at once.
	 */
	self->f.now += 10 * IA_LEND_REPORT_TTL_MS;
	samples(self, 1);
	EXPECT_EQ(112u, self->f.lent[1][1]);
	EXPECT_EQ(0u, senders(self, NULL));
	ASSERT_EQ(0, rep(self, 2, 64));
	samples(self, 1);
	EXPECT_EQ(0u, self->f.lent[1][1]);
	/*
	 * A running worker that goes silent does expire: worker 2's 64 leaves
	 * worker 1's end (0); worker 1's 8 gone too, no report: the worker window.
	 */
	self->f.now += IA_LEND_REPORT_TTL_MS + 1;
	EXPECT_EQ(0u, senders(self, NULL));
	ASSERT_EQ(0, rep(self, 1, 8));
	self->f.now += IA_LEND_REPORT_TTL_MS + 1;
	EXPECT_EQ(64u, senders(self, NULL));
}

/* A report counts IA_LEND_REPORT_TTL_MS after it arrived; the same again renews it. */
TEST_F(lend, stale_reports_expire)
{
	uint32_t n;

	ASSERT_EQ(0, rep(self, 1, 32));
	self->f.now += 1500;
	ASSERT_EQ(0, rep(self, 2, 8));
	self->f.now += IA_LEND_REPORT_TTL_MS - 1500;
	EXPECT_EQ(32u, senders(self, &n));
	EXPECT_EQ(2u, n);
	/* Worker 1 went silent (died, or lost the daemon): its 32 is forgotten. */
	self->f.now += 1;
	EXPECT_EQ(8u, senders(self, &n));
	EXPECT_EQ(1u, n);
	/* Worker 2 refreshes its 8: it stays past its first report's age. */
	ASSERT_EQ(0, rep(self, 2, 8));
	self->f.now += IA_LEND_REPORT_TTL_MS;
	EXPECT_EQ(8u, senders(self, &n));
	self->f.now += 1;
	EXPECT_EQ(64u, senders(self, &n));
	EXPECT_EQ(0u, n);
}

/* Refused: a PS job, a window above the worker window, a worker not the job's; nothing changes. */
TEST_F(lend, bad_reports_refused)
{
	uint32_t n;

	ASSERT_EQ(0, rep(self, 1, 8));
	EXPECT_EQ(-EINVAL, rep(self, 1, 65));
	EXPECT_NE(NULL, strstr(self->err, "window 65 above the job's worker window (64)"))
		TH_LOG("%s", self->err);
	EXPECT_EQ(0, rep(self, 1, 64));
	ASSERT_EQ(0, rep(self, 1, 8));
	/* s2's second worker (id 4) is not the job's; nor id 0, nor one beyond every switch. */
	EXPECT_EQ(-ENOENT, rep(self, 4, 8));
	EXPECT_NE(NULL, strstr(self->err, "worker 4 is not one of job 1's")) TH_LOG("%s", self->err);
	EXPECT_EQ(-ENOENT, rep(self, 0, 8));
	EXPECT_EQ(-ENOENT, rep(self, 99, 8));
	EXPECT_EQ(-ENOENT, rep(self, 4, 0));
	EXPECT_EQ(8u, senders(self, &n));
	EXPECT_EQ(1u, n);
	EXPECT_EQ(3u, ia_lender_reports(&self->L, 1));	/* the refused ones not counted */
	self->j.class = IA_JOB_PS;
	EXPECT_EQ(-EINVAL, rep(self, 2, 8));
	EXPECT_NE(NULL, strstr(self->err, "only an INA job has a head to lend"))
		TH_LOG("%s", self->err);
	self->j.class = IA_JOB_INA;
	EXPECT_EQ(8u, senders(self, &n));
	EXPECT_EQ(1u, n);
}


/*
 * The lends follow the largest window: two workers at 8 and 16 lend what 16
 * leaves (128 - 32); the one at 16 ending lets 8 lend more after hold
 * samples; a worker growing to 40 takes it back at the first sample; the
 * job's end forgets every report.
 */
TEST_F(lend, lends_follow_the_largest_report)
{
	ASSERT_EQ(0, rep(self, 1, 8));
	ASSERT_EQ(0, rep(self, 2, 16));
	samples(self, 5);
	EXPECT_EQ(96u, self->f.lent[1][1]);
	ASSERT_EQ(0, rep(self, 2, 0));
	samples(self, 4);
	EXPECT_EQ(96u, self->f.lent[1][1]);
	samples(self, 1);
	EXPECT_EQ(104u, self->f.lent[1][1]);
	ASSERT_EQ(0, rep(self, 3, 40));
	samples(self, 1);
	EXPECT_EQ(72u, self->f.lent[1][1]);
	/* Stale, worker 3's 40 no longer holds the head back: worker 1's 8 does (refreshed). */
	self->f.now += IA_LEND_REPORT_TTL_MS;
	ASSERT_EQ(0, rep(self, 1, 8));
	self->f.now += 1;
	samples(self, 5);
	EXPECT_EQ(104u, self->f.lent[1][1]);
	ASSERT_EQ(0, ia_lender_reclaim_all(&self->L, 1));
	ia_lender_forget(&self->L, 1);
	EXPECT_EQ(64u, senders(self, NULL));
}

/*
 * No congestion, no lend (issue 33): a job with no report, or whose workers
 * report their full worker window (64 of window 128: no mark shrank it),
 * lends nothing however many quiet samples pass; once congestion shrinks
 * the reports to 16 the job lends 128 - (16 + 16) after hold samples, and
 * the first sample back at full window takes it all back.
 */
TEST_F(lend, full_window_lends_nothing)
{
	samples(self, 20);
	EXPECT_EQ(0u, self->f.lent[1][1]);
	ASSERT_EQ(0, rep(self, 1, 64));
	ASSERT_EQ(0, rep(self, 2, 64));
	samples(self, 20);
	EXPECT_EQ(0u, self->f.lent[1][1]);
	EXPECT_EQ(0u, lent(self, 1));
	ASSERT_EQ(0, rep(self, 1, 16));
	ASSERT_EQ(0, rep(self, 2, 16));
	samples(self, 5);
	EXPECT_EQ(96u, self->f.lent[1][1]);
	ASSERT_EQ(0, rep(self, 2, 64));
	samples(self, 1);
	EXPECT_EQ(0u, self->f.lent[1][1]);
	/* The job's own report at the full window counts the same. */
	ASSERT_EQ(0, rep(self, 1, 0));
	ASSERT_EQ(0, rep(self, 2, 0));
	self->j.live_window = 64;
	samples(self, 20);
	EXPECT_EQ(0u, self->f.lent[1][1]);
	/*
	 * No report at all (expired), and the reports of 16 (congestion) long
	 * past: the worker window, nothing lent.
	 */
	self->j.live_window = 0;
	ASSERT_EQ(0, rep(self, 1, 8));
	ASSERT_EQ(0, rep(self, 2, 8));
	self->f.now += IA_LEND_CONGESTED_MS + 1;
	samples(self, 20);
	EXPECT_EQ(0u, self->f.lent[1][1]);
}

/*
 * Congestion seen lately at a switch (issue 33): once an INA job there
 * reported a window below half its worker window, a job with no report yet
 * lends from its worker window (the start of a congested run); its first
 * report at the full window takes it back. Without such a report, or once
 * IA_LEND_CONGESTED_MS passed, or with one cut (half the worker window: a
 * stray mark), a job with no report lends nothing.
 */
TEST_F(lend, congestion_lately_lends_before_reports)
{
	struct ia_job j2 = self->j, j3 = self->j;

	j2.id = 2;
	j3.id = 3;
	samples(self, 20);
	EXPECT_EQ(0u, self->f.lent[1][1]);
	ASSERT_EQ(0, ia_lender_report(&self->L, &j2, 1, 32, self->err, sizeof(self->err)));
	samples(self, 20);
	EXPECT_EQ(0u, self->f.lent[1][1]);
	ASSERT_EQ(0, ia_lender_report(&self->L, &j2, 1, 31, self->err, sizeof(self->err)));
	samples(self, 4);
	EXPECT_EQ(0u, self->f.lent[1][1]);
	samples(self, 1);
	EXPECT_EQ(128u - 80, self->f.lent[1][1]);
	/* Not on s0 (red for these jobs), and s2 saw it too (j2 is blue there). */
	EXPECT_EQ(0u, self->L.congested_ms[0]);
	EXPECT_EQ(self->f.now, self->L.congested_ms[2]);
	ASSERT_EQ(0, rep(self, 1, 64));
	samples(self, 1);
	EXPECT_EQ(0u, self->f.lent[1][1]);
	/* Long after the congested report: a new job with no report lends nothing. */
	self->f.now += IA_LEND_CONGESTED_MS + 1;
	for (int i = 0; i < 20; i++)
		ASSERT_EQ(0, ia_lender_sample(&self->L, &j3, 1, 0));
	EXPECT_EQ(0u, self->f.lent[1][3]);
	/* The rule alone. */
	EXPECT_TRUE(ia_lend_congested(31, 64));
	EXPECT_FALSE(ia_lend_congested(32, 64));
	EXPECT_FALSE(ia_lend_congested(0, 64));
	EXPECT_FALSE(ia_lend_full(64, 64, false, true));
	EXPECT_TRUE(ia_lend_full(64, 64, false, false));
	EXPECT_TRUE(ia_lend_full(64, 64, true, true));
	EXPECT_FALSE(ia_lend_full(63, 64, true, false));
}

TEST_HARNESS_MAIN
