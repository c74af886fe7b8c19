/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The datapath's maps, one set per switch: layouts and meaning in
 * include/inagg/maps.h, loader in user/lib/xdp*.c. Included once, by
 * inagg.bpf.c (the program object that owns and pins them).
 */
#ifndef INAGG_DP_MAPS_H
#define INAGG_DP_MAPS_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include "inagg/maps.h"

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, IA_MAX_JOBS);
	__type(key, __u32);
	__type(value, struct ia_job_cfg);
} ia_jobs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, IA_MAX_MEMBERS);
	__type(key, struct ia_member_key);
	__type(value, struct ia_member);
} ia_members SEC(".maps");

/*
 * Hash-free copies of ia_jobs and ia_members (see maps.h). The ia_jfast
 * inner array has one entry everywhere, so it is not an inner-map template
 * (BPF_F_INNER_MAP) and the verifier inlines both of its lookups.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, IA_MAX_JOBS);
	__type(key, __u32);
	__array(values, struct {
		__uint(type, BPF_MAP_TYPE_ARRAY);
		__uint(max_entries, 1);
		__type(key, __u32);
		__type(value, struct ia_job_ent);
	});
} ia_jfast SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, IA_MAX_JOBS);
	__type(key, __u32);
	__array(values, struct {
		__uint(type, BPF_MAP_TYPE_ARRAY);
		__uint(map_flags, BPF_F_INNER_MAP);	/* sized per job */
		__uint(max_entries, 1);
		__type(key, __u32);
		__type(value, struct ia_mslot);
	});
} ia_mtab SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, IA_MAX_DOWN);
	__type(key, struct ia_down_key);
	__type(value, struct ia_down);
} ia_down SEC(".maps");

/*
 * ia_slots' inner map is a template: the loader creates one array per blue
 * job. Outer, job and port state are arrays indexed by a loader-assigned
 * slot/index: the verifier inlines their lookups, a hash costs ~20 ns each.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, IA_MAX_JOBS + 1);	/* + the tail pool at IA_TAIL_SLOT */
	__type(key, __u32);
	__array(values, struct {
		__uint(type, BPF_MAP_TYPE_ARRAY);
		__uint(map_flags, BPF_F_INNER_MAP);	/* window differs per job */
		__uint(max_entries, 1);
		__type(key, __u32);
		__type(value, struct ia_slot);
	});
} ia_slots SEC(".maps");

/*
 * Programs ia_xdp tail-calls, each verified on its own (the verifier's
 * budget): IA_TAIL_SPARSE ia_sparse (dp_sparse.h), IA_PROGS_TAIL ia_tail
 * (PS jobs), IA_PROGS_EVICT ia_evict (blue jobs taking a lent slot back),
 * IA_PROGS_HOLD ia_hold (a result a blue switch holds, dp_head.h).
 * Filled by the loader.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, IA_PROGS__N);
	__type(key, __u32);
	__type(value, __u32);
} ia_progs SEC(".maps");

/*
 * The tail directory, one entry: the loader inserts each generation whole,
 * so a reader sees one generation or the next (like ia_jfast).
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, 1);
	__type(key, __u32);
	__array(values, struct {
		__uint(type, BPF_MAP_TYPE_ARRAY);
		__uint(max_entries, 1);
		__type(key, __u32);
		__type(value, struct ia_tail_dir);
	});
} ia_tdir SEC(".maps");

/*
 * The slots' locks, outside the inner arrays (maps.h): a plain array, whose
 * lookup the verifier inlines.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, IA_SLOT_LOCKS);
	__type(key, __u32);
	__type(value, struct ia_slot_lock);
} ia_locks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, IA_MAX_JOBS);
	__type(key, __u32);
	__type(value, struct ia_counters);
} ia_jstats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, IA_PORT_DIRECT);
	__type(key, __u32);
	__type(value, __u32);
} ia_ports SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, IA_MAX_PORTS);
	__type(key, __u32);
	__type(value, __u32);
} ia_ports_far SEC(".maps");

/* Index 0 is no port: never read (tail-called programs count there, dp_parse.h). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, IA_MAX_PORTS + 1);
	__type(key, __u32);
	__type(value, struct ia_counters);
} ia_pstats SEC(".maps");

/* Only the loader uses it; here so that it is created and pinned with the rest. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, IA_MAX_JOBS + IA_MAX_PORTS);
	__type(key, struct ia_owner_key);
	__type(value, __u32);
} ia_owners SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_DEVMAP_HASH);
	__uint(max_entries, IA_MAX_PORTS);
	__type(key, __u32);
	__type(value, struct bpf_devmap_val);
} ia_dports SEC(".maps");

#endif /* INAGG_DP_MAPS_H */
