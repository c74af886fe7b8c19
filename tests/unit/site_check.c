// SPDX-License-Identifier: GPL-2.0
/*
 * What a topology's site and a controller's layout may ask (issue 31): each
 * bad field refused, with its reason, before anything runs. A site's host
 * beginning with '-' is an ssh option (-oProxyCommand=... as root), agent and
 * switch reach the router's shell, a null in the ssh array cut its argv; a
 * layout may not touch the default route, lo, or any interface that is not a
 * port of the agent's switch.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#pragma GCC diagnostic ignored "-Wsign-compare"
#include "kselftest_harness.h"

#include "agent_rig.h"
#include "skip.h"
#include "remote.h"

/* The topology with switch r0's site, opened; err gets the refusal. */
static int open_site(const char *site, char *err, size_t errlen)
{
	char path[] = "/tmp/ia-site-XXXXXX";
	struct ia_remote r;
	struct ia_topo *t;
	int fd, ret;
	FILE *f;

	fd = mkstemp(path);
	if (fd < 0)
		return -errno;
	f = fdopen(fd, "w");
	fprintf(f, "{\"switches\": [{\"name\": \"r0\", \"parent\": null, \"load\": 1, "
		   "\"site\": %s}]}\n", site);
	fclose(f);
	ret = ia_topo_load(path, &t, err, errlen);
	if (!ret) {
		ret = ia_remote_open(&r, t, path, "t", "inagg-agent", err, errlen);
		ia_remote_close(&r);
		ia_topo_free(t);
	}
	unlink(path);
	return ret;
}

TEST(site_fields_refused_with_their_reason)
{
	static const struct {
		const char *site, *why;
	} cases[] = {
		{ "{\"host\": \"-oProxyCommand=touch /tmp/x\"}", "switch r0: site: host: " },
		{ "{\"host\": \"-p22\"}", "ssh would read it as an option" },
		{ "{\"host\": \"r0; reboot\"}", "switch r0: site: host: " },
		{ "{\"host\": \"\"}", "switch r0: site: host: " },
		{ "{\"host\": \"r0\\u0000-oProxyCommand=x\"}", "\\u0000 in a string" },
		{ "{\"host\": 5}", "switch r0: site: host: " },
		{ "{\"host\": \"r0\", \"agent\": \"inagg-agent; reboot\"}", "switch r0: site: agent: " },
		{ "{\"host\": \"r0\", \"agent\": \"$(reboot)\"}", "switch r0: site: agent: " },
		{ "{\"host\": \"r0\", \"agent\": \"-x\"}", "switch r0: site: agent: " },
		{ "{\"host\": \"r0\", \"switch\": \"r1 `reboot`\"}", "switch r0: site: switch: " },
		{ "{\"host\": \"r0\", \"switch\": \"r1|sh\"}", "switch r0: site: switch: " },
		{ "{\"host\": \"r0\", \"switch\": \"../../etc\"}", "switch r0: site: switch: " },
		{ "{\"host\": \"r0\", \"switch\": \"-rf\"}", "switch r0: site: switch: " },
		{ "{\"host\": \"r0\", \"ssh\": [\"-p\", null]}", "switch r0: site: ssh[1]: " },
		{ "{\"host\": \"r0\", \"ssh\": [\"-p\", 22]}", "switch r0: site: ssh[1]: " },
		{ "{\"host\": \"r0\", \"ssh\": [\"\"]}", "switch r0: site: ssh[0]: " },
		{ "{\"host\": \"r0\", \"ssh\": \"-p 22\"}", "switch r0: site: ssh: an array" },
		{ "{\"host\": \"r0\", \"layout\": \"yes\"}", "switch r0: site: layout: " },
		{ "{\"host\": \"r0\", \"ports\": {\"up\": \"eth0/../x\"}}", "switch r0: site: ports.up: " },
		{ "{\"host\": \"r0\", \"ports\": {\"hosts\": [null]}}", "switch r0: site: ports.hosts: " },
		{ "{\"host\": \"r0\", \"ports\": {\"down\": \"eth2\"}}", "switch r0: site: ports.down: an array" },
		{ "{\"host\": \"r0\", \"ports\": {\"side\": []}}", "unknown field 'side'" },
		{ "{\"host\": \"r0\", \"peers\": {\"up\": \"nonsense\"}}", "switch r0: site: peers.up: a MAC" },
		{ "{\"host\": \"r0\", \"timeout_ms\": -1}", "switch r0: site: timeout_ms: " },
		{ "{\"host\": \"r0\", \"retries\": \"2\"}", "switch r0: site: retries: " },
		{ "\"r0\"", "field \"site\": an object" },
	};
	char err[512];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		err[0] = '\0';
		EXPECT_EQ(-EINVAL, open_site(cases[i].site, err, sizeof(err)))
			TH_LOG("%s accepted", cases[i].site);
		EXPECT_NE(NULL, strstr(err, cases[i].why))
			TH_LOG("%s: '%s' has not '%s'", cases[i].site, err, cases[i].why);
	}
}

