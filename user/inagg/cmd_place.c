// SPDX-License-Identifier: GPL-2.0
/* inagg place and inagg multi: placement of aggregating switches. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "cli.h"

const char help_place[] =
	"Chooses at most K aggregating (blue) switches and prints the blue set, the\n"
	"messages, rate and congestion (messages / rate) of every switch's uplink, and\n"
	"the network congestion (the largest link congestion).\n"
	"  -t, --topo FILE   topology (JSON, see docs/cli.md); '-' reads stdin\n"
	"  -k, --k K         budget of blue switches, an integer >= 0\n"
	"  -a, --algo ALGO   smc (default), top, max, level, all-red, all-blue, brute,\n"
	"                    smc-naive; a comma-separated list, or 'all' for every one\n"
	"                    (brute is left out of 'all' on trees it cannot enumerate)\n"
	"  -j, --json        JSON: algorithm, k, congestion, bottleneck, blue, links\n"
	"                    [{switch, parent, load, rate, messages, congestion, blue}],\n"
	"                    solve_seconds; several algorithms give {k, placements: [...]}\n";

const char help_multi[] =
	"Places a sequence of workloads online on one tree (paper Sec. V): each gets\n"
	"its own budget k on the available switches with capacity left, and every\n"
	"blue placement uses one unit of that switch's capacity. Prints each\n"
	"workload's blue set and congestion, and the total load and congestion.\n"
	"  -t, --topo FILE        topology (JSON); 'capacity' per switch, default 1\n"
	"  -w, --workloads FILE   {\"workloads\": [{\"name\": \"w0\", \"k\": 2,\n"
	"                         \"load\": {\"s3\": 2, \"s4\": 6}}, ...]}; a missing\n"
	"                         load means the topology's loads, a missing k means -k\n"
	"  -k, --k K              default budget for workloads without \"k\"\n"
	"  -a, --algo ALGO        placement algorithm (default smc)\n"
	"      --aware            place each workload knowing the link load of the\n"
	"                         earlier ones (beyond the paper)\n";

static void print_links_header(int w)
{
	out_text("%-*s %-*s %6s %10s %9s %11s %s\n", w, "switch", w, "parent", "load", "rate",
		 "messages", "congestion", "colour");
}

static int name_width(const struct ia_topo *t)
{
	int i, w = 6;

	for (i = 0; i < t->n; i++)
		if ((int)strlen(t->sw[i].name) > w)
			w = strlen(t->sw[i].name);
	return w;
}

/* The placement of one algorithm, as an object of the current container. */
static void print_placement(const struct ia_problem *pb, enum ia_algo algo,
			    const struct ia_placement *p)
{
	const struct ia_topo *t = pb->topo;
	int i, v, w = name_width(t);
	char fmt[16];

	out_str("algorithm", "algorithm   %s\n", ia_algo_name(algo));
	out_int("k", "k           %lld\n", pb->k);
	out_ratio("congestion", "congestion  %s", p->congestion);
	if (p->bottleneck >= 0)
		out_str("bottleneck", "  (uplink of %s)", t->sw[p->bottleneck].name);
	else
		out_str("bottleneck", NULL, NULL);
	out_text("\n");
	out_int("nblue", "blue        %lld:", p->nblue);
	out_arr_open("blue");
	for (i = 0; i < t->n; i++) {
		v = t->order[i];
		if (p->blue[v])
			out_str(NULL, " %s", t->sw[v].name);
	}
	out_arr_close();
	out_text("\n");
	out_double("solve_seconds", "solve       %.6f s\n", p->solve_seconds);
	out_int("checks", NULL, p->checks);

	out_text("\n");
	print_links_header(w);
	snprintf(fmt, sizeof(fmt), "%%-%ds ", w);
	out_arr_open("links");
	for (i = 0; i < t->n; i++) {
		struct ia_switch *s;

		v = t->order[i];
		s = &t->sw[v];
		out_obj_open(NULL);
		out_str("switch", fmt, s->name);
		out_str("parent", fmt, s->parent >= 0 ? t->sw[s->parent].name : NULL);
		out_uint("load", "%6llu ", pb->load ? pb->load[v] : s->load);
		out_ratio("rate", "%10s ", s->rate);
		out_uint("messages", "%9llu ", (unsigned long long)p->msgs[v]);
		out_ratio("congestion", "%11s ", ia_congestion(p->msgs[v], s->rate));
		out_bool("blue", NULL, p->blue[v]);
		out_text("%s\n", p->blue[v] ? "blue" : "red");
		out_obj_close();
	}
	out_arr_close();
}

