// SPDX-License-Identifier: GPL-2.0
/*
 * Multi-tenant switch memory live (issue 16, acceptance): on the paper's
 * Fig. 1 network, one INA job and three PS jobs admitted together share
 * switches whose slots cover half of their demand, every host's traffic
 * lossy (5 % loss and duplication on every host link both ways, 5 % loss,
 * duplication and reordering of every host's own sends):
 *  - every worker of every job gets the exact sum;
 *  - the PS jobs aggregate in the tails: non-zero tail claims, hits and
 *    collisions;
 *  - per link, what left a switch's uplink is what its counters say its
 *    jobs emitted, flushed and forwarded there, and what arrived at the
 *    other end of the link.
 * The INA job lends part of its head while its senders' window is small
 * and takes it all back when it grows to its full worker window, so the
 * run also draws the memory picture of docs/memory.md: its history is
 * written to $INAGG_MEMORY_HISTORY (default
 * build/test-logs/memory-history.json) for `make memory-plot`.
 *
 * A host runs one job at a time (one UDP port per address, and a job uses
 * the first workers of each switch): the four jobs are admitted at once and
 * hold the switches' memory together, and run their allreduces in turn.
 *
 * Namespaces: ia-<tag>-*, tag "l<pid>"; the teardown removes them.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>

#include <json-c/json.h>

#include "kselftest_harness.h"
#include "livetest.h"
#include "../impair/impair.h"
#include "ledger.h"
#include "netns.h"
#include "netplan.h"
#include "xdp.h"

#define CHUNKS 400
#define NSW 7

/*
 * Demand: the INA job's head of 64 slots on each of its two blue switches
 * (s2 and s4, SMC's with k = 2: the only ones with room for it), and 16
 * chunks in flight of each of the three PS jobs (window 32) at each of the
 * 7 switches: 128 + 336 = 464 slots. The switches have 232 together.
 */
static const char fig1_half[] =
	"{\"switches\": ["
	"{\"name\": \"s0\", \"parent\": null, \"capacity\": 4, \"slots\": 16},"
	"{\"name\": \"s1\", \"parent\": \"s0\", \"capacity\": 4, \"slots\": 18},"
	"{\"name\": \"s2\", \"parent\": \"s0\", \"capacity\": 4, \"slots\": 72},"
	"{\"name\": \"s3\", \"parent\": \"s1\", \"load\": 2, \"capacity\": 4, \"slots\": 18},"
	"{\"name\": \"s4\", \"parent\": \"s1\", \"load\": 6, \"capacity\": 4, \"slots\": 72},"
	"{\"name\": \"s5\", \"parent\": \"s2\", \"load\": 5, \"capacity\": 4, \"slots\": 18},"
	"{\"name\": \"s6\", \"parent\": \"s2\", \"load\": 5, \"capacity\": 4, \"slots\": 18}]}";
static const int parent[NSW] = { -1, 0, 0, 1, 1, 2, 2 };

LIVE_FIXTURE(mt, fig1_half, 0, false)

static struct ia_host_faults faults;

/* Reports the INA job's window and waits (20 s at most) until s2 and s4 lend want. */
static bool window_lends(struct env *e, uint32_t id, int window, long long want)
{
	json_object_put(request(e, "{\"cmd\": \"window\", \"job\": %u, \"window\": %d}", id,
				window));
	for (int i = 0; i < 200; i++) {
		if (live_ledger_lent(e->tag, 2, id) == want &&
		    live_ledger_lent(e->tag, 4, id) == want)
			return true;
		usleep(100000);
	}
	return false;
}

/* Inagg messages received on port ifname of switch v's namespace. */
static long long port_rx(struct env *e, int v, const char *ifname)
{
	struct ia_counters c;
	struct ia_xdp *x = NULL;
	int h, ifindex;
	unsigned char mac[6];
	char ns[64];
	long long n = -1;

	snprintf(ns, sizeof(ns), "ia-%s-s%d", e->tag, v);
	h = ia_netns_enter(ns);
	if (h < 0)
		return -1;
	if (!ia_if_info(ifname, &ifindex, mac) && !ia_xdp_open_existing(ns, &x, NULL, 0) &&
	    !ia_xdp_port_counters(x, ifindex, &c))
		n = c.c[IA_C_RX];
	ia_xdp_close(x);
	ia_netns_return(h);
	return n;
}

