// SPDX-License-Identifier: GPL-2.0
/* Control requests: strict parsing (UTF-8 included) and the one validation helper. */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#pragma GCC diagnostic ignored "-Wsign-compare"
#include "kselftest_harness.h"
#include "ctl.h"
#include "err.h"

static const struct ia_ctl_field fields[] = {
	{ "k", IA_CTL_INT, true, 0, 100 },
	{ "name", IA_CTL_STRING, false, 1, 8 },
	{ "workers", IA_CTL_COUNTS, false, 0, 10 },
	{ NULL }
};

static int check(const char *text, char *err)
{
	json_object *o;
	int ret = ia_ctl_parse(text, strlen(text), &o, err, IA_ERRLEN);

	if (ret)
		return ret;
	ret = ia_ctl_check(o, fields, err, IA_ERRLEN);
	json_object_put(o);
	return ret;
}

TEST(parse_is_strict_and_utf8)
{
	static const char *const bad[] = {
		"", "\n", "{", "{\"a\": 1", "{\"a\": 1}}", "{\"a\": 1} {}", "{\"a\": 1,}", "{a: 1}",
		"[]", "1", "null", "\"x\"", "{\"a\": \"\xff\"}", "{\"\xc3\x28\": 1}",
		"{\"a\": \"\xe2\x82\"}", "{\"a\": \"\xed\xa0\x80\"}", "{\"a\": \"\xc0\xaf\"}", "{\"a\": \"\xf4\x90\x80\x80\"}",
	};
	static const char ok[] = "{\"a\": \"\xc3\xa9\"}\n";
	char err[IA_ERRLEN];
	json_object *o;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		EXPECT_EQ(-EBADMSG, ia_ctl_parse(bad[i], strlen(bad[i]), &o, err, sizeof(err)))
			TH_LOG("accepted: %s", bad[i]);
		EXPECT_EQ(NULL, o);
		/* The reason never echoes the request. */
		EXPECT_EQ(0, strncmp(err, "request: ", 9)) TH_LOG("%s", err);
	}
	ASSERT_EQ(0, ia_ctl_parse(ok, strlen(ok), &o, err, sizeof(err)));
	json_object_put(o);
}

/* json-c keeps the last of two equal keys: {"cmd":"list","cmd":"show"} would run show. */
TEST(duplicate_keys_refused)
{
	static const char *const bad[] = {
		"{\"cmd\": \"list\", \"cmd\": \"show\"}",
		"{\"cmd\": \"list\", \"c\\u006dd\": \"show\"}",
		"{\"k\": 1, \"workers\": {\"r0\": 1, \"r1\": 2, \"r0\": 3}}",
		"{\"a\\u0000\": 1, \"a\\u0000\": 2}",
		"{\"a\": [1, {\"x\": 1, \"x\": 2}]}",
	};
	static const char ok[] = "{\"cmd\": \"list\", \"workers\": {\"cmd\": 1}, "
				 "\"a\": [{\"x\": 1}, {\"x\": 2}], \"c\\u006d\": 1, \"a\\u0000\": 1}";
	char err[IA_ERRLEN];
	json_object *o;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		EXPECT_EQ(-EBADMSG, ia_ctl_parse(bad[i], strlen(bad[i]), &o, err, sizeof(err)))
			TH_LOG("accepted: %s", bad[i]);
		EXPECT_EQ(NULL, o);
		EXPECT_NE(NULL, strstr(err, "given twice")) TH_LOG("%s", err);
	}
	EXPECT_EQ(0, strcmp(err, "request: key 'x' given twice")) TH_LOG("%s", err);
	ASSERT_EQ(0, ia_ctl_parse(ok, strlen(ok), &o, err, sizeof(err))) TH_LOG("%s", err);
	json_object_put(o);
}

TEST(utf8_cleaned_for_replies)
{
	char s[] = "a\xff b\xc3\xa9 \xed\xa0\x80 \xe2\x82";

	EXPECT_FALSE(ia_ctl_utf8_valid(s, strlen(s)));
	ia_ctl_utf8_clean(s);
	EXPECT_STREQ("a? b\xc3\xa9 ??? ??", s);
	EXPECT_TRUE(ia_ctl_utf8_valid(s, strlen(s)));
}

TEST(every_field_checked)
{
	static const char *const bad[] = {
		"{}", "{\"k\": null}", "{\"k\": \"1\"}", "{\"k\": 1.5}", "{\"k\": true}",
		"{\"k\": []}", "{\"k\": {}}", "{\"k\": -1}", "{\"k\": 101}",
		"{\"k\": 99999999999999999999}", "{\"k\": -99999999999999999999}",
		"{\"k\": 1, \"name\": null}", "{\"k\": 1, \"name\": 3}", "{\"k\": 1, \"name\": \"\"}",
		"{\"k\": 1, \"name\": \"123456789\"}", "{\"k\": 1, \"name\": \"a\\u0000b\"}",
		"{\"k\": 1, \"workers\": 3}", "{\"k\": 1, \"workers\": null}",
		"{\"k\": 1, \"workers\": [1]}", "{\"k\": 1, \"workers\": \"a=1\"}",
		"{\"k\": 1, \"workers\": {\"a\": null}}", "{\"k\": 1, \"workers\": {\"a\": -1}}",
		"{\"k\": 1, \"workers\": {\"a\": 11}}", "{\"k\": 1, \"workers\": {\"a\": \"1\"}}",
	};
	static const char *const good[] = {
		"{\"k\": 0}", "{\"k\": 100, \"name\": \"12345678\"}", "{\"k\": 1, \"workers\": {}}",
		"{\"k\": 1, \"workers\": {\"a\": 0, \"b\": 10}}", "{\"k\": 1, \"other\": null}",
	};
	char err[IA_ERRLEN];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		EXPECT_EQ(-EINVAL, check(bad[i], err)) TH_LOG("accepted: %s", bad[i]);
		/* One line naming the field. */
		EXPECT_TRUE(strstr(err, "k:") || strstr(err, "name:") || strstr(err, "workers:"))
			TH_LOG("%s: %s", bad[i], err);
	}
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		EXPECT_EQ(0, check(good[i], err)) TH_LOG("%s: %s", good[i], err);
	}
}

TEST(getters_read_checked_fields)
{
	json_object *o = json_tokener_parse("{\"k\": 7, \"name\": \"smc\"}");

	EXPECT_EQ(7, ia_ctl_int(o, "k", 1));
	EXPECT_EQ(3, ia_ctl_int(o, "window", 3));
	EXPECT_STREQ("smc", ia_ctl_str(o, "name", "x"));
	EXPECT_STREQ("x", ia_ctl_str(o, "algo", "x"));
	json_object_put(o);
}

TEST_HARNESS_MAIN
