// SPDX-License-Identifier: GPL-2.0
/*
 * The job transaction's operations over the switch agents (remote.h): the
 * ports and peers of every switch, the ledgers' limits, admissions, pushes,
 * counters; a new session reconciled with the controller's table; a
 * router's reboot turned into a failed job with its reason.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <inagg/wire.h>

#include "mac.h"
#include "job.h"
#include "netns.h"
#include "netplan.h"
#include "remote_int.h"

json_object *ia_remote_request(const char *op)
{
	json_object *q = json_object_new_object();

	json_object_object_add(q, "op", json_object_new_string(op));
	return q;
}

static bool job_uses(const struct ia_job *j, int v)
{
	return j->held[v] || (j->plan.sw && j->plan.sw[v].on_path);
}

/* Jobs of a router that rebooted lost their state there: failed, never silently wrong. */
static void rebooted(struct ia_remote *r, int v)
{
	struct ia_rswitch *s = &r->sw[v];

	s->reboots_seen = s->link.reboots;
	/*
	 * Its addresses, ports and ledger limits went with it: connected again,
	 * a router by ia_remote_tick(), a namespace switch (set up again: its
	 * network most likely was, new namespaces) with the others at once.
	 */
	if (s->link.async) {
		s->pending = true;
		s->connected = false;
	}
	if (!s->remote) {
		r->renewed = true;
		ia_remote_note(r, IA_LOG_WARN, "switch %s (namespace %s) was set up again: its ledger and "
			       "maps were lost", s->link.name, s->link.where);
	} else {
		ia_remote_note(r, IA_LOG_WARN, "router %s (%s) rebooted (new boot id): its ledger and maps "
			       "were lost", s->link.name, s->link.where);
	}
	for (int i = 0; r->js && i < r->js->njobs; i++) {
		const struct ia_job *j = &r->js->jobs[i];
		char key[16], why[2 * IA_ERRLEN];

		if (!job_uses(j, v))
			continue;
		/*
		 * A job being submitted (this may be its own call) lost nothing
		 * there but an admission made before; its later calls, a push
		 * too (ia_remote_push()), go to the new session. One being
		 * ended is gone from there anyway.
		 */
		if (j->state == IA_JOB_ENDING || (j->state != IA_JOB_ACTIVE && !j->held[v]))
			continue;
		/*
		 * Red there: the router held no state of the job but its
		 * configuration; what it lost in flight the workers resend (as
		 * after any loss), so pushed again once it is connected.
		 */
		if (j->state == IA_JOB_ACTIVE && !j->held[v] && !j->blue[v] && s->link.async) {
			if (!s->repush)
				s->repush = json_object_new_array();
			json_object_array_add(s->repush, json_object_new_int64(j->id));
			ia_remote_note(r, IA_LOG_WARN, "job %u: router %s only forwards it: its configuration "
				       "is pushed again once the router is connected", j->id,
				       s->link.name);
			continue;
		}
		snprintf(key, sizeof(key), "%u", j->id);
		snprintf(why, sizeof(why),
			 "router %s (%s) rebooted during the job: its aggregation state is gone; "
			 "end the job and submit it again", s->link.name, s->link.where);
		json_object_object_add(r->failed, key, json_object_new_string(why));
		ia_remote_note(r, IA_LOG_ERR, "job %u failed: %s", j->id, why);
	}
}

/* What a new session's agent holds of jobs the controller has no more: removed. */
static void reconcile(struct ia_remote *r, int v)
{
	struct ia_rswitch *s = &r->sw[v];
	json_object *held = s->link.held, *q, *rep;
	char why[IA_ERRLEN];
	size_t n;

	if (!r->js || !held || r->reconciling)
		return;
	r->reconciling = true;
	n = json_object_array_length(held);
	for (size_t i = 0; i < n; i++) {
		uint32_t id = json_object_get_int64(json_object_array_get_idx(held, i));

		if (ia_jobs_find((struct ia_jobs *)r->js, id))
			continue;
		ia_remote_note(r, IA_LOG_WARN, "router %s holds job %u, which has ended: removing it",
			       s->link.name, id);
		q = ia_remote_request("unpush");
		json_object_object_add(q, "job", json_object_new_int64(id));
		if (!ia_link_call(&s->link, q, &rep, why, sizeof(why)))
			json_object_put(rep);
		json_object_put(q);
		q = ia_remote_request("release");
		json_object_object_add(q, "job", json_object_new_int64(id));
		if (!ia_link_call(&s->link, q, &rep, why, sizeof(why)))
			json_object_put(rep);
		json_object_put(q);
	}
	r->reconciling = false;
}

