/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Option tables (the xdp-tools way): one table per command parses its
 * options into the command's own struct and prints its usage and -h text,
 * limits and defaults included, so parser, help and docs cannot drift.
 *
 *	struct gen_args { long depth; const char *out; };
 *	static const struct opt gen_opts[] = {
 *		OPT_INT('d', "depth", "D", struct gen_args, depth, 0, 24, 0,
 *			"complete binary tree of levels 0..D"),
 *		OPT_STR('o', "output", "FILE", struct gen_args, out, 0, "write there"),
 *		OPT_END
 *	};
 *
 * The vocabulary (which letter means what, across every command) is in
 * docs/cli.md; a new option reuses an existing name for the same meaning
 * and never gives an existing name a second one.
 */
#ifndef INAGG_OPT_H
#define INAGG_OPT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum opt_type {
	OPT_T_FLAG,	/* bool, no argument */
	OPT_T_STR,	/* const char *, the argument itself */
	OPT_T_INT,	/* an integer field of any width, in [min, max] */
	OPT_T_REAL,	/* double in [min, max] */
	OPT_T_ENUM,	/* int: index of the argument in names[] */
	OPT_T_ADDR,	/* struct in_addr */
	OPT_T_FUNC,	/* parse(): anything else */
};

/* Flags of an option. */
#define OPT_REQUIRED	0x1	/* must be given (for a group: one of it) */
#define OPT_NODEF	0x2	/* print no "default": 0 means "not given" */
/* Options of one group g > 0 exclude each other (exactly one if any is OPT_REQUIRED). */
#define OPT_GROUP(g)	((g) << 8)
#define opt_group(o)	((int)((o)->flags >> 8))

/* A constant's value inside a help string. */
#define OPT__STR(x) #x
#define OPT_STR_OF(x) OPT__STR(x)

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#endif

#define OPT_NOMAX	UINT64_MAX	/* OPT_INT without an upper limit */

struct opt {
	char short_name;	/* 0: long only */
	const char *name;	/* long name, without "--" */
	const char *meta;	/* the argument in help ("FILE"); NULL: a flag */
	enum opt_type type;
	size_t off, size;	/* the field in the command's struct */
	bool is_signed;
	int64_t min;		/* OPT_T_INT */
	uint64_t max;
	double rmin, rmax;	/* OPT_T_REAL */
	/* OPT_T_ENUM: names[], NULL-terminated, or name_of(0..nnames-1). */
	const char *const *names;
	const char *(*name_of)(int i);
	int nnames;
	/* OPT_T_FUNC: parses arg into dst; 0, or 1 after out_err(). */
	int (*parse)(const char *opt, const char *arg, void *dst);
	/* OPT_T_FUNC, optional: the default as help shows it. */
	void (*show)(const void *dst, char *buf, size_t len);
	unsigned int flags;	/* OPT_REQUIRED, OPT_NODEF, OPT_GROUP(g) */
	const char *help;
};

#define OPT__FIELD(T, f) .off = offsetof(T, f), .size = sizeof(((T *)0)->f)

#define OPT_FLAG(s, n, T, f, fl, h)                                                     \
	{ .short_name = s, .name = n, .type = OPT_T_FLAG, OPT__FIELD(T, f), .flags = fl,  \
	  .help = h }
#define OPT_STR(s, n, m, T, f, fl, h)                                                   \
	{ .short_name = s, .name = n, .meta = m, .type = OPT_T_STR, OPT__FIELD(T, f),      \
	  .flags = fl, .help = h }
#define OPT_INT(s, n, m, T, f, lo, hi, fl, h)                                           \
	{ .short_name = s, .name = n, .meta = m, .type = OPT_T_INT, OPT__FIELD(T, f),      \
	  .is_signed = !((__typeof__(((T *)0)->f))-1 > 0), .min = lo, .max = hi, .flags = fl, \
	  .help = h }
#define OPT_REAL(s, n, m, T, f, lo, hi, fl, h)                                          \
	{ .short_name = s, .name = n, .meta = m, .type = OPT_T_REAL, OPT__FIELD(T, f),     \
	  .rmin = lo, .rmax = hi, .flags = fl, .help = h }
#define OPT_ENUM(s, n, m, T, f, nm, fl, h)                                              \
	{ .short_name = s, .name = n, .meta = m, .type = OPT_T_ENUM, OPT__FIELD(T, f),     \
	  .names = nm, .flags = fl, .help = h }
#define OPT_ENUMF(s, n, m, T, f, fn, cnt, fl, h)                                       \
	{ .short_name = s, .name = n, .meta = m, .type = OPT_T_ENUM, OPT__FIELD(T, f),     \
	  .name_of = fn, .nnames = cnt, .flags = fl, .help = h }
#define OPT_ADDR(s, n, m, T, f, fl, h)                                                  \
	{ .short_name = s, .name = n, .meta = m, .type = OPT_T_ADDR, OPT__FIELD(T, f),     \
	  .flags = fl, .help = h }
#define OPT_FUNC(s, n, m, T, f, fn, sh, fl, h)                                          \
	{ .short_name = s, .name = n, .meta = m, .type = OPT_T_FUNC, OPT__FIELD(T, f),     \
	  .parse = fn, .show = sh, .flags = fl, .help = h }
#define OPT_END { .name = NULL }

/* A command's whole interface: what -h prints, what opt_parse() accepts. */
struct opt_cmd {
	const struct opt *opts;
	const void *defaults;	/* the struct's defaults, printed in help, or: */
	void (*init)(void *args);	/* fills a zeroed struct with its defaults */
	size_t size;		/* of the struct, for init */
	const char *args;	/* positional arguments for the synopsis, or NULL */
	const char *about;	/* what the command does, before the options */
	const char *notes;	/* after the options, or NULL */
};

/*
 * Parses argv[1..] (argv[0] is the command's name, path names it in
 * messages) into args, which the caller has set to its defaults. Options and
 * positional arguments may mix; the positional ones are moved to the end and
 * *first (if not NULL) gets the index of the first, which the command must
 * allow (cmd->args). given (optional, one bool per table entry) tells which
 * options appeared. Returns 0, or 1 after out_err().
 */
int opt_parse(const struct opt_cmd *cmd, const char *path, int argc, char **argv, void *args,
	      int *first, bool *given);

/* Whether the option with long name was given, by opt_parse()'s given[]. */
bool opt_given(const struct opt *opts, const bool *given, const char *name);

/* "inagg [-j] PATH SYNOPSIS": brief (required options, then [OPTIONS]) or full. */
void opt_synopsis(FILE *f, const struct opt_cmd *cmd, const char *path, bool brief);
/* The whole -h text: synopsis, about, the options with limits and defaults, notes. */
void opt_help(FILE *f, const struct opt_cmd *cmd, const char *path);

/* The defaults of cmd into args (size bytes): from init, else a copy. */
void opt_defaults(const struct opt_cmd *cmd, void *args);

#endif
