// SPDX-License-Identifier: GPL-2.0
/*
 * The controller's side of the agents (user/lib/remote*.c, docs/remote.md)
 * against fake routers: a fake ssh that runs the real inagg-agent here with
 * a ledger folder per "host" (or fails like an unreachable host, hangs, or
 * hangs once), and a fake agent in sh that says it has room and then refuses
 * or never answers an admission. Checked: bounded calls (timeouts, retries,
 * the reason naming the router), a restarted agent, a rebooted router, and
 * the job transaction across routers staying all-or-nothing.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#pragma GCC diagnostic ignored "-Wsign-compare"
#include "kselftest_harness.h"
#include "skip.h"
#include <inagg/maps.h>
#include <inagg/netlink.h>

#include "job.h"
#include "remote.h"

static char build[PATH_MAX];

/* ssh OPTIONS HOST COMMAND...: COMMAND here, as HOST would run it. */
static const char fake_ssh[] =
	"#!/bin/sh\n"
	"while [ $# -gt 0 ]; do case \"$1\" in -T) shift;; -o|-p|-i) shift 2;; *) break;; esac; done\n"
	"host=$1; shift; dir=$(dirname \"$0\")\n"
	"if [ -e \"$dir/$host.down\" ]; then\n"
	"  echo \"ssh: connect to host $host port 22: No route to host\" >&2; exit 255; fi\n"
	"[ -e \"$dir/$host.hang\" ] && exec sleep 60\n"
	"if [ -e \"$dir/$host.hang1\" ]; then rm -f \"$dir/$host.hang1\"; exec sleep 60; fi\n"
	"[ -e \"$dir/$host.boot\" ] && export INAGG_AGENT_BOOT_ID=$(cat \"$dir/$host.boot\")\n"
	"ls /proc/$$/fd >\"$dir/$host.fds\"\n"
	"mkdir -p \"$dir/$host\"\n"
	"export INAGG_LEDGER=user INAGG_LEDGER_DIR=\"$dir/$host/ledger\"\n"
	"exec \"$@\" -S \"$dir/$host/agent.json\"\n";

/* An agent that has room everywhere and then refuses ($1 = refuse) or ignores admissions. */
static const char fake_agent[] =
	"#!/bin/sh\n"
	"mode=$(cat \"$(dirname \"$0\")/mode\")\n"
	"while IFS= read -r l; do\n"
	"  seq=$(printf '%s' \"$l\" | sed -n 's/.*\"seq\":\\([0-9]*\\).*/\\1/p')\n"
	"  case \"$l\" in\n"
	"  *'\"op\":\"hello\"'*) echo \"{\\\"ok\\\":true,\\\"proto\\\":1,\\\"boot_id\\\":\\\"b\\\","
	"\\\"epoch\\\":1,\\\"jobs\\\":[],\\\"lost\\\":[],\\\"seq\\\":$seq}\";;\n"
	"  *'\"op\":\"room\"'*) echo \"{\\\"ok\\\":true,\\\"room\\\":true,\\\"seq\\\":$seq}\";;\n"
	"  *'\"op\":\"admit\"'*) [ \"$mode\" = hang ] && exec sleep 60\n"
	"    echo \"{\\\"ok\\\":false,\\\"errno\\\":28,\\\"error\\\":\\\"fake: no room\\\","
	"\\\"seq\\\":$seq}\";;\n"
	"  *) echo \"{\\\"ok\\\":true,\\\"seq\\\":$seq}\";;\n"
	"  esac\n"
	"done\n";

static int write_file(const char *path, const char *text, mode_t mode)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return -1;
	fputs(text, f);
	fclose(f);
	return chmod(path, mode);
}

static void touch(const char *dir, const char *name, const char *text)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	write_file(path, text ? text : "", 0644);
}

static void unlink_in(const char *dir, const char *name)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	unlink(path);
}

/* The link's session gone as if the router's sshd dropped it. */
static void kill_session_of(struct ia_link *l)
{
	if (l->pid > 0)
		kill(l->pid, SIGKILL);
	ia_link_hangup(l);
}

