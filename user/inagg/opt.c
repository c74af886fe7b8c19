// SPDX-License-Identifier: GPL-2.0
/* Option tables: parsing and help text from one description; see opt.h. */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "opt.h"
#include "out.h"

#define OPT_MAX 64		/* options of one command */
#define HELP_COL 24		/* where option descriptions start */
#define HELP_WIDTH 80

static size_t count_opts(const struct opt *o)
{
	size_t n = 0;

	while (o[n].name)
		n++;
	return n;
}

/* "-k" or "--name": how messages name an option. */
static const char *label(const struct opt *o, char *buf, size_t len)
{
	if (o->short_name)
		snprintf(buf, len, "-%c", o->short_name);
	else
		snprintf(buf, len, "--%s", o->name);
	return buf;
}

/* The limits of an integer field: the table's, narrowed to the field's type. */
static void int_limits(const struct opt *o, int64_t *lo, uint64_t *hi, bool *bounded)
{
	unsigned int bits = o->size * 8;
	uint64_t tmax = o->is_signed ? (UINT64_MAX >> (65 - bits)) : (UINT64_MAX >> (64 - bits));
	int64_t tmin = o->is_signed ? -(int64_t)(tmax)-1 : 0;

	bool natural = o->max == OPT_NOMAX || o->max == INT32_MAX || o->max == UINT32_MAX ||
		       o->max == INT64_MAX;

	*lo = o->min < tmin ? tmin : o->min;
	*hi = o->max < tmax ? o->max : tmax;
	/* "No limit but the type's" is not worth printing unless the type is small. */
	*bounded = !natural || *hi < INT32_MAX;
}

static void store_int(const struct opt *o, void *dst, uint64_t v)
{
	switch (o->size) {
	case 1: *(uint8_t *)dst = v; break;
	case 2: *(uint16_t *)dst = v; break;
	case 4: *(uint32_t *)dst = v; break;
	default: *(uint64_t *)dst = v; break;
	}
}

static uint64_t load_int(const struct opt *o, const void *src)
{
	switch (o->size) {
	case 1: return o->is_signed ? (uint64_t)*(const int8_t *)src : *(const uint8_t *)src;
	case 2: return o->is_signed ? (uint64_t)*(const int16_t *)src : *(const uint16_t *)src;
	case 4: return o->is_signed ? (uint64_t)*(const int32_t *)src : *(const uint32_t *)src;
	default: return *(const uint64_t *)src;
	}
}

static int int_range_err(const struct opt *o, const char *lab, const char *arg)
{
	uint64_t hi;
	int64_t lo;
	bool bounded;

	int_limits(o, &lo, &hi, &bounded);
	/* A number too large for the field: only its upper limit explains that. */
	if (!bounded && !(arg[0] && arg[strspn(arg, "0123456789")] == '\0'))
		return out_err("%s: invalid value '%s': need an integer >= %lld", lab, arg,
			       (long long)lo);
	return out_err("%s: invalid value '%s': need an integer in %lld..%llu", lab, arg,
		       (long long)lo, (unsigned long long)hi);
}

static int set_int(const struct opt *o, const char *lab, const char *arg, void *dst)
{
	uint64_t hi, u;
	int64_t lo, s;
	bool bounded;
	char *end;

	int_limits(o, &lo, &hi, &bounded);
	if (!isdigit((unsigned char)arg[0]) && arg[0] != '-')
		return int_range_err(o, lab, arg);
	errno = 0;
	if (arg[0] == '-') {
		s = strtoll(arg, &end, 10);
		if (errno || end == arg || *end || s < lo)
			return int_range_err(o, lab, arg);
		store_int(o, dst, (uint64_t)s);
		return 0;
	}
	u = strtoull(arg, &end, 10);
	if (errno || end == arg || *end || u > hi || (lo > 0 && u < (uint64_t)lo))
		return int_range_err(o, lab, arg);
	store_int(o, dst, u);
	return 0;
}

static void real_limits(const struct opt *o, char *buf, size_t len)
{
	if (isinf(o->rmax))
		snprintf(buf, len, "> %g", o->rmin);
	else
		snprintf(buf, len, "%g..%g", o->rmin, o->rmax);
}

static int set_real(const struct opt *o, const char *lab, const char *arg, double *dst)
{
	char lim[64], *end;
	double d;

	errno = 0;
	d = strtod(arg, &end);
	/* An unbounded range means a rate or a size: strictly above its minimum. */
	if (errno || end == arg || *end || isnan(d) || d < o->rmin || d > o->rmax ||
	    (isinf(o->rmax) && (d <= o->rmin || isinf(d)))) {
		real_limits(o, lim, sizeof(lim));
		return out_err("%s: invalid value '%s': need a number %s%s", lab, arg,
			       isinf(o->rmax) ? "" : "in ", lim);
	}
	*dst = d;
	return 0;
}

