// SPDX-License-Identifier: GPL-2.0
/* The switch agent's maps and ports: push, unpush, pushed, counters, ports (agent.h). */
#include <arpa/inet.h>
#include <net/if.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "agent.h"
#include "err.h"
#include "netns.h"
#include "xdp.h"

static const char *get_str(json_object *o, const char *key)
{
	json_object *v;

	if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_string))
		return NULL;
	return json_object_get_string(v);
}

static int get_u32(json_object *o, const char *key, uint32_t *out, bool need)
{
	uint64_t n;
	int ret = ia_agent_num(o, key, UINT32_MAX, &n, need);

	if (!ret && json_object_object_get_ex(o, key, NULL))
		*out = n;
	return ret;
}

/* Peer MAC of addr on dev from the neighbour table, if it is complete there. */
static int neigh_mac(const char *dev, const char *addr, unsigned char mac[6])
{
	char line[256], ip[64], hw[32], mask[32], ifname[IFNAMSIZ + 1];
	unsigned int type, flags;
	FILE *f = fopen("/proc/net/arp", "re");
	int ret = -ENOENT;

	if (!f)
		return -errno;
	while (ret && fgets(line, sizeof(line), f))
		if (sscanf(line, "%63s 0x%x 0x%x %31s %31s %16s", ip, &type, &flags, hw, mask,
			   ifname) == 6 && (flags & 0x2) && !strcmp(ip, addr) &&
		    !strcmp(ifname, dev))
			ret = ia_mac_parse(hw, mac);
	fclose(f);
	return ret;
}

/* A datagram to addr (the discard port) out of dev: the kernel resolves addr meanwhile. */
static void neigh_ask(const char *dev, const char *addr)
{
	struct sockaddr_in to = { .sin_family = AF_INET, .sin_port = htons(9) };
	int fd;

	if (inet_pton(AF_INET, addr, &to.sin_addr) != 1)
		return;
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return;
	if (!setsockopt(fd, SOL_SOCKET, SO_BINDTODEVICE, dev, strlen(dev)))
		sendto(fd, "", 1, MSG_DONTWAIT, (struct sockaddr *)&to, sizeof(to));
	close(fd);
}

/*
 * The peers of the ports with a "neigh", from the neighbour table. With
 * resolve, those it does not have are asked of the network (neigh_ask(),
 * all at once) and the table read again for up to a second: a host needs
 * only its address, not to have sent anything first.
 */
static void peers_of(json_object *in, json_object *out, bool resolve)
{
	size_t n = json_object_array_length(in);
	bool left = false;

	for (int round = 0; round <= (resolve ? 20 : 0); round++) {
		left = false;
		for (size_t i = 0; i < n; i++) {
			json_object *p = json_object_array_get_idx(in, i);
			json_object *o = json_object_array_get_idx(out, i);
			const char *name = get_str(p, "name"), *neigh = get_str(p, "neigh");
			unsigned char mac[6];
			char text[18];

			if (!neigh || json_object_object_get_ex(o, "peer", NULL))
				continue;
			if (!neigh_mac(name, neigh, mac)) {
				ia_mac_format(mac, text);
				json_object_object_add(o, "peer", json_object_new_string(text));
				continue;
			}
			if (resolve && !round)
				neigh_ask(name, neigh);
			left = true;
		}
		if (!left)
			break;
		if (resolve)
			usleep(50000);
	}
}

json_object *ia_agent_ports(struct ia_agent *a, json_object *req)
{
	json_object *in, *out, *v;
	bool resolve = json_object_object_get_ex(req, "resolve", &v) && json_object_get_boolean(v);
	unsigned char mac[6];
	char text[18];
	size_t n;

	if (!json_object_object_get_ex(req, "ports", &in) ||
	    !json_object_is_type(in, json_type_array))
		return ia_agent_err(EINVAL, "\"ports\": need an array");
	out = json_object_new_array();
	n = json_object_array_length(in);
	for (size_t i = 0; i < n; i++) {
		json_object *p = json_object_array_get_idx(in, i), *o;
		const char *name = get_str(p, "name");
		int ifindex, ret;

		if (!name || strlen(name) >= IFNAMSIZ) {
			json_object_put(out);
			return ia_agent_err(EINVAL, "port %zu: need a \"name\"", i);
		}
		ret = ia_if_info(name, &ifindex, mac);
		if (ret) {
			json_object_put(out);
			return ia_agent_err(ret, "interface %s: %s", name, strerror(-ret));
		}
		o = json_object_new_object();
		json_object_object_add(o, "name", json_object_new_string(name));
		json_object_object_add(o, "ifindex", json_object_new_int(ifindex));
		ia_mac_format(mac, text);
		json_object_object_add(o, "mac", json_object_new_string(text));
		json_object_array_add(out, o);
	}
	peers_of(in, out, resolve);
	return ia_agent_ok_with("ports", out);
}

