// SPDX-License-Identifier: GPL-2.0
/*
 * The differential fuzzer (tests/model/fuzz.h) in make check: fixed seeds,
 * a few seconds, the datapath and the reference model compared frame by
 * frame with every slot checked after every frame, the coverage of the
 * model's branches printed; and a deliberately wrong datapath (the tail's
 * programs with a duplicate uncounted, built by tests/model/model.mk),
 * which the fuzzer must catch and shrink to a few operations.
 */
#include <libgen.h>
#include <limits.h>
#include <sched.h>
#include <unistd.h>

#pragma GCC diagnostic ignored "-Wsign-compare"
#include "kselftest_harness.h"
#include "xdp.h"
#include "fuzz.h"

#define NOPS	2500
#define NSEEDS	3
/*
 * A safety net for slow kernels: the pass stops there and the coverage is
 * then not required. The 6.1 guest's TCG fits the whole pass by limiting
 * slot reads (INAGG_FUZZ_SLOT_S, below). 60 s: the guest's run of every
 * layer must fit tests/kmod/vm.sh's timeout.
 */
#define BUDGET_S	60

static struct fz z;
static struct fz_op ops[NOPS];

/* Operations per seed: NOPS, or fewer where frames are slow (INAGG_FUZZ_OPS, the 6.1 guest). */
static long nops(void)
{
	const char *e = getenv("INAGG_FUZZ_OPS");
	long n = e ? atol(e) : NOPS;

	return n > 0 && n < NOPS ? n : NOPS;
}

/* Each test in its own network namespace; the timeouts are for the 6.1 guest's TCG. */
FIXTURE(fuzz) {
	int unused;
};

FIXTURE_SETUP(fuzz)
{
	ASSERT_EQ(0, unshare(CLONE_NEWNET));
}

FIXTURE_TEARDOWN(fuzz)
{
}

TEST_F_TIMEOUT(fuzz, model_agrees_with_datapath, 600)
{
	struct fz_diff d;
	__u64 seed;
	long n, len = nops();
	int b, r;

	time_t t0 = time(NULL);

	ASSERT_EQ(0, fz_open(&z));
	printf("# switch set up in %ld s\n", (long)(time(NULL) - t0));
	/*
	 * Where slot reads are slow (INAGG_FUZZ_SLOT_S: the 6.1 guest's TCG
	 * took about 8 ms a read), they get that many seconds, touched slots
	 * only; every frame's verdict, bytes and counters are compared still.
	 */
	if (getenv("INAGG_FUZZ_SLOT_S"))
		z.slot_budget_ns = atol(getenv("INAGG_FUZZ_SLOT_S")) * 1000000000ull;
	z.deadline = time(NULL) + BUDGET_S;
	/* Tail publications wait for grace periods: enough to reach every branch, no more. */
	fz_tail_ppm = 8000;
	fz_readd_ppm = 2000;
	for (seed = 1; seed <= NSEEDS && !z.stopped; seed++) {
		/* every slot after every frame, then the touched ones */
		z.slow = seed == 1 && !z.slot_budget_ns;
		fz_gen(seed, ops, len);
		r = fz_run(&z, ops, len, &d);
		if (r) {
			z.deadline = 0;	/* shrinking must not stop early */
			n = len;
			fz_shrink(&z, ops, &n, &d, 300);
			fz_report(stdout, seed, ops, n, &d);
		}
		ASSERT_EQ(0, r);
	}
	fz_coverage(stdout, &z);
	fz_rate(stdout, &z);
	if (z.stopped) {
		TH_LOG("time budget (%d s) spent at seed %llu: coverage not required", BUDGET_S,
		       (unsigned long long)seed - 1);
		fz_close(&z);
		return;
	}
	/* What a short pass must reach, or it checks less than it claims. */
	for (b = 0, n = 0; b < MB__N; b++)
		if (!z.cover[b] && b != MB_EVICT_DISCARD_GEN && b != MB_TAIL_DISCARD_GEN) {
			TH_LOG("branch \"%s\" not reached", m_branch_name[b]);
			n++;
		}
	EXPECT_EQ(0, n);
	fz_close(&z);
}

/* The mutant beside this binary's build: BUILD/bpf/mutant/inagg_tail.bpf.o. */
static int mutant_path(char *path, size_t size)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n <= 0)
		return -1;
	exe[n] = 0;
	/* BUILD/tests/bpf/xdp_fuzz */
	snprintf(path, size, "%s/../../bpf/mutant/inagg_tail.bpf.o", dirname(exe));
	return access(path, R_OK);
}

TEST_F_TIMEOUT(fuzz, mutant_caught_and_shrunk, 600)
{
	char path[PATH_MAX + 64];
	struct fz_diff d = { .at = -1 };
	__u64 seed;
	long n = NOPS;

	if (mutant_path(path, sizeof(path)))
		SKIP(return, "no mutant built (make %s)", "build/bpf/mutant/inagg_tail.bpf.o");
	ASSERT_EQ(0, fz_open(&z));
	ASSERT_EQ(0, fz_load_mutant(&z, path));
	for (seed = 1; seed <= NSEEDS && d.at < 0; seed++) {
		fz_gen(seed, ops, NOPS);
		fz_run(&z, ops, NOPS, &d);
	}
	ASSERT_LE(0, d.at);
	fz_shrink(&z, ops, &n, &d, 300);
	fz_report(stdout, seed - 1, ops, n, &d);
	/* A claim and its duplicate, behind whatever publishes a pool. */
	EXPECT_GE(4, n);
	EXPECT_NE(NULL, strstr(d.what, ia_ctr_name(IA_C_DUP)));
	fz_close(&z);
}

TEST_HARNESS_MAIN
