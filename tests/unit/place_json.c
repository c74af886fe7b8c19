// SPDX-License-Identifier: GPL-2.0
/*
 * inagg -j topo place prints exact numbers: every congestion, read back as a
 * double, is the correctly rounded value of the exact congestion recomputed
 * from the printed blue set, bit for bit, and its "_exact" text is that
 * rational. Runs the built CLI beside this test (build/inagg).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>

#include "gen.h"
#include "kselftest_harness.h"
#include "json_get.h"
#include "place.h"

static char cli[PATH_MAX + 16];

/* build/tests/unit/place_json -> build/inagg */
static void find_cli(void)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	self[n > 0 ? n : 0] = '\0';
	for (int i = 0; i < 3; i++)
		*(strrchr(self, '/') ? strrchr(self, '/') : self) = '\0';
	snprintf(cli, sizeof(cli), "%s/inagg", self);
}

/* The CLI's output with -j and args; the text also in *text when not NULL. */
static json_object *run_json(const char *args, char **text)
{
	char cmd[PATH_MAX * 3];
	size_t len = 0, cap = 1 << 16, r;
	char *out = malloc(cap);
	json_object *o;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "%s -j %s", cli, args);
	p = popen(cmd, "r");
	while (p && out && (r = fread(out + len, 1, cap - len - 1, p)) > 0) {
		len += r;
		if (len + 1 == cap)
			out = realloc(out, cap *= 2);
	}
	if (p)
		pclose(p);
	if (!out)
		return NULL;
	out[len] = '\0';
	o = json_tokener_parse(out);
	if (text)
		*text = out;
	else
		free(out);
	return o;
}

/* The printed double and text of a rational, against the exact value. */
static int same_ratio(json_object *o, const char *key, struct ia_ratio want, char *why, size_t len)
{
	char exact_key[64], exact[64];
	json_object *d = get(o, key), *x;
	double got, ref = ia_ratio_double(want);

	snprintf(exact_key, sizeof(exact_key), "%s_exact", key);
	x = get(o, exact_key);
	ia_ratio_exact(want, exact, sizeof(exact));
	if (!d || !x)
		return snprintf(why, len, "%s or %s missing", key, exact_key), -1;
	got = json_object_get_double(d);
	if (memcmp(&got, &ref, sizeof(got)))
		return snprintf(why, len, "%s: %.17g printed, exact %s is %.17g", key, got, exact,
				ref), -1;
	if (strcmp(json_object_get_string(x), exact))
		return snprintf(why, len, "%s: \"%s\" printed, exact %s", exact_key,
				json_object_get_string(x), exact), -1;
	return 0;
}

/* Recomputes one printed placement from its blue names and compares every number. */
static int check_placement(const struct ia_topo *t, int k, json_object *pl, char *why, size_t len)
{
	struct ia_problem pb = { .topo = t, .k = k };
	json_object *blue = get(pl, "blue"), *links = get(pl, "links");
	struct ia_placement p;
	int ret = -1;

	if (!blue || !links || ia_placement_init(&p, t->n))
		return snprintf(why, len, "blue or links missing"), -1;
	for (size_t i = 0; i < json_object_array_length(blue); i++) {
		int v = ia_topo_find(t, json_object_get_string(json_object_array_get_idx(blue, i)));

		if (v < 0) {
			snprintf(why, len, "unknown blue switch");
			goto out;
		}
		p.blue[v] = true;
	}
	ia_model_eval(&pb, &p);
	if (same_ratio(pl, "congestion", p.congestion, why, len))
		goto out;
	if (json_object_array_length(links) != (size_t)t->n) {
		snprintf(why, len, "%zu links, %d switches", json_object_array_length(links), t->n);
		goto out;
	}
	for (size_t i = 0; i < json_object_array_length(links); i++) {
		json_object *l = json_object_array_get_idx(links, i);
		int v = ia_topo_find(t, json_object_get_string(get(l, "switch")));

		if (v < 0 || (uint64_t)json_object_get_int64(get(l, "messages")) != p.msgs[v] ||
		    same_ratio(l, "congestion", ia_congestion(p.msgs[v], t->sw[v].rate), why, len) ||
		    same_ratio(l, "rate", t->sw[v].rate, why, len)) {
			if (v < 0 || !*why)
				snprintf(why, len, "link %zu: switch or messages differ", i);
			goto out;
		}
	}
	ret = 0;
out:
	ia_placement_free(&p);
	return ret;
}

