// SPDX-License-Identifier: GPL-2.0
/* inagg topo gen | dot | show: make, draw and inspect topologies. */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>

#include "cli.h"
#include "dot.h"
#include "gen.h"
#include "jsonfile.h"

struct gen_args {
	struct ia_gen_opts g;
	int loaded;		/* index in loaded_names */
	const char *output;
};

static const char *const loaded_names[] = { "leaves", "all", NULL };

static const char *rate_name(int i)
{
	return ia_gen_rate_name(i);
}

/* --load: a distribution's name or a constant. */
static int parse_load(const char *opt, const char *arg, void *dst)
{
	struct ia_gen_opts *g = dst;
	long v;
	int x;

	x = ia_gen_load_parse(arg);
	if (x >= 0) {
		g->load = x;
		g->load_const = 1;
		return 0;
	}
	if (parse_long(opt, arg, 0, IA_LOAD_MAX, &v))
		return 1;
	g->load = IA_GEN_LOAD_CONST;
	g->load_const = v;
	return 0;
}

static void show_load(const void *dst, char *buf, size_t len)
{
	const struct ia_gen_opts *g = dst;

	snprintf(buf, len, "%s", ia_gen_load_name(g->load));
}

static void gen_init(void *args)
{
	struct gen_args *a = args;

	ia_gen_defaults(&a->g);
	a->g.seed = 1;
}

static const struct opt gen_opts[] = {
	OPT_INT('d', "depth", "D", struct gen_args, g.depth, 0, 24, OPT_GROUP(1),
		"complete binary tree of levels 0..D: 2^(D+1)-1 switches; the paper's is 7"),
	OPT_INT('R', "random", "N", struct gen_args, g.n, 1, 1 << 25, OPT_NODEF | OPT_GROUP(1),
		"random tree of N switches; switch i hangs below one of s0..s(i-1) drawn "
		"uniformly"),
	OPT_FUNC('l', "load", "L", struct gen_args, g, parse_load, show_load, 0,
		 "uniform: integer in [1,9] (mean 5); powerlaw: integer in "
		 OPT_STR_OF(IA_GEN_POWERLAW_MIN) ".." OPT_STR_OF(IA_GEN_POWERLAW_MAX)
		 " with P(x) ~ x^-" OPT_STR_OF(IA_GEN_POWERLAW_ALPHA)
		 " (mean 5); const or an integer N: every loaded switch gets 1 "
		 "or N"),
	OPT_ENUM(0, "loaded", "W", struct gen_args, loaded, loaded_names, 0,
		 "which switches get load"),
	OPT_ENUMF('r', "rate", "R", struct gen_args, g.rate, rate_name, IA_GEN_RATE__COUNT, 0,
		  "const: 1; linear: 1 + height (1 on leaf uplinks, +1 per level up); exp: "
		  "1.5^height; random: one of 0.5, 0.75, ..., 4"),
	OPT_INT('c', "capacity", "C", struct gen_args, g.capacity, 0, UINT32_MAX, 0,
		"every switch's aggregation capacity"),
	OPT_REAL(0, "avail", "P", struct gen_args, g.avail_prob, 0, 1, 0,
		 "each switch available with probability P"),
	OPT_INT('s', "seed", "S", struct gen_args, g.seed, 0, OPT_NOMAX, 0,
		"PRNG seed; same seed, same tree"),
	OPT_STR('o', "output", "FILE", struct gen_args, output, 0,
		"write there instead of stdout"),
	OPT_END
};

const struct opt_cmd topo_gen_cmd = {
	.opts = gen_opts,
	.init = gen_init,
	.size = sizeof(struct gen_args),
	.about = "Writes a topology (JSON) of the paper's evaluation (Sec. V) or a random tree.\n",
};

int cmd_topo_gen(int argc, char **argv)
{
	bool given[ARRAY_SIZE(gen_opts)];
	struct gen_args a;
	struct ia_topo *t;
	int ret, n;
	FILE *f;

	opt_defaults(&topo_gen_cmd, &a);
	if (opt_parse(&topo_gen_cmd, argv[0], argc, argv, &a, NULL, given))
		return 1;
	if (opt_given(gen_opts, given, "random"))
		a.g.depth = -1;
	a.g.load_all = a.loaded == 1;
	ret = ia_gen_tree(&a.g, &t);
	if (ret)
		return out_err("%s: %s", argv[0], strerror(-ret));
	f = open_out(a.output);
	if (!f) {
		ia_topo_free(t);
		return 1;
	}
	ret = ia_topo_write_json(t, f);
	n = t->n;
	ia_topo_free(t);
	if (ret && f != stdout)
		fclose(f);
	if (ret)
		return out_err("%s: %s", a.output ? a.output : "stdout", strerror(-ret));
	ret = close_out(f, a.output);
	/* -j with -o: stdout still gets a JSON document, saying what was written. */
	if (!ret && f != stdout && out_is_json()) {
		out_begin();
		out_str("output", NULL, a.output);
		out_int("switches", NULL, n);
		ret = out_end();
	}
	return ret;
}