static int enum_count(const struct opt *o)
{
	int n = 0;

	if (o->name_of)
		return o->nnames;
	while (o->names[n])
		n++;
	return n;
}

static const char *enum_name(const struct opt *o, int i)
{
	return o->name_of ? o->name_of(i) : o->names[i];
}

/* "a, b or c" */
static void enum_list(const struct opt *o, char *buf, size_t len)
{
	int n = enum_count(o), i;

	buf[0] = '\0';
	for (i = 0; i < n; i++)
		snprintf(buf + strlen(buf), len - strlen(buf), "%s%s",
			 !i ? "" : i + 1 == n ? " or " : ", ", enum_name(o, i));
}

static int set_enum(const struct opt *o, const char *lab, const char *arg, int *dst)
{
	char list[512];

	for (int i = 0; i < enum_count(o); i++) {
		if (!strcmp(enum_name(o, i), arg)) {
			*dst = i;
			return 0;
		}
	}
	enum_list(o, list, sizeof(list));
	return out_err("%s: invalid value '%s': need %s", lab, arg, list);
}

static int set_value(const struct opt *o, const char *arg, void *args)
{
	void *dst = (char *)args + o->off;
	char lab[64];

	label(o, lab, sizeof(lab));
	switch (o->type) {
	case OPT_T_FLAG:
		*(bool *)dst = true;
		return 0;
	case OPT_T_STR:
		*(const char **)dst = arg;
		return 0;
	case OPT_T_INT:
		return set_int(o, lab, arg, dst);
	case OPT_T_REAL:
		return set_real(o, lab, arg, dst);
	case OPT_T_ENUM:
		return set_enum(o, lab, arg, dst);
	case OPT_T_ADDR:
		if (inet_pton(AF_INET, arg, dst) != 1)
			return out_err("%s: invalid IPv4 address '%s'", lab, arg);
		return 0;
	case OPT_T_FUNC:
		return o->parse(lab, arg, dst);
	}
	return out_err("%s: bad option table", lab);
}

/* "-t FILE" or "--aware": an option as the synopsis shows it. */
static void usage_form(const struct opt *o, char *buf, size_t len)
{
	if (o->short_name)
		snprintf(buf, len, "-%c%s%s", o->short_name, o->meta ? " " : "",
			 o->meta ? o->meta : "");
	else
		snprintf(buf, len, "--%s%s%s", o->name, o->meta ? " " : "", o->meta ? o->meta : "");
}

/* Whether any option of group g is required (the whole group then is). */
static bool group_required(const struct opt *opts, int g)
{
	for (const struct opt *o = opts; o->name; o++)
		if (opt_group(o) == g && (o->flags & OPT_REQUIRED))
			return true;
	return false;
}

/* "--depth D and --random N" or "-e N, -f FILE": the members of a group. */
static void group_names(const struct opt *opts, int g, const char *sep, char *buf, size_t len)
{
	char form[96];
	bool first = true;

	buf[0] = '\0';
	for (const struct opt *o = opts; o->name; o++) {
		if (opt_group(o) != g)
			continue;
		usage_form(o, form, sizeof(form));
		snprintf(buf + strlen(buf), len - strlen(buf), "%s%s", first ? "" : sep, form);
		first = false;
	}
}