FIXTURE(routers)
{
	char dir[64];
	char topo[128];
	struct ia_topo *t;
	struct ia_remote r;
	struct ia_jobs js;
	bool opened;
	bool push_fails[3];
	uint32_t pushed[3];
};

/* The transaction's ledger operations go to the routers; pushes stay here (no BPF). */
static int op_admit(void *ctx, int v, uint32_t id, enum ia_job_class class, uint32_t slots,
		    char *why, size_t whylen)
{
	struct _test_data_routers *self = ctx;

	return ia_remote_admit(&self->r, v, id, class, slots, why, whylen);
}

static int op_release(void *ctx, int v, uint32_t id, char *why, size_t whylen)
{
	struct _test_data_routers *self = ctx;

	return ia_remote_release(&self->r, v, id, why, whylen);
}

static int op_admitted(void *ctx, int v, uint32_t id)
{
	struct _test_data_routers *self = ctx;

	return ia_remote_admitted(&self->r, v, id);
}

static bool op_has_room(void *ctx, int v, uint32_t slots)
{
	struct _test_data_routers *self = ctx;

	return ia_remote_has_room(&self->r, v, slots);
}

static int op_push(void *ctx, const struct ia_job *j, int v, char *why, size_t whylen)
{
	struct _test_data_routers *self = ctx;

	if (self->push_fails[v])
		return ia_fail(why, whylen, -EHOSTUNREACH, "router down");
	self->pushed[v] = j->id;
	return 0;
}

static int op_unpush(void *ctx, int v, uint32_t id)
{
	struct _test_data_routers *self = ctx;

	if (self->pushed[v] != id)
		return -ENOENT;
	self->pushed[v] = 0;
	return 0;
}

static bool op_pushed(void *ctx, int v, uint32_t id)
{
	struct _test_data_routers *self = ctx;

	return self->pushed[v] == id;
}

static int op_save(void *ctx, const struct ia_jobs *js)
{
	struct _test_data_routers *self = ctx;

	ia_remote_saved(&self->r, js);
	return 0;
}

static const struct ia_job_ops ops = {
	.admit = op_admit, .release = op_release, .admitted = op_admitted, .has_room = op_has_room,
	.push = op_push, .unpush = op_unpush, .pushed = op_pushed, .save = op_save,
};

/* The topology text's routers opened (nothing started). */
static int open_topo(struct _test_data_routers *self, const char *text, const char *agent)
{
	char err[256];

	if (write_file(self->topo, text, 0644))
		return -errno;
	if (ia_topo_load(self->topo, &self->t, err, sizeof(err)))
		return -EINVAL;
	if (ia_remote_open(&self->r, self->t, self->topo, "t", agent, err, sizeof(err)))
		return -EINVAL;
	self->opened = true;
	return 0;
}

/* r0 above r1 (2 workers) and r2 (3); r2 is the fake agent when fake is set. r2 answers
 * within 1.5 s: its fake ssh and sh agent fork per line, slow on a loaded 2-core CI machine. */
static int make_topo(struct _test_data_routers *self, bool fake)
{
	char text[3 * PATH_MAX + 1024], agent[PATH_MAX + 32], err[256];
	int ret;

	snprintf(agent, sizeof(agent), "%s/inagg-agent", build);
	snprintf(text, sizeof(text),
		 "{\"switches\": [\n"
		 "{\"name\": \"r0\", \"parent\": null, \"load\": 0, \"slots\": 64,"
		 " \"site\": {\"host\": \"r0\", \"agent\": \"%s\", \"timeout_ms\": 2000, \"retries\": 1}},\n"
		 "{\"name\": \"r1\", \"parent\": \"r0\", \"load\": 2, \"slots\": 64,"
		 " \"site\": {\"host\": \"r1\", \"agent\": \"%s\", \"ssh\": [\"-p\", \"2222\"],"
		 " \"timeout_ms\": 2000, \"retries\": 1}},\n"
		 "{\"name\": \"r2\", \"parent\": \"r0\", \"load\": 3, \"slots\": 64,"
		 " \"site\": {\"host\": \"r2\", \"agent\": \"%s%s\", \"timeout_ms\": 1500,"
		 " \"retries\": 1}}]}\n",
		 agent, agent, fake ? self->dir : agent, fake ? "/fake-agent" : "");
	ret = open_topo(self, text, agent);
	if (ret)
		return ret;
	if (ia_remote_setup(&self->r, err, sizeof(err)))
		return -EIO;
	return ia_jobs_init(&self->js, self->t, &ops, self);
}

