// SPDX-License-Identifier: GPL-2.0
/* inagg topo place and inagg topo multi: placement of aggregating switches. */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "placeout.h"
#include "workload.h"

struct place_args {
	const char *topo, *algos;
	long k;
	int links;		/* enum ia_links, -1: by the tree's size */
};

static const struct place_args place_defaults = { .algos = "smc", .links = -1 };

static const char *links_name(int l)
{
	return ia_links_name(l);
}

static const struct opt place_opts[] = {
	OPT_STR('t', "topo", "FILE", struct place_args, topo, OPT_REQUIRED,
		"topology (JSON, see docs/cli.md); '-' reads stdin"),
	OPT_INT('k', "k", "K", struct place_args, k, 0, INT_MAX, OPT_REQUIRED,
		"budget of blue switches"),
	OPT_STR('a', "algo", "ALGO", struct place_args, algos, 0,
		"smc, top, max, level, all-red, all-blue, brute, smc-naive; a "
		"comma-separated list, or 'all' for every one (brute is left out of 'all' "
		"on trees it cannot enumerate)"),
	OPT_ENUMF(0, "links", "WHICH", struct place_args, links, links_name, IA_LINKS__COUNT,
		  OPT_NODEF,
		 "uplinks to list (congested: those at the network congestion); default all "
		 "up to " OPT_STR_OF(IA_LINKS_ALL_MAX) " switches, congested above"),
	OPT_END
};

const struct opt_cmd topo_place_cmd = {
	.opts = place_opts,
	.defaults = &place_defaults,
	.size = sizeof(place_defaults),
	.about = "Chooses at most K aggregating (blue) switches and prints the blue set, the\n"
		 "messages, rate and congestion (messages / rate) of every switch's uplink, and\n"
		 "the network congestion (the largest link congestion).\n",
	.notes = "JSON (-j): algorithm, k, congestion, congestion_exact, bottleneck, blue,\n"
		 "solve_seconds, links_shown, links [{switch, parent, load, rate, rate_exact,\n"
		 "messages, congestion, congestion_exact, blue}]; several algorithms give {k,\n"
		 "placements: [...]}. Doubles are the shortest text that reads back the same\n"
		 "double; *_exact are the exact rationals (\"200/9\").\n",
};

struct multi_args {
	const char *topo, *workloads;
	long k;
	enum ia_algo algo;
	bool aware;
};

static const struct multi_args multi_defaults = { .k = -1, .algo = IA_ALGO_SMC };

static const struct opt multi_opts[] = {
	OPT_STR('t', "topo", "FILE", struct multi_args, topo, OPT_REQUIRED,
		"topology (JSON); 'capacity' per switch, default 1"),
	OPT_STR(0, "workloads", "FILE", struct multi_args, workloads, OPT_REQUIRED,
		"{\"workloads\": [{\"name\": \"w0\", \"k\": 2, \"load\": {\"s3\": 2, "
		"\"s4\": 6}}, ...]}; a missing load means the topology's loads, a missing k "
		"means -k"),
	OPT_INT('k', "k", "K", struct multi_args, k, 0, INT_MAX, OPT_NODEF,
		"budget of blue switches for workloads without \"k\""),
	OPT_ENUMF('a', "algo", "ALGO", struct multi_args, algo, cli_algo_name, IA_ALGO__COUNT, 0,
		  "placement algorithm"),
	OPT_FLAG(0, "aware", struct multi_args, aware, 0,
		 "place each workload knowing the link load of the earlier ones (beyond "
		 "the paper)"),
	OPT_END
};

const struct opt_cmd topo_multi_cmd = {
	.opts = multi_opts,
	.defaults = &multi_defaults,
	.size = sizeof(multi_defaults),
	.about = "Places a sequence of workloads online on one tree (paper Sec. V): each gets\n"
		 "its own budget k on the available switches with capacity left, and every\n"
		 "blue placement uses one unit of that switch's capacity. Prints each\n"
		 "workload's blue set and congestion, and the total load and congestion.\n",
};

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

struct links_out {
	const struct ia_problem *pb;
	const struct ia_placement *p;
	enum ia_links which;
};

static void write_links(FILE *f, int indent, void *arg)
{
	const struct links_out *l = arg;

	ia_links_write_json(f, l->pb, l->p, l->which, indent);
}

