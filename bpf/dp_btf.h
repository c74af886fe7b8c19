/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Never loaded ("?"), in each program object (inagg.bpf.c, inagg_tail.bpf.c,
 * inagg_other.bpf.c): clang 14 emits only a forward declaration for the
 * value of a map-in-map's inner map, which libbpf cannot size. Naming the
 * types here puts them whole into BTF, where libbpf sizes the inner map
 * templates and the loader finds the types to create each job's inner maps
 * with (kernels up to 6.1 insert an inner map only if its BTF-derived layout
 * matches the template's).
 */
#ifndef INAGG_DP_BTF_H
#define INAGG_DP_BTF_H

#include "dp_maps.h"

SEC("?xdp")
int ia_btf_types(struct xdp_md *ctx)
{
	volatile __u32 id = __builtin_btf_type_id(*(struct ia_slot *)0, 0);

	id = __builtin_btf_type_id(*(struct ia_job_ent *)0, 0);
	id = __builtin_btf_type_id(*(struct ia_mslot *)0, 0);
	id = __builtin_btf_type_id(*(struct ia_tail_dir *)0, 0);
	(void)id;
	return XDP_PASS;
}

#endif /* INAGG_DP_BTF_H */
