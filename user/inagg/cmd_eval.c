// SPDX-License-Identifier: GPL-2.0
/* inagg eval: the paper's Figs. 2-5 as tables, and PNG plots with gnuplot. */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "eval.h"

enum { FIG2 = 1, FIG3 = 2, FIG4 = 4, FIG5 = 8 };

struct progress {
	const char *what;
	double start;
	bool tty, shown;
};

static void progress(void *arg, long done, long total)
{
	struct progress *p = arg;

	if (!p->tty || ia_now_seconds() - p->start < 1.0)
		return;
	fprintf(stderr, "\rinagg eval: %s %ld/%ld", p->what, done, total);
	p->shown = true;
}

static void progress_end(struct progress *p)
{
	if (p->shown)
		fprintf(stderr, "\r%60s\r", "");
	p->shown = false;
}

int parse_list(const char *opt, const char *s, int *v, int *n)
{
	char *copy = strdup(s), *tok, *save = NULL;
	long x;
	int ret = 0;

	if (!copy)
		return out_err("out of memory");
	if (list_items_ok(opt, s)) {
		free(copy);
		return 1;
	}
	*n = 0;
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (*n == IA_EVAL_MAXPTS) {
			ret = out_err("%s: at most %d values", opt, IA_EVAL_MAXPTS);
			break;
		}
		ret = parse_long(opt, tok, 0, 1 << 20, &x);
		if (ret)
			break;
		v[(*n)++] = x;
	}
	free(copy);
	if (!ret && !*n)
		ret = out_err("%s: empty list", opt);
	return ret;
}

static const char *const metric_key[] = {
	[IA_EVAL_ABS] = "congestion",
	[IA_EVAL_VS_SMC] = "vs_smc",
	[IA_EVAL_VS_RED] = "vs_all_red",
};

/*
 * Prints one table: a row per x, a column per algorithm, each mean with its
 * standard deviation over the seeds ("mean ±sd"; JSON: name and name_sd).
 */
static void print_rows(const char *xkey, const int *xs, int npts, const char *const *names,
		       int ncol, double (*res)[IA_EVAL_NMETRIC], int (*idx)(int i, int c, void *),
		       void *ctx, int metric)
{
	char sd_key[64];
	int i, c;

	out_text("%9s", xkey);
	for (c = 0; c < ncol; c++)
		out_text(" %9s %-8s", names[c], "±sd");	/* "±" is two bytes, one column */
	out_text("\n");
	out_arr_open("rows");
	for (i = 0; i < npts; i++) {
		out_obj_open(NULL);
		out_int(xkey, "%9lld", xs[i]);
		for (c = 0; c < ncol; c++) {
			const double *row = res[idx(i, c, ctx)];

			snprintf(sd_key, sizeof(sd_key), "%s_sd", names[c]);
			out_double(names[c], metric == IA_EVAL_ABS ? " %9.3f" : " %9.4f", row[metric]);
			out_double(sd_key, metric == IA_EVAL_ABS ? " ±%-6.3f" : " ±%-6.4f",
				   row[IA_EVAL_SD(metric)]);
		}
		out_text("\n");
		out_obj_close();
	}
	out_arr_close();
}

struct kctx {
	const struct ia_eval_opts *o;
	int r, l;
};

static int k_idx(int i, int c, void *arg)
{
	struct kctx *k = arg;

	return ia_eval_k_idx(k->o, k->r, k->l, i, c);
}

struct mctx {
	int npts, r;
};

static int m_idx(int i, int c, void *arg)
{
	struct mctx *m = arg;

	return ia_eval_m_idx(m->npts, m->r, i, c);
}

static const char *algo_names[IA_EVAL_NALGO];
static const char *multi_names[IA_EVAL_NMULTI];

