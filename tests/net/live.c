// SPDX-License-Identifier: GPL-2.0
/*
 * The whole system on a live network: "inagg net up --attach" builds the
 * paper's Fig. 1 tree in namespaces, inaggd places and configures jobs, real
 * workers and a destination run allreduces through the XDP datapath, and the
 * switches' counters are checked against the congestion model.
 *
 * Namespaces: ia-<tag>-*, tag "l<pid>"; the teardown removes them (and kills
 * the daemon it started, by PID).
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
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>

#include <json-c/json.h>

#include "kselftest_harness.h"
#include "livetest.h"
#include "../impair/impair.h"
#include "plan.h"

#define CHUNKS 1000

LIVE_FIXTURE(net, live_fig1, 0, false)

/* Impairment of every host's sends in the next allreduce (seeded per host). */
static struct ia_host_faults faults;

/*
 * Workers wait at least 300 ms before a resend by timer: the model checks
 * count every message, and a busy 2-CPU machine pauses the hosts for many
 * milliseconds at times (a resend there would re-emit an aggregate).
 */
static const struct ia_worker_cfg wtmpl = { .timeout_ms = 300, .retries = 200 };

/* Measured messages per chunk on every link equal the model; congestion as given. */
static void check_model(struct __test_metadata *_metadata, struct env *self,
			uint32_t job, int chunks, double congestion)
{
	json_object *st = request(self, "{\"cmd\": \"stats\", \"job\": %u, \"chunks\": %d}", job,
				  chunks);
	json_object *links;

	ASSERT_NE(NULL, st);
	links = get(st, "links");
	ASSERT_NE(NULL, links);
	ASSERT_LT(0, (int)json_object_array_length(links));
	for (size_t i = 0; i < json_object_array_length(links); i++) {
		json_object *l = json_object_array_get_idx(links, i);

		EXPECT_EQ(json_object_get_double(get(l, "model_messages")),
			  json_object_get_double(get(l, "messages_per_chunk")))
			TH_LOG("job %u switch %s", job, json_object_get_string(get(l, "switch")));
	}
	EXPECT_EQ(congestion, json_object_get_double(get(st, "congestion")));
	EXPECT_EQ(congestion, json_object_get_double(get(st, "model_congestion")));
	json_object_put(st);
}

TEST_F_TIMEOUT(net, fig1_every_placement_exact_and_as_modelled, 600)
{
	static const struct {
		const char *algo;
		double congestion;
	} cases[] = { { "smc", 5 }, { "top", 8 }, { "max", 9 }, { "level", 6 }, { "all-red", 18 } };
	long long sent[7] = { 0 };	/* up each switch's uplink, all five jobs */
	json_object *links;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		json_object *resp = request(&self->e,
					    "{\"cmd\": \"submit\", \"k\": 2, \"algorithm\": \"%s\"}",
					    cases[i].algo);
		struct run *r = new_run();
		uint32_t id;

		ASSERT_NE(NULL, resp);
		id = json_object_get_int64(get(resp, "job.job"));
		ASSERT_EQ(cases[i].congestion, json_object_get_double(get(resp, "job.congestion")));
		ASSERT_EQ(0, allreduce(&self->e, get(resp, "job"), CHUNKS, r, &faults, &wtmpl,
				       NULL));
		live_check_exact(_metadata, r);
		check_model(_metadata, &self->e, id, CHUNKS, cases[i].congestion);
		/* Without the caller's count the daemon finds it from the root's counters. */
		json_object *st = request(&self->e, "{\"cmd\": \"stats\", \"job\": %u}", id);

		ASSERT_NE(NULL, st);
		EXPECT_EQ(CHUNKS, json_object_get_int64(get(st, "chunks")));
		json_object_put(st);
		links = get(resp, "job.links");
		for (size_t l = 0; l < json_object_array_length(links); l++) {
			json_object *o = json_object_array_get_idx(links, l);
			const char *sw = json_object_get_string(get(o, "switch"));

			sent[atoi(sw + 1)] += CHUNKS * json_object_get_int64(get(o, "messages"));
			/* None aggregates in a tail: all-red is the reference, the others INA. */
			EXPECT_STRNE("tail", json_object_get_string(get(o, "role")))
				TH_LOG("%s: switch %s", cases[i].algo, sw);
		}
		json_object_put(request(&self->e, "{\"cmd\": \"end\", \"job\": %u}", id));
		json_object_put(resp);
		munmap(r, sizeof(*r));
	}
	/* Per link, all jobs: each uplink's port sent what the five models add up to. */
	json_object *st = request(&self->e, "{\"cmd\": \"stats\"}");

	ASSERT_NE(NULL, st);
	links = get(st, "links");
	ASSERT_EQ(7, (int)json_object_array_length(links));
	for (int v = 0; v < 7; v++) {
		json_object *o = json_object_array_get_idx(links, v);

		EXPECT_EQ(sent[v], json_object_get_int64(get(o, "sent_up")))
			TH_LOG("%s", json_object_get_string(get(o, "switch")));
		EXPECT_EQ(0, (int)json_object_object_length(get(o, "dropped")));
	}
	json_object_put(st);
}