TEST(good_sites_pass)
{
	static const char *const ok[] = {
		"{\"host\": \"root@192.0.2.11\", \"ssh\": [\"-p\", \"2222\", \"-o\", "
		"\"IdentitiesOnly=yes\"], \"agent\": \"/usr/local/bin/inagg-agent\", "
		"\"switch\": \"r1\", \"ports\": {\"up\": \"eth1\", \"down\": [], \"hosts\": "
		"[\"eth4\"]}, \"peers\": {\"up\": \"52:54:00:00:00:01\"}, \"layout\": true, "
		"\"timeout_ms\": 5000, \"retries\": 2}",
		"{\"host\": \"admin@[2001:db8::1]\"}",
		"{\"host\": \"router-1.example.org\", \"switch\": \"ia-net1-s0\"}",
		"{}",
	};
	char err[512];

	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		EXPECT_EQ(0, open_site(ok[i], err, sizeof(err))) TH_LOG("%s: %s", ok[i], err);
	}
}

FIXTURE(layout)
{
	struct agent_rig r;
};

FIXTURE_SETUP(layout)
{
	char err[256];

	if (geteuid())
		SETUP_SKIP("an agent's ledger needs root (CAP_NET_ADMIN)");
	/* A switch nothing was attached for: no interface here is its port. */
	ASSERT_EQ(0, agent_rig_setup(&self->r, "ia-layout-none", err, sizeof(err)))
		TH_LOG("%s", err);
}

FIXTURE_TEARDOWN(layout)
{
	agent_rig_teardown(&self->r);
}

TEST_F(layout, routes_and_interfaces_not_inaggs_refused)
{
	static const struct {
		const char *req, *why;
	} cases[] = {
		{ "{\"addrs\": [], \"routes\": [[\"default\", \"10.64.0.1\", \"lo\"]]}",
		  "never the default route" },
		{ "{\"addrs\": [], \"routes\": [[\"0.0.0.0/0\", \"10.64.0.1\", \"lo\"]]}",
		  "never the default route" },
		{ "{\"addrs\": [], \"routes\": [[\"10.0.0.0/8\", \"10.64.0.1\", \"lo\"]]}",
		  "routes[0]: dst and via inside" },
		{ "{\"addrs\": [], \"routes\": [[\"192.0.2.0/24\", \"10.64.0.1\", \"lo\"]]}",
		  "routes[0]: dst and via inside" },
		{ "{\"addrs\": [], \"routes\": [[\"10.128.0.2/32\", \"192.0.2.1\", \"lo\"]]}",
		  "routes[0]: dst and via inside" },
		{ "{\"addrs\": [], \"routes\": [[\"10.128.0.2/32\", \"10.64.0.1\", \"lo\"]]}",
		  "'lo' is not a port of switch ia-layout-none" },
		{ "{\"addrs\": [], \"routes\": [[\"10.64.0.0/10\", \"10.64.0.1\", \"eth0\"]]}",
		  "not a port of switch" },
		{ "{\"addrs\": [[\"lo\", \"10.64.0.2/30\"]], \"routes\": []}",
		  "addrs[0]: 'lo' is not a port of switch ia-layout-none" },
		{ "{\"addrs\": [[\"eth0\", \"10.64.0.2/30\"]], \"routes\": []}",
		  "addrs[0]: 'eth0' is not a port" },
		{ "{\"addrs\": [[\"lo\"]], \"routes\": []}", "addrs[0]: [a port" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		json_object *req = json_tokener_parse(cases[i].req), *r, *v;
		const char *msg;

		ASSERT_NE(NULL, req);
		json_object_object_add(req, "op", json_object_new_string("layout"));
		r = ia_agent_handle(&self->r.a, req);
		json_object_put(req);
		ASSERT_TRUE(json_object_object_get_ex(r, "errno", &v)) TH_LOG("%s", cases[i].req);
		EXPECT_EQ(EINVAL, json_object_get_int(v)) TH_LOG("%s", cases[i].req);
		msg = json_object_object_get_ex(r, "error", &v) ? json_object_get_string(v) : "";
		EXPECT_NE(NULL, strstr(msg, cases[i].why))
			TH_LOG("%s: '%s' has not '%s'", cases[i].req, msg, cases[i].why);
		json_object_put(r);
	}
}

TEST_HARNESS_MAIN