static int available_count(const struct ia_topo *t)
{
	int i, n = 0;

	for (i = 0; i < t->n; i++)
		n += t->sw[i].available;
	return n;
}

/* Parses "smc,top" or "all" into a list; returns the count or -1 after out_err(). */
static int parse_algo_list(const char *s, const struct ia_topo *t, enum ia_algo *list)
{
	char *copy, *tok, *save = NULL;
	int n = 0, a;

	if (!strcmp(s, "all")) {
		for (a = 0; a < IA_ALGO__COUNT; a++) {
			if (a == IA_ALGO_BRUTE && available_count(t) > IA_BRUTE_MAX_AVAIL)
				continue;
			list[n++] = a;
		}
		return n;
	}
	copy = strdup(s);
	if (!copy) {
		out_err("out of memory");
		return -1;
	}
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (n == IA_ALGO__COUNT || parse_algo(tok, &list[n])) {
			if (n == IA_ALGO__COUNT)
				out_err("place: too many algorithms in '%s'", s);
			free(copy);
			return -1;
		}
		n++;
	}
	free(copy);
	if (!n)
		out_err("place: no algorithm in '%s'", s);
	return n ? n : -1;
}

static const struct option place_opts[] = {
	{ "topo", required_argument, NULL, 't' },
	{ "k", required_argument, NULL, 'k' },
	{ "algo", required_argument, NULL, 'a' },
	{ NULL }
};

int cmd_place(int argc, char **argv)
{
	const char *path = NULL, *algos = "smc";
	enum ia_algo list[IA_ALGO__COUNT];
	struct ia_placement *pl = NULL;
	struct ia_topo *t = NULL;
	struct ia_problem pb;
	int c, i, n, ret = 1;
	long k = -1;

	while ((c = getopt_long(argc, argv, "+:t:k:a:", place_opts, NULL)) != -1) {
		switch (c) {
		case 't':
			path = optarg;
			break;
		case 'k':
			if (parse_long("-k", optarg, 0, INT_MAX, &k))
				return 1;
			break;
		case 'a':
			algos = optarg;
			break;
		default:
			return bad_option("place", c, optopt, argv);
		}
	}
	if (optind < argc)
		return out_err("place: unexpected argument '%s'", argv[optind]);
	if (!path)
		return out_err("place: missing -t FILE (the topology)");
	if (k < 0)
		return out_err("place: missing -k K (the budget of blue switches)");
	if (load_topo(path, &t))
		return 1;
	n = parse_algo_list(algos, t, list);
	if (n < 0)
		goto out;
	pl = calloc(n, sizeof(*pl));
	if (!pl) {
		out_err("out of memory");
		goto out;
	}
	pb = (struct ia_problem){ .topo = t, .k = k };
	for (i = 0; i < n; i++) {
		int err = ia_placement_init(&pl[i], t->n);

		if (!err)
			err = ia_place(&pb, list[i], &pl[i]);
		if (err) {
			out_err("place: %s: %s", ia_algo_name(list[i]), strerror(-err));
			goto out;
		}
	}

	out_begin();
	if (n == 1) {
		print_placement(&pb, list[0], &pl[0]);
	} else {
		/* A comparison table first, then each placement in full. */
		out_int("k", "k %lld\n", k);
		out_text("%-10s %11s %5s %12s  %s\n", "algorithm", "congestion", "blue", "solve_s",
			 "blue switches");
		for (i = 0; i < n; i++) {
			char buf[64];
			int j;

			ia_ratio_format(pl[i].congestion, buf, sizeof(buf));
			out_text("%-10s %11s %5d %12.6f ", ia_algo_name(list[i]), buf, pl[i].nblue,
				 pl[i].solve_seconds);
			for (j = 0; j < t->n; j++)
				if (pl[i].blue[t->order[j]])
					out_text(" %s", t->sw[t->order[j]].name);
			out_text("\n");
		}
		out_arr_open("placements");
		for (i = 0; i < n; i++) {
			out_text("\n");
			out_obj_open(NULL);
			print_placement(&pb, list[i], &pl[i]);
			out_obj_close();
		}
		out_arr_close();
	}
	ret = out_end();
out:
	if (pl)
		for (i = 0; i < n; i++)
			ia_placement_free(&pl[i]);
	free(pl);
	ia_topo_free(t);
	return ret;
}

