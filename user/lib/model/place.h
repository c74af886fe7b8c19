/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Placement of aggregating (blue) switches: the strategies, SMC among them,
 * over the paper's congestion model (congestion.h, included for the
 * problem and placement types).
 */
#ifndef INAGG_PLACE_H
#define INAGG_PLACE_H

#include "congestion.h"
#include "topo.h"

enum ia_algo {
	IA_ALGO_SMC,
	IA_ALGO_TOP,
	IA_ALGO_MAX,
	IA_ALGO_LEVEL,
	IA_ALGO_ALL_RED,
	IA_ALGO_ALL_BLUE,
	IA_ALGO_BRUTE,
	IA_ALGO_SMC_NAIVE,	/* the paper's O(n k^2) per check, float step search */
	IA_ALGO__COUNT,
};

const char *ia_algo_name(enum ia_algo a);
/* Returns the algorithm or -1 for an unknown name. */
int ia_algo_parse(const char *name);

/* Place with algo; p must be initialised for pb->topo->n. 0 or -errno. */
int ia_place(const struct ia_problem *pb, enum ia_algo algo, struct ia_placement *p);

/*
 * Brute force evaluates every subset of at most k available switches, each in
 * O(n): it refuses instances beyond this many switch evaluations (seconds).
 */
#define IA_BRUTE_MAX_WORK (1ull << 30)
/* Available switches up to which the CLI's "all" includes brute force. */
#define IA_BRUTE_MAX_AVAIL 24

/*
 * Whether algo can place pb: 0, or -EINVAL / -E2BIG (brute force on too
 * large an instance) with the reason in err. ia_place() checks it too.
 */
int ia_place_check(const struct ia_problem *pb, enum ia_algo algo, char *err, size_t errlen);

/* Multi-workload online placement (paper Sec. V). */
struct ia_workload {
	const char *name;
	const uint32_t *load;	/* per switch */
	int k;
};

struct ia_multi_result {
	int nw;
	struct ia_placement *per;	/* one per workload */
	uint64_t *total_msgs;		/* per link, summed over workloads */
	struct ia_ratio congestion;	/* of the total link load */
	int bottleneck;
	uint32_t *residual;		/* capacity left per switch */
};

/*
 * Places each workload in turn with budget k on the available switches that
 * have capacity left, consuming one unit of capacity per blue switch. With
 * aware set, each workload is placed knowing the load already carried by the
 * earlier ones.
 */
int ia_multi_place(const struct ia_topo *t, const struct ia_workload *w, int nw,
		   enum ia_algo algo, bool aware, struct ia_multi_result *r);
void ia_multi_free(struct ia_multi_result *r);

/* How a set of placed workloads is scored. */
enum ia_multi_metric {
	/*
	 * The paper's (Sec. V, Figs. 4-5): the sum over workloads of each one's
	 * own congestion, as if each ran alone.
	 */
	IA_MULTI_SUM,
	/* The worst link once every workload's messages are added: concurrent jobs. */
	IA_MULTI_LINK,
	IA_MULTI__COUNT,
};

const char *ia_multi_metric_name(enum ia_multi_metric m);
int ia_multi_metric_parse(const char *name);	/* -1 if unknown */
/* The score of r (doubles of exact values, summed in workload order). */
double ia_multi_metric(const struct ia_multi_result *r, enum ia_multi_metric m);

#endif
