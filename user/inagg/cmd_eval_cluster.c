// SPDX-License-Identifier: GPL-2.0
/*
 * inagg eval tenants --sim --cluster: the cluster simulation (issue 33
 * point 5, docs/cc.md "Cluster simulation"): every scheme on the same
 * Poisson-arriving jobs of each round, JCT per scheme and per model, the
 * ratios to the NetPack baselines with bootstrap 95 % intervals over rounds,
 * and (--cdf) every job's JCT for the CDF plot.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "eval_tenants.h"

#define MAX_ROUNDS	TENANTS_MAX_ROUNDS

enum { C_JCT, C_P95, C_MKSP, C_PS, C_PROMO, C_IDLE, C_FREE, C_PEAK, C_MARK, C_COLL, C_UP,
       C_RETX, C_MODEL, C__N = C_MODEL + IA_SIM_MODELS };

static const char *const c_key[C_MODEL] = {
	"jct_ms", "jct_p95_ms", "makespan_ms", "ps_at_arrival", "promoted", "idle_slot_s",
	"free", "mem_peak", "mark_rate", "coll_rate", "up", "retx",
};

struct cluster_run {
	double v[IA_SIM__COUNT][C__N][MAX_ROUNDS];
	double *jct[IA_SIM__COUNT];	/* every job's JCT of every round, ms */
	struct ia_sim_job *jobs;
};

/* The p-quantile of v[0..n) (sorted in place). */
static double quantile(double *v, size_t n, double p)
{
	size_t i;

	qsort(v, n, sizeof(*v), ia_cmp_double);
	i = (size_t)(p * (n - 1) + 0.5);
	return v[i < n ? i : n - 1];
}

static int run_round(const struct ia_sim_cfg *cfg, struct cluster_run *cr, int k)
{
	const uint32_t n = cfg->jobs;
	struct ia_sim_res r;
	double *tmp = calloc(n, sizeof(*tmp));
	int err = tmp ? 0 : -ENOMEM;

	for (int s = 0; s < IA_SIM__COUNT && !err; s++) {
		double (*v)[MAX_ROUNDS] = cr->v[s];
		uint32_t ps = 0, promo = 0;

		err = ia_sim_run(cfg, s, &r, cr->jobs);
		if (err)
			break;
		for (uint32_t i = 0; i < n; i++) {
			tmp[i] = cr->jobs[i].jct * 1e3;
			cr->jct[s][(size_t)k * n + i] = tmp[i];
			ps += cr->jobs[i].ps || cr->jobs[i].promoted;
			promo += cr->jobs[i].promoted;
		}
		v[C_JCT][k] = r.jct_mean * 1e3;
		v[C_P95][k] = quantile(tmp, n, 0.95);
		v[C_MKSP][k] = r.makespan * 1e3;
		v[C_PS][k] = ps;
		v[C_PROMO][k] = promo;
		v[C_IDLE][k] = r.idle_time;
		v[C_FREE][k] = r.free_frac;
		v[C_PEAK][k] = r.mem_peak;
		v[C_MARK][k] = r.mark_rate;
		v[C_COLL][k] = r.coll_rate;
		v[C_UP][k] = r.up;
		v[C_RETX][k] = r.retx_rate;
		for (int m = 0; m < IA_SIM_MODELS; m++)
			v[C_MODEL + m][k] = r.jct_model[m] * 1e3;
	}
	free(tmp);
	return err;
}

/* Baseline's over flexina's (a JCT: shorter is better), mean of rounds and its interval. */
static void print_ratio(const char *key, const char *label, struct cluster_run *cr, int base,
			int c, int rounds)
{
	double x[MAX_ROUNDS], mean, lo, hi;

	for (int k = 0; k < rounds; k++) {
		double f = cr->v[IA_SIM_FLEXINA][c][k];

		x[k] = f > 0 ? cr->v[base][c][k] / f : 0;
	}
	mean = ia_boot_mean(x, rounds, &lo, &hi);
	out_obj_open(key);
	out_text("  %s", label);
	out_double("ratio", " %.2f", mean);
	out_double("lo", " [%.2f", lo);
	out_double("hi", "-%.2f]", hi);
	out_obj_close();
}

