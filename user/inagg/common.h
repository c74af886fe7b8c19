/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What every command of the CLI may call (common.c), like bpftool's
 * common.c: main.c keeps the tables of objects and commands and nothing else.
 */
#ifndef INAGG_CLI_COMMON_H
#define INAGG_CLI_COMMON_H

#include <stdbool.h>
#include <stdio.h>

#include "clock.h"
#include "place.h"
#include "topo.h"

/* -v: libbpf's and the verifier's messages on stderr. */
extern bool cli_verbose;

/* Parses an integer in [min, max]: 0, or 1 after out_err(). */
int parse_long(const char *opt, const char *s, long min, long max, long *out);
/* A comma-separated list without an empty item ("a,,b", "a,"): 0, or 1 after out_err(). */
int list_items_ok(const char *opt, const char *s);
/* Loads a topology, reporting "FILE: error" on failure. */
int load_topo(const char *path, struct ia_topo **t);
/* Parses ALGO, reporting an unknown name with the list of known ones. */
int parse_algo(const char *s, enum ia_algo *out);
/* ia_algo_name() for OPT_ENUMF. */
const char *cli_algo_name(int i);
/* ia_cc_policy_name() for OPT_ENUMF: the window policies (docs/cc.md). */
const char *cli_cc_name(int i);
/* Opens -o FILE for writing, or stdout for none or "-"; NULL after out_err(). */
FILE *open_out(const char *path);
/* Closes what open_out() gave: 0, or 1 after out_err(). */
int close_out(FILE *f, const char *path);
/* libbpf's messages on stderr only with -v. */
void quiet_libbpf(void);

/* Runs "PROG ARG" in folder DIR, without a shell: 0 if it exited 0, else a negative errno. */
int run_in(const char *dir, const char *prog, const char *arg);

#endif
