// SPDX-License-Identifier: GPL-2.0
/*
 * The reference model (model.h): configuration, the parser's checks in the
 * order of docs/datapath.md's table, red forwarding, blue head slots,
 * results down and a blue switch's answers. Written from the docs; where
 * they were silent the docs were completed first ("Reference model").
 * Each rule cites the sentence of docs/datapath.md (DP) or docs/memory.md
 * (MEM) it implements, by section.
 */
#include <string.h>
#include <arpa/inet.h>
#include <linux/bpf.h>

#include "model_int.h"

const char *const m_branch_name[MB__N] = {
	[MB_PASS] = "pass", [MB_DROP_SHORT] = "drop_short", [MB_DROP_VERSION] = "drop_version",
	[MB_DROP_NELEM] = "drop_nelem", [MB_DROP_JOB] = "drop_job", [MB_DROP_TYPE] = "drop_type",
	[MB_DROP_MEMBER] = "drop_member", [MB_DROP_WINDOW] = "drop_window",
	[MB_DROP_SET] = "drop_set", [MB_RED_FWD] = "red forward",
	[MB_BLUE_ADD] = "blue add", [MB_BLUE_EMIT] = "blue emit", [MB_BLUE_DUP] = "blue duplicate",
	[MB_BLUE_REEMIT] = "blue re-emit", [MB_BLUE_ANSWER] = "blue answer (held result)",
	[MB_BLUE_NELEM] = "blue chunk of another nelem", [MB_RESULT_DOWN] = "result down",
	[MB_RESULT_HELD] = "result held", [MB_TAIL_CLAIM] = "tail claim",
	[MB_TAIL_CLAIM_LENT] = "tail claim, lent slot", [MB_TAIL_HIT] = "tail hit",
	[MB_TAIL_COMPLETE] = "tail complete", [MB_TAIL_DUP] = "tail duplicate",
	[MB_TAIL_OVERLAP] = "tail overlap", [MB_TAIL_COLL] = "tail collision",
	[MB_TAIL_FLUSH] = "tail flush by age", [MB_TAIL_DISCARD] = "tail discard (young/length)",
	[MB_TAIL_DISCARD_GEN] = "tail flush of a gone generation", [MB_TAIL_RETX] = "tail retx",
	[MB_TAIL_BYPASS] = "tail bypass", [MB_TAIL_FULL] = "tail whole set passed",
	[MB_TAIL_NODIR] = "tail: no directory", [MB_TAIL_NELEM] = "tail chunk of another nelem",
	[MB_TAIL_HEAD_FREE] = "tail claims a lent DONE slot",
	[MB_EVICT_FLUSH] = "eviction flush", [MB_EVICT_LOST] = "eviction, partial dropped",
	[MB_EVICT_DISCARD_GEN] = "eviction of a gone generation",
	[MB_DROP_PORT] = "drop_port",
};

void m_init(struct m_switch *sw)
{
	memset(sw, 0, sizeof(*sw));
}

int m_port_index(const struct m_switch *sw, int ifindex)
{
	int i;

	for (i = 0; i < sw->nports; i++)
		if (sw->port[i] == ifindex)
			return i;
	return -1;
}

int m_port_add(struct m_switch *sw, int ifindex)
{
	if (m_port_index(sw, ifindex) >= 0)
		return 0;
	if (sw->nports == M_MAX_PORTS)
		return -1;
	sw->port[sw->nports++] = ifindex;
	return 0;
}

struct m_job *m_job_find(struct m_switch *sw, __u32 id)
{
	int i;

	for (i = 0; i < M_MAX_JOBS; i++)
		if (sw->job[i].used && sw->job[i].id == id)
			return &sw->job[i];
	return NULL;
}