static void kill_and_restart(struct env *self, struct run *r)
{
	usleep(20000);
	stop_daemon(self, SIGKILL);
	r->running_at_kill = 0;
	for (int i = 0; i < r->nworkers; i++)
		r->running_at_kill += r->w[i].checksum == ~0ULL;
	usleep(200000);
	self->daemon = start_daemon(self);
}

TEST_F_TIMEOUT(net, daemon_sigkill_mid_run, 300)
{
	json_object *resp = request(&self->e, "{\"cmd\": \"submit\", \"k\": 2}"), *list;
	struct run *r = new_run();

	ASSERT_NE(NULL, resp);
	/* Long enough that the daemon dies while every worker is still sending. */
	ASSERT_EQ(0, allreduce(&self->e, get(resp, "job"), 5 * CHUNKS, r, &faults, &wtmpl,
			       kill_and_restart));
	ASSERT_LT(0, self->e.daemon) TH_LOG("daemon did not come back");
	EXPECT_EQ(r->nworkers, r->running_at_kill);
	live_check_exact(_metadata, r);
	/* The restarted daemon knows the job and still ends it cleanly. */
	list = request(&self->e, "{\"cmd\": \"list\"}");
	ASSERT_NE(NULL, list);
	ASSERT_EQ(1, (int)json_object_array_length(get(list, "jobs")));
	check_model(_metadata, &self->e, r->job, 5 * CHUNKS, 5);
	json_object_put(list);
	json_object_put(request(&self->e, "{\"cmd\": \"end\", \"job\": %u}", r->job));
	json_object_put(resp);
}

/*
 * Loss, duplication and reordering: 5 % loss and 5 % duplication on every
 * host link both ways (tc programs of tests/impair/), and 5 % each of loss,
 * duplication and reordering of every host's own sends: results still exact
 * at every worker, through blue switches that see duplicates and re-emit
 * stored aggregates.
 */
