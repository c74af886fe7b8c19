/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Flushing a PS job's partial aggregate toward its PS (docs/memory.md,
 * "Tail aggregation and exactly-once"). An XDP program sends one frame per
 * frame received, so a flush is a swap: the received message takes the
 * slot, and its frame, resized, leaves carrying the old partial aggregate
 * (type AGG, flags SET | FLUSH, its member set in the trailer). Used by a
 * new claim of a tail slot (dp_tail.h) and by a blue job taking its head
 * slot back (dp_head.h).
 */
#ifndef INAGG_DP_FLUSH_H
#define INAGG_DP_FLUSH_H

#include "dp_send.h"

/* The partial aggregate a slot held, taken out under its lock, sent after. */
struct flushed {
	__u64	set;
	__u32	job;
	__u32	seq;
	__u32	nelem;
	__u32	gen;	/* its job's generation (ia_job_cfg.gen) */
	__u8	flags;
};

/* After a resize: k's pointers again; 0 if the header and n elements plus extra fit. */
static __always_inline int repoint(struct ia_pkt *k, __u32 n, __u32 extra)
{
	void *data = (void *)(long)k->ctx->data;
	void *end = (void *)(long)k->ctx->data_end;

	k->eth = data;
	k->ip = data + sizeof(struct ethhdr);
	k->udp = (void *)(k->ip + 1);
	k->h = (void *)(k->udp + 1);
	k->pl = (void *)(k->h + 1);
	k->end = end;
	/* The header with a constant bound (the verifier learns it), then the rest. */
	if ((void *)k->pl > end || n > IA_MAX_ELEMS || extra > IA_SET_LEN ||
	    (void *)k->pl + 4 * n + extra > end)
		return -1;
	return 0;
}

/* Frame of len bytes (grown or shrunk at its end); -1 if the driver has no room. */
static __always_inline int frame_resize(struct ia_pkt *k, __u32 len)
{
	int cur = (int)(k->ctx->data_end - k->ctx->data);

	if (cur == (int)len)
		return 0;
	return bpf_xdp_adjust_tail(k->ctx, (int)len - cur) ? -1 : 0;
}

/*
 * Before taking a slot's lock (helpers cannot run under it): room in the
 * frame for a flush, which swaps a partial of the message's own length
 * and adds the trailer. 0 if there is, -1 if not (the caller does not
 * flush), -2 if the frame no longer holds the message (the caller drops
 * it). k's pointers are valid unless -2.
 */
static __always_inline int flush_room(struct ia_pkt *k)
{
	__u32 n = k->nelem, want = IA_FRAME_LEN(n) + IA_SET_LEN;
	__u32 extra = k->h->flags & IA_F_SET;
	int err;

	if ((__u32)(k->ctx->data_end - k->ctx->data) >= want)
		return 0;
	err = frame_resize(k, want);
	/* Even a failed resize leaves the verifier no packet pointer: reload them. */
	if (repoint(k, n, extra))
		return -2;
	return err;
}

static __always_inline void set_put(__u32 *t, __u64 set)
{
	t[0] = bpf_htonl((__u32)(set >> 32));
	t[1] = bpf_htonl((__u32)set);
}

/* The frame already holds f's sums: make it f's flush and send it up to f's job's PS. */
static __always_inline int send_flush(struct ia_pkt *k, const struct flushed *f)
{
	struct ia_job_cfg *cfg = job_cfg(f->job);
	__u32 n = f->nelem, *t;
	struct ia_hdr *h;

	/*
	 * Its job left the switch meanwhile (or was added again since: another
	 * generation): the partial is lost (its members retransmit), a discard
	 * counted on the job whose message took the slot, like any other.
	 */
	if (!cfg || cfg->role != IA_ROLE_TAIL || cfg->gen != f->gen || !n || n > IA_MAX_ELEMS)
		goto discard;
	if (frame_resize(k, IA_FRAME_LEN(n) + IA_SET_LEN) || repoint(k, n, IA_SET_LEN))
		goto discard;
	t = k->pl + n;
	if ((void *)(t + 2) > k->end)
		goto discard;
	set_put(t, f->set);
	h = k->h;
	HDR32(h, job) = bpf_htonl(f->job);
	HDR32(h, seq) = bpf_htonl(f->seq);
	HDR16(h, nelem) = bpf_htons(n);
	k->udp->len = bpf_htons(IA_UDP_LEN(n) + IA_SET_LEN);
	k->ip->tot_len = bpf_htons(sizeof(struct iphdr) + IA_UDP_LEN(n) + IA_SET_LEN);
	k->nelem = n;
	k->job = f->job;
	k->cfg = cfg;
	k->j = jstats(cfg);
	ctr(k->j, IA_C_TAIL_FLUSH);
	return send_aggregate(k, __builtin_popcountll(f->set),
			      IA_F_SET | IA_F_FLUSH | (f->flags & (IA_F_MARK | IA_F_COLL)));
discard:
	ctr(k->j, IA_C_TAIL_DISCARD);
	return XDP_DROP;
}

#endif /* INAGG_DP_FLUSH_H */
