// SPDX-License-Identifier: GPL-2.0
/*
 * inagg eval tenants (live): every scheme of issue 12 on the same job mixes
 * in network namespaces, interleaved rounds, median and range
 * (user/inagg/eval/eval_live.h, docs/cc.md "Live").
 */
#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "cli.h"
#include "inagg/wire.h"
#include "eval_tenants.h"
#include "eval_tenants_live.h"

#define MAX_POINTS	16
#define CROSS_SWEEP	0.3	/* cross traffic of the sweep's congested points */
#define NOCONG_RATE	100	/* the no-congestion point: the bottleneck this many times faster */


static int mix_parse(const char *s, uint32_t *ps_per_ina)
{
	if (!strcmp(s, "1:1"))
		*ps_per_ina = 1;
	else if (!strcmp(s, "1:3"))
		*ps_per_ina = 3;
	else if (!strcmp(s, "all"))
		*ps_per_ina = 0;
	else
		return -EINVAL;
	return 0;
}

static int build_points(const struct tenants_args *a, struct point *p)
{
	static const double mems[] = { 0.25, 0.5 };
	static const char *const mixes[] = { "1:1", "1:3" };
	double rate = a->lc.rate_mbit;
	int n = 0;

	if (a->quick || a->mem > 0 || a->mix || a->cross >= 0 || a->no_congestion) {
		p[0] = (struct point){ .mem = a->mem > 0 ? a->mem : 0.5,
				       .cross = a->cross > 0 ? a->cross : 0, .rate = rate,
				       .mix = a->mix ? a->mix : "1:3" };
		if (a->no_congestion)
			p[0].rate *= NOCONG_RATE;
		return mix_parse(p[0].mix, &p[0].ps_per_ina) ? -EINVAL : 1;
	}
	/* The sweep: grouped by memory and rate, so that each network is built once. */
	for (int m = 0; m < 2; m++)
		for (int x = 0; x < 2; x++)
			for (int c = 0; c < 2; c++)
				p[n++] = (struct point){ .mem = mems[m], .cross = c ? CROSS_SWEEP : 0,
							 .rate = rate, .mix = mixes[x],
							 .ps_per_ina = x ? 3 : 1 };
	p[n++] = (struct point){ .mem = 1, .rate = rate, .mix = "all" };
	p[n++] = (struct point){ .mem = 1, .cross = CROSS_SWEEP, .rate = rate, .mix = "all" };
	p[n++] = (struct point){ .mem = 1, .rate = rate * NOCONG_RATE, .mix = "all" };
	return n;
}

/*
 * --compare: the simulator on each round's live mix (the same jobs, leaves,
 * workers, chunks and compute times; docs/cc-live.md "Simulation against
 * live"), each scheme's throughput over netpack-atp's, median of rounds,
 * side by side with live; they agree when every ratio is within
 * COMPARE_TOL. The messages the PSs merged and got in vain per chunk and
 * the tails' collision rate are printed beside: where the two part.
 */
#define COMPARE_TOL	0.25