/* A job added (again) starts with empty slots, zero counters and a new generation. */
int m_job_add(struct m_switch *sw, __u32 id, __u32 role, __u32 window, __u32 base,
	      __u32 self_id, __u32 n, const struct m_member *mem, const struct m_hop *up,
	      __u32 ndown, const struct m_hop *down)
{
	struct m_job *j = m_job_find(sw, id);
	int i;

	if (!j)
		for (i = 0; i < M_MAX_JOBS && !j; i++)
			if (!sw->job[i].used)
				j = &sw->job[i];
	if (!j || n > M_MAX_MEMBERS || window > M_MAX_WINDOW || ndown > M_MAX_PORTS)
		return -1;
	/* DP "Maps": "A job's counters are zeroed when it is added". */
	memset(j, 0, sizeof(*j));
	j->used = true;
	j->id = id;
	j->role = role;
	j->window = window;
	j->base = base;
	j->self_id = self_id;
	/*
	 * MEM "Tail aggregation": "A tag carries the job's generation too" (no two adds share it).
	 */
	j->gen = ++sw->gen;
	j->n = n;
	memcpy(j->mem, mem, n * sizeof(*mem));
	j->up = *up;
	j->ndown = ndown;
	memcpy(j->down, down, ndown * sizeof(*down));
	return 0;
}

/* A removed job's lend leaves the directory with it. */
int m_job_del(struct m_switch *sw, __u32 id)
{
	struct m_job *j = m_job_find(sw, id);
	__u32 i, k = 0;

	if (!j)
		return -1;
	j->used = false;
	/* MEM "Loader API for the tail": "ia_xdp_job_del() of a lending job withdraws its lend." */
	for (i = 0; i < sw->nlend; i++)
		if (sw->lend[i].job != id)
			sw->lend[k++] = sw->lend[i];
	sw->nlend = k;
	return 0;
}

void m_tail_set(struct m_switch *sw, __u32 slots, bool age_old, __u32 nlend,
		const struct m_lend *lend)
{
	/*
	 * MEM "Loader API for the tail": "A changed T creates a new, empty pool ...; the same T
	 * keeps it".
	 */
	if (slots != sw->tail)
		memset(sw->pool, 0, sizeof(sw->pool));
	sw->tail = slots;
	sw->age_old = age_old;
	sw->nlend = nlend;
	memcpy(sw->lend, lend, nlend * sizeof(*lend));
}

void m_pcnt(struct m_switch *sw, int pi, int c)
{
	if (pi >= 0)
		sw->pc[pi][c]++;
}

int m_drop(struct m_switch *sw, struct m_pkt *k, int c, int branch)
{
	m_pcnt(sw, k->pi, c);
	m_cnt(k, c);
	M_BR(k, branch);
	return XDP_DROP;
}

void m_touch(struct m_pkt *k, int job, int idx)
{
	if (k->o->ntouched < 2) {
		k->o->tjob[k->o->ntouched] = job;
		k->o->tidx[k->o->ntouched++] = idx;
	}
}

static void ip_csum(__u8 *f)
{
	__u32 s = 0;
	int i;

	f[F_IP_CSUM] = f[F_IP_CSUM + 1] = 0;
	for (i = 0; i < 20; i += 2)
		s += m_get16(f + F_IP + i);
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	m_put16(f + F_IP_CSUM, (__u16)~s);
}

/* Every message that leaves upward: counted on the job and its up port, MACs toward the parent. */
static int send_up(struct m_switch *sw, struct m_pkt *k, __u8 flags)
{
	int up = m_port_index(sw, k->j->up.ifindex);

	/*
	 * DP "Counters": "Port tx counts every message the datapath sent out of
	 * the port"; recovery_tx: "upward messages flagged RETX or REEMIT, ... sent".
	 */
	m_cnt(k, IA_C_TX);
	m_pcnt(sw, up, IA_C_TX);
	if (flags & IA_F_RECOVERY) {
		m_cnt(k, IA_C_RECOVERY_TX);
		m_pcnt(sw, up, IA_C_RECOVERY_TX);
	}
	memcpy(k->o->frame, k->j->up.dmac, 6);
	memcpy(k->o->frame + 6, k->j->up.smac, 6);
	return XDP_REDIRECT;
}

/*
 * DP "Red": "redirected to the job's up port with only the Ethernet addresses rewritten
 * (forwarded)".
 */
int m_forward_up(struct m_switch *sw, struct m_pkt *k)
{
	m_cnt(k, IA_C_FWD);
	return send_up(sw, k, k->o->frame[F_FLAGS]);
}