/* Workloads of one multi run, as read from the workloads file. */
struct wl_set {
	int nw;
	struct ia_workload *w;
	char **names;
	uint32_t **loads;
};

static void wl_free(struct wl_set *s)
{
	int i;

	for (i = 0; i < s->nw; i++) {
		free(s->names[i]);
		free(s->loads[i]);
	}
	free(s->names);
	free(s->loads);
	free(s->w);
	memset(s, 0, sizeof(*s));
}

/* Reads a whole file ("-" is stdin) into a NUL-terminated buffer. */
static char *slurp(const char *path)
{
	FILE *f = strcmp(path, "-") ? fopen(path, "r") : stdin;
	size_t len = 0, cap = 4096, r;
	char *buf, *nb;

	if (!f)
		return NULL;
	buf = malloc(cap);
	while (buf && (r = fread(buf + len, 1, cap - len - 1, f)) > 0) {
		len += r;
		if (cap - len - 1 == 0) {
			nb = realloc(buf, cap * 2);
			if (!nb) {
				free(buf);
				buf = NULL;
				break;
			}
			buf = nb;
			cap *= 2;
		}
	}
	if (buf)
		buf[len] = '\0';
	if (f != stdin)
		fclose(f);
	return buf;
}

/* An integer in [0, max] from JSON: integral numbers only. */
static int json_count(json_object *v, uint64_t max, uint64_t *out)
{
	double d;

	if (json_object_is_type(v, json_type_int)) {
		int64_t i = json_object_get_int64(v);

		if (i < 0 || (uint64_t)i > max)
			return -ERANGE;
		*out = i;
		return 0;
	}
	if (json_object_is_type(v, json_type_double)) {
		d = json_object_get_double(v);
		if (d != (double)(int64_t)d || d < 0 || d > (double)max)
			return -EINVAL;
		*out = (uint64_t)d;
		return 0;
	}
	return -EINVAL;
}

static int load_workloads(const char *path, const struct ia_topo *t, long kdef,
			  struct wl_set *s)
{
	json_object *root = NULL, *arr, *item, *v;
	enum json_tokener_error jerr;
	char *text;
	int i, ret = 1;
	uint64_t x;

