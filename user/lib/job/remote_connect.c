// SPDX-License-Identifier: GPL-2.0
/*
 * Connecting the switches' agents (remote.h): each switch's ports laid out
 * and read, the peer MAC of every port learnt, its ledger's limits set. A
 * router unreachable at start is marked down and connected later, when its
 * probe answers (ia_remote_tick()); so is one that rebooted (its addresses
 * and ledger limits went with it).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mac.h"
#include "netns.h"
#include "netplan.h"
#include "remote_int.h"

static void port_req(json_object *arr, const struct ia_rport *p, struct in_addr neigh)
{
	json_object *o = json_object_new_object();
	char a[INET_ADDRSTRLEN];

	json_object_object_add(o, "name", json_object_new_string(p->name));
	if (!p->has_peer && neigh.s_addr && inet_ntop(AF_INET, &neigh, a, sizeof(a)))
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
		       "\"peers\", or give the host its address: the router resolves it)",
		       r->t->sw[v].name, p->name, what);
}

static int ports_of(struct ia_remote *r, int v, bool *arp, char *err, size_t errlen)
{
	const struct ia_topo *t = r->t;
	struct ia_rswitch *s = &r->sw[v];
	int nc = t->child_start[v + 1] - t->child_start[v], ret, k = 0;
	json_object *q = ia_remote_request("ports"), *arr = json_object_new_array(), *rep;
	struct in_addr up = ia_net_dest_addr(t), none = { 0 };

	/* The neighbour table only for hosts whose MAC is not given (a switch's: its agent's). */
	port_req(arr, &s->up, t->sw[v].parent < 0 ? up : none);
	for (int i = 0; i < nc; i++)
		port_req(arr, &s->down[i], none);
	for (uint32_t j = 0; j < t->sw[v].load; j++)
		port_req(arr, &s->host[j], ia_net_worker_addr(ia_net_worker_index(t, v, j)));
	json_object_object_add(q, "ports", arr);
	/* A router resolves the hosts it has no neighbour entry for (a namespace's are read here). */
	if (s->remote)
		json_object_object_add(q, "resolve", json_object_new_boolean(1));
	ret = ia_remote_call(r, v, q, &rep, err, errlen);
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
	json_object *q = ia_remote_request("layout"), *addrs = json_object_new_array(), *routes;
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
	ret = ia_remote_call(r, v, q, NULL, why, sizeof(why));
	return ret ? ia_fail(err, errlen, ret, "layout of %s: %s", t->sw[v].name, why) : 0;
}

/* The link of v to its parent: each end's MAC from the other's agent, once both are known. */
static void uplink_peers(struct ia_remote *r, int v)
{
	const struct ia_topo *t = r->t;
	struct ia_rswitch *s = &r->sw[v];
	int p = t->sw[v].parent;
	struct ia_rport *pd;

	if (p < 0 || !s->connected || !r->sw[p].connected)
		return;
	pd = &r->sw[p].down[ia_topo_child_pos(t, v)];
	if (!s->up.has_peer)
		memcpy(s->up.peer, pd->mac, 6);
	if (!pd->has_peer)
		memcpy(pd->peer, s->up.mac, 6);
	s->up.has_peer = pd->has_peer = true;
}

/* The hosts of v: the destination above a root, its workers. */
static int host_peers(struct ia_remote *r, int v, const bool *arp, char *err, size_t errlen)
{
	const struct ia_topo *t = r->t;
	struct ia_rswitch *s = &r->sw[v];
	int nc = t->child_start[v + 1] - t->child_start[v], ret = 0;
	char ns[128];

	if (t->sw[v].parent < 0) {
		ia_net_dest_ns(r->tag, ns, sizeof(ns));
		ret = host_peer(r, v, &s->up, arp[0], ns, "the destination", err, errlen);
	}
	for (uint32_t j = 0; !ret && j < t->sw[v].load; j++) {
		ia_net_worker_ns(r->tag, t->sw[v].name, j, ns, sizeof(ns));
		ret = host_peer(r, v, &s->host[j], arp[1 + nc + j], ns, "its worker", err, errlen);
	}
	return ret;
}

/* Peers learnt of v's ports and of its neighbours' toward it: learnt again (new MACs). */
static void forget_peers(struct ia_remote *r, int v)
{
	const struct ia_topo *t = r->t;
	struct ia_rswitch *s = &r->sw[v];
	int p = t->sw[v].parent;

	s->up.has_peer = s->up.peer_given;
	for (int i = 0; i < t->child_start[v + 1] - t->child_start[v]; i++) {
		s->down[i].has_peer = s->down[i].peer_given;
		r->sw[t->child[t->child_start[v] + i]].up.has_peer =
			r->sw[t->child[t->child_start[v] + i]].up.peer_given;
	}
	for (uint32_t j = 0; j < t->sw[v].load; j++)
		s->host[j].has_peer = s->host[j].peer_given;
	if (p >= 0) {
		struct ia_rport *pd = &r->sw[p].down[ia_topo_child_pos(t, v)];

		pd->has_peer = pd->peer_given;
	}
}