/* Before anything else on a new session: what the router's hello tells. */
void ia_remote_session(struct ia_link *l, void *arg)
{
	struct ia_remote *r = arg;
	int v = (struct ia_rswitch *)((char *)l - offsetof(struct ia_rswitch, link)) - r->sw;

	if (l->reboots != r->sw[v].reboots_seen)
		rebooted(r, v);
	reconcile(r, v);
}

int ia_remote_call(struct ia_remote *r, int v, json_object *q, json_object **reply, char *why,
		   size_t whylen)
{
	struct ia_rswitch *s = &r->sw[v];
	int ret;

	/* A router that was unreachable at start: nothing but its connection before it is known. */
	if (s->pending && !s->connecting)
		ret = ia_fail(why, whylen, -EHOSTUNREACH, "router %s (%s): not connected yet: %s",
			      s->link.name, s->link.where, *s->link.why ? s->link.why : "");
	else
		ret = ia_link_do(&s->link, q, reply, why, whylen);
	json_object_put(q);
	/* A namespace switch set up again: the network is connected again before going on. */
	if (r->renewed && !r->renewing)
		ia_remote_renew(r);
	return ret;
}

static const char *mac_text(const unsigned char mac[6], char buf[18])
{
	ia_mac_format(mac, buf);
	return buf;
}


static json_object *job_req(const char *op, uint32_t id)
{
	json_object *q = ia_remote_request(op);

	json_object_object_add(q, "job", json_object_new_int64(id));
	return q;
}

int ia_remote_admit(struct ia_remote *r, int v, uint32_t id, int class, uint32_t slots,
		    char *why, size_t whylen)
{
	json_object *q = job_req("admit", id);

	json_object_object_add(q, "class", json_object_new_int(class));
	json_object_object_add(q, "slots", json_object_new_int64(slots));
	return ia_remote_call(r, v, q, NULL, why, whylen);
}

int ia_remote_release(struct ia_remote *r, int v, uint32_t id, char *why, size_t whylen)
{
	return ia_remote_call(r, v, job_req("release", id), NULL, why, whylen);
}

/* A boolean answer: 1, 0, or -errno when the router did not give one. */
static int ask(struct ia_remote *r, int v, json_object *q, const char *key)
{
	json_object *rep, *b;
	int ret = ia_remote_call(r, v, q, &rep, NULL, 0);

	if (ret)
		return ret;
	ret = json_object_object_get_ex(rep, key, &b) ? json_object_get_boolean(b) : -EPROTO;
	json_object_put(rep);
	return ret;
}

int ia_remote_admitted(struct ia_remote *r, int v, uint32_t id)
{
	int ret = ask(r, v, job_req("admitted", id), "admitted");

	return ret < 0 ? ret : ret ? 0 : -ENOENT;
}

bool ia_remote_has_room(struct ia_remote *r, int v, uint32_t slots)
{
	json_object *q = ia_remote_request("room");

	json_object_object_add(q, "slots", json_object_new_int64(slots));
	return ask(r, v, q, "room") == 1;
}

static json_object *hop_json(const struct ia_rport *p, struct in_addr saddr, struct in_addr daddr)
{
	json_object *o = json_object_new_object();
	char mac[18], a[INET_ADDRSTRLEN];

	json_object_object_add(o, "port", json_object_new_string(p->name));
	json_object_object_add(o, "peer", json_object_new_string(mac_text(p->peer, mac)));
	if (saddr.s_addr && inet_ntop(AF_INET, &saddr, a, sizeof(a)))
		json_object_object_add(o, "saddr", json_object_new_string(a));
	if (daddr.s_addr && inet_ntop(AF_INET, &daddr, a, sizeof(a)))
		json_object_object_add(o, "daddr", json_object_new_string(a));
	return o;
}

/*
 * Member m of switch v as the push gives it (docs/security.md): [id,
 * nworkers, port] and, for a worker on a host port of v, its address: the
 * port of v its messages come in by, the one toward where it was placed.
 */
static json_object *member_json(const struct ia_topo *t, struct ia_rswitch *s, int v,
				const struct ia_sender *m)
{
	json_object *e = json_object_new_array();
	struct in_addr a = { 0 };
	const char *port = NULL;
	int u = -1, g = -1;
	char text[INET_ADDRSTRLEN];

	json_object_array_add(e, json_object_new_int64(m->id));
	json_object_array_add(e, json_object_new_int64(m->nworkers));
	if (m->id & IA_SENDER_SWITCH) {
		u = m->id & ~IA_SENDER_SWITCH;
	} else {
		g = (int)m->id - 1;
		for (int w = 0; w < t->n && u < 0; w++)
			if (g >= t->first_worker[w] && g < t->first_worker[w] + (int)t->sw[w].load)
				u = w;
	}
	if (u < 0 || u >= t->n)
		return e;	/* not placed in this topology: left unbound */
	if (u == v && g >= 0) {
		port = s->host[g - t->first_worker[v]].name;
		a = ia_net_worker_addr(g);
	}
	while (!port && u >= 0 && t->sw[u].parent != v)
		u = t->sw[u].parent;
	if (!port && u >= 0 && u != v)
		port = s->down[ia_topo_child_pos(t, u)].name;
	if (!port)
		return e;
	json_object_array_add(e, json_object_new_string(port));
	if (a.s_addr && inet_ntop(AF_INET, &a, text, sizeof(text)))
		json_object_array_add(e, json_object_new_string(text));
	return e;
}