static int compare(const struct tenants_args *a, const struct point *p, struct figs *f)
{
	enum { S_RATIO, S_UP, S_WASTE, S_COLL, S_FLUSH, S_DISCARD, S_RETX, S_TMO, S_FIRST, S__N };
	static const int live_m[S__N] = { M_RATIO, M_UP, M_WASTE, M_COLL, M_FLUSH, M_DISCARD,
					  M_RETX, M_TMO, M_FIRST };
	const double frame = IA_FRAME_LEN(IA_CHUNK_DEFAULT);	/* bytes the tbf counts */
	double v[IA_SIM__COUNT][S__N][TENANTS_MAX_ROUNDS], med[IA_SIM__COUNT], worst = 0, fl, dc;
	struct ia_sim_mixjob mix[IA_LIVE_MAX_JOBS];
	struct ia_live_mixjob lm[IA_LIVE_MAX_JOBS];
	struct ia_live_cfg lc = a->lc;
	struct ia_sim_cfg c;
	struct ia_sim_res r;
	bool agree = true;

	ia_sim_defaults(&c);
	c.jobs = a->lc.jobs;
	c.depth = 0;
	while ((1u << c.depth) < a->lc.leaves)
		c.depth++;
	c.per_leaf = (a->lc.jobs + a->lc.leaves - 1) / a->lc.leaves;
	c.iters = a->lc.iters;
	c.window = a->lc.window;
	c.mem = p->mem;
	c.rate = p->rate * 1e6 / 8 / frame;
	c.thresh = a->lc.mark_kb * 1024 / frame > 1 ? a->lc.mark_kb * 1024 / frame : 1;
	c.buffer = c.rate > 1024 ? c.rate : 1024;	/* tbf latency 1 s */
	c.rtt = 100e-6;		/* namespaces, the kernel forwarding upward */
	c.rto = a->lc.timeout_ms / 1e3;	/* the workers' shortest timer */
	c.lend_period = IA_LIVE_SAMPLE_MS / 1e3;	/* inaggd -m */
	/* What the daemon had lent when the workers started (the runs' median): set-up time. */
	for (int s = 0; s < IA_SIM__COUNT; s++)
		med[s] = live_median(f->v[s][M_LENT0], a->rounds);
	c.lent_start = (uint32_t)lround(live_median(med, IA_SIM__COUNT));
	/* How the live workers took their results in (the runs' median): the host's scheduling. */
	for (int s = 0; s < IA_SIM__COUNT; s++)
		med[s] = live_median(f->v[s][M_BATCH], a->rounds);
	c.wake = live_median(med, IA_SIM__COUNT) / 1e3;
	/*
	 * Of the partials a claim or an eviction took out, the share dropped
	 * because the frame had no room to carry them (the tail schemes' runs).
	 */
	fl = live_median(f->v[IA_SIM_FLEXINA][M_FLUSH], a->rounds) +
	     live_median(f->v[IA_SIM_HT_ATP][M_FLUSH], a->rounds);
	dc = live_median(f->v[IA_SIM_FLEXINA][M_DISCARD], a->rounds) +
	     live_median(f->v[IA_SIM_HT_ATP][M_DISCARD], a->rounds);
	c.noroom = fl + dc > 0 ? dc / (fl + dc) : 0;
	c.mix = mix;
	for (int k = 0; k < a->rounds; k++) {
		double base = 0;

		lc.seed = a->lc.seed + k;
		ia_live_mix(&lc, lm);
		for (uint32_t i = 0; i < lc.jobs; i++) {
			mix[i] = (struct ia_sim_mixjob){ .leaf = lm[i].leaf,
							 .workers = lm[i].workers,
							 .chunks = lm[i].chunks,
							 .ps = lm[i].want_ps };
			for (uint32_t w = 0; w < lm[i].workers; w++)
				mix[i].gap[w] = lm[i].gap_ms[w] / 1e3;
		}
		c.seed = lc.seed;
		for (int s = 0; s < IA_SIM__COUNT; s++) {
			int ret = ia_sim_run(&c, s, &r, NULL);

			if (ret)
				return out_err("--compare: simulation: %s", strerror(-ret));
			if (s == IA_SIM_NETPACK_ATP)
				base = r.tput;
			v[s][S_RATIO][k] = base > 0 ? r.tput / base : 0;
			v[s][S_UP][k] = r.up;
			v[s][S_WASTE][k] = r.waste;
			v[s][S_COLL][k] = r.coll_rate;
			v[s][S_FLUSH][k] = r.flushes;
			v[s][S_DISCARD][k] = r.discards;
			v[s][S_RETX][k] = r.retx_rate;
			v[s][S_TMO][k] = r.tmo_rate;
			v[s][S_FIRST][k] = r.first * 1e3;
		}
	}
	out_obj_open("compare");
	out_uint("lent_start", "  the live runs' medians, given to the simulator: head slots"
		 " each INA job had lent at the start %llu,", c.lent_start);
	out_double("wake_ms", " a worker's result batches %.3f ms apart,", c.wake * 1e3);
	out_double("noroom", " partials taken out dropped for want of room %.2f\n", c.noroom);
	out_double("tolerance", "  sim vs live on each round's mix, median of rounds; throughput /"
		   " netpack-atp's, tolerance %.0f %%; live/sim: messages the PSs merged (up)"
		   " and got in vain per chunk, tail collisions per try, PS partials flushed"
		   " (dropped) per PS chunk, resends (of them by timer) per result, ms to a job's"
		   " first result:\n", COMPARE_TOL * 100);
	out_arr_open("schemes");
	for (int s = 0; s < IA_SIM__COUNT; s++) {
		double sim[S__N], live[S__N], d;

		for (int m = 0; m < S__N; m++) {
			sim[m] = live_median(v[s][m], a->rounds);
			live[m] = live_median(f->v[s][live_m[m]], a->rounds);
		}
		d = sim[S_RATIO] > 0 ? fabs(live[S_RATIO] - sim[S_RATIO]) / sim[S_RATIO] : 1;
		worst = d > worst ? d : worst;
		agree &= d <= COMPARE_TOL;
		out_obj_open(NULL);
		out_str("scheme", "    %-15s", ia_sim_scheme_name(s));
		out_double("live", " live %5.2f", live[S_RATIO]);
		out_double("sim", "  sim %5.2f", sim[S_RATIO]);
		out_double("diff", "  diff %5.1f %%", d * 100);
		out_double("up_live", "  up %4.2f", live[S_UP]);
		out_double("up_sim", "/%4.2f", sim[S_UP]);
		out_double("waste_live", "  waste %4.2f", live[S_WASTE]);
		out_double("waste_sim", "/%4.2f", sim[S_WASTE]);
		out_double("colls_live", "  colls %5.3f", live[S_COLL]);
		out_double("colls_sim", "/%5.3f", sim[S_COLL]);
		out_double("flush_live", "  flush %4.2f", live[S_FLUSH]);
		out_double("flush_sim", "/%4.2f", sim[S_FLUSH]);
		out_double("discard_live", " (dropped %4.2f", live[S_DISCARD]);
		out_double("discard_sim", "/%4.2f)", sim[S_DISCARD]);
		out_double("retx_live", "  retx %4.2f", live[S_RETX]);
		out_double("retx_sim", "/%4.2f", sim[S_RETX]);
		out_double("tmo_live", " (%4.2f", live[S_TMO]);
		out_double("tmo_sim", "/%4.2f)", sim[S_TMO]);
		out_double("first_live", "  first %4.1f", live[S_FIRST]);
		out_double("first_sim", "/%4.1f\n", sim[S_FIRST]);
		out_obj_close();
	}
	out_arr_close();
	out_double("worst", "    worst %.1f %%", worst * 100);
	out_bool("agree", ": %s\n", agree);
	out_obj_close();
	return 0;
}