/* Switch v through its agent: addresses first (the hosts can then be learnt), ports, peers. */
static int connect_one(struct ia_remote *r, int v, char *err, size_t errlen)
{
	const struct ia_topo *t = r->t;
	struct ia_rswitch *s = &r->sw[v];
	int nc = t->child_start[v + 1] - t->child_start[v], ret;
	bool *arp = calloc(1 + nc + t->sw[v].load, sizeof(*arp));

	if (!arp)
		return ia_fail(err, errlen, -ENOMEM, "out of memory");
	forget_peers(r, v);
	s->connecting = true;
	ret = s->layout ? ia_remote_layout(r, v, err, errlen) : 0;
	if (!ret)
		ret = ports_of(r, v, arp, err, errlen);
	if (!ret)
		ret = host_peers(r, v, arp, err, errlen);
	s->connecting = false;
	free(arp);
	if (ret)
		return ret;
	s->connected = true;
	s->pending = false;
	uplink_peers(r, v);
	for (int c = t->child_start[v]; c < t->child_start[v + 1]; c++)
		uplink_peers(r, t->child[c]);
	return 0;
}

int ia_remote_connect(struct ia_remote *r, char *err, size_t errlen)
{
	for (int v = 0; v < r->t->n; v++) {
		struct ia_rswitch *s = &r->sw[v];
		int ret = connect_one(r, v, err, errlen);

		if (!ret)
			continue;
		/* A router that does not answer is no reason not to start: it is tried again. */
		if (!s->remote || !s->link.async || s->link.health != IA_LINK_DOWN)
			return ret;
		s->pending = true;
		ia_remote_note(r, IA_LOG_WARN, "%s; marked down, tried again every %d ms", err,
			       s->link.holdoff_ms);
	}
	return 0;
}

static int setup_one(struct ia_remote *r, int v, char *err, size_t errlen)
{
	const struct ia_switch *sw = &r->t->sw[v];
	json_object *q = ia_remote_request("setup");
	char why[IA_ERRLEN];
	int ret;

	json_object_object_add(q, "jobs", json_object_new_int64(sw->capacity));
	json_object_object_add(q, "slots", json_object_new_int64(sw->slots));
	ret = ia_remote_call(r, v, q, NULL, why, sizeof(why));
	return ret ? ia_fail(err, errlen, ret, "ledger of %s: setting %u jobs, %u slots: %s",
			     sw->name, sw->capacity, sw->slots, why) : 0;
}

int ia_remote_setup(struct ia_remote *r, char *err, size_t errlen)
{
	for (int v = 0; v < r->t->n; v++) {
		int ret = r->sw[v].pending ? 0 : setup_one(r, v, err, errlen);

		if (ret)
			return ret;
	}
	return 0;
}

/* A switch not connected whose link answers again: connected, its ledger set up. */
static long long reconnect(struct ia_remote *r, int v)
{
	struct ia_rswitch *s = &r->sw[v];
	bool renewing = r->renewing;
	char err[IA_ERRLEN];
	int ret;

	/* Its calls do not start a renewal: that would connect it inside its connection. */
	r->renewing = true;
	ret = connect_one(r, v, err, sizeof(err)) || setup_one(r, v, err, sizeof(err));
	r->renewing = renewing;
	if (ret) {
		s->pending = true;
		ia_remote_note(r, IA_LOG_WARN, "router %s (%s): connecting: %s", s->link.name, s->link.where,
			       err);
		/* Whatever failed, the next try after the hold-off, in the background. */
		return ia_link_mark_down(&s->link, err);
	}
	ia_remote_note(r, IA_LOG_INFO, "router %s (%s) connected: ports read, ledger set up", s->link.name,
		       s->link.where);
	if (r->on_connect)
		r->on_connect(r->note_ctx, v);
	ia_remote_repush(r, v);
	return -1;
}

void ia_remote_renew(struct ia_remote *r)
{
	if (!r->renewed || r->renewing)
		return;
	r->renewing = true;
	/* A hello each: an agent whose namespace is another now ends, the retry finds it new. */
	for (int v = 0; v < r->t->n; v++) {
		struct ia_rswitch *s = &r->sw[v];
		json_object *q, *rep;

		if (s->remote || s->pending)
			continue;
		q = ia_remote_request("hello");
		if (!ia_link_call(&s->link, q, &rep, NULL, 0))
			json_object_put(rep);
		json_object_put(q);
	}
	r->renewed = false;	/* what the hellos found is connected now */
	/* In the topology's order, so each link's two ends know each other's new MACs. */
	for (int v = 0; v < r->t->n; v++)
		if (!r->sw[v].remote && r->sw[v].pending && r->sw[v].link.health != IA_LINK_DOWN)
			reconnect(r, v);
	r->renewing = false;
}

long long ia_remote_tick(struct ia_remote *r)
{
	long long wait = -1;

	for (int v = 0; v < r->t->n; v++) {
		struct ia_rswitch *s = &r->sw[v];
		long long w = ia_link_tick(&s->link);

		if (s->pending && s->link.health != IA_LINK_DOWN)
			w = reconnect(r, v);
		if (w >= 0 && (wait < 0 || w < wait))
			wait = w;
	}
	return wait;
}