int m_send_aggregate(struct m_switch *sw, struct m_pkt *k, __u32 nworkers, __u8 flags)
{
	__u8 *f = k->o->frame;

	/*
	 * DP "Blue": "rewritten into the aggregate (type AGG, sender = switch id,
	 * nworkers = sum, ..., addresses toward the parent)"; DP "Wire format":
	 * "Switches rewrite payloads and addresses, so they send UDP checksum 0".
	 */
	f[F_TYPE] = IA_MSG_AGG;
	m_put32(f + F_SENDER, k->j->self_id);
	m_put32(f + F_NWORKERS, nworkers);
	f[F_FLAGS] = flags;
	if (k->j->up.saddr)
		memcpy(f + F_SADDR, &k->j->up.saddr, 4);
	if (k->j->up.daddr)
		memcpy(f + F_DADDR, &k->j->up.daddr, 4);
	ip_csum(f);
	m_put16(f + F_UDP_CSUM, 0);
	return send_up(sw, k, flags);
}

void m_slot_open(struct m_slot *s, __u32 seq, __u32 nelem)
{
	s->seq = seq;
	s->state = IA_SLOT_OPEN;
	s->nseen = s->nworkers = 0;
	s->nelem = nelem;
	s->flags = s->held = 0;
	s->seen = 0;
}

/* The payload leaves holding the slot's sums (n elements). */
static void out_sums(struct m_pkt *k, const struct m_slot *s)
{
	__u32 i;

	for (i = 0; i < k->nelem; i++)
		m_set_elem(k->o->frame, i, (__u32)s->sum[i]);
}

/* A resend answered with the held result, out of the port it came by (datapath.md, Blue). */
static int answer(struct m_switch *sw, struct m_pkt *k, const struct m_slot *s)
{
	__u8 *f = k->o->frame, from[4];
	const struct m_hop *d = NULL;
	__u32 i;

	for (i = 0; i < k->j->ndown; i++)
		if (k->j->down[i].ifindex == k->ifindex)
			d = &k->j->down[i];
	/*
	 * DP "Blue": "A port with no down hop of the job gets no answer: the resend is drop_type".
	 */
	if (!d)
		return m_drop(sw, k, IA_C_DROP_TYPE, MB_DROP_TYPE);
	/*
	 * DP "Blue": "The answer has sender = this switch's id, nworkers and
	 * MARK/COLL of the held result, and RETX; Ethernet addresses of the job's
	 * down hop on that port, IP source = the message's destination, IP
	 * destination = the hop's worker address if configured, else the
	 * message's source"; counted answered and tx.
	 */
	M_BR(k, MB_BLUE_ANSWER);
	out_sums(k, s);
	f[F_TYPE] = IA_MSG_RESULT;
	m_put32(f + F_SENDER, k->j->self_id);
	m_put32(f + F_NWORKERS, s->hworkers);
	f[F_FLAGS] = s->flags | IA_F_RETX;
	memcpy(f, d->dmac, 6);
	memcpy(f + 6, d->smac, 6);
	memcpy(from, f + F_SADDR, 4);
	memcpy(f + F_SADDR, f + F_DADDR, 4);
	if (d->daddr)
		memcpy(f + F_DADDR, &d->daddr, 4);
	else
		memcpy(f + F_DADDR, from, 4);
	ip_csum(f);
	m_put16(f + F_UDP_CSUM, 0);
	m_cnt(k, IA_C_ANSWER);
	m_cnt(k, IA_C_TX);
	m_pcnt(sw, k->pi, IA_C_TX);
	return XDP_TX;
}

