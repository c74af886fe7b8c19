// SPDX-License-Identifier: GPL-2.0
/*
 * make fuzz: the differential fuzzer over many seeds (tests/model/fuzz.h).
 *   fuzz [-n FRAMES] [-s FIRST_SEED] [-l OPS_PER_SEED] [-S] [-t TREE_SEEDS]
 * First the clean end-to-end runs over a tree of switches (tree.h), seeds
 * FIRST_SEED.. FIRST_SEED + TREE_SEEDS - 1 (default 3); then
 * Runs seeds FIRST_SEED, FIRST_SEED + 1, ... of OPS_PER_SEED operations each
 * until FRAMES frames went through both, then prints the coverage of the
 * model's branches. A mismatch is shrunk and printed (seed, minimal
 * sequence), and the exit status is 1. -S compares every slot after every
 * frame (slower).
 */
#include <sched.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "fuzz.h"
#include "tree.h"

int main(int argc, char **argv)
{
	long frames = 10000000, len = 20000, n;
	__u64 seed = 1, seeds = 0;
	static struct fz z;
	struct fz_diff d;
	struct fz_op *ops;
	time_t t0 = time(NULL);
	int c, slow = 0, tseeds = 3;
	struct ft_stats ts = {};
	struct ft *t;

	fz_tail_ppm = 300;	/* each a grace period or two: fewer than in make check */
	fz_readd_ppm = 60;
	while ((c = getopt(argc, argv, "n:s:l:St:")) != -1) {
		switch (c) {
		case 'n': frames = atol(optarg); break;
		case 's': seed = strtoull(optarg, NULL, 0); break;
		case 'l': len = atol(optarg); break;
		case 'S': slow = 1; break;
		case 't': tseeds = atoi(optarg); break;
		default:
			fprintf(stderr, "usage: %s [-n frames] [-s seed] [-l ops] [-S]\n", argv[0]);
			return 2;
		}
	}
	ops = calloc(len, sizeof(*ops));
	if (!ops || unshare(CLONE_NEWNET) || fz_open(&z)) {
		fprintf(stderr, "fuzz: cannot set up the switch (root? BPF?)\n");
		return 2;
	}
	if (tseeds && ft_open(&t)) {
		fprintf(stderr, "fuzz: cannot set up the tree of switches\n");
		return 2;
	}
	for (c = 0; c < tseeds; c++)
		if (ft_run(t, seed + c, stdout, &ts))
			return 1;
	if (tseeds) {
		ft_close(t);
		ft_report(stdout, &ts, tseeds, (long)(time(NULL) - t0));
	}
	z.slow = slow;
	while ((long)z.frames < frames) {
		fz_gen(seed, ops, len);
		if (fz_run(&z, ops, len, &d)) {
			n = len;
			printf("# seed %llu: %s at %ld; shrinking\n", (unsigned long long)seed,
			       d.what, d.at);
			fz_shrink(&z, ops, &n, &d, 3000);
			fz_report(stdout, seed, ops, n, &d);
			return 1;
		}
		seeds++;
		if (seeds % 50 == 0)
			printf("# %llu frames, %llu seeds, %ld s\n", (unsigned long long)z.frames,
			       (unsigned long long)seeds, (long)(time(NULL) - t0));
		fflush(stdout);
		seed++;
	}
	if (z.frames)
		fz_coverage(stdout, &z);
	printf("# 0 mismatches: %llu frames, seeds %llu..%llu, %ld s\n",
	       (unsigned long long)z.frames, (unsigned long long)(seed - seeds),
	       (unsigned long long)(seed - 1), (long)(time(NULL) - t0));
	fz_close(&z);
	return 0;
}
