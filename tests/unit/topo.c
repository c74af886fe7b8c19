// SPDX-License-Identifier: GPL-2.0
/* Topology parsing: good files load exactly, each bad one is named precisely. */
#include <stdio.h>
#include <string.h>

#include "kselftest_harness.h"
#include "topo.h"

struct bad_case {
	const char *what;
	const char *json;
	const char *expect[2];	/* substrings the one-line error must hold */
};

#define SW(body) "{\"switches\": [" body "]}"
#define ROOT "{\"name\": \"s0\", \"parent\": null}"

static const struct bad_case bad[] = {
	{ "not json", "{\"switches\": [", { "not valid JSON", NULL } },
	{ "trailing garbage", SW(ROOT) " x", { "not valid JSON", NULL } },
	{ "no switches field", "{\"sw\": []}", { "\"switches\"", NULL } },
	{ "empty", SW(""), { "\"switches\"", "empty" } },
	{ "missing name", SW(ROOT ", {\"parent\": \"s0\"}"), { "switch #1", "\"name\"" } },
	{ "empty name", SW(ROOT ", {\"name\": \"\", \"parent\": \"s0\"}"), { "switch #1", "\"name\"" } },
	{ "duplicate name", SW(ROOT ", {\"name\": \"s1\", \"parent\": \"s0\"},"
			       "{\"name\": \"s1\", \"parent\": \"s0\"}"),
	  { "\"s1\"", "duplicate" } },
	{ "unknown parent", SW(ROOT ", {\"name\": \"s1\", \"parent\": \"s9\"}"),
	  { "\"s1\"", "\"parent\": unknown switch \"s9\"" } },
	{ "missing parent", SW(ROOT ", {\"name\": \"s1\"}"), { "\"s1\"", "\"parent\"" } },
	{ "no root", SW("{\"name\": \"a\", \"parent\": \"b\"}, {\"name\": \"b\", \"parent\": \"a\"}"),
	  { "no root", NULL } },
	{ "two roots", SW(ROOT ", {\"name\": \"s1\", \"parent\": null}"),
	  { "\"s1\"", "already the root" } },
	{ "cycle", SW(ROOT ", {\"name\": \"a\", \"parent\": \"b\"}, {\"name\": \"b\", \"parent\": \"a\"}"),
	  { "\"a\"", "cycle" } },
	{ "self parent", SW(ROOT ", {\"name\": \"a\", \"parent\": \"a\"}"), { "\"a\"", "\"parent\"" } },
	{ "rate zero", SW("{\"name\": \"s0\", \"parent\": null, \"rate\": 0}"),
	  { "\"s0\"", "\"rate\": must be > 0" } },
	{ "rate negative", SW("{\"name\": \"s0\", \"parent\": null, \"rate\": -1.5}"),
	  { "\"s0\"", "\"rate\": must be > 0" } },
	{ "rate string", SW("{\"name\": \"s0\", \"parent\": null, \"rate\": \"1\"}"),
	  { "\"s0\"", "\"rate\"" } },
	{ "rate too precise", SW("{\"name\": \"s0\", \"parent\": null, \"rate\": 1.0000000001}"),
	  { "\"s0\"", "decimal places" } },
	{ "load negative", SW("{\"name\": \"s0\", \"parent\": null, \"load\": -1}"),
	  { "\"s0\"", "\"load\"" } },
	{ "load fractional", SW("{\"name\": \"s0\", \"parent\": null, \"load\": 2.5}"),
	  { "\"s0\"", "\"load\": must be an integer" } },
	{ "available not bool", SW("{\"name\": \"s0\", \"parent\": null, \"available\": 1}"),
	  { "\"s0\"", "\"available\"" } },
	{ "capacity negative", SW("{\"name\": \"s0\", \"parent\": null, \"capacity\": -2}"),
	  { "\"s0\"", "\"capacity\"" } },
	{ "slots beyond the limit",
	  SW("{\"name\": \"s0\", \"parent\": null, \"slots\": 16777217}"), { "\"s0\"", "\"slots\"" } },
	{ "slots fractional", SW("{\"name\": \"s0\", \"parent\": null, \"slots\": 2.5}"),
	  { "\"s0\"", "\"slots\"" } },
	{ "unknown field", SW("{\"name\": \"s0\", \"parent\": null, \"colour\": 1}"),
	  { "\"s0\"", "\"colour\": unknown" } },
	/* Names become namespace names: checked once, at load (issue 11). */
	{ "name with slash", SW("{\"name\": \"a/b\", \"parent\": null}"), { "switch #0", "[A-Za-z0-9_.]" } },
	{ "name with newline", SW(ROOT ", {\"name\": \"a\\nb\", \"parent\": \"s0\"}"),
	  { "switch #1", "\"name\"" } },
	{ "name with control char", SW("{\"name\": \"a\\u0007\", \"parent\": null}"), { "switch #0", "\"name\"" } },
	{ "name too long", SW("{\"name\": \"" "0123456789012345678901234567890123456789012345678901234567890123456789"
			      "\", \"parent\": null}"), { "switch #0", "1 to 64" } },
	{ "name dest", SW("{\"name\": \"dest\", \"parent\": null}"), { "switch #0", "\"dest\"" } },
	{ "raw control char", SW("{\"name\": \"a\tb\", \"parent\": null}"), { "not valid JSON", "control" } },
	{ "bad escape", SW("{\"name\": \"a\\qb\", \"parent\": null}"), { "not valid JSON", "escape" } },
	{ "lone surrogate", SW("{\"name\": \"\\ud800\", \"parent\": null}"), { "not valid JSON", "surrogate" } },
	{ "bad number", SW("{\"name\": \"s0\", \"parent\": null, \"rate\": 01}"), { "not valid JSON", "number" } },
	{ "field twice", SW("{\"name\": \"s0\", \"parent\": null, \"load\": 1, \"load\": 2}"),
	  { "\"load\"", "twice" } },
	{ "root is an array", "[1, 2]", { "\"switches\"", "missing" } },
	{ "switch not an object", SW(ROOT ", 7"), { "switch #1", "not a JSON object" } },
	{ "missing comma", SW(ROOT " " ROOT), { "not valid JSON", "expected ','" } },
	{ "too deep", "{\"x\": [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]], \"switches\": []}",
	  { "not valid JSON", "deep" } },
	{ "unknown parent echoed safely", SW(ROOT ", {\"name\": \"s1\", \"parent\": \"x\\ny\"}"),
	  { "unknown switch \"x?y\"", NULL } },
};

