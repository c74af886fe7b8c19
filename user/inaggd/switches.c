// SPDX-License-Identifier: GPL-2.0
/*
 * inaggd's network: every switch's agent (remote.h), which does the job
 * transaction's operations on the switch's ledger and BPF maps.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "inaggd.h"
#include "ledger.h"
#include "remote.h"

/*
 * The agent's program: $INAGG_AGENT, else inagg-agent beside this binary
 * (a build tree, an install), else the one in PATH.
 */
static const char *agent_bin(char *buf, size_t len)
{
	const char *env = getenv("INAGG_AGENT");
	ssize_t n;
	char *slash;

	if (env && *env)
		return env;
	n = readlink("/proc/self/exe", buf, len - sizeof("inagg-agent"));
	if (n > 0) {
		buf[n] = '\0';
		slash = strrchr(buf, '/');
		if (slash) {
			strcpy(slash + 1, "inagg-agent");
			if (!access(buf, X_OK))
				return buf;
		}
	}
	return "inagg-agent";
}

static void port_from(struct port *p, const struct ia_rport *rp)
{
	p->ifindex = rp->ifindex;
	memcpy(p->mac, rp->mac, 6);
	memcpy(p->peer, rp->peer, 6);
}

/* Switch v's ports as its agent read them (at start, or once it connected later). */
static void copy_ports(void *ctx, int v)
{
	struct daemon *d = ctx;
	const struct ia_topo *t = d->t;
	struct ia_rswitch *rs = &d->remote->sw[v];
	struct swinfo *s = &d->sw[v];

	port_from(&s->up, &rs->up);
	for (int i = 0; i < t->child_start[v + 1] - t->child_start[v]; i++)
		port_from(&s->down[i], &rs->down[i]);
	for (uint32_t j = 0; j < t->sw[v].load; j++)
		port_from(&s->host[j], &rs->host[j]);
}

/*
 * A switch connected after the start (unreachable then, or rebooted: a
 * namespace switch set up again): its ports, a map handle of before dropped,
 * its tail published by the main loop (this may run inside a transaction).
 */
static void connected(void *ctx, int v)
{
	struct daemon *d = ctx;

	copy_ports(d, v);
	sw_xdp_drop(d, v);
	ia_lender_touch(&d->lend, v);
	d->connected = true;
}

/*
 * Every switch's agent started (docs/remote.md): in its namespace here, or
 * over ssh for a switch whose topology site names a host; its ports and
 * their peers read through it. A router that does not answer is marked
 * down and connected when it answers again (server.c ticks it).
 */
int resolve_ports(struct daemon *d)
{
	const struct ia_topo *t = d->t;
	char bin[PATH_MAX], err[IA_ERRLEN];
	int ret;

	d->sw = calloc(t->n, sizeof(*d->sw));
	d->xdp = calloc(t->n, sizeof(*d->xdp));
	d->xdp_retry = calloc(t->n, sizeof(*d->xdp_retry));
	d->remote = calloc(1, sizeof(*d->remote));
	if (!d->sw || !d->xdp || !d->xdp_retry || !d->remote)
		return -ENOMEM;
	ia_net_dest_ns(d->tag, d->dest_ns, sizeof(d->dest_ns));
	ret = ia_remote_open(d->remote, t, d->topo_path, d->tag, agent_bin(bin, sizeof(bin)), err,
			     sizeof(err));
	if (ret) {
		log_msg(IA_LOG_ERR, "%s", err);
		return ret;
	}
	d->remote->job_flags = d->job_flags;
	d->remote->note = note;
	d->remote->note_ctx = d;
	/* A router that does not answer stalls no request: tried again in the background. */
	for (int v = 0; v < t->n; v++)
		d->remote->sw[v].link.async = true;
	ret = ia_remote_connect(d->remote, err, sizeof(err));
	if (ret) {
		log_msg(IA_LOG_ERR, "%s", err);
		return ret;
	}
	for (int v = 0; v < t->n; v++) {
		struct swinfo *s = &d->sw[v];
		int nc = t->child_start[v + 1] - t->child_start[v];

		/* Only a namespace switch's maps are this host's (memory statistics). */
		snprintf(s->ns, sizeof(s->ns), "%s", d->remote->sw[v].remote ? "" :
			 d->remote->sw[v].ns);
		s->down = calloc(nc ? nc : 1, sizeof(struct port));
		s->host = calloc(t->sw[v].load ? t->sw[v].load : 1, sizeof(struct port));
		if (!s->down || !s->host) {
			free(s->down);
			free(s->host);
			s->down = s->host = NULL;
			return -ENOMEM;
		}
		copy_ports(d, v);
	}
	d->remote->on_connect = connected;
	return 0;
}

/* The ledgers hold the topology's figures, jobs and slots: the authority of every admission. */
int init_ledgers(struct daemon *d, char *err, size_t errlen)
{
	_Static_assert(IA_SLOTS_MAX == INAGG_SLOTS_LIMIT, "topology slots as the ledger's");
	return ia_remote_setup(d->remote, err, errlen);
}

