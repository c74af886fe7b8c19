// SPDX-License-Identifier: GPL-2.0
/*
 * inaggd's network: the ports of every switch namespace, and the job
 * transaction's operations on the real ledgers and BPF maps.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <bpf/libbpf.h>

#include <inagg/wire.h>

#include "inaggd.h"
#include "ledger.h"

/* Reads one interface of namespace ns. */
static int read_port(const char *ns, const char *ifname, struct port *p)
{
	int h = ia_netns_enter(ns), ret;

	if (h < 0)
		return h;
	ret = ia_if_info(ifname, &p->ifindex, p->mac);
	ia_netns_return(h);
	if (ret)
		log_msg(LOG_ERR, "%s: interface %s: %s", ns, ifname, strerror(-ret));
	return ret;
}

/* Interface indexes and MACs of every port, and of the far end of each. */
int resolve_ports(struct daemon *d)
{
	const struct ia_topo *t = d->t;
	char name[16], ns[128];
	struct port far;
	int ret;

	d->sw = calloc(t->n, sizeof(*d->sw));
	d->xdp = calloc(t->n, sizeof(*d->xdp));
	d->xdp_retry = calloc(t->n, sizeof(*d->xdp_retry));
	if (!d->sw || !d->xdp || !d->xdp_retry)
		return -ENOMEM;
	ia_net_dest_ns(d->tag, d->dest_ns, sizeof(d->dest_ns));
	for (int v = 0; v < t->n; v++) {
		struct swinfo *s = &d->sw[v];
		int nc = t->child_start[v + 1] - t->child_start[v];

		ia_net_switch_ns(d->tag, t->sw[v].name, s->ns, sizeof(s->ns));
		s->down = calloc(nc ? nc : 1, sizeof(struct port));
		s->host = calloc(t->sw[v].load ? t->sw[v].load : 1, sizeof(struct port));
		if (!s->down || !s->host)
			return -ENOMEM;
		ret = read_port(s->ns, IA_PORT_UP, &s->up);
		for (int i = 0; !ret && i < nc; i++) {
			ia_port_name(IA_PORT_CHILD, i, name);
			ret = read_port(s->ns, name, &s->down[i]);
		}
		for (uint32_t j = 0; !ret && j < t->sw[v].load; j++) {
			ia_port_name(IA_PORT_HOST, j, name);
			ret = read_port(s->ns, name, &s->host[j]);
			ia_net_worker_ns(d->tag, t->sw[v].name, j, ns, sizeof(ns));
			if (!ret)
				ret = read_port(ns, IA_HOST_PORT, &far);
			memcpy(s->host[j].peer, far.mac, 6);
		}
		if (ret)
			return ret;
	}
	for (int v = 0; v < t->n; v++) {
		struct swinfo *s = &d->sw[v];
		int p = t->sw[v].parent;

		if (p < 0) {
			ret = read_port(d->dest_ns, IA_HOST_PORT, &far);
			if (ret)
				return ret;
			memcpy(s->up.peer, far.mac, 6);
		} else {
			int pos = ia_topo_child_pos(t, v);

			memcpy(s->up.peer, d->sw[p].down[pos].mac, 6);
			memcpy(d->sw[p].down[pos].peer, s->up.mac, 6);
		}
	}
	return 0;
}

/* Opens the ledger of switch v, with the reason in why on failure. */
static int ledger_open(struct daemon *d, int v, struct ia_ledger **l, char *why, size_t whylen)
{
	int ret = ia_ledger_open(l, IA_LEDGER_AUTO, d->sw[v].ns);

	return ret ? ia_fail(why, whylen, ret, "ledger: %s", strerror(-ret)) : 0;
}

static int ledger_done(struct ia_ledger *l, int ret, char *why, size_t whylen)
{
	if (ret)
		ia_fail(why, whylen, ret, "%s", *ia_ledger_errmsg(l) ? ia_ledger_errmsg(l) :
								 strerror(-ret));
	ia_ledger_close(l);
	return ret;
}

/*
 * The tail pool is all the memory no head holds (FlexINA: PS jobs use what
 * no job was given), so it follows every admission and release.
 */
static int tail_follow(struct ia_ledger *l, __u32 more_heads)
{
	struct ia_ledger_cap cap;
	int ret = ia_ledger_get(l, &cap);

	if (ret)
		return ret;
	if ((__u64)cap.head_slots + more_heads > cap.max_slots)
		return -ENOSPC;
	return ia_ledger_set_tail(l, cap.max_slots - cap.head_slots - more_heads);
}

