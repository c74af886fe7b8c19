// SPDX-License-Identifier: GPL-2.0
/*
 * Clean end-to-end runs over a tree of switches (tree.h). The tree:
 *
 *            PS
 *            | p0
 *           s0 ---p3--- w4
 *       p1 /   \ p2
 *         s1    s2          each leaf: p0 up, workers on p1 and p2
 *        /  \  /  \
 *       w0 w1 w2  w3
 *
 * Two jobs at once: a dense job (blue or red per switch, window 3, lending
 * its head where it is blue beside a tail) and a PS job (tail or red per
 * switch, found off its home slot: job % 256 is the dense job's), in three scenarios of roles, each through five tail phases
 * (pool sizes, flush age always or never old, lends). Frames are delivered
 * in a random order (the network reorders, loses nothing); what a switch
 * sends goes to the next hop as docs/datapath.md says it leaves: up to the
 * parent or the PS, a result to every down hop of the job (the egress
 * program's per-port rewrite is not run: test_run runs the ingress
 * program). The PS merges pieces by member set (docs/memory.md, "Tail
 * aggregation and exactly-once"; an overlap is dropped, not split) and
 * sends the result down when every rank is in; a worker without a result
 * after a window resends with RETX, which no switch aggregates.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <net/if.h>
#include <linux/bpf.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "xdp.h"
#include "sender.h"
#include "fuzz.h"
#include "tree.h"

#define NSW	3
#define NPORTS	4
#define NW	5		/* workers, ranks 0-4 */
#define ALL	0x1fu		/* every rank */
#define NE	16		/* elements per chunk */
#define WIN	3		/* the dense job's window (not a power of 2); chunks per batch */
#define BATCHES	3		/* per phase */
#define MAXCH	64		/* chunks per scenario and job */
#define JD	21		/* the dense job */
#define JP	(JD + 256)	/* the PS job: its home slot is the dense job's (off home) */
#define JP_BASE	1000		/* its first seq */
#define PS_ID	0x7ffffff0u
#define AGE_NONE (3600ull * 1000000000)
#define QMAX	4096
#define FLEN	(IA_FRAME_LEN(NE) + IA_SET_LEN)

static const int parent[NSW] = { -1, 0, 0 }, at_parent[NSW] = { 0, 1, 2 };
static const int wsw[NW] = { 1, 1, 2, 2, 0 }, wport[NW] = { 1, 2, 1, 2, 3 };
static const __u32 below[NSW] = { ALL, 0x03, 0x0c };	/* ranks under each switch */

static const struct {
	__u8 jd[NSW], jp[NSW];
	const char *name;
} scen[] = {
	{ { IA_ROLE_BLUE, IA_ROLE_BLUE, IA_ROLE_BLUE }, { IA_ROLE_TAIL, IA_ROLE_TAIL, IA_ROLE_TAIL },
	  "every switch aggregates" },
	{ { IA_ROLE_BLUE, IA_ROLE_RED, IA_ROLE_BLUE }, { IA_ROLE_TAIL, IA_ROLE_TAIL, IA_ROLE_RED },
	  "a red leaf" },
	{ { IA_ROLE_RED, IA_ROLE_BLUE, IA_ROLE_BLUE }, { IA_ROLE_RED, IA_ROLE_TAIL, IA_ROLE_TAIL },
	  "a red root" },
};

static const struct {
	__u32 pool, lend;
	int old;
} phase[] = {
	{ 8, 0, 0 },	/* claims, hits, completes, collisions */
	{ 1, 0, 1 },	/* a tiny pool flushed by age */
	{ 0, 2, 1 },	/* lent slots only: claims there and evictions */
	{ 2, 3, 0 },	/* the whole head lent, nothing old */
	{ 4, 1, 1 },
};

struct qent {
	int	sw, port;
	__u32	len;
	__u8	f[FLEN];
};

/* A parameter server's chunk (one per world: the datapath's, the model's). */
struct pchunk {
	__u32	u;		/* ranks merged */
	__u32	sum[NE];
	int	done;
};

struct ft {
	struct ia_xdp	*x[NSW];
	int		prog[NSW];
	struct m_switch	m[NSW];
	struct m_out	o;
	int		port[NPORTS];
	int		sc;		/* scenario */
	__u64		seed;
	struct pchunk	ps[2][2][MAXCH];	/* world, job (0 dense, 1 PS), chunk */
	__u8		got[NW][2][MAXCH];	/* results a worker has */
	struct qent	*q;
	int		nq;
	__u64		rng;
	FILE		*f;
	struct ft_stats	*st;
};

