// SPDX-License-Identifier: GPL-2.0
/*
 * The switch agent (user/agent/, docs/remote.md): its protocol on the
 * ledger, its record across its own restart and across a reboot, its line
 * loop. Each test has a ledger folder and a record of its own, in the
 * caller's namespace (the user-space ledger).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#pragma GCC diagnostic ignored "-Wsign-compare"
#include "kselftest_harness.h"
#include "skip.h"
#include "agent_rig.h"

FIXTURE(agent)
{
	struct agent_rig r;
};

FIXTURE_SETUP(agent)
{
	char err[256];

	if (geteuid())
		SETUP_SKIP("changing a ledger needs root (CAP_NET_ADMIN)");
	ASSERT_EQ(0, agent_rig_setup(&self->r, "r1", err, sizeof(err))) TH_LOG("%s", err);
}

FIXTURE_TEARDOWN(agent)
{
	agent_rig_teardown(&self->r);
}

/* Sends one request (JSON text) and returns the reply; the caller puts it. */
static json_object *ask(struct ia_agent *a, const char *text)
{
	json_object *req = json_tokener_parse(text), *r;

	if (!req)
		return NULL;
	r = ia_agent_handle(a, req);
	json_object_put(req);
	return r;
}

static bool ok(json_object *r)
{
	json_object *v;

	return r && json_object_object_get_ex(r, "ok", &v) && json_object_get_boolean(v);
}

static int err_of(json_object *r)
{
	json_object *v;

	return json_object_object_get_ex(r, "errno", &v) ? json_object_get_int(v) : 0;
}

static long long int_of(json_object *r, const char *key)
{
	json_object *v;

	return json_object_object_get_ex(r, key, &v) ? json_object_get_int64(v) : -1;
}

/* Asks and checks the reply is ok; returns it put. */
#define OK(a, text)                                                  \
	do {                                                         \
		json_object *_r = ask(a, text);                      \
		EXPECT_TRUE(ok(_r)) TH_LOG("%s -> %s", text,          \
			json_object_to_json_string(_r));             \
		json_object_put(_r);                                 \
	} while (0)

TEST_F(agent, hello_says_who_and_which_boot)
{
	json_object *r = ask(&self->r.a, "{\"op\": \"hello\", \"seq\": 7}"), *v;
	char boot[64] = "";
	FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");

	ASSERT_NE(NULL, f);
	ASSERT_NE(NULL, fgets(boot, sizeof(boot), f));
	fclose(f);
	boot[strcspn(boot, "\n")] = '\0';
	ASSERT_TRUE(ok(r));
	EXPECT_EQ(IA_AGENT_PROTO, int_of(r, "proto"));
	EXPECT_EQ(7, int_of(r, "seq"));
	EXPECT_EQ(1, int_of(r, "epoch"));
	ASSERT_TRUE(json_object_object_get_ex(r, "boot_id", &v));
	EXPECT_STREQ(boot, json_object_get_string(v));
	ASSERT_TRUE(json_object_object_get_ex(r, "switch", &v));
	EXPECT_STREQ("r1", json_object_get_string(v));
	ASSERT_TRUE(json_object_object_get_ex(r, "backend", &v));
	EXPECT_STREQ("user", json_object_get_string(v));
	json_object_put(r);
}