/* The placement of one algorithm, as an object of the current container. */
static void print_placement(const struct ia_problem *pb, enum ia_algo algo,
			    const struct ia_placement *p, struct links_out *lo)
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

	out_str("links_shown", NULL, ia_links_name(lo->which));
	if (out_is_json()) {
		/* Written as formatted: a million links are never objects. */
		out_stream("links", write_links, lo);
		return;
	}
	if (lo->which == IA_LINKS_NONE)
		return;
	out_text("\n");
	print_links_header(w);
	snprintf(fmt, sizeof(fmt), "%%-%ds ", w);
	out_arr_open("links");
	for (i = 0; i < t->n; i++) {
		struct ia_switch *s;

		v = t->order[i];
		s = &t->sw[v];
		if (!ia_link_shown(pb, p, v, lo->which))
			continue;
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

/* Parses "smc,top" or "all" into a list; returns the count or -1 after out_err(). */
static int parse_algo_list(const char *s, const struct ia_problem *pb, enum ia_algo *list)
{
	char *copy, *tok, *save = NULL;
	int n = 0, a;

	if (!strcmp(s, "all")) {
		for (a = 0; a < IA_ALGO__COUNT; a++) {
			if (ia_place_check(pb, a, NULL, 0))	/* brute force on a large tree */
				continue;
			list[n++] = a;
		}
		return n;
	}
	if (list_items_ok("-a", s))
		return -1;
	copy = strdup(s);
	if (!copy) {
		out_err("out of memory");
		return -1;
	}
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (n == IA_ALGO__COUNT || parse_algo(tok, &list[n])) {
			if (n == IA_ALGO__COUNT)
				out_err("topo place: too many algorithms in '%s'", s);
			free(copy);
			return -1;
		}
		n++;
	}
	free(copy);
	if (!n)
		out_err("topo place: no algorithm in '%s'", s);
	return n ? n : -1;
}

int cmd_topo_place(int argc, char **argv)
{
	struct place_args o = place_defaults;
	enum ia_algo list[IA_ALGO__COUNT];
	struct ia_placement *pl = NULL;
	struct ia_topo *t = NULL;
	struct links_out *lo = NULL;
	struct ia_problem pb;
	char why[IA_ERRLEN];
	int i, n = 0, ret = 1;
	const char *path;
	long k;

	if (opt_parse(&topo_place_cmd, argv[0], argc, argv, &o, NULL, NULL))
		return 1;
	path = o.topo;
	k = o.k;
	if (load_topo(path, &t))
		return 1;
	pb = (struct ia_problem){ .topo = t, .k = k };
	n = parse_algo_list(o.algos, &pb, list);
	if (n < 0)
		goto out;
	pl = calloc(n, sizeof(*pl));
	lo = calloc(n, sizeof(*lo));
	if (!pl || !lo) {
		out_err("out of memory");
		goto out;
	}
	for (i = 0; i < n; i++) {
		int err = ia_place_check(&pb, list[i], why, sizeof(why));

		if (err) {
			out_err("topo place: %s", why);
			goto out;
		}
		err = ia_placement_init(&pl[i], t->n);
		if (!err)
			err = ia_place(&pb, list[i], &pl[i]);
		if (err) {
			out_err("topo place: %s: %s", ia_algo_name(list[i]), strerror(-err));
			goto out;
		}
		lo[i] = (struct links_out){ &pb, &pl[i],
					    o.links < 0 ? ia_links_default(t) : (enum ia_links)o.links };
	}

	out_begin();
	if (n == 1) {
		print_placement(&pb, list[0], &pl[0], &lo[0]);
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
			print_placement(&pb, list[i], &pl[i], &lo[i]);
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
	free(lo);
	ia_topo_free(t);
	return ret;
}

int cmd_topo_multi(int argc, char **argv)
{
	struct multi_args o = multi_defaults;
	struct ia_multi_result r = { 0 };
	struct ia_workloads s = { 0 };
	struct ia_topo *t = NULL;
	int i, j, v, w, err, ret = 1;
	char fmt[16], why[IA_ERRLEN];
	enum ia_algo algo;
	bool aware;

	if (opt_parse(&topo_multi_cmd, argv[0], argc, argv, &o, NULL, NULL))
		return 1;
	algo = o.algo;
	aware = o.aware;
	if (load_topo(o.topo, &t))
		return 1;
	if (ia_workloads_load(o.workloads, t, o.k, &s, why, sizeof(why))) {
		out_err("%s", why);
		goto out;
	}
	err = ia_multi_place(t, s.w, s.n, algo, aware, &r);
	if (err) {
		out_err("topo multi: %s: %s", ia_algo_name(algo), strerror(-err));
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
	for (i = 0; i < s.n; i++) {
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
	ia_workloads_free(&s);
	ia_topo_free(t);
	return ret;
}