static __u64 mix(__u64 z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static __u32 rnd(struct ft *t, __u32 n)
{
	return mix(t->rng += 0x9e3779b97f4a7c15ull) % n;
}

/* Worker w's element i of chunk seq of job: small, so every sum is the integer sum. */
static __s32 val(const struct ft *t, __u32 job, __u32 seq, int w, int i)
{
	return (__s32)(mix(t->seed * 1000003 + job * 7919 + seq * 131 + w * 17 + i) % 2001) - 1000;
}

static int jx(__u32 job)
{
	return job == JP;
}

static __u32 chunk_of(__u32 job, __u32 seq)
{
	return job == JP ? seq - JP_BASE : seq;
}

static __u8 role(const struct ft *t, __u32 job, int s)
{
	return job == JP ? scen[t->sc].jp[s] : scen[t->sc].jd[s];
}

static int fail(struct ft *t, const char *fmt, const char *what, long a, long b)
{
	fprintf(t->f, "# tree: seed %llu, scenario \"%s\": ", (unsigned long long)t->seed,
		scen[t->sc].name);
	fprintf(t->f, fmt, what, a, b);
	fputc('\n', t->f);
	fflush(t->f);
	return 1;
}

static int push(struct ft *t, int sw, int port, const __u8 *f, __u32 len)
{
	if (t->nq == QMAX || len > FLEN)
		return fail(t, "%s %ld %ld", "delivery queue full", t->nq, len);
	t->q[t->nq].sw = sw;
	t->q[t->nq].port = port;
	t->q[t->nq].len = len;
	memcpy(t->q[t->nq++].f, f, len);
	return 0;
}

/* A frame of the wire format (fz_frame()), with the payload given. */
static __u32 frame(__u8 *buf, __u32 job, __u8 type, __u32 seq, __u32 sender, __u32 nworkers,
		   __u8 flags, int port, const __u32 *pl)
{
	struct fz_op op = { .kind = FZ_FRAME, .port = port, .type = type, .flags = flags,
			    .nelem = NE, .job = job, .seq = seq, .sender = sender,
			    .nworkers = nworkers };
	int len = fz_frame(&op, buf), i;

	for (i = 0; i < NE; i++)
		memcpy(buf + IA_PAYLOAD_OFF + 4 * i, &pl[i], 4);
	return len;
}

static int contribute(struct ft *t, __u32 job, __u32 seq, int w, __u8 flags)
{
	__u32 pl[NE], len;
	__u8 buf[FLEN + 64];
	int i;

	for (i = 0; i < NE; i++)
		pl[i] = (__u32)val(t, job, seq, w, i);
	len = frame(buf, job, IA_MSG_CONTRIB, seq, 1 + w, 1, flags, wport[w], pl);
	return push(t, wsw[w], wport[w], buf, len);
}

static __u32 get32(const __u8 *p)
{
	return (__u32)p[0] << 24 | (__u32)p[1] << 16 | (__u32)p[2] << 8 | p[3];
}

/* The ranks a sender's message sums without a trailer: a worker's own, a switch's below it. */
static __u32 set_of(__u32 sender)
{
	if (sender >= 1 && sender <= NW)
		return 1u << (sender - 1);
	if (sender >= 0x80000010u && sender < 0x80000010u + NSW)
		return below[sender - 0x80000010u];
	return 0;
}

/* A piece at the PS of world wd; world 0's completions send the result down. */
static int ps_rx(struct ft *t, int wd, const __u8 *f, __u32 len)
{
	__u32 job = get32(f + 44), seq = get32(f + 48), set, c, i, v, pl[NE];
	__u8 flags = f[62], buf[FLEN + 64];
	struct pchunk *p;

	if ((job != JD && job != JP) || (f[43] != IA_MSG_CONTRIB && f[43] != IA_MSG_AGG) ||
	    (c = chunk_of(job, seq)) >= MAXCH || f[60] || f[61] != NE)
		return fail(t, "%s: job %ld seq %ld", "the PS got a frame of no chunk", job, seq);
	set = flags & IA_F_SET ? get32(f + IA_FRAME_LEN(NE) + 4) : set_of(get32(f + 52));
	if (!set || (set & ~ALL) || (__u32)__builtin_popcount(set) != get32(f + 56))
		return fail(t, "%s: set %#lx nworkers %ld", "the PS got a piece of no set", set,
			    get32(f + 56));
	p = &t->ps[wd][jx(job)][c];
	if (p->done || !(set & ~p->u)) {
		t->st->ps_dup += !wd;
		return 0;
	}
	if (set & p->u) {
		t->st->ps_overlap += !wd;
		return 0;
	}
	p->u |= set;
	for (i = 0; i < NE; i++) {
		memcpy(&v, f + IA_PAYLOAD_OFF + 4 * i, 4);
		p->sum[i] += v;
	}
	if (p->u != ALL)
		return 0;
	p->done = 1;
	if (wd)
		return 0;
	t->st->chunks++;
	memcpy(pl, p->sum, sizeof(pl));
	len = frame(buf, job, IA_MSG_RESULT, seq, PS_ID, NW, 0, 0, pl);
	return push(t, 0, 0, buf, len);
}

static int worker_rx(struct ft *t, int w, const __u8 *f, __u32 len)
{
	__u32 job = get32(f + 44), seq = get32(f + 48), c = chunk_of(job, seq), v;
	int i;

	if (f[43] != IA_MSG_RESULT || (job != JD && job != JP) || c >= MAXCH)
		return fail(t, "%s: type %ld to worker %ld", "a worker got no result", f[43], w);
	for (i = 0; i < NE; i++) {
		__s32 want = 0;
		int k;

		for (k = 0; k < NW; k++)
			want += val(t, job, seq, k, i);
		memcpy(&v, f + IA_PAYLOAD_OFF + 4 * i, 4);
		if ((__s32)v != want)
			return fail(t, "%s: seq %ld element %ld", "a worker's result is not the sum",
				    seq, i);
	}
	t->got[w][jx(job)][c] = 1;
	t->st->results++;
	return 0;
}

/* What leaves switch s by port q going down: to a switch below or a worker. */
static int down(struct ft *t, int s, int q, const __u8 *f, __u32 len)
{
	int c, w;

	for (c = 1; c < NSW; c++)
		if (parent[c] == s && at_parent[c] == q)
			return push(t, c, 0, f, len);
	for (w = 0; w < NW; w++)
		if (wsw[w] == s && wport[w] == q)
			return worker_rx(t, w, f, len);
	return 0;
}

/* One frame into switch s by port p, on both sides; what leaves goes on. */
static int deliver(struct ft *t, const struct qent *e)
{
	static __u8 out[4096];
	struct xdp_md md = { .data_end = e->len, .ingress_ifindex = t->port[e->port] };
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = e->f, .data_size_in = e->len,
		    .data_out = out, .data_size_out = sizeof(out), .ctx_in = &md,
		    .ctx_size_in = sizeof(md));
	int s = e->sw, q, v;

	if (bpf_prog_test_run_opts(t->prog[s], &o))
		return fail(t, "%s %ld %ld", "test_run failed", errno, s);
	m_rx(&t->m[s], t->port[e->port], e->f, e->len, &t->o);
	t->st->frames++;
	v = o.retval;
	if (v != t->o.verdict)
		return fail(t, "%s: datapath %ld, model %ld", "verdict", v, t->o.verdict);
	if (v != XDP_DROP && (o.data_size_out != t->o.len || memcmp(out, t->o.frame, t->o.len)))
		return fail(t, "%s at switch %ld port %ld", "the frame out differs", s, e->port);
	switch (v) {
	case XDP_DROP:
		return 0;
	case XDP_TX:
		return down(t, s, e->port, out, o.data_size_out);
	case XDP_REDIRECT:
		break;
	default:
		return fail(t, "%s %ld at switch %ld", "verdict", v, s);
	}
	if (out[43] == IA_MSG_RESULT) {
		for (q = 1; q < NPORTS; q++)
			if (down(t, s, q, out, o.data_size_out))
				return 1;
		return 0;
	}
	if (parent[s] >= 0)
		return push(t, parent[s], at_parent[s], out, o.data_size_out);
	return ps_rx(t, 0, out, o.data_size_out) || ps_rx(t, 1, t->o.frame, t->o.len);
}

