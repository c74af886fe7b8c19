// SPDX-License-Identifier: GPL-2.0
/* inagg eval tenants (live): each point's table of figures (eval_tenants_live.h). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "eval_tenants_live.h"

const char *const m_key[M__N] = {
	"tput", "vs_netpack_atp", "vs_netpack_a2tp", "tput_all", "all_vs_netpack_atp",
	"all_vs_netpack_a2tp", "tput_sum", "sum_vs_netpack_atp", "sum_vs_netpack_a2tp",
	"jct_ina_ms", "jct_ps_ms", "util", "mark_rate", "coll_rate", "jain", "lends", "lent", "up",
	"bypass", "retx", "timeouts", "waste", "srtt_ms", "cpu_other", "window_reports",
	"first_ms", "lent_start", "batch_ms", "flushes", "discards",
};

/* The text table's format of each figure (throughputs are in bytes/s, shown in MB/s). */
const char *const m_fmt[M__N] = {
	[M_RATIO] = " %6.2f", [M_RATIO2] = " %6.2f", [M_RALL] = " %6.2f", [M_RALL2] = " %6.2f",
	[M_RSUM] = " %6.2f", [M_RSUM2] = " %6.2f", [M_JCT_INA] = " %8.1f", [M_JCT_PS] = " %8.1f",
	[M_UTIL] = " %5.3f", [M_MARK] = " %5.3f", [M_COLL] = " %5.3f", [M_JAIN] = " %5.3f",
	[M_LENDS] = " %5.0f", [M_LENT] = " %5.1f", [M_UP] = " %5.2f", [M_BYPASS] = " %5.3f",
	[M_RETX] = " %5.2f", [M_TMO] = " %5.2f", [M_WASTE] = " %5.2f",
	[M_SRTT] = " %5.1f", [M_OTHER] = " %5.3f",	/* the rest: JSON only */
};

static unsigned long long sum_u(const uint32_t *v, int n)
{
	unsigned long long t = 0;

	for (int i = 0; i < n; i++)
		t += v[i];
	return t;
}

double live_median(const double *v, int n)
{
	double t[TENANTS_MAX_ROUNDS], med, lo, hi;

	memcpy(t, v, n * sizeof(*t));
	ia_median_range(t, n, &med, &lo, &hi);
	return med;
}

/*
 * Beside the table's ratios (each the median of the rounds' ratios, a
 * round's schemes interleaved, so slow drift cancels): the ratio of the
 * medians, each scheme's median throughput over netpack-atp's.
 */
static void print_ratios(const struct tenants_args *a, struct figs *f)
{
	static const int tp[3] = { M_TPUT, M_TALL, M_TSUM };
	static const char *const key[3] = { "ratio_of_medians", "all_ratio_of_medians",
					    "sum_ratio_of_medians" };

	out_text("  ratio of medians x netpack-atp (makespan / all / sum):");
	out_arr_open("ratio_of_medians");
	for (int s = 0; s < IA_SIM__COUNT; s++) {
		out_obj_open(NULL);
		out_str("scheme", " %s", ia_sim_scheme_name(s));
		for (int t = 0; t < 3; t++) {
			double b = live_median(f->v[IA_SIM_NETPACK_ATP][tp[t]], a->rounds);

			out_double(key[t], t ? "/%.3f" : " %.3f",
				   b > 0 ? live_median(f->v[s][tp[t]], a->rounds) / b : 0);
		}
		out_obj_close();
	}
	out_arr_close();
	out_text("\n");
}

/*
 * flexina over each baseline on each throughput: the mean of the rounds'
 * paired ratios and its bootstrap 95 % interval (issue 33; makespan and all
 * are the headline, sum the JCT-weighted secondary).
 */
