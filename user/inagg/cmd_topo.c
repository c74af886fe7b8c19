// SPDX-License-Identifier: GPL-2.0
/* inagg topo gen | dot | show: make, draw and inspect topologies. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>

#include "cli.h"
#include "dot.h"
#include "gen.h"

const char help_topo_gen[] =
	"Writes a topology (JSON) of the paper's evaluation (Sec. V) or a random tree.\n"
	"  -d, --depth D      complete binary tree of levels 0..D: 2^(D+1)-1 switches\n"
	"                     (default 7: the paper's 255 switches, 128 leaves)\n"
	"  -n, --random N     random tree of N switches; switch i hangs below one of\n"
	"                     s0..s(i-1) drawn uniformly\n"
	"  -l, --load L       uniform: integer in [1,9] (mean 5); powerlaw: integer in\n"
	"                     2..62 with P(x) ~ x^-2.19 (mean 5); const or an integer N:\n"
	"                     every loaded switch gets 1 or N (default uniform)\n"
	"      --loaded W     leaves (default) or all: which switches get load\n"
	"  -r, --rate R       const: 1; linear: 1 + height (1 on leaf uplinks, +1 per\n"
	"                     level up); exp: 1.5^height; random: one of 0.5,0.75..4\n"
	"                     (default const)\n"
	"  -c, --capacity C   every switch's aggregation capacity (default 1)\n"
	"      --avail P      each switch available with probability P (default 1)\n"
	"  -s, --seed S       PRNG seed (default 1); same seed, same tree\n"
	"  -o, --output FILE  write there instead of stdout\n";

const char help_topo_dot[] =
	"Writes Graphviz DOT of the tree like the paper's Fig. 1: the destination d on\n"
	"top, switches filled " IA_DOT_BLUE " (aggregating) or " IA_DOT_RED " (forwarding), a\n"
	"gray box with L(v) under each loaded switch, every uplink labelled with its\n"
	"congestion (the bottleneck bold), or with its rate when no placement is given.\n"
	"  -t, --topo FILE       topology (JSON)\n"
	"  -p, --placement P     an algorithm name (with -k K) to place now, or the JSON\n"
	"                        file written by 'inagg -j place' (its \"blue\" names)\n"
	"  -k, --k K             budget for -p ALGO\n"
	"  -T, --title TEXT      graph title (default: algorithm, k, congestion)\n"
	"  -o, --output FILE     write there instead of stdout\n"
	"Example: inagg topo dot -t fig1.json -p smc -k 2 | dot -Tpng -o fig1.png\n";

const char help_topo_show[] =
	"Checks a topology file and prints its switches, depth and total load.\n"
	"  -t, --topo FILE   topology (JSON)\n";

static const struct option gen_opts[] = {
	{ "depth", required_argument, NULL, 'd' },
	{ "random", required_argument, NULL, 'n' },
	{ "load", required_argument, NULL, 'l' },
	{ "loaded", required_argument, NULL, 'L' },
	{ "rate", required_argument, NULL, 'r' },
	{ "capacity", required_argument, NULL, 'c' },
	{ "avail", required_argument, NULL, 'A' },
	{ "seed", required_argument, NULL, 's' },
	{ "output", required_argument, NULL, 'o' },
	{ NULL }
};

/* Opens -o FILE, or stdout. */
static FILE *open_out(const char *path)
{
	FILE *f;

	if (!path || !strcmp(path, "-"))
		return stdout;
	f = fopen(path, "w");
	if (!f)
		out_err("%s: %s", path, strerror(errno));
	return f;
}

static int close_out(FILE *f, const char *path)
{
	if (f == stdout)
		return fflush(f) ? out_err("stdout: %s", strerror(errno)) : 0;
	if (fclose(f))
		return out_err("%s: %s", path, strerror(errno));
	return 0;
}

