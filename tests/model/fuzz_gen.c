// SPDX-License-Identifier: GPL-2.0
/*
 * The fuzzer's operations: seeded generation (mostly plausible traffic of
 * the scenario's four jobs, whole-chunk bursts that complete chunks and move
 * windows on, results and resends, mutated frames, tail changes and a PS job
 * added again), their frames' bytes, and how they print.
 */
#include <string.h>
#include <arpa/inet.h>

#include "fuzz.h"

static __u64 rnd(__u64 *s)
{
	__u64 z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static __u32 pick(__u64 *s, __u32 n)
{
	return n ? rnd(s) % n : 0;
}

static int chance(__u64 *s, int pct)
{
	return (int)pick(s, 100) < pct;
}

/* A job's senders: id, nworkers and (PS job) set. */
static const struct m_member blue_m[] = { { 1, 1, 0 }, { 2, 1, 0 }, { FZ_BELOW, 2, 0 } };
static const struct m_member red_m[] = { { 1, 1, 0 }, { 2, 1, 0 } };
static const struct m_member ps_m[] = { { 1, 1, 1 }, { 2, 1, 2 }, { 3, 1, 4 },
					{ FZ_LOWER, 2, 0x18 }, { FZ_WHOLE, 5, 0x1f } };
static const struct m_member ina_m[] = { { 11, 1, 0 }, { 12, 1, 0 } };

static const struct m_member *members(__u32 job, __u32 *n)
{
	switch (job) {
	case FZ_BLUE: *n = 3; return blue_m;
	case FZ_RED: *n = 2; return red_m;
	case FZ_PS: *n = 5; return ps_m;
	default: *n = 2; return ina_m;
	}
}

/* The generator's picture of where each job's chunks are. */
struct gen {
	__u64	s;
	__u32	front[3];	/* blue, ina, ps */
};

static __u32 *front(struct gen *g, __u32 job)
{
	return &g->front[job == FZ_BLUE ? 0 : job == FZ_INA ? 1 : 2];
}

static void member_frame(struct gen *g, struct fz_op *op, __u32 job, const struct m_member *m,
			 __u32 seq)
{
	memset(op, 0, sizeof(*op));
	op->kind = FZ_FRAME;
	op->job = job;
	op->seq = seq;
	op->sender = m->id;
	op->nworkers = m->nworkers;
	op->type = m->id >= FZ_LOWER ? IA_MSG_AGG : IA_MSG_CONTRIB;
	op->nelem = FZ_NE;
	op->port = 1 + pick(&g->s, 2);
	op->vals = (__u32)rnd(&g->s);
}

/* Lengths around the element loop's blocks of 256 (bpf/dp_sum.h) and the largest. */
static const __u32 fz_sizes[] = { 255, 256, 257, 511, 512, 513, 767, IA_MAX_ELEMS };
#define FZ_NSIZES	(sizeof(fz_sizes) / sizeof(fz_sizes[0]))

/* Every member's message of one chunk, in random order; the lower tail's maybe as two flushes. */
static long burst(struct gen *g, struct fz_op *ops, long i, long n, __u32 job)
{
	__u32 nm, order[8], k, t, u, seq = *front(g, job);
	const struct m_member *m = members(job, &nm);

	if (job == FZ_PS)
		nm--;	/* not FZ_WHOLE: it overlaps every other */
	for (k = 0; k < nm; k++)
		order[k] = k;
	for (k = nm - 1; k > 0; k--) {
		t = pick(&g->s, k + 1);
		u = order[k];
		order[k] = order[t];
		order[t] = u;
	}
	for (k = 0; k < nm && i < n; k++) {
		member_frame(g, &ops[i], job, &m[order[k]], seq);
		if (job == FZ_PS && m[order[k]].id == FZ_LOWER && chance(&g->s, 50) && i + 1 < n) {
			ops[i].flags = IA_F_SET;
			ops[i].set = 0x08;
			ops[i].nworkers = 1;
			ops[i + 1] = ops[i];
			i++;
			ops[i].set = 0x10;
			ops[i].vals = (__u32)rnd(&g->s);
		}
		i++;
	}
	if (chance(&g->s, 80))
		(*front(g, job))++;
	return i;
}

static __u8 rnd_flags(struct gen *g, const struct fz_op *op)
{
	__u8 f = 0;

	if (chance(&g->s, 15))
		f |= IA_F_MARK;
	if (chance(&g->s, 8))
		f |= IA_F_RETX;
	if (chance(&g->s, 4))
		f |= IA_F_REEMIT;
	if (chance(&g->s, 3))
		f |= IA_F_BYPASS;
	if (chance(&g->s, 4))
		f |= IA_F_COLL;
	if (chance(&g->s, op->type == IA_MSG_RESULT ? 15 : 2))
		f |= IA_F_NACK;
	if (chance(&g->s, 2))
		f |= IA_F_FLUSH;
	if (chance(&g->s, op->sender == FZ_LOWER || op->sender == FZ_WHOLE ? 40 : 3))
		f |= IA_F_SET;
	return f;
}

static void one_frame(struct gen *g, struct fz_op *op)
{
	static const __u32 jobs[] = { FZ_BLUE, FZ_BLUE, FZ_BLUE, FZ_PS, FZ_PS, FZ_PS, FZ_PS,
				      FZ_INA, FZ_INA, FZ_RED };
	__u32 job = chance(&g->s, 3) ? FZ_UNKNOWN : jobs[pick(&g->s, 10)], nm, r;
	const struct m_member *m = members(job, &nm);
	__u32 seq = job == FZ_RED || job == FZ_UNKNOWN ? pick(&g->s, 10) :
		    *front(g, job) + pick(&g->s, 2 * FZ_WINDOW + 2) - 2;

	member_frame(g, op, job, &m[pick(&g->s, nm)], seq);
	if (chance(&g->s, 6))
		op->sender = chance(&g->s, 50) ? 42 : m[pick(&g->s, nm)].id + 1;
	if (chance(&g->s, 6))
		op->nworkers = pick(&g->s, 4);
	r = pick(&g->s, 100);
	if (r < 12) {
		op->type = IA_MSG_RESULT;
		op->seq = seq - pick(&g->s, 3);
		op->nworkers = pick(&g->s, 6);
	} else if (r < 15) {
		op->type = pick(&g->s, 6);
	} else if (r < 20) {
		op->type = op->type == IA_MSG_AGG ? IA_MSG_CONTRIB : IA_MSG_AGG;
	}
	r = pick(&g->s, 100);
	if (op->type == IA_MSG_RESULT)
		op->port = r < 85 ? 0 : 1 + pick(&g->s, 4);
	else
		op->port = r < 45 ? 1 : r < 80 ? 2 : r < 94 ? 3 : r < 97 ? 0 : FZ_NOPORT;
	r = pick(&g->s, 100);
	op->nelem = r < 88 ? FZ_NE : r < 94 ? 2 : r < 96 ? 1 + pick(&g->s, 8) :
		    r < 98 ? fz_sizes[pick(&g->s, FZ_NSIZES)] : (r < 99 ? 0 : IA_MAX_ELEMS + 1);
	op->flags = rnd_flags(g, op);
	if (op->flags & IA_F_SET) {
		op->set = chance(&g->s, 85) && m[0].set ?
			  (rnd(&g->s) & (job == FZ_PS ? 0x1f : 0x3)) : rnd(&g->s) & 0xff;
		if (op->sender == FZ_LOWER && chance(&g->s, 70))
			op->set = chance(&g->s, 50) ? 0x08 << pick(&g->s, 2) : 0x18;
		op->nworkers = chance(&g->s, 90) ? (__u32)__builtin_popcountll(op->set) :
			       pick(&g->s, 4);
	}
	if (chance(&g->s, 6))
		op->mut = 1 + pick(&g->s, FZ_M__N - 1);
}

/* Configuration changes wait for RCU grace periods (map-in-map updates): make fuzz has fewer. */
unsigned int fz_tail_ppm = 15000, fz_readd_ppm = 4000;

void fz_gen(__u64 seed, struct fz_op *ops, long n)
{
	struct gen g = { .s = seed, .front = { 0, 0, 100 } };
	static const __u32 sizes[] = { 0, 1, 2, 4, 8 };
	long i = 0;
	__u32 r;

	while (i < n) {
		r = pick(&g.s, 1000000);
		if (r < fz_tail_ppm) {
			memset(&ops[i], 0, sizeof(ops[i]));
			ops[i].kind = FZ_TAIL;
			ops[i].slots = sizes[pick(&g.s, 5)];
			ops[i].age_old = chance(&g.s, 50);
			ops[i].lend = pick(&g.s, FZ_WINDOW + 1);
			i++;
		} else if (r < fz_tail_ppm + fz_readd_ppm) {
			memset(&ops[i], 0, sizeof(ops[i]));
			ops[i++].kind = FZ_READD;
		} else if ((r = pick(&g.s, 100)) < 8) {
			i = burst(&g, ops, i, n, r < 3 ? FZ_BLUE : r < 6 ? FZ_PS : FZ_INA);
		} else {
			one_frame(&g, &ops[i++]);
		}
	}
}

static __u16 csum(const __u8 *ip, int len)
{
	__u32 s = 0;
	int i;

	for (i = 0; i < len; i += 2)
		s += (__u32)ip[i] << 8 | ip[i + 1];
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (__u16)~s;
}

static void put16(__u8 *p, __u16 v)
{
	p[0] = v >> 8;
	p[1] = v;
}

static void put32(__u8 *p, __u32 v)
{
	put16(p, v >> 16);
	put16(p + 2, v);
}

/* op's frame into buf (at least M_FRAME_MAX bytes); its length. */
int fz_frame(const struct fz_op *op, __u8 *buf)
{
	__u32 t = op->flags & IA_F_SET ? IA_SET_LEN : 0, n = op->nelem, len, i;
	__u64 s = op->vals;
	__u32 v;

	len = IA_FRAME_LEN(n) + t;
	memset(buf, 0, len + 8);
	memcpy(buf, "\x02\0\0\0\x02\x01\x02\0\0\0\x01", 11);
	buf[11] = op->port;
	put16(buf + 12, 0x0800);
	buf[14] = 0x45;
	put16(buf + 16, 20 + IA_UDP_LEN(n) + t);
	buf[22] = 64;
	buf[23] = 17;
	put32(buf + 26, 0x0a090000 | (10 + op->port));
	put32(buf + 30, 0x0a090001);
	put16(buf + 34, 40000);
	put16(buf + 36, IA_UDP_PORT);
	put16(buf + 38, IA_UDP_LEN(n) + t);
	buf[42] = IA_VERSION;
	buf[43] = op->type;
	put32(buf + 44, op->job);
	put32(buf + 48, op->seq);
	put32(buf + 52, op->sender);
	put32(buf + 56, op->nworkers);
	put16(buf + 60, n);
	buf[62] = op->flags;
	for (i = 0; i < n; i++) {
		v = (__u32)rnd(&s);
		v = i & 1 ? v : v % 1000;	/* some small, some that wrap */
		memcpy(buf + IA_PAYLOAD_OFF + 4 * i, &v, 4);	/* little-endian host */
	}
	if (t) {
		put32(buf + IA_FRAME_LEN(n), (__u32)(op->set >> 32));
		put32(buf + IA_FRAME_LEN(n) + 4, (__u32)op->set);
	}
	switch (op->mut) {
	case FZ_M_TRUNC: len = IA_L2L4_LEN + op->vals % (len - IA_L2L4_LEN); break;
	case FZ_M_VERSION: buf[42] = op->vals & 1 ? 2 : 0; break;
	case FZ_M_IPOPT:
		memmove(buf + 38, buf + 34, len - 34);
		memset(buf + 34, 1, 4);	/* four NOPs */
		buf[14] = 0x46;
		put16(buf + 16, 24 + IA_UDP_LEN(n) + t);
		len += 4;
		break;
	case FZ_M_FRAG: put16(buf + 20, op->vals & 1 ? 0x2000 : 0x0001); break;
	case FZ_M_UDPLEN: put16(buf + 38, IA_UDP_LEN(n) + t + 4); break;
	case FZ_M_NOTUDP: buf[23] = 6; break;
	case FZ_M_PORT: put16(buf + 36, IA_UDP_PORT + 1); break;
	case FZ_M_TINY: len = 30; break;
	case FZ_M_ETHER: put16(buf + 12, 0x86dd); break;
	case FZ_M_IPLEN: put16(buf + 16, 16 + IA_UDP_LEN(n) + t); break;
	}
	put16(buf + 24, 0);
	put16(buf + 24, csum(buf + 14, 20));
	return len;
}

static const char *const type_name[] = { "type0", "CONTRIB", "AGG", "RESULT", "type4", "type5" };
static const char *const mut_name[FZ_M__N] = {
	"", " mut:truncated", " mut:version", " mut:ip-options", " mut:fragment",
	" mut:udp-length", " mut:not-udp", " mut:other-port", " mut:tiny", " mut:ethertype",
	" mut:ip-length",
};

void fz_print_op(FILE *f, long i, const struct fz_op *op)
{
	static const char *const fl[8] = { "MARK", "RETX", "REEMIT", "SET", "FLUSH", "COLL",
					   "NACK", "BYPASS" };
	int b, any = 0;

	fprintf(f, "#   %4ld: ", i);
	if (op->kind == FZ_TAIL) {
		fprintf(f, "tail_set pool %u, flush age %s, job %u lends %u\n", op->slots,
			op->age_old ? "1 ns (every holder old)" : "1 h (none old)", FZ_INA,
			op->lend);
		return;
	}
	if (op->kind == FZ_READD) {
		fprintf(f, "job %u removed and added again\n", FZ_PS);
		return;
	}
	fprintf(f, "port %u %s job %u seq %u sender %#x nworkers %u nelem %u flags ",
		op->port, op->type < 6 ? type_name[op->type] : "type?", op->job, op->seq,
		op->sender, op->nworkers, op->nelem);
	for (b = 0; b < 8; b++)
		if (op->flags & 1 << b)
			fprintf(f, "%s%s", any++ ? "|" : "", fl[b]);
	if (!any)
		fprintf(f, "0");
	if (op->flags & IA_F_SET)
		fprintf(f, " set %#llx", (unsigned long long)op->set);
	fprintf(f, " vals %#x%s\n", op->vals, op->mut < FZ_M__N ? mut_name[op->mut] : "");
}
