// SPDX-License-Identifier: GPL-2.0
/*
 * inagg eval tenants --plot (live): the points' throughputs and PS JCTs,
 * median and range per scheme, as gnuplot data, its script and, with
 * gnuplot, the PNGs (docs/cc.md "Live").
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "eval_tenants.h"

static FILE *open_in(const char *dir, const char *name)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return fopen(path, "w");
}

/* --plot: one row per point, median low high per scheme, and the gnuplot script. */
int tenants_write_plot(const char *dir, const struct point *p, int np,
		       double (*sum)[IA_SIM__COUNT][3][3])
{
	FILE *d, *gp;

	mkdir(dir, 0755);
	d = open_in(dir, "tenants.dat");
	gp = open_in(dir, "tenants.gp");
	if (!d || !gp) {
		if (d)
			fclose(d);
		if (gp)
			fclose(gp);
		return out_err("%s: %s", dir, strerror(errno));
	}
	fprintf(d, "# point, then per scheme: MB/s median low high, PS JCT ms median low high,"
		" summed jobs' MB/s median low high\n");
	for (int i = 0; i < np; i++) {
		fprintf(d, "\"m%.2f %s%s%s\"", p[i].mem, p[i].mix, p[i].cross > 0 ? " x" : "",
			p[i].rate > p[0].rate ? " fast" : "");
		for (int s = 0; s < IA_SIM__COUNT; s++)
			fprintf(d, " %.4f %.4f %.4f", sum[i][s][0][0] / 1e6, sum[i][s][0][1] / 1e6,
				sum[i][s][0][2] / 1e6);
		for (int s = 0; s < IA_SIM__COUNT; s++)
			fprintf(d, " %.2f %.2f %.2f", sum[i][s][1][0], sum[i][s][1][1],
				sum[i][s][1][2]);
		for (int s = 0; s < IA_SIM__COUNT; s++)
			fprintf(d, " %.4f %.4f %.4f", sum[i][s][2][0] / 1e6, sum[i][s][2][1] / 1e6,
				sum[i][s][2][2] / 1e6);
		fprintf(d, "\n");
	}
	fclose(d);
	fprintf(gp, "# inagg eval tenants: gnuplot tenants.gp (run in this folder)\n"
		    "set terminal pngcairo size 1000,500\n"
		    "set style data histograms\n"
		    "set style histogram errorbars gap 1 lw 1\n"
		    "set style fill solid 0.6 border -1\n"
		    "set key top left\nset xtics rotate by -30\nset grid ytics\nset yrange [0:*]\n"
		    "set output 'tenants-tput.png'\n"
		    "set title 'aggregation throughput, median and range of rounds'\n"
		    "set ylabel 'MB/s'\n"
		    "plot for [s=0:%d] 'tenants.dat' using (column(2+3*s)):(column(3+3*s)):"
		    "(column(4+3*s)):xtic(1) title word('%s %s %s %s %s', s+1)\n"
		    "set output 'tenants-jct-ps.png'\n"
		    "set title 'PS jobs mean completion time, median and range of rounds'\n"
		    "set ylabel 'ms'\n"
		    "plot for [s=0:%d] 'tenants.dat' using (column(%d+3*s)):(column(%d+3*s)):"
		    "(column(%d+3*s)):xtic(1) title word('%s %s %s %s %s', s+1)\n"
		    "set output 'tenants-tput-sum.png'\n"
		    "set title 'summed jobs'' aggregation throughput (bytes / JCT), median and range"
		    " of rounds'\n"
		    "set ylabel 'MB/s'\n"
		    "plot for [s=0:%d] 'tenants.dat' using (column(%d+3*s)):(column(%d+3*s)):"
		    "(column(%d+3*s)):xtic(1) title word('%s %s %s %s %s', s+1)\n",
		IA_SIM__COUNT - 1, ia_sim_scheme_name(0), ia_sim_scheme_name(1),
		ia_sim_scheme_name(2), ia_sim_scheme_name(3), ia_sim_scheme_name(4),
		IA_SIM__COUNT - 1, 2 + 3 * IA_SIM__COUNT, 3 + 3 * IA_SIM__COUNT,
		4 + 3 * IA_SIM__COUNT, ia_sim_scheme_name(0), ia_sim_scheme_name(1),
		ia_sim_scheme_name(2), ia_sim_scheme_name(3), ia_sim_scheme_name(4),
		IA_SIM__COUNT - 1, 2 + 6 * IA_SIM__COUNT, 3 + 6 * IA_SIM__COUNT,
		4 + 6 * IA_SIM__COUNT, ia_sim_scheme_name(0), ia_sim_scheme_name(1),
		ia_sim_scheme_name(2), ia_sim_scheme_name(3), ia_sim_scheme_name(4));
	fclose(gp);
	if (run_in(dir, "gnuplot", "tenants.gp"))
		out_warn("gnuplot failed: the data and script are in %s", dir);
	return 0;
}
