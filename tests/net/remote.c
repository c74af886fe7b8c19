// SPDX-License-Identifier: GPL-2.0
/*
 * Switches reached the remote way (docs/remote.md) on a live network: every
 * switch of the topology has a site with a host, so inaggd runs each agent
 * through "ssh" — here a fake ssh ($INAGG_SSH) that runs the command in the
 * namespace named as the host, as a router's sshd would on the router — with
 * the site's ports and layout, and peer MACs from the switches' neighbour
 * tables, which start empty (the agents resolve their hosts). Jobs run for real (XDP, workers, destination), so this checks the
 * remote path end to end but for sshd and separate kernels (the qemu layer).
 */
#include <libgen.h>

#pragma GCC diagnostic ignored "-Wsign-compare"
#include "kselftest_harness.h"
#include "skip.h"
#include "../livenet.h"
#include "remote.h"

#define CHUNKS 200

/*
 * ssh OPTIONS HOST COMMAND...: the command in network namespace HOST, its pid
 * logged. nsenter, not ip netns exec: that one also remounts /sys, and the
 * agent would not see the pinned maps, where a router's agent does.
 */
static const char fake_ssh[] =
	"#!/bin/sh\n"
	"while [ $# -gt 0 ]; do case \"$1\" in -T) shift;; -o|-p|-i) shift 2;; *) break;; esac; done\n"
	"host=$1; shift; dir=$(dirname \"$0\")\n"
	"if [ -e \"$dir/$host.down\" ]; then\n"
	"  echo \"ssh: connect to host $host port 22: No route to host\" >&2; exit 255; fi\n"
	"[ -e \"$dir/$host.boot\" ] && export INAGG_AGENT_BOOT_ID=$(cat \"$dir/$host.boot\")\n"
	"echo \"$host $$\" >>\"$dir/ssh.log\"\n"
	"exec nsenter --net=/run/netns/\"$host\" \"$@\" -S \"$dir/$host.agent.json\"\n";

FIXTURE(remote)
{
	struct env e;
	char ns[3][64];
};

static int write_file(const char *path, const char *text, mode_t mode)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return -1;
	fputs(text, f);
	fclose(f);
	return chmod(path, mode);
}

FIXTURE_SETUP(remote)
{
	struct env *e = &self->e;
	char path[PATH_MAX], text[4096];
	int off;

	if (geteuid())
		SETUP_SKIP("needs root (namespaces, XDP)");
	snprintf(e->tag, sizeof(e->tag), "r%d", getpid() % 10000000);
	snprintf(e->dir, sizeof(e->dir), "/tmp/inagg-remote-%d", getpid());
	mkdir(e->dir, 0700);
	snprintf(e->topo, sizeof(e->topo), "%s/topo.json", e->dir);
	snprintf(e->sock, sizeof(e->sock), "%s/inaggd.sock", e->dir);
	snprintf(e->state, sizeof(e->state), "%s/state.json", e->dir);
	setenv("INAGG_LEDGER", "user", 1);
	setenv("INAGG_LEDGER_DIR", e->dir, 1);
	snprintf(path, sizeof(path), "%s/ssh", e->dir);
	ASSERT_EQ(0, write_file(path, fake_ssh, 0755));
	setenv("INAGG_SSH", path, 1);
	/* r0 above r1 (2 workers) and r2 (1), each with a site: its host is its namespace. */
	off = snprintf(text, sizeof(text), "{\"switches\": [");
	for (int v = 0; v < 3; v++) {
		static const char *const parent[] = { "null", "\"r0\"", "\"r0\"" };
		static const int load[] = { 0, 2, 1 };

		snprintf(self->ns[v], sizeof(self->ns[v]), "ia-%s-r%d", e->tag, v);
		off += snprintf(text + off, sizeof(text) - off,
				"%s{\"name\": \"r%d\", \"parent\": %s, \"load\": %d, \"site\": {"
				"\"host\": \"%s\", \"switch\": \"%s\", \"agent\": \"%s/inagg-agent\","
				" \"layout\": true, \"timeout_ms\": 3000, \"retries\": 1}}",
				v ? ", " : "", v, parent[v], load[v], self->ns[v], self->ns[v], build);
	}
	snprintf(text + off, sizeof(text) - off, "]}\n");
	ASSERT_EQ(0, write_file(e->topo, text, 0644));
	ASSERT_EQ(0, sh("%s/inagg net up -t %s -n %s --attach >/dev/null", build, e->topo, e->tag));
	/*
	 * No host has sent anything and the routers' neighbour tables are empty:
	 * each agent asks the network for its hosts' MACs (docs/routers.md).
	 */
	for (int v = 0; v < 3; v++)
		ASSERT_EQ(0, sh("ip -n %s neigh flush all", self->ns[v]));
	e->daemon = start_daemon(e);
	ASSERT_LT(0, e->daemon) TH_LOG("inaggd did not start: see %s/inaggd.log", e->dir);
}

