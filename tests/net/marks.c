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
#include <libgen.h>
#include <limits.h>

#include <json-c/json.h>

#include "kselftest_harness.h"
#include "../livenet.h"

#define CHUNKS 400

static const char fig1[] =
	"{\"switches\": ["
	"{\"name\": \"s0\", \"parent\": null, \"capacity\": 2},"
	"{\"name\": \"s1\", \"parent\": \"s0\", \"capacity\": 2},"
	"{\"name\": \"s2\", \"parent\": \"s0\", \"capacity\": 2},"
	"{\"name\": \"s3\", \"parent\": \"s1\", \"load\": 2, \"capacity\": 2},"
	"{\"name\": \"s4\", \"parent\": \"s1\", \"load\": 6, \"capacity\": 2},"
	"{\"name\": \"s5\", \"parent\": \"s2\", \"load\": 5, \"capacity\": 2},"
	"{\"name\": \"s6\", \"parent\": \"s2\", \"load\": 5, \"capacity\": 2}]}";

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
	ASSERT_EQ(0, env_up(&self->e, fig1, variant->rate_mbit, false));
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
	ASSERT_EQ(0, r->ps.rc) TH_LOG("destination: %s", r->ps.err);
	ASSERT_EQ(r->expected, r->ps.checksum);
	for (int i = 0; i < r->nworkers; i++) {
		ASSERT_EQ(0, r->w[i].rc) TH_LOG("worker %d: %s", i, r->w[i].err);
		ASSERT_EQ(r->expected, r->w[i].checksum) TH_LOG("worker %d", i);
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

int main(int argc, char **argv)
{
	char exe[PATH_MAX];
	ssize_t len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (len <= 0)
		return 1;
	exe[len] = '\0';
	/* build/tests/net/marks -> build */
	snprintf(build, sizeof(build), "%s", dirname(dirname(dirname(exe))));
	return test_harness_run(argc, argv);
}