TEST_F_TIMEOUT(net, lossy_hosts_still_exact, 300)
{
	json_object *resp = request(&self->e, "{\"cmd\": \"submit\", \"k\": 2}"), *st, *links;
	struct run *r = new_run();
	long long dups = 0, reemitted = 0;
	struct impair im[LIVE_MAXW + 1];
	struct impair_counts sum = { 0 };
	json_object *workers;
	int nim;

	ASSERT_NE(NULL, resp);
	workers = get(resp, "job.workers");
	nim = json_object_array_length(workers) + 1;
	ASSERT_GE(LIVE_MAXW + 1, nim);
	for (int i = 0; i < nim; i++) {
		const char *ns = i < nim - 1 ?
			json_object_get_string(get(json_object_array_get_idx(workers, i), "netns")) :
			json_object_get_string(get(resp, "job.destination.netns"));

		ASSERT_EQ(0, impair_attach(&im[i], ns, "eth0", 100 + i)) TH_LOG("%s", ns);
		impair_set(&im[i], 50000, 50000);
	}
	faults = (struct ia_host_faults){ .loss_ppm = 50000, .dup_ppm = 50000,
					  .reorder_ppm = 50000, .seed = 1 };
	/* The library's timeouts: nothing here counts messages. */
	ASSERT_EQ(0, allreduce(&self->e, get(resp, "job"), CHUNKS, r, &faults, NULL, NULL));
	impair_destroy_all(im, nim, &sum);
	live_check_exact(_metadata, r);
	EXPECT_LT(0U, sum.dropped);
	EXPECT_LT(0U, sum.cloned);
	st = request(&self->e, "{\"cmd\": \"stats\", \"job\": %u, \"chunks\": %d}", r->job,
		     CHUNKS);
	ASSERT_NE(NULL, st);
	links = get(st, "links");
	for (size_t i = 0; i < json_object_array_length(links); i++) {
		json_object *l = json_object_array_get_idx(links, i);

		if (strcmp(json_object_get_string(get(l, "role")), "blue"))
			continue;
		dups += json_object_get_int64(get(l, "duplicates"));
		/* One aggregate per chunk; re-emissions for retransmissions apart. */
		EXPECT_EQ(CHUNKS, json_object_get_int64(get(l, "sent_up")));
		reemitted += json_object_get_int64(get(l, "resent_up"));
	}
	EXPECT_LT(0, dups);
	EXPECT_LT(0, reemitted);
	json_object_put(st);
	json_object_put(request(&self->e, "{\"cmd\": \"end\", \"job\": %u}", r->job));
	json_object_put(resp);
}

/*
 * Retransmissions are loss recovery, not model messages: after an exact run,
 * every worker re-sends its last chunk flagged IA_F_RETX (as a timeout that
 * fired too early would). Red switches forward them and blue ones re-emit
 * stored aggregates, counted as resent; the messages compared with the
 * model, and the chunks found from the root, do not change.
 */
TEST_F_TIMEOUT(net, retransmissions_counted_apart_from_model, 300)
{
	json_object *resp = request(&self->e, "{\"cmd\": \"submit\", \"k\": 2}"), *st, *links;
	struct run *r = new_run();
	long long resent = 0;

	ASSERT_NE(NULL, resp);
	ASSERT_EQ(0, allreduce(&self->e, get(resp, "job"), CHUNKS, r, NULL, &wtmpl, NULL));
	live_check_exact(_metadata, r);
	for (int i = 0; i < r->nworkers; i++) {
		json_object *w = json_object_array_get_idx(get(resp, "job.workers"), i);
		struct {
			struct ia_hdr h;
			int32_t v[IA_CHUNK_DEFAULT];
		} __attribute__((packed)) m = { 0 };
		struct sockaddr_in ps = { .sin_family = AF_INET, .sin_port = htons(IA_UDP_PORT) };
		pid_t pid = fork();

		ASSERT_LE(0, pid);
		if (pid == 0) {
			int fd;

			inet_pton(AF_INET, json_object_get_string(get(resp, "job.destination.address")),
				  &ps.sin_addr);
			ia_hdr_fill(&m.h, IA_MSG_CONTRIB, r->job, CHUNKS - 1,
				    json_object_get_int64(get(w, "id")), 1, IA_CHUNK_DEFAULT, IA_F_RETX);
			if (enter_ns(json_object_get_string(get(w, "netns"))))
				_exit(1);
			/*
			 * From the worker's own address and inagg's port, as its
			 * resends come: a member is bound to both (docs/security.md).
			 */
			fd = socket(AF_INET, SOCK_DGRAM, 0);
			_exit(fd < 0 ||
			      bind(fd, (struct sockaddr *)&(struct sockaddr_in){
					.sin_family = AF_INET, .sin_port = htons(IA_UDP_PORT) },
				   sizeof(struct sockaddr_in)) ||
			      sendto(fd, &m, sizeof(m), 0, (struct sockaddr *)&ps,
				     sizeof(ps)) != sizeof(m));
		}
		int status;

		waitpid(pid, &status, 0);
		ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	}
	usleep(200000);
	check_model(_metadata, &self->e, r->job, CHUNKS, 5);
	st = request(&self->e, "{\"cmd\": \"stats\", \"job\": %u}", r->job);
	ASSERT_NE(NULL, st);
	EXPECT_EQ(CHUNKS, json_object_get_int64(get(st, "chunks")));
	links = get(st, "links");
	for (size_t i = 0; i < json_object_array_length(links); i++)
		resent += json_object_get_int64(get(json_object_array_get_idx(links, i),
						    "resent_up"));
	/* Every worker's copy left its first switch again: forwarded or re-emitted. */
	EXPECT_LE(1, resent);
	json_object_put(st);
	st = request(&self->e, "{\"cmd\": \"stats\"}");
	ASSERT_NE(NULL, st);
	resent = 0;
	links = get(st, "links");
	for (size_t i = 0; i < json_object_array_length(links); i++)
		resent += json_object_get_int64(get(json_object_array_get_idx(links, i),
						    "resent_up"));
	EXPECT_LE(1, resent);
	json_object_put(st);
	json_object_put(request(&self->e, "{\"cmd\": \"end\", \"job\": %u}", r->job));
	json_object_put(resp);
}

