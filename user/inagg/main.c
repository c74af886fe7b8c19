// SPDX-License-Identifier: GPL-2.0
/*
 * inagg: the command line of in-network aggregation. One table of commands,
 * "inagg [-j] <object> <command> [args]", with unique-prefix matching like
 * iproute2 and bpftool; -h and -j are handled here for every command.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"

static const struct cmd topo_cmds[] = {
	{ "gen", cmd_topo_gen,
	  "topo gen { --depth D | --random N } [--load L] [--rate R] [--seed S] [-o FILE]",
	  help_topo_gen },
	{ "dot", cmd_topo_dot, "topo dot -t FILE [-p { ALGO -k K | PLACEMENT.json }] [-o FILE]",
	  help_topo_dot },
	{ "show", cmd_topo_show, "topo show -t FILE", help_topo_show },
	{ "up", cmd_topo_up, "topo up -t FILE [-n TAG] [-r MBIT] [--attach]", help_topo_up },
	{ "down", cmd_topo_down, "topo down [-n TAG] [-t FILE]", help_topo_down },
	{ NULL }
};

static const struct cmd job_cmds[] = {
	{ "submit", cmd_job_submit,
	  "job submit -k K [-a ALGO] [-w WINDOW] [-J ID] [-W SW=N,...] [-S SOCK]", help_job_submit },
	{ "list", cmd_job_list, "job list [-S SOCK]", help_job_list },
	{ "show", cmd_job_show, "job show -J ID [-S SOCK]", help_job_show },
	{ "end", cmd_job_end, "job end -J ID [-S SOCK]", help_job_end },
	{ NULL }
};

/* Add a command here: one line, and its function's prototype in cli.h. */
static const struct cmd main_cmds[] = {
	{ "place", cmd_place, "place -t FILE -k K [-a ALGO[,ALGO...]|all]", help_place },
	{ "multi", cmd_multi, "multi -t FILE -w WORKLOADS [-k K] [-a ALGO] [--aware]", help_multi },
	{ "topo", NULL, "topo { gen | dot | show | up | down } ...", NULL, topo_cmds },
	{ "attach", cmd_attach, "attach dev IFACE [-n NETNS] [-s SWITCH] [-m MODE] [--pass] [--force]",
	  help_attach },
	{ "detach", cmd_detach, "detach dev IFACE [-n NETNS] [-s SWITCH] [-m MODE] [--force]",
	  help_detach },
	{ "status", cmd_status, "status [-n NETNS] [-s SWITCH]", help_status },
	{ "job", NULL, "job { submit | list | show | end } ...", NULL, job_cmds },
	{ "stats", cmd_stats, "stats [-J ID [-c CHUNKS]] [-S SOCK]", help_stats },
	{ "worker", cmd_worker,
	  "worker -J ID -i ID -p ADDR { -n N | -f FILE } [-w W] [-t MS] [-o FILE]", help_worker },
	{ "ps", cmd_ps,
	  "ps -J ID -W N -n N { -d ADDR | -u } [-m LIST] [-l MS | --forever] [--ready FILE]",
	  help_ps },
	{ "ledger", cmd_ledger, "ledger { show | set | admit | release } ... [netns NAME]",
	  help_ledger },
	{ "eval", cmd_eval, "eval [fig2|fig3|fig4|fig5|all]... [--depth D] [--seeds N] [--plot DIR]",
	  help_eval },
	{ NULL }
};

double now_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int parse_long(const char *opt, const char *s, long min, long max, long *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < min || v > max) {
		if (max >= INT_MAX)
			return out_err("%s: invalid value '%s': need an integer >= %ld", opt, s, min);
		return out_err("%s: invalid value '%s': need an integer in [%ld, %ld]", opt, s, min,
			       max);
	}
	*out = v;
	return 0;
}

int parse_u64(const char *opt, const char *s, uint64_t *out)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || end == s || *end || *s == '-')
		return out_err("%s: invalid value '%s': need an unsigned integer", opt, s);
	*out = v;
	return 0;
}

int bad_option(const char *cmd, int c, int optopt, char **argv)
{
	const char *arg = argv[optind - 1];

	if (c == ':')
		return out_err("%s: option '%s' needs an argument", cmd, arg);
	if (optopt)
		return out_err("%s: unknown option '-%c'; try '%s -h'", cmd, optopt, cmd);
	return out_err("%s: unknown option '%s'; try '%s -h'", cmd, arg, cmd);
}

int load_topo(const char *path, struct ia_topo **t)
{
	char err[IA_ERRLEN] = "";
	int ret;

	ret = ia_topo_load(path, t, err, sizeof(err));
	if (ret) {
		/* Some messages already name the file. */
		if (err[0] && !strncmp(err, path, strlen(path)))
			return out_err("%s", err);
		return out_err("%s: %s", path, err[0] ? err : strerror(-ret));
	}
	return 0;
}