/* SIGINT or SIGTERM: the network and its daemon do not outlive us (children die with us). */
static struct ia_live *live_net;
static pid_t live_pid;

/*
 * A working folder of its own, made with mkdtemp under the root-owned
 * runtime folder. /tmp/inagg-tenants-PID was guessable: another user who
 * made it first (with symlinks in it) had root write the topology, log,
 * state and ledger where they pointed, or planted a topology whose site
 * ran commands over ssh (issue 31).
 */
static int work_dir(char *dir, size_t len)
{
	struct stat st;

	if (mkdir(IA_RUN_DIR, 0755) && errno != EEXIST)
		return out_err("%s: %s", IA_RUN_DIR, strerror(errno));
	/* Only its owner (root) may make anything in it: not a link, not writable by others. */
	if (lstat(IA_RUN_DIR, &st) || !S_ISDIR(st.st_mode) || st.st_uid != geteuid() ||
	    (st.st_mode & 022))
		return out_err("%s: not a folder of uid %u writable by it alone; not used",
			       IA_RUN_DIR, (unsigned int)geteuid());
	snprintf(dir, len, "%s/tenants-XXXXXX", IA_RUN_DIR);
	if (!mkdtemp(dir))
		return out_err("%s: %s", dir, strerror(errno));
	return 0;
}