static void print_k(const struct ia_eval_opts *o, double (*res)[IA_EVAL_NMETRIC], int metric,
		    const char *title)
{
	struct kctx k = { .o = o };

	out_text("\n== %s\n", title);
	out_arr_open(metric_key[metric]);
	for (k.r = 0; k.r < IA_EVAL_NRATE; k.r++) {
		for (k.l = 0; k.l < IA_EVAL_NLOAD; k.l++) {
			out_obj_open(NULL);
			out_str("rate", "-- rate %s", ia_gen_rate_name(ia_eval_rates[k.r]));
			out_str("load", ", load %s\n", ia_gen_load_name(ia_eval_loads[k.l]));
			print_rows("k", o->ks, o->nk, algo_names, IA_EVAL_NALGO, res, k_idx, &k,
				   metric);
			out_obj_close();
		}
	}
	out_arr_close();
}

static void print_m(const char *xkey, const int *xs, int npts, double (*res)[IA_EVAL_NMETRIC],
		    int metric, const char *title)
{
	struct mctx m = { .npts = npts };

	out_text("\n== %s\n", title);
	out_arr_open(metric_key[metric]);
	for (m.r = 0; m.r < IA_EVAL_NRATE; m.r++) {
		out_obj_open(NULL);
		out_str("rate", "-- rate %s\n", ia_gen_rate_name(ia_eval_rates[m.r]));
		print_rows(xkey, xs, npts, multi_names, IA_EVAL_NMULTI, res, m_idx, &m, metric);
		out_obj_close();
	}
	out_arr_close();
}

/* What figs. 4-5 measure, by --metric. */
static const char *metric_label(enum ia_multi_metric m)
{
	/* No quote marks: gnuplot takes this between single quotes. */
	return m == IA_MULTI_SUM ? "sum of the workloads own congestion / all-red"
				 : "worst link of the summed load / all-red";
}

/* --plot: data files, a gnuplot script, and the PNGs when gnuplot exists. */

static bool in_path(const char *prog)
{
	const char *path = getenv("PATH");
	char buf[PATH_MAX];

	while (path && *path) {
		size_t len = strcspn(path, ":");

		snprintf(buf, sizeof(buf), "%.*s/%s", (int)len, path, prog);
		if (len && !access(buf, X_OK))
			return true;
		path += len + (path[len] == ':');
	}
	return false;
}