/* A switch whose ledger is full is left out of the placement; nothing half-done remains. */
TEST_F_TIMEOUT(net, admission_refused_placed_elsewhere, 300)
{
	json_object *resp, *blue;
	struct run *r = new_run();
	char ns[64];
	bool has_s2 = false;

	/*
	 * Another tenant holds s2's whole capacity (2 jobs). The daemon's tail holds
	 * every slot no head holds: more slots make room for the tenant's heads.
	 */
	snprintf(ns, sizeof(ns), "ia-%s-s2", self->e.tag);
	ASSERT_EQ(0, sh("ip netns exec %s %s/inagg ledger set --jobs 2 --slots 8192 >/dev/null",
			ns, build));
	ASSERT_EQ(0, sh("ip netns exec %s %s/inagg ledger admit -J 900 --slots 1 >/dev/null", ns, build));
	ASSERT_EQ(0, sh("ip netns exec %s %s/inagg ledger admit -J 901 --slots 1 >/dev/null", ns, build));
	resp = request(&self->e, "{\"cmd\": \"submit\", \"k\": 2}");
	ASSERT_NE(NULL, resp);
	blue = get(resp, "job.blue");
	for (size_t i = 0; i < json_object_array_length(blue); i++)
		has_s2 |= !strcmp(json_object_get_string(json_object_array_get_idx(blue, i)), "s2");
	EXPECT_FALSE(has_s2);
	/* Without s2 the best is 7 (brute force: s1 and s5) */
	EXPECT_EQ(7, json_object_get_double(get(resp, "job.congestion")));
	ASSERT_EQ(0, allreduce(&self->e, get(resp, "job"), CHUNKS, r, &faults, &wtmpl, NULL));
	live_check_exact(_metadata, r);
	json_object_put(resp);
	json_object_put(request(&self->e, "{\"cmd\": \"end\", \"job\": %u}", r->job));
}

/* Job id already admitted on a blue switch by someone else: rolled back, placed again. */
TEST_F_TIMEOUT(net, admission_conflict_rolls_back, 120)
{
	json_object *resp, *refused;
	char ns[64], cmd[PATH_MAX + 128];
	FILE *p;
	int n = 0;

	/*
	 * Room on s2 (its ledger holds the topology's capacity, 1), so that it is
	 * tried; slots beyond the daemon's tail for the other admission's head.
	 */
	snprintf(ns, sizeof(ns), "ia-%s-s2", self->e.tag);
	ASSERT_EQ(0, sh("ip netns exec %s %s/inagg ledger set --jobs 2 --slots 8192 >/dev/null",
			ns, build));
	ASSERT_EQ(0, sh("ip netns exec %s %s/inagg ledger admit -J 7 --slots 1 >/dev/null", ns, build));
	resp = request(&self->e, "{\"cmd\": \"submit\", \"k\": 2, \"job\": 7}");
	ASSERT_NE(NULL, resp);
	refused = get(resp, "refused");
	ASSERT_EQ(1, (int)json_object_array_length(refused));
	EXPECT_STREQ("s2", json_object_get_string(get(json_object_array_get_idx(refused, 0),
						      "switch")));
	/* s4 holds job 7 at most once: nothing left over from the refused attempt. */
	snprintf(cmd, sizeof(cmd), "ip netns exec ia-%s-s4 %s/inagg -j ledger show", self->e.tag,
		 build);
	p = popen(cmd, "r");
	ASSERT_NE(NULL, p);
	while (fgets(cmd, sizeof(cmd), p))
		n += strstr(cmd, "\"id\"") != NULL;
	pclose(p);
	EXPECT_GE(1, n);
	json_object_put(request(&self->e, "{\"cmd\": \"end\", \"job\": 7}"));
	json_object_put(resp);
}