FIXTURE_SETUP(routers)
{
	char path[PATH_MAX];

	if (geteuid())
		SETUP_SKIP("changing a ledger needs root (CAP_NET_ADMIN)");
	strcpy(self->dir, "/tmp/ia-remote-XXXXXX");
	ASSERT_NE(NULL, mkdtemp(self->dir));
	snprintf(self->topo, sizeof(self->topo), "%s/topo.json", self->dir);
	snprintf(path, sizeof(path), "%s/ssh", self->dir);
	ASSERT_EQ(0, write_file(path, fake_ssh, 0755));
	ASSERT_EQ(0, setenv("INAGG_SSH", path, 1));
	snprintf(path, sizeof(path), "%s/fake-agent", self->dir);
	ASSERT_EQ(0, write_file(path, fake_agent, 0755));
	touch(self->dir, "mode", "refuse");
}

FIXTURE_TEARDOWN(routers)
{
	char cmd[128];

	if (!self->dir[0])
		return;
	if (self->t)
		ia_jobs_free(&self->js);
	if (self->opened)
		ia_remote_close(&self->r);
	ia_topo_free(self->t);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", self->dir);
	system(cmd);
}

static json_object *hello(void)
{
	json_object *q = json_object_new_object();

	json_object_object_add(q, "op", json_object_new_string("hello"));
	return q;
}

TEST_F(routers, silent_router_times_out_with_bounded_tries)
{
	char *const argv[] = { "sleep", "30", NULL };
	char why[IA_ERRLEN] = "";
	struct ia_link l;
	json_object *q = hello(), *rep;

	ASSERT_EQ(0, ia_link_init(&l, "r7", "10.0.0.7", argv, 200, 2));
	EXPECT_EQ(-ETIMEDOUT, ia_link_call(&l, q, &rep, why, sizeof(why)));
	EXPECT_NE(NULL, strstr(why, "router r7 (10.0.0.7): no answer within 200 ms (3 tries)"))
		TH_LOG("%s", why);
	EXPECT_EQ(IA_LINK_DOWN, l.health);
	EXPECT_EQ(3, l.sessions);
	json_object_put(q);
	ia_link_free(&l);
}

TEST_F(routers, unreachable_router_says_what_ssh_said)
{
	char path[PATH_MAX], why[IA_ERRLEN] = "";
	char *argv[] = { path, "r9", "inagg-agent", NULL };
	struct ia_link l;
	json_object *q = hello(), *rep, *o, *v;

	snprintf(path, sizeof(path), "%s/ssh", self->dir);
	touch(self->dir, "r9.down", NULL);
	ASSERT_EQ(0, ia_link_init(&l, "r9", "r9", argv, 2000, 1));
	EXPECT_EQ(-ECONNRESET, ia_link_call(&l, q, &rep, why, sizeof(why)));
	EXPECT_NE(NULL, strstr(why, "unreachable after 2 tries: ssh: connect to host r9 port 22: "
				    "No route to host")) TH_LOG("%s", why);
	o = ia_link_json(&l);
	ASSERT_TRUE(json_object_object_get_ex(o, "health", &v));
	EXPECT_STREQ("unreachable", json_object_get_string(v));
	json_object_put(o);
	json_object_put(q);
	ia_link_free(&l);
}

