// SPDX-License-Identifier: GPL-2.0
/* Loader of the XDP datapath: see xdp.h and docs/datapath.md. */
#include <errno.h>
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <linux/membarrier.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "xdp.h"
#include "bpf/inagg.skel.h"

#define BPF_FS_MAGIC_NR	0xcafe4a11
#define BPF_FS_DIR	"/sys/fs/bpf"

struct ia_xdp {
	struct inagg *skel;
	__u32 slot_btf_id;	/* struct ia_slot, for each job's slot array */
	__u32 key_btf_id;	/* __u32 */
	int ncpus;
};

static const char *const ctr_names[IA_C__COUNT] = {
	[IA_C_RX]		= "rx",
	[IA_C_TX]		= "tx",
	[IA_C_FWD]		= "forwarded",
	[IA_C_AGGREGATED]	= "aggregated",
	[IA_C_EMIT]		= "emitted",
	[IA_C_REEMIT]		= "reemitted",
	[IA_C_DUP]		= "duplicates",
	[IA_C_RESULT]		= "results",
	[IA_C_PASS]		= "passed",
	[IA_C_DROP_SHORT]	= "drop_short",
	[IA_C_DROP_VERSION]	= "drop_version",
	[IA_C_DROP_TYPE]	= "drop_type",
	[IA_C_DROP_NELEM]	= "drop_nelem",
	[IA_C_DROP_JOB]		= "drop_job",
	[IA_C_DROP_MEMBER]	= "drop_member",
	[IA_C_DROP_WINDOW]	= "drop_window",
};

const char *ia_ctr_name(enum ia_ctr c)
{
	return (unsigned int)c < IA_C__COUNT ? ctr_names[c] : NULL;
}

static int pin_dir(const char *sw, char *buf, size_t len)
{
	if (!sw || !*sw || strchr(sw, '/') || !strcmp(sw, ".") || !strcmp(sw, ".."))
		return -EINVAL;
	if ((size_t)snprintf(buf, len, "%s/%s", IA_BPFFS_ROOT, sw) >= len)
		return -ENAMETOOLONG;
	return 0;
}

/* Like iproute2: mount bpffs where it is expected if nobody did. */
static int ensure_bpffs(void)
{
	struct statfs st;

	if (statfs(BPF_FS_DIR, &st))
		return -errno;
	if (st.f_type == BPF_FS_MAGIC_NR)
		return 0;
	if (mount("bpf", BPF_FS_DIR, "bpf", 0, "mode=0700"))
		return -errno;
	return 0;
}

static int mkdir_p(const char *dir)
{
	if (mkdir(IA_BPFFS_ROOT, 0700) && errno != EEXIST)
		return -errno;
	if (mkdir(dir, 0700) && errno != EEXIST)
		return -errno;
	return 0;
}

/*
 * libbpf 1.1 refuses to reuse a pinned devmap: the kernel adds
 * BPF_F_RDONLY_PROG to its flags. Reuse it by hand; 1 if it must be pinned.
 */
static int reuse_devmap(struct bpf_map *map, const char *path)
{
	int fd = bpf_obj_get(path), err;

	if (fd < 0)
		return errno == ENOENT ? 1 : -errno;
	err = bpf_map__reuse_fd(map, fd);
	close(fd);
	return err;
}

