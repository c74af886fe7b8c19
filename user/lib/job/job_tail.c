// SPDX-License-Identifier: GPL-2.0
/*
 * Who a PS job's switches and its PS accept, with their member sets
 * (docs/memory.md, "Loader API for the tail"): the job's workers get ranks
 * 0..63 in the order of the topology (switch by switch, then worker by
 * worker); a worker's set is its rank's bit, a tail switch's every rank
 * below it. A switch or the PS accepts every worker below it (a collision
 * sends a contribution on raw) and every tail switch below it (a tail
 * switch between may pass another's aggregate unaggregated).
 */
#include <errno.h>

#include <inagg/wire.h>

#include "job.h"

bool ia_job_tail_at(const struct ia_topo *t, const struct ia_job *j, int v)
{
	return j->class == IA_JOB_PS && j->held[v] && j->plan.sw && j->plan.sw[v].on_path &&
	       j->plan.nworkers <= IA_MAX_RANKS;
}

/* Whether u is v or below it; v < 0: the destination, above everything. */
static bool below(const struct ia_topo *t, int u, int v)
{
	if (v < 0)
		return true;
	for (; u >= 0; u = t->sw[u].parent)
		if (u == v)
			return true;
	return false;
}

int ia_job_rank(const struct ia_topo *t, const struct ia_job *j, int v, uint32_t w)
{
	int r = 0;

	if (w >= j->load[v])
		return -1;
	for (int u = 0; u < v; u++)
		r += j->load[u];
	return r + w;
}

uint64_t ia_job_tail_set(const struct ia_topo *t, const struct ia_job *j, int v)
{
	uint64_t set = 0;
	int r = 0;

	for (int u = 0; u < t->n; u++)
		for (uint32_t w = 0; w < j->load[u]; w++, r++)
			if (r < IA_MAX_RANKS && below(t, u, v))
				set |= 1ull << r;
	return set;
}

int ia_job_tail_members(const struct ia_topo *t, const struct ia_job *j, int v,
			struct ia_sender *m, uint64_t *sets, uint32_t *n)
{
	int r = 0;

	*n = 0;
	if (j->class != IA_JOB_PS || j->plan.nworkers > IA_MAX_RANKS)
		return -EINVAL;
	for (int u = 0; u < t->n; u++)
		for (uint32_t w = 0; w < j->load[u]; w++, r++) {
			if (!below(t, u, v))
				continue;
			m[*n] = (struct ia_sender){ ia_worker_id(ia_net_worker_index(t, u, w)), 1 };
			sets[(*n)++] = 1ull << r;
		}
	for (int u = 0; u < t->n; u++) {
		uint64_t set;

		if (u == v || !below(t, u, v) || !ia_job_tail_at(t, j, u))
			continue;
		set = ia_job_tail_set(t, j, u);
		m[*n] = (struct ia_sender){ ia_switch_id(u), __builtin_popcountll(set) };
		sets[(*n)++] = set;
	}
	return 0;
}