TEST_F(routers, slow_router_answers_on_the_retry)
{
	char path[PATH_MAX], agent[PATH_MAX + 16], why[IA_ERRLEN] = "";
	char *argv[] = { path, "r3", agent, "-s", "r3", NULL };
	struct ia_link l;
	json_object *q = hello(), *rep;

	snprintf(path, sizeof(path), "%s/ssh", self->dir);
	snprintf(agent, sizeof(agent), "%s/inagg-agent", build);
	touch(self->dir, "r3.hang1", NULL);
	ASSERT_EQ(0, ia_link_init(&l, "r3", "r3", argv, 1000, 2));
	ASSERT_EQ(0, ia_link_call(&l, q, &rep, why, sizeof(why))) TH_LOG("%s", why);
	json_object_put(rep);
	EXPECT_EQ(IA_LINK_SLOW, l.health);
	EXPECT_STREQ("answered on try 2 of 3", l.why);
	EXPECT_EQ(2, l.sessions);
	json_object_put(q);
	ia_link_free(&l);
}

/* A session gets stdin, stdout and stderr only: no file of the controller's (a test's lock). */
TEST_F(routers, session_inherits_no_other_fd)
{
	char path[PATH_MAX], agent[PATH_MAX + 16], why[IA_ERRLEN] = "", line[32];
	char *argv[] = { path, "r4", agent, "-s", "r4", NULL };
	int fd = open("/dev/null", O_RDONLY), n = 0;	/* inheritable, as a lock's fd is */
	struct ia_link l;
	json_object *q = hello(), *rep;
	FILE *f;

	ASSERT_LE(3, fd);
	snprintf(path, sizeof(path), "%s/ssh", self->dir);
	snprintf(agent, sizeof(agent), "%s/inagg-agent", build);
	ASSERT_EQ(0, ia_link_init(&l, "r4", "r4", argv, 2000, 0));
	ASSERT_EQ(0, ia_link_call(&l, q, &rep, why, sizeof(why))) TH_LOG("%s", why);
	json_object_put(rep);
	snprintf(path, sizeof(path), "%s/r4.fds", self->dir);
	f = fopen(path, "r");
	ASSERT_NE(NULL, f);
	/* 0, 1, 2, and the shell's own (its script, at 10 and above) */
	while (fgets(line, sizeof(line), f)) {
		EXPECT_NE(fd, atoi(line)) TH_LOG("the session has the controller's fd %d", fd);
		n += atoi(line) < 3;
	}
	fclose(f);
	EXPECT_EQ(3, n);
	close(fd);
	json_object_put(q);
	ia_link_free(&l);
}

/* An agent killed and started again: same boot, next epoch, its jobs still known. */
TEST_F(routers, restarted_agent_keeps_its_jobs)
{
	char why[IA_ERRLEN] = "";
	struct ia_link *l;

	ASSERT_EQ(0, make_topo(self, false));
	l = &self->r.sw[1].link;
	ASSERT_EQ(0, ia_remote_admit(&self->r, 1, 4, INAGG_CLASS_INA, 8, why, sizeof(why)))
		TH_LOG("%s", why);
	ASSERT_LT(0, l->pid);
	kill(l->pid, SIGKILL);
	EXPECT_EQ(0, ia_remote_admitted(&self->r, 1, 4));
	EXPECT_EQ(2, l->sessions);
	EXPECT_EQ(2, l->epoch);
	EXPECT_EQ(0, l->reboots);
	ASSERT_NE(NULL, l->held);
	ASSERT_EQ(1, json_object_array_length(l->held));
	EXPECT_EQ(4, json_object_get_int(json_object_array_get_idx(l->held, 0)));
}

/* FlexINA's lending goes to the router's own ledger, through its agent, both ways. */
TEST_F(routers, lend_and_reclaim_reach_the_router)
{
	char why[IA_ERRLEN] = "";

	ASSERT_EQ(0, make_topo(self, false));
	ASSERT_EQ(0, ia_remote_admit(&self->r, 1, 4, INAGG_CLASS_INA, 8, why, sizeof(why)))
		TH_LOG("%s", why);
	EXPECT_EQ(0, ia_remote_lend(&self->r, 1, 4, 6, why, sizeof(why))) TH_LOG("%s", why);
	/* More than its head: the router's ledger says no, and why. */
	EXPECT_EQ(-ERANGE, ia_remote_lend(&self->r, 1, 4, 3, why, sizeof(why)));
	EXPECT_NE('\0', why[0]);
	/* Not on r2, which does not hold the job. */
	EXPECT_GT(0, ia_remote_lend(&self->r, 2, 4, 1, why, sizeof(why)));
	EXPECT_EQ(2, ia_remote_reclaim(&self->r, 1, 4, 2, why, sizeof(why))) TH_LOG("%s", why);
	/* A daemon's start: all that is still lent (4), then nothing. */
	EXPECT_EQ(4, ia_remote_reclaim(&self->r, 1, 4, 0, why, sizeof(why))) TH_LOG("%s", why);
	EXPECT_EQ(0, ia_remote_reclaim(&self->r, 1, 4, 0, why, sizeof(why)));
	/* A router without the switch's maps: the tail's publication fails with the reason. */
	struct ia_xdp_tail tl = { .slots = 8 };

	EXPECT_GT(0, ia_remote_tail(&self->r, 1, &tl, why, sizeof(why)));
	EXPECT_NE(NULL, strstr(why, "maps")) TH_LOG("%s", why);
}

