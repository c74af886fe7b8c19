// SPDX-License-Identifier: GPL-2.0
/*
 * inagg XDP datapath: one program attached to every port of a switch.
 *
 * Upward messages (CONTRIB, AGG) of a job are forwarded to the parent
 * unchanged on a red switch, and summed into the job's aggregator slot on a
 * blue one, which sends exactly one aggregate up when all members are in.
 * Results coming down from the parent are broadcast to the switch's ports;
 * ia_egress keeps them only on the job's down-tree ports. Anything that is
 * not UDP/IPv4 to IA_UDP_PORT is passed to the kernel untouched.
 * Layouts and semantics: include/inagg/{wire,maps}.h, docs/datapath.md.
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/udp.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

#include "inagg/wire.h"
#include "inagg/maps.h"

char LICENSE[] SEC("license") = "GPL";

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
	__uint(max_entries, IA_MAX_JOBS);
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

/* Index 0 is no port: never counted, never read. */
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

static __always_inline void ctr(struct ia_counters *c, int i)
{
	if (c)
		c->c[i]++;
}

static __always_inline struct ia_counters *pstats(__u32 ifindex)
{
	__u32 *idx;

	if (ifindex < IA_PORT_DIRECT)
		idx = bpf_map_lookup_elem(&ia_ports, &ifindex);
	else
		idx = bpf_map_lookup_elem(&ia_ports_far, &ifindex);
	if (!idx || !*idx)
		return NULL;	/* not a port of this switch */
	return bpf_map_lookup_elem(&ia_pstats, idx);
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

static __always_inline int drop(struct ia_counters *p, struct ia_counters *j, int why)
{
	ctr(p, why);
	ctr(j, why);
	return XDP_DROP;
}

/* IPv4 frag_off bits: more fragments, fragment offset (only DF may be set). */
#define IP_MF		0x2000
#define IP_OFFSET	0x1fff

/* Full recompute of a header without options: cheaper to reason about than incremental. */
static __always_inline void ip_csum(struct iphdr *ip)
{
	__u16 *w = (__u16 *)ip;
	__u32 s = 0;
	int i;

	ip->check = 0;
#pragma clang loop unroll(full)
	for (i = 0; i < (int)(sizeof(*ip) / sizeof(*w)); i++)
		s += w[i];
	s = (s & 0xffff) + (s >> 16);
	s = (s & 0xffff) + (s >> 16);
	ip->check = (__u16)~s;
}

static __always_inline void set_macs(struct ethhdr *eth, const __u8 *src, const __u8 *dst)
{
	__builtin_memcpy(eth->h_source, src, ETH_ALEN);
	__builtin_memcpy(eth->h_dest, dst, ETH_ALEN);
}

enum slot_op {
	OP_COPY,	/* first contribution: slot = pkt */
	OP_ADD,		/* slot += pkt */
	OP_ADD_OUT,	/* last contribution: slot += pkt, pkt = slot */
	OP_OUT,		/* re-emission: pkt = slot */
};

static __always_inline void elem_apply(__u32 *sum, __u32 *pl, __u32 i, int op)
{
	if (op == OP_COPY)
		sum[i] = pl[i];
	else if (op == OP_ADD)
		sum[i] += pl[i];
	else if (op == OP_ADD_OUT)
		pl[i] = sum[i] += pl[i];
	else
		pl[i] = sum[i];
}

/*
 * Element loop. A plain bounded loop: full unrolling halves the rate, and
 * the 256-element case needs one packet bounds check instead of one per
 * element. Sums wrap (unsigned arithmetic, see wire.h).
 */
static __always_inline void slot_apply(struct ia_slot *s, __u32 *pl, void *end, __u32 n, int op)
{
	__u32 *sum = (__u32 *)s->sum;
	__u32 i;

	if (n == IA_MAX_ELEMS && (void *)(pl + IA_MAX_ELEMS) <= end) {
#pragma clang loop unroll_count(8)
		for (i = 0; i < IA_MAX_ELEMS; i++)
			elem_apply(sum, pl, i, op);
		return;
	}
	for (i = 0; i < IA_MAX_ELEMS; i++) {
		if (i >= n || (void *)(pl + i + 1) > end)
			break;
		elem_apply(sum, pl, i, op);
	}
}

enum blue_verdict {
	BV_ADDED,	/* consumed */
	BV_EMIT,	/* chunk complete: packet now holds the aggregate */
	BV_REEMIT,	/* chunk was complete: packet now holds the stored aggregate */
	BV_DUP,
	BV_WINDOW,
	BV_NELEM,
};

/* A contribution on its way into a slot; nworkers and flags: the aggregate's, on EMIT/REEMIT. */
struct contrib {
	__u32	*pl;		/* payload: nelem elements before end */
	void	*end;
	__u32	seq;
	__u32	nelem;
	__u32	nworkers;	/* out */
	__u8	flags;		/* in: the message's; out: the aggregate's */
};

static __always_inline int blue_slot(struct ia_slot *s, struct bpf_spin_lock *lock,
				     const struct ia_job_cfg *cfg, const struct ia_member *m,
				     struct contrib *c)
{
	__u32 word = m->index / 64, seq = c->seq, n = c->nelem;
	__u64 bit = 1ULL << (m->index % 64);
	int v, i;

	if (word >= IA_MAX_FANIN / 64)
		return BV_WINDOW;	/* loader guarantees index < expected <= IA_MAX_FANIN */

	bpf_spin_lock(lock);
	if (s->state == IA_SLOT_DONE && s->seq == seq) {
		if (s->nelem != n) {
			v = BV_NELEM;
			goto out;
		}
		slot_apply(s, c->pl, c->end, n, OP_OUT);
		c->nworkers = s->nworkers;
		c->flags = s->flags;
		v = BV_REEMIT;
		goto out;
	}
	if (s->state == IA_SLOT_OPEN && s->seq == seq) {
		if (s->nelem != n) {
			v = BV_NELEM;
			goto out;
		}
		if (s->seen[word] & bit) {
			v = BV_DUP;
			goto out;
		}
	} else if ((s->state == IA_SLOT_EMPTY && seq - cfg->base_seq < cfg->window) ||
		   (s->state == IA_SLOT_DONE && seq == s->seq + cfg->window)) {
		/* First contribution of this chunk: (re)claim the slot. */
		s->seq = seq;
		s->state = IA_SLOT_OPEN;
		s->nseen = 0;
		s->nworkers = 0;
		s->nelem = n;
		s->flags = 0;
		/* Bits beyond expected are never set. */
		for (i = 0; i < IA_MAX_FANIN / 64 && i < (cfg->expected + 63) / 64; i++)
			s->seen[i] = 0;
	} else {
		/* Stale, too far ahead, or the previous chunk here is not done. */
		v = BV_WINDOW;
		goto out;
	}

	s->seen[word] |= bit;
	s->nworkers += m->nworkers;
	s->flags |= c->flags & IA_F_MARK;
	v = ++s->nseen >= cfg->expected ? BV_EMIT : BV_ADDED;
	if (s->nseen == 1)
		slot_apply(s, c->pl, c->end, n, OP_COPY);	/* packet already holds the sum */
	else if (v == BV_EMIT)
		slot_apply(s, c->pl, c->end, n, OP_ADD_OUT);
	else
		slot_apply(s, c->pl, c->end, n, OP_ADD);
	if (v == BV_EMIT) {
		s->state = IA_SLOT_DONE;
		c->nworkers = s->nworkers;
		c->flags = s->flags;
	}
out:
	bpf_spin_unlock(lock);
	return v;
}

/*
 * ia_hdr is packed (alignment 1), so its fields would be loaded byte by
 * byte; its 32-bit fields are 4-byte aligned in the frame (wire.h).
 */
#define HDR32(h, f)	(*(__be32 *)((void *)(h) + __builtin_offsetof(struct ia_hdr, f)))
#define HDR16(h, f)	(*(__be16 *)((void *)(h) + __builtin_offsetof(struct ia_hdr, f)))

static __always_inline int send_up(struct xdp_md *ctx, const struct ia_job_cfg *cfg,
				   struct ethhdr *eth, struct ia_counters *j, __u8 flags)
{
	struct ia_counters *up = pstats(cfg->up_ifindex);

	ctr(j, IA_C_TX);
	ctr(up, IA_C_TX);
	if (flags & IA_F_RECOVERY) {
		ctr(j, IA_C_RECOVERY_TX);
		ctr(up, IA_C_RECOVERY_TX);
	}
	if (cfg->flags & IA_JOB_F_KERNEL_FWD)
		return XDP_PASS;	/* routed up by the kernel, through its qdisc */
	set_macs(eth, cfg->up_smac, cfg->up_dmac);
	return bpf_redirect(cfg->up_ifindex, 0);
}

SEC("xdp")
int ia_xdp(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	struct iphdr *ip = data + sizeof(*eth);
	struct udphdr *udp = (void *)(ip + 1);
	struct ia_hdr *h = (void *)(udp + 1);
	__u32 *pl = (void *)(h + 1);
	struct ia_counters *p, *j;
	struct ia_slot_lock *lock;
	struct ia_job_cfg *cfg;
	struct ia_member *m;
	struct contrib c;
	struct ia_slot *s;
	__u32 job, n, idx;
	void *slots;
	int v;

	/* Classify without side effects: only UDP/IPv4 to our port is ours. */
	if ((void *)(udp + 1) > end || eth->h_proto != bpf_htons(ETH_P_IP) ||
	    ip->protocol != IPPROTO_UDP || ip->version != 4)
		goto pass;
	if (ip->ihl == 5) {
		if (udp->dest != bpf_htons(IA_UDP_PORT))
			goto pass;
	} else {
		/* UDP header elsewhere: ours only if it says so. */
		struct udphdr *u = data + sizeof(*eth) + ip->ihl * 4;

		if (ip->ihl < 5 || (void *)(u + 1) > end || u->dest != bpf_htons(IA_UDP_PORT))
			goto pass;
	}

	p = pstats(ctx->ingress_ifindex);
	ctr(p, IA_C_RX);
	/* Ours but unparsed: options move the header, later fragments carry none. */
	if (ip->ihl != 5 || (ip->frag_off & bpf_htons(IP_MF | IP_OFFSET)))
		return drop(p, NULL, IA_C_DROP_SHORT);
	if ((void *)pl > end)
		return drop(p, NULL, IA_C_DROP_SHORT);
	if (h->ver != IA_VERSION)
		return drop(p, NULL, IA_C_DROP_VERSION);
	n = bpf_ntohs(HDR16(h, nelem));
	if (n == 0 || n > IA_MAX_ELEMS || bpf_ntohs(udp->len) != IA_UDP_LEN(n) ||
	    bpf_ntohs(ip->tot_len) != sizeof(*ip) + IA_UDP_LEN(n))
		return drop(p, NULL, IA_C_DROP_NELEM);
	if ((void *)pl + 4 * n > end)
		return drop(p, NULL, IA_C_DROP_SHORT);

	job = bpf_ntohl(HDR32(h, job));
	cfg = job_cfg(job);
	if (!cfg)
		return drop(p, NULL, IA_C_DROP_JOB);
	j = jstats(cfg);
	ctr(j, IA_C_RX);

	if (h->type == IA_MSG_RESULT) {
		if (ctx->ingress_ifindex != cfg->up_ifindex)
			return drop(p, j, IA_C_DROP_TYPE);
		ctr(p, IA_C_RESULT);
		ctr(j, IA_C_RESULT);
		return bpf_redirect_map(&ia_dports, 0, BPF_F_BROADCAST | BPF_F_EXCLUDE_INGRESS);
	}
	if ((h->type != IA_MSG_CONTRIB && h->type != IA_MSG_AGG) ||
	    ctx->ingress_ifindex == cfg->up_ifindex)
		return drop(p, j, IA_C_DROP_TYPE);

	m = member(cfg, job, bpf_ntohl(HDR32(h, sender)));
	if (!m || m->nworkers != bpf_ntohl(HDR32(h, nworkers)))
		return drop(p, j, IA_C_DROP_MEMBER);

	if (h->flags & IA_F_RECOVERY) {
		ctr(p, IA_C_RECOVERY_RX);
		ctr(j, IA_C_RECOVERY_RX);
	}
	if (cfg->role != IA_ROLE_BLUE) {
		ctr(j, IA_C_FWD);
		return send_up(ctx, cfg, eth, j, h->flags);
	}

	c.seq = bpf_ntohl(HDR32(h, seq));
	idx = cfg->slot;
	slots = bpf_map_lookup_elem(&ia_slots, &idx);
	if (!slots || !cfg->window)
		return drop(p, j, IA_C_DROP_JOB);
	/* A division costs more than the rest of the slot lookup. */
	if (cfg->window & (cfg->window - 1))
		idx = c.seq % cfg->window;
	else
		idx = c.seq & (cfg->window - 1);
	s = bpf_map_lookup_elem(slots, &idx);
	idx = ia_lock_index(cfg->slot, idx);
	lock = bpf_map_lookup_elem(&ia_locks, &idx);
	if (!s || !lock)
		return drop(p, j, IA_C_DROP_WINDOW);

	c.pl = pl;
	c.end = end;
	c.nelem = n;
	c.flags = h->flags;
	c.nworkers = 0;
	v = blue_slot(s, &lock->lock, cfg, m, &c);
	switch (v) {
	case BV_ADDED:
		ctr(j, IA_C_AGGREGATED);
		return XDP_DROP;
	case BV_DUP:
		ctr(j, IA_C_DUP);
		return XDP_DROP;
	case BV_WINDOW:
		return drop(p, j, IA_C_DROP_WINDOW);
	case BV_NELEM:
		return drop(p, j, IA_C_DROP_NELEM);
	case BV_EMIT:
		ctr(j, IA_C_AGGREGATED);
		ctr(j, IA_C_EMIT);
		break;
	default:
		ctr(j, IA_C_REEMIT);
		c.flags |= IA_F_REEMIT;
		break;
	}

	/* The packet now carries the aggregate: make it this switch's message. */
	h->type = IA_MSG_AGG;
	HDR32(h, sender) = bpf_htonl(cfg->self_id);
	HDR32(h, nworkers) = bpf_htonl(c.nworkers);
	h->flags = c.flags;
	/* The kernel drops what arrives from one of its own addresses. */
	if (cfg->up_saddr && !(cfg->flags & IA_JOB_F_KERNEL_FWD))
		ip->saddr = cfg->up_saddr;
	if (cfg->up_daddr)
		ip->daddr = cfg->up_daddr;
	ip_csum(ip);
	udp->check = 0;	/* payload changed; zero is valid for UDP/IPv4 */
	return send_up(ctx, cfg, eth, j, c.flags);
pass:
	ctr(pstats(ctx->ingress_ifindex), IA_C_PASS);
	return XDP_PASS;
}

/*
 * Runs on each port a result is broadcast to: keeps it only on the job's
 * down-tree ports, rewritten for the next hop there.
 */
SEC("xdp/devmap")
int ia_egress(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	struct iphdr *ip = data + sizeof(*eth);
	struct udphdr *udp = (void *)(ip + 1);
	struct ia_hdr *h = (void *)(udp + 1);
	struct ia_job_cfg *cfg;
	struct ia_down_key k;
	struct ia_down *d;

	if ((void *)(h + 1) > end || h->type != IA_MSG_RESULT)
		return XDP_PASS;
	k.job = bpf_ntohl(HDR32(h, job));
	k.ifindex = ctx->egress_ifindex;
	d = bpf_map_lookup_elem(&ia_down, &k);
	if (!d)
		return XDP_DROP;	/* no worker of this job behind this port */
	set_macs(eth, d->smac, d->dmac);
	if (d->daddr) {
		ip->daddr = d->daddr;
		ip_csum(ip);
		udp->check = 0;
	}
	ctr(pstats(k.ifindex), IA_C_TX);
	cfg = job_cfg(k.job);
	if (cfg)
		ctr(jstats(cfg), IA_C_TX);
	return XDP_PASS;
}

/* XDP_PASS for a host-side veth that receives redirected frames (a veth peer needs a program). */
SEC("xdp")
int ia_pass(struct xdp_md *ctx)
{
	return XDP_PASS;
}

/*
 * Never loaded ("?"): clang 14 emits only a forward declaration for the
 * value of a map-in-map's inner map, which libbpf cannot size. Naming the
 * types here puts them whole into BTF, where libbpf sizes the inner map
 * templates and the loader finds the types to create each job's inner maps
 * with (kernels up to 6.1 insert an inner map only if its BTF-derived layout
 * matches the template's).
 */
SEC("?xdp")
int ia_btf_types(struct xdp_md *ctx)
{
	volatile __u32 id = __builtin_btf_type_id(*(struct ia_slot *)0, 0);

	id = __builtin_btf_type_id(*(struct ia_job_ent *)0, 0);
	id = __builtin_btf_type_id(*(struct ia_mslot *)0, 0);
	(void)id;
	return XDP_PASS;
}
