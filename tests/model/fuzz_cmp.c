// SPDX-License-Identifier: GPL-2.0
/*
 * The fuzzer's comparison of one frame's outcome: verdict, the frame that
 * leaves, every job's and port's counters, the slots it touched (every
 * slot in slow mode), and the accounting of the datapath's own counters:
 * every frame has exactly one outcome.
 */
#include <stdarg.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <linux/bpf.h>

#include "xdp.h"
#include "fuzz.h"

const __u32 fz_jobs[FZ_NJOBS] = { FZ_BLUE, FZ_RED, FZ_PS, FZ_INA };

int fz_snap(struct fz *z, struct fz_snap *s)
{
	struct ia_counters c;
	int i, k;

	for (i = 0; i < FZ_NJOBS; i++) {
		if (ia_xdp_job_counters(z->x, fz_jobs[i], &c))
			return -1;
		for (k = 0; k < IA_C__COUNT; k++)
			s->j[i][k] = c.c[k] - z->jbase[i][k];
	}
	for (i = 0; i < FZ_NPORTS; i++) {
		if (ia_xdp_port_counters(z->x, z->port[i], &c))
			return -1;
		for (k = 0; k < IA_C__COUNT; k++)
			s->p[i][k] = c.c[k] - z->pbase[i][k];
	}
	return 0;
}

static int differ(struct fz_diff *d, long at, const char *fmt, ...)
{
	va_list ap;

	d->at = at;
	va_start(ap, fmt);
	vsnprintf(d->what, sizeof(d->what), fmt, ap);
	va_end(ap);
	return 1;
}

static int cmp_counters(struct fz *z, const struct fz_snap *s, long at, struct fz_diff *d)
{
	struct m_job *mj;
	int i, k;

	for (i = 0; i < FZ_NJOBS; i++) {
		mj = m_job_find(&z->m, fz_jobs[i]);
		for (k = 0; k < IA_C__COUNT && mj; k++)
			if (mj->c[k] != s->j[i][k])
				return differ(d, at, "job %u counter %s: datapath %llu, model %llu",
					      fz_jobs[i], ia_ctr_name(k),
					      (unsigned long long)s->j[i][k],
					      (unsigned long long)mj->c[k]);
	}
	for (i = 0; i < FZ_NPORTS; i++)
		for (k = 0; k < IA_C__COUNT; k++)
			if (z->m.pc[i][k] != s->p[i][k])
				return differ(d, at, "port %d counter %s: datapath %llu, model %llu",
					      i, ia_ctr_name(k), (unsigned long long)s->p[i][k],
					      (unsigned long long)z->m.pc[i][k]);
	return 0;
}

#define SLOT_CMP(f, a, b)							\
	do {									\
		if ((__u64)(a) != (__u64)(b))					\
			return differ(d, at, "slot %s[%d] %s: datapath %#llx, model %#llx", \
				      where, idx, f, (unsigned long long)(a),	\
				      (unsigned long long)(b));			\
	} while (0)

/* Slot idx of job (0: the tail pool), as far as the docs make it observable. */
void fz_inner_close(struct fz *z)
{
	int i;

	for (i = 0; i < 3; i++) {
		if (z->inner[i].id)
			close(z->inner[i].fd);
		z->inner[i].id = 0;
	}
}

/*
 * Slot idx of the slot array under key in ia_slots (a job's slot, or
 * IA_TAIL_SLOT), through an fd kept while the array is the same map.
 */
static int slot_read(struct fz *z, __u32 key, __u32 idx, struct ia_slot *s)
{
	__u32 id, i;
	int fd;

	if (bpf_map_lookup_elem(z->slots_fd, &key, &id))
		return -1;
	for (i = 0; i < 3 && z->inner[i].id && z->inner[i].key != key; i++)
		;
	if (i == 3)
		return -1;
	if (z->inner[i].id != id) {
		fd = bpf_map_get_fd_by_id(id);
		if (fd < 0)
			return -1;
		if (z->inner[i].id)
			close(z->inner[i].fd);
		z->inner[i].key = key;
		z->inner[i].id = id;
		z->inner[i].fd = fd;
	}
	return bpf_map_lookup_elem(z->inner[i].fd, &idx, s);
}