int ia_xdp_open(const char *sw, struct ia_xdp **out)
{
	char dir[PATH_MAX], path[PATH_MAX];
	char dports_path[PATH_MAX];
	bool dports_new = false;
	struct bpf_map *map;
	struct ia_xdp *x;
	struct btf *btf;
	int err, id;

	x = calloc(1, sizeof(*x));
	if (!x)
		return -ENOMEM;
	x->ncpus = libbpf_num_possible_cpus();
	if (x->ncpus <= 0) {
		err = x->ncpus ? x->ncpus : -EINVAL;
		goto err;
	}
	x->skel = inagg__open();
	if (!x->skel) {
		err = -errno;
		goto err;
	}
	if (sw) {
		err = pin_dir(sw, dir, sizeof(dir));
		if (!err)
			err = ensure_bpffs();
		if (!err)
			err = mkdir_p(dir);
		if (err)
			goto err;
		bpf_object__for_each_map(map, x->skel->obj) {
			if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir,
					     bpf_map__name(map)) >= sizeof(path)) {
				err = -ENAMETOOLONG;
				goto err;
			}
			if (map == x->skel->maps.ia_dports) {
				strcpy(dports_path, path);
				err = reuse_devmap(map, path);
				if (err < 0)
					goto err;
				dports_new = err;
				continue;
			}
			err = bpf_map__set_pin_path(map, path);
			if (err)
				goto err;
		}
	}
	err = inagg__load(x->skel);
	if (err)
		goto err;
	if (dports_new) {
		err = bpf_obj_pin(bpf_map__fd(x->skel->maps.ia_dports), dports_path);
		if (err)
			goto err;
	}

	btf = bpf_object__btf(x->skel->obj);
	id = btf__find_by_name_kind(btf, "ia_slot", BTF_KIND_STRUCT);
	if (id < 0) {
		err = id;
		goto err;
	}
	x->slot_btf_id = id;
	id = btf__find_by_name_kind(btf, "__u32", BTF_KIND_TYPEDEF);
	if (id < 0) {
		err = id;
		goto err;
	}
	x->key_btf_id = id;
	*out = x;
	return 0;
err:
	ia_xdp_close(x);
	return err;
}

void ia_xdp_close(struct ia_xdp *x)
{
	if (!x)
		return;
	inagg__destroy(x->skel);
	free(x);
}

int ia_xdp_unpin(const char *sw)
{
	char dir[PATH_MAX], path[PATH_MAX];
	struct dirent *e;
	DIR *d;
	int err;

	err = pin_dir(sw, dir, sizeof(dir));
	if (err)
		return err;
	d = opendir(dir);
	if (!d)
		return -errno;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, e->d_name) >= sizeof(path))
			continue;
		if (unlink(path) && !err)
			err = -errno;
	}
	closedir(d);
	if (rmdir(dir) && !err)
		err = -errno;
	return err;
}

int ia_xdp_prog_fd(struct ia_xdp *x)
{
	return bpf_program__fd(x->skel->progs.ia_xdp);
}

int ia_xdp_egress_fd(struct ia_xdp *x)
{
	return bpf_program__fd(x->skel->progs.ia_egress);
}

static int zero_counters(struct ia_xdp *x, int map_fd, const void *key, __u64 flags)
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

static int sum_counters(struct ia_xdp *x, int map_fd, const void *key, struct ia_counters *out)
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

/*
 * Waits until no XDP program still runs with state looked up before now:
 * the datapath runs under RCU, and MEMBARRIER_CMD_GLOBAL is a
 * synchronize_rcu(). Called before a job slot or port index is reused.
 */
static void rcu_wait(void)
{
	if (syscall(__NR_membarrier, MEMBARRIER_CMD_GLOBAL, 0, 0))
		usleep(100000);	/* nohz_full: no global barrier; grace periods are ms */
}