TEST_F(agent, admission_refusal_release)
{
	json_object *r;

	OK(&self->r.a, "{\"op\": \"setup\", \"jobs\": 2, \"slots\": 100}");
	OK(&self->r.a, "{\"op\": \"admit\", \"job\": 5, \"class\": 1, \"slots\": 60}");
	/* A retry of the same admission (its first reply lost) is no error. */
	OK(&self->r.a, "{\"op\": \"admit\", \"job\": 5, \"class\": 1, \"slots\": 60}");
	r = ask(&self->r.a, "{\"op\": \"room\", \"slots\": 50}");
	EXPECT_TRUE(ok(r));
	EXPECT_EQ(0, int_of(r, "room"));
	json_object_put(r);
	r = ask(&self->r.a, "{\"op\": \"room\", \"slots\": 40}");
	EXPECT_EQ(1, int_of(r, "room"));
	json_object_put(r);
	/* More than is left: refused with the ledger's reason. */
	r = ask(&self->r.a, "{\"op\": \"admit\", \"job\": 6, \"class\": 1, \"slots\": 50}");
	EXPECT_FALSE(ok(r));
	EXPECT_EQ(ENOSPC, err_of(r));
	EXPECT_TRUE(json_object_object_get_ex(r, "error", NULL));
	json_object_put(r);
	r = ask(&self->r.a, "{\"op\": \"admitted\", \"job\": 6}");
	EXPECT_EQ(0, int_of(r, "admitted"));
	json_object_put(r);
	r = ask(&self->r.a, "{\"op\": \"admitted\", \"job\": 5}");
	EXPECT_EQ(1, int_of(r, "admitted"));
	json_object_put(r);
	OK(&self->r.a, "{\"op\": \"release\", \"job\": 5}");
	r = ask(&self->r.a, "{\"op\": \"release\", \"job\": 5}");
	EXPECT_EQ(ENOENT, err_of(r));
	json_object_put(r);
	OK(&self->r.a, "{\"op\": \"admit\", \"job\": 6, \"class\": 1, \"slots\": 50}");
	/* A PS job holds no head. */
	OK(&self->r.a, "{\"op\": \"admit\", \"job\": 7, \"class\": 2, \"slots\": 0}");
	r = ask(&self->r.a, "{\"op\": \"admit\", \"job\": 8, \"class\": 2, \"slots\": 0}");
	EXPECT_EQ(ENOSPC, err_of(r)) TH_LOG("two jobs at most");
	json_object_put(r);
}

/* FlexINA: head slots lent to the tail and taken back, in the ledger, by the agent. */
TEST_F(agent, lend_and_reclaim_in_the_ledger)
{
	json_object *r;

	OK(&self->r.a, "{\"op\": \"setup\", \"jobs\": 2, \"slots\": 100}");
	OK(&self->r.a, "{\"op\": \"admit\", \"job\": 5, \"class\": 1, \"slots\": 60}");
	OK(&self->r.a, "{\"op\": \"admit\", \"job\": 6, \"class\": 2, \"slots\": 0}");
	OK(&self->r.a, "{\"op\": \"lend\", \"job\": 5, \"count\": 20}");
	/* Beyond the head: the ledger's refusal, with its reason. */
	r = ask(&self->r.a, "{\"op\": \"lend\", \"job\": 5, \"count\": 41}");
	EXPECT_FALSE(ok(r));
	EXPECT_EQ(ERANGE, err_of(r)) TH_LOG("%s", json_object_to_json_string(r));
	EXPECT_TRUE(json_object_object_get_ex(r, "error", NULL));
	json_object_put(r);
	/* A PS job has no head to lend. */
	r = ask(&self->r.a, "{\"op\": \"lend\", \"job\": 6, \"count\": 1}");
	EXPECT_EQ(EINVAL, err_of(r));
	json_object_put(r);
	r = ask(&self->r.a, "{\"op\": \"reclaim\", \"job\": 5, \"count\": 5}");
	EXPECT_TRUE(ok(r));
	EXPECT_EQ(5, int_of(r, "count"));
	json_object_put(r);
	/* Without a count: all it still lends (a daemon's start), then nothing. */
	r = ask(&self->r.a, "{\"op\": \"reclaim\", \"job\": 5}");
	EXPECT_TRUE(ok(r));
	EXPECT_EQ(15, int_of(r, "count"));
	json_object_put(r);
	r = ask(&self->r.a, "{\"op\": \"reclaim\", \"job\": 5}");
	EXPECT_TRUE(ok(r));
	EXPECT_EQ(0, int_of(r, "count"));
	json_object_put(r);
	r = ask(&self->r.a, "{\"op\": \"reclaim\", \"job\": 5, \"count\": 1}");
	EXPECT_EQ(ERANGE, err_of(r)) TH_LOG("nothing lent any more");
	json_object_put(r);
	/* A job not here is nothing to take back. */
	r = ask(&self->r.a, "{\"op\": \"reclaim\", \"job\": 9}");
	EXPECT_TRUE(ok(r));
	EXPECT_EQ(0, int_of(r, "count"));
	json_object_put(r);
}