	memset(s, 0, sizeof(*s));
	text = slurp(path);
	if (!text)
		return out_err("%s: %s", path, strerror(errno ? errno : ENOMEM));
	root = json_tokener_parse_verbose(text, &jerr);
	free(text);
	if (!root) {
		out_err("%s: not JSON: %s", path, json_tokener_error_desc(jerr));
		goto out;
	}
	if (!json_object_object_get_ex(root, "workloads", &arr) ||
	    !json_object_is_type(arr, json_type_array)) {
		out_err("%s: field \"workloads\": missing or not an array", path);
		goto out;
	}
	s->nw = json_object_array_length(arr);
	if (!s->nw) {
		out_err("%s: field \"workloads\": empty", path);
		goto out;
	}
	s->w = calloc(s->nw, sizeof(*s->w));
	s->names = calloc(s->nw, sizeof(*s->names));
	s->loads = calloc(s->nw, sizeof(*s->loads));
	if (!s->w || !s->names || !s->loads) {
		s->nw = 0;
		out_err("out of memory");
		goto out;
	}
	for (i = 0; i < s->nw; i++) {
		item = json_object_array_get_idx(arr, i);
		if (!json_object_is_type(item, json_type_object)) {
			out_err("%s: workload %d: not an object", path, i);
			goto out;
		}
		if (json_object_object_get_ex(item, "name", &v)) {
			if (!json_object_is_type(v, json_type_string)) {
				out_err("%s: workload %d: field \"name\": not a string", path, i);
				goto out;
			}
			s->names[i] = strdup(json_object_get_string(v));
		} else if (asprintf(&s->names[i], "w%d", i) < 0) {
			s->names[i] = NULL;
		}
		s->loads[i] = calloc(t->n, sizeof(uint32_t));
		if (!s->names[i] || !s->loads[i]) {
			out_err("out of memory");
			goto out;
		}
		s->w[i].name = s->names[i];
		s->w[i].load = s->loads[i];
		if (json_object_object_get_ex(item, "k", &v)) {
			if (json_count(v, INT_MAX, &x)) {
				out_err("%s: workload \"%s\": field \"k\": must be an integer >= 0", path,
					s->names[i]);
				goto out;
			}
			s->w[i].k = x;
		} else if (kdef >= 0) {
			s->w[i].k = kdef;
		} else {
			out_err("%s: workload \"%s\": field \"k\": missing (or give -k)", path,
				s->names[i]);
			goto out;
		}
		if (!json_object_object_get_ex(item, "load", &v)) {
			int j;

			for (j = 0; j < t->n; j++)
				s->loads[i][j] = t->sw[j].load;
			continue;
		}
		if (!json_object_is_type(v, json_type_object)) {
			out_err("%s: workload \"%s\": field \"load\": not an object of switch: count",
				path, s->names[i]);
			goto out;
		}
		json_object_object_foreach(v, key, val) {
			int sw = ia_topo_find(t, key);

			if (sw < 0) {
				out_err("%s: workload \"%s\": field \"load\": unknown switch \"%s\"", path,
					s->names[i], key);
				goto out;
			}
			if (json_count(val, IA_LOAD_MAX, &x)) {
				out_err("%s: workload \"%s\": switch \"%s\": field \"load\": must be an integer >= 0 (at most %u)",
					path, s->names[i], key, IA_LOAD_MAX);
				goto out;
			}
			s->loads[i][sw] = x;
		}
	}
	ret = 0;
out:
	json_object_put(root);
	if (ret)
		wl_free(s);
	return ret;
}

static const struct option multi_opts[] = {
	{ "topo", required_argument, NULL, 't' },
	{ "workloads", required_argument, NULL, 'w' },
	{ "k", required_argument, NULL, 'k' },
	{ "algo", required_argument, NULL, 'a' },
	{ "aware", no_argument, NULL, 'A' },
	{ NULL }
};