TEST(every_congestion_is_exact)
{
	char path[] = "/tmp/ia-place-json-XXXXXX", args[PATH_MAX + 128];
	int checked = 0;

	find_cli();
	ASSERT_EQ(0, access(cli, X_OK)) TH_LOG("%s: %s", cli, strerror(errno));
	for (int iter = 0; iter < 12; iter++) {
		struct ia_gen_opts g;
		struct ia_topo *t;
		json_object *doc, *pls;
		int fd = mkstemp(path), k = 1 + iter % 7;
		FILE *f = fdopen(fd, "w");

		ASSERT_NE(NULL, f);
		ia_gen_defaults(&g);
		g.depth = 3 + iter % 4;
		g.rate = iter % IA_GEN_RATE__COUNT;	/* exp and random give 200/9-like values */
		g.load = iter % 2 ? IA_GEN_LOAD_POWERLAW : IA_GEN_LOAD_UNIFORM;
		g.load_all = iter % 3 == 0;
		g.seed = 7 + iter;
		ASSERT_EQ(0, ia_gen_tree(&g, &t));
		ASSERT_EQ(0, ia_topo_write_json(t, f));
		fclose(f);
		snprintf(args, sizeof(args), "topo place -t %s -k %d -a smc,top,max,level,all-red --links all",
			 path, k);
		doc = run_json(args, NULL);
		unlink(path);
		ASSERT_NE(NULL, doc) TH_LOG("%s", args);
		pls = get(doc, "placements");
		ASSERT_NE(NULL, pls) TH_LOG("%s", json_object_to_json_string(doc));
		for (size_t i = 0; i < json_object_array_length(pls); i++) {
			char why[256] = "";

			ASSERT_EQ(0, check_placement(t, k, json_object_array_get_idx(pls, i), why,
						     sizeof(why)))
				TH_LOG("iter %d placement %zu: %s", iter, i, why);
			checked++;
		}
		json_object_put(doc);
		ia_topo_free(t);
		strcpy(path, "/tmp/ia-place-json-XXXXXX");
	}
	ASSERT_GE(checked, 60);
}

/* The case of the issue: 200/9 is printed as 22.22222222222222 and "200/9". */
TEST(two_hundred_ninths)
{
	static const char topo[] = "{\"switches\": [{\"name\": \"r\", \"parent\": null, \"rate\": 9, "
				   "\"load\": 200, \"available\": false}]}";
	char path[] = "/tmp/ia-place-json-XXXXXX", args[PATH_MAX + 64];
	int fd = mkstemp(path);
	json_object *doc;
	char *text = NULL;

	find_cli();
	ASSERT_EQ((ssize_t)strlen(topo), write(fd, topo, strlen(topo)));
	close(fd);
	snprintf(args, sizeof(args), "topo place -t %s -k 1", path);
	doc = run_json(args, &text);
	unlink(path);
	ASSERT_NE(NULL, doc);
	/* Python's repr(200 / 9), not 22.2222 nor 22.222222222222221 */
	ASSERT_NE(NULL, strstr(text, "\"congestion\": 22.22222222222222,")) TH_LOG("%s", text);
	free(text);
	ASSERT_STREQ("200/9", json_object_get_string(get(doc, "congestion_exact")));
	ASSERT_EQ(200.0 / 9, json_object_get_double(get(doc, "congestion")));
	json_object_put(doc);
}

TEST_HARNESS_MAIN