static void on_signal(int sig)
{
	/* Its forked endpoints get the signal too (timeout(1) signals the group): only we clean. */
	if (live_net && getpid() == live_pid)
		ia_live_down(live_net);
	_exit(128 + sig);
}

static int run_one(void *L, enum ia_sim_scheme s, struct ia_live_res *r, char *err,
		   size_t errlen)
{
	return ia_live_run(L, s, r, err, errlen);
}

/*
 * Every scheme on round k's mix, in an order that rotates with k; a run that
 * other work slowed, again (--max-other).
 */
static int run_round(struct ia_live *L, const struct tenants_args *a, int k, struct figs *f)
{
	static const int tp[3] = { M_TPUT, M_TALL, M_TSUM };
	double base[3][2] = { { 0 } };
	struct ia_live_res r;
	char err[256];
	int ret;

	for (int i = 0; i < IA_SIM__COUNT; i++) {
		int s = (i + k) % IA_SIM__COUNT;

		ret = ia_live_run_kept(&a->keep, run_one, L, s, &r, &f->rep[s][k], err,
				       sizeof(err));
		if (ret)
			return out_err("live run (%s): %s", ia_sim_scheme_name(s), err);
		f->over[s] += a->keep.max_other > 0 && r.cpu_other > a->keep.max_other;
		f->v[s][M_TPUT][k] = r.tput;
		f->v[s][M_TALL][k] = r.tput_all;
		f->v[s][M_TSUM][k] = r.tput_sum;
		f->v[s][M_RETX][k] = r.retx_rate;
		f->v[s][M_TMO][k] = r.tmo_rate;
		f->v[s][M_WASTE][k] = r.waste;
		f->v[s][M_SRTT][k] = r.srtt_ms;
		f->v[s][M_JCT_INA][k] = r.jct_ina * 1e3;
		f->v[s][M_JCT_PS][k] = r.jct_ps * 1e3;
		f->v[s][M_UTIL][k] = r.util;
		f->v[s][M_MARK][k] = r.mark_rate;
		f->v[s][M_COLL][k] = r.coll_rate;
		f->v[s][M_JAIN][k] = r.jain;
		f->v[s][M_LENDS][k] = r.lends;
		f->v[s][M_LENT][k] = r.lent_mean;
		f->v[s][M_UP][k] = r.up;
		f->v[s][M_BYPASS][k] = r.bypass;
		f->v[s][M_OTHER][k] = r.cpu_other;
		f->v[s][M_REPORTS][k] = r.reports;
		f->v[s][M_FIRST][k] = r.first * 1e3;
		f->v[s][M_LENT0][k] = r.lent_start;
		f->v[s][M_BATCH][k] = r.batch * 1e3;
		f->v[s][M_FLUSH][k] = r.flushes;
		f->v[s][M_DISCARD][k] = r.discards;
		f->exact[s] += r.exact;
		for (uint32_t j = 0; j < a->lc.jobs; j++) {
			f->jt[s][j][k] = r.job[j].jct > 0 ? r.job[j].bytes / r.job[j].jct / 1e6 : 0;
			f->jj[s][j][k] = r.job[j].jct * 1e3;
			if (!r.job[j].exact && !f->nbad++)
				f->first_bad = r.job[j];
		}
		for (int t = 0; t < 3; t++) {
			if (s == IA_SIM_NETPACK_ATP)
				base[t][0] = f->v[s][tp[t]][k];
			if (s == IA_SIM_NETPACK_A2TP)
				base[t][1] = f->v[s][tp[t]][k];
		}
		f->last = r;
	}
	/* Each throughput's ratios follow it: M_TPUT + 1, + 2 and so on. */
	for (int s = 0; s < IA_SIM__COUNT; s++)
		for (int t = 0; t < 3; t++)
			for (int b = 0; b < 2; b++)
				f->v[s][tp[t] + 1 + b][k] = base[t][b] > 0 ?
					f->v[s][tp[t]][k] / base[t][b] : 0;
	return 0;
}

/* The run's folder, removed entry by entry (no shell). */
static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	return remove(path);
}

