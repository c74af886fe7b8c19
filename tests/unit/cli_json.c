// SPDX-License-Identifier: GPL-2.0
/*
 * The JSON output of the inagg CLI, read back with json-c: fields present,
 * every reported number consistent with a recomputation of the congestion
 * model from the printed blue set, SMC optimal against brute force and the
 * baselines on generated trees, multi-workload totals and capacity.
 * Runs $BUILD/inagg (default build/inagg).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <json-c/json.h>

#include "kselftest_harness.h"
#include "json_get.h"

static const char fig1[] =
	"{\"switches\": ["
	"{\"name\": \"s0\", \"parent\": null, \"rate\": 1, \"load\": 0},"
	"{\"name\": \"s1\", \"parent\": \"s0\", \"rate\": 1, \"load\": 0},"
	"{\"name\": \"s2\", \"parent\": \"s0\", \"rate\": 1, \"load\": 0},"
	"{\"name\": \"s3\", \"parent\": \"s1\", \"rate\": 1, \"load\": 2},"
	"{\"name\": \"s4\", \"parent\": \"s1\", \"rate\": 1, \"load\": 6},"
	"{\"name\": \"s5\", \"parent\": \"s2\", \"rate\": 1, \"load\": 5},"
	"{\"name\": \"s6\", \"parent\": \"s2\", \"rate\": 1, \"load\": 5}]}";

static const char *inagg(void)
{
	static char path[512];
	const char *b = getenv("BUILD");

	snprintf(path, sizeof(path), "%s/inagg", b && *b ? b : "build");
	return path;
}

/* Runs "inagg ARGS", returns its stdout parsed (or NULL) and its exit status. */
static json_object *run_json(int *status, const char *fmt, ...)
{
	char cmd[2048], *buf = NULL;
	size_t cap = 0, len = 0, r;
	json_object *o = NULL;
	va_list ap;
	FILE *p;
	int n;

	n = snprintf(cmd, sizeof(cmd), "%s ", inagg());
	va_start(ap, fmt);
	vsnprintf(cmd + n, sizeof(cmd) - n, fmt, ap);
	va_end(ap);
	p = popen(cmd, "r");
	if (!p)
		return NULL;
	do {
		if (cap - len < 4096) {
			cap = cap ? cap * 2 : 65536;
			buf = realloc(buf, cap);
			if (!buf)
				break;
		}
		r = fread(buf + len, 1, cap - len - 1, p);
		len += r;
	} while (r > 0);
	*status = pclose(p);
	if (buf) {
		buf[len] = '\0';
		o = json_tokener_parse(buf);
	}
	free(buf);
	return o;
}

static double num(json_object *o, const char *key)
{
	json_object *v = get(o, key);

	return v ? json_object_get_double(v) : NAN;
}