static FILE *open_in(const char *dir, const char *name)
{
	char path[PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (!f)
		out_err("%s: %s", path, strerror(errno));
	return f;
}

/*
 * One .dat: x, then per algorithm its mean and standard deviation; and its
 * plot in the script, the deviations as error bars.
 */
static int plot_one(FILE *gp, const char *dir, const char *name, const char *title,
		    const char *xlabel, const char *ylabel, bool logx, const int *xs, int npts,
		    const char *const *names, int ncol, double (*res)[IA_EVAL_NMETRIC],
		    int (*idx)(int, int, void *), void *ctx, int metric)
{
	FILE *f;
	int i, c;
	char dat[256];

	snprintf(dat, sizeof(dat), "%s.dat", name);
	f = open_in(dir, dat);
	if (!f)
		return 1;
	fprintf(f, "# %s", xlabel);
	for (c = 0; c < ncol; c++)
		fprintf(f, " %s %s_sd", names[c], names[c]);
	fprintf(f, "\n");
	for (i = 0; i < npts; i++) {
		fprintf(f, "%d", xs[i]);
		for (c = 0; c < ncol; c++)
			fprintf(f, " %.6g %.6g", res[idx(i, c, ctx)][metric],
				res[idx(i, c, ctx)][IA_EVAL_SD(metric)]);
		fprintf(f, "\n");
	}
	fclose(f);
	fprintf(gp, "set output '%s.png'\nset title '%s'\nset xlabel '%s'\nset ylabel '%s'\n",
		name, title, xlabel, ylabel);
	fprintf(gp, logx ? "set logscale x 2\n" : "unset logscale x\n");
	fprintf(gp, "plot ");
	for (c = 0; c < ncol; c++)
		fprintf(gp, "%s'%s' using 1:%d:%d with yerrorlines title '%s'", c ? ", " : "", dat,
			2 * c + 2, 2 * c + 3, names[c]);
	fprintf(gp, "\n");
	return 0;
}

/* dir, made if missing; an error if it cannot be, or is not a folder. */
static int make_dir(const char *dir)
{
	struct stat st;

	if (mkdir(dir, 0755) && errno != EEXIST)
		return out_err("%s: %s", dir, strerror(errno));
	if (stat(dir, &st))
		return out_err("%s: %s", dir, strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return out_err("%s: %s", dir, strerror(ENOTDIR));
	return 0;
}

static int write_plots(const char *dir, int figs, const struct ia_eval_opts *o,
		       double (*kres)[IA_EVAL_NMETRIC], double (*wres)[IA_EVAL_NMETRIC],
		       double (*cres)[IA_EVAL_NMETRIC])
{
	char name[64], title[128];
	struct kctx k = { .o = o };
	struct mctx m;
	FILE *gp;
	int ret = 0;

	if (make_dir(dir))
		return 1;
	gp = open_in(dir, "plots.gp");
	if (!gp)
		return 1;
	fprintf(gp, "# inagg eval plots: gnuplot plots.gp (run in this folder)\n"
		    "set terminal pngcairo size 800,560\nset key outside right\nset grid\n");
	for (k.r = 0; k.r < IA_EVAL_NRATE && (figs & (FIG2 | FIG3)); k.r++) {
		for (k.l = 0; k.l < IA_EVAL_NLOAD; k.l++) {
			const char *rn = ia_gen_rate_name(ia_eval_rates[k.r]);
			const char *ln = ia_gen_load_name(ia_eval_loads[k.l]);

			if (figs & FIG2) {
				snprintf(name, sizeof(name), "fig2-%s-%s", rn, ln);
				snprintf(title, sizeof(title), "Fig. 2: rates %s, loads %s", rn, ln);
				fprintf(gp, "set logscale y\n");
				ret |= plot_one(gp, dir, name, title, "k", "network congestion", true,
						o->ks, o->nk, algo_names, IA_EVAL_NALGO, kres, k_idx,
						&k, IA_EVAL_ABS);
				fprintf(gp, "unset logscale y\n");
				snprintf(name, sizeof(name), "fig2-red-%s-%s", rn, ln);
				snprintf(title, sizeof(title),
					 "Fig. 2 normalised: rates %s, loads %s", rn, ln);
				ret |= plot_one(gp, dir, name, title, "k", "congestion / all-red", true,
						o->ks, o->nk, algo_names, IA_EVAL_NALGO, kres, k_idx,
						&k, IA_EVAL_VS_RED);
			}
			if (figs & FIG3) {
				snprintf(name, sizeof(name), "fig3-%s-%s", rn, ln);
				snprintf(title, sizeof(title), "Fig. 3: rates %s, loads %s", rn, ln);
				ret |= plot_one(gp, dir, name, title, "k", "congestion / SMC", true,
						o->ks, o->nk, algo_names, IA_EVAL_NALGO, kres, k_idx,
						&k, IA_EVAL_VS_SMC);
			}
		}
	}
	for (m.r = 0; m.r < IA_EVAL_NRATE; m.r++) {
		const char *rn = ia_gen_rate_name(ia_eval_rates[m.r]);

		if (figs & FIG4) {
			m.npts = o->nnw;
			snprintf(name, sizeof(name), "fig4-%s", rn);
			snprintf(title, sizeof(title), "Fig. 4: rates %s, capacity %d, k=%d", rn,
				 o->multi_cap, o->multi_k);
			ret |= plot_one(gp, dir, name, title, "workloads", metric_label(o->metric),
					true, o->nws, o->nnw, multi_names, IA_EVAL_NMULTI, wres,
					m_idx, &m, IA_EVAL_VS_RED);
		}
		if (figs & FIG5) {
			m.npts = o->ncap;
			snprintf(name, sizeof(name), "fig5-%s", rn);
			snprintf(title, sizeof(title), "Fig. 5: rates %s, %d workloads, k=%d", rn,
				 o->cap_nw, o->multi_k);
			ret |= plot_one(gp, dir, name, title, "capacity", metric_label(o->metric),
					true, o->caps, o->ncap, multi_names, IA_EVAL_NMULTI, cres,
					m_idx, &m, IA_EVAL_VS_RED);
		}
	}
	fclose(gp);
	if (ret)
		return 1;
	if (!in_path("gnuplot")) {
		out_warn("gnuplot not found: wrote %s/*.dat and %s/plots.gp, no PNG "
			 "(apt-get install gnuplot-nox)", dir, dir);
		return 0;
	}
	if (run_in(dir, "gnuplot", "plots.gp"))
		return out_err("gnuplot failed on %s/plots.gp", dir);
	return 0;
}

struct eval_args {
	struct ia_eval_opts e;
	const char *plot;
};

/* The eval options around one of their fields (container_of). */
#define EVAL_OF(p, field) \
	((struct ia_eval_opts *)((char *)(p) - offsetof(struct ia_eval_opts, field)))
#define EVAL_OFC(p, field) \
	((const struct ia_eval_opts *)((const char *)(p) - offsetof(struct ia_eval_opts, field)))

static int parse_ks(const char *opt, const char *arg, void *dst)
{
	struct ia_eval_opts *e = EVAL_OF(dst, ks);

	return parse_list(opt, arg, e->ks, &e->nk);
}

static int parse_nws(const char *opt, const char *arg, void *dst)
{
	struct ia_eval_opts *e = EVAL_OF(dst, nws);

	return parse_list(opt, arg, e->nws, &e->nnw);
}

static int parse_caps(const char *opt, const char *arg, void *dst)
{
	struct ia_eval_opts *e = EVAL_OF(dst, caps);

	return parse_list(opt, arg, e->caps, &e->ncap);
}

static void show_list(const int *v, int n, char *buf, size_t len)
{
	buf[0] = '\0';
	for (int i = 0; i < n; i++)
		snprintf(buf + strlen(buf), len - strlen(buf), "%s%d", i ? "," : "", v[i]);
}

static void show_ks(const void *dst, char *buf, size_t len)
{
	show_list(EVAL_OFC(dst, ks)->ks, EVAL_OFC(dst, ks)->nk, buf, len);
}

static void show_nws(const void *dst, char *buf, size_t len)
{
	show_list(EVAL_OFC(dst, nws)->nws, EVAL_OFC(dst, nws)->nnw, buf, len);
}

static void show_caps(const void *dst, char *buf, size_t len)
{
	show_list(EVAL_OFC(dst, caps)->caps, EVAL_OFC(dst, caps)->ncap, buf, len);
}

static const char *metric_name(int m)
{
	return ia_multi_metric_name(m);
}

static void eval_init(void *args)
{
	ia_eval_defaults(&((struct eval_args *)args)->e);
}

static const struct opt eval_opts[] = {
	OPT_INT('d', "depth", "D", struct eval_args, e.depth, 0, 20, 0,
		"tree depth (2^(D+1)-1 switches)"),
	OPT_INT(0, "seeds", "N", struct eval_args, e.seeds, 1, 1000000, 0,
		"instances per point"),
	OPT_INT('s', "seed", "S", struct eval_args, e.seed, 0, OPT_NOMAX, 0, "first seed"),
	OPT_FUNC('k', "k", "LIST", struct eval_args, e.ks, parse_ks, show_ks, 0,
		 "k values (budgets) of figs. 2-3"),
	OPT_FUNC(0, "nworkloads", "LIST", struct eval_args, e.nws, parse_nws, show_nws, 0,
		 "workload counts of fig. 4"),
	OPT_FUNC('c', "capacity", "LIST", struct eval_args, e.caps, parse_caps, show_caps, 0,
		 "capacities of fig. 5"),
	OPT_INT(0, "multi-k", "K", struct eval_args, e.multi_k, 0, INT_MAX, 0,
		"budget per workload in figs. 4-5"),
	OPT_INT(0, "multi-capacity", "C", struct eval_args, e.multi_cap, 0, INT_MAX, 0,
		"capacity in fig. 4"),
	OPT_INT(0, "cap-workloads", "N", struct eval_args, e.cap_nw, 1, 1 << 16, 0,
		"workloads in fig. 5"),
	OPT_ENUMF(0, "metric", "METRIC", struct eval_args, e.metric, metric_name, IA_MULTI__COUNT, 0,
		  "score of figs. 4-5: sum, the sum over workloads of each one's own "
		  "congestion (the paper's); link, the worst link once every workload's "
		  "messages are added (concurrent jobs)"),
	OPT_STR(0, "plot", "DIR", struct eval_args, plot, 0,
		"also write DIR/*.dat, DIR/plots.gp and PNGs (gnuplot)"),
	OPT_END
};

const struct opt_cmd eval_cmd = {
	.opts = eval_opts,
	.init = eval_init,
	.size = sizeof(struct eval_args),
	.args = "[FIG...]",
	.about =
	"Runs the paper's evaluation (Sec. V) on complete binary trees with leaf loads\n"
	"uniform in [1,9] or power-law in " OPT_STR_OF(IA_GEN_POWERLAW_MIN) ".."
	OPT_STR_OF(IA_GEN_POWERLAW_MAX) " (mean 5) and rates const, linear or\n"
	"exp (see 'inagg topo gen -h'); every number is a mean over seeds with its\n"
	"standard deviation (±), ratios are taken per instance and then averaged. FIG:\n"
	"  fig2   mean congestion vs k for smc, top, max, level, all-red, all-blue,\n"
	"         and the same normalised to all-red\n"
	"  fig3   congestion vs k normalised to SMC\n"
	"  fig4   total congestion (--metric) of online workloads (each uniform or\n"
	"         power-law with probability 1/2), normalised to all-red, for smc, top,\n"
	"         max, level and smc-aware (beyond the paper)\n"
	"  fig5   the same with --cap-workloads workloads vs capacity\n"
	"  all    all of them (default)\n",
	.notes = "Progress goes to stderr when a run takes over a second on a terminal.\n",
};

int cmd_eval(int argc, char **argv)
{
	double (*kres)[IA_EVAL_NMETRIC] = NULL, (*wres)[IA_EVAL_NMETRIC] = NULL;
	double (*cres)[IA_EVAL_NMETRIC] = NULL;
	struct progress pr = { .tty = isatty(2) };
	struct eval_args a;
	struct ia_eval_opts o;
	const char *plot;
	int i, figs = 0, err, ret = 1, first;

	opt_defaults(&eval_cmd, &a);
	for (i = 0; i < IA_EVAL_NALGO; i++)
		algo_names[i] = ia_algo_name(ia_eval_algos[i]);
	for (i = 0; i < IA_EVAL_NMULTI; i++)
		multi_names[i] = ia_eval_multi_name(i);
	if (opt_parse(&eval_cmd, argv[0], argc, argv, &a, &first, NULL))
		return 1;
	o = a.e;
	plot = a.plot;
	for (i = first; i < argc; i++) {
		if (!strcmp(argv[i], "fig2"))
			figs |= FIG2;
		else if (!strcmp(argv[i], "fig3"))
			figs |= FIG3;
		else if (!strcmp(argv[i], "fig4"))
			figs |= FIG4;
		else if (!strcmp(argv[i], "fig5"))
			figs |= FIG5;
		else if (!strcmp(argv[i], "all"))
			figs |= FIG2 | FIG3 | FIG4 | FIG5;
		else
			return out_err("%s: unknown figure '%s' (fig2, fig3, fig4, fig5, all)",
				       argv[0], argv[i]);
	}
	if (!figs)
		figs = FIG2 | FIG3 | FIG4 | FIG5;
	/* The folder first: a run should not print its tables and then fail on it. */
	if (plot && make_dir(plot))
		return 1;

	kres = calloc((size_t)IA_EVAL_NRATE * IA_EVAL_NLOAD * o.nk * IA_EVAL_NALGO, sizeof(*kres));
	wres = calloc((size_t)IA_EVAL_NRATE * o.nnw * IA_EVAL_NMULTI, sizeof(*wres));
	cres = calloc((size_t)IA_EVAL_NRATE * o.ncap * IA_EVAL_NMULTI, sizeof(*cres));
	if (!kres || !wres || !cres) {
		out_err("out of memory");
		goto out;
	}
	o.progress = progress;
	o.arg = &pr;
	pr.start = ia_now_seconds();
	if (figs & (FIG2 | FIG3)) {
		pr.what = "figs. 2-3";
		err = ia_eval_k(&o, kres);
		progress_end(&pr);
		if (err) {
			out_err("eval: figs. 2-3: %s", strerror(-err));
			goto out;
		}
	}
	if (figs & FIG4) {
		pr.what = "fig. 4";
		err = ia_eval_workloads(&o, wres);
		progress_end(&pr);
		if (err) {
			out_err("eval: fig. 4: %s", strerror(-err));
			goto out;
		}
	}
	if (figs & FIG5) {
		pr.what = "fig. 5";
		err = ia_eval_capacity(&o, cres);
		progress_end(&pr);
		if (err) {
			out_err("eval: fig. 5: %s", strerror(-err));
			goto out;
		}
	}

	out_begin();
	out_int("depth", "complete binary tree of depth %lld", o.depth);
	out_int("switches", " (%lld switches)", (2LL << o.depth) - 1);
	out_int("seeds", ", mean of %lld seeds", o.seeds);
	out_uint("seed", " from seed %llu\n", (unsigned long long)o.seed);
	out_double("seconds", NULL, ia_now_seconds() - pr.start);
	if (figs & FIG2) {
		out_obj_open("fig2");
		print_k(&o, kres, IA_EVAL_ABS, "Fig. 2: mean network congestion vs k");
		print_k(&o, kres, IA_EVAL_VS_RED, "Fig. 2: congestion vs k normalised to all-red");
		out_obj_close();
	}
	if (figs & FIG3) {
		out_obj_open("fig3");
		print_k(&o, kres, IA_EVAL_VS_SMC, "Fig. 3: congestion vs k normalised to SMC");
		out_obj_close();
	}
	if (figs & FIG4) {
		out_obj_open("fig4");
		out_int("k", NULL, o.multi_k);
		out_int("capacity", NULL, o.multi_cap);
		out_str("metric", NULL, ia_multi_metric_name(o.metric));
		print_m("workloads", o.nws, o.nnw, wres, IA_EVAL_VS_RED, o.metric == IA_MULTI_SUM ?
			"Fig. 4: total congestion vs workloads, normalised to all-red (sum of each workload's)" :
			"Fig. 4: total congestion vs workloads, normalised to all-red (worst link of the summed load)");
		print_m("workloads", o.nws, o.nnw, wres, IA_EVAL_ABS,
			"Fig. 4: mean total congestion vs workloads");
		out_obj_close();
	}
	if (figs & FIG5) {
		out_obj_open("fig5");
		out_int("k", NULL, o.multi_k);
		out_int("workloads", NULL, o.cap_nw);
		out_str("metric", NULL, ia_multi_metric_name(o.metric));
		print_m("capacity", o.caps, o.ncap, cres, IA_EVAL_VS_RED, o.metric == IA_MULTI_SUM ?
			"Fig. 5: total congestion vs capacity, normalised to all-red (sum of each workload's)" :
			"Fig. 5: total congestion vs capacity, normalised to all-red (worst link of the summed load)");
		out_obj_close();
	}
	if (plot && write_plots(plot, figs, &o, kres, wres, cres))
		goto out;
	if (plot)
		out_str("plots", "\nplots in %s\n", plot);
	ret = out_end();
out:
	free(kres);
	free(wres);
	free(cres);
	return ret;
}