/* Deliveries in a random order until none is left. */
static int drain(struct ft *t)
{
	struct qent e;
	int i;

	while (t->nq) {
		i = rnd(t, t->nq);
		e = t->q[i];
		t->q[i] = t->q[--t->nq];
		if (deliver(t, &e))
			return 1;
	}
	return 0;
}

static int under(int c, int s)
{
	for (; c >= 0; c = parent[c])
		if (c == s)
			return 1;
	return 0;
}

/*
 * Job's members at switch s. The dense job's: the switches below that
 * aggregate, else what they pass on; its workers (datapath.md, "Expected
 * contributions"). The PS job's: every tail switch and every worker below
 * (memory.md, "PS jobs and tails on the switches"), as the daemon pushes.
 */
static __u32 members(const struct ft *t, __u32 job, int s, struct m_member *m, __u32 n)
{
	int c, w;

	for (c = 1; c < NSW; c++) {
		if (job == JP ? c == s || !under(c, s) : parent[c] != s)
			continue;
		if (role(t, job, c) == IA_ROLE_RED) {
			if (job == JD)
				n = members(t, job, c, m, n);
			continue;
		}
		m[n++] = (struct m_member){ .id = 0x80000010u + c, .set = below[c],
					    .nworkers = __builtin_popcount(below[c]) };
	}
	for (w = 0; w < NW; w++)
		if (job == JP ? under(wsw[w], s) : wsw[w] == s) {
			m[n++] = (struct m_member){ .id = 1 + w, .nworkers = 1, .set = 1u << w };
		}
	return n;
}