/* One hop of a push request: the port by name here, the peer's MAC, addresses. */
static int hop_parse(json_object *o, struct ia_xdp_hop *h, char *why, size_t whylen)
{
	const char *port = get_str(o, "port"), *peer = get_str(o, "peer"), *s;
	struct in_addr in;
	int ret;

	memset(h, 0, sizeof(*h));
	if (!port)
		return ia_fail(why, whylen, -EINVAL, "a hop without \"port\"");
	ret = ia_if_info(port, &h->ifindex, h->smac);
	if (ret)
		return ia_fail(why, whylen, ret, "interface %s: %s", port, strerror(-ret));
	if (ia_mac_parse(peer, h->dmac))
		return ia_fail(why, whylen, -EINVAL, "port %s: \"peer\": need a MAC", port);
	if ((s = get_str(o, "saddr"))) {
		if (inet_pton(AF_INET, s, &in) != 1)
			return ia_fail(why, whylen, -EINVAL, "saddr: need an IPv4 address");
		h->saddr = in.s_addr;
	}
	if ((s = get_str(o, "daddr"))) {
		if (inet_pton(AF_INET, s, &in) != 1)
			return ia_fail(why, whylen, -EINVAL, "daddr: need an IPv4 address");
		h->daddr = in.s_addr;
	}
	return 0;
}

/*
 * Member i's place, [id, nworkers, port, address] (address: a host's port
 * only): the port by name here. The binding array is allocated on first use.
 */
static int bind_parse(json_object *e, struct ia_xdp_job *cfg, size_t i, size_t n, char *why,
		      size_t whylen)
{
	const char *port = json_object_get_string(json_object_array_get_idx(e, 2));
	json_object *a = json_object_array_get_idx(e, 3);
	struct ia_xdp_bind *b = (struct ia_xdp_bind *)cfg->bind;
	struct in_addr in;
	int ret;

	if (!b) {
		b = calloc(n, sizeof(*b));
		if (!b)
			return ia_fail(why, whylen, -ENOMEM, "out of memory");
		cfg->bind = b;
	}
	if (!port || strlen(port) >= IFNAMSIZ)
		return ia_fail(why, whylen, -EINVAL, "member %zu: need a port name", i);
	ret = ia_if_info(port, &b[i].ifindex, NULL);
	if (ret)
		return ia_fail(why, whylen, ret, "member %zu: interface %s: %s", i, port,
			       strerror(-ret));
	if (a && (!json_object_is_type(a, json_type_string) ||
		  inet_pton(AF_INET, json_object_get_string(a), &in) != 1))
		return ia_fail(why, whylen, -EINVAL, "member %zu: need an IPv4 address", i);
	if (a)
		b[i].saddr = in.s_addr;
	return 0;
}