static bool refused_on(const struct ia_job_refusal *rf, int n, int v, const char *what)
{
	for (int i = 0; i < n; i++)
		if (rf[i].sw == v && strstr(rf[i].why, what))
			return true;
	return false;
}

/* A router's refusal after its "room": the others are released, the job placed without it. */
TEST_F(routers, refusal_rolls_back_the_others)
{
	struct ia_job_request rq = { .k = 2, .class = IA_JOB_INA, .head = 8 };
	struct ia_job_refusal rf[6];
	char err[IA_ERRLEN] = "";
	struct ia_job *j;
	int nrf;

	ASSERT_EQ(0, make_topo(self, true));
	ASSERT_EQ(0, ia_jobs_submit(&self->js, &rq, &j, rf, &nrf, err, sizeof(err)))
		TH_LOG("%s", err);
	EXPECT_TRUE(refused_on(rf, nrf, 2, "fake: no room")) TH_LOG("%d refusals", nrf);
	EXPECT_FALSE(j->blue[2]);
	/* The real routers hold exactly the final placement: the first one's admission undone. */
	for (int v = 0; v < 2; v++) {
		EXPECT_EQ(j->blue[v] ? 0 : -ENOENT, ia_remote_admitted(&self->r, v, j->id))
			TH_LOG("r%d", v);
	}
	ASSERT_EQ(0, ia_jobs_end(&self->js, j->id, err, sizeof(err)));
	for (int v = 0; v < 2; v++)
		EXPECT_EQ(-ENOENT, ia_remote_admitted(&self->r, v, 1));
}

/* A router that stops answering mid-admission is a refusal with the reason, never a hang. */
TEST_F(routers, silent_router_mid_admission_rolls_back)
{
	struct ia_job_request rq = { .k = 2, .class = IA_JOB_INA, .head = 8 };
	struct ia_job_refusal rf[6];
	char err[IA_ERRLEN] = "";
	struct ia_job *j;
	int nrf;

	touch(self->dir, "mode", "hang");
	ASSERT_EQ(0, make_topo(self, true));
	ASSERT_EQ(0, ia_jobs_submit(&self->js, &rq, &j, rf, &nrf, err, sizeof(err)))
		TH_LOG("%s", err);
	EXPECT_TRUE(refused_on(rf, nrf, 2, "router r2 (r2): no answer within 1500 ms (2 tries)"))
		TH_LOG("%s", nrf ? rf[0].why : "no refusal");
	EXPECT_FALSE(j->blue[2]);
	for (int v = 0; v < 2; v++)
		EXPECT_EQ(j->blue[v] ? 0 : -ENOENT, ia_remote_admitted(&self->r, v, j->id));
	EXPECT_EQ(IA_LINK_DOWN, self->r.sw[2].link.health);
}

