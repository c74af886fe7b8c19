/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Placement of aggregating (blue) switches and the congestion model of the
 * paper: a red switch forwards L(v) plus its children's messages, a blue one
 * sends one message (none when its subtree has no load); link congestion is
 * messages / rate and network congestion the largest link congestion.
 */
#ifndef INAGG_PLACE_H
#define INAGG_PLACE_H

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

/*
 * One placement problem. load and avail are indexed by switch; NULL means the
 * topology's own load / available fields. base, when set, is link load already
 * carried by earlier workloads: congestion is then (base + messages) / rate
 * (the congestion-aware variant of multi-workload placement).
 *
 * merged, when set, is what a blue switch sends when its subtree sends
 * anything: an application whose merged output is more than one message
 * (word count: the distinct keys of the subtree; docs/apps.md). It must not
 * depend on the colouring below and must never exceed what the switch
 * would send red, merged[v] <= load(v) + sum of merged[c] over its loaded
 * children (ia_place_check() refuses it otherwise); then SMC stays exact.
 * NULL means one message, the paper's model.
 */
struct ia_problem {
	const struct ia_topo *topo;
	const uint32_t *load;
	const bool *avail;
	const uint64_t *base;
	const uint32_t *merged;
	int k;
};

struct ia_placement {
	int n;
	bool *blue;		/* per switch */
	uint64_t *msgs;		/* messages on each switch's uplink */
	int nblue;
	struct ia_ratio congestion;	/* max over links of (base + msgs) / rate */
	int bottleneck;		/* switch whose uplink attains it, -1 if none */
	double solve_seconds;	/* time of the algorithm alone */
	int checks;		/* feasibility checks (SMC variants) */
};

int ia_placement_init(struct ia_placement *p, int n);
void ia_placement_free(struct ia_placement *p);

/* Fills msgs, nblue, congestion and bottleneck from p->blue. */
void ia_model_eval(const struct ia_problem *pb, struct ia_placement *p);

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