static long long counter(json_object *link, const char *name)
{
	json_object *v = get(link, "counters");

	return v && json_object_object_get_ex(v, name, &v) ? json_object_get_int64(v) : 0;
}

/* The number at path of o (json_get.h's get()); 0 if none. */
static long long num(json_object *o, const char *path)
{
	json_object *v = get(o, path);

	return v ? json_object_get_int64(v) : 0;
}

/*
 * An allreduce of job (the daemon's record), its senders keeping window
 * chunks in flight; a job run again goes on after its last chunk (its
 * switches keep their last chunks, a chunk number never comes back).
 */
static void run_job(struct __test_metadata *_metadata, struct env *e, json_object *job,
		    int window, int seed)
{
	struct run *r = new_run();
	long long runs = num(job, "runs");

	ASSERT_NE(NULL, r);
	json_object_object_add(job, "base_seq", json_object_new_int64(runs * CHUNKS));
	json_object_object_add(job, "runs", json_object_new_int64(runs + 1));
	if (window)
		json_object_object_add(job, "worker_window", json_object_new_int64(window));
	faults.seed = seed;
	ASSERT_EQ(0, allreduce(e, job, CHUNKS, r, &faults, NULL, NULL));
	live_check_exact(_metadata, r);
	TH_LOG("job %u (%s, window %d): %.2f s", r->job,
	       json_object_get_string(get(job, "class")),
	       (int)json_object_get_int64(get(job, "worker_window")), r->seconds);
	munmap(r, sizeof(*r));
}

/* The daemon's memory history, for make memory-plot. */
static void save_history(struct env *e)
{
	const char *path = getenv("INAGG_MEMORY_HISTORY");
	char def[PATH_MAX + 64];
	json_object *st = request(e, "{\"cmd\": \"stats\", \"history\": 4096}");
	FILE *f;

	if (!path) {
		snprintf(def, sizeof(def), "%s/test-logs", build);
		mkdir(def, 0755);	/* run alone, not by scripts/run-tests.sh */
		snprintf(def, sizeof(def), "%s/test-logs/memory-history.json", build);
		path = def;
	}
	if (!st || !(f = fopen(path, "w"))) {
		json_object_put(st);
		return;
	}
	fputs(json_object_to_json_string_ext(get(st, "memory"), JSON_C_TO_STRING_PLAIN), f);
	fputc('\n', f);
	fclose(f);
	json_object_put(st);
}

