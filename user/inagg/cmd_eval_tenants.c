// SPDX-License-Identifier: GPL-2.0
/*
 * inagg eval tenants: many jobs sharing switch memory and a bottleneck,
 * every scheme of issue 12 on the same job mixes, live on namespaces
 * (cmd_eval_tenants_live.c) or simulated (--sim; docs/cc.md).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "eval_tenants.h"

#define MAX_ROUNDS	TENANTS_MAX_ROUNDS

static void tenants_init(void *args)
{
	struct tenants_args *a = args;

	ia_sim_defaults(&a->c);
	ia_live_defaults(&a->lc);
	a->rounds = 3;
	a->cross = -1;
	a->keep.repeats = 3;
	a->keep.pause_ms = 500;
}

static const struct opt tenants_opts[] = {
	OPT_FLAG(0, "sim", struct tenants_args, sim, 0,
		 "simulate (default: live, on network namespaces, as root)"),
	OPT_INT('d', "depth", "D", struct tenants_args, c.depth, 1, 16, 0,
		"sim: depth of the complete binary tree (2^(D+1)-1 switches)"),
	OPT_INT(0, "jobs", "N", struct tenants_args, c.jobs, 1, 100000, 0, "sim: concurrent jobs"),
	OPT_INT(0, "per-leaf", "N", struct tenants_args, c.per_leaf, 1, 1024, 0,
		"sim: jobs per leaf switch"),
	OPT_INT(0, "iters", "N", struct tenants_args, c.iters, 1, 1000, 0,
		"sim: iterations (allreduces) per job"),
	OPT_INT('w', "window", "W", struct tenants_args, c.window, 1, 4096, 0,
		"sim: largest window, chunks (an INA job's head, slots)"),
	OPT_REAL(0, "mem", "R", struct tenants_args, mem, 0, 100, OPT_NODEF,
		 "leaf memory / the heads its jobs need (default: 0.25, 0.5 and 1)"),
	OPT_REAL(0, "link-rate", "R", struct tenants_args, c.rate, 1, 1e12, 0,
		 "sim: bottleneck, messages per second"),
	OPT_INT(0, "rounds", "N", struct tenants_args, rounds, 1, MAX_ROUNDS, 0,
		"job mixes (seeds) per point: median and range"),
	OPT_INT('s', "seed", "S", struct tenants_args, c.seed, 0, OPT_NOMAX, 0, "first seed"),
	OPT_FLAG(0, "quick", struct tenants_args, quick, 0,
		 "--sim: 32 jobs, 2 iterations, 2 rounds; live: 4 jobs, 1 iteration, 2 rounds,"
		 " one point (for make check)"),
	OPT_INT(0, "live-jobs", "N", struct tenants_args, lc.jobs, 1, IA_LIVE_MAX_JOBS, 0,
		"live: concurrent jobs"),
	OPT_INT(0, "live-iters", "N", struct tenants_args, lc.iters, 1, IA_LIVE_MAX_ITERS, 0,
		"live: allreduces per job"),
	OPT_INT(0, "leaves", "N", struct tenants_args, lc.leaves, 1, IA_LIVE_MAX_LEAVES, 0,
		"live: leaf switches (job i on leaf i mod N)"),
	OPT_INT(0, "chunks-max", "N", struct tenants_args, lc.cmax, 1, 4096, 0,
		"live: most chunks per iteration (the least: a third of it)"),
	OPT_STR(0, "mix", "M", struct tenants_args, mix, 0,
		"live: requested INA:PS, 1:1, 1:3 or all (every job asks for a head;"
		" default: the sweep)"),
	OPT_REAL(0, "cross", "F", struct tenants_args, cross, 0, 0.9, OPT_NODEF,
		 "live: UDP cross traffic, a fraction of the bottleneck (default: the sweep)"),
	OPT_REAL(0, "rate-mbit", "R", struct tenants_args, lc.rate_mbit, 0.1, 1e5, 0,
		 "live: the bottleneck (the root's uplink), Mbit/s"),
	OPT_INT(0, "mark-kb", "K", struct tenants_args, lc.mark_kb, 1, 1 << 20, 0,
		"live: virtual queues mark above K KiB"),
	OPT_REAL(0, "gap-ms", "MS", struct tenants_args, lc.gap_ms, 0, 10000, 0,
		 "live: compute gap before an iteration, at most (the straggler's)"),
	OPT_INT(0, "timeout-ms", "MS", struct tenants_args, lc.timeout_ms, 1, 10000, 0,
		"live: the workers' shortest resend timer (inagg worker run --timeout)"),
	OPT_FLAG(0, "no-congestion", struct tenants_args, no_congestion, 0,
		 "live: the bottleneck 100 times faster"),
	OPT_REAL(0, "max-other", "F", struct tenants_args, keep.max_other, 0.01, 1, OPT_NODEF,
		 "live: run again a run during which other work took more than F of the"
		 " host's CPU (default: never)"),
	OPT_INT(0, "other-repeats", "N", struct tenants_args, keep.repeats, 0,
		IA_LIVE_MAX_REPEATS, 0, "live: with --max-other, at most N runs more per run"),
	OPT_FLAG(0, "compare", struct tenants_args, compare, 0,
		 "live: also simulate each round's mix and compare (tolerance 25 %)"),
	OPT_STR(0, "plot", "DIR", struct tenants_args, plot, 0,
		"live: gnuplot PNGs of throughput and PS JCTs in DIR"),
	OPT_FLAG(0, "cluster", struct tenants_args, cluster, 0,
		 "sim: a cluster: 32 leaves under 4 spines, 200 jobs training real models"
		 " arriving as a Poisson process; JCT per scheme and model"),
	OPT_REAL(0, "arrival-ms", "MS", struct tenants_args, arrival_ms, 0, 1e6, OPT_NODEF,
		 "sim: --cluster: mean gap between job arrivals (default 2.5)"),
	OPT_STR(0, "cdf", "FILE", struct tenants_args, cdf, 0,
		"sim: --cluster: write every job's JCT per scheme (scripts/cluster-plot.sh)"),
	OPT_END
};

const struct opt_cmd eval_tenants_cmd = {
	.opts = tenants_opts,
	.init = tenants_init,
	.size = sizeof(struct tenants_args),
	.about =
	"Multi-tenant in-network aggregation (FlexINA): jobs on the leaves of a\n"
	"tree, each leaf's memory a fraction of what its jobs' heads need, one\n"
	"bottleneck to the parameter servers. Live (the default, as root): a root and\n"
	"--leaves leaves in network namespaces, inaggd, every job's PS and workers\n"
	"running at once, the root's uplink shaped by tc, every result checked; --sim:\n"
	"a complete binary tree simulated. Selective INA makes a job INA while its\n"
	"head fits, else PS. Schemes: netpack-atp and netpack-a2tp (PS jobs\n"
	"never use switch memory), flexina (head/tail, lent heads, flexina windows),\n"
	"ht-atp (head/tail with atp windows) and flexina-notail. Every scheme runs on\n"
	"the same job mix of each round; the table gives the median and range over\n"
	"rounds of aggregation throughput (aggregated payload bytes per second), its\n"
	"ratio to netpack-atp, mean JCTs, memory utilisation, mark and collision\n"
	"rates and Jain's fairness. docs/cc.md describes the model.\n",
};

enum { M_TPUT, M_RATIO, M_JCT_INA, M_JCT_PS, M_UTIL, M_MARK, M_COLL, M_JAIN, M_UP, M_WASTE,
       M_FLUSH, M_RETX, M_ALL, M_MKSP, M_SUM, M_IDLE, M__N };

static const char *const m_key[M__N] = {
	"tput", "vs_netpack_atp", "jct_ina_ms", "jct_ps_ms", "util", "mark_rate", "coll_rate",
	"jain", "up", "waste", "flushes", "retx", "all", "makespan_ms", "sum", "idle_slots",
};

/*
 * The headline (issue 33): flexina over each NetPack baseline on the
 * throughput while every job contends and on the makespan (baseline's /
 * flexina's), the mean of the rounds' ratios with its bootstrap 95 %
 * interval; then sum (JCT-weighted), secondary.
 */