int tenants_live(struct tenants_args *a, const char *argv0)
{
	static double sum[MAX_POINTS][IA_SIM__COUNT][3][3];
	struct point p[MAX_POINTS];
	char exe[PATH_MAX], dir[64];
	double start = ia_now_seconds();
	struct ia_live L = { 0 };
	struct figs *f;
	ssize_t len;
	int np, ret = 0, bad = 0;

	np = build_points(a, p);
	if (np < 0)
		return out_err("%s: --mix: 1:1, 1:3 or all", argv0);
	len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (len <= 0)
		return out_err("%s: cannot find its own binary", argv0);
	exe[len] = '\0';
	*strrchr(exe, '/') = '\0';
	a->lc.bindir = exe;
	if (work_dir(dir, sizeof(dir)))
		return 1;
	a->lc.workdir = dir;
	f = calloc(1, sizeof(*f));
	if (!f)
		return out_err("out of memory");
	live_net = &L;
	live_pid = getpid();
	/* A long sweep's table line by line, also into a file (and up to a signal). */
	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGHUP, on_signal);
	out_begin();
	out_text("Live: %u jobs of %u-%u workers on %u leaves, %u-%u chunks, %u iterations, ",
		 a->lc.jobs, a->lc.wmin, a->lc.wmax, a->lc.leaves, a->lc.cmin, a->lc.cmax,
		 a->lc.iters);
	out_uint("jobs", NULL, a->lc.jobs);
	out_uint("window", "window %llu", a->lc.window);
	out_uint("mark_kb", ", marks above %llu KiB", a->lc.mark_kb);
	out_uint("timeout_ms", ", timers >= %llu ms", a->lc.timeout_ms);
	out_int("rounds", ", median of %lld rounds\n", a->rounds);
	out_arr_open("points");
	for (int i = 0; i < np && !ret; i++) {
		char err[256];

		if (!L.up || p[i].mem != L.c.mem || p[i].rate != L.c.rate_mbit) {
			ia_live_down(&L);
			a->lc.mem = p[i].mem;
			a->lc.rate_mbit = p[i].rate;
			ret = ia_live_up(&L, &a->lc, err, sizeof(err));
			if (ret) {
				out_err("%s: network: %s", argv0, err);
				break;
			}
		}
		L.c.ps_per_ina = p[i].ps_per_ina;
		L.c.cross = p[i].cross;
		memset(f, 0, sizeof(*f));
		for (int k = 0; k < a->rounds && !ret; k++) {
			L.c.seed = a->lc.seed + k;
			ret = run_round(&L, a, k, f);
		}
		if (ret)
			break;
		print_point(a, &p[i], f);
		if (a->compare && compare(a, &p[i], f)) {
			ret = 1;
			break;
		}
		for (int s = 0; s < IA_SIM__COUNT; s++) {
			ia_median_range(f->v[s][M_TPUT], a->rounds, &sum[i][s][0][0], &sum[i][s][0][1],
					&sum[i][s][0][2]);
			ia_median_range(f->v[s][M_JCT_PS], a->rounds, &sum[i][s][1][0],
					&sum[i][s][1][1], &sum[i][s][1][2]);
			ia_median_range(f->v[s][M_TSUM], a->rounds, &sum[i][s][2][0],
					&sum[i][s][2][1], &sum[i][s][2][2]);
		}
		if (f->nbad) {
			bad += f->nbad;
			out_warn("%d job runs not exact, the first: %s", f->nbad, f->first_bad.err);
		}
	}
	ia_live_down(&L);
	out_arr_close();
	/* The daemon's log stays when something failed. */
	if (!ret && nftw(dir, rm_entry, 8, FTW_DEPTH | FTW_PHYS))
		out_warn("could not remove %s", dir);
	free(f);
	if (ret)
		return 1;
	if (a->plot && tenants_write_plot(a->plot, p, np, sum))
		return 1;
	out_bool("exact", NULL, !bad);
	out_text(bad ? "NOT EXACT: see above\n" : "every job's result exact\n");
	out_double("seconds", NULL, ia_now_seconds() - start);
	return out_end() || bad ? 1 : 0;
}