TEST(bad_inputs_named)
{
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct ia_topo *t = (void *)1;
		char err[IA_ERRLEN] = "";

		EXPECT_NE(0, ia_topo_parse(bad[i].json, &t, err, sizeof(err))) TH_LOG("%s", bad[i].what);
		EXPECT_EQ(NULL, t);
		EXPECT_EQ(NULL, strchr(err, '\n')) TH_LOG("%s: multi-line error", bad[i].what);
		for (int j = 0; j < 2; j++) {
			const char *want = bad[i].expect[j];

			if (!want)
				continue;
			EXPECT_NE(NULL, strstr(err, want))
				TH_LOG("%s: \"%s\" lacks \"%s\"", bad[i].what, err, want);
		}
	}
}

TEST(good_file_fields_and_defaults)
{
	static const char json[] = SW(
		"{\"name\": \"root\", \"parent\": null, \"rate\": 11.390625, \"capacity\": 4,"
		" \"slots\": 640},"
		"{\"name\": \"a\", \"parent\": \"root\", \"rate\": 1.5, \"load\": 3},"
		"{\"name\": \"b\", \"parent\": \"root\", \"load\": 0, \"available\": false},"
		"{\"name\": \"c\", \"parent\": \"a\", \"rate\": 2.5e-1, \"load\": 9}");
	struct ia_topo *t;
	char err[IA_ERRLEN], buf[64];

	ASSERT_EQ(0, ia_topo_parse(json, &t, err, sizeof(err))) TH_LOG("%s", err);
	ASSERT_EQ(4, t->n);
	ASSERT_EQ(0, t->root);
	ASSERT_EQ(2, t->height);
	ia_ratio_format(t->sw[0].rate, buf, sizeof(buf));
	EXPECT_STREQ("11.390625", buf);
	EXPECT_EQ(729u, (unsigned)t->sw[0].rate.num);	/* 11.390625 = 729 / 64 exactly */
	EXPECT_EQ(64u, (unsigned)t->sw[0].rate.den);
	ia_ratio_format(t->sw[3].rate, buf, sizeof(buf));
	EXPECT_STREQ("0.25", buf);
	EXPECT_EQ(4u, t->sw[0].capacity);
	EXPECT_EQ(1u, t->sw[1].capacity);	/* default */
	EXPECT_EQ(640u, t->sw[0].slots);
	EXPECT_EQ(IA_SLOTS_DEFAULT, t->sw[1].slots);	/* default */
	EXPECT_TRUE(t->sw[1].available);		/* default */
	EXPECT_FALSE(t->sw[2].available);
	EXPECT_EQ(1u, (unsigned)t->sw[2].rate.num);	/* default rate 1 */
	EXPECT_EQ(12u, (unsigned)ia_topo_total_load(t));
	EXPECT_EQ(1, t->depth[ia_topo_find(t, "a")]);
	EXPECT_EQ(2, t->depth[ia_topo_find(t, "c")]);
	EXPECT_EQ(-1, ia_topo_find(t, "zz"));
	ia_topo_free(t);
}