static int sw_admit(void *ctx, int v, uint32_t id, enum ia_job_class class, uint32_t slots,
		    char *why, size_t whylen)
{
	struct daemon *d = ctx;
	int ret = ia_remote_admit(d->remote, v, id,
				  class == IA_JOB_PS ? INAGG_CLASS_PS : INAGG_CLASS_INA, slots, why,
				  whylen);

	if (!ret)
		ia_lender_touch(&d->lend, v);	/* the tail shrank */
	return ret;
}

static int sw_release(void *ctx, int v, uint32_t id, char *why, size_t whylen)
{
	struct daemon *d = ctx;
	int ret = ia_remote_release(d->remote, v, id, why, whylen);

	if (!ret)
		ia_lender_touch(&d->lend, v);	/* the tail grew */
	return ret;
}

static int sw_admitted(void *ctx, int v, uint32_t id)
{
	struct daemon *d = ctx;

	return ia_remote_admitted(d->remote, v, id);
}

static bool sw_has_room(void *ctx, int v, uint32_t slots)
{
	struct daemon *d = ctx;

	return ia_remote_has_room(d->remote, v, slots);
}

/*
 * Before job j is pushed to switch v: where it is a tail job, the tail's
 * programs loaded by the daemon, which waits for the verifier (seconds on
 * a loaded host) as long as it takes, and the switch's agent, whose push
 * has a deadline, finds them there. Only switches with a PS job pay it.
 */
static int tail_load(struct daemon *d, const struct ia_job *j, int v, char *why, size_t whylen)
{
	struct ia_xdp *x;
	int ret;

	if (!ia_job_tail_at(d->t, j, v) || !*d->sw[v].ns)
		return 0;	/* another machine's: its agent loads them */
	x = sw_xdp(d, v);
	if (!x)
		return ia_fail(why, whylen, -ENOENT, "switch maps not found");
	ret = ia_xdp_tail_load(x, why, whylen);
	if (ret)
		sw_xdp_drop(d, v);	/* a handle kept from before may be what failed */
	return 0;
}

static int sw_push(void *ctx, const struct ia_job *j, int v, char *why, size_t whylen)
{
	struct daemon *d = ctx;

	return tail_load(d, j, v, why, whylen) ?: ia_remote_push(d->remote, j, v, why, whylen);
}

static int sw_unpush(void *ctx, int v, uint32_t id)
{
	struct daemon *d = ctx;

	return ia_remote_unpush(d->remote, v, id);
}

static bool sw_pushed(void *ctx, int v, uint32_t id)
{
	struct daemon *d = ctx;

	return ia_remote_pushed(d->remote, v, id);
}

/* The agents learn the table too: a new session drops what it holds of ended jobs. */
static int sw_save(void *ctx, const struct ia_jobs *js)
{
	struct daemon *d = ctx;

	ia_remote_saved(d->remote, js);
	return save_state(ctx, js);
}

const struct ia_job_ops switch_job_ops = {
	.admit = sw_admit,	 .release = sw_release, .admitted = sw_admitted,
	.has_room = sw_has_room, .push = sw_push,	.unpush = sw_unpush,
	.pushed = sw_pushed,	 .save = sw_save,	.note = note,
};

/*
 * Switch v's maps, opened once and kept while they are the ones pinned:
 * opening parses the whole BPF object, too slow to do per request (a
 * recovery checks every job on every switch). A switch set up again
 * ("inagg net down" and "net up") has new maps: the old handle is dropped
 * and the new ones opened. After a failure to open, not tried again for 5 s.
 */
struct ia_xdp *sw_xdp(struct daemon *d, int v)
{
	struct timespec now;
	int h;

	if (d->xdp[v] && ia_xdp_current(d->xdp[v], d->sw[v].ns))
		return d->xdp[v];
	sw_xdp_drop(d, v);
	if (!*d->sw[v].ns)
		return NULL;	/* another machine's */
	clock_gettime(CLOCK_MONOTONIC, &now);
	if (now.tv_sec < d->xdp_retry[v])
		return NULL;
	h = ia_netns_enter(d->sw[v].ns);
	if (h < 0)
		return NULL;
	if (ia_xdp_open_existing(d->sw[v].ns, &d->xdp[v], NULL, 0)) {
		d->xdp[v] = NULL;
		d->xdp_retry[v] = now.tv_sec + 5;
	}
	ia_netns_return(h);
	return d->xdp[v];
}

/* A kept handle that failed, or a switch connected again: opened afresh when next needed. */
void sw_xdp_drop(struct daemon *d, int v)
{
	ia_xdp_close(d->xdp[v]);
	d->xdp[v] = NULL;
	d->xdp_retry[v] = 0;
}

/* Counters of one port (ifindex) or one job of switch v, from its agent; 0 on any failure. */
void port_counters(struct daemon *d, int v, int ifindex, struct ia_counters *c)
{
	ia_remote_counters(d->remote, v, 0, ifindex, c);
}

void job_counters(struct daemon *d, int v, __u32 id, struct ia_counters *c)
{
	ia_remote_counters(d->remote, v, id, 0, c);
}
