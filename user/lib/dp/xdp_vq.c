// SPDX-License-Identifier: GPL-2.0
/*
 * Ports' virtual queues: the rates and thresholds the datapath marks by,
 * written whole under the value's lock, and read back. See xdp_vq.h.
 */
#include <errno.h>
#include <string.h>
#include <time.h>
#include <bpf/bpf.h>

#include "xdp_int.h"
#include "xdp_vq.h"
#include "bpf/inagg_other.skel.h"

/* Drain time of n bytes at ps picoseconds per byte, in ns. */
static __u64 drain_ns(__u64 n, __u64 ps)
{
	return n * ps / 1000;
}

static int write_vq(struct ia_xdp *x, __u32 idx, const struct ia_vq *v)
{
	return bpf_map_update_elem(bpf_map__fd(x->skel->maps.ia_vq), &idx, v, BPF_F_LOCK);
}

int ia_xdp_vq_reset(struct ia_xdp *x, __u32 idx)
{
	struct ia_vq v = {};

	return write_vq(x, idx, &v);
}

/*
 * ia_other (bpf/inagg_other.bpf.c) on this switch's maps, into ia_progs
 * where ia_xdp tail-calls it for every frame it passes: once per switch
 * (ia_progs is pinned with the maps), the first time a port gets a queue.
 */
static int other_load(struct ia_xdp *x, char *why, size_t whylen)
{
	int progs = bpf_map__fd(x->skel->maps.ia_progs), fd, err;
	__u32 key = IA_PROGS_OTHER, id;
	struct inagg_other *o;

	if (!bpf_map_lookup_elem(progs, &key, &id))
		return 0;
	o = inagg_other__open();
	if (!o)
		return -errno;
	err = ia_xdp_share_maps(x, o->obj);
	if (err)
		goto out;
	err = inagg_other__load(o);
	if (err) {
		err = ia_fail(why, whylen, err, "loading ia_other failed (verifier or kernel)");
		goto out;
	}
	fd = bpf_program__fd(o->progs.ia_other);
	err = bpf_map_update_elem(progs, &key, &fd, BPF_ANY);
out:
	inagg_other__destroy(o);
	return err;
}

static int vq_set(struct ia_xdp *x, int ifindex, const struct ia_xdp_vq *q, char *why,
		  size_t whylen)
{
	__u64 limit = q->limit;
	struct ia_vq v = {};
	__u32 idx;
	int err;

	if (q->rate_bps > IA_VQ_RATE_MAX)
		return -EINVAL;
	if (!limit) {
		limit = 4ull * q->thresh;
		if (limit < q->thresh + 65536ull)
			limit = q->thresh + 65536ull;
	}
	if (q->rate_bps && limit <= q->thresh)
		return -EINVAL;
	err = ia_xdp_port_index(x, ifindex, &idx);
	if (err)
		return err;
	if (q->rate_bps) {
		v.rate_bps = q->rate_bps;
		v.thresh = q->thresh;
		v.limit = limit;
		/* Rounded to the nearest picosecond per byte. */
		v.ps_per_byte = (IA_VQ_RATE_MAX + q->rate_bps / 2) / q->rate_bps;
		v.thresh_ns = drain_ns(q->thresh, v.ps_per_byte);
		v.limit_ns = drain_ns(limit, v.ps_per_byte);
		err = other_load(x, why, whylen);
		if (err)
			return err;
	}
	return write_vq(x, idx, &v);
}

int ia_xdp_vq_set(struct ia_xdp *x, int ifindex, const struct ia_xdp_vq *q, char *why,
		  size_t whylen)
{
	ia_xdp_err_start(why, whylen);
	return ia_xdp_said(why, whylen, vq_set(x, ifindex, q, why, whylen));
}

int ia_xdp_vq_get(struct ia_xdp *x, int ifindex, struct ia_xdp_vq_info *out)
{
	struct ia_vq v;
	struct timespec ts;
	__u64 now;
	__u32 idx;
	int err;

	memset(out, 0, sizeof(*out));
	err = ia_xdp_port_index(x, ifindex, &idx);
	if (err)
		return err;
	err = bpf_map_lookup_elem_flags(bpf_map__fd(x->skel->maps.ia_vq), &idx, &v, BPF_F_LOCK);
	if (err)
		return err;
	/* bpf_ktime_get_ns() is CLOCK_MONOTONIC. */
	clock_gettime(CLOCK_MONOTONIC, &ts);
	now = (__u64)ts.tv_sec * 1000000000ull + ts.tv_nsec;
	out->cfg.rate_bps = v.rate_bps;
	out->cfg.thresh = v.thresh;
	out->cfg.limit = v.limit;
	if (v.ps_per_byte && v.finish > now)
		out->backlog = (v.finish - now) * 1000 / v.ps_per_byte;
	out->msgs = v.msgs;
	out->bytes = v.bytes;
	out->marked = v.marked;
	out->full = v.full;
	out->other = v.other;
	out->other_bytes = v.other_bytes;
	out->other_full = v.other_full;
	return 0;
}