FIXTURE_TEARDOWN(remote)
{
	if (self->e.dir[0])
		env_down(&self->e);
}

/* Sessions the fake ssh started for host ns, and the pid of the last one. */
static int sessions(struct env *e, const char *ns, pid_t *last)
{
	char path[PATH_MAX], host[64];
	int n = 0, pid;
	FILE *f;

	snprintf(path, sizeof(path), "%s/ssh.log", e->dir);
	f = fopen(path, "r");
	if (!f)
		return 0;
	while (fscanf(f, "%63s %d", host, &pid) == 2)
		if (!strcmp(host, ns)) {
			n++;
			if (last)
				*last = pid;
		}
	fclose(f);
	return n;
}

static void check_model(struct __test_metadata *_metadata, struct env *e, uint32_t id)
{
	json_object *st = request(e, "{\"cmd\": \"stats\", \"job\": %u, \"chunks\": %d}", id, CHUNKS);
	json_object *links;

	ASSERT_NE(NULL, st);
	links = get(st, "links");
	for (size_t l = 0; l < json_object_array_length(links); l++) {
		json_object *o = json_object_array_get_idx(links, l);

		EXPECT_EQ(json_object_get_double(get(o, "model_messages")),
			  json_object_get_double(get(o, "messages_per_chunk")))
			TH_LOG("%s", json_object_to_json_string(o));
	}
	EXPECT_EQ(json_object_get_double(get(st, "model_congestion")),
		  json_object_get_double(get(st, "congestion")));
	json_object_put(st);
}

static void check_exact(struct __test_metadata *_metadata, const struct run *r)
{
	EXPECT_EQ(0, r->ps.rc) TH_LOG("destination: %s", r->ps.err);
	for (int i = 0; i < r->nworkers; i++) {
		EXPECT_EQ(0, r->w[i].rc) TH_LOG("worker %d: %s", i, r->w[i].err);
	}
	EXPECT_TRUE(run_exact(r));
}

/* Every router's health in job show; returns the object of router ns. */
static json_object *router_of(json_object *job, const char *name)
{
	json_object *arr = get(job, "routers");

	for (size_t i = 0; arr && i < json_object_array_length(arr); i++) {
		json_object *o = json_object_array_get_idx(arr, i);

		if (!strcmp(json_object_get_string(get(o, "switch")), name))
			return o;
	}
	return NULL;
}