/* A push that fails anywhere undoes every admission on the routers. */
TEST_F(routers, failed_push_releases_everywhere)
{
	struct ia_job_request rq = { .k = 2, .class = IA_JOB_INA, .head = 8 };
	struct ia_job_refusal rf[6];
	char err[IA_ERRLEN] = "";
	struct ia_job *j;
	int nrf;

	ASSERT_EQ(0, make_topo(self, false));
	self->push_fails[2] = true;
	EXPECT_EQ(-EHOSTUNREACH, ia_jobs_submit(&self->js, &rq, &j, rf, &nrf, err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "switch r2: router down")) TH_LOG("%s", err);
	for (int v = 0; v < 3; v++) {
		EXPECT_EQ(-ENOENT, ia_remote_admitted(&self->r, v, 1)) TH_LOG("r%d", v);
		EXPECT_EQ(0, self->pushed[v]);
	}
	EXPECT_EQ(0, self->js.njobs);
}

/* A router that reboots under a job: the job is failed with the reason, not left running. */
TEST_F(routers, reboot_mid_job_fails_the_job)
{
	struct ia_job_request rq = { .k = 2, .class = IA_JOB_INA, .head = 8 };
	struct ia_job_refusal rf[6];
	char err[IA_ERRLEN] = "", cmd[256];
	const char *why;
	struct ia_job *j;
	int nrf, v = -1;

	ASSERT_EQ(0, make_topo(self, false));
	ASSERT_EQ(0, ia_jobs_submit(&self->js, &rq, &j, rf, &nrf, err, sizeof(err)))
		TH_LOG("%s", err);
	for (int u = 0; u < 3 && v < 0; u++)
		if (j->blue[u])
			v = u;
	ASSERT_LE(0, v);
	EXPECT_EQ(0, ia_remote_probe(&self->r, j));
	EXPECT_EQ(NULL, ia_remote_failed(&self->r, j->id));
	/* The "reboot": a new boot id, the ledger gone with /run, the session cut. */
	snprintf(cmd, sizeof(cmd), "r%d.boot", v);
	touch(self->dir, cmd, "boot-2");
	snprintf(cmd, sizeof(cmd), "rm -rf %s/r%d/ledger", self->dir, v);
	ASSERT_EQ(0, system(cmd));
	kill(self->r.sw[v].link.pid, SIGKILL);
	ia_remote_probe(&self->r, j);
	why = ia_remote_failed(&self->r, j->id);
	ASSERT_NE(NULL, why);
	EXPECT_NE(NULL, strstr(why, "rebooted during the job")) TH_LOG("%s", why);
	EXPECT_EQ(1, self->r.sw[v].link.reboots);
	EXPECT_EQ(-ENOENT, ia_remote_admitted(&self->r, v, j->id));
	/* Ending it is clean, and forgets the failure. */
	ASSERT_EQ(0, ia_jobs_end(&self->js, j->id, err, sizeof(err))) TH_LOG("%s", err);
	EXPECT_EQ(NULL, ia_remote_failed(&self->r, 1));
}

/* An agent holding a job the controller ended while it was away: removed on its next session. */
TEST_F(routers, new_session_drops_jobs_that_ended)
{
	char why[IA_ERRLEN] = "";

	ASSERT_EQ(0, make_topo(self, false));
	ASSERT_EQ(0, ia_remote_admit(&self->r, 1, 9, INAGG_CLASS_INA, 8, why, sizeof(why)));
	ia_remote_saved(&self->r, &self->js);	/* a table without job 9 */
	kill(self->r.sw[1].link.pid, SIGKILL);
	EXPECT_EQ(-ENOENT, ia_remote_admitted(&self->r, 1, 9))
		TH_LOG("sessions %u", self->r.sw[1].link.sessions);
}

static int connected_v = -1;

static void on_connect(void *ctx, int v)
{
	connected_v = v;
}

/*
 * Routers whose ports are all "lo" (so that the agent reads them here), peers given,
 * links async with a short hold-off: what inaggd runs.
 */