/*
 * A 15-switch tree with heterogeneous rates and loads, emulated with tc (tbf
 * at rate x 2 Mbit/s on every uplink; the daemon makes upward messages go
 * through the kernel so that the qdiscs apply). The four placements' model
 * congestions differ by 1.5x or more; the same job's completion times must
 * rank in the same order.
 */
static const char tree15[] =
	"{\"switches\": ["
	"{\"name\": \"s0\", \"parent\": null, \"rate\": 2},"
	"{\"name\": \"s1\", \"parent\": \"s0\", \"rate\": 3},"
	"{\"name\": \"s2\", \"parent\": \"s0\", \"rate\": 4},"
	"{\"name\": \"s3\", \"parent\": \"s1\", \"rate\": 1.5, \"load\": 1},"
	"{\"name\": \"s4\", \"parent\": \"s1\", \"rate\": 3, \"load\": 1},"
	"{\"name\": \"s5\", \"parent\": \"s2\", \"rate\": 2, \"load\": 3},"
	"{\"name\": \"s6\", \"parent\": \"s2\", \"rate\": 4, \"load\": 3},"
	"{\"name\": \"s7\", \"parent\": \"s3\", \"rate\": 4, \"load\": 1},"
	"{\"name\": \"s8\", \"parent\": \"s3\", \"rate\": 1, \"load\": 1},"
	"{\"name\": \"s9\", \"parent\": \"s4\", \"rate\": 3, \"load\": 4},"
	"{\"name\": \"s10\", \"parent\": \"s4\", \"rate\": 1},"
	"{\"name\": \"s11\", \"parent\": \"s5\", \"rate\": 1, \"load\": 3},"
	"{\"name\": \"s12\", \"parent\": \"s5\", \"rate\": 4, \"load\": 4},"
	"{\"name\": \"s13\", \"parent\": \"s6\", \"rate\": 4, \"load\": 4},"
	"{\"name\": \"s14\", \"parent\": \"s6\", \"rate\": 3, \"load\": 4}]}";

LIVE_FIXTURE(rated, tree15, 2, true)

TEST_F_TIMEOUT(rated, completion_time_follows_model_congestion, 900)
{
	static const char *const algos[] = { "smc", "level", "top", "max" };
	double congestion[4], seconds[4];

	for (int i = 0; i < 4; i++) {
		json_object *resp = request(&self->e,
					    "{\"cmd\": \"submit\", \"k\": 4, \"algorithm\": \"%s\","
					    " \"window\": 8}", algos[i]);
		struct run *r = new_run();

		ASSERT_NE(NULL, resp);
		congestion[i] = json_object_get_double(get(resp, "job.congestion"));
		ASSERT_EQ(0, allreduce(&self->e, get(resp, "job"), 100, r, &faults, &wtmpl, NULL));
		live_check_exact(_metadata, r);
		seconds[i] = r->elapsed;
		TH_LOG("%-5s model congestion %5.2f  completion %.2f s", algos[i], congestion[i],
		       seconds[i]);
		json_object_put(request(&self->e, "{\"cmd\": \"end\", \"job\": %u}", r->job));
		json_object_put(resp);
		munmap(r, sizeof(*r));
	}
	for (int i = 1; i < 4; i++) {
		/* The instance is chosen so that the model separates them clearly. */
		ASSERT_GE(congestion[i], congestion[i - 1] * 1.4);
		EXPECT_GT(seconds[i], seconds[i - 1])
			TH_LOG("%s took %.2f s, %s %.2f s", algos[i], seconds[i], algos[i - 1],
			       seconds[i - 1]);
	}
}

LIVE_TEST_MAIN