static const __u8 mac_a[6] = { 2, 0, 0, 0, 7, 1 }, mac_b[6] = { 2, 0, 0, 0, 8, 1 };

static int job_add(struct ft *t, int s, __u32 job)
{
	struct m_member m[M_MAX_MEMBERS];
	struct ia_sender snd[M_MAX_MEMBERS];
	struct ia_xdp_hop dh[NPORTS] = {};
	struct m_hop mup = {}, mdown[NPORTS] = {};
	__u64 sets[M_MAX_MEMBERS];
	__u32 n = members(t, job, s, m, 0), i, nd = 0;
	struct ia_xdp_job j = {
		.id = job, .role = role(t, job, s), .self_id = 0x80000010u + s, .nmembers = n,
		.members = snd, .down = dh,
		.up = { .ifindex = t->port[0], .saddr = htonl(0x0a0a0000 + s),
			.daddr = htonl(0x0a0a00ff) },
	};
	int q;

	if (j.role == IA_ROLE_BLUE)
		j.window = WIN;
	if (j.role == IA_ROLE_TAIL)
		j.sets = sets;
	for (i = 0; i < n; i++) {
		snd[i].id = m[i].id;
		snd[i].nworkers = m[i].nworkers;
		sets[i] = m[i].set;
	}
	memcpy(j.up.smac, mac_a, 6);
	memcpy(j.up.dmac, mac_b, 6);
	for (q = 1; q < NPORTS; q++) {
		if (s && q == 3)
			continue;	/* the leaves' p3 leads nowhere */
		dh[nd].ifindex = t->port[q];
		memcpy(dh[nd].smac, mac_b, 6);
		memcpy(dh[nd].dmac, mac_a, 6);
		mdown[nd].ifindex = t->port[q];
		memcpy(mdown[nd].smac, mac_b, 6);
		memcpy(mdown[nd++].dmac, mac_a, 6);
	}
	j.ndown = nd;
	mup.ifindex = j.up.ifindex;
	memcpy(mup.smac, mac_a, 6);
	memcpy(mup.dmac, mac_b, 6);
	mup.saddr = j.up.saddr;
	mup.daddr = j.up.daddr;
	if (m_job_add(&t->m[s], job, j.role, j.window, 0, j.self_id, n, m, &mup, nd, mdown))
		return -EINVAL;
	return ia_xdp_job_add(t->x[s], &j, NULL, 0);
}

static int tail_set(struct ft *t, int s, __u32 pool, int old, __u32 lend)
{
	struct ia_xdp_lend l = { .job = JD, .count = lend };
	struct m_lend ml = { JD, lend };
	struct ia_xdp_tail tl = { .slots = pool, .age_ns = old ? 1 : AGE_NONE, .lend = &l };

	if (role(t, JD, s) != IA_ROLE_BLUE || role(t, JP, s) != IA_ROLE_TAIL)
		lend = 0;
	tl.nlend = !!lend;
	m_tail_set(&t->m[s], pool, old, !!lend, &ml);
	return ia_xdp_tail_set(t->x[s], &tl, NULL, 0);
}