int opt_parse(const struct opt_cmd *cmd, const char *path, int argc, char **argv, void *args,
	      int *first, bool *given)
{
	struct option longs[OPT_MAX + 1];
	bool seen[OPT_MAX] = { false };
	char shorts[3 * OPT_MAX + 2] = ":", lab[64], names[256];
	const struct opt *opts = cmd->opts;
	size_t n = count_opts(opts), i;
	int c;

	if (n > OPT_MAX)
		return out_err("%s: too many options in its table", path);
	for (i = 0; i < n; i++) {
		const struct opt *o = &opts[i];

		longs[i] = (struct option){ o->name, o->meta ? required_argument : no_argument,
					    NULL, 256 + (int)i };
		if (o->short_name) {
			size_t l = strlen(shorts);

			shorts[l++] = o->short_name;
			if (o->meta)
				shorts[l++] = ':';
			shorts[l] = '\0';
		}
	}
	longs[n] = (struct option){ NULL, 0, NULL, 0 };

	optind = 0;	/* a fresh scan, also after an earlier command's */
	opterr = 0;
	while ((c = getopt_long(argc, argv, shorts, longs, NULL)) != -1) {
		const struct opt *o = NULL;

		if (c == ':') {
			return out_err("%s: option '%s' needs an argument; try 'inagg %s -h'", path,
				       argv[optind - 1], path);
		}
		if (c == '?') {
			if (optopt && optopt < 256)
				return out_err("%s: unknown option '-%c'; try 'inagg %s -h'", path,
					       optopt, path);
			return out_err("%s: unknown option '%s'; try 'inagg %s -h'", path,
				       argv[optind - 1], path);
		}
		if (c >= 256) {
			i = c - 256;
		} else {
			for (i = 0; i < n && opts[i].short_name != c; i++)
				;
		}
		if (i >= n)
			return out_err("%s: bad option table", path);
		o = &opts[i];
		/* Options of one group exclude each other (repeating one is fine). */
		if (opt_group(o)) {
			for (size_t j = 0; j < n; j++) {
				if (j != i && seen[j] && opt_group(&opts[j]) == opt_group(o)) {
					group_names(opts, opt_group(o), " and ", names, sizeof(names));
					return out_err("%s: give only one of %s", path, names);
				}
			}
		}
		if (set_value(o, optarg, args))
			return 1;
		seen[i] = true;
	}
	for (i = 0; i < n; i++) {
		const struct opt *o = &opts[i];
		bool any = false;

		if (!opt_group(o) && (o->flags & OPT_REQUIRED) && !seen[i]) {
			usage_form(o, lab, sizeof(lab));
			return out_err("%s: missing %s; try 'inagg %s -h'", path, lab, path);
		}
		if (!opt_group(o) || !group_required(opts, opt_group(o)))
			continue;
		for (size_t j = 0; j < n; j++)
			any |= seen[j] && opt_group(&opts[j]) == opt_group(o);
		if (!any) {
			group_names(opts, opt_group(o), " or ", names, sizeof(names));
			return out_err("%s: missing %s; try 'inagg %s -h'", path, names, path);
		}
	}
	if (optind < argc && !cmd->args)
		return out_err("%s: unexpected argument '%s'; try 'inagg %s -h'", path, argv[optind],
			       path);
	if (first)
		*first = optind;
	if (given)
		memcpy(given, seen, n * sizeof(*given));
	return 0;
}

bool opt_given(const struct opt *opts, const bool *given, const char *name)
{
	for (size_t i = 0; opts[i].name; i++)
		if (!strcmp(opts[i].name, name))
			return given[i];
	return false;
}

/* Appends word to a line being wrapped at HELP_WIDTH, indenting continuations. */
static void put_word(FILE *f, const char *w, size_t wl, int *col, int indent)
{
	if (*col > indent && *col + 1 + (int)wl > HELP_WIDTH) {
		fprintf(f, "\n%*s", indent, "");
		*col = indent;
	} else if (*col > indent) {
		fputc(' ', f);
		(*col)++;
	}
	fprintf(f, "%.*s", (int)wl, w);
	*col += wl;
}

/* Prints text word-wrapped from column *col, continuation lines at indent. */
static void put_text(FILE *f, const char *text, int *col, int indent)
{
	const char *p = text;

	while (*p) {
		size_t wl;

		while (*p == ' ')
			p++;
		wl = strcspn(p, " ");
		if (wl)
			put_word(f, p, wl, col, indent);
		p += wl;
	}
}

void opt_synopsis(FILE *f, const struct opt_cmd *cmd, const char *path, bool brief)
{
	const struct opt *opts = cmd->opts;
	bool optional = false;
	char form[128], item[512];
	int col, indent;

	col = fprintf(f, "inagg [-j] %s ", path);
	indent = col < 40 ? col : 8;
	for (const struct opt *o = opts; o->name; o++) {
		bool first_of_group = true;

		if (opt_group(o)) {
			for (const struct opt *p = opts; p < o; p++)
				first_of_group &= opt_group(p) != opt_group(o);
			if (!first_of_group)
				continue;
			if (!group_required(opts, opt_group(o)) && brief) {
				optional = true;
				continue;
			}
			group_names(opts, opt_group(o), " | ", form, sizeof(form));
			snprintf(item, sizeof(item), group_required(opts, opt_group(o)) ? "{ %s }" : "[%s]",
				 form);
		} else {
			if (!(o->flags & OPT_REQUIRED) && brief) {
				optional = true;
				continue;
			}
			usage_form(o, form, sizeof(form));
			snprintf(item, sizeof(item), o->flags & OPT_REQUIRED ? "%s" : "[%s]", form);
		}
		put_word(f, item, strlen(item), &col, indent);
	}
	if (cmd->args)
		put_word(f, cmd->args, strlen(cmd->args), &col, indent);
	if (optional)
		put_word(f, "[OPTIONS]", 9, &col, indent);
	fputc('\n', f);
}