/* Escapes decode, other root fields are skipped, parents may come after children. */
TEST(json_escapes_and_order)
{
	static const char json[] = "{\"comment\": {\"a\": [1, 2.5e3, null, true]}, \"switches\": ["
		"{\"name\": \"leaf\", \"parent\": \"r\\u006f\\u006ft\", \"load\": 2},"
		"{\"name\": \"r\\u006fot\", \"parent\": null}], \"z\": \"\\ud83d\\ude00\"}  \n";
	struct ia_topo *t;
	char err[IA_ERRLEN];

	ASSERT_EQ(0, ia_topo_parse(json, &t, err, sizeof(err))) TH_LOG("%s", err);
	ASSERT_EQ(2, t->n);
	EXPECT_STREQ("root", t->sw[1].name);
	EXPECT_EQ(1, t->sw[0].parent);
	EXPECT_EQ(1, t->root);
	EXPECT_EQ(1, ia_topo_find(t, "root"));
	EXPECT_EQ(1, ia_topo_find_n(t, "rootx", 4));
	ia_topo_free(t);
}

/* A large tree loads and every name is found through the index. */
TEST(large_tree_lookups)
{
	const int n = 200000;
	char *text = NULL, name[16];
	size_t len = 0;
	struct ia_topo *t;
	FILE *f = open_memstream(&text, &len);

	fprintf(f, "{\"switches\": [");
	for (int i = 0; i < n; i++) {
		fprintf(f, "%s{\"name\": \"n%d\", \"parent\": ", i ? "," : "", i);
		if (i)
			fprintf(f, "\"n%d\"}", (i - 1) / 2);
		else
			fprintf(f, "null}");
	}
	fprintf(f, "]}");
	fclose(f);
	ASSERT_EQ(0, ia_topo_parse(text, &t, NULL, 0));
	free(text);
	ASSERT_EQ(n, t->n);
	for (int i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "n%d", i);
		ASSERT_EQ(i, ia_topo_find(t, name));
		ASSERT_EQ(i ? (i - 1) / 2 : -1, t->sw[i].parent);
	}
	EXPECT_EQ(-1, ia_topo_find(t, "n200000"));
	ia_topo_free(t);
}

/* What ia_topo_write_json writes reads back identically. */
TEST(json_round_trip)
{
	static const char json[] = SW(
		"{\"name\": \"r\", \"parent\": null, \"rate\": 17.0859375, \"capacity\": 3},"
		"{\"name\": \"x\", \"parent\": \"r\", \"rate\": 0.000000001, \"load\": 5,"
		" \"slots\": 16777216},"
		"{\"name\": \"y\", \"parent\": \"r\", \"rate\": 1000000, \"available\": false}");
	struct ia_topo *a, *b;
	char *text = NULL;
	size_t len = 0;
	FILE *f;

	ASSERT_EQ(0, ia_topo_parse(json, &a, NULL, 0));
	f = open_memstream(&text, &len);
	ASSERT_EQ(0, ia_topo_write_json(a, f));
	fclose(f);
	ASSERT_EQ(0, ia_topo_parse(text, &b, NULL, 0)) TH_LOG("%s", text);
	ASSERT_EQ(a->n, b->n);
	for (int i = 0; i < a->n; i++) {
		EXPECT_STREQ(a->sw[i].name, b->sw[i].name);
		EXPECT_EQ(a->sw[i].parent, b->sw[i].parent);
		EXPECT_EQ(0, ia_ratio_cmp(a->sw[i].rate, b->sw[i].rate));
		EXPECT_EQ(a->sw[i].load, b->sw[i].load);
		EXPECT_EQ(a->sw[i].available, b->sw[i].available);
		EXPECT_EQ(a->sw[i].capacity, b->sw[i].capacity);
		EXPECT_EQ(a->sw[i].slots, b->sw[i].slots);
	}
	EXPECT_EQ(IA_SLOTS_MAX, b->sw[1].slots);
	free(text);
	ia_topo_free(a);
	ia_topo_free(b);
}

TEST(ratio_parse_exact)
{
	struct ia_ratio r;

	ASSERT_EQ(0, ia_ratio_parse("1.5", &r));
	EXPECT_EQ(3u, (unsigned)r.num);
	EXPECT_EQ(2u, (unsigned)r.den);
	ASSERT_EQ(0, ia_ratio_parse("2e3", &r));
	EXPECT_EQ(2000u, (unsigned)r.num);
	EXPECT_EQ(1u, (unsigned)r.den);
	ASSERT_EQ(0, ia_ratio_parse("1.10", &r));	/* trailing zero is not a digit more */
	EXPECT_EQ(11u, (unsigned)r.num);
	EXPECT_EQ(10u, (unsigned)r.den);
	EXPECT_NE(0, ia_ratio_parse("1.5x", &r));
	EXPECT_NE(0, ia_ratio_parse("", &r));
	EXPECT_NE(0, ia_ratio_parse("-2", &r));
	EXPECT_NE(0, ia_ratio_parse("0.0000000001", &r));
	/* 1/3 vs 0.333333333: exact comparison sees the difference */
	struct ia_ratio third = { 1, 3 };

	ASSERT_EQ(0, ia_ratio_parse("0.333333333", &r));
	EXPECT_LT(ia_ratio_cmp(r, third), 0);
}

TEST(missing_file)
{
	struct ia_topo *t;
	char err[IA_ERRLEN];

	EXPECT_NE(0, ia_topo_load("/nonexistent/topo.json", &t, err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "/nonexistent/topo.json"));
}

TEST_HARNESS_MAIN