int parse_algo(const char *s, enum ia_algo *out)
{
	char list[256] = "";
	int a;

	a = ia_algo_parse(s);
	if (a >= 0) {
		*out = a;
		return 0;
	}
	for (a = 0; a < IA_ALGO__COUNT; a++) {
		strncat(list, a ? ", " : "", sizeof(list) - strlen(list) - 1);
		strncat(list, ia_algo_name(a), sizeof(list) - strlen(list) - 1);
	}
	return out_err("unknown algorithm '%s' (known: %s)", s, list);
}

static void usage_table(FILE *f, const struct cmd *t)
{
	for (; t->name; t++) {
		if (t->sub)
			usage_table(f, t->sub);
		else
			fprintf(f, "       inagg [-j] %s\n", t->synopsis);
	}
}

static void usage(FILE *f)
{
	fprintf(f, "Usage: inagg [-j|--json] [-V|--version] [-h|--help] OBJECT COMMAND [ARGS]\n");
	usage_table(f, main_cmds);
	fprintf(f, "OBJECT and COMMAND may be abbreviated to a unique prefix; "
		   "'inagg OBJECT COMMAND -h' explains one.\n");
}

/* Finds name in table, exactly or as a unique prefix; NULL if none or ambiguous. */
static const struct cmd *lookup(const struct cmd *t, const char *name, int *ambiguous)
{
	const struct cmd *hit = NULL;
	size_t len = strlen(name);
	int n = 0;

	*ambiguous = 0;
	for (; t->name; t++) {
		if (!strcmp(t->name, name))
			return t;
		if (len && !strncmp(t->name, name, len)) {
			hit = t;
			n++;
		}
	}
	if (n > 1) {
		*ambiguous = 1;
		return NULL;
	}
	return hit;
}

static int is_help(const char *s)
{
	return !strcmp(s, "-h") || !strcmp(s, "--help") || !strcmp(s, "help");
}

/*
 * Takes -j/--json and -h/--help out of a command's arguments (up to "--"),
 * so that every command gets them alike. Returns whether help was asked.
 */
static bool strip_common(int *argc, char **argv)
{
	bool help = false;
	int i, j;

	for (i = 1, j = 1; i < *argc; i++) {
		if (!strcmp(argv[i], "--")) {
			while (i < *argc)
				argv[j++] = argv[i++];
			break;
		}
		if (!strcmp(argv[i], "-j") || !strcmp(argv[i], "--json")) {
			out_set_json(true);
			continue;
		}
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			help = true;
			continue;
		}
		argv[j++] = argv[i];
	}
	*argc = j;
	argv[j] = NULL;
	return help;
}

int cmd_dispatch(const struct cmd *table, const char *path, int argc, char **argv)
{
	const struct cmd *c, *t;
	char sub[128];
	int amb;

	if (argc < 1 || is_help(argv[0])) {
		if (table == main_cmds) {
			usage(stdout);
		} else {
			printf("Usage:\n");
			for (t = table; t->name; t++)
				printf("       inagg [-j] %s\n", t->synopsis);
		}
		return argc < 1 ? 1 : 0;
	}
	c = lookup(table, argv[0], &amb);
	if (!c) {
		if (amb)
			return out_err("%s: '%s' is ambiguous; try '%s -h'", path, argv[0], path);
		return out_err("%s: unknown command '%s'; try '%s -h'", path, argv[0], path);
	}
	snprintf(sub, sizeof(sub), "%s %s", path, c->name);
	if (c->sub) {
		if (argc < 2)
			return out_err("%s: missing command; try '%s -h'", sub, sub);
		return cmd_dispatch(c->sub, sub, argc - 1, argv + 1);
	}
	if (strip_common(&argc, argv)) {
		printf("Usage: inagg [-j] %s\n", c->synopsis);
		if (c->help)
			fputs(c->help, stdout);
		return 0;
	}
	/* Commands parse their own options with getopt from a clean state. */
	optind = 0;
	opterr = 0;
	argv[0] = (char *)c->name;
	return c->fn(argc, argv);
}

int main(int argc, char **argv)
{
	int i;

	for (i = 1; i < argc && argv[i][0] == '-' && argv[i][1]; i++) {
		if (!strcmp(argv[i], "-j") || !strcmp(argv[i], "--json")) {
			out_set_json(true);
		} else if (!strcmp(argv[i], "-V") || !strcmp(argv[i], "--version")) {
			out_begin();
			out_str("version", "inagg %s\n", INAGG_VERSION);
			return out_end();
		} else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			usage(stdout);
			return 0;
		} else if (!strcmp(argv[i], "--")) {
			i++;
			break;
		} else {
			out_err("unknown option '%s'", argv[i]);
			usage(stderr);
			return 1;
		}
	}
	if (i == argc) {
		usage(stderr);
		return 1;
	}
	return cmd_dispatch(main_cmds, "inagg", argc - i, argv + i);
}
