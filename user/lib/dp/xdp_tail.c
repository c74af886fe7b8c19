// SPDX-License-Identifier: GPL-2.0
/*
 * The tail of a switch: its pool of slots (ia_slots[IA_TAIL_SLOT]) and its
 * directory (ia_tdir), the counters read back. See xdp.h and
 * docs/memory.md ("Loader API for the tail").
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "xdp_int.h"
#include "bpf/inagg_tail.skel.h"

/*
 * The tail's programs (bpf/inagg_tail.bpf.c), loaded on this switch's maps
 * the first time a tail job is added here and left in ia_progs, which holds
 * them (pinned with the maps): switches without PS jobs never verify them.
 */
static int tail_load(struct ia_xdp *x, char *why, size_t whylen)
{
	int progs = bpf_map__fd(x->skel->maps.ia_progs), fd, err;
	struct inagg_tail *t;
	__u32 key = IA_PROGS_TAIL, id;

	if (!bpf_map_lookup_elem(progs, &key, &id))
		return 0;	/* loaded before (by this process or another) */
	t = inagg_tail__open();
	if (!t)
		return -errno;
	err = ia_xdp_share_maps(x, t->obj);
	if (err)
		goto out;
	err = inagg_tail__load(t);
	if (err) {
		err = ia_fail(why, whylen, err,
			      "loading the tail's programs failed (verifier or kernel)");
		goto out;
	}
	fd = bpf_program__fd(t->progs.ia_evict);
	key = IA_PROGS_EVICT;
	err = bpf_map_update_elem(progs, &key, &fd, BPF_ANY);
	if (err)
		goto out;
	/* IA_PROGS_TAIL last: it tells the tail loaded. */
	fd = bpf_program__fd(t->progs.ia_tail);
	key = IA_PROGS_TAIL;
	err = bpf_map_update_elem(progs, &key, &fd, BPF_ANY);
out:
	inagg_tail__destroy(t);
	return err;
}

int ia_xdp_tail_load(struct ia_xdp *x, char *why, size_t whylen)
{
	ia_xdp_err_start(why, whylen);
	return ia_xdp_said(why, whylen, tail_load(x, why, whylen));
}

/* The inner map at outer[key], opened (caller closes), or a negative errno. */
static int inner_fd(struct bpf_map *outer, __u32 key)
{
	__u32 id;
	int err = bpf_map_lookup_elem(bpf_map__fd(outer), &key, &id);

	if (err)
		return err;
	return bpf_map_get_fd_by_id(id);
}

/* The published directory; an empty one (gen 0) if none was published. */
static int dir_read(struct ia_xdp *x, struct ia_tail_dir *d)
{
	__u32 zero = 0;
	int fd, err;

	memset(d, 0, sizeof(*d));
	fd = inner_fd(x->skel->maps.ia_tdir, 0);
	if (fd == -ENOENT)
		return 0;
	if (fd < 0)
		return fd;
	err = bpf_map_lookup_elem(fd, &zero, d);
	close(fd);
	return err;
}

/* Inserted whole: a packet sees the old generation or this one. */
static int dir_publish(struct ia_xdp *x, struct ia_tail_dir *d, const struct ia_tail_dir *old)
{
	__u32 i, k, oldk;

	d->gen = old->gen + 1;
	d->lends = old->lends;
	d->reclaims = old->reclaims;
	d->total = d->tail;
	for (i = 0; i < d->nseg; i++)
		d->total += d->seg[i].count;
	/* Lends and reclaims: per job, what its count gained or lost. */
	for (i = 0; i < d->nseg; i++) {
		for (k = 0, oldk = 0; k < old->nseg; k++)
			if (old->seg[k].job == d->seg[i].job)
				oldk = old->seg[k].count;
		if (d->seg[i].count > oldk)
			d->lends += d->seg[i].count - oldk;
		else
			d->reclaims += oldk - d->seg[i].count;
	}
	for (k = 0; k < old->nseg; k++) {
		for (i = 0; i < d->nseg && d->seg[i].job != old->seg[k].job; i++)
			;
		if (i == d->nseg)
			d->reclaims += old->seg[k].count;
	}
	return ia_xdp_add_inner(x, x->skel->maps.ia_tdir, IA_INNER_TDIR, 0, "ia_tdir", 1, 1, d);
}

/* A blue job of this switch: its configuration. */
static int blue_cfg(struct ia_xdp *x, __u32 job, struct ia_job_cfg *cfg)
{
	int err = bpf_map_lookup_elem(bpf_map__fd(x->skel->maps.ia_jobs), &job, cfg);

	if (err)
		return err;
	return cfg->role == IA_ROLE_BLUE ? 0 : -EINVAL;
}

static __u32 tail_size(struct ia_xdp *x)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);
	int fd = inner_fd(x->skel->maps.ia_slots, IA_TAIL_SLOT);
	__u32 n = 0;

	if (fd < 0)
		return 0;
	if (!bpf_obj_get_info_by_fd(fd, &info, &len))
		n = info.max_entries;
	close(fd);
	return n;
}