/* A switch without maps: tail and memory requests fail with the reason, and say it. */
TEST_F(agent, tail_and_memory_need_the_maps)
{
	json_object *r = ask(&self->r.a, "{\"op\": \"tail\", \"slots\": 10, \"lend\": [[5, 2]]}");

	EXPECT_FALSE(ok(r));
	EXPECT_NE(0, err_of(r));
	EXPECT_TRUE(json_object_object_get_ex(r, "error", NULL));
	json_object_put(r);
	r = ask(&self->r.a, "{\"op\": \"memory\", \"jobs\": [5], \"probes\": 8}");
	EXPECT_FALSE(ok(r));
	EXPECT_NE(0, err_of(r));
	json_object_put(r);
}

TEST_F(agent, bad_requests_are_answered)
{
	static const struct { const char *req; int err; } cases[] = {
		{ "[1, 2]", EINVAL },
		{ "{\"seq\": 1}", EINVAL },
		{ "{\"op\": \"reboot\"}", EOPNOTSUPP },
		{ "{\"op\": \"admit\", \"job\": \"5\", \"class\": 1, \"slots\": 1}", EINVAL },
		{ "{\"op\": \"admit\", \"job\": 5, \"class\": 3, \"slots\": 1}", EINVAL },
		{ "{\"op\": \"admit\", \"job\": -1, \"class\": 1, \"slots\": 1}", EINVAL },
		{ "{\"op\": \"setup\", \"jobs\": 1}", EINVAL },
		{ "{\"op\": \"ports\", \"ports\": [{\"name\": \"ia-no-such-if\"}]}", ENODEV },
		{ "{\"op\": \"push\", \"job\": 1}", EINVAL },
		{ "{\"op\": \"push\", \"job\": 1, \"window\": 8, \"role\": \"blue\", \"members\": [],"
		  " \"down\": [], \"up\": {\"port\": \"ia-no-such-if\", \"peer\": \"02:00:00:00:00:01\"}}",
		  ENODEV },
		{ "{\"op\": \"push\", \"job\": 1, \"window\": 8, \"role\": \"blue\", \"members\": [],"
		  " \"down\": [], \"up\": {\"port\": \"lo\", \"peer\": \"nonsense\"}}", EINVAL },
		{ "{\"op\": \"counters\"}", EINVAL },
		{ "{\"op\": \"lend\", \"job\": 5}", EINVAL },
		{ "{\"op\": \"lend\", \"job\": 5, \"count\": -2}", EINVAL },
		{ "{\"op\": \"reclaim\", \"count\": 2}", EINVAL },
		{ "{\"op\": \"tail\"}", EINVAL },
		{ "{\"op\": \"tail\", \"slots\": 65537}", EINVAL },
		{ "{\"op\": \"tail\", \"slots\": 1, \"lend\": [[5]]}", EINVAL },
		{ "{\"op\": \"tail\", \"slots\": 1, \"lend\": [[5, \"x\"]]}", EINVAL },
		{ "{\"op\": \"tail\", \"slots\": 1, \"lend\": [[1,1],[1,1],[1,1],[1,1],[1,1],"
		  "[1,1],[1,1],[1,1],[1,1],[1,1],[1,1],[1,1],[1,1],[1,1],[1,1],[1,1],[1,1]]}", EINVAL },
		{ "{\"op\": \"memory\", \"jobs\": 5}", EINVAL },
		{ "{\"op\": \"memory\", \"probes\": 100000}", EINVAL },
		/* A layout is checked whole before anything changes; nothing reaches a shell. */
		{ "{\"op\": \"layout\", \"addrs\": []}", EINVAL },
		{ "{\"op\": \"layout\", \"addrs\": [[\"ia-no-such-if\", \"10.0.0.1/30\"]], \"routes\": []}",
		  EINVAL },
		{ "{\"op\": \"layout\", \"addrs\": [[\"lo\", \"10.0.0.1/33\"]], \"routes\": []}", EINVAL },
		{ "{\"op\": \"layout\", \"addrs\": [[\"lo\", \"10.0.0.1; reboot\"]], \"routes\": []}",
		  EINVAL },
		{ "{\"op\": \"layout\", \"addrs\": [], \"routes\": [[\"default\", \"10.0.0.1/30\", \"lo\"]]}",
		  EINVAL },
		{ "{\"op\": \"layout\", \"addrs\": [], \"routes\": [[\"$(reboot)\", \"10.0.0.1\", \"lo\"]]}",
		  EINVAL },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		json_object *r = ask(&self->r.a, cases[i].req);

		ASSERT_NE(NULL, r) TH_LOG("%s", cases[i].req);
		EXPECT_FALSE(ok(r)) TH_LOG("%s", cases[i].req);
		EXPECT_EQ(cases[i].err, err_of(r)) TH_LOG("%s -> %s", cases[i].req,
							 json_object_to_json_string(r));
		EXPECT_TRUE(json_object_object_get_ex(r, "error", NULL));
		json_object_put(r);
	}
}