/* A member's message of a blue job into head slot seq % window (datapath.md, Blue). */
static int blue_up(struct m_switch *sw, struct m_pkt *k, const struct m_member *m, int bit)
{
	struct m_job *j = k->j;
	__u8 *f = k->o->frame, flags = f[F_FLAGS];
	struct m_slot *s;
	__u32 i;

	/* DP table: "a set trailer (IA_F_SET) to a blue job, dense or sparse": drop_set. */
	if (flags & IA_F_SET)
		return m_drop(sw, k, IA_C_DROP_SET, MB_DROP_SET);
	/* DP "Blue": "chunk seq uses slot seq % window of the job's slot array". */
	s = &j->slot[k->seq % j->window];
	m_touch(k, j->id, k->seq % j->window);
	/*
	 * MEM "Tail aggregation", flushes: "when an INA chunk needs its head slot and a PS partial
	 * aggregate sits there".
	 */
	if (s->state == IA_SLOT_TAIL)
		return m_evict(sw, k, m, s);
	if ((s->state == IA_SLOT_DONE || s->state == IA_SLOT_OPEN) && s->seq == k->seq) {
		/* DP table: drop_nelem: "or not the chunk's nelem". */
		if (s->nelem != k->nelem)
			return m_drop(sw, k, IA_C_DROP_NELEM, MB_BLUE_NELEM);
		if (s->state == IA_SLOT_DONE) {
			/* DP "Blue": "the retransmission is answered with it (answered)". */
			if (s->held)
				return answer(sw, k, s);
			/*
			 * DP "Blue": "the stored aggregate sent up again with REEMIT set
			 * (reemitted)".
			 */
			M_BR(k, MB_BLUE_REEMIT);
			out_sums(k, s);
			m_cnt(k, IA_C_REEMIT);
			return m_send_aggregate(sw, k, s->nworkers, s->flags | IA_F_REEMIT);
		}
		/*
		 * DP "Blue": "a member already in the bitmap is a duplicate (duplicates, dropped)".
		 */
		if (s->seen & 1ULL << bit) {
			M_BR(k, MB_BLUE_DUP);
			m_cnt(k, IA_C_DUP);
			return XDP_DROP;
		}
	/*
	 * DP "Blue": "slot EMPTY and seq - base_seq < window (the first window),
	 * or slot DONE holding seq - window: the slot is (re)claimed for seq, its
	 * member bitmap cleared"; "anything else ... is drop_window".
	 */
	} else if ((s->state == IA_SLOT_EMPTY && k->seq - j->base < j->window) ||
		   (s->state == IA_SLOT_DONE && k->seq == s->seq + j->window)) {
		m_slot_open(s, k->seq, k->nelem);
		memset(s->sum, 0, sizeof(s->sum));
	} else {
		return m_drop(sw, k, IA_C_DROP_WINDOW, MB_DROP_WINDOW);
	}
	/*
	 * DP "Blue": "otherwise its payload is added (aggregated)"; "flags = MARK
	 * if any contribution had it"; DP "Overflow": "Every sum is computed
	 * modulo 2^32".
	 */
	s->seen |= 1ULL << bit;
	s->nworkers += m->nworkers;
	s->flags |= flags & IA_F_MARK;
	s->nseen++;
	for (i = 0; i < k->nelem; i++)
		s->sum[i] = (__s32)((__u32)s->sum[i] + m_elem(f, i));
	m_cnt(k, IA_C_AGGREGATED);
	if (s->nseen < j->n) {
		M_BR(k, MB_BLUE_ADD);
		return XDP_DROP;
	}
	/*
	 * DP "Blue": "when the number of distinct members reaches expected ...
	 * (emitted); the slot becomes DONE and keeps the sum".
	 */
	M_BR(k, MB_BLUE_EMIT);
	s->state = IA_SLOT_DONE;
	out_sums(k, s);
	m_cnt(k, IA_C_EMIT);
	return m_send_aggregate(sw, k, s->nworkers, s->flags);
}

/*
 * docs/security.md: a member only from its place (port; a host's address
 * and UDP port), a result only from the PS's address and UDP port. 0 if
 * the frame comes from where it may, else the drop (drop_port).
 */
static int m_placed(struct m_switch *sw, struct m_pkt *k, const struct m_member *m)
{
	const __u8 *f = k->o->frame;
	__be32 saddr = htonl(m_get32(f + F_SADDR)), want = m ? m->saddr : k->j->ps_addr;
	bool port_ok = !m || !m->ifindex || m->ifindex == k->ifindex;

	if (port_ok && (!want || (saddr == want && m_get16(f + F_IP + 20) == IA_UDP_PORT)))
		return 0;
	return m_drop(sw, k, IA_C_DROP_PORT, MB_DROP_PORT);
}