static int tail_set(struct ia_xdp *x, const struct ia_xdp_tail *t, char *why, size_t whylen)
{
	struct ia_tail_dir d = {}, old;
	struct ia_job_cfg cfg;
	__u32 i, k, key = IA_TAIL_SLOT;
	int err;

	if (t->slots > IA_MAX_TAIL || t->nlend > IA_TDIR_SEGS || (t->nlend && !t->lend))
		return -EINVAL;
	for (i = 0; i < t->nlend; i++) {
		err = blue_cfg(x, t->lend[i].job, &cfg);
		if (err)
			return ia_fail(why, whylen, err,
				       "job %u lends: not a blue job of this switch",
				       t->lend[i].job);
		if (!t->lend[i].count || t->lend[i].count > cfg.window)
			return ia_fail(why, whylen, -EINVAL,
				       "job %u lends %u slots of a head of %u", t->lend[i].job,
				       t->lend[i].count, cfg.window);
		for (k = 0; k < i; k++)
			if (t->lend[k].job == t->lend[i].job)
				return -EINVAL;
		d.seg[i] = (struct ia_tail_seg){
			.job = t->lend[i].job,
			.slot = cfg.slot,
			.window = cfg.window,
			.first = cfg.window - t->lend[i].count,
			.count = t->lend[i].count,
		};
	}
	d.nseg = t->nlend;
	d.tail = t->slots;
	d.age_ns = t->age_ns ? t->age_ns : IA_TAIL_AGE_NS;
	err = dir_read(x, &old);
	if (err)
		return err;
	/*
	 * No program load here: only ia_tail puts a partial in a slot, and it is
	 * loaded with the first tail job (ia_xdp_job_add()). A pool or a lend on
	 * a switch without PS jobs costs no verification (a controller setting
	 * every switch's tail at its start verified them all).
	 */
	/* A new pool (another size) starts empty; the datapath bounds every index by it. */
	if (t->slots != tail_size(x)) {
		if (!t->slots) {
			err = bpf_map_delete_elem(bpf_map__fd(x->skel->maps.ia_slots), &key);
			if (err && err != -ENOENT)
				return err;
		} else {
			err = ia_xdp_add_inner(x, x->skel->maps.ia_slots, IA_INNER_SLOTS,
					       IA_TAIL_SLOT, "ia_tail", t->slots, 0, NULL);
			if (err)
				return err;
		}
	}
	return dir_publish(x, &d, &old);
}

int ia_xdp_tail_set(struct ia_xdp *x, const struct ia_xdp_tail *t, char *why, size_t whylen)
{
	ia_xdp_err_start(why, whylen);
	return ia_xdp_said(why, whylen, tail_set(x, t, why, whylen));
}

int ia_xdp_tail_forget(struct ia_xdp *x, __u32 job)
{
	struct ia_tail_dir d, old;
	__u32 i, n = 0;
	int err = dir_read(x, &old);

	if (err)
		return err;
	d = old;
	for (i = 0; i < old.nseg; i++)
		if (old.seg[i].job != job)
			d.seg[n++] = old.seg[i];
	if (n == old.nseg)
		return 0;
	d.nseg = n;
	memset(&d.seg[n], 0, sizeof(d.seg[0]) * (IA_TDIR_SEGS - n));
	err = dir_publish(x, &d, &old);
	if (!err)
		ia_xdp_rcu_wait();	/* no packet still uses the old directory */
	return err;
}

int ia_xdp_tail_lent(struct ia_xdp *x, __u32 job, __u32 *count)
{
	struct ia_tail_dir d;
	int err = dir_read(x, &d);
	__u32 i;

	if (err)
		return err;
	*count = 0;
	for (i = 0; i < d.nseg; i++)
		if (d.seg[i].job == job)
			*count = d.seg[i].count;
	return 0;
}

int ia_xdp_tail_info(struct ia_xdp *x, struct ia_xdp_tail_info *out)
{
	int jobs = bpf_map__fd(x->skel->maps.ia_jobs);
	struct ia_counters c;
	struct ia_job_cfg cfg;
	__u32 key, *prev = NULL;
	struct ia_tail_dir d;
	int err, i;

	err = dir_read(x, &d);
	if (err)
		return err;
	memset(out, 0, sizeof(*out));
	key = IA_PROGS_TAIL;
	out->loaded = !bpf_map_lookup_elem(bpf_map__fd(x->skel->maps.ia_progs), &key, &key);
	out->slots = d.tail;
	out->lent = d.total - d.tail;
	out->nlend = d.nseg;
	out->gen = d.gen;
	out->age_ns = d.age_ns;
	out->lends = d.lends;
	out->reclaims = d.reclaims;
	while (!bpf_map_get_next_key(jobs, prev, &key)) {
		prev = &key;
		if (bpf_map_lookup_elem(jobs, &key, &cfg) ||
		    ia_xdp_sum_counters(x, bpf_map__fd(x->skel->maps.ia_jstats), &cfg.slot, &c))
			continue;	/* deleted meanwhile */
		for (i = 0; i < IA_C__COUNT; i++)
			out->c.c[i] += c.c[i];
	}
	return 0;
}

int ia_xdp_tail_slot_read(struct ia_xdp *x, __u32 idx, struct ia_slot *out)
{
	int fd = inner_fd(x->skel->maps.ia_slots, IA_TAIL_SLOT), err;

	if (fd < 0)
		return fd;
	err = bpf_map_lookup_elem(fd, &idx, out);
	close(fd);
	return err;
}