TEST_F_TIMEOUT(remote, blue_job_exact_through_ssh_agents, 300)
{
	json_object *resp = request(&self->e, "{\"cmd\": \"submit\", \"k\": 2}"), *show;
	struct run *r = new_run();
	uint32_t id;

	ASSERT_NE(NULL, resp);
	id = json_object_get_int64(get(resp, "job.job"));
	/* Each switch's agent came up through ssh, once. */
	for (int v = 0; v < 3; v++) {
		EXPECT_EQ(1, sessions(&self->e, self->ns[v], NULL)) TH_LOG("%s", self->ns[v]);
	}
	ASSERT_EQ(0, allreduce(&self->e, get(resp, "job"), CHUNKS, r, NULL, NULL, NULL));
	check_exact(_metadata, r);
	check_model(_metadata, &self->e, id);
	show = request(&self->e, "{\"cmd\": \"show\", \"job\": %u}", id);
	ASSERT_NE(NULL, show);
	for (int v = 0; v < 3; v++) {
		char name[8];
		json_object *o;

		snprintf(name, sizeof(name), "r%d", v);
		o = router_of(get(show, "job"), name);
		ASSERT_NE(NULL, o) TH_LOG("%s", name);
		EXPECT_STREQ("ok", json_object_get_string(get(o, "health")));
		EXPECT_STREQ(self->ns[v], json_object_get_string(get(o, "where")));
	}
	json_object_put(show);
	json_object_put(request(&self->e, "{\"cmd\": \"end\", \"job\": %u}", id));
	json_object_put(resp);
	munmap(r, sizeof(*r));
}

static const char *blue_ns;

/* Mid-run: the agent of a blue router killed; the next call starts another. */
static void kill_agent(struct env *e, struct run *r)
{
	pid_t pid = 0;

	usleep(20000);
	if (sessions(e, blue_ns, &pid) && pid > 0)
		kill(pid, SIGKILL);
}

TEST_F_TIMEOUT(remote, agent_killed_mid_job_loses_nothing, 300)
{
	json_object *resp = request(&self->e, "{\"cmd\": \"submit\", \"k\": 1}"), *show, *o;
	struct run *r = new_run();
	const char *blue;
	uint32_t id;

	ASSERT_NE(NULL, resp);
	id = json_object_get_int64(get(resp, "job.job"));
	blue = json_object_get_string(json_object_array_get_idx(get(resp, "job.blue"), 0));
	ASSERT_NE(NULL, blue);
	blue_ns = self->ns[atoi(blue + 1)];
	ASSERT_EQ(0, allreduce(&self->e, get(resp, "job"), CHUNKS, r, NULL, NULL, kill_agent));
	check_exact(_metadata, r);
	/* Counters come through the new agent: the maps never depended on the old one. */
	check_model(_metadata, &self->e, id);
	EXPECT_EQ(2, sessions(&self->e, blue_ns, NULL));
	show = request(&self->e, "{\"cmd\": \"show\", \"job\": %u}", id);
	ASSERT_NE(NULL, show);
	o = router_of(get(show, "job"), blue);
	ASSERT_NE(NULL, o);
	EXPECT_EQ(0, json_object_get_int(get(o, "reboots")));
	EXPECT_EQ(2, json_object_get_int(get(o, "epoch")));
	EXPECT_EQ(NULL, get(show, "job.failed"));
	json_object_put(show);
	json_object_put(request(&self->e, "{\"cmd\": \"end\", \"job\": %u}", id));
	json_object_put(resp);
	munmap(r, sizeof(*r));
}

/* Nothing of job id in any router's ledger or maps. */
static void check_nothing_held(struct __test_metadata *_metadata, struct _test_data_remote *self,
			       uint32_t id, int skip)
{
	for (int v = 0; v < 3; v++) {
		if (v == skip)
			continue;
		EXPECT_NE(0, sh("%s/inagg -j ledger show --netns %s | grep -q '\"id\": *%u\\b'", build,
				self->ns[v], id)) TH_LOG("%s still holds job %u", self->ns[v], id);
	}
}

