// SPDX-License-Identifier: GPL-2.0
/*
 * Jobs into a switch's maps: configuration, members, aggregator slots, and
 * the counters read back. See xdp.h and docs/datapath.md.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "xdp_int.h"

int ia_xdp_zero_counters(struct ia_xdp *x, int map_fd, const void *key, __u64 flags)
{
	size_t sz = (size_t)x->ncpus * sizeof(struct ia_counters);
	void *zero = calloc(1, sz);
	int err;

	if (!zero)
		return -ENOMEM;
	err = bpf_map_update_elem(map_fd, key, zero, flags);
	free(zero);
	return err;
}

int ia_xdp_sum_counters(struct ia_xdp *x, int map_fd, const void *key, struct ia_counters *out)
{
	struct ia_counters *v = calloc(x->ncpus, sizeof(*v));
	int err, cpu, i;

	if (!v)
		return -ENOMEM;
	err = bpf_map_lookup_elem(map_fd, key, v);
	if (!err) {
		memset(out, 0, sizeof(*out));
		for (cpu = 0; cpu < x->ncpus; cpu++)
			for (i = 0; i < IA_C__COUNT; i++)
				out->c[i] += v[cpu].c[i];
	}
	free(v);
	return err;
}

/* Claims the first free index of kind from first (wrapping over n); value: owner. */
int ia_xdp_own_claim(struct ia_xdp *x, __u32 kind, __u32 first, __u32 n, __u32 base,
		     __u32 value, __u32 *out)
{
	int fd = bpf_map__fd(x->skel->maps.ia_owners), err;
	struct ia_owner_key k = { .kind = kind };
	__u32 i;

	for (i = 0; i < n; i++) {
		k.index = base + (first + i) % n;
		err = bpf_map_update_elem(fd, &k, &value, BPF_NOEXIST);
		if (!err) {
			*out = k.index;
			return 0;
		}
		if (err != -EEXIST)
			return err;
	}
	return -ENOSPC;
}

void ia_xdp_own_release(struct ia_xdp *x, __u32 kind, __u32 index)
{
	struct ia_owner_key k = { .kind = kind, .index = index };

	bpf_map_delete_elem(bpf_map__fd(x->skel->maps.ia_owners), &k);
}

static void del_job_keys(int fd, __u32 job)
{
	__u32 key[2], next[2];
	void *prev = NULL;

	while (!bpf_map_get_next_key(fd, prev, next)) {
		if (next[0] == job && !bpf_map_delete_elem(fd, next)) {
			prev = NULL;	/* iteration order changed: restart */
			continue;
		}
		memcpy(key, next, sizeof(key));
		prev = key;
	}
}

/* The job slots owned by job (also those of a half-done add). */
static int job_slots(struct ia_xdp *x, __u32 job, __u32 *out)
{
	int fd = bpf_map__fd(x->skel->maps.ia_owners);
	struct ia_owner_key k, next, *prev = NULL;
	__u32 owner;
	int n = 0;

	while (!bpf_map_get_next_key(fd, prev, &next)) {
		k = next;
		prev = &k;
		if (k.kind == IA_OWN_JOB && !bpf_map_lookup_elem(fd, &k, &owner) &&
		    owner == job && n < IA_MAX_JOBS)
			out[n++] = k.index;
	}
	return n;
}

int ia_xdp_job_del(struct ia_xdp *x, __u32 job)
{
	__u32 slot[IA_MAX_JOBS];
	int n = job_slots(x, job, slot), err, i;

	/* Its lend goes first: no PS chunk may still be sent into its head. */
	ia_xdp_tail_forget(x, job);
	/* Unpublish first (both copies): the datapath stops using the job before its state goes. */
	for (i = 0; i < n; i++)
		bpf_map_delete_elem(bpf_map__fd(x->skel->maps.ia_jfast), &slot[i]);
	err = bpf_map_delete_elem(bpf_map__fd(x->skel->maps.ia_jobs), &job);
	del_job_keys(bpf_map__fd(x->skel->maps.ia_members), job);
	del_job_keys(bpf_map__fd(x->skel->maps.ia_down), job);
	if (!n)
		return err;
	for (i = 0; i < n; i++) {
		bpf_map_delete_elem(bpf_map__fd(x->skel->maps.ia_mtab), &slot[i]);
		bpf_map_delete_elem(bpf_map__fd(x->skel->maps.ia_slots), &slot[i]);
	}
	/* Packets that saw the job may still use its slot: reuse it only after them. */
	ia_xdp_rcu_wait();
	for (i = 0; i < n; i++)
		ia_xdp_own_release(x, IA_OWN_JOB, slot[i]);
	return err;
}

