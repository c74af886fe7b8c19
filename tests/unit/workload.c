// SPDX-License-Identifier: GPL-2.0
/* Workload files (user/lib/workload.c): defaults, loads, and errors that name the field. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "workload.h"

static const char fig1[] =
	"{\"switches\": [{\"name\": \"s0\", \"parent\": null},"
	"{\"name\": \"s1\", \"parent\": \"s0\", \"load\": 3},"
	"{\"name\": \"s2\", \"parent\": \"s0\", \"load\": 4}]}";

FIXTURE(wl) {
	struct ia_topo *t;
	char path[64];
};

FIXTURE_SETUP(wl)
{
	char err[IA_ERRLEN];
	int fd;

	ASSERT_EQ(0, ia_topo_parse(fig1, &self->t, err, sizeof(err))) TH_LOG("%s", err);
	strcpy(self->path, "/tmp/ia-wl-XXXXXX");
	fd = mkstemp(self->path);
	ASSERT_LE(0, fd);
	close(fd);
}

FIXTURE_TEARDOWN(wl)
{
	unlink(self->path);
	ia_topo_free(self->t);
}

static int load(const char *path, const char *json, const struct ia_topo *t, long kdef,
		struct ia_workloads *s, char *err)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return -1;
	fputs(json, f);
	fclose(f);
	return ia_workloads_load(path, t, kdef, s, err, IA_ERRLEN);
}

TEST_F(wl, defaults_and_loads)
{
	struct ia_workloads s;
	char err[IA_ERRLEN] = "";

	ASSERT_EQ(0, load(self->path,
			  "{\"workloads\": [{\"name\": \"a\", \"k\": 1, \"load\": {\"s2\": 9}},"
			  " {}]}", self->t, 2, &s, err)) TH_LOG("%s", err);
	ASSERT_EQ(2, s.n);
	EXPECT_STREQ("a", s.w[0].name);
	EXPECT_EQ(1, s.w[0].k);
	EXPECT_EQ(0U, s.w[0].load[1]);	/* not listed: no workers */
	EXPECT_EQ(9U, s.w[0].load[2]);
	EXPECT_STREQ("w1", s.w[1].name);	/* defaults: name, -k, the topology's loads */
	EXPECT_EQ(2, s.w[1].k);
	EXPECT_EQ(3U, s.w[1].load[1]);
	EXPECT_EQ(4U, s.w[1].load[2]);
	ia_workloads_free(&s);
	EXPECT_EQ(0, s.n);
}

TEST_F(wl, errors_name_the_field)
{
	static const struct { const char *json, *why; long kdef; } bad[] = {
		{ "{\"workloads\": [", "not valid JSON (unexpected end of input", 1 },
		{ "{\"workload\": []}", "field \"workloads\": missing", 1 },
		{ "{\"workloads\": []}", "field \"workloads\": empty", 1 },
		{ "{\"workloads\": [3]}", "workload 0: not an object", 1 },
		{ "{\"workloads\": [{\"name\": 5}]}", "field \"name\": not a string", 1 },
		{ "{\"workloads\": [{\"name\": \"w\"}]}", "\"w\": field \"k\": missing", -1 },
		{ "{\"workloads\": [{\"k\": -1}]}", "\"w0\": field \"k\"", 1 },
		{ "{\"workloads\": [{\"load\": {\"s9\": 1}}]}", "unknown switch \"s9\"", 1 },
		{ "{\"workloads\": [{\"load\": {\"s1\": 0.5}}]}", "switch \"s1\": field \"load\"", 1 },
		{ "{\"workloads\": [{\"load\": [1]}]}", "field \"load\": not an object", 1 },
	};
	char err[IA_ERRLEN];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct ia_workloads s;

		err[0] = '\0';
		EXPECT_GT(0, load(self->path, bad[i].json, self->t, bad[i].kdef, &s, err));
		EXPECT_NE(NULL, strstr(err, bad[i].why)) TH_LOG("%s: got '%s'", bad[i].json, err);
		EXPECT_NE(NULL, strstr(err, self->path));
		EXPECT_EQ(0, s.n);	/* nothing half-built handed back */
	}
	EXPECT_GT(0, ia_workloads_load("/nonexistent/wl.json", self->t, 1, &(struct ia_workloads){ 0 },
				       err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "No such file"));
}

TEST_HARNESS_MAIN