/* The request as ia_xdp_job_add() takes it; members, bind and down are allocated. */
static int job_parse(json_object *req, struct ia_xdp_job *cfg, char *why, size_t whylen)
{
	json_object *members, *down, *up, *sets;
	struct ia_sender *m;
	struct ia_xdp_hop *d;
	const char *role = get_str(req, "role"), *s;
	struct in_addr in;
	size_t n;
	int ret;

	memset(cfg, 0, sizeof(*cfg));
	if (get_u32(req, "job", &cfg->id, true) || get_u32(req, "window", &cfg->window, true) ||
	    get_u32(req, "self_id", &cfg->self_id, false) ||
	    get_u32(req, "flags", &cfg->flags, false) ||
	    get_u32(req, "base_seq", &cfg->base_seq, false))
		return ia_fail(why, whylen, -EINVAL, "job, window, self_id, flags: need integers");
	if (!role || (strcmp(role, "blue") && strcmp(role, "red") && strcmp(role, "tail")))
		return ia_fail(why, whylen, -EINVAL, "role: blue, red or tail");
	cfg->role = !strcmp(role, "blue") ? IA_ROLE_BLUE :
		    !strcmp(role, "tail") ? IA_ROLE_TAIL : IA_ROLE_RED;
	if (!json_object_object_get_ex(req, "members", &members) ||
	    !json_object_is_type(members, json_type_array) ||
	    !json_object_object_get_ex(req, "down", &down) ||
	    !json_object_is_type(down, json_type_array) ||
	    !json_object_object_get_ex(req, "up", &up))
		return ia_fail(why, whylen, -EINVAL, "need \"members\", \"up\" and \"down\"");
	n = json_object_array_length(members);
	m = calloc(n ? n : 1, sizeof(*m));
	cfg->members = m;
	cfg->nmembers = n;
	for (size_t i = 0; m && i < n; i++) {
		json_object *e = json_object_array_get_idx(members, i);
		size_t len = json_object_is_type(e, json_type_array) ?
			     json_object_array_length(e) : 0;

		if (len < 2 || len > 4)
			return ia_fail(why, whylen, -EINVAL,
				       "a member is [id, nworkers, port, address]");
		m[i].id = json_object_get_int64(json_object_array_get_idx(e, 0));
		m[i].nworkers = json_object_get_int64(json_object_array_get_idx(e, 1));
		if (len > 2) {
			ret = bind_parse(e, cfg, i, n, why, whylen);
			if (ret)
				return ret;
		}
	}
	if ((s = get_str(req, "ps"))) {
		if (inet_pton(AF_INET, s, &in) != 1)
			return ia_fail(why, whylen, -EINVAL, "ps: need an IPv4 address");
		cfg->ps_addr = in.s_addr;
	}
	/* A tail job: each member's member set, in members' order. */
	if (json_object_object_get_ex(req, "sets", &sets)) {
		__u64 *st;

		if (!json_object_is_type(sets, json_type_array) ||
		    json_object_array_length(sets) != cfg->nmembers)
			return ia_fail(why, whylen, -EINVAL, "sets: one per member");
		st = calloc(cfg->nmembers ? cfg->nmembers : 1, sizeof(*st));
		cfg->sets = st;
		for (size_t i = 0; st && i < cfg->nmembers; i++)
			st[i] = json_object_get_uint64(json_object_array_get_idx(sets, i));
		if (!st)
			return ia_fail(why, whylen, -ENOMEM, "out of memory");
	}
	n = json_object_array_length(down);
	d = calloc(n ? n : 1, sizeof(*d));
	cfg->down = d;
	cfg->ndown = n;
	if (!m || !d)
		return ia_fail(why, whylen, -ENOMEM, "out of memory");
	for (size_t i = 0; i < n; i++) {
		ret = hop_parse(json_object_array_get_idx(down, i), &d[i], why, whylen);
		if (ret)
			return ret;
	}
	return hop_parse(up, &cfg->up, why, whylen);
}

/* The request without its envelope: what a retried push is compared on. */
static json_object *push_record(json_object *req)
{
	json_object *rec = json_object_new_object();

	json_object_object_foreach(req, key, val)
		if (strcmp(key, "op") && strcmp(key, "seq"))
			json_object_object_add(rec, key, json_object_get(val));
	return rec;
}