static int valid_job(const struct ia_xdp_job *j)
{
	__u32 i;

	if (j->role != IA_ROLE_RED && j->role != IA_ROLE_BLUE && j->role != IA_ROLE_TAIL)
		return -EINVAL;
	if (!j->nmembers || j->nmembers > IA_MAX_FANIN || !j->members)
		return -EINVAL;
	if (j->role == IA_ROLE_BLUE && (!j->window || j->window > IA_MAX_WINDOW))
		return -EINVAL;
	if (j->up.ifindex <= 0 || (j->ndown && !j->down))
		return -EINVAL;
	/* Tail: every member carries a set of ranks, as many as its nworkers. */
	if (j->role == IA_ROLE_TAIL) {
		if (!j->sets)
			return -EINVAL;
		for (i = 0; i < j->nmembers; i++)
			if (!j->sets[i] ||
			    (__u32)__builtin_popcountll(j->sets[i]) != j->members[i].nworkers)
				return -EINVAL;
	}
	/* Sparse: room past the announcements for every member's masks, and a block. */
	if (j->role == IA_ROLE_BLUE && (j->flags & IA_JOB_F_SPARSE) &&
	    (!j->sparse_nann || j->sparse_nann >= IA_MAX_WINDOW ||
	     j->window <= j->sparse_nann + ia_sparse_mask_slots(j->sparse_nann, j->nmembers)))
		return -EINVAL;
	for (i = 0; i < j->ndown; i++)
		if (j->down[i].ifindex <= 0 || j->down[i].ifindex == j->up.ifindex)
			return -EINVAL;
	/* A member is never placed on the up port (its messages are refused there). */
	for (i = 0; j->bind && i < j->nmembers; i++)
		if (j->bind[i].ifindex < 0 || j->bind[i].ifindex == j->up.ifindex)
			return -EINVAL;
	return 0;
}

/*
 * Creates an inner map like its outer map's template, with the same BTF
 * (kernels up to 6.1 insert it only if the layout derived from BTF matches),
 * fills its first nvals entries, and makes it outer[key]'s inner map, its
 * only reference.
 */
int ia_xdp_add_inner(struct ia_xdp *x, struct bpf_map *outer, int kind, __u32 key,
		     const char *name, __u32 n, __u32 nvals, const void *vals)
{
	const struct ia_xdp_inner *t = &x->inner[kind];
	LIBBPF_OPTS(bpf_map_create_opts, o,
		.map_flags = t->flags,
		.btf_fd = bpf_object__btf_fd(x->skel->obj),
		.btf_key_type_id = t->key_type_id,
		.btf_value_type_id = t->value_type_id,
	);
	__u32 i, vsize = t->value_size;
	int fd, err = 0;

	fd = bpf_map_create(t->type, name, t->key_size, vsize, n, &o);
	if (fd < 0)
		return fd;
	for (i = 0; i < nvals && !err; i++)
		err = bpf_map_update_elem(fd, &i, (const char *)vals + (size_t)i * vsize, BPF_ANY);
	if (!err)
		err = bpf_map_update_elem(bpf_map__fd(outer), &key, &fd, BPF_ANY);
	close(fd);
	return err;
}

/* The job's aggregator slots, all empty. */
static int add_slots(struct ia_xdp *x, const struct ia_xdp_job *j, __u32 slot)
{
	char name[BPF_OBJ_NAME_LEN];

	snprintf(name, sizeof(name), "ia_slots_%u", j->id);
	return ia_xdp_add_inner(x, x->skel->maps.ia_slots, IA_INNER_SLOTS, slot, name, j->window, 0, NULL);
}

/* members[i]'s place, if the job binds its members (xdp.h). */
static void member_bind(const struct ia_xdp_job *j, __u32 i, struct ia_member *m)
{
	if (j->bind) {
		m->ifindex = j->bind[i].ifindex;
		m->saddr = j->bind[i].saddr;
	}
}

/*
 * Lays the members out in a linear-probed table of 2^bits entries (see
 * struct ia_mslot); returns the longest probe, or 0 if some probe would be
 * longer than IA_MPROBE_MAX.
 */