TEST_F(agent, ports_reads_an_interface)
{
	const char *req = "{\"op\": \"ports\", \"ports\": [{\"name\": \"lo\"}]}";
	json_object *r = ask(&self->r.a, req), *arr, *p, *v;

	ASSERT_TRUE(ok(r));
	ASSERT_TRUE(json_object_object_get_ex(r, "ports", &arr));
	ASSERT_EQ(1, json_object_array_length(arr));
	p = json_object_array_get_idx(arr, 0);
	EXPECT_EQ(1, int_of(p, "ifindex"));
	ASSERT_TRUE(json_object_object_get_ex(p, "mac", &v));
	EXPECT_STREQ("00:00:00:00:00:00", json_object_get_string(v));
	json_object_put(r);
}

/* A restarted agent knows its jobs and has a new epoch. */
TEST_F(agent, record_survives_a_restart)
{
	char err[256];
	json_object *r, *jobs;

	OK(&self->r.a, "{\"op\": \"admit\", \"job\": 9, \"class\": 1, \"slots\": 4}");
	ia_agent_close(&self->r.a);
	ASSERT_EQ(0, ia_agent_open(&self->r.a, "r1", NULL, self->r.state, err, sizeof(err)));
	r = ask(&self->r.a, "{\"op\": \"hello\"}");
	EXPECT_EQ(2, int_of(r, "epoch"));
	ASSERT_TRUE(json_object_object_get_ex(r, "jobs", &jobs));
	ASSERT_EQ(1, json_object_array_length(jobs));
	EXPECT_EQ(9, json_object_get_int(json_object_array_get_idx(jobs, 0)));
	ASSERT_TRUE(json_object_object_get_ex(r, "lost", &jobs));
	EXPECT_EQ(0, json_object_array_length(jobs));
	json_object_put(r);
	/* Released: forgotten by the record too. */
	OK(&self->r.a, "{\"op\": \"release\", \"job\": 9}");
	r = ask(&self->r.a, "{\"op\": \"state\"}");
	ASSERT_TRUE(json_object_object_get_ex(r, "record", &jobs));
	EXPECT_EQ(0, json_object_object_length(jobs));
	json_object_put(r);
}

