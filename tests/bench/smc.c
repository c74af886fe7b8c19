// SPDX-License-Identifier: GPL-2.0
/*
 * SMC solve time and peak memory on the paper's complete binary trees, beside
 * the straightforward O(n k^2)-per-check SMC measured in the same run.
 * Each solve runs in a forked child so its peak memory is its own.
 * Usage: smc [DEPTH:K ...]   (default 15:32 19:64)
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "place.h"

struct result {
	double seconds;
	long peak_kb;		/* child's peak resident set */
	long base_kb;		/* resident set before the solve (tree loaded) */
	int checks;
	double congestion;
	int nblue;
};

static uint64_t state = 1;

static uint64_t rnd(void)
{
	uint64_t z = (state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Complete binary tree, uniform leaf loads in [1,9], exponential rates 1.5^height. */
static struct ia_topo *tree(int depth)
{
	int n = (1 << (depth + 1)) - 1;
	struct ia_topo *t = ia_topo_new(n);
	char name[16];

	for (int v = 0; v < n; v++) {
		int d = 31 - __builtin_clz(v + 1);

		snprintf(name, sizeof(name), "s%d", v);
		t->sw[v].name = strdup(name);
		t->sw[v].parent = v ? (v - 1) / 2 : -1;
		t->sw[v].rate = ia_ratio_from_double(pow(1.5, depth - d));
		t->sw[v].load = d == depth ? 1 + rnd() % 9 : 0;
	}
	if (ia_topo_finalize(t, NULL, 0))
		exit(1);
	return t;
}

static long rss_kb(void)
{
	long pages = 0, resident = 0;
	FILE *f = fopen("/proc/self/statm", "r");

	if (f) {
		if (fscanf(f, "%ld %ld", &pages, &resident) != 2)
			resident = 0;
		fclose(f);
	}
	return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

static int run(const struct ia_topo *t, int k, enum ia_algo algo, struct result *r)
{
	int fd[2];
	pid_t pid;

	if (pipe(fd))
		return -1;
	pid = fork();
	if (pid == 0) {
		struct ia_problem pb = { .topo = t, .k = k };
		struct ia_placement p;
		struct rusage ru;

		close(fd[0]);
		ia_placement_init(&p, t->n);
		r->base_kb = rss_kb();
		if (ia_place(&pb, algo, &p))
			_exit(1);
		getrusage(RUSAGE_SELF, &ru);
		r->seconds = p.solve_seconds;
		r->peak_kb = ru.ru_maxrss;
		r->checks = p.checks;
		r->congestion = ia_ratio_double(p.congestion);
		r->nblue = p.nblue;
		if (write(fd[1], r, sizeof(*r)) != sizeof(*r))
			_exit(1);
		_exit(0);
	}
	close(fd[1]);
	ssize_t got = read(fd[0], r, sizeof(*r));
	int status;

	close(fd[0]);
	waitpid(pid, &status, 0);
	return got == sizeof(*r) && WIFEXITED(status) && !WEXITSTATUS(status) ? 0 : -1;
}

int main(int argc, char **argv)
{
	const char *defaults[] = { "15:32", "19:64" };
	int ncase = argc > 1 ? argc - 1 : 2;
	int bad = 0;

	printf("SMC on complete binary trees (uniform leaf loads 1..9, rates 1.5^height)\n");
	printf("%-6s %4s %8s | %-9s %9s %6s %9s %9s | %s\n", "depth", "k", "switches", "algo",
	       "seconds", "checks", "peak MB", "solve MB", "congestion");
	for (int i = 0; i < ncase; i++) {
		int depth, k;
		struct result fast, naive;

		if (sscanf(argc > 1 ? argv[i + 1] : defaults[i], "%d:%d", &depth, &k) != 2 ||
		    depth < 0 || depth > 22 || k < 0) {
			fprintf(stderr, "usage: %s [DEPTH:K ...]\n", argv[0]);
			return 2;
		}
		struct ia_topo *t = tree(depth);

		if (run(t, k, IA_ALGO_SMC, &fast) || run(t, k, IA_ALGO_SMC_NAIVE, &naive)) {
			fprintf(stderr, "solve failed\n");
			return 1;
		}
		const struct result *rs[] = { &fast, &naive };
		const char *names[] = { "smc", "smc-naive" };

		for (int j = 0; j < 2; j++)
			printf("%-6d %4d %8d | %-9s %9.3f %6d %9.1f %9.1f | %.6g (%d blue)\n", depth,
			       k, t->n, names[j], rs[j]->seconds, rs[j]->checks,
			       rs[j]->peak_kb / 1024.0, (rs[j]->peak_kb - rs[j]->base_kb) / 1024.0,
			       rs[j]->congestion, rs[j]->nblue);
		printf("%-6d %4d %8d | speedup %.1fx (naive / smc), per check %.1fx\n", depth, k,
		       t->n, naive.seconds / fast.seconds,
		       (naive.seconds / naive.checks) / (fast.seconds / fast.checks));
		if (fast.congestion != naive.congestion) {
			printf("MISMATCH: the two versions disagree\n");
			bad = 1;
		}
		ia_topo_free(t);
	}
	return bad;
}