/* Claims the first free index of kind from first (wrapping over n); value: owner. */
static int own_claim(struct ia_xdp *x, __u32 kind, __u32 first, __u32 n, __u32 base,
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

static void own_release(struct ia_xdp *x, __u32 kind, __u32 index)
{
	struct ia_owner_key k = { .kind = kind, .index = index };

	bpf_map_delete_elem(bpf_map__fd(x->skel->maps.ia_owners), &k);
}

static int port_map_fd(struct ia_xdp *x, __u32 ifindex)
{
	return bpf_map__fd(ifindex < IA_PORT_DIRECT ? x->skel->maps.ia_ports :
						   x->skel->maps.ia_ports_far);
}

/* The port index of ifindex, or -ENOENT. */
static int port_index(struct ia_xdp *x, __u32 ifindex, __u32 *idx)
{
	int err = bpf_map_lookup_elem(port_map_fd(x, ifindex), &ifindex, idx);

	if (err)
		return err;
	return *idx ? 0 : -ENOENT;
}

int ia_xdp_port_add(struct ia_xdp *x, int ifindex)
{
	struct bpf_devmap_val dv = {
		.ifindex = ifindex,
		.bpf_prog.fd = ia_xdp_egress_fd(x),
	};
	__u32 key = ifindex, idx;
	int err;

	if (ifindex <= 0)
		return -EINVAL;
	err = bpf_map_update_elem(bpf_map__fd(x->skel->maps.ia_dports), &key, &dv, BPF_ANY);
	if (err)
		return err;
	/* Keep counters of a port that is attached again. */
	if (!port_index(x, key, &idx))
		return 0;
	err = own_claim(x, IA_OWN_PORT, 0, IA_MAX_PORTS, 1, key, &idx);
	if (err)
		return err;
	err = zero_counters(x, bpf_map__fd(x->skel->maps.ia_pstats), &idx, BPF_ANY);
	if (!err)
		err = bpf_map_update_elem(port_map_fd(x, key), &key, &idx, BPF_ANY);
	if (err)
		own_release(x, IA_OWN_PORT, idx);
	return err;
}

int ia_xdp_port_del(struct ia_xdp *x, int ifindex)
{
	__u32 key = ifindex, idx, zero = 0;
	int err, err2;

	err = bpf_map_delete_elem(bpf_map__fd(x->skel->maps.ia_dports), &key);
	err2 = port_index(x, key, &idx);
	if (err2)
		return err ? err : err2;
	if (key < IA_PORT_DIRECT)
		bpf_map_update_elem(port_map_fd(x, key), &key, &zero, BPF_ANY);
	else
		bpf_map_delete_elem(port_map_fd(x, key), &key);
	rcu_wait();	/* packets of the port may still count into idx */
	own_release(x, IA_OWN_PORT, idx);
	return err;
}

int ia_xdp_attach(struct ia_xdp *x, int ifindex, __u32 xdp_flags)
{
	int err;

	err = ia_xdp_port_add(x, ifindex);
	if (err)
		return err;
	err = bpf_xdp_attach(ifindex, ia_xdp_prog_fd(x), xdp_flags, NULL);
	if (err)
		ia_xdp_port_del(x, ifindex);
	return err;
}

int ia_xdp_detach(struct ia_xdp *x, int ifindex, __u32 xdp_flags)
{
	int err = bpf_xdp_detach(ifindex, xdp_flags, NULL);

	ia_xdp_port_del(x, ifindex);
	return err;
}

int ia_xdp_attach_pass(struct ia_xdp *x, int ifindex, __u32 xdp_flags)
{
	return bpf_xdp_attach(ifindex, bpf_program__fd(x->skel->progs.ia_pass), xdp_flags, NULL);
}

/* Deletes every key of a {job, ...} map whose first __u32 is job. */
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
	rcu_wait();
	for (i = 0; i < n; i++)
		own_release(x, IA_OWN_JOB, slot[i]);
	return err;
}

static int valid_job(const struct ia_xdp_job *j)
{
	__u32 i;

	if (j->role != IA_ROLE_RED && j->role != IA_ROLE_BLUE)
		return -EINVAL;
	if (!j->nmembers || j->nmembers > IA_MAX_FANIN || !j->members)
		return -EINVAL;
	if (j->role == IA_ROLE_BLUE && (!j->window || j->window > IA_MAX_WINDOW))
		return -EINVAL;
	if (j->up.ifindex <= 0 || (j->ndown && !j->down))
		return -EINVAL;
	for (i = 0; i < j->ndown; i++)
		if (j->down[i].ifindex <= 0 || j->down[i].ifindex == j->up.ifindex)
			return -EINVAL;
	return 0;
}

