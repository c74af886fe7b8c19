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

#include "agent.h"
#include "job.h"
#include "netns.h"
#include "netplan.h"
#include "remote.h"

static void note(struct ia_remote *r, int level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void note(struct ia_remote *r, int level, const char *fmt, ...)
{
	char msg[2 * IA_ERRLEN];
	va_list ap;

	if (!r->note)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	r->note(r->note_ctx, level, msg);
}

static json_object *request(const char *op)
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
	note(r, 4, "router %s (%s) rebooted (new boot id): its ledger and maps were lost",
	     s->link.name, s->link.where);
	for (int i = 0; r->js && i < r->js->njobs; i++) {
		const struct ia_job *j = &r->js->jobs[i];
		char key[16], why[2 * IA_ERRLEN];

		if (!job_uses(j, v))
			continue;
		snprintf(key, sizeof(key), "%u", j->id);
		snprintf(why, sizeof(why),
			 "router %s (%s) rebooted during the job: its aggregation state is gone; "
			 "end the job and submit it again", s->link.name, s->link.where);
		json_object_object_add(r->failed, key, json_object_new_string(why));
		note(r, 3, "job %u failed: %s", j->id, why);
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
		note(r, 4, "router %s holds job %u, which has ended: removing it", s->link.name, id);
		q = request("unpush");
		json_object_object_add(q, "job", json_object_new_int64(id));
		if (!ia_link_call(&s->link, q, &rep, why, sizeof(why)))
			json_object_put(rep);
		json_object_put(q);
		q = request("release");
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

/* One request to switch v's agent; ok false becomes -errno. Consumes q. */
static int call(struct ia_remote *r, int v, json_object *q, json_object **reply, char *why,
		size_t whylen)
{
	int ret = ia_link_do(&r->sw[v].link, q, reply, why, whylen);

	json_object_put(q);
	return ret;
}

static const char *mac_text(const unsigned char mac[6], char buf[18])
{
	ia_mac_format(mac, buf);
	return buf;
}

static void port_req(json_object *arr, const struct ia_rport *p, struct in_addr neigh)
{
	json_object *o = json_object_new_object();
	char a[INET_ADDRSTRLEN];

	json_object_object_add(o, "name", json_object_new_string(p->name));
	if (neigh.s_addr && inet_ntop(AF_INET, &neigh, a, sizeof(a)))
		json_object_object_add(o, "neigh", json_object_new_string(a));
	json_object_array_add(arr, o);
}

/* The reply's i-th port into p: index, MAC, and a neighbour-table peer if p has none. */
static int port_rep(json_object *rep, int i, struct ia_rport *p, bool *arp)
{
	json_object *arr, *o, *v;

	*arp = false;
	if (!json_object_object_get_ex(rep, "ports", &arr) || i >= (int)json_object_array_length(arr))
		return -EPROTO;
	o = json_object_array_get_idx(arr, i);
	if (!json_object_object_get_ex(o, "ifindex", &v))
		return -EPROTO;
	p->ifindex = json_object_get_int(v);
	if (!json_object_object_get_ex(o, "mac", &v) || ia_mac_parse(json_object_get_string(v), p->mac))
		return -EPROTO;
	if (!p->has_peer && json_object_object_get_ex(o, "peer", &v) &&
	    !ia_mac_parse(json_object_get_string(v), p->peer))
		*arp = true;
	return 0;
}

/* MAC of a host's eth0, in its namespace on this machine. */
static int local_mac(const char *ns, unsigned char mac[6])
{
	int h = ia_netns_enter(ns), ifindex, ret;

	if (h < 0)
		return h;
	ret = ia_if_info(IA_HOST_PORT, &ifindex, mac);
	ia_netns_return(h);
	return ret;
}

/* A host-facing port's peer: the site's, a worker namespace's, the neighbour table's. */
static int host_peer(struct ia_remote *r, int v, struct ia_rport *p, bool arp, const char *hostns,
		     const char *what, char *err, size_t errlen)
{
	struct ia_rswitch *s = &r->sw[v];

	if (p->has_peer)
		return 0;
	if (!s->remote && !local_mac(hostns, p->peer)) {
		p->has_peer = true;
		return 0;
	}
	if (arp) {
		p->has_peer = true;
		return 0;
	}
	return ia_fail(err, errlen, -ENXIO,
		       "switch %s, port %s: the MAC of %s is unknown (give it in the site's "
		       "\"peers\", or let the host send once so the neighbour table has it)",
		       r->t->sw[v].name, p->name, what);
}

static int ports_of(struct ia_remote *r, int v, bool *arp, char *err, size_t errlen)
{
	const struct ia_topo *t = r->t;
	struct ia_rswitch *s = &r->sw[v];
	int nc = t->child_start[v + 1] - t->child_start[v], ret, k = 0;
	json_object *q = request("ports"), *arr = json_object_new_array(), *rep;
	struct in_addr up = t->sw[v].parent < 0 ? ia_net_dest_addr(t) : ia_net_uplink_addr(v, true);

	port_req(arr, &s->up, up);
	for (int i = 0; i < nc; i++)
		port_req(arr, &s->down[i], ia_net_uplink_addr(t->child[t->child_start[v] + i], false));
	for (uint32_t j = 0; j < t->sw[v].load; j++)
		port_req(arr, &s->host[j], ia_net_worker_addr(ia_net_worker_index(t, v, j)));
	json_object_object_add(q, "ports", arr);
	ret = call(r, v, q, &rep, err, errlen);
	if (ret)
		return ret;
	ret = port_rep(rep, k, &s->up, &arp[k]);
	for (int i = 0; !ret && i < nc; i++)
		k++, ret = port_rep(rep, k, &s->down[i], &arp[k]);
	for (uint32_t j = 0; !ret && j < t->sw[v].load; j++)
		k++, ret = port_rep(rep, k, &s->host[j], &arp[k]);
	json_object_put(rep);
	if (ret)
		return ia_fail(err, errlen, ret, "switch %s: a malformed ports reply", t->sw[v].name);
	return 0;
}

int ia_remote_connect(struct ia_remote *r, char *err, size_t errlen)
{
	const struct ia_topo *t = r->t;
	bool **arp = calloc(t->n, sizeof(*arp));
	char ns[128];
	int ret = arp ? 0 : -ENOMEM;

	for (int v = 0; !ret && v < t->n; v++) {
		/* Addresses first: the hosts can then reach the router and be learnt. */
		if (r->sw[v].layout && (ret = ia_remote_layout(r, v, err, errlen)))
			break;
		arp[v] = calloc(1 + (t->child_start[v + 1] - t->child_start[v]) + t->sw[v].load,
				sizeof(**arp));
		ret = arp[v] ? ports_of(r, v, arp[v], err, errlen) : -ENOMEM;
	}
	/* A link between two switches: each end's MAC from the other's agent. */
	for (int v = 0; !ret && v < t->n; v++) {
		struct ia_rswitch *s = &r->sw[v];
		int p = t->sw[v].parent, nc = t->child_start[v + 1] - t->child_start[v];

		if (p >= 0) {
			struct ia_rport *pd = &r->sw[p].down[ia_topo_child_pos(t, v)];

			if (!s->up.has_peer)
				memcpy(s->up.peer, pd->mac, 6);
			if (!pd->has_peer)
				memcpy(pd->peer, s->up.mac, 6);
			s->up.has_peer = pd->has_peer = true;
		} else {
			ia_net_dest_ns(r->tag, ns, sizeof(ns));
			ret = host_peer(r, v, &s->up, arp[v][0], ns, "the destination", err, errlen);
		}
		for (uint32_t j = 0; !ret && j < t->sw[v].load; j++) {
			ia_net_worker_ns(r->tag, t->sw[v].name, j, ns, sizeof(ns));
			ret = host_peer(r, v, &s->host[j], arp[v][1 + nc + j], ns, "its worker", err,
					errlen);
		}
	}
	for (int v = 0; arp && v < t->n; v++)
		free(arp[v]);
	free(arp);
	if (ret == -ENOMEM)
		ia_fail(err, errlen, ret, "out of memory");
	return ret;
}

static void pair(json_object *arr, const char *a, struct in_addr b, int len, const char *c)
{
	json_object *e = json_object_new_array();
	char s[INET_ADDRSTRLEN + 4];

	inet_ntop(AF_INET, &b, s, INET_ADDRSTRLEN);
	if (len >= 0)
		snprintf(s + strlen(s), 4, "/%d", len);
	if (a)
		json_object_array_add(e, json_object_new_string(a));
	json_object_array_add(e, json_object_new_string(s));
	if (c)
		json_object_array_add(e, json_object_new_string(c));
	json_object_array_add(arr, e);
}

/* The addresses and routes `inagg net up` gives a switch namespace (netbuild.c), by port name. */
int ia_remote_layout(struct ia_remote *r, int v, char *err, size_t errlen)
{
	const struct ia_topo *t = r->t;
	struct ia_rswitch *s = &r->sw[v];
	json_object *q = request("layout"), *addrs = json_object_new_array(), *routes;
	char why[IA_ERRLEN];
	int ret;

	routes = json_object_new_array();
	pair(addrs, s->up.name, ia_net_uplink_addr(v, false), 30, NULL);
	/*
	 * Up: netplan's two ranges, not the default route (a router's own,
	 * its management may need it); the workers below have /32s down.
	 */
	if (t->sw[v].parent >= 0) {
		struct in_addr links = { htonl(0x0a400000) }, hosts = { htonl(0x0a800000) };
		char l[24], h[24];

		inet_ntop(AF_INET, &links, l, sizeof(l));
		inet_ntop(AF_INET, &hosts, h, sizeof(h));
		strcat(l, "/10");
		strcat(h, "/9");
		pair(routes, l, ia_net_uplink_addr(v, true), -1, s->up.name);
		pair(routes, h, ia_net_uplink_addr(v, true), -1, s->up.name);
	}
	for (int c = t->child_start[v]; c < t->child_start[v + 1]; c++)
		pair(addrs, s->down[c - t->child_start[v]].name, ia_net_uplink_addr(t->child[c], true),
		     30, NULL);
	for (uint32_t j = 0; j < t->sw[v].load; j++)
		pair(addrs, s->host[j].name, ia_net_worker_gw(ia_net_worker_index(t, v, j)), 30, NULL);
	/* Every worker below v, through the child whose subtree has it. */
	for (int w = 0; w < t->n; w++) {
		int u = w;

		while (u >= 0 && t->sw[u].parent != v)
			u = t->sw[u].parent;
		for (uint32_t j = 0; u >= 0 && j < t->sw[w].load; j++) {
			json_object *e = json_object_new_array();
			char a[INET_ADDRSTRLEN + 4], b[INET_ADDRSTRLEN];
			struct in_addr wa = ia_net_worker_addr(ia_net_worker_index(t, w, j)),
				       via = ia_net_uplink_addr(u, false);

			inet_ntop(AF_INET, &wa, a, INET_ADDRSTRLEN);
			strcat(a, "/32");
			inet_ntop(AF_INET, &via, b, sizeof(b));
			json_object_array_add(e, json_object_new_string(a));
			json_object_array_add(e, json_object_new_string(b));
			json_object_array_add(e, json_object_new_string(
						 s->down[ia_topo_child_pos(t, u)].name));
			json_object_array_add(routes, e);
		}
	}
	json_object_object_add(q, "addrs", addrs);
	json_object_object_add(q, "routes", routes);
	ret = call(r, v, q, NULL, why, sizeof(why));
	return ret ? ia_fail(err, errlen, ret, "layout of %s: %s", t->sw[v].name, why) : 0;
}

int ia_remote_setup(struct ia_remote *r, char *err, size_t errlen)
{
	char why[IA_ERRLEN];

	for (int v = 0; v < r->t->n; v++) {
		json_object *q;
		int ret;

		q = request("setup");
		json_object_object_add(q, "jobs", json_object_new_int64(r->t->sw[v].capacity));
		json_object_object_add(q, "slots", json_object_new_int64(r->t->sw[v].slots));
		ret = call(r, v, q, NULL, why, sizeof(why));
		if (ret)
			return ia_fail(err, errlen, ret, "ledger of %s: setting %u jobs, %u slots: %s",
				       r->t->sw[v].name, r->t->sw[v].capacity, r->t->sw[v].slots, why);
	}
	return 0;
}

static json_object *job_req(const char *op, uint32_t id)
{
	json_object *q = request(op);

	json_object_object_add(q, "job", json_object_new_int64(id));
	return q;
}

int ia_remote_admit(struct ia_remote *r, int v, uint32_t id, int class, uint32_t slots,
		    char *why, size_t whylen)
{
	json_object *q = job_req("admit", id);

	json_object_object_add(q, "class", json_object_new_int(class));
	json_object_object_add(q, "slots", json_object_new_int64(slots));
	return call(r, v, q, NULL, why, whylen);
}

int ia_remote_release(struct ia_remote *r, int v, uint32_t id, char *why, size_t whylen)
{
	return call(r, v, job_req("release", id), NULL, why, whylen);
}

/* A boolean answer: 1, 0, or -errno when the router did not give one. */
static int ask(struct ia_remote *r, int v, json_object *q, const char *key)
{
	json_object *rep, *b;
	int ret = call(r, v, q, &rep, NULL, 0);

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
	json_object *q = request("room");

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

int ia_remote_push(struct ia_remote *r, const struct ia_job *j, int v, char *why, size_t whylen)
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
	json_object_object_add(q, "flags", json_object_new_int64(r->job_flags));
	members = json_object_new_array();
	if (tail)
		sets = json_object_new_array();
	for (uint32_t i = 0; i < nm; i++) {
		json_object *e = json_object_new_array();

		json_object_array_add(e, json_object_new_int64(m[i].id));
		json_object_array_add(e, json_object_new_int64(m[i].nworkers));
		json_object_array_add(members, e);
		if (sets)
			json_object_array_add(sets, json_object_new_uint64(ts[i]));
	}
	free(tm);
	free(ts);
	json_object_object_add(q, "members", members);
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
	return call(r, v, q, NULL, why, whylen);
}

int ia_remote_unpush(struct ia_remote *r, int v, uint32_t id)
{
	return call(r, v, job_req("unpush", id), NULL, NULL, 0);
}

bool ia_remote_pushed(struct ia_remote *r, int v, uint32_t id)
{
	return ask(r, v, job_req("pushed", id), "pushed") == 1;
}

void ia_remote_saved(struct ia_remote *r, const struct ia_jobs *js)
{
	r->js = js;
	/* A failed job that ended is forgotten. */
	json_object_object_foreach(r->failed, key, val) {
		(void)val;
		if (!ia_jobs_find((struct ia_jobs *)js, strtoul(key, NULL, 10)))
			json_object_object_del(r->failed, key);
	}
}

int ia_remote_counters(struct ia_remote *r, int v, uint32_t id, int ifindex,
		       struct ia_counters *c)
{
	json_object *q = request("counters"), *rep, *arr;
	int ret;

	memset(c, 0, sizeof(*c));
	if (ifindex)
		json_object_object_add(q, "ifindex", json_object_new_int(ifindex));
	else
		json_object_object_add(q, "job", json_object_new_int64(id));
	ret = call(r, v, q, &rep, NULL, 0);
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
		if (call(r, v, request("hello"), NULL, NULL, 0) ||
		    r->sw[v].link.health != IA_LINK_OK)
			bad++;
	}
	return bad;
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