static int make_async_topo(struct _test_data_routers *self)
{
	char text[3 * PATH_MAX + 2048], agent[PATH_MAX + 32];
	int ret;
	const char *lo = "\"ports\": {\"up\": \"lo\", \"down\": [\"lo\", \"lo\"], \"hosts\": "
			 "[\"lo\"]}, \"peers\": {\"up\": \"02:00:00:00:00:09\", \"hosts\": "
			 "[\"02:00:00:00:00:01\"]}, \"timeout_ms\": 400, \"retries\": 0, "
			 "\"holdoff_ms\": 100";

	snprintf(agent, sizeof(agent), "%s/inagg-agent", build);
	snprintf(text, sizeof(text),
		 "{\"switches\": [\n"
		 "{\"name\": \"r0\", \"parent\": null, \"load\": 0, \"slots\": 64,"
		 " \"site\": {\"host\": \"r0\", \"agent\": \"%s\", %s}},\n"
		 "{\"name\": \"r1\", \"parent\": \"r0\", \"load\": 1, \"slots\": 64,"
		 " \"site\": {\"host\": \"r1\", \"agent\": \"%s\", %s}},\n"
		 "{\"name\": \"r2\", \"parent\": \"r0\", \"load\": 1, \"slots\": 64,"
		 " \"site\": {\"host\": \"r2\", \"agent\": \"%s\", %s}}]}\n",
		 agent, lo, agent, lo, agent, lo);
	ret = open_topo(self, text, agent);
	if (ret)
		return ret;
	for (int v = 0; v < 3; v++)
		self->r.sw[v].link.async = true;
	self->r.on_connect = on_connect;
	return ia_jobs_init(&self->js, self->t, &ops, self);
}

/* Ticks r until switch v is connected, at most 100 times 20 ms. */
static bool tick_until_connected(struct ia_remote *r, int v)
{
	for (int i = 0; i < 100 && r->sw[v].pending; i++) {
		ia_remote_tick(r);
		usleep(20000);
	}
	return !r->sw[v].pending;
}

/*
 * A router unreachable when the controller starts: it starts all the same,
 * the router marked down; calls to it fail at once (no session tried); it
 * is probed in the background and, once it answers, connected and its
 * ledger set up.
 */
TEST_F(routers, unreachable_at_start_connected_when_back)
{
	char err[IA_ERRLEN] = "", why[IA_ERRLEN] = "";
	struct ia_link *l;
	unsigned int sessions;

	ASSERT_EQ(0, make_async_topo(self));
	l = &self->r.sw[2].link;
	touch(self->dir, "r2.down", NULL);
	ASSERT_EQ(0, ia_remote_connect(&self->r, err, sizeof(err))) TH_LOG("%s", err);
	ASSERT_EQ(0, ia_remote_setup(&self->r, err, sizeof(err))) TH_LOG("%s", err);
	EXPECT_TRUE(self->r.sw[2].pending);
	EXPECT_FALSE(self->r.sw[1].pending);
	EXPECT_EQ(IA_LINK_DOWN, l->health);
	EXPECT_NE(NULL, strstr(l->why, "No route to host")) TH_LOG("%s", l->why);
	sessions = l->sessions;
	EXPECT_FALSE(ia_remote_has_room(&self->r, 2, 1));
	EXPECT_EQ(-EHOSTUNREACH, ia_remote_admit(&self->r, 2, 3, INAGG_CLASS_INA, 1, why,
						 sizeof(why)));
	EXPECT_NE(NULL, strstr(why, "router r2")) TH_LOG("%s", why);
	EXPECT_EQ(sessions, l->sessions) TH_LOG("a call to a router down tried a session");
	EXPECT_TRUE(ia_remote_has_room(&self->r, 1, 1));
	/* Still down: probes fail in the background, the switch stays pending. */
	for (int i = 0; i < 10; i++) {
		ia_remote_tick(&self->r);
		usleep(20000);
	}
	EXPECT_TRUE(self->r.sw[2].pending);
	EXPECT_LT(sessions, l->sessions) TH_LOG("no probe was made");
	unlink_in(self->dir, "r2.down");
	ASSERT_TRUE(tick_until_connected(&self->r, 2)) TH_LOG("%s", l->why);
	EXPECT_EQ(2, connected_v);
	EXPECT_EQ(IA_LINK_OK, l->health);
	EXPECT_EQ(1, self->r.sw[2].up.ifindex);	/* lo, read through its agent */
	/* Its ledger was set up on connecting: 64 slots. */
	EXPECT_TRUE(ia_remote_has_room(&self->r, 2, 64));
	EXPECT_FALSE(ia_remote_has_room(&self->r, 2, 65));
}