static int same(double a, double b)
{
	return fabs(a - b) <= 1e-5 * fmax(1.0, fabs(b));
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

/*
 * Checks one placement object against the model recomputed here: a red
 * switch sends its load plus its children's messages, a blue one 1 message
 * (0 with no load below); congestion = messages / rate, the largest is the
 * network's. Returns a description of the first mismatch, or NULL.
 */
static const char *check_placement(json_object *pl, char *why, size_t len)
{
	json_object *links = get(pl, "links"), *blue = get(pl, "blue");
	int n, i, j, changed, nblue = 0;
	double worst = 0;

	if (!links || !blue || !get(pl, "algorithm") || !get(pl, "k") ||
	    !get(pl, "congestion") || !get(pl, "solve_seconds"))
		return "missing field";
	n = json_object_array_length(links);
	{
		double sub[n], msgs[n];
		int par[n], isblue[n], done[n];

		for (i = 0; i < n; i++) {
			json_object *l = json_object_array_get_idx(links, i);
			const char *p = json_object_get_string(get(l, "parent"));

			par[i] = -1;
			for (j = 0; p && j < n; j++)
				if (!strcmp(p, json_object_get_string(
							get(json_object_array_get_idx(links, j), "switch"))))
					par[i] = j;
			isblue[i] = json_object_get_boolean(get(l, "blue"));
			nblue += isblue[i];
			sub[i] = num(l, "load");
			msgs[i] = 0;
			done[i] = 0;
		}
		if (nblue != (int)json_object_array_length(blue) || nblue != num(pl, "nblue"))
			return "blue count differs between links, blue and nblue";
		/* Leaves up: a switch is done once all its children are. */
		do {
			changed = 0;
			for (i = 0; i < n; i++) {
				int ready = !done[i];
				double in = 0, below = 0;

				for (j = 0; ready && j < n; j++)
					if (par[j] == i) {
						ready = done[j];
						in += msgs[j];
						below += sub[j];
					}
				if (!ready)
					continue;
				sub[i] += below;
				msgs[i] = isblue[i] ? (sub[i] > 0) : in + num(
					json_object_array_get_idx(links, i), "load");
				done[i] = changed = 1;
			}
		} while (changed);
		for (i = 0; i < n; i++) {
			json_object *l = json_object_array_get_idx(links, i);
			double c = msgs[i] / num(l, "rate");

			if (!done[i] || msgs[i] != num(l, "messages")) {
				snprintf(why, len, "%s: messages %g, model %g",
					 json_object_get_string(get(l, "switch")), num(l, "messages"),
					 msgs[i]);
				return why;
			}
			if (!same(num(l, "congestion"), c)) {
				snprintf(why, len, "%s: congestion %g, model %g",
					 json_object_get_string(get(l, "switch")),
					 num(l, "congestion"), c);
				return why;
			}
			worst = fmax(worst, c);
		}
	}
	if (!same(num(pl, "congestion"), worst)) {
		snprintf(why, len, "congestion %g, largest link %g", num(pl, "congestion"), worst);
		return why;
	}
	return NULL;
}

struct expect {
	const char *algo;
	double congestion;
};

TEST(fig1_every_algorithm)
{
	static const struct expect ex[] = {
		{ "top", 8 }, { "max", 9 }, { "level", 6 }, { "smc", 5 }, { "smc-naive", 5 },
		{ "all-red", 18 }, { "all-blue", 1 }, { "brute", 5 },
	};
	char path[] = "/tmp/inagg-cli-XXXXXX", file[64], why[256];
	int fd = mkstemp(path), status;

	ASSERT_GE(fd, 0);
	close(fd);
	snprintf(file, sizeof(file), "%s", path);
	write_file(file, fig1);
	for (size_t i = 0; i < sizeof(ex) / sizeof(ex[0]); i++) {
		json_object *o = run_json(&status, "-j topo place -t %s -k 2 -a %s", file, ex[i].algo);
		const char *bad;

		ASSERT_NE(NULL, o) TH_LOG("%s: no JSON", ex[i].algo);
		EXPECT_EQ(0, status);
		EXPECT_STREQ(ex[i].algo, json_object_get_string(get(o, "algorithm")));
		EXPECT_EQ(2, num(o, "k"));
		EXPECT_EQ(ex[i].congestion, num(o, "congestion")) TH_LOG("%s", ex[i].algo);
		EXPECT_GE(num(o, "solve_seconds"), 0);
		if (strcmp(ex[i].algo, "all-blue"))
			EXPECT_LE(num(o, "nblue"), 2);
		bad = check_placement(o, why, sizeof(why));
		EXPECT_EQ(NULL, bad) TH_LOG("%s: %s", ex[i].algo, bad);
		json_object_put(o);
	}
	unlink(file);
}

TEST(error_is_json)
{
	int status;
	json_object *o = run_json(&status, "-j topo place -t /nonexistent.json -k 1 2>/dev/null");

	ASSERT_NE(NULL, o);
	EXPECT_NE(0, status);
	ASSERT_NE(NULL, get(o, "error"));
	EXPECT_NE(NULL, strstr(json_object_get_string(get(o, "error")), "nonexistent.json"));
	json_object_put(o);
}

/* SMC matches brute force and beats every baseline on generated random trees. */
TEST(generated_trees_smc_optimal)
{
	char path[] = "/tmp/inagg-cli-XXXXXX", why[256];
	int fd = mkstemp(path), status, seed;

	ASSERT_GE(fd, 0);
	close(fd);
	for (seed = 1; seed <= 40; seed++) {
		json_object *o, *pls;
		double c[8];
		int i, n;

		o = run_json(&status, "topo gen -R %d -r random -l powerlaw --loaded all --avail 0.8 -s %d -o %s",
			     3 + seed % 10, seed, path);
		EXPECT_EQ(0, status);
		json_object_put(o);
		o = run_json(&status, "-j topo place -t %s -k %d -a smc,brute,top,max,level,all-red", path,
			     seed % 5);
		ASSERT_NE(NULL, o);
		ASSERT_EQ(0, status);
		pls = get(o, "placements");
		ASSERT_NE(NULL, pls);
		n = json_object_array_length(pls);
		ASSERT_EQ(6, n);
		for (i = 0; i < n; i++) {
			json_object *pl = json_object_array_get_idx(pls, i);
			const char *bad = check_placement(pl, why, sizeof(why));

			EXPECT_EQ(NULL, bad) TH_LOG("seed %d %s: %s", seed,
						    json_object_get_string(get(pl, "algorithm")), bad);
			EXPECT_LE(num(pl, "nblue"), seed % 5);
			c[i] = num(pl, "congestion");
		}
		EXPECT_TRUE(same(c[0], c[1])) TH_LOG("seed %d: smc %g brute %g", seed, c[0], c[1]);
		for (i = 2; i < n; i++)
			EXPECT_LE(c[0], c[i] + 1e-9) TH_LOG("seed %d: smc %g > %g", seed, c[0], c[i]);
		json_object_put(o);
	}
	unlink(path);
}

/* Multi-workload totals add up and capacity is consumed once per blue use. */
TEST(multi_totals_and_capacity)
{
	char topo[] = "/tmp/inagg-cli-XXXXXX", wl[] = "/tmp/inagg-wl-XXXXXX";
	static const char workloads[] =
		"{\"workloads\": ["
		"{\"name\": \"a\", \"k\": 3, \"load\": {\"s7\": 9, \"s8\": 1, \"s9\": 4, \"s14\": 7}},"
		"{\"name\": \"b\", \"k\": 3, \"load\": {\"s7\": 2, \"s10\": 8, \"s11\": 8, \"s12\": 3}},"
		"{\"name\": \"c\", \"k\": 2},"
		"{\"name\": \"d\", \"k\": 4, \"load\": {\"s13\": 5, \"s14\": 5}}]}";
	const char *aware[] = { "", "--aware" };
	int fd, status;

	fd = mkstemp(topo);
	ASSERT_GE(fd, 0);
	close(fd);
	fd = mkstemp(wl);
	ASSERT_GE(fd, 0);
	close(fd);
	write_file(wl, workloads);
	json_object_put(run_json(&status, "topo gen -d 3 -r linear -c 2 -s 5 -o %s", topo));
	ASSERT_EQ(0, status);
	for (int a = 0; a < 2; a++) {
		json_object *o = run_json(&status, "-j topo multi -t %s --workloads %s %s", topo, wl, aware[a]);
		json_object *links, *ws;
		double worst = 0;
		int i, j, nl, nw;

		ASSERT_NE(NULL, o);
		ASSERT_EQ(0, status);
		links = get(o, "links");
		ws = get(o, "workloads");
		ASSERT_NE(NULL, links);
		ASSERT_NE(NULL, ws);
		nl = json_object_array_length(links);
		nw = json_object_array_length(ws);
		ASSERT_EQ(15, nl);
		ASSERT_EQ(4, nw);
		for (j = 0; j < nw; j++) {
			json_object *w = json_object_array_get_idx(ws, j);

			EXPECT_LE(num(w, "nblue"), num(w, "k"));
		}
		for (i = 0; i < nl; i++) {
			json_object *l = json_object_array_get_idx(links, i);
			const char *sw = json_object_get_string(get(l, "switch"));
			double total = 0;
			int uses = 0;

			for (j = 0; j < nw; j++) {
				json_object *w = json_object_array_get_idx(ws, j), *b = get(w, "blue");

				total += num(get(w, "messages"), sw);
				for (size_t x = 0; x < json_object_array_length(b); x++)
					uses += !strcmp(sw, json_object_get_string(
								    json_object_array_get_idx(b, x)));
			}
			EXPECT_EQ(total, num(l, "messages")) TH_LOG("%s", sw);
			EXPECT_LE(uses, num(l, "capacity")) TH_LOG("%s", sw);
			EXPECT_EQ(num(l, "capacity") - uses, num(l, "residual")) TH_LOG("%s", sw);
			EXPECT_TRUE(same(num(l, "congestion"), total / num(l, "rate")));
			worst = fmax(worst, total / num(l, "rate"));
		}
		EXPECT_TRUE(same(worst, num(o, "congestion")));
		json_object_put(o);
	}
	unlink(topo);
	unlink(wl);
}

TEST(topo_show_counts)
{
	char path[] = "/tmp/inagg-cli-XXXXXX";
	int fd = mkstemp(path), status;
	json_object *o, *sws;
	double sum = 0;

	ASSERT_GE(fd, 0);
	close(fd);
	json_object_put(run_json(&status, "topo gen -d 6 -l powerlaw -r exp -s 9 -o %s", path));
	ASSERT_EQ(0, status);
	o = run_json(&status, "-j topo show -t %s", path);
	ASSERT_NE(NULL, o);
	EXPECT_EQ(127, num(o, "n"));
	EXPECT_EQ(6, num(o, "height"));
	sws = get(o, "switches");
	ASSERT_NE(NULL, sws);
	ASSERT_EQ(127, (int)json_object_array_length(sws));
	for (size_t i = 0; i < json_object_array_length(sws); i++) {
		json_object *s = json_object_array_get_idx(sws, i);

		sum += num(s, "load");
		/* exp rates: 1.5^(6 - depth) */
		EXPECT_TRUE(same(num(s, "rate"), pow(1.5, 6 - num(s, "depth"))));
	}
	EXPECT_EQ(sum, num(o, "total_load"));
	json_object_put(o);
	unlink(path);
}

TEST_HARNESS_MAIN