int cmd_topo_gen(int argc, char **argv)
{
	const char *opath = NULL;
	struct ia_gen_opts o;
	struct ia_topo *t;
	int c, x, ret;
	char *end;
	double d;
	long v;
	FILE *f;

	ia_gen_defaults(&o);
	o.seed = 1;
	while ((c = getopt_long(argc, argv, "+:d:n:l:r:c:s:o:", gen_opts, NULL)) != -1) {
		switch (c) {
		case 'd':
			if (parse_long("--depth", optarg, 0, 24, &v))
				return 1;
			o.depth = v;
			break;
		case 'n':
			if (parse_long("--random", optarg, 1, 1 << 25, &v))
				return 1;
			o.depth = -1;
			o.n = v;
			break;
		case 'l':
			x = ia_gen_load_parse(optarg);
			if (x >= 0) {
				o.load = x;
				o.load_const = 1;
				break;
			}
			if (parse_long("--load", optarg, 0, IA_LOAD_MAX, &v))
				return 1;
			o.load = IA_GEN_LOAD_CONST;
			o.load_const = v;
			break;
		case 'L':
			if (strcmp(optarg, "leaves") && strcmp(optarg, "all"))
				return out_err("--loaded: invalid value '%s': need leaves or all",
					       optarg);
			o.load_all = !strcmp(optarg, "all");
			break;
		case 'r':
			x = ia_gen_rate_parse(optarg);
			if (x < 0)
				return out_err("--rate: invalid value '%s': need const, linear, exp or random",
					       optarg);
			o.rate = x;
			break;
		case 'c':
			if (parse_long("--capacity", optarg, 0, UINT32_MAX, &v))
				return 1;
			o.capacity = v;
			break;
		case 'A':
			errno = 0;
			d = strtod(optarg, &end);
			if (errno || end == optarg || *end || !(d >= 0 && d <= 1))
				return out_err("--avail: invalid value '%s': need a probability in [0, 1]",
					       optarg);
			o.avail_prob = d;
			break;
		case 's':
			if (parse_u64("--seed", optarg, &o.seed))
				return 1;
			break;
		case 'o':
			opath = optarg;
			break;
		default:
			return bad_option("topo gen", c, optopt, argv);
		}
	}
	if (optind < argc)
		return out_err("topo gen: unexpected argument '%s'", argv[optind]);
	ret = ia_gen_tree(&o, &t);
	if (ret)
		return out_err("topo gen: %s", strerror(-ret));
	f = open_out(opath);
	if (!f) {
		ia_topo_free(t);
		return 1;
	}
	ret = ia_topo_write_json(t, f);
	ia_topo_free(t);
	if (ret && f != stdout)
		fclose(f);
	if (ret)
		return out_err("%s: %s", opath ? opath : "stdout", strerror(-ret));
	return close_out(f, opath);
}

/* Reads the "blue" names of a 'place -j' output into p->blue. */
static int read_placement(const char *path, const struct ia_topo *t, struct ia_placement *p,
			  char *algo, size_t algolen)
{
	json_object *root, *blue, *v;
	int i, n, sw, ret = 1;

	root = json_object_from_file(path);
	if (!root)
		return out_err("%s: not a placement: %s", path, json_util_get_last_err());
	if (json_object_object_get_ex(root, "algorithm", &v))
		snprintf(algo, algolen, "%s", json_object_get_string(v));
	if (!json_object_object_get_ex(root, "blue", &blue) ||
	    !json_object_is_type(blue, json_type_array)) {
		out_err("%s: field \"blue\": missing or not an array of switch names", path);
		goto out;
	}
	n = json_object_array_length(blue);
	for (i = 0; i < n; i++) {
		const char *name = json_object_get_string(json_object_array_get_idx(blue, i));

		sw = name ? ia_topo_find(t, name) : -1;
		if (sw < 0) {
			out_err("%s: field \"blue\": unknown switch \"%s\"", path, name ? name : "null");
			goto out;
		}
		p->blue[sw] = true;
	}
	ret = 0;
out:
	json_object_put(root);
	return ret;
}

static const struct option dot_opts[] = {
	{ "topo", required_argument, NULL, 't' },
	{ "placement", required_argument, NULL, 'p' },
	{ "k", required_argument, NULL, 'k' },
	{ "title", required_argument, NULL, 'T' },
	{ "output", required_argument, NULL, 'o' },
	{ NULL }
};