static int push_once(struct ia_remote *r, const struct ia_job *j, int v, char *why,
		     size_t whylen)
{
	const struct ia_topo *t = r->t;
	const struct ia_plan_switch *ps = &j->plan.sw[v];
	struct ia_rswitch *s = &r->sw[v];
	json_object *q = job_req("push", j->id), *members, *down, *sets = NULL;
	struct in_addr none = { 0 };
	/* A PS job: its tail here, or red; either way its members carry sets (job_tail.c). */
	bool tail = ia_job_tail_at(t, j, v), with_sets = j->class == IA_JOB_PS &&
							 j->plan.nworkers <= IA_MAX_RANKS;
	const struct ia_sender *m = ps->members;
	struct ia_sender *tm = NULL;
	uint64_t *ts = NULL;
	uint32_t nm = ps->nmembers;
	struct in_addr ps_addr = ia_net_dest_addr(t);
	char dest[INET_ADDRSTRLEN];

	if (with_sets) {
		tm = calloc(j->plan.nworkers + t->n, sizeof(*tm));
		ts = calloc(j->plan.nworkers + t->n, sizeof(*ts));
		if (!tm || !ts) {
			free(tm);
			free(ts);
			json_object_put(q);
			return ia_fail(why, whylen, -ENOMEM, "out of memory");
		}
		ia_job_tail_members(t, j, v, tm, ts, &nm);
		m = tm;
	}
	json_object_object_add(q, "role", json_object_new_string(ps->blue ? "blue" :
								 tail ? "tail" : "red"));
	/* The BPF memory: what the ledger admitted. */
	json_object_object_add(q, "window", json_object_new_int64(j->head));
	json_object_object_add(q, "self_id", json_object_new_int64(ia_switch_id(v)));
	/* flexina's PS jobs are marked at the lower threshold (docs/cc.md). */
	json_object_object_add(q, "flags", json_object_new_int64(r->job_flags |
				(ia_cc_marks_early(j->cc, j->class == IA_JOB_PS) ?
				 IA_JOB_F_MARK_EARLY : 0)));
	members = json_object_new_array();
	if (tail)
		sets = json_object_new_array();
	for (uint32_t i = 0; i < nm; i++) {
		json_object_array_add(members, member_json(t, s, v, &m[i]));
		if (sets)
			json_object_array_add(sets, json_object_new_uint64(ts[i]));
	}
	free(tm);
	free(ts);
	json_object_object_add(q, "members", members);
	/* Results come down only from the PS (dp_parse.h, result_from_up()). */
	if (inet_ntop(AF_INET, &ps_addr, dest, sizeof(dest)))
		json_object_object_add(q, "ps", json_object_new_string(dest));
	if (sets)
		json_object_object_add(q, "sets", sets);
	json_object_object_add(q, "up", ps->blue || tail ?
					hop_json(&s->up, ia_net_uplink_addr(v, false),
						 ia_net_dest_addr(t)) :
					hop_json(&s->up, none, none));
	down = json_object_new_array();
	for (uint32_t i = 0; i < ps->ndown; i++)
		json_object_array_add(down, hop_json(&s->down[ia_topo_child_pos(t, ps->down[i])],
						     none, none));
	for (uint32_t w = 0; w < j->load[v]; w++)
		json_object_array_add(down, hop_json(&s->host[w], none, ia_net_worker_addr(
							ia_net_worker_index(t, v, w))));
	json_object_object_add(q, "down", down);
	return ia_remote_call(r, v, q, NULL, why, whylen);
}

/*
 * A push that found the switch rebooted (or set up again) went with its
 * ports and peers of before: pushed again once it is connected again, else
 * failed (the transaction undoes the job), never left half right.
 */
int ia_remote_push(struct ia_remote *r, const struct ia_job *j, int v, char *why, size_t whylen)
{
	struct ia_rswitch *s = &r->sw[v];
	unsigned int reboots = s->link.reboots;
	int ret = push_once(r, j, v, why, whylen);

	if (ret || s->link.reboots == reboots)
		return ret;
	if (s->connected)
		return push_once(r, j, v, why, whylen);
	return ia_fail(why, whylen, -EAGAIN, "router %s (%s) rebooted during the push: "
		       "connecting it again", s->link.name, s->link.where);
}