/* A record of another boot: its jobs are reported lost, not held. */
TEST_F(agent, reboot_reports_lost_jobs)
{
	char err[256];
	json_object *rec, *r, *v;

	OK(&self->r.a, "{\"op\": \"admit\", \"job\": 3, \"class\": 1, \"slots\": 4}");
	ia_agent_close(&self->r.a);
	rec = json_object_from_file(self->r.state);
	ASSERT_NE(NULL, rec);
	json_object_object_add(rec, "boot_id", json_object_new_string("another-boot"));
	ASSERT_EQ(0, json_object_to_file(self->r.state, rec));
	json_object_put(rec);
	ASSERT_EQ(0, ia_agent_open(&self->r.a, "r1", NULL, self->r.state, err, sizeof(err)));
	r = ask(&self->r.a, "{\"op\": \"hello\"}");
	ASSERT_TRUE(json_object_object_get_ex(r, "lost", &v));
	ASSERT_EQ(1, json_object_array_length(v));
	EXPECT_EQ(3, json_object_get_int(json_object_array_get_idx(v, 0)));
	ASSERT_TRUE(json_object_object_get_ex(r, "jobs", &v));
	EXPECT_EQ(0, json_object_array_length(v));
	json_object_put(r);
}

TEST_F(agent, unreadable_record_refuses_to_start)
{
	struct ia_agent b;
	char err[256] = "";
	int fd = open(self->r.state, O_WRONLY | O_TRUNC);

	ASSERT_LE(0, fd);
	ASSERT_EQ(5, write(fd, "{\"jo", 5));
	close(fd);
	EXPECT_EQ(-EBADMSG, ia_agent_open(&b, "r1", NULL, self->r.state, err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, self->r.state));
	ia_agent_close(&b);
}

/* The loop: one reply per line, in order; garbage and overlong lines answered. */
TEST_F(agent, serve_answers_each_line)
{
	char in[] = "/tmp/ia-agent-in-XXXXXX", out[] = "/tmp/ia-agent-out-XXXXXX", buf[4096];
	int fi = mkstemp(in), fo = mkstemp(out);
	char *big = malloc(IA_AGENT_LINE_MAX + 10);
	FILE *f;
	int n = 0;

	ASSERT_LE(0, fi);
	ASSERT_LE(0, fo);
	ASSERT_NE(NULL, big);
	dprintf(fi, "{\"op\": \"hello\", \"seq\": 1}\n\nnot json\n");
	memset(big, ' ', IA_AGENT_LINE_MAX + 9);
	big[IA_AGENT_LINE_MAX + 9] = '\n';
	ASSERT_EQ(IA_AGENT_LINE_MAX + 10, write(fi, big, IA_AGENT_LINE_MAX + 10));
	dprintf(fi, "{\"op\": \"room\", \"slots\": 1, \"seq\": 2}\n");
	free(big);
	lseek(fi, 0, SEEK_SET);
	EXPECT_EQ(0, ia_agent_serve(&self->r.a, fi, fo));
	f = fopen(out, "r");
	ASSERT_NE(NULL, f);
	while (fgets(buf, sizeof(buf), f)) {
		json_object *r = json_tokener_parse(buf);

		ASSERT_NE(NULL, r) TH_LOG("line %d: %s", n, buf);
		if (n == 0)
			EXPECT_EQ(1, int_of(r, "seq"));
		if (n == 1)
			EXPECT_EQ(EINVAL, err_of(r));
		if (n == 2)
			EXPECT_EQ(E2BIG, err_of(r));
		if (n == 3)
			EXPECT_EQ(2, int_of(r, "seq"));
		json_object_put(r);
		n++;
	}
	fclose(f);
	EXPECT_EQ(4, n);
	close(fi);
	close(fo);
	unlink(in);
	unlink(out);
}

TEST_HARNESS_MAIN