TEST_F_TIMEOUT(remote, unreachable_router_rolls_back_then_returns, 300)
{
	char path[PATH_MAX + 32], err[256], want[128];
	json_object *resp, *q;
	const char *msg;
	pid_t pid = 0;
	struct run *r;

	/* r2 (a worker's router, on every job's path) goes away: its session and its host. */
	snprintf(path, sizeof(path), "%s/%s.down", self->e.dir, self->ns[2]);
	ASSERT_EQ(0, write_file(path, "", 0644));
	ASSERT_LT(0, sessions(&self->e, self->ns[2], &pid));
	kill(pid, SIGKILL);
	q = json_tokener_parse("{\"cmd\": \"submit\", \"k\": 2}");
	ASSERT_EQ(0, ia_ctl_call(self->e.sock, q, &resp, err, sizeof(err))) TH_LOG("%s", err);
	json_object_put(q);
	EXPECT_FALSE(json_object_get_boolean(get(resp, "ok")))
		TH_LOG("a job across an unreachable router was accepted");
	msg = json_object_get_string(get(resp, "error"));
	snprintf(want, sizeof(want), "router r2 (%s): unreachable", self->ns[2]);
	EXPECT_NE(NULL, msg && strstr(msg, want) ? msg : NULL) TH_LOG("%s", msg);
	EXPECT_NE(NULL, msg && strstr(msg, "No route to host") ? msg : NULL);
	json_object_put(resp);
	check_nothing_held(_metadata, self, 1, 2);
	/* Back: after its hold-off, the next job runs there. */
	unlink(path);
	sleep(IA_LINK_HOLDOFF_MS / 1000 + 1);
	resp = request(&self->e, "{\"cmd\": \"submit\", \"k\": 2}");
	ASSERT_NE(NULL, resp);
	r = new_run();
	ASSERT_EQ(0, allreduce(&self->e, get(resp, "job"), CHUNKS, r, NULL, NULL, NULL));
	check_exact(_metadata, r);
	json_object_put(resp);
	munmap(r, sizeof(*r));
}

TEST_F_TIMEOUT(remote, rebooted_router_fails_its_job, 300)
{
	json_object *resp = request(&self->e, "{\"cmd\": \"submit\", \"k\": 2}"), *show;
	char path[PATH_MAX + 32];
	const char *failed;
	pid_t pid = 0;
	uint32_t id;

	ASSERT_NE(NULL, resp);
	id = json_object_get_int64(get(resp, "job.job"));
	/* r1 "reboots": another boot id, its session gone. */
	snprintf(path, sizeof(path), "%s/%s.boot", self->e.dir, self->ns[1]);
	ASSERT_EQ(0, write_file(path, "another-boot\n", 0644));
	ASSERT_LT(0, sessions(&self->e, self->ns[1], &pid));
	kill(pid, SIGKILL);
	/*
	 * show's hello to r1 finds the new boot, unless a call of the daemon's
	 * own (the memory sampler) to r1 was under way: show is answered then
	 * with r1 busy, and that call finds it. Asked again until it did.
	 */
	for (int i = 0;; i++) {
		show = request(&self->e, "{\"cmd\": \"show\", \"job\": %u}", id);
		ASSERT_NE(NULL, show);
		if (get(show, "job.failed") || i == 100)
			break;
		json_object_put(show);
		usleep(100000);
	}
	failed = json_object_get_string(get(show, "job.failed"));
	EXPECT_NE(NULL, failed && strstr(failed, "router r1") ? failed : NULL)
		TH_LOG("%s", json_object_to_json_string(show));
	EXPECT_EQ(1, json_object_get_int(get(router_of(get(show, "job"), "r1"), "reboots")));
	json_object_put(show);
	/* Ended cleanly, and gone from every router. */
	json_object_put(request(&self->e, "{\"cmd\": \"end\", \"job\": %u}", id));
	check_nothing_held(_metadata, self, id, -1);
	json_object_put(resp);
}

int main(int argc, char **argv)
{
	char exe[PATH_MAX] = "";
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n > 0)
		exe[n] = '\0';
	/* build/tests/net/remote -> build */
	snprintf(build, sizeof(build), "%s", dirname(dirname(dirname(exe))));
	return test_harness_run(argc, argv);
}
