/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The inagg command line: "inagg [-j] <object> <command> [args]". Each command
 * is one function taking argv[0] = its own name; main.c holds the table.
 */
#ifndef INAGG_CLI_H
#define INAGG_CLI_H

#include <stdbool.h>
#include <stdint.h>

#include "out.h"
#include "place.h"
#include "topo.h"

#ifndef INAGG_VERSION
#define INAGG_VERSION "0.1.0"
#endif

struct cmd {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *synopsis;	/* what follows "inagg " in usage lines */
	const char *help;	/* details printed by -h, may be NULL */
	const struct cmd *sub;	/* subcommands instead of fn */
};

/*
 * Runs the entry of table that argv[0] names (exactly or as a unique prefix).
 * -h/--help anywhere prints that entry's help; -j/--json anywhere selects
 * JSON output. path ("inagg topo") is used in messages.
 */
int cmd_dispatch(const struct cmd *table, const char *path, int argc, char **argv);

/* Commands (argv[0] is the command's own name). */
int cmd_place(int argc, char **argv);
int cmd_multi(int argc, char **argv);
int cmd_topo_gen(int argc, char **argv);
int cmd_topo_dot(int argc, char **argv);
int cmd_topo_show(int argc, char **argv);
int cmd_eval(int argc, char **argv);
int cmd_topo_up(int argc, char **argv);
int cmd_topo_down(int argc, char **argv);
int cmd_attach(int argc, char **argv);
int cmd_detach(int argc, char **argv);
int cmd_status(int argc, char **argv);
int cmd_job_submit(int argc, char **argv);
int cmd_job_list(int argc, char **argv);
int cmd_job_show(int argc, char **argv);
int cmd_job_end(int argc, char **argv);
int cmd_stats(int argc, char **argv);
int cmd_ledger(int argc, char **argv);
int cmd_worker(int argc, char **argv);
int cmd_ps(int argc, char **argv);

/* Help texts live beside their commands. */
extern const char help_place[], help_multi[], help_topo_gen[], help_topo_dot[],
	help_topo_show[], help_eval[], help_topo_up[], help_topo_down[], help_attach[],
	help_detach[], help_status[], help_job_submit[], help_job_list[], help_job_show[],
	help_job_end[], help_stats[], help_ledger[], help_worker[], help_ps[];

/* Parsing helpers: 0 on success, else report through out_err() and return 1. */
int parse_long(const char *opt, const char *s, long min, long max, long *out);
int parse_u64(const char *opt, const char *s, uint64_t *out);
/* Reports an unknown option or a missing argument after getopt_long(). */
int bad_option(const char *cmd, int c, int optopt, char **argv);
/* Loads a topology, reporting "FILE: error" on failure. */
int load_topo(const char *path, struct ia_topo **t);
/* Parses ALGO, reporting an unknown name with the list of known ones. */
int parse_algo(const char *s, enum ia_algo *out);

/* Monotonic seconds, for timing and progress. */
double now_seconds(void);

#endif