static void print_intervals(const struct tenants_args *a, struct figs *f)
{
	static const int r[2][3] = { { M_RATIO, M_RALL, M_RSUM }, { M_RATIO2, M_RALL2, M_RSUM2 } };
	static const char *const name[3] = { "makespan", "all", "sum" };
	static const char *const base[2] = { "netpack_atp", "netpack_a2tp" };
	double mean, lo, hi;
	char key[48];

	out_obj_open("intervals");
	for (int b = 0; b < 2; b++) {
		out_text("  flexina / %-12s (mean of rounds, bootstrap 95 %%):",
			 ia_sim_scheme_name(b ? IA_SIM_NETPACK_A2TP : IA_SIM_NETPACK_ATP));
		for (int t = 0; t < 3; t++) {
			mean = ia_boot_mean(f->v[IA_SIM_FLEXINA][r[b][t]], a->rounds, &lo, &hi);
			snprintf(key, sizeof(key), "%s_vs_%s", name[t], base[b]);
			out_obj_open(key);
			if (t == 2)
				out_text("  (sum");
			else
				out_text("  %s", name[t]);
			out_double("ratio", " %.2f", mean);
			out_double("lo", " [%.2f", lo);
			out_double("hi", "-%.2f]", hi);
			out_obj_close();
		}
		out_text(")\n");
	}
	out_obj_close();
}

/*
 * Leaf slots no job can ever use (issue 33), from the last round's classes:
 * a leaf has floor(mem x its jobs x window) slots (eval_live_net.c's
 * topology), its INA jobs a whole window each; the rest is idle for the
 * schemes without tails, and for the tail schemes where no PS job is.
 */
static void print_idle(const struct tenants_args *a, const struct point *p, struct figs *f)
{
	const struct ia_live_cfg *c = &a->lc;
	uint64_t idle = 0, idle_tail = 0, slots = 0;

	for (uint32_t l = 0; l < c->leaves; l++) {
		uint32_t n = 0, ina = 0, ps = 0, s;

		for (uint32_t j = l; j < c->jobs; j += c->leaves) {
			n++;
			ina += !f->last.job[j].ps;
			ps += f->last.job[j].ps;
		}
		s = (uint32_t)floor(p->mem * n * c->window);
		slots += s;
		s = s > ina * c->window ? s - ina * c->window : 0;
		idle += s;
		idle_tail += ps ? 0 : s;
	}
	out_obj_open("idle_slots");
	out_uint("slots", "  leaf slots %llu", slots);
	out_uint("netpack", "; no job can use (last round): netpack-* and flexina-notail %llu",
		 idle);
	out_uint("tail", ", flexina and ht-atp %llu\n", idle_tail);
	out_obj_close();
}

/* Never silently: how many runs were run again, and the other work of those kept. */
static void print_repeats(const struct tenants_args *a, struct figs *f)
{
	double oth[IA_SIM__COUNT * TENANTS_MAX_ROUNDS], med, lo, hi;
	unsigned long long more = 0;
	int n = 0, again = 0, over = 0;

	for (int s = 0; s < IA_SIM__COUNT; s++) {
		for (int k = 0; k < a->rounds; k++) {
			oth[n++] = f->v[s][M_OTHER][k];
			again += f->rep[s][k] > 0;
			more += f->rep[s][k];
		}
		over += f->over[s];
	}
	ia_median_range(oth, n, &med, &lo, &hi);
	out_obj_open("repeats");
	out_double("max_other", NULL, a->keep.max_other);
	out_uint("other_repeats", NULL, a->keep.max_other > 0 ? a->keep.repeats : 0);
	if (a->keep.max_other > 0)
		out_text("  runs during which other work took more than %.2f of the CPU, run"
			 " again (at most %u times): ", a->keep.max_other, a->keep.repeats);
	else
		out_text("  runs run again (--max-other not given): ");
	out_int("runs_repeated", "%lld", again);
	out_int("runs", " of %lld runs", n);
	out_uint("runs_more", " (%llu runs more)", more);
	out_int("still_over", ", %lld kept still over it", over);
	out_double("kept_other", "; other work during the kept runs: median %.3f", med);
	out_double("kept_other_max", ", max %.3f\n", hi);
	out_obj_close();
}

