/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the kselftest programs on a live network (tests/net/live.c,
 * tenants.c, marks.c, inaggd.c, wordcount.c) share beyond tests/livenet.h,
 * which benchmarks use too: the paper's Fig. 1, a fixture holding one
 * network and its daemon, a switch's ledger entry, the exactness check and
 * main(). Include after kselftest_harness.h.
 */
#ifndef INAGG_TESTS_NET_LIVETEST_H
#define INAGG_TESTS_NET_LIVETEST_H

#include "../livenet.h"
#include "ledger.h"

/* The paper's Fig. 1 (docs/fig1.json, rate 1), every switch able to take two jobs. */
static const char live_fig1[] =
	"{\"switches\": ["
	"{\"name\": \"s0\", \"parent\": null, \"capacity\": 2},"
	"{\"name\": \"s1\", \"parent\": \"s0\", \"capacity\": 2},"
	"{\"name\": \"s2\", \"parent\": \"s0\", \"capacity\": 2},"
	"{\"name\": \"s3\", \"parent\": \"s1\", \"load\": 2, \"capacity\": 2},"
	"{\"name\": \"s4\", \"parent\": \"s1\", \"load\": 6, \"capacity\": 2},"
	"{\"name\": \"s5\", \"parent\": \"s2\", \"load\": 5, \"capacity\": 2},"
	"{\"name\": \"s6\", \"parent\": \"s2\", \"load\": 5, \"capacity\": 2}]}";

/*
 * Fixture name: the network of topology json built for each test, with its
 * daemon (self->e), uplinks at rate_mbit per unit of rate (0: no limit),
 * upward messages through the kernel if kernel_fwd; torn down after it.
 */
#define LIVE_FIXTURE(name, json, rate_mbit, kernel_fwd)				\
	FIXTURE(name) {								\
		struct env e;							\
	};									\
	FIXTURE_SETUP(name)							\
	{									\
		ASSERT_EQ(0, env_up(&self->e, json, rate_mbit, kernel_fwd));	\
	}									\
	FIXTURE_TEARDOWN(name)							\
	{									\
		env_down(&self->e);						\
	}

/* Job id's lent head slots in the ledger of switch sV of network tag; -1 if it holds no entry. */
static inline long long live_ledger_lent(const char *tag, int v, uint32_t id)
{
	struct ia_ledger_job lj;
	struct ia_ledger *l;
	char ns[64];
	int ret;

	snprintf(ns, sizeof(ns), "ia-%s-s%d", tag, v);
	if (ia_ledger_open(&l, IA_LEDGER_AUTO, ns))
		return -1;
	ret = ia_ledger_job(l, id, &lj, NULL, 0);
	ia_ledger_close(l);
	return ret ? -1 : (long long)lj.lent;
}

/* The destination and every worker of r succeeded with the exact sum. */
static inline void live_check_exact(struct __test_metadata *_metadata, const struct run *r)
{
	EXPECT_EQ(0, r->ps.rc) TH_LOG("job %u destination: %s", r->job, r->ps.err);
	EXPECT_EQ(r->expected, r->ps.checksum) TH_LOG("job %u destination", r->job);
	for (int i = 0; i < r->nworkers; i++) {
		EXPECT_EQ(0, r->w[i].rc) TH_LOG("job %u worker %d: %s", r->job, i, r->w[i].err);
		EXPECT_EQ(r->expected, r->w[i].checksum) TH_LOG("job %u worker %d", r->job, i);
	}
}

/* main(): the build directory from the program's path (build/tests/net/P), then the tests. */
#define LIVE_TEST_MAIN								\
	int main(int argc, char **argv)						\
	{									\
		if (live_find_build())						\
			return 1;						\
		return test_harness_run(argc, argv);				\
	}

#endif