int cmd_topo_dot(int argc, char **argv)
{
	const char *path = NULL, *place = NULL, *title = NULL, *opath = NULL;
	struct ia_placement pl = { 0 }, *p = NULL;
	char algo[64] = "", cbuf[64], tbuf[256];
	struct ia_topo *t = NULL;
	struct ia_problem pb;
	int c, a, ret = 1;
	long k = -1;
	FILE *f;

	while ((c = getopt_long(argc, argv, "+:t:p:k:T:o:", dot_opts, NULL)) != -1) {
		switch (c) {
		case 't':
			path = optarg;
			break;
		case 'p':
			place = optarg;
			break;
		case 'k':
			if (parse_long("-k", optarg, 0, INT_MAX, &k))
				return 1;
			break;
		case 'T':
			title = optarg;
			break;
		case 'o':
			opath = optarg;
			break;
		default:
			return bad_option("topo dot", c, optopt, argv);
		}
	}
	if (optind < argc)
		return out_err("topo dot: unexpected argument '%s'", argv[optind]);
	if (!path)
		return out_err("topo dot: missing -t FILE (the topology)");
	if (load_topo(path, &t))
		return 1;
	pb = (struct ia_problem){ .topo = t, .k = k };
	if (place) {
		if (ia_placement_init(&pl, t->n)) {
			out_err("out of memory");
			goto out;
		}
		p = &pl;
		a = ia_algo_parse(place);
		if (a >= 0) {
			if (k < 0) {
				out_err("topo dot: -p %s needs -k K", place);
				goto out;
			}
			ret = ia_place(&pb, a, p);
			if (ret) {
				out_err("topo dot: %s: %s", place, strerror(-ret));
				ret = 1;
				goto out;
			}
			ret = 1;
			snprintf(algo, sizeof(algo), "%s", place);
		} else {
			if (access(place, R_OK)) {
				out_err("topo dot: -p %s: neither an algorithm nor a readable placement file (%s)",
					place, strerror(errno));
				goto out;
			}
			if (read_placement(place, t, p, algo, sizeof(algo)))
				goto out;
			pb.k = 0;
			for (a = 0; a < t->n; a++)
				pb.k += p->blue[a];
			ia_model_eval(&pb, p);
		}
		if (!title) {
			ia_ratio_format(p->congestion, cbuf, sizeof(cbuf));
			snprintf(tbuf, sizeof(tbuf), "%s, k=%d: congestion %s",
				 algo[0] ? algo : "placement", pb.k, cbuf);
			title = tbuf;
		}
	}
	f = open_out(opath);
	if (!f)
		goto out;
	if (ia_dot_write(f, t, NULL, p, title)) {
		out_err("%s: %s", opath ? opath : "stdout", strerror(EIO));
		if (f != stdout)
			fclose(f);
		goto out;
	}
	ret = close_out(f, opath);
out:
	if (p)
		ia_placement_free(p);
	ia_topo_free(t);
	return ret;
}

static const struct option show_opts[] = {
	{ "topo", required_argument, NULL, 't' },
	{ NULL }
};

int cmd_topo_show(int argc, char **argv)
{
	const char *path = NULL;
	struct ia_topo *t;
	char fmt[16];
	int c, i, v, w = 6;

	while ((c = getopt_long(argc, argv, "+:t:", show_opts, NULL)) != -1) {
		if (c != 't')
			return bad_option("topo show", c, optopt, argv);
		path = optarg;
	}
	if (optind < argc)
		return out_err("topo show: unexpected argument '%s'", argv[optind]);
	if (!path)
		return out_err("topo show: missing -t FILE (the topology)");
	if (load_topo(path, &t))
		return 1;
	for (i = 0; i < t->n; i++)
		if ((int)strlen(t->sw[i].name) > w)
			w = strlen(t->sw[i].name);
	snprintf(fmt, sizeof(fmt), "%%-%ds ", w);
	out_begin();
	out_int("n", "switches    %lld\n", t->n);
	out_str("root", "root        %s\n", t->sw[t->root].name);
	out_int("height", "height      %lld\n", t->height);
	out_uint("total_load", "total load  %llu\n", (unsigned long long)ia_topo_total_load(t));
	out_text("\n%-*s %-*s %5s %6s %10s %9s %8s\n", w, "switch", w, "parent", "depth", "load",
		 "rate", "available", "capacity");
	out_arr_open("switches");
	for (i = 0; i < t->n; i++) {
		const struct ia_switch *s;

		v = t->order[i];
		s = &t->sw[v];
		out_obj_open(NULL);
		out_str("name", fmt, s->name);
		out_str("parent", fmt, s->parent >= 0 ? t->sw[s->parent].name : NULL);
		out_int("depth", "%5lld ", t->depth[v]);
		out_uint("load", "%6llu ", s->load);
		out_ratio("rate", "%10s ", s->rate);
		out_bool("available", "%9s ", s->available);
		out_uint("capacity", "%8llu\n", s->capacity);
		out_obj_close();
	}
	out_arr_close();
	ia_topo_free(t);
	return out_end();
}