TEST_F_TIMEOUT(mt, ina_and_ps_jobs_share_half_the_memory_exactly, 1200)
{
	json_object *job[4], *st, *links, *workers;
	struct impair im[LIVE_MAXW + 1];
	struct impair_counts sum = { 0 };
	uint32_t id[4];
	long long hits = 0, colls = 0, claims = 0, tx_total[NSW] = { 0 }, job_tx[NSW] = { 0 };
	int nim;

	job[0] = request(&self->e, "{\"cmd\": \"submit\", \"k\": 2, \"class\": \"ina\","
			 " \"head\": 64, \"window\": 64}");
	ASSERT_NE(NULL, job[0]);
	ASSERT_STREQ("[ \"s2\", \"s4\" ]", json_object_to_json_string(get(job[0], "job.blue")));
	for (int i = 1; i < 4; i++) {
		job[i] = request(&self->e, "{\"cmd\": \"submit\", \"k\": 2, \"class\": \"ps\","
				 " \"window\": 32}");
		ASSERT_NE(NULL, job[i]);
		ASSERT_EQ(NSW, (int)json_object_array_length(get(job[i], "job.tails")));
		ASSERT_EQ(18 + NSW,
			  (int)json_object_array_length(get(job[i], "job.destination.members")));
	}
	for (int i = 0; i < 4; i++)
		id[i] = json_object_get_int64(get(job[i], "job.job"));

	/* Every host impaired: the 18 workers (all four jobs use them all) and the PS. */
	workers = get(job[0], "job.workers");
	nim = json_object_array_length(workers) + 1;
	ASSERT_EQ(19, nim);
	for (int i = 0; i < nim; i++) {
		const char *ns = i < nim - 1 ?
			json_object_get_string(get(json_object_array_get_idx(workers, i), "netns")) :
			json_object_get_string(get(job[0], "job.destination.netns"));

		ASSERT_EQ(0, impair_attach(&im[i], ns, "eth0", 300 + i)) TH_LOG("%s", ns);
		impair_set(&im[i], 50000, 50000);
	}
	faults = (struct ia_host_faults){ .loss_ppm = 50000, .dup_ppm = 50000,
					  .reorder_ppm = 50000 };

	/* The INA job's senders slow (4 in flight): it lends 64 - (4 + 8) slots of each head. */
	ASSERT_TRUE(window_lends(&self->e, id[0], 4, 52));
	for (int i = 1; i < 4; i++)
		run_job(_metadata, &self->e, get(job[i], "job"), 0, 10 + i);
	run_job(_metadata, &self->e, get(job[0], "job"), 4, 20);
	/*
	 * Its window grows to all 32, its full worker window (not slowed, issue
	 * 33): it takes all 52 back at once, then runs at full window.
	 */
	ASSERT_TRUE(window_lends(&self->e, id[0], 32, 0));
	run_job(_metadata, &self->e, get(job[0], "job"), 32, 21);
	/* And a PS job once more, with nothing lent. */
	run_job(_metadata, &self->e, get(job[1], "job"), 0, 30);
	usleep(500000);	/* a few more samples of the quiet end */

	impair_destroy_all(im, nim, &sum);
	EXPECT_LT(0U, sum.dropped);
	EXPECT_LT(0U, sum.cloned);

	/* Per job: tail counters; per switch, what its jobs sent up. */
	for (int i = 0; i < 4; i++) {
		st = request(&self->e, "{\"cmd\": \"stats\", \"job\": %u}", id[i]);
		ASSERT_NE(NULL, st);
		if (i) {
			hits += json_object_get_int64(get(st, "tail.tail_hits"));
			colls += json_object_get_int64(get(st, "tail.tail_collisions"));
			claims += json_object_get_int64(get(st, "tail.tail_claims"));
		}
		links = get(st, "links");
		for (size_t l = 0; l < json_object_array_length(links); l++) {
			json_object *o = json_object_array_get_idx(links, l);
			int v = atoi(json_object_get_string(get(o, "switch")) + 1);

			job_tx[v] += counter(o, "emitted") + counter(o, "reemitted") +
				     counter(o, "forwarded") + counter(o, "tail_flushes");
		}
		json_object_put(st);
	}
	TH_LOG("PS jobs: %lld tail claims, %lld hits, %lld collisions", claims, hits, colls);

	/*
	 * Per link: the uplink's port sent what the switch's jobs emitted,
	 * flushed and forwarded there, and the other end received it.
	 */
	st = request(&self->e, "{\"cmd\": \"stats\"}");
	ASSERT_NE(NULL, st);
	links = get(st, "links");
	for (int v = 0; v < NSW; v++) {
		json_object *o = json_object_array_get_idx(links, v);
		char down[16];

		tx_total[v] = json_object_get_int64(get(o, "sent_up")) +
			      json_object_get_int64(get(o, "resent_up"));
		EXPECT_EQ(job_tx[v], tx_total[v]) TH_LOG("s%d: jobs' counters vs its uplink", v);
		EXPECT_EQ(0, (int)json_object_object_length(get(o, "dropped"))) TH_LOG("s%d", v);
		if (parent[v] < 0)
			continue;
		ia_port_name(IA_PORT_CHILD, v - 2 * parent[v] - 1, down);
		EXPECT_EQ(tx_total[v], port_rx(&self->e, parent[v], down))
			TH_LOG("link s%d -> s%d", v, parent[v]);
	}
	/* The INA job lent on both its switches, and took back. */
	EXPECT_EQ(1, num(st, "memory.switches.2.tail.lends"));
	EXPECT_EQ(1, num(st, "memory.switches.2.tail.reclaims"));
	EXPECT_EQ(1, num(st, "memory.switches.4.tail.lends"));
	EXPECT_EQ(0, num(st, "memory.switches.4.lent_slots"));
	json_object_put(st);
	save_history(&self->e);
	for (int i = 0; i < 4; i++) {
		json_object_put(request(&self->e, "{\"cmd\": \"end\", \"job\": %u}", id[i]));
		json_object_put(job[i]);
	}
	/* The PS jobs aggregate in the tails: the feature itself. */
	EXPECT_LT(0, claims) TH_LOG("PS jobs: no tail claim");
	EXPECT_LT(0, hits) TH_LOG("PS jobs: no tail hit");
	EXPECT_LT(0, colls) TH_LOG("PS jobs: no tail collision");
}

LIVE_TEST_MAIN
