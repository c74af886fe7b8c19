/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The inagg command line: "inagg [-j] OBJECT COMMAND [OPTIONS]". Each command
 * is one function and one option table (opt.h); main.c holds the tables of
 * objects and commands, common.c the helpers every command may call. The option vocabulary is in docs/cli.md.
 */
#ifndef INAGG_CLI_H
#define INAGG_CLI_H

#include <stdbool.h>
#include <stdint.h>

#include "common.h"
#include "opt.h"
#include "out.h"

#ifndef INAGG_VERSION
#define INAGG_VERSION "0.1.0"
#endif

#define CMD_DEFAULT	0x1	/* what "inagg OBJECT [OPTIONS]" runs */
#define CMD_HIDDEN	0x2	/* an old name kept working, not listed */

struct cmd {
	const char *name;
	/* argv[0] is the command's path ("topo gen"), for opt_parse() and messages. */
	int (*fn)(int argc, char **argv);
	const struct opt_cmd *opt;	/* its options and help */
	const struct cmd *sub;		/* an object: its commands instead of fn */
	unsigned int flags;
	const char *canon;		/* CMD_HIDDEN: the path it stands for */
};

/* Commands and their option tables, one pair per command. */
#define CLI_COMMAND(fn, opts) \
	int fn(int argc, char **argv); \
	extern const struct opt_cmd opts

CLI_COMMAND(cmd_topo_gen, topo_gen_cmd);
CLI_COMMAND(cmd_topo_show, topo_show_cmd);
CLI_COMMAND(cmd_topo_dot, topo_dot_cmd);
CLI_COMMAND(cmd_topo_place, topo_place_cmd);
CLI_COMMAND(cmd_topo_multi, topo_multi_cmd);
CLI_COMMAND(cmd_eval, eval_cmd);
CLI_COMMAND(cmd_eval_fig6, eval_fig6_cmd);
CLI_COMMAND(cmd_eval_tenants, eval_tenants_cmd);
CLI_COMMAND(cmd_net_up, net_up_cmd);
CLI_COMMAND(cmd_net_down, net_down_cmd);
CLI_COMMAND(cmd_dev_attach, dev_attach_cmd);
CLI_COMMAND(cmd_dev_detach, dev_detach_cmd);
CLI_COMMAND(cmd_dev_show, dev_show_cmd);
CLI_COMMAND(cmd_dev_cleanup, dev_cleanup_cmd);
CLI_COMMAND(cmd_job_submit, job_submit_cmd);
CLI_COMMAND(cmd_job_list, job_list_cmd);
CLI_COMMAND(cmd_job_show, job_show_cmd);
CLI_COMMAND(cmd_job_window, job_window_cmd);
CLI_COMMAND(cmd_job_end, job_end_cmd);
CLI_COMMAND(cmd_stats_show, stats_show_cmd);
CLI_COMMAND(cmd_worker_run, worker_run_cmd);
CLI_COMMAND(cmd_ps_run, ps_run_cmd);
CLI_COMMAND(cmd_ledger_show, ledger_show_cmd);
CLI_COMMAND(cmd_ledger_set, ledger_set_cmd);
CLI_COMMAND(cmd_ledger_admit, ledger_admit_cmd);
CLI_COMMAND(cmd_ledger_release, ledger_release_cmd);

/* A comma-separated list of at most IA_EVAL_MAXPTS integers into v[0..*n) (eval -k). */
int parse_list(const char *opt, const char *s, int *v, int *n);

#endif