/* " (1..256; default 256)": what the table knows beyond the help text. */
static void facts(const void *defaults, const struct opt *o, char *buf, size_t len)
{
	const void *def = defaults ? (const char *)defaults + o->off : NULL;
	char lim[256] = "", dflt[128] = "";
	uint64_t hi, v;
	bool bounded;
	int64_t lo;

	switch (o->type) {
	case OPT_T_INT:
		int_limits(o, &lo, &hi, &bounded);
		if (bounded)
			snprintf(lim, sizeof(lim), "%lld..%llu", (long long)lo,
				 (unsigned long long)hi);
		else if (lo)
			snprintf(lim, sizeof(lim), ">= %lld", (long long)lo);
		if (def && !(o->flags & (OPT_NODEF | OPT_REQUIRED))) {
			v = load_int(o, def);
			if (o->is_signed)
				snprintf(dflt, sizeof(dflt), "%lld", (long long)v);
			else
				snprintf(dflt, sizeof(dflt), "%llu", (unsigned long long)v);
		}
		break;
	case OPT_T_REAL:
		real_limits(o, lim, sizeof(lim));
		if (def && !(o->flags & (OPT_NODEF | OPT_REQUIRED)))
			snprintf(dflt, sizeof(dflt), "%g", *(const double *)def);
		break;
	case OPT_T_ENUM:
		enum_list(o, lim, sizeof(lim));
		if (def && !(o->flags & (OPT_NODEF | OPT_REQUIRED)))
			snprintf(dflt, sizeof(dflt), "%s", enum_name(o, *(const int *)def));
		break;
	case OPT_T_STR:
		if (def && *(const char *const *)def && !(o->flags & OPT_NODEF))
			snprintf(dflt, sizeof(dflt), "%s", *(const char *const *)def);
		break;
	case OPT_T_FUNC:
		if (def && o->show && !(o->flags & OPT_NODEF))
			o->show(def, dflt, sizeof(dflt));
		break;
	case OPT_T_ADDR:
	case OPT_T_FLAG:
		break;
	}
	buf[0] = '\0';
	if (lim[0] || dflt[0] || ((o->flags & OPT_REQUIRED) && !opt_group(o)))
		snprintf(buf, len, "(%s%s%s%s%s)", lim, lim[0] && dflt[0] ? "; " : "",
			 dflt[0] ? "default " : "", dflt,
			 o->flags & OPT_REQUIRED && !opt_group(o) ?
				 (lim[0] || dflt[0] ? "; required" : "required") : "");
}

void opt_defaults(const struct opt_cmd *cmd, void *args)
{
	if (cmd->init) {
		memset(args, 0, cmd->size);
		cmd->init(args);
	} else if (cmd->defaults) {
		memcpy(args, cmd->defaults, cmd->size);
	}
}

void opt_help(FILE *f, const struct opt_cmd *cmd, const char *path)
{
	char extra[600];
	void *def = NULL;
	int col;

	if (cmd->init) {
		def = calloc(1, cmd->size);
		if (def)
			cmd->init(def);
	}

	fprintf(f, "Usage: ");
	opt_synopsis(f, cmd, path, false);
	if (cmd->about)
		fputs(cmd->about, f);
	if (cmd->opts[0].name)
		fprintf(f, "Options:\n");
	for (const struct opt *o = cmd->opts; o->name; o++) {
		if (o->short_name)
			col = fprintf(f, "  -%c, --%s", o->short_name, o->name);
		else
			col = fprintf(f, "      --%s", o->name);
		if (o->meta)
			col += fprintf(f, " %s", o->meta);
		if (col + 2 > HELP_COL) {
			fprintf(f, "\n%*s", HELP_COL, "");
		} else {
			fprintf(f, "%*s", HELP_COL - col, "");
		}
		col = HELP_COL;
		put_text(f, o->help, &col, HELP_COL);
		facts(def ? def : cmd->defaults, o, extra, sizeof(extra));
		if (extra[0])
			put_text(f, extra, &col, HELP_COL);
		fputc('\n', f);
	}
	if (cmd->notes)
		fputs(cmd->notes, f);
	free(def);
}