/* A result from the up port: a blue switch holds it in its DONE slot, then it goes down. */
static int result_in(struct m_switch *sw, struct m_pkt *k)
{
	struct m_job *j = k->j;
	__u8 *f = k->o->frame, flags = f[F_FLAGS];
	struct m_slot *s;
	__u32 i;

	if (k->ifindex != j->up.ifindex)
		return m_drop(sw, k, IA_C_DROP_TYPE, MB_DROP_TYPE);
	if (m_placed(sw, k, NULL))
		return XDP_DROP;
	if (j->role == IA_ROLE_BLUE && !(flags & IA_F_NACK)) {
		/*
		 * DP "Results down": "copied into its chunk's slot if that slot is
		 * DONE for the chunk with the same nelem and holds no result yet
		 * (ia_slot.held, its nworkers and MARK/COLL flags kept beside)";
		 * "A NACK is not held."
		 */
		s = &j->slot[k->seq % j->window];
		m_touch(k, j->id, k->seq % j->window);
		if (s->state == IA_SLOT_DONE && s->seq == k->seq && s->nelem == k->nelem &&
		    !s->held) {
			M_BR(k, MB_RESULT_HELD);
			for (i = 0; i < k->nelem; i++)
				s->sum[i] = (__s32)m_elem(f, i);
			s->held = 1;
			s->hworkers = m_get32(f + F_NWORKERS);
			s->flags = flags & (IA_F_MARK | IA_F_COLL);
		}
	}
	/*
	 * DP "Results down": "A RESULT arriving on the job's up port is broadcast"
	 * (else drop_type: "A RESULT is checked for its direction only"); DP
	 * "Counters": results, and results_extra for "answers to resends, flagged
	 * RETX, ... and NACKs".
	 */
	M_BR(k, MB_RESULT_DOWN);
	m_pcnt(sw, k->pi, IA_C_RESULT);
	m_cnt(k, IA_C_RESULT);
	if (flags & (IA_F_RETX | IA_F_NACK)) {
		m_pcnt(sw, k->pi, IA_C_RESULT_EXTRA);
		m_cnt(k, IA_C_RESULT_EXTRA);
	}
	return XDP_REDIRECT;	/* broadcast; ia_egress keeps it on the job's down ports */
}

/* Classification and the checks of datapath.md's table, in its order. */
static int classify(struct m_switch *sw, struct m_pkt *k, __u32 len)
{
	const __u8 *f = k->o->frame;
	__u32 ihl, n, t, u;

	/*
	 * DP "Switch behaviour", "Precisely": "a frame of fewer than 42 bytes
	 * (Ethernet, IPv4, UDP), not EtherType IPv4, not IP version 4, not UDP, or
	 * whose UDP destination port (after any IP options) is not 9430 is not
	 * inagg's; so is one whose IP header length is below 5 words or whose
	 * options leave no room for the UDP header": passed, counted on the port.
	 */
	if (len < F_VER || m_get16(f + 12) != 0x0800 || f[F_IP + 9] != 17 ||
	    f[F_IP] >> 4 != 4)
		goto pass;
	ihl = f[F_IP] & 15;
	u = F_IP + 4 * ihl;	/* the UDP header, after any options */
	if (ihl < 5 || u + 8 > len || m_get16(f + u + 2) != IA_UDP_PORT)
		goto pass;
	/* "Everything else is inagg's, counted as received (rx) on the port". */
	m_pcnt(sw, k->pi, IA_C_RX);
	/*
	 * "drop_short for IP options or a fragment (MF or an offset) or a frame that ends before
	 * the payload".
	 */
	if (ihl != 5 || (m_get16(f + F_IP_FRAG) & 0x3fff) || len < F_PL)
		return m_drop(sw, k, IA_C_DROP_SHORT, MB_DROP_SHORT);
	/*
	 * "drop_version"; "drop_nelem for nelem and the UDP and IP lengths (a trailer counted when
	 * IA_F_SET is set)".
	 */
	if (f[F_VER] != IA_VERSION)
		return m_drop(sw, k, IA_C_DROP_VERSION, MB_DROP_VERSION);
	n = m_get16(f + F_NELEM);
	t = f[F_FLAGS] & IA_F_SET ? IA_SET_LEN : 0;
	if (!n || n > IA_MAX_ELEMS || m_get16(f + F_UDP_LEN) != IA_UDP_LEN(n) + t ||
	    m_get16(f + F_IP_LEN) != 20 + IA_UDP_LEN(n) + t)
		return m_drop(sw, k, IA_C_DROP_NELEM, MB_DROP_NELEM);
	/*
	 * "drop_short for a frame that ends before its payload (and trailer); drop_job; the job's
	 * rx".
	 */
	if (len < IA_FRAME_LEN(n) + t)
		return m_drop(sw, k, IA_C_DROP_SHORT, MB_DROP_SHORT);
	k->nelem = n;
	k->seq = m_get32(f + F_SEQ);
	k->j = m_job_find(sw, m_get32(f + F_JOB));
	if (!k->j)
		return m_drop(sw, k, IA_C_DROP_JOB, MB_DROP_JOB);
	m_cnt(k, IA_C_RX);
	return -1;
pass:
	m_pcnt(sw, k->pi, IA_C_PASS);
	M_BR(k, MB_PASS);
	return XDP_PASS;
}

