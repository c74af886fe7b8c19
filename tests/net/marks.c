// SPDX-License-Identifier: GPL-2.0
/*
 * Congestion marks in the whole system (docs/cc.md): "inagg net up --attach
 * --rate-mbit R --mark-kb K" gives every switch's uplink a virtual queue at
 * its rate; a job placed by inaggd runs an allreduce through the XDP
 * datapath. With uplinks far slower than the load, switches mark, blue
 * switches carry the marks in their aggregates, the PS reflects them in
 * results and every worker counts marked results; with uplinks far faster,
 * no worker sees one. Every result stays exact either way.
 *
 * Namespaces: ia-<tag>-*, tag "l<pid>"; the teardown removes them (and kills
 * the daemon it started, by PID).
 */
#include <json-c/json.h>

#include "kselftest_harness.h"
#include "livetest.h"

#define CHUNKS 400

FIXTURE(mk) {
	struct env e;
};

FIXTURE_VARIANT(mk) {
	double rate_mbit;	/* per unit of link rate (Fig. 1: 1) */
	const char *up_args;
	bool marks;
};

/* 1 Mbit/s uplinks: 400 chunks of 18 workers offer far more. */
FIXTURE_VARIANT_ADD(mk, slow_uplinks) {
	.rate_mbit = 1, .up_args = "--mark-kb 16", .marks = true,
};

/* 100 Gbit/s uplinks: no burst this machine makes fills 256 KiB in 21 us. */
FIXTURE_VARIANT_ADD(mk, fast_uplinks) {
	.rate_mbit = 100000, .up_args = "--mark-kb 256", .marks = false,
};

FIXTURE_SETUP(mk)
{
	self->e.up_args = variant->up_args;
	ASSERT_EQ(0, env_up(&self->e, live_fig1, variant->rate_mbit, false));
}

FIXTURE_TEARDOWN(mk)
{
	env_down(&self->e);
}

TEST_F_TIMEOUT(mk, marked_results_only_above_the_rate, 300)
{
	json_object *resp = request(&self->e, "{\"cmd\": \"submit\", \"k\": 2}");
	struct run *r = new_run();
	uint64_t marks = 0;

	ASSERT_NE(NULL, resp);
	ASSERT_NE(NULL, r);
	ASSERT_EQ(0, allreduce(&self->e, get(resp, "job"), CHUNKS, r, NULL, NULL, NULL));
	live_check_exact(_metadata, r);
	for (int i = 0; i < r->nworkers; i++) {
		marks += r->wst[i].marks;
		if (variant->marks) {
			/* Results reach every worker: each sees marked ones. */
			ASSERT_LT(0ull, (unsigned long long)r->wst[i].marks) TH_LOG("worker %d", i);
		} else {
			ASSERT_EQ(0ull, (unsigned long long)r->wst[i].marks) TH_LOG("worker %d", i);
		}
	}
	printf("# %d workers, %d chunks: %llu marked results in all\n", r->nworkers, CHUNKS,
	       (unsigned long long)marks);
	fflush(stdout);
	json_object_put(resp);
}

LIVE_TEST_MAIN