int cmd_multi(int argc, char **argv)
{
	const char *path = NULL, *wpath = NULL;
	enum ia_algo algo = IA_ALGO_SMC;
	struct ia_multi_result r = { 0 };
	struct ia_topo *t = NULL;
	struct wl_set s = { 0 };
	bool aware = false;
	int c, i, j, v, w, err, ret = 1;
	char fmt[16];
	long k = -1;

	while ((c = getopt_long(argc, argv, "+:t:w:k:a:", multi_opts, NULL)) != -1) {
		switch (c) {
		case 't':
			path = optarg;
			break;
		case 'w':
			wpath = optarg;
			break;
		case 'k':
			if (parse_long("-k", optarg, 0, INT_MAX, &k))
				return 1;
			break;
		case 'a':
			if (parse_algo(optarg, &algo))
				return 1;
			break;
		case 'A':
			aware = true;
			break;
		default:
			return bad_option("multi", c, optopt, argv);
		}
	}
	if (optind < argc)
		return out_err("multi: unexpected argument '%s'", argv[optind]);
	if (!path)
		return out_err("multi: missing -t FILE (the topology)");
	if (!wpath)
		return out_err("multi: missing -w FILE (the workloads)");
	if (load_topo(path, &t))
		return 1;
	if (load_workloads(wpath, t, k, &s))
		goto out;
	err = ia_multi_place(t, s.w, s.nw, algo, aware, &r);
	if (err) {
		out_err("multi: %s: %s", ia_algo_name(algo), strerror(-err));
		goto out;
	}

	w = name_width(t);
	snprintf(fmt, sizeof(fmt), "%%-%ds ", w);
	out_begin();
	out_str("algorithm", "algorithm   %s\n", ia_algo_name(algo));
	out_bool("aware", "aware       %s\n", aware);
	out_ratio("congestion", "congestion  %s", r.congestion);
	out_str("bottleneck", "  (uplink of %s)\n",
		r.bottleneck >= 0 ? t->sw[r.bottleneck].name : NULL);
	out_text("\n%-*s %4s %11s %6s  %s\n", w, "workload", "k", "congestion", "nblue",
		 "blue switches");
	out_arr_open("workloads");
	for (i = 0; i < s.nw; i++) {
		const struct ia_placement *p = &r.per[i];
		struct ia_ratio own = { 0, 1 };

		/* The workload's own congestion, without the earlier ones' load. */
		for (v = 0; v < t->n; v++) {
			struct ia_ratio cv = ia_congestion(p->msgs[v], t->sw[v].rate);

			if (ia_ratio_cmp(cv, own) > 0)
				own = cv;
		}
		out_obj_open(NULL);
		out_str("name", fmt, s.names[i]);
		out_int("k", "%4lld ", s.w[i].k);
		out_ratio("congestion", "%11s ", own);
		out_int("nblue", "%6lld ", p->nblue);
		out_arr_open("blue");
		for (j = 0; j < t->n; j++)
			if (p->blue[t->order[j]])
				out_str(NULL, " %s", t->sw[t->order[j]].name);
		out_arr_close();
		out_obj_open("messages");
		for (j = 0; j < t->n; j++)
			out_uint(t->sw[t->order[j]].name, NULL, p->msgs[t->order[j]]);
		out_obj_close();
		out_text("\n");
		out_obj_close();
	}
	out_arr_close();

	out_text("\n%-*s %-*s %10s %9s %11s %8s %8s\n", w, "switch", w, "parent", "rate",
		 "messages", "congestion", "capacity", "residual");
	out_arr_open("links");
	for (j = 0; j < t->n; j++) {
		const struct ia_switch *sw;

		v = t->order[j];
		sw = &t->sw[v];
		out_obj_open(NULL);
		out_str("switch", fmt, sw->name);
		out_str("parent", fmt, sw->parent >= 0 ? t->sw[sw->parent].name : NULL);
		out_ratio("rate", "%10s ", sw->rate);
		out_uint("messages", "%9llu ", (unsigned long long)r.total_msgs[v]);
		out_ratio("congestion", "%11s ", ia_congestion(r.total_msgs[v], sw->rate));
		out_uint("capacity", "%8llu ", sw->capacity);
		out_uint("residual", "%8llu\n", r.residual[v]);
		out_obj_close();
	}
	out_arr_close();
	ret = out_end();
	ia_multi_free(&r);
out:
	wl_free(&s);
	ia_topo_free(t);
	return ret;
}