static void print_point(const struct ia_sim_cfg *cfg, struct cluster_run *cr, int rounds)
{
	static const int base[2] = { IA_SIM_NETPACK_ATP, IA_SIM_NETPACK_A2TP };
	double med, lo, hi, tmp[MAX_ROUNDS];
	char key[64];

	out_obj_open(NULL);
	out_double("mem", "memory %.2f", cfg->mem);
	out_text(" (leaf %u, spine %u slots)", cfg->leaf_slots, cfg->spine_slots);
	out_text(": medians of rounds; JCT, p95: ms; x atp: netpack-atp's mean JCT over the"
		 " scheme's; PS: jobs without a head at arrival, promo: of them given one later;"
		 " idle: slot-seconds a PS job could have had a head in; free: slot-time in no"
		 " head; peak: the most of a switch's slots in heads\n");
	out_text("  %-15s %8s %8s %8s %6s %5s %5s %6s %5s %5s %6s %6s %6s %6s\n", "scheme",
		 "JCT", "p95", "mksp", "x atp", "PS", "promo", "idle", "free", "peak", "marks",
		 "colls", "up", "retx");
	out_arr_open("schemes");
	for (int s = 0; s < IA_SIM__COUNT; s++) {
		out_obj_open(NULL);
		out_str("scheme", "  %-15s", ia_sim_scheme_name(s));
		for (int c = 0; c < C__N; c++) {
			memcpy(tmp, cr->v[s][c], rounds * sizeof(double));
			ia_median_range(tmp, rounds, &med, &lo, &hi);
			if (c < C_MODEL)
				snprintf(key, sizeof(key), "%s", c_key[c]);
			else
				snprintf(key, sizeof(key), "jct_%s_ms", ia_sim_models[c - C_MODEL].name);
			out_double(key, NULL, med);
			snprintf(key + strlen(key), sizeof(key) - strlen(key), "_max");
			out_double(key, NULL, hi);
			if (c == C_JCT || c == C_P95 || c == C_MKSP)
				out_text(" %8.1f", med);
		}
		/* the row's remaining columns, in the header's order */
		for (int k = 0; k < rounds; k++)
			tmp[k] = cr->v[s][C_JCT][k] > 0 ?
				 cr->v[IA_SIM_NETPACK_ATP][C_JCT][k] / cr->v[s][C_JCT][k] : 0;
		ia_median_range(tmp, rounds, &med, &lo, &hi);
		out_double("vs_netpack_atp", " %6.2f", med);
		for (int c = C_PS; c <= C_RETX; c++) {
			memcpy(tmp, cr->v[s][c], rounds * sizeof(double));
			ia_median_range(tmp, rounds, &med, &lo, &hi);
			if (c == C_PS || c == C_PROMO)
				out_text(" %5.0f", med);
			else if (c == C_IDLE)
				out_text(" %6.3f", hi);	/* the most of any round: 0 for netpack-* */
			else if (c == C_FREE || c == C_PEAK)
				out_text(" %5.2f", med);
			else
				out_text(" %6.3f", med);
		}
		out_text("\n");
		out_obj_close();
	}
	out_arr_close();
	out_text("  mean JCT per model, ms (median of rounds):\n  %-15s", "scheme");
	for (int m = 0; m < IA_SIM_MODELS; m++)
		out_text(" %10s", ia_sim_models[m].name);
	out_text("\n");
	for (int s = 0; s < IA_SIM__COUNT; s++) {
		out_text("  %-15s", ia_sim_scheme_name(s));
		for (int m = 0; m < IA_SIM_MODELS; m++) {
			memcpy(tmp, cr->v[s][C_MODEL + m], rounds * sizeof(double));
			ia_median_range(tmp, rounds, &med, &lo, &hi);
			out_text(" %10.1f", med);
		}
		out_text("\n");
	}
	out_obj_open("headline");
	for (int b = 0; b < 2; b++) {
		out_text("  flexina / %-12s", ia_sim_scheme_name(base[b]));
		snprintf(key, sizeof(key), "jct_vs_%s", ia_sim_scheme_name(base[b]));
		print_ratio(key, "mean JCT", cr, base[b], C_JCT, rounds);
		snprintf(key, sizeof(key), "p95_vs_%s", ia_sim_scheme_name(base[b]));
		print_ratio(key, "p95", cr, base[b], C_P95, rounds);
		snprintf(key, sizeof(key), "makespan_vs_%s", ia_sim_scheme_name(base[b]));
		print_ratio(key, "makespan", cr, base[b], C_MKSP, rounds);
		out_text("\n   per model:");
		for (int m = 0; m < IA_SIM_MODELS; m++) {
			snprintf(key, sizeof(key), "jct_%s_vs_%s", ia_sim_models[m].name,
				 ia_sim_scheme_name(base[b]));
			print_ratio(key, ia_sim_models[m].name, cr, base[b], C_MODEL + m, rounds);
		}
		out_text("\n");
	}
	out_obj_close();
	out_obj_close();
}

