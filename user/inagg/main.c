// SPDX-License-Identifier: GPL-2.0
/*
 * inagg: the command line of in-network aggregation. One grammar,
 * "inagg [-j] OBJECT COMMAND [OPTIONS]", like iproute2 and bpftool: tables of
 * objects and commands with unique-prefix matching, and one option table per
 * command (opt.h) that parses its options and prints its help.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "xdp.h"

static const struct cmd topo_cmds[] = {
	{ "gen", cmd_topo_gen, &topo_gen_cmd },
	{ "show", cmd_topo_show, &topo_show_cmd },
	{ "dot", cmd_topo_dot, &topo_dot_cmd },
	{ "place", cmd_topo_place, &topo_place_cmd },
	{ "multi", cmd_topo_multi, &topo_multi_cmd },
	{ "up", cmd_net_up, &net_up_cmd, .flags = CMD_HIDDEN, .canon = "net up" },
	{ "down", cmd_net_down, &net_down_cmd, .flags = CMD_HIDDEN, .canon = "net down" },
	{ NULL }
};

static const struct cmd net_cmds[] = {
	{ "up", cmd_net_up, &net_up_cmd },
	{ "down", cmd_net_down, &net_down_cmd },
	{ NULL }
};

static const struct cmd dev_cmds[] = {
	{ "attach", cmd_dev_attach, &dev_attach_cmd },
	{ "detach", cmd_dev_detach, &dev_detach_cmd },
	{ "show", cmd_dev_show, &dev_show_cmd, .flags = CMD_DEFAULT },
	{ "cleanup", cmd_dev_cleanup, &dev_cleanup_cmd },
	{ NULL }
};

static const struct cmd job_cmds[] = {
	{ "submit", cmd_job_submit, &job_submit_cmd },
	{ "list", cmd_job_list, &job_list_cmd, .flags = CMD_DEFAULT },
	{ "show", cmd_job_show, &job_show_cmd },
	{ "window", cmd_job_window, &job_window_cmd },
	{ "end", cmd_job_end, &job_end_cmd },
	{ NULL }
};

static const struct cmd stats_cmds[] = {
	{ "show", cmd_stats_show, &stats_show_cmd, .flags = CMD_DEFAULT },
	{ NULL }
};

static const struct cmd worker_cmds[] = {
	{ "run", cmd_worker_run, &worker_run_cmd, .flags = CMD_DEFAULT },
	{ NULL }
};

static const struct cmd ps_cmds[] = {
	{ "run", cmd_ps_run, &ps_run_cmd, .flags = CMD_DEFAULT },
	{ NULL }
};

static const struct cmd ledger_cmds[] = {
	{ "show", cmd_ledger_show, &ledger_show_cmd, .flags = CMD_DEFAULT },
	{ "set", cmd_ledger_set, &ledger_set_cmd },
	{ "admit", cmd_ledger_admit, &ledger_admit_cmd },
	{ "release", cmd_ledger_release, &ledger_release_cmd },
	{ NULL }
};

static const struct cmd eval_cmds[] = {
	{ "run", cmd_eval, &eval_cmd, .flags = CMD_DEFAULT },
	{ "fig6", cmd_eval_fig6, &eval_fig6_cmd },
	{ "tenants", cmd_eval_tenants, &eval_tenants_cmd },
	{ NULL }
};

/* Add an object here, or a command to its table: one line each. */
static const struct cmd main_cmds[] = {
	{ "topo", .sub = topo_cmds },
	{ "eval", .sub = eval_cmds },
	{ "net", .sub = net_cmds },
	{ "dev", .sub = dev_cmds },
	{ "job", .sub = job_cmds },
	{ "stats", .sub = stats_cmds },
	{ "worker", .sub = worker_cmds },
	{ "ps", .sub = ps_cmds },
	{ "ledger", .sub = ledger_cmds },
	/* Names of earlier versions. */
	{ "place", cmd_topo_place, &topo_place_cmd, .flags = CMD_HIDDEN, .canon = "topo place" },
	{ "multi", cmd_topo_multi, &topo_multi_cmd, .flags = CMD_HIDDEN, .canon = "topo multi" },
	{ "attach", cmd_dev_attach, &dev_attach_cmd, .flags = CMD_HIDDEN, .canon = "dev attach" },
	{ "detach", cmd_dev_detach, &dev_detach_cmd, .flags = CMD_HIDDEN, .canon = "dev detach" },
	{ "status", cmd_dev_show, &dev_show_cmd, .flags = CMD_HIDDEN, .canon = "dev show" },
	{ NULL }
};

static int visible(const struct cmd *t)
{
	int n = 0;

	for (; t->name; t++)
		n += !(t->flags & CMD_HIDDEN);
	return n;
}

/* One brief synopsis per visible command of table, below path. */
static void usage_table(FILE *f, const struct cmd *t, const char *path)
{
	char sub[256];

	for (; t->name; t++) {
		if (t->flags & CMD_HIDDEN)
			continue;
		snprintf(sub, sizeof(sub), "%s%s%s", path, *path ? " " : "", t->name);
		if (t->sub) {
			usage_table(f, t->sub, sub);
		} else {
			fprintf(f, "       ");
			opt_synopsis(f, t->opt, sub, true);
		}
	}
}