/* Reads the "blue" names of a 'place -j' output into p->blue. */
static int read_placement(const char *path, const struct ia_topo *t, struct ia_placement *p,
			  char *algo, size_t algolen)
{
	json_object *root, *blue, *v;
	char err[IA_ERRLEN];
	int i, n, sw, ret = 1;

	if (ia_json_file(path, &root, err, sizeof(err)))
		return out_err("%s", err);
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

struct dot_args {
	const char *topo, *placement, *title, *output;
	enum ia_algo algo;
	long k;
	bool place;	/* -a given */
};

static const struct dot_args dot_defaults = { .k = -1, .algo = IA_ALGO_SMC };

static const struct opt dot_opts[] = {
	OPT_STR('t', "topo", "FILE", struct dot_args, topo, OPT_REQUIRED, "topology (JSON)"),
	OPT_ENUMF('a', "algo", "ALGO", struct dot_args, algo, cli_algo_name, IA_ALGO__COUNT,
		  OPT_NODEF | OPT_GROUP(1), "place now with this algorithm (needs -k)"),
	OPT_INT('k', "k", "K", struct dot_args, k, 0, INT_MAX, OPT_NODEF,
		"budget of blue switches for -a"),
	OPT_STR('P', "placement", "FILE", struct dot_args, placement, OPT_GROUP(1),
		"draw the placement of this file, written by 'inagg -j topo place' (its "
		"\"blue\" names)"),
	OPT_STR('T', "title", "TEXT", struct dot_args, title, 0,
		"graph title (default: algorithm, k, congestion)"),
	OPT_STR('o', "output", "FILE", struct dot_args, output, 0,
		"write there instead of stdout"),
	OPT_END
};

const struct opt_cmd topo_dot_cmd = {
	.opts = dot_opts,
	.defaults = &dot_defaults,
	.size = sizeof(dot_defaults),
	.about = "Writes Graphviz DOT of the tree like the paper's Fig. 1: the destination d on\n"
		 "top, switches filled " IA_DOT_BLUE " (aggregating) or " IA_DOT_RED " (forwarding), a\n"
		 "gray box with L(v) under each loaded switch, every uplink labelled with its\n"
		 "congestion (the bottleneck bold), or with its rate when no placement is given.\n",
	.notes = "Example: inagg topo dot -t fig1.json -a smc -k 2 | dot -Tpng -o fig1.png\n",
};

int cmd_topo_dot(int argc, char **argv)
{
	struct dot_args o = dot_defaults;
	bool given[ARRAY_SIZE(dot_opts)];
	struct ia_placement pl = { 0 }, *p = NULL;
	char algo[64] = "", cbuf[64], tbuf[256];
	const char *title;
	struct ia_topo *t = NULL;
	struct ia_problem pb;
	int a, ret = 1;
	FILE *f;

	if (opt_parse(&topo_dot_cmd, argv[0], argc, argv, &o, NULL, given))
		return 1;
	o.place = opt_given(dot_opts, given, "algo");
	if (o.place && o.k < 0)
		return out_err("%s: -a %s needs -k K", argv[0], ia_algo_name(o.algo));
	title = o.title;
	if (load_topo(o.topo, &t))
		return 1;
	pb = (struct ia_problem){ .topo = t, .k = o.k };
	if (o.place || o.placement) {
		if (ia_placement_init(&pl, t->n)) {
			out_err("out of memory");
			goto out;
		}
		p = &pl;
		if (o.place) {
			ret = ia_place(&pb, o.algo, p);
			if (ret) {
				out_err("%s: %s: %s", argv[0], ia_algo_name(o.algo), strerror(-ret));
				ret = 1;
				goto out;
			}
			ret = 1;
			snprintf(algo, sizeof(algo), "%s", ia_algo_name(o.algo));
		} else {
			if (read_placement(o.placement, t, p, algo, sizeof(algo)))
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
	/* -j: stdout is one JSON document, the DOT text inside it (or where -o put it). */
	if (out_is_json() && (!o.output || !strcmp(o.output, "-"))) {
		char *dot = NULL;
		size_t len = 0;

		f = open_memstream(&dot, &len);
		if (!f || ia_dot_write(f, t, NULL, p, title) || fclose(f)) {
			free(dot);
			out_err("%s: %s", argv[0], strerror(ENOMEM));
			goto out;
		}
		out_begin();
		out_str("title", NULL, title);
		out_str("dot", NULL, dot);
		ret = out_end();
		free(dot);
		goto out;
	}
	f = open_out(o.output);
	if (!f)
		goto out;
	if (ia_dot_write(f, t, NULL, p, title)) {
		out_err("%s: %s", o.output ? o.output : "stdout", strerror(EIO));
		if (f != stdout)
			fclose(f);
		goto out;
	}
	ret = close_out(f, o.output);
	if (!ret && out_is_json()) {
		out_begin();
		out_str("title", NULL, title);
		out_str("output", NULL, o.output);
		ret = out_end();
	}
out:
	if (p)
		ia_placement_free(p);
	ia_topo_free(t);
	return ret;
}

struct show_args {
	const char *topo;
};

static const struct opt show_opts[] = {
	OPT_STR('t', "topo", "FILE", struct show_args, topo, OPT_REQUIRED, "topology (JSON)"),
	OPT_END
};

const struct opt_cmd topo_show_cmd = {
	.opts = show_opts,
	.size = sizeof(struct show_args),
	.about = "Checks a topology file and prints its switches (parent, depth, load, rate,\n"
		 "availability, capacity, slots), its height and total load.\n",
};

int cmd_topo_show(int argc, char **argv)
{
	struct show_args o = { 0 };
	const char *path;
	struct ia_topo *t;
	char fmt[16];
	int i, v, w = 6;

	if (opt_parse(&topo_show_cmd, argv[0], argc, argv, &o, NULL, NULL))
		return 1;
	path = o.topo;
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
	out_text("\n%-*s %-*s %5s %6s %10s %9s %8s %8s\n", w, "switch", w, "parent", "depth",
		 "load", "rate", "available", "capacity", "slots");
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
		out_uint("capacity", "%8llu ", s->capacity);
		out_uint("slots", "%8llu\n", s->slots);
		out_obj_close();
	}
	out_arr_close();
	ia_topo_free(t);
	return out_end();
}