/* A router that hangs costs one call its bound; after that, probes never block. */
TEST_F(routers, silent_router_probed_without_blocking)
{
	char err[IA_ERRLEN] = "";
	struct ia_link *l;

	ASSERT_EQ(0, make_async_topo(self));
	l = &self->r.sw[2].link;
	ASSERT_EQ(0, ia_remote_connect(&self->r, err, sizeof(err))) TH_LOG("%s", err);
	touch(self->dir, "r2.hang", NULL);
	kill_session_of(l);
	EXPECT_FALSE(ia_remote_has_room(&self->r, 2, 1));
	EXPECT_EQ(IA_LINK_DOWN, l->health);
	/* Past the hold-off, a tick starts a probe and returns with it in flight. */
	usleep(150000);
	ia_remote_tick(&self->r);
	EXPECT_TRUE(l->probing) TH_LOG("the tick waited for the probe's answer");
	EXPECT_EQ(IA_LINK_DOWN, l->health);
	unlink_in(self->dir, "r2.hang");
	/* The hung probe times out (400 ms); the next one finds the router back. */
	for (int i = 0; i < 100 && l->health == IA_LINK_DOWN; i++) {
		ia_remote_tick(&self->r);
		usleep(20000);
	}
	EXPECT_EQ(IA_LINK_OK, l->health) TH_LOG("%s", l->why);
	EXPECT_TRUE(ia_remote_has_room(&self->r, 2, 1));
}

/* What the wait hook of busy_link_refused_meanwhile saw. */
static struct {
	struct ia_remote *r;
	int runs, busy_ret, free_ret;
	char why[IA_ERRLEN];
	bool reported_busy;
} meanwhile;

static void meanwhile_calls(void *arg)
{
	json_object *q, *rep = NULL;

	if (meanwhile.runs++)
		return;
	/* r2's link carries the call that waits: busy. r0's is free. */
	q = hello();
	meanwhile.busy_ret = ia_link_call(&meanwhile.r->sw[2].link, q, &rep, meanwhile.why,
					  sizeof(meanwhile.why));
	json_object_put(rep);
	rep = NULL;
	meanwhile.free_ret = ia_link_call(&meanwhile.r->sw[0].link, q, &rep, NULL, 0);
	json_object_put(rep);
	json_object_put(q);
	rep = ia_link_json(&meanwhile.r->sw[2].link);
	meanwhile.reported_busy = json_object_object_get_ex(rep, "busy_ms", NULL);
	json_object_put(rep);
}

/*
 * While a call waits on r2, what the wait hook runs may call other routers,
 * never r2: a second call there would read the first one's reply.
 */
TEST_F(routers, busy_link_refused_meanwhile)
{
	ASSERT_EQ(0, make_topo(self, false));
	/* r2's next session never answers; its retry does. */
	touch(self->dir, "r2.hang1", NULL);
	kill_session_of(&self->r.sw[2].link);
	meanwhile.r = &self->r;
	ia_link_set_wait_hook(meanwhile_calls, NULL);
	EXPECT_TRUE(ia_remote_has_room(&self->r, 2, 1));
	ia_link_set_wait_hook(NULL, NULL);
	EXPECT_LT(0, meanwhile.runs);
	EXPECT_EQ(-EBUSY, meanwhile.busy_ret);
	EXPECT_NE(NULL, strstr(meanwhile.why, "router r2 (r2): busy")) TH_LOG("%s", meanwhile.why);
	EXPECT_EQ(0, meanwhile.free_ret);
	EXPECT_TRUE(meanwhile.reported_busy);
	/* Refusing it changed nothing of r2's link: answered on the retry, slow. */
	EXPECT_EQ(IA_LINK_SLOW, self->r.sw[2].link.health);
	EXPECT_EQ(0, self->r.sw[2].link.busy);
}

int main(int argc, char **argv)
{
	char exe[PATH_MAX] = "";
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n > 0)
		exe[n] = '\0';
	/* build/tests/unit/remote -> build */
	snprintf(build, sizeof(build), "%s", dirname(dirname(dirname(exe))));
	return test_harness_run(argc, argv);
}