static __u32 mtab_fill(const struct ia_xdp_job *j, __u32 bits, struct ia_mslot *t)
{
	__u32 i, k, d, longest = 0, mask = (1u << bits) - 1;

	memset(t, 0, sizeof(*t) << bits);
	for (i = 0; i < j->nmembers; i++) {
		k = (j->members[i].id * IA_MHASH_MUL) >> (32 - bits);
		for (d = 0; t[k].m.nworkers; d++)
			k = (k + 1) & mask;
		if (d >= IA_MPROBE_MAX)
			return 0;
		t[k].sender = j->members[i].id;
		t[k].m.index = i;
		t[k].m.nworkers = j->members[i].nworkers;
		t[k].m.set = j->role == IA_ROLE_TAIL ? j->sets[i] : 0;
		member_bind(j, i, &t[k].m);
		if (d + 1 > longest)
			longest = d + 1;
	}
	return longest;
}

/*
 * The job's member table, at most half full; grown until every probe is
 * short. Without one (cfg->mprobe 0) the datapath uses ia_members.
 */
static int add_mtab(struct ia_xdp *x, const struct ia_xdp_job *j, struct ia_job_cfg *cfg)
{
	char name[BPF_OBJ_NAME_LEN];
	struct ia_mslot *t;
	__u32 bits = 1;
	int err = 0;

	while ((1u << bits) < 2 * j->nmembers)
		bits++;
	t = malloc(sizeof(*t) << IA_MTAB_MAX_BITS);
	if (!t)
		return -ENOMEM;
	for (cfg->mprobe = 0; bits <= IA_MTAB_MAX_BITS && !cfg->mprobe; bits++)
		cfg->mprobe = mtab_fill(j, bits, t);
	if (cfg->mprobe) {
		cfg->mbits = bits - 1;
		snprintf(name, sizeof(name), "ia_mtab_%u", j->id);
		err = ia_xdp_add_inner(x, x->skel->maps.ia_mtab, IA_INNER_MTAB, cfg->slot, name,
				1u << cfg->mbits, 1u << cfg->mbits, t);
	}
	free(t);
	return err;
}

/*
 * This add's generation of a job id: a tail partial is the job's only while
 * its tag carries it (bpf/dp_tail.h), so a job removed and added again
 * never adds into its former self's partials. The monotonic clock in
 * microseconds: no two adds of an id share it (each takes longer), whichever
 * process made them, unless 71.6 minutes apart to the microsecond.
 */
static __u32 job_gen(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u32)(ts.tv_sec * 1000000ull + ts.tv_nsec / 1000);
}