json_object *ia_agent_push(struct ia_agent *a, json_object *req)
{
	json_object *rec = NULL, *j, *old;
	struct ia_counters c;
	struct ia_xdp_job cfg;
	struct ia_xdp *x;
	char why[256] = "", xwhy[IA_XDP_ERRLEN];
	__u32 prog = 0;
	int ret;

	ret = job_parse(req, &cfg, why, sizeof(why));
	if (ret)
		goto out;
	if (bpf_xdp_query_id(cfg.up.ifindex, 0, &prog) || !prog) {
		ret = ia_fail(why, sizeof(why), -ENODEV,
			      "no XDP program on the uplink (inagg dev attach%s%s)",
			      *a->netns ? " up --netns " : "", a->netns);
		goto out;
	}
	x = ia_agent_maps(a, true, &ret, xwhy, sizeof(xwhy));
	if (!x) {
		ia_fail(why, sizeof(why), 0, "maps: %s", xwhy);
		goto out;
	}
	rec = push_record(req);
	j = ia_agent_job(a, cfg.id, false);
	if (!ia_xdp_job_counters(x, cfg.id, &c)) {
		/* Configured already: the same request again (a retry) is done. */
		if (j && json_object_object_get_ex(j, "push", &old) &&
		    json_object_equal(old, rec))
			goto out;
		ia_xdp_job_del(x, cfg.id);
	}
	ret = ia_xdp_job_add(x, &cfg, xwhy, sizeof(xwhy));
	if (ret) {
		ia_fail(why, sizeof(why), 0, "maps: %s", xwhy);
		ia_agent_maps_drop(a);
		goto out;
	}
	j = ia_agent_job(a, cfg.id, true);
	json_object_object_add(j, "push", json_object_get(rec));
	ret = ia_agent_save(a);
	if (ret)
		snprintf(why, sizeof(why), "record: %s", strerror(-ret));
out:
	json_object_put(rec);
	free((void *)cfg.members);
	free((void *)cfg.bind);
	free((void *)cfg.sets);
	free((void *)cfg.down);
	return ret ? ia_agent_err(ret, "%s", *why ? why : strerror(-ret)) : ia_agent_ok();
}

json_object *ia_agent_unpush(struct ia_agent *a, json_object *req)
{
	char why[IA_XDP_ERRLEN] = "";
	json_object *j;
	struct ia_xdp *x;
	uint32_t id = 0;
	char key[16];
	int ret;

	if (get_u32(req, "job", &id, true))
		return ia_agent_err(EINVAL, "\"job\": need an integer");
	x = ia_agent_maps(a, false, &ret, why, sizeof(why));
	if (x) {
		ret = ia_xdp_job_del(x, id);
		if (ret && ret != -ENOENT)
			ia_agent_maps_drop(a);
	}
	j = ia_agent_job(a, id, false);
	if (j) {
		json_object_object_del(j, "push");
		if (!json_object_object_get_ex(j, "admitted", &j) || !json_object_get_boolean(j)) {
			snprintf(key, sizeof(key), "%u", id);
			json_object_object_del(a->jobs, key);
		}
		ia_agent_save(a);
	}
	if (ret == -ENOENT)
		return ia_agent_err(ret, "job %u not configured", id);
	if (ret)
		return ia_agent_err(ret, "maps: %s", *why ? why : ia_xdp_errname(ret));
	return ia_agent_ok();
}

static int read_counters(struct ia_agent *a, json_object *req, struct ia_counters *c, char *why,
			 size_t whylen)
{
	struct ia_xdp *x;
	uint32_t id = 0;
	const char *port = get_str(req, "port");
	int ret, ifindex = 0;

	if (get_u32(req, "job", &id, false) || get_u32(req, "ifindex", (uint32_t *)&ifindex, false))
		return -EINVAL;
	if (port && (ret = ia_if_info(port, &ifindex, NULL)))
		return ret;
	if (!id && !ifindex)
		return -EINVAL;
	x = ia_agent_maps(a, false, &ret, why, whylen);
	if (!x)
		return ret;
	ret = ifindex ? ia_xdp_port_counters(x, ifindex, c) : ia_xdp_job_counters(x, id, c);
	if (ret && ret != -ENOENT)
		ia_agent_maps_drop(a);
	return ret;
}

json_object *ia_agent_pushed(struct ia_agent *a, json_object *req)
{
	struct ia_counters c;
	int ret = read_counters(a, req, &c, NULL, 0);

	if (ret == -EINVAL)
		return ia_agent_err(EINVAL, "\"job\": need an integer");
	return ia_agent_ok_with("pushed", json_object_new_boolean(!ret));
}

json_object *ia_agent_counters(struct ia_agent *a, json_object *req)
{
	char why[IA_XDP_ERRLEN] = "";
	struct ia_counters c;
	json_object *arr;
	int ret = read_counters(a, req, &c, why, sizeof(why));

	if (ret)
		return ia_agent_err(ret, "%s", ret == -EINVAL ? "need \"job\" or \"port\"" :
						*why ? why : ia_xdp_errname(ret));
	arr = json_object_new_array();
	for (int i = 0; i < IA_C__COUNT; i++)
		json_object_array_add(arr, json_object_new_int64(c.c[i]));
	return ia_agent_ok_with("counters", arr);
}
