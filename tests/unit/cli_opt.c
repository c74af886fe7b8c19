// SPDX-License-Identifier: GPL-2.0
/*
 * The CLI's option tables (user/inagg/opt.c): one table gives the parser and
 * the help text, so every option the table has is in -h with its limits and
 * default, every option -h shows parses, limits are enforced, groups exclude
 * each other, required options are required. Links opt.o and out.o.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>

#include "kselftest_harness.h"
#include "../../user/inagg/opt.h"

struct args {
	const char *topo;
	long k;
	uint32_t chunk;
	uint8_t small;
	int mode;
	double p;
	struct in_addr addr;
	bool fast;
	long depth, random;
	uint64_t seed;
};

static const char *const modes[] = { "auto", "drv", "skb", NULL };

static const struct args defaults = { .k = 2, .chunk = 256, .small = 7, .p = 0.5, .seed = 1 };

static const struct opt opts[] = {
	OPT_STR('t', "topo", "FILE", struct args, topo, OPT_REQUIRED, "topology"),
	OPT_INT('k', "k", "K", struct args, k, 0, 1000, 0, "budget"),
	OPT_INT('C', "chunk", "E", struct args, chunk, 1, 256, 0, "elements per chunk"),
	OPT_INT(0, "small", "N", struct args, small, 0, OPT_NOMAX, 0, "narrowed to the field"),
	OPT_ENUM('m', "mode", "MODE", struct args, mode, modes, 0, "XDP mode"),
	OPT_REAL(0, "avail", "P", struct args, p, 0, 1, 0, "probability"),
	OPT_ADDR('A', "addr", "ADDR", struct args, addr, 0, "own address"),
	OPT_FLAG(0, "fast", struct args, fast, 0, "go fast"),
	OPT_INT('d', "depth", "D", struct args, depth, 0, 24, OPT_NODEF | OPT_GROUP(1), "depth"),
	OPT_INT('R', "random", "N", struct args, random, 1, 100, OPT_NODEF | OPT_GROUP(1),
		"random tree"),
	OPT_INT('s', "seed", "S", struct args, seed, 0, OPT_NOMAX, 0, "seed"),
	OPT_END
};

static const struct opt_cmd cmd = {
	.opts = opts, .defaults = &defaults, .size = sizeof(defaults), .about = "Tests.\n",
};

static const struct opt_cmd cmd_pos = {
	.opts = opts, .defaults = &defaults, .size = sizeof(defaults), .args = "[X...]",
};

/* Parses a NULL-terminated list of arguments after "test cmd"; 0 or 1. */
static int parse(const struct opt_cmd *c, struct args *a, bool *given, int *first, ...)
{
	char *argv[32] = { "test cmd" };
	int argc = 1;
	va_list ap;

	va_start(ap, first);
	while (argc < 31 && (argv[argc] = va_arg(ap, char *)))
		argc++;
	va_end(ap);
	*a = defaults;
	return opt_parse(c, "test cmd", argc, argv, a, first, given);
}

static char *help_text(void)
{
	static char buf[8192];
	FILE *f = fmemopen(buf, sizeof(buf), "w");

	opt_help(f, &cmd, "test cmd");
	fclose(f);
	return buf;
}

TEST(help_lists_every_option_with_limits_and_defaults)
{
	char *h = help_text(), want[128];

	for (const struct opt *o = opts; o->name; o++) {
		if (o->short_name)
			snprintf(want, sizeof(want), "  -%c, --%s%s%s", o->short_name, o->name,
				 o->meta ? " " : "", o->meta ? o->meta : "");
		else
			snprintf(want, sizeof(want), "      --%s%s%s", o->name, o->meta ? " " : "",
				 o->meta ? o->meta : "");
		EXPECT_NE(NULL, strstr(h, want)) TH_LOG("no '%s' in:\n%s", want, h);
	}
	EXPECT_NE(NULL, strstr(h, "(1..256; default 256)"));
	EXPECT_NE(NULL, strstr(h, "(0..1000; default 2)"));
	/* OPT_NOMAX on a uint8_t field: the field's own limit. */
	EXPECT_NE(NULL, strstr(h, "(0..255; default 7)"));
	EXPECT_NE(NULL, strstr(h, "(auto, drv or skb; default auto)"));
	EXPECT_NE(NULL, strstr(h, "(0..1; default 0.5)"));
	EXPECT_NE(NULL, strstr(h, "topology (required)"));
	EXPECT_NE(NULL, strstr(h, "Usage: inagg [-j] test cmd -t FILE [-k K]"));
	EXPECT_NE(NULL, strstr(h, "[-d D | -R N]"));
}