static void print_headline(double (*v)[M__N][MAX_ROUNDS], int rounds)
{
	static const int base[2] = { IA_SIM_NETPACK_ATP, IA_SIM_NETPACK_A2TP };
	static const int met[3] = { M_ALL, M_MKSP, M_SUM };
	static const char *const name[3] = { "all", "makespan", "sum" };
	double x[MAX_ROUNDS], mean, lo, hi;
	char key[64];

	out_obj_open("headline");
	for (int b = 0; b < 2; b++) {
		out_text("  flexina / %-12s", ia_sim_scheme_name(base[b]));
		for (int m = 0; m < 3; m++) {
			for (int k = 0; k < rounds; k++) {
				double f = v[IA_SIM_FLEXINA][met[m]][k], g = v[base[b]][met[m]][k];

				/* a makespan: shorter is better, so the baseline's over flexina's */
				x[k] = met[m] == M_MKSP ? (f > 0 ? g / f : 0) : (g > 0 ? f / g : 0);
			}
			mean = ia_boot_mean(x, rounds, &lo, &hi);
			snprintf(key, sizeof(key), "%s_vs_%s", name[m], ia_sim_scheme_name(base[b]));
			out_obj_open(key);
			if (m == 2)
				out_text("  (JCT-weighted sum");
			else
				out_text("  %s", name[m]);
			out_double("ratio", " %.2f", mean);
			out_double("lo", " [%.2f", lo);
			out_double("hi", "-%.2f]", hi);
			if (m == 2)
				out_text(")");
			out_obj_close();
		}
		out_text("\n");
	}
	out_obj_close();
}