static int sw_admit(void *ctx, int v, uint32_t id, enum ia_job_class class, uint32_t slots,
		    char *why, size_t whylen)
{
	struct ia_ledger *l;
	int ret = ledger_open(ctx, v, &l, why, whylen);

	if (ret)
		return ret;
	/* The tail gives the head its room first; it takes it back if admission fails. */
	ret = tail_follow(l, slots);
	if (ret != -ENOSPC && ret)
		return ledger_done(l, ret, why, whylen);
	ret = ia_ledger_admit_class(l, id, class == IA_JOB_PS ? INAGG_CLASS_PS : INAGG_CLASS_INA,
				    slots);
	if (ret) {
		ia_fail(why, whylen, ret, "%s", *ia_ledger_errmsg(l) ? ia_ledger_errmsg(l) :
								     strerror(-ret));
		tail_follow(l, 0);
		ia_ledger_close(l);
		return ret;
	}
	ia_lender_touch(&((struct daemon *)ctx)->lend, v);	/* the tail shrank */
	return ledger_done(l, tail_follow(l, 0), why, whylen);
}

static int sw_release(void *ctx, int v, uint32_t id, char *why, size_t whylen)
{
	struct ia_ledger *l;
	int ret = ledger_open(ctx, v, &l, why, whylen);

	if (ret)
		return ret;
	ret = ia_ledger_release(l, id);
	if (ret)
		return ledger_done(l, ret, why, whylen);
	ia_lender_touch(&((struct daemon *)ctx)->lend, v);	/* the tail grew */
	return ledger_done(l, tail_follow(l, 0), why, whylen);
}

static int sw_admitted(void *ctx, int v, uint32_t id)
{
	struct ia_ledger_job entry;
	struct ia_ledger *l;
	int ret = ledger_open(ctx, v, &l, NULL, 0);

	return ret ? ret : ledger_done(l, ia_ledger_job(l, id, &entry), NULL, 0);
}

/* Whether switch v can take one more job with a head of this many slots (the tail yields). */
static bool sw_has_room(void *ctx, int v, uint32_t slots)
{
	struct ia_ledger_cap cap;
	struct ia_ledger *l;
	bool room = false;

	if (ledger_open(ctx, v, &l, NULL, 0))
		return false;
	if (!ia_ledger_get(l, &cap))
		room = cap.used_jobs < cap.max_jobs && (__u64)cap.head_slots + slots <= cap.max_slots;
	ia_ledger_close(l);
	return room;
}

/*
 * The ledgers hold the topology's figures, jobs and slots: they are the
 * authority every admission is checked against. The tail is emptied first
 * (it may always shrink) so that only heads can keep the slots from being
 * set, then given what the heads leave.
 */
int init_ledgers(struct daemon *d, char *err, size_t errlen)
{
	_Static_assert(IA_SLOTS_MAX == INAGG_SLOTS_LIMIT, "topology slots as the ledger's");
	for (int v = 0; v < d->t->n; v++) {
		long long jobs = d->t->sw[v].capacity, slots = d->t->sw[v].slots;
		struct ia_ledger *l;
		int ret;

		if (jobs > INAGG_JOBS_LIMIT)
			jobs = INAGG_JOBS_LIMIT;
		ret = ledger_open(d, v, &l, err, errlen);
		if (ret)
			return ret;
		if (v == 0)
			log_msg(LOG_INFO, "ledger backend: %s",
				ia_ledger_backend_name(ia_ledger_backend(l)));
		ret = ia_ledger_set_tail(l, 0);
		if (!ret)
			ret = ia_ledger_set(l, jobs, slots);
		if (!ret)
			ret = tail_follow(l, 0);
		if (ret) {
			ia_fail(err, errlen, ret, "ledger of %s: setting %lld jobs, %lld slots: %s",
				d->t->sw[v].name, jobs, slots,
				*ia_ledger_errmsg(l) ? ia_ledger_errmsg(l) : strerror(-ret));
			ia_ledger_close(l);
			return ret;
		}
		ia_ledger_close(l);
	}
	return 0;
}

static struct ia_xdp_hop hop(const struct port *p, struct in_addr saddr, struct in_addr daddr)
{
	struct ia_xdp_hop h = { .ifindex = p->ifindex, .saddr = saddr.s_addr,
				.daddr = daddr.s_addr };

	memcpy(h.smac, p->mac, 6);
	memcpy(h.dmac, p->peer, 6);
	return h;
}