static int cmp_slot(struct fz *z, __u32 job, int idx, long at, struct fz_diff *d)
{
	const struct m_slot *m;
	struct ia_job_cfg cfg;
	struct ia_slot s;
	char where[24];
	struct m_job *mj;
	__u32 i;

	if (job) {
		mj = m_job_find(&z->m, job);
		if (!mj || bpf_map_lookup_elem(z->jobs_fd, &job, &cfg) ||
		    slot_read(z, cfg.slot, idx, &s))
			return 0;
		m = &mj->slot[idx];
		snprintf(where, sizeof(where), "job %u", job);
	} else {
		if ((__u32)idx >= z->m.tail || slot_read(z, IA_TAIL_SLOT, idx, &s))
			return 0;
		m = &z->m.pool[idx];
		snprintf(where, sizeof(where), "pool");
	}
	SLOT_CMP("state", s.state, m->state);
	SLOT_CMP("seq", s.seq, m->seq);
	SLOT_CMP("nelem", s.nelem, m->nelem);
	SLOT_CMP("flags", s.flags, m->flags);
	SLOT_CMP("held", s.held, m->held);
	if (s.state == IA_SLOT_OPEN || s.state == IA_SLOT_DONE) {
		SLOT_CMP("nseen", s.nseen, m->nseen);
		SLOT_CMP("nworkers", s.nworkers, m->nworkers);
	}
	if (s.state == IA_SLOT_OPEN)
		SLOT_CMP("members", s.seen[0], m->seen);
	if (s.held)
		SLOT_CMP("hworkers", s.hworkers, m->hworkers);
	if (s.state == IA_SLOT_TAIL) {
		SLOT_CMP("tag job", s.t.job, m->tjob);
		SLOT_CMP("tag seq", s.t.seq, m->tseq);
		SLOT_CMP("tag set", s.t.set, m->tset);
		SLOT_CMP("head state", s.t.hstate, m->hstate);
	}
	for (i = 0; s.state != IA_SLOT_EMPTY && i < s.nelem && i < IA_MAX_ELEMS; i++)
		SLOT_CMP("sum", (__u32)s.sum[i], (__u32)m->sum[i]);
	return 0;
}

static __u64 sum_drops(const __u64 *c)
{
	__u64 n = 0;
	int k;

	for (k = IA_C_DROP_SHORT; k <= IA_C_DROP_SET; k++)
		n += c[k];
	return n + c[IA_C_DROP_PORT];
}

/*
 * One outcome per frame, from the datapath's counters alone: for a frame
 * of a known job, a drop by reason, a duplicate, a message sent (tx: up or
 * an answer), a result sent down, or a consumed contribution (aggregated,
 * dropped); else the port's pass or drop.
 */
static int accounting(int verdict, int port, const struct fz_snap *a, const struct fz_snap *b,
		      long at, struct fz_diff *d)
{
	__u64 n = 0, rx = 0, x;
	int i;

	for (i = 0; i < FZ_NJOBS; i++) {
		rx += b->j[i][IA_C_RX] - a->j[i][IA_C_RX];
		x = sum_drops(b->j[i]) - sum_drops(a->j[i]);
		x += b->j[i][IA_C_DUP] - a->j[i][IA_C_DUP];
		x += b->j[i][IA_C_TX] - a->j[i][IA_C_TX];
		x += b->j[i][IA_C_RESULT] - a->j[i][IA_C_RESULT];
		if (verdict == XDP_DROP)
			x += b->j[i][IA_C_AGGREGATED] - a->j[i][IA_C_AGGREGATED];
		n += x;
	}
	if (!rx) {
		if (port >= FZ_NPORTS)
			return 0;	/* no port: counted nowhere */
		n = sum_drops(b->p[port]) - sum_drops(a->p[port]) +
		    b->p[port][IA_C_PASS] - a->p[port][IA_C_PASS];
	}
	if (n != 1)
		return differ(d, at, "accounting: the datapath counted %llu outcomes for one frame",
			      (unsigned long long)n);
	return 0;
}

static int cmp_slots(struct fz *z, long at, struct fz_diff *d);

static __u64 mono_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000000ull + t.tv_nsec;
}

int fz_check(struct fz *z, long at, int port, int verdict, const __u8 *out, __u32 olen,
	     struct fz_snap *prev, struct fz_diff *d)
{
	const struct m_out *o = &z->o;
	struct fz_snap cur;
	__u64 t;
	__u32 i;
	int k;

	if (verdict != o->verdict)
		return differ(d, at, "verdict: datapath %d, model %d", verdict, o->verdict);
	if (verdict != XDP_DROP && verdict != XDP_ABORTED) {
		if (olen != o->len)
			return differ(d, at, "frame out: datapath %u bytes, model %u", olen, o->len);
		for (i = 0; i < olen; i++)
			if (out[i] != o->frame[i])
				return differ(d, at, "frame out: byte %u: datapath %#x, model %#x",
					      i, out[i], o->frame[i]);
	}
	t = mono_ns();
	if (fz_snap(z, &cur))
		return differ(d, at, "counters unreadable");
	z->ns_snap += mono_ns() - t;
	if (cmp_counters(z, &cur, at, d) || accounting(verdict, port, prev, &cur, at, d))
		return 1;
	*prev = cur;
	if (z->slot_budget_ns && z->ns_slots >= z->slot_budget_ns) {
		z->noslots++;
		return 0;
	}
	t = mono_ns();
	k = cmp_slots(z, at, d);
	z->ns_slots += mono_ns() - t;
	return k;
}

/* The slots the frame touched, or every slot in slow mode. */
static int cmp_slots(struct fz *z, long at, struct fz_diff *d)
{
	const struct m_out *o = &z->o;
	__u32 i;
	int k;

	if (z->slow) {
		for (i = 0; i < FZ_WINDOW; i++)
			if (cmp_slot(z, FZ_BLUE, i, at, d) || cmp_slot(z, FZ_INA, i, at, d))
				return 1;
		for (i = 0; i < z->m.tail; i++)
			if (cmp_slot(z, 0, i, at, d))
				return 1;
		return 0;
	}
	for (k = 0; k < o->ntouched; k++)
		if (cmp_slot(z, o->tjob[k], o->tidx[k], at, d))
			return 1;
	return 0;
}
