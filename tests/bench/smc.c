// SPDX-License-Identifier: GPL-2.0
/*
 * SMC solve time and peak memory on the paper's complete binary trees, beside
 * the straightforward O(n k^2)-per-check SMC measured in the same run; then
 * what a user sees: `inagg -j topo place` on a 1,048,575-switch topology file
 * (parse, check, solve, output), beside the solver alone on the same file,
 * in interleaved rounds (median and range).
 * Each solve runs in a forked child so its peak memory is its own.
 * Usage: smc [DEPTH:K ...]   (default 15:32 19:64)
 */
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "gen.h"
#include "place.h"

#define E2E_DEPTH 19
#define E2E_K 64
#define E2E_ROUNDS 5

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

/*
 * Solves in a forked child, so that its peak memory is its own: on t, or on
 * the topology file path loaded first (not timed) when t is NULL.
 */
static int run(const struct ia_topo *t, const char *path, int k, enum ia_algo algo,
	       struct result *r)
{
	int fd[2], status;
	ssize_t got;
	pid_t pid;

	if (pipe(fd))
		return -1;
	pid = fork();
	if (pid == 0) {
		struct ia_topo *loaded = NULL;
		struct ia_placement p;
		struct ia_problem pb;
		struct rusage ru;

		close(fd[0]);
		if (!t && ia_topo_load(path, &loaded, NULL, 0))
			_exit(1);
		pb = (struct ia_problem){ .topo = t ? t : loaded, .k = k };
		if (ia_placement_init(&p, pb.topo->n))
			_exit(1);
		r->base_kb = rss_kb();
		if (ia_place(&pb, algo, &p))
			_exit(1);
		getrusage(RUSAGE_SELF, &ru);
		r->seconds = p.solve_seconds;
		r->peak_kb = ru.ru_maxrss;
		r->checks = p.checks;
		r->congestion = ia_ratio_double(p.congestion);
		r->nblue = p.nblue;
		_exit(write(fd[1], r, sizeof(*r)) == sizeof(*r) ? 0 : 1);
	}
	close(fd[1]);
	got = read(fd[0], r, sizeof(*r));
	close(fd[0]);
	waitpid(pid, &status, 0);
	return got == sizeof(*r) && WIFEXITED(status) && !WEXITSTATUS(status) ? 0 : -1;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* `inagg -j topo place` end to end: wall time and the child's peak memory. */
static int place_cli(const char *cli, const char *path, const char *out, int k, double *secs,
		     long *peak_kb)
{
	char kbuf[16];
	struct rusage ru;
	double start = now();
	int status, fd;
	pid_t pid;

	snprintf(kbuf, sizeof(kbuf), "%d", k);
	pid = fork();
	if (pid == 0) {
		fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (fd < 0 || dup2(fd, 1) < 0)
			_exit(127);
		execl(cli, cli, "-j", "topo", "place", "-t", path, "-k", kbuf, (char *)NULL);
		_exit(127);
	}
	if (pid < 0 || wait4(pid, &status, 0, &ru) != pid)
		return -1;
	*secs = now() - start;
	*peak_kb = ru.ru_maxrss;
	return WIFEXITED(status) && !WEXITSTATUS(status) ? 0 : -1;
}

/* The "congestion" of the output's first level, as a double. */
static double output_congestion(const char *out)
{
	char buf[4096] = "", *p;
	FILE *f = fopen(out, "r");
	size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;

	if (f)
		fclose(f);
	buf[n] = '\0';
	p = strstr(buf, "\"congestion\": ");
	return p ? strtod(p + strlen("\"congestion\": "), NULL) : NAN;
}

static void median_range(double *v, int n, double *med, double *lo, double *hi)
{
	qsort(v, n, sizeof(*v), cmp_double);
	*med = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
	*lo = v[0];
	*hi = v[n - 1];
}

/*
 * The user's path on a generated file beside the solver alone: interleaved
 * rounds so that both see the same machine load.
 */
static int end_to_end(void)
{
	char self[PATH_MAX], dir[PATH_MAX], cli[PATH_MAX + 16], path[PATH_MAX + 32],
		out[PATH_MAX + 32];
	double e2e[E2E_ROUNDS], solve[E2E_ROUNDS], med[2], lo[2], hi[2], ocong = NAN;
	long peak = 0, solve_peak = 0;
	struct ia_gen_opts g;
	struct ia_topo *t;
	struct result r;
	struct stat st;
	ssize_t n;
	FILE *f;

	/* build/tests/bench/smc -> build/ */
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	self[n > 0 ? n : 0] = '\0';
	strcpy(dir, self);
	for (int i = 0; i < 3; i++)
		*(strrchr(dir, '/') ? strrchr(dir, '/') : dir) = '\0';
	snprintf(cli, sizeof(cli), "%s/inagg", dir);
	snprintf(path, sizeof(path), "%s/bench-topo-%d.json", dir, E2E_DEPTH);
	snprintf(out, sizeof(out), "%s/bench-place-%d.json", dir, E2E_DEPTH);

	ia_gen_defaults(&g);
	g.depth = E2E_DEPTH;
	g.rate = IA_GEN_RATE_EXP;
	if (ia_gen_tree(&g, &t))
		return -1;
	f = fopen(path, "w");
	if (!f || ia_topo_write_json(t, f) || fclose(f))
		return -1;
	stat(path, &st);
	printf("\ninagg -j topo place -t FILE -k %d: FILE a complete binary tree of depth %d\n"
	       "(%d switches, %.1f MB, uniform leaf loads, rates 1.5^height, gen seed 1),\n"
	       "end to end (parse, check, solve, output) beside the solver alone on the same file;\n"
	       "%d interleaved rounds, median [min, max]\n",
	       E2E_K, E2E_DEPTH, t->n, st.st_size / 1e6, E2E_ROUNDS);
	ia_topo_free(t);
	for (int i = 0; i < E2E_ROUNDS; i++) {
		if (place_cli(cli, path, out, E2E_K, &e2e[i], &peak) ||
		    run(NULL, path, E2E_K, IA_ALGO_SMC, &r)) {
			fprintf(stderr, "end to end: %s failed\n", cli);
			return -1;
		}
		solve[i] = r.seconds;
		solve_peak = r.peak_kb;
		ocong = output_congestion(out);
	}
	median_range(e2e, E2E_ROUNDS, &med[0], &lo[0], &hi[0]);
	median_range(solve, E2E_ROUNDS, &med[1], &lo[1], &hi[1]);
	printf("%-22s %7.3f s [%.3f, %.3f]  peak %6.1f MB\n", "end to end (inagg)", med[0], lo[0],
	       hi[0], peak / 1024.0);
	printf("%-22s %7.3f s [%.3f, %.3f]  peak %6.1f MB (process, file loaded)\n",
	       "solver alone (smc)", med[1], lo[1], hi[1], solve_peak / 1024.0);
	printf("end to end / solver %.2fx; target: under 2 s and 1024 MB end to end: %s\n",
	       med[0] / med[1], med[0] < 2 && peak < 1024 * 1024 ? "met" : "NOT met");
	unlink(out);
	unlink(path);
	if (ocong != r.congestion) {
		printf("MISMATCH: inagg printed congestion %.17g, the solver found %.17g\n", ocong,
		       r.congestion);
		return 1;
	}
	return 0;
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

		if (run(t, NULL, k, IA_ALGO_SMC, &fast) ||
		    run(t, NULL, k, IA_ALGO_SMC_NAIVE, &naive)) {
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
	if (argc == 1) {
		int ret = end_to_end();

		if (ret < 0)
			return 1;
		bad |= ret;
	}
	return bad;
}