static int cmp_counters(struct ft *t, int ph)
{
	struct ia_counters c;
	struct m_job *mj;
	int s, i, k;
	__u32 jobs[2] = { JD, JP };

	for (s = 0; s < NSW; s++) {
		for (i = 0; i < 2; i++) {
			mj = m_job_find(&t->m[s], jobs[i]);
			if (!mj || ia_xdp_job_counters(t->x[s], jobs[i], &c))
				return fail(t, "%s %ld at switch %ld", "no counters of job", jobs[i], s);
			for (k = 0; k < IA_C__COUNT; k++)
				if (c.c[k] != mj->c[k]) {
					fprintf(t->f, "# tree: phase %d, switch %d, job %u, %s:\n", ph,
						s, jobs[i], ia_ctr_name(k));
					return fail(t, "%s: datapath %ld, model %ld", "counter",
						    c.c[k], mj->c[k]);
				}
		}
		for (i = 0; i < NPORTS; i++) {
			if (ia_xdp_port_counters(t->x[s], t->port[i], &c))
				return fail(t, "%s %ld %ld", "no port counters", s, i);
			for (k = 0; k < IA_C__COUNT; k++)
				if (c.c[k] != t->m[s].pc[i][k]) {
					fprintf(t->f, "# tree: phase %d, switch %d, port %d, %s:\n", ph,
						s, i, ia_ctr_name(k));
					return fail(t, "%s: datapath %ld, model %ld", "counter",
						    c.c[k], t->m[s].pc[i][k]);
				}
		}
	}
	return 0;
}

/* Chunks [c0, c0 + WIN) of both jobs: sent, carried, resent where stuck; all exact. */
static int batch(struct ft *t, __u32 c0)
{
	__u32 c, i;
	int w, k;

	for (c = c0; c < c0 + WIN; c++)
		for (w = 0; w < NW; w++)
			if (contribute(t, JD, c, w, 0) || contribute(t, JP, JP_BASE + c, w, 0))
				return 1;
	if (drain(t))
		return 1;
	/* The dense job loses nothing in a clean run: every chunk came back at once. */
	for (c = c0; c < c0 + WIN; c++)
		for (w = 0; w < NW; w++)
			if (!t->got[w][0][c])
				return fail(t, "%s %ld: worker %ld", "no result of dense chunk", c, w);
	/* A PS chunk whose pieces wait in slots: its workers resend, never aggregated. */
	for (k = 0; k < 2; k++) {
		for (c = c0; c < c0 + WIN; c++)
			for (w = 0; w < NW; w++)
				if (!t->got[w][1][c]) {
					t->st->retx++;
					if (contribute(t, JP, JP_BASE + c, w, IA_F_RETX))
						return 1;
				}
		if (drain(t))
			return 1;
	}
	for (c = c0; c < c0 + WIN; c++) {
		for (w = 0; w < NW; w++)
			if (!t->got[w][1][c]) {
				fprintf(t->f, "# tree: PS has ranks %#x%s\n", t->ps[0][1][c].u,
					t->ps[0][1][c].done ? ", done" : "");
				return fail(t, "%s %ld: worker %ld", "no result of PS chunk", c, w);
			}
		for (k = 0; k < 2; k++) {
			const struct pchunk *a = &t->ps[0][k][c], *b = &t->ps[1][k][c];

			for (i = 0; i < NE; i++)
				if (!a->done || !b->done || a->sum[i] != b->sum[i])
					return fail(t, "%s: chunk %ld job %ld",
						    "the PS's sums differ between model and datapath",
						    c, k);
		}
	}
	return 0;
}

static void add_stats(struct ft *t)
{
	struct ft_stats *st = t->st;
	struct m_job *j;
	int s;

	for (s = 0; s < NSW; s++) {
		if ((j = m_job_find(&t->m[s], JP))) {
			st->claims += j->c[IA_C_TAIL_CLAIM];
			st->hits += j->c[IA_C_TAIL_HIT];
			st->flushes += j->c[IA_C_TAIL_FLUSH];
			st->collisions += j->c[IA_C_TAIL_COLL];
			st->lent += j->c[IA_C_TAIL_LENT];
			st->dmember += j->c[IA_C_DROP_MEMBER];
		}
		if ((j = m_job_find(&t->m[s], JD)))
			st->evictions += j->c[IA_C_TAIL_EVICT];
	}
}