static void print_point(double mem, double (*v)[M__N][MAX_ROUNDS], int rounds,
			const struct ia_sim_res *last)
{
	/* Columns of the table, in order; the JSON has every metric. */
	static const int col[] = { M_ALL, M_MKSP, M_SUM, M_RATIO, M_IDLE, M_JCT_INA, M_JCT_PS,
				   M_UTIL, M_MARK, M_COLL, M_JAIN, M_UP, M_WASTE, M_FLUSH, M_RETX };
	char key[40];
	double med, lo, hi;

	out_obj_open(NULL);
	out_double("mem", "memory %.2f of the heads' demand", mem);
	out_uint("ina", ": %llu INA", last->n_ina);
	out_uint("ps", " and %llu PS jobs", last->n_ps);
	out_uint("slots", " (last round), %llu leaf slots\n", last->slots);
	out_text("  medians of rounds; all: MB/s while every job contends; makespan; sum: JCT-"
		 "weighted MB/s; x atp: total / makespan over netpack-atp's; idle: slots no job"
		 " of the scheme can use\n");
	out_text("  %-15s %8s %8s %8s %6s %5s %8s %8s %6s %6s %6s %6s %6s %6s %6s %6s\n",
		 "scheme", "all", "mksp ms", "sum", "x atp", "idle", "JCT ina", "JCT ps", "util",
		 "marks", "colls", "jain", "up", "waste", "flush", "retx");
	out_arr_open("schemes");
	for (int s = 0; s < IA_SIM__COUNT; s++) {
		out_obj_open(NULL);
		out_str("scheme", "  %-15s", ia_sim_scheme_name(s));
		for (int m = 0; m < M__N; m++) {
			ia_median_range(v[s][m], rounds, &med, &lo, &hi);
			out_double(m_key[m], NULL, med);
			snprintf(key, sizeof(key), "%s_min", m_key[m]);
			out_double(key, NULL, lo);
			snprintf(key, sizeof(key), "%s_max", m_key[m]);
			out_double(key, NULL, hi);
		}
		for (size_t c = 0; c < ARRAY_SIZE(col); c++) {
			ia_median_range(v[s][col[c]], rounds, &med, &lo, &hi);
			switch (col[c]) {
			case M_ALL:
			case M_SUM:
				out_text(" %8.1f", med / 1e6);
				break;
			case M_MKSP:
			case M_JCT_INA:
			case M_JCT_PS:
				out_text(" %8.2f", med);
				break;
			case M_IDLE:
				/* the most of any round: it must be 0 for netpack-* */
				out_text(" %5.0f", hi);
				break;
			default:
				out_text(" %6.3f", med);
			}
		}
		out_text("\n");
		out_obj_close();
	}
	out_arr_close();
	print_headline(v, rounds);
	out_obj_close();
}