int ia_remote_unpush(struct ia_remote *r, int v, uint32_t id)
{
	return ia_remote_call(r, v, job_req("unpush", id), NULL, NULL, 0);
}

bool ia_remote_pushed(struct ia_remote *r, int v, uint32_t id)
{
	return ask(r, v, job_req("pushed", id), "pushed") == 1;
}

void ia_remote_saved(struct ia_remote *r, const struct ia_jobs *js)
{
	r->js = js;
	/* A failed or recovered job that ended is forgotten. */
	json_object_object_foreach(r->failed, key, val) {
		(void)val;
		if (!ia_jobs_find((struct ia_jobs *)js, strtoul(key, NULL, 10)))
			json_object_object_del(r->failed, key);
	}
	json_object_object_foreach(r->recovered, k2, v2) {
		(void)v2;
		if (!ia_jobs_find((struct ia_jobs *)js, strtoul(k2, NULL, 10)))
			json_object_object_del(r->recovered, k2);
	}
}

int ia_remote_counters(struct ia_remote *r, int v, uint32_t id, int ifindex,
		       struct ia_counters *c)
{
	json_object *q = ia_remote_request("counters"), *rep, *arr;
	int ret;

	memset(c, 0, sizeof(*c));
	if (ifindex)
		json_object_object_add(q, "ifindex", json_object_new_int(ifindex));
	else
		json_object_object_add(q, "job", json_object_new_int64(id));
	ret = ia_remote_call(r, v, q, &rep, NULL, 0);
	if (ret)
		return ret;
	if (json_object_object_get_ex(rep, "counters", &arr) &&
	    json_object_is_type(arr, json_type_array))
		for (int i = 0; i < IA_C__COUNT && i < (int)json_object_array_length(arr); i++)
			c->c[i] = json_object_get_int64(json_object_array_get_idx(arr, i));
	json_object_put(rep);
	return 0;
}

int ia_remote_probe(struct ia_remote *r, const struct ia_job *j)
{
	int bad = 0;

	for (int v = 0; v < r->t->n; v++) {
		if (j && !job_uses(j, v))
			continue;
		if (ia_remote_call(r, v, ia_remote_request("hello"), NULL, NULL, 0) ||
		    r->sw[v].link.health != IA_LINK_OK)
			bad++;
	}
	return bad;
}

void ia_remote_repush(struct ia_remote *r, int v)
{
	struct ia_rswitch *s = &r->sw[v];
	json_object *ids = s->repush;

	s->repush = NULL;
	for (size_t i = 0; ids && i < json_object_array_length(ids); i++) {
		uint32_t id = json_object_get_int64(json_object_array_get_idx(ids, i));
		struct ia_job *j = r->js ? ia_jobs_find((struct ia_jobs *)r->js, id) : NULL;
		char key[16], why[IA_ERRLEN] = "", msg[3 * IA_ERRLEN];
		int ret;

		if (!j)
			continue;	/* ended meanwhile */
		snprintf(key, sizeof(key), "%u", id);
		ret = ia_remote_push(r, j, v, why, sizeof(why));
		if (ret) {
			snprintf(msg, sizeof(msg), "router %s (%s) rebooted during the job and its "
				 "configuration could not be pushed again: %s; end the job and "
				 "submit it again", s->link.name, s->link.where,
				 *why ? why : strerror(-ret));
			json_object_object_add(r->failed, key, json_object_new_string(msg));
			ia_remote_note(r, IA_LOG_ERR, "job %u failed: %s", id, msg);
			continue;
		}
		snprintf(msg, sizeof(msg), "router %s (%s) rebooted during the job; it only "
			 "forwards the job's messages: its configuration was pushed again (what it "
			 "lost in flight, the workers resent)", s->link.name, s->link.where);
		json_object_object_add(r->recovered, key, json_object_new_string(msg));
		ia_remote_note(r, IA_LOG_WARN, "job %u recovered: %s", id, msg);
	}
	json_object_put(ids);
}

const char *ia_remote_recovered(const struct ia_remote *r, uint32_t id)
{
	json_object *v;
	char key[16];

	snprintf(key, sizeof(key), "%u", id);
	return json_object_object_get_ex(r->recovered, key, &v) ? json_object_get_string(v) : NULL;
}

const char *ia_remote_failed(const struct ia_remote *r, uint32_t id)
{
	json_object *v;
	char key[16];

	snprintf(key, sizeof(key), "%u", id);
	return json_object_object_get_ex(r->failed, key, &v) ? json_object_get_string(v) : NULL;
}

json_object *ia_remote_links_json(const struct ia_remote *r, const struct ia_job *j)
{
	json_object *arr = json_object_new_array();

	for (int v = 0; v < r->t->n; v++)
		if (!j || job_uses(j, v))
			json_object_array_add(arr, ia_link_json(&r->sw[v].link));
	return arr;
}