static int scenario(struct ft *t)
{
	__u32 c = 0;
	int s, ph, b;

	memset(t->ps, 0, sizeof(t->ps));
	memset(t->got, 0, sizeof(t->got));
	for (s = 0; s < NSW; s++) {
		ia_xdp_job_del(t->x[s], JP);
		ia_xdp_job_del(t->x[s], JD);
		m_job_del(&t->m[s], JP);
		m_job_del(&t->m[s], JD);
		if (tail_set(t, s, 0, 0, 0) || job_add(t, s, JD) || job_add(t, s, JP))
			return fail(t, "%s %ld %ld", "jobs not added at switch", s, 0);
	}
	for (ph = 0; ph < (int)(sizeof(phase) / sizeof(phase[0])); ph++) {
		for (s = 0; s < NSW; s++)
			if (tail_set(t, s, phase[ph].pool, phase[ph].old, phase[ph].lend))
				return fail(t, "%s %ld at switch %ld", "tail not published, phase",
					    ph, s);
		for (b = 0; b < BATCHES; b++, c += WIN)
			if (batch(t, c))
				return fail(t, "%s %ld, batch %ld", "in phase", ph, b);
		if (cmp_counters(t, ph))
			return 1;
	}
	add_stats(t);
	return 0;
}

int ft_run(struct ft *t, __u64 seed, FILE *f, struct ft_stats *st)
{
	t->seed = seed;
	t->rng = seed;
	t->f = f;
	t->st = st;
	for (t->sc = 0; t->sc < (int)(sizeof(scen) / sizeof(scen[0])); t->sc++)
		if (scenario(t))
			return 1;
	return 0;
}

int ft_open(struct ft **out)
{
	struct ft *t = calloc(1, sizeof(*t));
	char cmd[160], name[IF_NAMESIZE];
	int i, s, err = 0;

	if (!t || !(t->q = calloc(QMAX, sizeof(*t->q)))) {
		free(t);
		return -ENOMEM;
	}
	for (i = 0; i < NPORTS && !err; i++) {
		snprintf(cmd, sizeof(cmd), "ip link add ft%d type veth peer name ftp%d && "
			 "ip link set ft%d up && ip link set ftp%d up", i, i, i, i);
		snprintf(name, sizeof(name), "ft%d", i);
		err = system(cmd) ? -EIO : 0;
		t->port[i] = if_nametoindex(name);
	}
	/* Every switch has the same four ports: test_run sends nothing, the harness routes. */
	for (s = 0; s < NSW && !err; s++) {
		m_init(&t->m[s]);
		err = ia_xdp_open(NULL, &t->x[s], NULL, 0);
		for (i = 0; i < NPORTS && !err; i++)
			err = ia_xdp_port_add(t->x[s], t->port[i]) ?:
			      m_port_add(&t->m[s], t->port[i]);
		snprintf(name, sizeof(name), "ftd%d", s);
		if (!err)
			err = fz_keep_dispatched(t->x[s], name);
		if (!err)
			t->prog[s] = ia_xdp_prog_fd(t->x[s]);
	}
	if (err) {
		ft_close(t);
		return err;
	}
	*out = t;
	return 0;
}

void ft_close(struct ft *t)
{
	int s;

	if (!t)
		return;
	for (s = 0; s < NSW; s++)
		if (t->x[s])
			ia_xdp_close(t->x[s]);
	free(t->q);
	free(t);
}

void ft_report(FILE *f, const struct ft_stats *st, int seeds, long secs)
{
	fprintf(f, "# tree: %d seeds x %zu scenarios x %zu phases, %ld s: %llu frames, %llu chunks exact "
		"at the PS, %llu results exact at workers\n", seeds, sizeof(scen) / sizeof(scen[0]),
		sizeof(phase) / sizeof(phase[0]), secs, (unsigned long long)st->frames,
		(unsigned long long)st->chunks, (unsigned long long)st->results);
	fprintf(f, "# tree: PS job: %llu claims (%llu lent), %llu hits, %llu collisions, %llu flushes, "
		"%llu evicted by the dense job, %llu dropped by a red switch (drop_member), %llu "
		"resends; the PS ignored %llu duplicate and %llu overlapping pieces\n",
		(unsigned long long)st->claims, (unsigned long long)st->lent,
		(unsigned long long)st->hits, (unsigned long long)st->collisions,
		(unsigned long long)st->flushes, (unsigned long long)st->evictions,
		(unsigned long long)st->dmember, (unsigned long long)st->retx,
		(unsigned long long)st->ps_dup, (unsigned long long)st->ps_overlap);
	fflush(f);
}