int cmd_eval_tenants(int argc, char **argv)
{
	static const double sweep[] = { 0.25, 0.5, 1.0 };
	double (*v)[M__N][MAX_ROUNDS] = NULL;
	double start = ia_now_seconds();
	bool given[ARRAY_SIZE(tenants_opts)] = { false };
	struct tenants_args a;
	struct ia_sim_res r = {};
	int nmem, ret = 0;
	uint64_t seed0;

	opt_defaults(&eval_tenants_cmd, &a);
	if (opt_parse(&eval_tenants_cmd, argv[0], argc, argv, &a, NULL, given))
		return 1;
	/* An option whose help says "live:" or "sim:" would be ignored by the other. */
	for (size_t i = 0; i < ARRAY_SIZE(given); i++) {
		const char *h = tenants_opts[i].help;

		if (!given[i] || !h)
			continue;
		if (a.sim && !strncmp(h, "live:", 5))
			return out_err("--%s: live only, --sim does not use it",
				       tenants_opts[i].name);
		if (!a.sim && !strncmp(h, "sim:", 4))
			return out_err("--%s: --sim only, the live run does not use it",
				       tenants_opts[i].name);
	}
	if (!a.sim) {
		for (size_t i = 0; i < ARRAY_SIZE(given); i++)
			if (given[i] && tenants_opts[i].name &&
			    !strcmp(tenants_opts[i].name, "other-repeats") && !a.keep.max_other)
				return out_err("--other-repeats: only with --max-other");
		if (a.quick) {
			a.lc.jobs = 4;
			a.lc.iters = 1;
			a.rounds = 2;
		}
		a.lc.cmin = a.lc.cmax / 3 ? a.lc.cmax / 3 : 1;
		a.lc.seed = a.c.seed;
		return tenants_live(&a, argv[0]);
	}
	if (a.cluster) {
		struct ia_sim_cfg cc;

		/* The cluster's own defaults; of the tree's options, those that apply. */
		ia_sim_cluster_defaults(&cc);
		for (size_t i = 0; i < ARRAY_SIZE(given); i++) {
			const char *n = tenants_opts[i].name;

			if (!given[i] || !n)
				continue;
			if (!strcmp(n, "jobs"))
				cc.jobs = a.c.jobs;
			else if (!strcmp(n, "link-rate"))
				cc.rate = a.c.rate;
			else if (!strcmp(n, "seed"))
				cc.seed = a.c.seed;
			else if (!strcmp(n, "window"))
				cc.window = a.c.window;
			else if (!strcmp(n, "depth") || !strcmp(n, "per-leaf") ||
				 !strcmp(n, "iters") || !strcmp(n, "quick"))
				return out_err("--%s: not with --cluster", n);
		}
		if (a.arrival_ms > 0)
			cc.arrival = a.arrival_ms / 1e3;
		return tenants_cluster(&a, &cc, argv[0]);
	}
	if (a.arrival_ms > 0 || a.cdf)
		return out_err("--arrival-ms, --cdf: only with --cluster");
	if (a.quick) {
		a.c.jobs = 32;
		a.c.iters = 2;
		a.rounds = 2;
	}
	nmem = a.mem > 0 ? 1 : 3;
	v = calloc(IA_SIM__COUNT, sizeof(*v));
	if (!v)
		return out_err("out of memory");
	seed0 = a.c.seed;
	out_begin();
	out_text("Simulation: %u jobs of %u-%u workers, %u-%u chunks, %u iterations, on the ",
		 a.c.jobs, a.c.wmin, a.c.wmax, a.c.cmin, a.c.cmax, a.c.iters);
	out_int("switches", "%lld-switch tree", (2LL << a.c.depth) - 1);
	out_uint("jobs", NULL, a.c.jobs);
	out_uint("per_leaf", " (%llu jobs per leaf)", a.c.per_leaf);
	out_double("link_rate", ", bottleneck %.3g messages/s", a.c.rate);
	out_uint("window", ", window %llu", a.c.window);
	out_int("rounds", ", median of %lld rounds\n", a.rounds);
	out_arr_open("points");
	for (int p = 0; p < nmem && !ret; p++) {
		a.c.mem = a.mem > 0 ? a.mem : sweep[p];
		for (int k = 0; k < a.rounds && !ret; k++) {
			double base = 0;

			a.c.seed = seed0 + k;
			/* Every scheme on this round's mix, in turn. */
			for (int s = 0; s < IA_SIM__COUNT && !ret; s++) {
				ret = ia_sim_run(&a.c, s, &r, NULL);
				if (s == IA_SIM_NETPACK_ATP)
					base = r.tput;
				v[s][M_TPUT][k] = r.tput;
				v[s][M_RATIO][k] = base > 0 ? r.tput / base : 0;
				v[s][M_JCT_INA][k] = r.jct_ina * 1e3;
				v[s][M_JCT_PS][k] = r.jct_ps * 1e3;
				v[s][M_UTIL][k] = r.util;
				v[s][M_MARK][k] = r.mark_rate;
				v[s][M_COLL][k] = r.coll_rate;
				v[s][M_JAIN][k] = r.jain;
				v[s][M_UP][k] = r.up;
				v[s][M_WASTE][k] = r.waste;
				v[s][M_FLUSH][k] = r.flushes;
				v[s][M_RETX][k] = r.retx_rate;
				v[s][M_ALL][k] = r.tput_all;
				v[s][M_MKSP][k] = r.makespan * 1e3;
				v[s][M_SUM][k] = r.sum;
				v[s][M_IDLE][k] = r.idle;
			}
		}
		if (!ret)
			print_point(a.c.mem, v, a.rounds, &r);
	}
	out_arr_close();
	free(v);
	if (ret)
		return out_err("%s: %s", argv[0], strerror(-ret));
	out_double("seconds", NULL, ia_now_seconds() - start);
	return out_end() ? 1 : 0;
}