void print_point(const struct tenants_args *a, const struct point *p, struct figs *f)
{
	static const int per_round[] = { M_TPUT, M_RATIO, M_RATIO2, M_TALL, M_RALL, M_RALL2,
					  M_TSUM, M_RSUM, M_RSUM2, M_OTHER };
	char key[48];
	double med, lo, hi;

	out_obj_open(NULL);
	out_double("mem", "memory %.2f of the heads' demand", p->mem);
	out_str("mix", ", mix %s", p->mix);
	out_uint("ina", " (%llu INA", f->last.n_ina);
	out_uint("ps", ", %llu PS)", f->last.n_ps);
	out_double("rate_mbit", ", bottleneck %g Mbit/s", p->rate);
	out_double("cross", ", cross traffic %.2f\n", p->cross);
	out_text("  %-15s %8s %-13s %6s %6s %8s %-13s %6s %6s %8s %-13s %6s %6s %8s %8s"
		 " %5s %5s %5s %5s %5s %5s %5s %5s %5s %5s %5s %5s %5s %3s %5s\n",
		 "scheme", "MB/s", "(range)", "x atp", "x a2tp", "all MB/s", "(range)", "x atp",
		 "x a2tp", "sum MB/s", "(range)", "x atp", "x a2tp", "JCT ina", "JCT ps", "util",
		 "marks", "colls", "jain", "lends", "lent", "up", "byp", "retx", "tmo", "waste", "srtt",
		 "other", "rep", "exact");
	out_arr_open("schemes");
	for (int s = 0; s < IA_SIM__COUNT; s++) {
		out_obj_open(NULL);
		out_str("scheme", "  %-15s", ia_sim_scheme_name(s));
		/* JSON: each round's throughputs, ratios and others' CPU, in round order (sorted below). */
		for (size_t i = 0; i < sizeof(per_round) / sizeof(per_round[0]); i++) {
			snprintf(key, sizeof(key), "%s_rounds", m_key[per_round[i]]);
			out_arr_open(key);
			for (int k = 0; k < a->rounds; k++)
				out_double(NULL, NULL, f->v[s][per_round[i]][k]);
			out_arr_close();
		}
		for (int m = 0; m < M__N; m++) {
			ia_median_range(f->v[s][m], a->rounds, &med, &lo, &hi);
			if (m == M_TPUT || m == M_TALL || m == M_TSUM) {
				out_double(m_key[m], NULL, med);
				snprintf(key, sizeof(key), "(%.2f-%.2f)", lo / 1e6, hi / 1e6);
				out_text(" %8.2f %-13s", med / 1e6, key);
			} else {
				out_double(m_key[m], m_fmt[m], med);
			}
			snprintf(key, sizeof(key), "%s_min", m_key[m]);
			out_double(key, NULL, lo);
			snprintf(key, sizeof(key), "%s_max", m_key[m]);
			out_double(key, NULL, hi);
		}
		out_arr_open("repeats_rounds");
		for (int k = 0; k < a->rounds; k++)
			out_uint(NULL, NULL, f->rep[s][k]);
		out_arr_close();
		out_uint("repeats", " %3llu", sum_u(f->rep[s], a->rounds));
		out_int("over_max_other", NULL, f->over[s]);
		out_int("exact_rounds", " %2lld", f->exact[s]);
		out_int("rounds", "/%lld\n", a->rounds);
		out_text("  %15s per job MB/s:", "");
		out_arr_open("jobs");
		for (uint32_t j = 0; j < a->lc.jobs; j++) {
			out_obj_open(NULL);
			ia_median_range(f->jt[s][j], a->rounds, &med, &lo, &hi);
			out_bool("ps", NULL, f->last.job[j].ps);
			out_double("tput", " %.2f", med);
			out_text("%s", f->last.job[j].ps ? "p" : "i");
			ia_median_range(f->jj[s][j], a->rounds, &med, &lo, &hi);
			out_double("jct_ms", NULL, med);
			out_obj_close();
		}
		out_arr_close();
		out_text("\n");
		out_obj_close();
	}
	out_arr_close();
	print_ratios(a, f);
	print_intervals(a, f);
	print_idle(a, p, f);
	print_repeats(a, f);
	out_obj_close();
}