/* Every job's JCT per scheme, sorted, with its empirical CDF: one gnuplot index each. */
static int write_cdf(FILE *f, const struct ia_sim_cfg *cfg, struct cluster_run *cr, int rounds)
{
	size_t n = (size_t)cfg->jobs * rounds;

	for (int s = 0; s < IA_SIM__COUNT; s++) {
		qsort(cr->jct[s], n, sizeof(double), ia_cmp_double);
		fprintf(f, "# mem %.2f scheme %s\n", cfg->mem, ia_sim_scheme_name(s));
		for (size_t i = 0; i < n; i++)
			fprintf(f, "%.3f %.5f\n", cr->jct[s][i], (double)(i + 1) / n);
		fprintf(f, "\n\n");
	}
	return ferror(f) ? -EIO : 0;
}

int tenants_cluster(const struct tenants_args *a, struct ia_sim_cfg *cfg, const char *argv0)
{
	static const double sweep[] = { 0.25, 0.5 };
	int np = a->mem > 0 ? 1 : 2, err = 0;
	double start = ia_now_seconds();
	struct cluster_run *cr = calloc(1, sizeof(*cr));
	uint64_t seed0 = cfg->seed;
	FILE *f = NULL;

	if (!cr)
		return out_err("out of memory");
	cr->jobs = calloc(cfg->jobs, sizeof(*cr->jobs));
	for (int s = 0; s < IA_SIM__COUNT; s++)
		cr->jct[s] = calloc((size_t)cfg->jobs * a->rounds, sizeof(double));
	for (int s = 0; s < IA_SIM__COUNT; s++)
		err = err ?: (cr->jct[s] && cr->jobs ? 0 : -ENOMEM);
	if (!err && a->cdf && !(f = fopen(a->cdf, "w")))
		err = -errno;
	out_begin();
	out_text("Cluster simulation: ");
	out_uint("jobs", "%llu jobs", cfg->jobs);
	out_double("arrival_ms", " arriving as a Poisson process (mean gap %.2f ms)",
		   cfg->arrival * 1e3);
	out_text(", %u-%u workers (%u per leaf), %u-%u iterations, gradients of", cfg->wmin,
		 cfg->wmax, cfg->hosts, cfg->imin, cfg->imax);
	for (int m = 0; m < IA_SIM_MODELS; m++)
		out_text(" %s %.1fM", ia_sim_models[m].name, ia_sim_models[m].params / 1e6);
	out_uint("scale", " parameters / %llu", cfg->scale);
	out_uint("leaves", ";\n  %llu leaves", cfg->leaves);
	out_uint("spines", " under %llu spines", cfg->spines);
	out_double("leaf_rate", ", uplinks: leaves' %.3g", cfg->leaf_rate);
	out_double("link_rate", ", spines' %.3g messages/s", cfg->rate);
	out_int("rounds", "; %lld rounds\n", a->rounds);
	out_arr_open("points");
	for (int p = 0; p < np && !err; p++) {
		cfg->mem = a->mem > 0 ? a->mem : sweep[p];
		/* as ia_sim_cluster_build() sizes them, for the table */
		cfg->leaf_slots = (uint32_t)(cfg->mem * cfg->window * cfg->per_leaf);
		cfg->spine_slots = cfg->leaf_slots * (cfg->leaves / cfg->spines) / 3;
		for (int k = 0; k < a->rounds && !err; k++) {
			cfg->seed = seed0 + k;
			err = run_round(cfg, cr, k);
		}
		if (!err)
			print_point(cfg, cr, a->rounds);
		if (!err && f)
			err = write_cdf(f, cfg, cr, a->rounds);
	}
	out_arr_close();
	if (f && fclose(f) && !err)
		err = -errno;
	for (int s = 0; s < IA_SIM__COUNT; s++)
		free(cr->jct[s]);
	free(cr->jobs);
	free(cr);
	if (err)
		return out_err("%s: %s", argv0, strerror(-err));
	out_double("seconds", "  %.1f s\n", ia_now_seconds() - start);
	return out_end() ? 1 : 0;
}
