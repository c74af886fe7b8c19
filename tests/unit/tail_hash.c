// SPDX-License-Identifier: GPL-2.0
/*
 * Where PS chunks go in a switch's tail (ia_tail_hash(), wire.h; docs/memory.md,
 * "Mapping"): runs of IA_TAIL_RUN consecutive chunks in consecutive slots, runs
 * spread over the pool, the same figures wherever it is computed.
 */
#include <stdint.h>
#include <string.h>
#include <stdio.h>
#include <linux/types.h>

#pragma GCC diagnostic ignored "-Wsign-compare"
#include "kselftest_harness.h"
#include "inagg/wire.h"

static const __u32 totals[] = { 1, 5, 16, 64, 1031, 4000, 4096, 65536 };
static const __u32 jobs[] = { 0, 1, 50, 1000, 0xffffffffu };

#define NTOTALS	(sizeof(totals) / sizeof(totals[0]))
#define NJOBS	(sizeof(jobs) / sizeof(jobs[0]))

/* Every run, whatever the pool's size: slot of its first chunk + i, wrapping at the end. */
TEST(a_run_takes_consecutive_slots)
{
	__u32 t, j, run, i;

	for (t = 0; t < NTOTALS; t++)
		for (j = 0; j < NJOBS; j++)
			for (run = 0; run < 2000; run++) {
				__u32 q = run * IA_TAIL_RUN, v = ia_tail_hash(jobs[j], q) % totals[t];

				for (i = 1; i < IA_TAIL_RUN; i++)
					ASSERT_EQ((v + i) % totals[t],
						  ia_tail_hash(jobs[j], q + i) % totals[t]);
			}
	/* The last run of the sequence space too (seq wraps at 2^32). */
	{
		__u32 q = 0u - IA_TAIL_RUN, v = ia_tail_hash(50, q) % 4000;

		for (i = 1; i < IA_TAIL_RUN; i++)
			ASSERT_EQ((v + i) % 4000, ia_tail_hash(50, q + i) % 4000);
	}
}

/* A pool of a power of 2 slots (at least a run) holds whole runs: two share all slots or none. */
TEST(power_of_two_pools_hold_aligned_runs)
{
	__u32 t, j, run;

	for (t = 0; t < NTOTALS; t++) {
		if (totals[t] & (totals[t] - 1) || totals[t] < IA_TAIL_RUN)
			continue;
		for (j = 0; j < NJOBS; j++)
			for (run = 0; run < 2000; run++)
				ASSERT_EQ(0, ia_tail_hash(jobs[j], run * IA_TAIL_RUN) % totals[t] %
					  IA_TAIL_RUN);
	}
}

/*
 * Runs of many jobs spread over the pool as a hash of (job, run) does: 64
 * jobs of 64 runs each over the 256 runs of a 4096-slot pool (16 each on
 * average), and over the 4000 slots of a pool that holds no whole number of
 * runs.
 */
TEST(runs_of_many_jobs_spread_over_the_pool)
{
	static __u32 n[4096];
	__u32 j, run, i, lo, hi;

	memset(n, 0, sizeof(n));
	for (j = 0; j < 64; j++)
		for (run = 0; run < 64; run++)
			n[ia_tail_hash(100 + j, run * IA_TAIL_RUN) % 4096 / IA_TAIL_RUN]++;
	for (i = 0, lo = ~0u, hi = 0; i < 4096 / IA_TAIL_RUN; i++) {
		lo = n[i] < lo ? n[i] : lo;
		hi = n[i] > hi ? n[i] : hi;
	}
	TH_LOG("4096 slots: runs per aligned run of slots %u..%u (mean 16)", lo, hi);
	ASSERT_GE(lo, 4);
	ASSERT_LE(hi, 32);

	memset(n, 0, sizeof(n));
	for (j = 0; j < 64; j++)
		for (run = 0; run < 64; run++)
			n[ia_tail_hash(100 + j, run * IA_TAIL_RUN) % 4000 / 250]++;
	for (i = 0, lo = ~0u, hi = 0; i < 16; i++) {
		lo = n[i] < lo ? n[i] : lo;
		hi = n[i] > hi ? n[i] : hi;
	}
	TH_LOG("4000 slots: runs starting in each sixteenth %u..%u (mean 256)", lo, hi);
	ASSERT_GE(lo, 192);
	ASSERT_LE(hi, 320);
}

/* Chunk seq of two jobs: their runs are placed independently (not one beside the other). */
TEST(jobs_runs_are_placed_apart)
{
	__u32 run, same = 0, next = 0;

	for (run = 0; run < 4096; run++) {
		__u32 a = ia_tail_hash(7, run * IA_TAIL_RUN) % 4096;
		__u32 b = ia_tail_hash(8, run * IA_TAIL_RUN) % 4096;

		same += a == b;
		next += (a + IA_TAIL_RUN) % 4096 == b;
	}
	TH_LOG("of 4096 runs of jobs 7 and 8: %u in the same slots, %u next to each other "
	       "(chance: 16 each)", same, next);
	ASSERT_LE(same, 48);
	ASSERT_LE(next, 48);
}

TEST_HARNESS_MAIN
