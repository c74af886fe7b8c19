/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Counters and the datapath's lookups: a port's counters, a job's
 * configuration and counters, a sender's member entry. Each tries the
 * array-indexed copy first (inlined by the verifier) and falls back to the
 * authoritative hash (include/inagg/maps.h, docs/datapath.md).
 */
#ifndef INAGG_DP_LOOKUP_H
#define INAGG_DP_LOOKUP_H

#include "dp_maps.h"

static __always_inline void ctr(struct ia_counters *c, int i)
{
	if (c)
		c->c[i]++;
}

static __always_inline int drop(struct ia_counters *p, struct ia_counters *j, int why)
{
	ctr(p, why);
	ctr(j, why);
	return XDP_DROP;
}

/* The port index of ifindex; 0 if it is not a port of this switch. */
static __always_inline __u32 port_index(__u32 ifindex)
{
	__u32 *idx;

	if (ifindex < IA_PORT_DIRECT)
		idx = bpf_map_lookup_elem(&ia_ports, &ifindex);
	else
		idx = bpf_map_lookup_elem(&ia_ports_far, &ifindex);
	return idx ? *idx : 0;
}

static __always_inline struct ia_counters *pstats(__u32 ifindex)
{
	__u32 idx = port_index(ifindex);

	if (!idx)
		return NULL;	/* not a port of this switch */
	return bpf_map_lookup_elem(&ia_pstats, &idx);
}

static __always_inline struct ia_counters *jstats(const struct ia_job_cfg *cfg)
{
	__u32 slot = cfg->slot;

	return bpf_map_lookup_elem(&ia_jstats, &slot);
}

/* A job's configuration: its ia_jfast copy if it has one, else ia_jobs. */
static __always_inline struct ia_job_cfg *job_cfg(__u32 job)
{
	__u32 k = job % IA_MAX_JOBS, zero = 0;
	struct ia_job_ent *e;
	void *inner;

	inner = bpf_map_lookup_elem(&ia_jfast, &k);
	if (inner) {
		e = bpf_map_lookup_elem(inner, &zero);
		if (e && e->job == job)
			return &e->cfg;
	}
	return bpf_map_lookup_elem(&ia_jobs, &job);
}

/* sender's entry for the job: its member table if it has one, else ia_members. */
static __always_inline struct ia_member *member(const struct ia_job_cfg *cfg, __u32 job,
						__u32 sender)
{
	struct ia_member_key mk = { .job = job, .sender = sender };
	__u32 slot = cfg->slot, bits = cfg->mbits, k, i;
	struct ia_mslot *e;
	void *tab;

	if (!cfg->mprobe)
		return bpf_map_lookup_elem(&ia_members, &mk);
	tab = bpf_map_lookup_elem(&ia_mtab, &slot);
	if (!tab || bits < 1 || bits > IA_MTAB_MAX_BITS)
		return NULL;
	k = (sender * IA_MHASH_MUL) >> (32 - bits);
	for (i = 0; i < IA_MPROBE_MAX && i < cfg->mprobe; i++) {
		e = bpf_map_lookup_elem(tab, &k);
		if (!e || !e->m.nworkers)
			return NULL;	/* empty: not a member */
		if (e->sender == sender)
			return &e->m;
		k = (k + 1) & ((1u << bits) - 1);
	}
	return NULL;
}

#endif /* INAGG_DP_LOOKUP_H */