/* An upward message's sender: a member with its nworkers (a tail partial carries its own). */
static const struct m_member *member_of(struct m_switch *sw, struct m_pkt *k, int *bit, int *v)
{
	const __u8 *f = k->o->frame;
	__u32 id = m_get32(f + F_SENDER), i;
	const struct m_member *m = NULL;

	/*
	 * DP "Precisely": "An upward message: drop_type (not CONTRIB or AGG, or from the up port)".
	 */
	if ((f[F_TYPE] != IA_MSG_CONTRIB && f[F_TYPE] != IA_MSG_AGG) ||
	    k->ifindex == k->j->up.ifindex) {
		*v = m_drop(sw, k, IA_C_DROP_TYPE, MB_DROP_TYPE);
		return NULL;
	}
	/*
	 * "drop_member (a PS job's flushed partial, IA_F_SET, may carry its set's
	 * nworkers instead of the member's)"; "only where the job is tail: a red
	 * switch compares the member's own".
	 */
	for (i = 0; i < k->j->n && !m; i++)
		if (k->j->mem[i].id == id) {
			m = &k->j->mem[i];
			*bit = i;
		}
	if (!m || (m->nworkers != m_get32(f + F_NWORKERS) &&
		   !(f[F_FLAGS] & IA_F_SET && k->j->role == IA_ROLE_TAIL))) {
		*v = m_drop(sw, k, IA_C_DROP_MEMBER, MB_DROP_MEMBER);
		return NULL;
	}
	if (m_placed(sw, k, m)) {
		*v = XDP_DROP;
		return NULL;
	}
	if (f[F_FLAGS] & IA_F_RECOVERY) {
		/*
		 * DP: "recovery_rx is counted for a member's message flagged RETX or REEMIT once
		 * the sender passed its checks".
		 */
		m_pcnt(sw, k->pi, IA_C_RECOVERY_RX);
		m_cnt(k, IA_C_RECOVERY_RX);
	}
	return m;
}

void m_rx(struct m_switch *sw, int ifindex, const __u8 *frame, __u32 len, struct m_out *o)
{
	struct m_pkt k = { .o = o, .ifindex = ifindex, .pi = m_port_index(sw, ifindex) };
	const struct m_member *m;
	int v, bit = 0;

	o->branches = 0;
	o->ntouched = 0;
	if (len > M_FRAME_MAX)
		len = M_FRAME_MAX;
	memcpy(o->frame, frame, len);
	o->len = len;
	v = classify(sw, &k, len);
	if (v >= 0)
		goto out;
	if (o->frame[F_TYPE] == IA_MSG_RESULT) {
		v = result_in(sw, &k);
		goto out;
	}
	m = member_of(sw, &k, &bit, &v);
	if (!m)
		goto out;
	/*
	 * DP "Switch behaviour": "A job's role on a switch is red (forward), blue (its head slots)
	 * or tail".
	 */
	if (k.j->role == IA_ROLE_TAIL)
		v = m_tail_up(sw, &k, m);
	else if (k.j->role == IA_ROLE_BLUE)
		v = blue_up(sw, &k, m, bit);
	else {
		M_BR(&k, MB_RED_FWD);
		v = m_forward_up(sw, &k);
	}
out:
	o->verdict = v;
}