/* Every "--name" that help shows parses (followed by a valid value). */
TEST(every_option_shown_parses)
{
	char *h = strdup(help_text()), *line, *save;
	struct args a;
	int n = 0;

	for (line = strtok_r(h, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char name[64], arg[32] = "1";
		char *p = strstr(line, "--");

		if (strncmp(line, "  -", 3) && strncmp(line, "      --", 8))
			continue;
		if (!p || sscanf(p, "%63s", name) != 1)
			continue;
		if (!strcmp(name, "--addr"))
			strcpy(arg, "10.0.0.1");
		if (!strcmp(name, "--mode"))
			strcpy(arg, "drv");
		if (!strcmp(name, "--fast"))
			arg[0] = '\0';
		ASSERT_EQ(0, arg[0] ? parse(&cmd, &a, NULL, NULL, "-t", "x", name, arg, NULL) :
				      parse(&cmd, &a, NULL, NULL, "-t", "x", name, NULL))
			TH_LOG("%s %s", name, arg);
		n++;
	}
	EXPECT_EQ(11, n);
	free(h);
}

TEST(values_and_limits)
{
	bool given[ARRAY_SIZE(opts)];
	struct args a;

	ASSERT_EQ(0, parse(&cmd, &a, given, NULL, "-t", "f.json", "-k", "5", "-C256", "--mode",
			   "skb", "--avail", "0.25", "-A", "10.1.2.3", "--fast", "--small", "255",
			   "-s", "18446744073709551615", NULL));
	EXPECT_STREQ("f.json", a.topo);
	EXPECT_EQ(5, a.k);
	EXPECT_EQ(256U, a.chunk);
	EXPECT_EQ(255, a.small);
	EXPECT_EQ(2, a.mode);
	EXPECT_EQ(0.25, a.p);
	EXPECT_EQ(htonl(0x0a010203), a.addr.s_addr);
	EXPECT_TRUE(a.fast);
	EXPECT_EQ(UINT64_MAX, a.seed);
	EXPECT_TRUE(opt_given(opts, given, "chunk"));
	EXPECT_FALSE(opt_given(opts, given, "depth"));

	EXPECT_EQ(1, parse(&cmd, &a, NULL, NULL, "-t", "x", "-C", "257", NULL));
	EXPECT_EQ(1, parse(&cmd, &a, NULL, NULL, "-t", "x", "-C", "0", NULL));
	EXPECT_EQ(1, parse(&cmd, &a, NULL, NULL, "-t", "x", "-k", "-1", NULL));
	EXPECT_EQ(1, parse(&cmd, &a, NULL, NULL, "-t", "x", "-k", "5x", NULL));
	EXPECT_EQ(1, parse(&cmd, &a, NULL, NULL, "-t", "x", "-k", " 5", NULL));
	EXPECT_EQ(1, parse(&cmd, &a, NULL, NULL, "-t", "x", "--small", "256", NULL));
	EXPECT_EQ(1, parse(&cmd, &a, NULL, NULL, "-t", "x", "-s", "18446744073709551616", NULL));
	EXPECT_EQ(1, parse(&cmd, &a, NULL, NULL, "-t", "x", "--mode", "fast", NULL));
	EXPECT_EQ(1, parse(&cmd, &a, NULL, NULL, "-t", "x", "--avail", "1.5", NULL));
	EXPECT_EQ(1, parse(&cmd, &a, NULL, NULL, "-t", "x", "-A", "10.1.2", NULL));
	EXPECT_EQ(1, parse(&cmd, &a, NULL, NULL, "-t", "x", "--nosuch", NULL));
	EXPECT_EQ(1, parse(&cmd, &a, NULL, NULL, "-t", "x", "-k", NULL));
	/* A failed parse leaves a field it rejected as it was. */
	EXPECT_EQ(256U, a.chunk);
}

TEST(required_groups_and_positionals)
{
	struct args a;
	int first = -1;

	EXPECT_EQ(1, parse(&cmd, &a, NULL, NULL, "-k", "1", NULL));		/* no -t */
	EXPECT_EQ(1, parse(&cmd, &a, NULL, NULL, "-t", "x", "-d", "2", "-R", "5", NULL));
	EXPECT_EQ(1, parse(&cmd, &a, NULL, NULL, "-t", "x", "--random", "5", "--depth", "2",
			   NULL));
	EXPECT_EQ(0, parse(&cmd, &a, NULL, NULL, "-t", "x", "-d", "2", "-d", "3", NULL));
	EXPECT_EQ(3, a.depth);
	EXPECT_EQ(1, parse(&cmd, &a, NULL, NULL, "-t", "x", "extra", NULL));
	ASSERT_EQ(0, parse(&cmd_pos, &a, NULL, &first, "a", "-t", "x", "b", "-k", "3", NULL));
	EXPECT_EQ(5, first);	/* options first, then "a" "b" */
	EXPECT_EQ(3, a.k);
}

TEST_HARNESS_MAIN
