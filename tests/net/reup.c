// SPDX-License-Identifier: GPL-2.0
/*
 * A network set up again under its running daemon: "inagg net down" and
 * "inagg net up --attach" while inaggd runs give every switch a new
 * namespace, new veths (new MACs), new pinned maps and programs. What the
 * daemon and its agents kept of the old ones (a map handle, a namespace
 * entered for good, learnt peer MACs) must not outlive them: the switches
 * are seen set up again, as a rebooted router is, and the next jobs run
 * exact on the new network, tails included.
 *
 * Namespaces: ia-<tag>-*, tag "l<pid>"; the teardown removes them and stops
 * the daemon it started, by PID.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#pragma GCC diagnostic ignored "-Wsign-compare"
#include "kselftest_harness.h"
#include "livetest.h"
#include "netns.h"
#include "xdp.h"

#define CHUNKS 200

static const char topo3[] = "{\"switches\": ["
	"{\"name\": \"s0\", \"parent\": null, \"capacity\": 2},"
	"{\"name\": \"s1\", \"parent\": \"s0\", \"load\": 2, \"capacity\": 2},"
	"{\"name\": \"s2\", \"parent\": \"s0\", \"load\": 2, \"capacity\": 2}]}";

LIVE_FIXTURE(net, topo3, 0, false)

/* Bounded: a job configured on the old network's maps fails, it does not hang the test. */
static const struct ia_worker_cfg wtmpl = { .timeout_ms = 300, .retries = 30 };

/* Switch v's tail programs are loaded in the maps pinned now. */
static int tail_loaded(struct env *e, int v)
{
	struct ia_xdp_tail_info ti;
	struct ia_xdp *x;
	char ns[64];
	int ret, h;

	snprintf(ns, sizeof(ns), "ia-%s-s%d", e->tag, v);
	h = ia_netns_enter(ns);
	if (h < 0)
		return h;
	ret = ia_xdp_open_existing(ns, &x, NULL, 0);
	ia_netns_return(h);
	if (ret)
		return ret;
	ret = ia_xdp_tail_info(x, &ti);
	ia_xdp_close(x);
	return ret ? ret : (int)ti.loaded;
}

/* A job of class cls (k 3: every switch) runs exact, and ends. */
static void run_job(struct __test_metadata *_metadata, struct env *e, const char *cls,
		    const char *when)
{
	json_object *resp = request(e, "{\"cmd\": \"submit\", \"k\": 3, \"class\": \"%s\"}", cls);
	struct run *r = new_run();
	uint32_t id;

	ASSERT_NE(NULL, resp) TH_LOG("%s: %s job refused (see %s/inaggd.log)", when, cls, e->dir);
	ASSERT_NE(NULL, r);
	id = json_object_get_int64(get(resp, "job.job"));
	for (int v = 0; !strcmp(cls, "ps") && v < 3; v++) {
		EXPECT_EQ(1, tail_loaded(e, v)) TH_LOG("%s: s%d's pinned tail", when, v);
	}
	ASSERT_EQ(0, allreduce(e, get(resp, "job"), CHUNKS, r, NULL, &wtmpl, NULL));
	live_check_exact(_metadata, r);
	EXPECT_EQ(NULL, get(resp, "job.failed"));
	json_object_put(request(e, "{\"cmd\": \"end\", \"job\": %u}", id));
	json_object_put(resp);
	munmap(r, sizeof(*r));
}

TEST_F_TIMEOUT(net, set_up_again_under_the_daemon, 300)
{
	struct env *e = &self->e;

	run_job(_metadata, e, "ps", "before");
	run_job(_metadata, e, "ina", "before");
	ASSERT_EQ(0, sh("%s/inagg net down -n %s -t %s >/dev/null", build, e->tag, e->topo));
	ASSERT_EQ(0, sh("%s/inagg net up -t %s -n %s --attach >/dev/null", build, e->topo,
			e->tag));
	run_job(_metadata, e, "ps", "set up again");
	run_job(_metadata, e, "ina", "set up again");
	/* The daemon is still the network's. */
	ASSERT_EQ(0, kill(e->daemon, 0));
}

LIVE_TEST_MAIN