static void usage(FILE *f)
{
	fprintf(f, "Usage: inagg [-j|--json] [-v|--verbose] [-V|--version] [-h|--help] "
		   "OBJECT COMMAND [OPTIONS]\n");
	usage_table(f, main_cmds, "");
	fprintf(f, "OBJECT and COMMAND may be abbreviated to a unique prefix. 'inagg OBJECT\n"
		   "[OPTIONS]' runs the object's default command (show, list or run).\n"
		   "'inagg OBJECT COMMAND -h' explains one; docs/cli.md lists every option.\n");
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

static const struct cmd *default_cmd(const struct cmd *t)
{
	for (; t->name; t++)
		if (t->flags & CMD_DEFAULT)
			return t;
	return NULL;
}

static bool is_help(const char *s)
{
	return !strcmp(s, "-h") || !strcmp(s, "--help") || !strcmp(s, "help");
}

/*
 * Whether word a, an option of cmd, takes the next word as its value: "-o"
 * or "--output" (or a unique prefix, as getopt_long() takes it) of an option
 * with an argument, or a bundle of flags ending in one ("-uo").
 */
static bool takes_next(const struct opt_cmd *cmd, const char *a)
{
	const struct opt *o, *hit = NULL;
	size_t len;
	int n = 0;

	if (a[1] == '-') {
		if (strchr(a, '='))
			return false;
		len = strlen(a + 2);
		for (o = cmd->opts; o->name; o++) {
			if (!strcmp(o->name, a + 2))
				return o->meta;
			if (!strncmp(o->name, a + 2, len)) {
				hit = o;
				n++;
			}
		}
		return n == 1 && hit->meta;
	}
	for (a++; *a; a++) {
		for (o = cmd->opts; o->name && o->short_name != *a; o++)
			;
		/* Unknown: getopt_long() refuses it. */
		if (!o->name)
			return false;
		/* The rest of the word is the value, else the next word is. */
		if (o->meta)
			return !a[1];
	}
	return false;
}

/*
 * Takes -j/--json, -v/--verbose and -h/--help out of a command's arguments,
 * so that every command gets them alike: only where they are options, not
 * as another option's value ("-o -j" writes to a file named -j) nor after
 * "--". Returns whether help was asked.
 */
static bool strip_common(const struct opt_cmd *cmd, int *argc, char **argv)
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
		if (!strcmp(argv[i], "-v") || !strcmp(argv[i], "--verbose")) {
			cli_verbose = true;
			continue;
		}
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			help = true;
			continue;
		}
		argv[j++] = argv[i];
		if (argv[i][0] == '-' && argv[i][1] && takes_next(cmd, argv[i]) && i + 1 < *argc)
			argv[j++] = argv[++i];
	}
	*argc = j;
	argv[j] = NULL;
	return help;
}

/* Runs command c, named path, on argv[1..]. */
static int run(const struct cmd *c, const char *path, int argc, char **argv)
{
	if (c->canon)
		path = c->canon;
	if (strip_common(c->opt, &argc, argv)) {
		opt_help(stdout, c->opt, path);
		return 0;
	}
	argv[0] = (char *)path;
	return c->fn(argc, argv);
}

static int dispatch(const struct cmd *table, const char *path, int argc, char **argv);

/* An object: its command named in argv[1], or its default command. */
static int run_object(const struct cmd *obj, const char *path, int argc, char **argv)
{
	const struct cmd *def = default_cmd(obj->sub), *c;
	char sub[300];
	int amb;

	if (argc >= 2 && is_help(argv[1]) && (visible(obj->sub) > 1 || !def)) {
		printf("Usage:\n");
		usage_table(stdout, obj->sub, path);
		return 0;
	}
	/* "inagg OBJECT [OPTIONS]" and "inagg OBJECT ARG..." run the default. */
	c = argc >= 2 ? lookup(obj->sub, argv[1], &amb) : NULL;
	if (def && (argc < 2 || argv[1][0] == '-' || (!c && !amb && def->opt->args))) {
		snprintf(sub, sizeof(sub), "%s %s", path, def->name);
		return run(def, sub, argc, argv);
	}
	if (argc < 2)
		return out_err("%s: missing command; try 'inagg %s -h'", path, path);
	return dispatch(obj->sub, path, argc - 1, argv + 1);
}

static int dispatch(const struct cmd *table, const char *path, int argc, char **argv)
{
	const struct cmd *c;
	char sub[256];
	int amb;

	c = lookup(table, argv[0], &amb);
	if (!c) {
		const char *sep = table == main_cmds ? "" : " ";
		const char *p = table == main_cmds ? "" : path;

		if (amb)
			return out_err("%s%s'%s' is ambiguous; try 'inagg%s%s -h'", p,
				       *p ? ": " : "", argv[0], sep, p);
		return out_err("%s%sunknown command '%s'; try 'inagg%s%s -h'", p, *p ? ": " : "",
			       argv[0], sep, p);
	}
	snprintf(sub, sizeof(sub), "%s%s%s", table == main_cmds ? "" : path,
		 table == main_cmds ? "" : " ", c->name);
	if (c->sub)
		return run_object(c, sub, argc, argv);
	return run(c, sub, argc, argv);
}

int main(int argc, char **argv)
{
	int i;

	/* libbpf's messages kept for the loader's errors (xdp.h), printed as libbpf would. */
	ia_xdp_print_to(libbpf_set_print(ia_xdp_libbpf_print));
	for (i = 1; i < argc && argv[i][0] == '-' && argv[i][1]; i++) {
		if (!strcmp(argv[i], "-j") || !strcmp(argv[i], "--json")) {
			out_set_json(true);
		} else if (!strcmp(argv[i], "-v") || !strcmp(argv[i], "--verbose")) {
			cli_verbose = true;
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
			return out_err("unknown option '%s'; try 'inagg -h'", argv[i]);
		}
	}
	if (i == argc) {
		/* -j: the error every other failure gives; else what there is to run. */
		if (out_is_json())
			return out_err("missing object; try 'inagg -h'");
		usage(stderr);
		return 1;
	}
	if (is_help(argv[i])) {
		usage(stdout);
		return 0;
	}
	return dispatch(main_cmds, "inagg", argc - i, argv + i);
}