static int add_slots(struct ia_xdp *x, const struct ia_xdp_job *j, __u32 slot)
{
	LIBBPF_OPTS(bpf_map_create_opts, o,
		.btf_fd = bpf_object__btf_fd(x->skel->obj),
		.btf_key_type_id = x->key_btf_id,
		.btf_value_type_id = x->slot_btf_id,
		.map_flags = BPF_F_INNER_MAP,
	);
	char name[BPF_OBJ_NAME_LEN];
	int fd, err;

	snprintf(name, sizeof(name), "ia_slots_%u", j->id);
	fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, name, sizeof(__u32), sizeof(struct ia_slot),
			    j->window, &o);
	if (fd < 0)
		return fd;
	/* The outer map now holds the only reference: freed with the job. */
	err = bpf_map_update_elem(bpf_map__fd(x->skel->maps.ia_slots), &slot, &fd, BPF_ANY);
	close(fd);
	return err;
}

/* Creates an array, fills it and makes it outer[key]'s inner map (its only reference). */
static int add_inner(int outer, __u32 key, const char *name, __u32 vsize, __u32 n,
		     __u32 flags, const void *vals)
{
	LIBBPF_OPTS(bpf_map_create_opts, o, .map_flags = flags);
	__u32 i;
	int fd, err = 0;

	fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, name, sizeof(__u32), vsize, n, &o);
	if (fd < 0)
		return fd;
	for (i = 0; i < n && !err; i++)
		err = bpf_map_update_elem(fd, &i, (const char *)vals + (size_t)i * vsize, BPF_ANY);
	if (!err)
		err = bpf_map_update_elem(outer, &key, &fd, BPF_ANY);
	close(fd);
	return err;
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
		k = (j->members[i].sender * IA_MHASH_MUL) >> (32 - bits);
		for (d = 0; t[k].m.nworkers; d++)
			k = (k + 1) & mask;
		if (d >= IA_MPROBE_MAX)
			return 0;
		t[k].sender = j->members[i].sender;
		t[k].m.index = i;
		t[k].m.nworkers = j->members[i].nworkers;
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
		err = add_inner(bpf_map__fd(x->skel->maps.ia_mtab), cfg->slot, name, sizeof(*t),
				1u << cfg->mbits, BPF_F_INNER_MAP, t);
	}
	free(t);
	return err;
}

int ia_xdp_job_add(struct ia_xdp *x, const struct ia_xdp_job *j)
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

	/* Start at id % IA_MAX_JOBS: a job added again gets its slot back. */
	err = own_claim(x, IA_OWN_JOB, j->id % IA_MAX_JOBS, IA_MAX_JOBS, 0, j->id, &cfg.slot);
	if (err)
		return err;
	if (j->role == IA_ROLE_BLUE) {
		err = add_slots(x, j, cfg.slot);
		if (err)
			goto err;
	}
	for (i = 0; i < j->nmembers; i++) {
		struct ia_member_key k = { .job = j->id, .sender = j->members[i].sender };
		struct ia_member m = { .index = i, .nworkers = j->members[i].nworkers };

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
	err = zero_counters(x, bpf_map__fd(x->skel->maps.ia_jstats), &cfg.slot, BPF_ANY);
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
		err = add_inner(bpf_map__fd(x->skel->maps.ia_jfast), cfg.slot, name,
				sizeof(ent), 1, 0, &ent);
		if (err)
			goto err;
	}
	return 0;
err:
	ia_xdp_job_del(x, j->id);
	return err;
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

	return err ?: sum_counters(x, bpf_map__fd(x->skel->maps.ia_jstats), &slot, out);
}

int ia_xdp_port_counters(struct ia_xdp *x, int ifindex, struct ia_counters *out)
{
	__u32 idx;
	int err = port_index(x, ifindex, &idx);

	return err ?: sum_counters(x, bpf_map__fd(x->skel->maps.ia_pstats), &idx, out);
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
	err = bpf_map_lookup_elem_flags(fd, &idx, out, BPF_F_LOCK);
	close(fd);
	return err;
}