static int sw_push(void *ctx, const struct ia_job *j, int v, char *why, size_t whylen)
{
	struct daemon *d = ctx;
	const struct ia_topo *t = d->t;
	const struct ia_plan_switch *ps = &j->plan.sw[v];
	struct swinfo *s = &d->sw[v];
	struct ia_xdp_hop *down = calloc(ps->ndown + t->sw[v].load + 1, sizeof(*down));
	struct in_addr none = { 0 };
	struct ia_xdp *x = NULL;
	__u32 prog_id = 0, ntm = 0;
	int h, ret, ndown = 0;
	/* A PS job: its tail here, or red; either way its members carry sets (job_tail.c). */
	bool tail = ia_job_tail_at(t, j, v), sets = j->class == IA_JOB_PS &&
						     j->plan.nworkers <= IA_MAX_RANKS;
	struct ia_sender *tm = sets ? calloc(j->plan.nworkers + t->n, sizeof(*tm)) : NULL;
	uint64_t *ts = sets ? calloc(j->plan.nworkers + t->n, sizeof(*ts)) : NULL;

	if (!down || (sets && (!tm || !ts))) {
		ret = -ENOMEM;
		goto out;
	}
	if (sets)
		ia_job_tail_members(t, j, v, tm, ts, &ntm);
	for (uint32_t i = 0; i < ps->ndown; i++)
		down[ndown++] = hop(&s->down[ia_topo_child_pos(t, ps->down[i])], none, none);
	for (uint32_t w = 0; w < j->load[v]; w++)
		down[ndown++] = hop(&s->host[w], none,
				    ia_net_worker_addr(ia_net_worker_index(t, v, w)));

	struct ia_xdp_job cfg = {
		.id = j->id,
		.role = ps->blue ? IA_ROLE_BLUE : tail ? IA_ROLE_TAIL : IA_ROLE_RED,
		.window = j->head,	/* the BPF memory: what the ledger admitted */
		.self_id = ia_switch_id(v),
		.nmembers = sets ? ntm : ps->nmembers,
		.members = sets ? tm : ps->members,
		.sets = tail ? (const __u64 *)ts : NULL,
		.flags = d->job_flags,
		.up = ps->blue || tail ?
			      hop(&s->up, ia_net_uplink_addr(v, false), ia_net_dest_addr(t)) :
			      hop(&s->up, none, none),
		.ndown = ndown,
		.down = down,
	};

	h = ia_netns_enter(s->ns);
	if (h < 0) {
		ret = h;
		goto out;
	}
	if (bpf_xdp_query_id(s->up.ifindex, 0, &prog_id) || !prog_id) {
		snprintf(why, whylen, "no XDP program on port up (inagg dev attach up --netns %s)",
			 s->ns);
		ret = -ENODEV;
	} else {
		ret = ia_xdp_open(s->ns, &x);
		if (!ret)
			ret = ia_xdp_job_add(x, &cfg);
		if (ret)
			snprintf(why, whylen, "maps: %s", ia_xdp_strerror(ret));
	}
	ia_xdp_close(x);
	ia_netns_return(h);
out:
	free(down);
	free(tm);
	free(ts);
	return ret;
}

static int sw_unpush(void *ctx, int v, uint32_t id)
{
	struct daemon *d = ctx;
	struct ia_xdp *x;
	int h = ia_netns_enter(d->sw[v].ns), ret;

	if (h < 0)
		return h;
	ret = ia_xdp_open(d->sw[v].ns, &x);
	if (!ret) {
		ret = ia_xdp_job_del(x, id);
		ia_xdp_close(x);
	}
	ia_netns_return(h);
	return ret;
}

static int counters(struct daemon *d, int v, int ifindex, __u32 job, struct ia_counters *c);

static bool sw_pushed(void *ctx, int v, uint32_t id)
{
	struct ia_counters c;

	return !counters(ctx, v, 0, id, &c);
}

const struct ia_job_ops switch_job_ops = {
	.admit = sw_admit,	 .release = sw_release, .admitted = sw_admitted,
	.has_room = sw_has_room, .push = sw_push,	.unpush = sw_unpush,
	.pushed = sw_pushed,	 .save = save_state,	.note = note,
};

/*
 * Switch v's maps, opened once and kept: opening parses the whole BPF
 * object, too slow to do per request (a recovery checks every job on every
 * switch). After a failure to open, not tried again for 5 s.
 */
struct ia_xdp *sw_xdp(struct daemon *d, int v)
{
	struct timespec now;
	int h;

	if (d->xdp[v])
		return d->xdp[v];
	clock_gettime(CLOCK_MONOTONIC, &now);
	if (now.tv_sec < d->xdp_retry[v])
		return NULL;
	h = ia_netns_enter(d->sw[v].ns);
	if (h < 0)
		return NULL;
	if (ia_xdp_open_existing(d->sw[v].ns, &d->xdp[v])) {
		d->xdp[v] = NULL;
		d->xdp_retry[v] = now.tv_sec + 5;
	}
	ia_netns_return(h);
	return d->xdp[v];
}

/* A kept handle that failed a read: opened again next time. */
void sw_xdp_drop(struct daemon *d, int v)
{
	ia_xdp_close(d->xdp[v]);
	d->xdp[v] = NULL;
}

/* Counters of one port (ifindex) or one job of switch v; 0 on any failure. */
static int counters(struct daemon *d, int v, int ifindex, __u32 job, struct ia_counters *c)
{
	struct ia_xdp *x = sw_xdp(d, v);

	memset(c, 0, sizeof(*c));
	if (!x)
		return -ENOENT;
	return ifindex ? ia_xdp_port_counters(x, ifindex, c) : ia_xdp_job_counters(x, job, c);
}

void port_counters(struct daemon *d, int v, int ifindex, struct ia_counters *c)
{
	counters(d, v, ifindex, 0, c);
}

void job_counters(struct daemon *d, int v, __u32 id, struct ia_counters *c)
{
	counters(d, v, 0, id, c);
}
