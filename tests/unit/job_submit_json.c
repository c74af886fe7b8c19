// SPDX-License-Identifier: GPL-2.0
/*
 * "inagg -j job submit" against a fake inaggd on a socket of the test: the
 * daemon's reply carries the job and the switches that refused it (a job
 * placed again without them); the CLI's JSON must keep both, as its text
 * output does ("refused by SWITCH: REASON"). Runs $BUILD/inagg.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <json-c/json.h>

#include "kselftest_harness.h"

static const char reply[] =
	"{\"ok\": true, \"job\": {\"job\": 7, \"blue\": [\"r0\", \"r1\"]},"
	" \"refused\": [{\"switch\": \"r2\", \"reason\": \"router r2 (x): unreachable\"}]}\n";

/* Runs "inagg [-j] job submit -k 2 -S SOCK" against one canned reply; returns its stdout. */
static char *submit(struct __test_metadata *_metadata, bool json, char *req, size_t reqlen)
{
	char dir[] = "/tmp/ia-subj-XXXXXX", cmd[512], *out;
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	size_t len = 0, cap = 8192, n;
	int ls, c;
	FILE *p;

	ASSERT_NE(NULL, mkdtemp(dir));
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/sock", dir);
	ls = socket(AF_UNIX, SOCK_STREAM, 0);
	ASSERT_LE(0, ls);
	ASSERT_EQ(0, bind(ls, (struct sockaddr *)&sa, sizeof(sa)));
	ASSERT_EQ(0, listen(ls, 1));
	snprintf(cmd, sizeof(cmd), "%s/inagg %s job submit -k 2 -S %s",
		 getenv("BUILD") && *getenv("BUILD") ? getenv("BUILD") : "build",
		 json ? "-j" : "", sa.sun_path);
	p = popen(cmd, "r");
	ASSERT_NE(NULL, p);
	c = accept(ls, NULL, NULL);
	ASSERT_LE(0, c);
	/* The request: one line. */
	for (len = 0; len < reqlen - 1 && read(c, req + len, 1) == 1 && req[len] != '\n'; len++)
		;
	req[len] = '\0';
	ASSERT_EQ((ssize_t)strlen(reply), write(c, reply, strlen(reply)));
	close(c);
	close(ls);
	out = calloc(1, cap);
	ASSERT_NE(NULL, out);
	len = 0;
	while (len < cap - 1 && (n = fread(out + len, 1, cap - 1 - len, p)) > 0)
		len += n;
	EXPECT_EQ(0, pclose(p));
	unlink(sa.sun_path);
	rmdir(dir);
	return out;
}

TEST(json_keeps_refused)
{
	json_object *o, *r, *v;
	char req[1024], *out;

	out = submit(_metadata, true, req, sizeof(req));
	EXPECT_NE(NULL, strstr(req, "\"submit\"")) TH_LOG("request: %s", req);
	o = json_tokener_parse(out);
	ASSERT_NE(NULL, o) TH_LOG("not JSON: %s", out);
	ASSERT_TRUE(json_object_object_get_ex(o, "job", &v));
	EXPECT_EQ(7, json_object_get_int(v));
	ASSERT_TRUE(json_object_object_get_ex(o, "refused", &r)) TH_LOG("%s", out);
	ASSERT_EQ(1, (int)json_object_array_length(r));
	v = json_object_array_get_idx(r, 0);
	EXPECT_STREQ("r2", json_object_get_string(json_object_object_get(v, "switch")));
	EXPECT_STREQ("router r2 (x): unreachable",
		     json_object_get_string(json_object_object_get(v, "reason")));
	json_object_put(o);
	free(out);
}

TEST(text_names_refused)
{
	char req[1024], *out;

	out = submit(_metadata, false, req, sizeof(req));
	EXPECT_NE(NULL, strstr(out, "  refused by r2: router r2 (x): unreachable\n")) TH_LOG("%s", out);
	free(out);
}

TEST_HARNESS_MAIN