static int job_add(struct ia_xdp *x, const struct ia_xdp_job *j, char *why, size_t whylen)
{
	char name[BPF_OBJ_NAME_LEN];
	struct ia_job_ent ent = { .job = j->id };
	struct ia_job_cfg cfg = {
		.role = j->role,
		.expected = j->nmembers,
		.window = j->window,
		.base_seq = j->base_seq,
		.self_id = j->self_id,
		.up_ifindex = j->up.ifindex,
		.up_saddr = j->up.saddr,
		.up_daddr = j->up.daddr,
		.flags = j->flags,
		.sparse_nann = j->sparse_nann,
		.gen = job_gen(),
		.ps_addr = j->ps_addr,
	};
	int jobs = bpf_map__fd(x->skel->maps.ia_jobs);
	struct ia_job_cfg old;
	__u32 i;
	int err;

	err = valid_job(j);
	if (err)
		return err;
	if (!bpf_map_lookup_elem(jobs, &j->id, &old))
		return -EEXIST;
	memcpy(cfg.up_smac, j->up.smac, 6);
	memcpy(cfg.up_dmac, j->up.dmac, 6);
	if (j->role != IA_ROLE_BLUE)
		cfg.window = 0;

	/* Leftovers of a half-done add or a crashed owner would mix in. */
	ia_xdp_job_del(x, j->id);
	/* A tail job's messages go to the tail's programs. */
	if (j->role == IA_ROLE_TAIL) {
		err = ia_xdp_tail_load(x, why, whylen);
		if (err)
			return err;
	}

	/* Start at id % IA_MAX_JOBS: a job added again gets its slot back. */
	err = ia_xdp_own_claim(x, IA_OWN_JOB, j->id % IA_MAX_JOBS, IA_MAX_JOBS, 0, j->id, &cfg.slot);
	if (err)
		return err;
	if (j->role == IA_ROLE_BLUE) {
		err = add_slots(x, j, cfg.slot);
		if (err)
			goto err;
	}
	for (i = 0; i < j->nmembers; i++) {
		struct ia_member_key k = { .job = j->id, .sender = j->members[i].id };
		struct ia_member m = { .index = i, .nworkers = j->members[i].nworkers };

		member_bind(j, i, &m);
		if (j->role == IA_ROLE_TAIL) {
			m.set = j->sets[i];
			cfg.full |= m.set;
		}
		if (!m.nworkers) {
			err = -EINVAL;
			goto err;
		}
		cfg.nworkers += m.nworkers;
		err = bpf_map_update_elem(bpf_map__fd(x->skel->maps.ia_members), &k, &m,
					  BPF_NOEXIST);
		if (err)
			goto err;	/* -EEXIST: a sender listed twice */
	}
	/* A tail switch's members overlap (a worker and the switch it is below). */
	if (j->role == IA_ROLE_TAIL)
		cfg.nworkers = __builtin_popcountll(cfg.full);
	for (i = 0; i < j->ndown; i++) {
		struct ia_down_key k = { .job = j->id, .ifindex = j->down[i].ifindex };
		struct ia_down d = { .daddr = j->down[i].daddr };

		memcpy(d.smac, j->down[i].smac, 6);
		memcpy(d.dmac, j->down[i].dmac, 6);
		err = bpf_map_update_elem(bpf_map__fd(x->skel->maps.ia_down), &k, &d, BPF_NOEXIST);
		if (err)
			goto err;
	}
	err = add_mtab(x, j, &cfg);
	if (err)
		goto err;
	err = ia_xdp_zero_counters(x, bpf_map__fd(x->skel->maps.ia_jstats), &cfg.slot, BPF_ANY);
	if (err)
		goto err;
	/* Publish last: packets see either no job or all of it. */
	err = bpf_map_update_elem(jobs, &j->id, &cfg, BPF_NOEXIST);
	if (err)
		goto err;
	/* The datapath looks only at job % IA_MAX_JOBS: elsewhere it is found by hash. */
	if (cfg.slot == j->id % IA_MAX_JOBS) {
		ent.cfg = cfg;
		snprintf(name, sizeof(name), "ia_jfast_%u", j->id);
		err = ia_xdp_add_inner(x, x->skel->maps.ia_jfast, IA_INNER_JFAST, cfg.slot, name, 1, 1,
				&ent);
		if (err)
			goto err;
	}
	return 0;
err:
	ia_xdp_job_del(x, j->id);
	return err;
}

int ia_xdp_job_add(struct ia_xdp *x, const struct ia_xdp_job *j, char *why, size_t whylen)
{
	ia_xdp_err_start(why, whylen);
	return ia_xdp_said(why, whylen, job_add(x, j, why, whylen));
}

/* The slot of a configured job, from its published configuration. */
static int job_slot(struct ia_xdp *x, __u32 job, __u32 *slot)
{
	struct ia_job_cfg cfg;
	int err;

	err = bpf_map_lookup_elem(bpf_map__fd(x->skel->maps.ia_jobs), &job, &cfg);
	if (!err)
		*slot = cfg.slot;
	return err;
}

int ia_xdp_job_counters(struct ia_xdp *x, __u32 job, struct ia_counters *out)
{
	__u32 slot;
	int err = job_slot(x, job, &slot);

	return err ?: ia_xdp_sum_counters(x, bpf_map__fd(x->skel->maps.ia_jstats), &slot, out);
}

int ia_xdp_port_counters(struct ia_xdp *x, int ifindex, struct ia_counters *out)
{
	__u32 idx;
	int err = ia_xdp_port_index(x, ifindex, &idx);

	return err ?: ia_xdp_sum_counters(x, bpf_map__fd(x->skel->maps.ia_pstats), &idx, out);
}

int ia_xdp_slot_read(struct ia_xdp *x, __u32 job, __u32 idx, struct ia_slot *out)
{
	__u32 inner_id, slot;
	int fd, err;

	err = job_slot(x, job, &slot);
	if (err)
		return err;
	err = bpf_map_lookup_elem(bpf_map__fd(x->skel->maps.ia_slots), &slot, &inner_id);
	if (err)
		return err;
	fd = bpf_map_get_fd_by_id(inner_id);
	if (fd < 0)
		return fd;
	err = bpf_map_lookup_elem(fd, &idx, out);
	close(fd);
	return err;
}
